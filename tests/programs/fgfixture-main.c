/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Calls into libfgfixture.so for the number of seconds given as argv[1]
 * (default: once), so tests can both inspect the binary and profile it.
 * Built several ways (frame pointers, none, ET_EXEC, PIE, stripped).
 */
#include <stdlib.h>
#include <time.h>

#include "fgfixture.h"

volatile unsigned long fgfixture_main_sink;

/* Exported (-rdynamic in the stripped build) so .dynsym has a function of the executable. */
__attribute__((noinline)) unsigned long fgfixture_main_work(unsigned long n)
{
	return fgfixture_gamma(n) + fgfixture_alpha(n * 4);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0, end = now() + secs;

	do
		fgfixture_main_sink = fgfixture_main_work(1000);
	while (now() < end);
	return 0;
}
