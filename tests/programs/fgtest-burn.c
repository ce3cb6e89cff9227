/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A workload with known hot functions: hot_a does three times the work of
 * hot_b with the same loop, so about 75% of its CPU time is in hot_a and
 * 25% in hot_b, both called from main. Runs for argv[1] seconds (default
 * forever); prints "ready" once running so tests need not guess.
 *
 * Each round's length is drawn at random (hot_a still does three times
 * hot_b's work in each): a loop of fixed rounds can keep step with a
 * sampler's fixed period and put its samples at the same few points of
 * the round. Rounds took 0.55 ms here, 18.5 of them to a period of 99 Hz,
 * and a CI run found 66% of 603 samples in hot_a: five standard deviations
 * from 75%, which chance alone does not explain.
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

/* hot_b's share of a round: 50,000 to 149,999, 100,000 on average (xorshift64). */
static unsigned long round_length(unsigned long *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return 50000 + *state % 100000;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0, end = now() + seconds;
	unsigned long state = 0x9e3779b97f4a7c15UL;

	printf("ready\n");
	fflush(stdout);
	while (seconds <= 0 || now() < end) {
		unsigned long n = round_length(&state);

		hot_a(3 * n);
		hot_b(n);
	}
	return 0;
}
