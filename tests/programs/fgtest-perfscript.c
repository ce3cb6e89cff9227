/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A workload for recording perf script text (tests/data/perfscript/). Three
 * threads run for argv[1] seconds (default 1):
 *  - main burns CPU through always_inline functions, so perf prints inlined
 *    frames (with --call-graph dwarf);
 *  - "fg worker" (a comm with a space) loops on a cheap syscall, so stacks
 *    end in the kernel;
 *  - "fg jit" runs generated code: one copy named in /tmp/perf-PID.map
 *    (perf shows it as a JIT frame), one not (an [unknown] frame).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static volatile int stop;

static inline __attribute__((always_inline)) unsigned long mix_inner(unsigned long x,
								     unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + i;
	return x;
}

static inline __attribute__((always_inline)) unsigned long mix_outer(unsigned long x,
								     unsigned long n)
{
	x = mix_inner(x, n);
	return x ^ (x >> 17);
}

__attribute__((noinline)) void burn(unsigned long n)
{
	sink = mix_outer(sink, n);
}

static void *syscaller(void *arg)
{
	prctl(PR_SET_NAME, "fg worker");
	while (!stop)
		syscall(SYS_getppid);
	return NULL;
}

/* mov ecx, 200000; 1: dec ecx; jnz 1b; ret */
static const unsigned char loop_code[] = {
	0xb9, 0x40, 0x0d, 0x03, 0x00, 0xff, 0xc9, 0x75, 0xfc, 0xc3,
};

static void *jitter(void *arg)
{
	unsigned char *code = mmap(NULL, 8192, PROT_READ | PROT_WRITE | PROT_EXEC,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char path[64];
	FILE *map;

	prctl(PR_SET_NAME, "fg jit");
	if (code == MAP_FAILED)
		return NULL;
	memcpy(code, loop_code, sizeof(loop_code));
	memcpy(code + 4096, loop_code, sizeof(loop_code));
	/* Only the first copy is named; the second stays unknown. */
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	map = fopen(path, "we");
	if (map) {
		fprintf(map, "%lx %zx jit_loop\n", (unsigned long)code, sizeof(loop_code));
		fclose(map);
	}
	while (!stop) {
		((void (*)(void))code)();
		((void (*)(void))(code + 4096))();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1;
	struct timespec start, now;
	pthread_t t1, t2;

	if (pthread_create(&t1, NULL, syscaller, NULL) != 0 ||
	    pthread_create(&t2, NULL, jitter, NULL) != 0)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		burn(200000);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((double)(now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 <
		 seconds);
	stop = 1;
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	return 0;
}
