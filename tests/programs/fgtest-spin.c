/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A fixed amount of work per round, to measure what sampling costs the
 * sampled task (tests/bench/bench_kernel_cost.py). The kernel takes each
 * sample in an interrupt charged to the task it interrupts (this kernel has
 * no IRQ time accounting), and the sample's stack copy evicts the task's
 * cache: both lower the rounds done per second of the task's own CPU time
 * (CLOCK_THREAD_CPUTIME_ID, which leaves out time stolen by the hypervisor
 * and time other tasks ran).
 *
 * usage: fgtest-spin SECONDS [WARMUP [STACK_BYTES]]
 *
 * Prints "ready", spins WARMUP seconds (default 2), then counts rounds for
 * SECONDS of wall time and prints "ROUNDS CPU_NS WALL_NS". The rounds run
 * STACK_BYTES (default 40960) below main's frame, so a dwarf-mode sample
 * copies a full 32 KiB dump, as it does for a program deep in its calls
 * (the kernel copies only up to the top of the stack).
 */
#include <alloca.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* 16 KiB: it fits in L1, where a sample's copy of the stack evicts it. */
static uint64_t table[2048];

static uint64_t ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One round: about a millisecond of random updates to the table. */
__attribute__((noinline)) static void round_of_work(uint64_t *x)
{
	uint64_t v = *x;

	for (unsigned i = 0; i < 200000; i++) {
		v = v * 6364136223846793005u + 1442695040888963407u;
		table[v >> 53] += v;
	}
	*x = v;
}

__attribute__((noinline)) static void spin(double warmup, double seconds)
{
	uint64_t x = 1, rounds = 0, wall0, cpu0, end;

	for (end = ns(CLOCK_MONOTONIC) + (uint64_t)(warmup * 1e9); ns(CLOCK_MONOTONIC) < end;)
		round_of_work(&x);
	wall0 = ns(CLOCK_MONOTONIC);
	cpu0 = ns(CLOCK_THREAD_CPUTIME_ID);
	for (end = wall0 + (uint64_t)(seconds * 1e9); ns(CLOCK_MONOTONIC) < end; rounds++)
		round_of_work(&x);
	printf("%llu %llu %llu\n", (unsigned long long)rounds,
	       (unsigned long long)(ns(CLOCK_THREAD_CPUTIME_ID) - cpu0),
	       (unsigned long long)(ns(CLOCK_MONOTONIC) - wall0));
}

/* Runs spin() below a frame of stack_bytes, touched so it is mapped. */
__attribute__((noinline)) static void below(size_t stack_bytes, double warmup, double seconds)
{
	char *pad = alloca(stack_bytes);

	memset(pad, 1, stack_bytes);
	__asm__ volatile("" : : "r"(pad) : "memory");
	spin(warmup, seconds);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10, warmup = argc > 2 ? atof(argv[2]) : 2;
	size_t stack_bytes = argc > 3 ? strtoul(argv[3], NULL, 10) : 40960;

	if (seconds <= 0 || warmup < 0 || stack_bytes > (1u << 20)) {
		fprintf(stderr, "usage: fgtest-spin SECONDS [WARMUP [STACK_BYTES <= 1048576]]\n");
		return 2;
	}
	printf("ready\n");
	fflush(stdout);
	below(stack_bytes, warmup, seconds);
	return 0;
}
