/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Captures real perf ring bytes as seeds for fuzz-record: fgd's tracking
 * event (MMAP2, COMM, FORK, EXIT with build-ids) and its sampling event
 * (callchains) on CPU 0 while a child forks, execs and burns CPU.
 * Output: 8 bytes of ring start offset (0), then the records, as fuzz-record
 * expects. Needs root. Build: cc -O2 -o capture-ring capture-ring.c
 * Usage: capture-ring track|sample OUTPUT [MAX_BYTES]
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct perf_event_attr a = { .size = sizeof(a),
				     .disabled = 1,
				     .sample_id_all = 1,
				     .use_clockid = 1,
				     .clockid = CLOCK_MONOTONIC };
	size_t page = (size_t)sysconf(_SC_PAGESIZE), pages = 64, max;
	struct perf_event_mmap_page *meta;
	cpu_set_t set;
	uint64_t zero = 0;
	FILE *out;
	void *base;
	int fd;

	if (argc < 3)
		return 2;
	max = argc > 3 ? strtoul(argv[3], NULL, 0) : 16384;
	if (strcmp(argv[1], "track") == 0) {
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_DUMMY;
		a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				PERF_SAMPLE_CPU;
		a.mmap = a.mmap2 = a.comm = a.comm_exec = a.task = a.build_id = 1;
	} else {
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_CPU_CLOCK;
		a.freq = 1;
		a.sample_freq = 4000;
		a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
				PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
				PERF_SAMPLE_CALLCHAIN;
	}
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	fd = (int)syscall(SYS_perf_event_open, &a, -1, 0, -1, 0);
	if (fd < 0) {
		perror("perf_event_open");
		return 1;
	}
	base = mmap(NULL, (pages + 1) * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		return 1;
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	if (fork() == 0) {
		execlp("sh", "sh", "-c",
		       "i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done; ls / >/dev/null", NULL);
		_exit(1);
	}
	wait(NULL);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	meta = base;
	out = fopen(argv[2], "we");
	if (!out)
		return 1;
	fwrite(&zero, 8, 1, out);
	/* The capture is small enough not to have wrapped: copy from the start. */
	fwrite((char *)base + page, 1, meta->data_head < max ? meta->data_head : max, out);
	fclose(out);
	return 0;
}
