/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A syscall-heavy workload: do_reads() reads /dev/zero with an inline
 * syscall instruction, so most samples land in the kernel beneath a known
 * user frame (the libc wrapper, lacking a frame pointer, would hide
 * do_reads from a frame-pointer callchain). Runs argv[1] seconds.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static char buf[1 << 16];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) long do_reads(int fd, int n)
{
	long total = 0;

	for (int i = 0; i < n; i++) {
		long ret;

		__asm__ volatile("syscall"
				 : "=a"(ret)
				 : "0"((long)SYS_read), "D"((long)fd), "S"(buf), "d"(sizeof(buf))
				 : "rcx", "r11", "memory");
		total += ret;
	}
	return total;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0, end = now() + seconds;
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0) {
		perror("/dev/zero");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (seconds <= 0 || now() < end)
		do_reads(fd, 100);
	return 0;
}
