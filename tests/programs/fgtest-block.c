/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An off-CPU workload that blocks in known places: block_long() sleeps
 * 30 ms and block_short() 10 ms, in turn, so three quarters of its blocked
 * time is under block_long. The sleeps are inline syscall instructions: a
 * frame-pointer callchain taken in the kernel then starts in the function
 * itself (libc's wrapper, lacking a frame pointer, would hide it). With
 * "spin", it spins 10 ms in spin_on_cpu() and sleeps 30 ms in block_long()
 * in turn instead: a quarter of its wall-clock time on the CPU. Prints
 * "ready" and runs until killed.
 */
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

__attribute__((noinline)) static void sleep_ns(long ns)
{
	struct timespec ts = { 0, ns };
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_nanosleep), "D"(&ts), "S"(0L)
			 : "rcx", "r11", "memory");
	(void)ret;
}

__attribute__((noinline)) void block_long(void)
{
	sleep_ns(30 * 1000000L);
}

__attribute__((noinline)) void block_short(void)
{
	sleep_ns(10 * 1000000L);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void spin_on_cpu(void)
{
	double end = now() + 0.010;
	volatile unsigned long x = 0;

	while (now() < end)
		for (int i = 0; i < 1000; i++)
			x += (unsigned long)i;
}

int main(int argc, char **argv)
{
	int spin = argc > 1 && strcmp(argv[1], "spin") == 0;

	printf("ready\n");
	fflush(stdout);
	for (;;) {
		if (spin) {
			spin_on_cpu();
			block_long();
		} else {
			block_long();
			block_short();
		}
	}
}
