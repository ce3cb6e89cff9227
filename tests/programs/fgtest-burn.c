/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A workload with known hot functions: hot_a does three times the work of
 * hot_b with the same loop, so about 75% of its CPU time is in hot_a and
 * 25% in hot_b, both called from main. Runs for argv[1] seconds (default
 * forever); prints "ready" once running so tests need not guess.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void hot_a(unsigned long n)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + i;
	sink = x;
}

__attribute__((noinline)) void hot_b(unsigned long n)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + i;
	sink = x;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0, end = now() + seconds;

	printf("ready\n");
	fflush(stdout);
	while (seconds <= 0 || now() < end) {
		hot_a(300000);
		hot_b(100000);
	}
	return 0;
}
