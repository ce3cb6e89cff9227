/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A fork storm (tests/bench/bench_alwayson_storm.py): TOTAL processes, each
 * with a name of its own (storm0, storm1, ...), at most ALIVE of them alive
 * at a time. A child waits for a token on a pipe, burns BUSY_MS of its own
 * CPU time, passes the token on, ROUNDS times, then exits. RUNNING tokens
 * (default: one per CPU) circulate, so however many children are alive
 * only that many run at once: ALIVE = TOTAL keeps them all alive together
 * without starving the rest of the machine.
 *
 * usage: fgtest-forkstorm TOTAL ALIVE BUSY_MS ROUNDS [RUNNING]
 *
 * Prints "ready" once started, and when all children have exited, how many
 * it started and the most alive at once. Exits 1 if a fork failed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static void burn(double ms)
{
	double end = cpu_ms() + ms;
	unsigned long x = sink;

	while (cpu_ms() < end)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005UL + 1;
	sink = x;
}

__attribute__((noinline)) static void child(unsigned long i, int token[2], double busy_ms,
					    unsigned long rounds)
{
	char name[16], t;

	snprintf(name, sizeof(name), "storm%lu", i);
	prctl(PR_SET_NAME, name, 0, 0, 0);
	for (unsigned long r = 0; r < rounds; r++) {
		while (read(token[0], &t, 1) != 1)
			if (errno != EINTR)
				_exit(1);
		burn(busy_ms);
		if (write(token[1], &t, 1) != 1)
			_exit(1);
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	unsigned long total, alive_max, rounds, running, started = 0, alive = 0, peak = 0;
	int token[2], failed = 0;
	double busy_ms;

	if (argc < 5) {
		fprintf(stderr, "usage: fgtest-forkstorm TOTAL ALIVE BUSY_MS ROUNDS [RUNNING]\n");
		return 2;
	}
	total = strtoul(argv[1], NULL, 10);
	alive_max = strtoul(argv[2], NULL, 10);
	busy_ms = atof(argv[3]);
	rounds = strtoul(argv[4], NULL, 10);
	running = argc > 5 ? strtoul(argv[5], NULL, 10) :
			     (unsigned long)sysconf(_SC_NPROCESSORS_ONLN);
	if (!total || !alive_max || !running || busy_ms < 0 || pipe(token) < 0) {
		fprintf(stderr, "fgtest-forkstorm: bad arguments, or no pipe: %s\n",
			strerror(errno));
		return 2;
	}
	printf("ready\n");
	fflush(stdout);
	for (unsigned long i = 0; i < running; i++)
		if (write(token[1], "t", 1) != 1)
			return 1;
	while (started < total || alive > 0) {
		if (started < total && alive < alive_max && !failed) {
			pid_t pid = fork();

			if (pid == 0)
				child(started, token, busy_ms, rounds);
			if (pid < 0) {
				fprintf(stderr, "fgtest-forkstorm: fork %lu: %s\n", started,
					strerror(errno));
				failed = 1;
				total = started;
				continue;
			}
			started++;
			if (++alive > peak)
				peak = alive;
			continue;
		}
		if (wait(NULL) > 0)
			alive--;
		else if (errno != EINTR)
			break;
	}
	printf("started %lu processes, at most %lu alive at once\n", started, peak);
	return failed;
}
