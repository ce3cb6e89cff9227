/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An off-CPU workload that blocks in known places: block_long() sleeps
 * 30 ms and block_short() 10 ms, in turn, so three quarters of its blocked
 * time is under block_long. The sleeps are inline syscall instructions: a
 * frame-pointer callchain taken in the kernel then starts in the function
 * itself (libc's wrapper, lacking a frame pointer, would hide it). Prints
 * "ready" and runs until killed.
 */
#include <stdio.h>
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

int main(void)
{
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		block_long();
		block_short();
	}
}
