/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A unique-stack storm: 64 distinct functions calling each other in
 * sequences a PRNG chooses, 4 to 12 calls deep, each walk ending in a few
 * microseconds of work in one of 4 leaf functions. There are more than
 * 64^11 possible stacks, so nearly every sample a profiler takes is a stack
 * it has not seen: the case the always-on memory ceiling has to hold
 * against (tests/bench/bench_alwayson_storm.py).
 *
 * usage: fgtest-stackstorm [SECONDS [SEED]]
 *
 * Runs SECONDS (default forever); prints "ready" once running, and at the
 * end the number of walks it made.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef void step_fn(unsigned depth, uint64_t s);

static volatile uint64_t sink;
static step_fn *const steps[64];

static uint64_t next(uint64_t s)
{
	/* splitmix64: every bit of the state reaches the choice of the next function */
	s += 0x9e3779b97f4a7c15u;
	s = (s ^ (s >> 30)) * 0xbf58476d1ce4e5b9u;
	s = (s ^ (s >> 27)) * 0x94d049bb133111ebu;
	return s ^ (s >> 31);
}

#define LEAF(i)                                                   \
	__attribute__((noinline)) static void leaf##i(uint64_t s) \
	{                                                         \
		for (unsigned n = 0; n < 1000 + 100 * (i); n++)   \
			s = s * 6364136223846793005u + (i);       \
		sink = s;                                         \
	}
LEAF(0)
LEAF(1)
LEAF(2)
LEAF(3)

static void (*const leaves[4])(uint64_t) = { leaf0, leaf1, leaf2, leaf3 };

/*
 * Each step calls the next one through the table; the work after the call
 * keeps the call from being a tail call (fp and dwarf modes both see every
 * frame).
 */
#define STEP(i)                                                                   \
	__attribute__((noinline)) static void step##i(unsigned depth, uint64_t s) \
	{                                                                         \
		uint64_t t = next(s);                                             \
		if (depth == 0)                                                   \
			leaves[t & 3](t);                                         \
		else                                                              \
			steps[t & 63](depth - 1, t);                              \
		sink += (i);                                                      \
	}
#define STEP8(i) \
	STEP(i##0) STEP(i##1) STEP(i##2) STEP(i##3) STEP(i##4) STEP(i##5) STEP(i##6) STEP(i##7)
STEP8(0)
STEP8(1)
STEP8(2)
STEP8(3)
STEP8(4)
STEP8(5)
STEP8(6)
STEP8(7)

#define REF8(i)                                                                             \
	step##i##0, step##i##1, step##i##2, step##i##3, step##i##4, step##i##5, step##i##6, \
		step##i##7
static step_fn *const steps[64] = { REF8(0), REF8(1), REF8(2), REF8(3),
				    REF8(4), REF8(5), REF8(6), REF8(7) };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0, end = now() + seconds;
	uint64_t s = argc > 2 ? strtoull(argv[2], NULL, 0) : (uint64_t)time(NULL), walks = 0;

	printf("ready\n");
	fflush(stdout);
	while (seconds <= 0 || now() < end) {
		for (unsigned i = 0; i < 64; i++, walks++) {
			s = next(s);
			steps[s & 63](4 + (unsigned)((s >> 6) % 9), s);
		}
	}
	printf("%llu walks\n", (unsigned long long)walks);
	return 0;
}
