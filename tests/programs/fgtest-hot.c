/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A static workload whose one hot function is named at build time (HOT):
 * fgtest-hot-old spins in hot_old, fgtest-hot-new in hot_new. The two are
 * the same code at the same addresses under different names and build-ids,
 * so a profiler that reads the wrong one of the two files shows the wrong
 * name rather than none. Static, so it runs in a bare container root. Runs
 * for argv[1] seconds (default forever); prints "ready" once running.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef HOT
#error "build with -DHOT=name"
#endif

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void HOT(unsigned long n)
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
	while (seconds <= 0 || now() < end)
		HOT(300000);
	return 0;
}
