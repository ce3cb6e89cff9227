/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An off-CPU workload that blocks in known places. Its main thread calls
 * block_long() and block_short() in turn, which wait 30 ms and 10 ms, so
 * three quarters of its blocked time is under block_long. How they wait is
 * the first argument:
 *   sleep (the default)  nanosleep;
 *   poll                 poll() with a timeout and nothing to wait for;
 *   pipe                 a read of a pipe that a writer thread fills after
 *                        30 ms, then after 10 ms;
 *   mutex                pthread_mutex_lock() of a mutex a holder thread
 *                        keeps 30 ms, then 10 ms (the futex path);
 *   fsync                not timed: both write 64 KiB to an unlinked file
 *                        in /var/tmp and fsync() it;
 *   spin                 spin_on_cpu() spins 10 ms and block_long() sleeps
 *                        30 ms, in turn: a quarter of its wall-clock time on
 *                        the CPU.
 * The nanosleep, poll and read are inline syscall instructions: a
 * frame-pointer callchain taken in the kernel then starts in the function
 * itself (libc's wrapper, lacking a frame pointer, would hide it). The
 * mutex and fsync go through libc: their user stacks need DWARF unwinding.
 * The helper threads wait too, under helper(). Prints "ready" and runs
 * until killed.
 */
#define _GNU_SOURCE /* O_TMPFILE */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define LONG_MS 30
#define SHORT_MS 10

enum mode { SLEEP, POLL, PIPE, MUTEX, FSYNC, SPIN };

static enum mode mode;
static int pipe_fds[2];
static int file_fd = -1;
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static sem_t taken, done; /* the holder has the mutex; main has had its turn */

static long syscall3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return ret;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0)
		;
}

/* How block_long and block_short wait: ms is theirs, for the modes that time it. */
__attribute__((noinline)) static void wait_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000L };
	char c;

	switch (mode) {
	case SLEEP:
	case SPIN:
		(void)syscall3(SYS_nanosleep, (long)&ts, 0, 0);
		break;
	case POLL:
		(void)syscall3(SYS_poll, 0, 0, ms);
		break;
	case PIPE:
		(void)syscall3(SYS_read, pipe_fds[0], (long)&c, 1);
		break;
	case MUTEX:
		sem_wait(&taken);
		pthread_mutex_lock(&held);
		pthread_mutex_unlock(&held);
		sem_post(&done);
		break;
	case FSYNC: {
		static char block[64 << 10];

		if (pwrite(file_fd, block, sizeof(block), 0) < 0 || fsync(file_fd) < 0) {
			perror("fgtest-block: fsync");
			exit(1);
		}
		break;
	}
	}
}

/* The names the tests look for (the old ones: sleep_ns is where the syscall is). */
__attribute__((noinline)) static void sleep_ns(long ms)
{
	wait_ms(ms);
}

__attribute__((noinline)) void block_long(void)
{
	sleep_ns(LONG_MS);
}

__attribute__((noinline)) void block_short(void)
{
	sleep_ns(SHORT_MS);
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

/* The writer of pipe mode and the holder of mutex mode: what main waits for, 30 ms then 10. */
__attribute__((noinline)) static void *helper(void *arg)
{
	for (int i = 0;; i++) {
		long ms = i % 2 ? SHORT_MS : LONG_MS;

		if (mode == PIPE) {
			sleep_ms(ms);
			if (write(pipe_fds[1], "x", 1) != 1)
				exit(1);
		} else {
			pthread_mutex_lock(&held);
			sem_post(&taken);
			sleep_ms(ms);
			pthread_mutex_unlock(&held);
			sem_wait(&done);
		}
	}
	return arg;
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "sleep", "poll", "pipe", "mutex", "fsync", "spin" };
	const char *name = argc > 1 ? argv[1] : "sleep";
	pthread_t t;

	for (mode = SLEEP; mode <= SPIN && strcmp(name, names[mode]) != 0;)
		mode++;
	if (mode > SPIN) {
		fprintf(stderr, "usage: fgtest-block [sleep|poll|pipe|mutex|fsync|spin]\n");
		return 2;
	}
	if (mode == PIPE && pipe(pipe_fds) < 0) {
		perror("fgtest-block: pipe");
		return 1;
	}
	if (mode == MUTEX && (sem_init(&taken, 0, 0) < 0 || sem_init(&done, 0, 0) < 0)) {
		perror("fgtest-block: sem_init");
		return 1;
	}
	if (mode == FSYNC) {
		file_fd = open("/var/tmp", O_TMPFILE | O_RDWR, 0600);
		if (file_fd < 0) {
			perror("fgtest-block: /var/tmp");
			return 1;
		}
	}
	if ((mode == PIPE || mode == MUTEX) && pthread_create(&t, NULL, helper, NULL) != 0) {
		fprintf(stderr, "fgtest-block: cannot start the helper thread\n");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		if (mode == SPIN) {
			spin_on_cpu();
			block_long();
		} else {
			block_long();
			block_short();
		}
	}
}
