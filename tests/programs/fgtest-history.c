/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Prints the history in a state directory as folded stacks, one line per
 * stored stack ("comm;frame;... count"), then one summary line on stderr:
 * "slices N corrupt N". With --processes, prints instead one line per
 * process per slice: "SLICE_START_NS PID START_TIME_NS COMM".
 * Usage: fgtest-history [--processes] STATE_DIRECTORY
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "consumers/fgd-history.h"

static uint64_t slices;

static int print_processes(void *ctx, const struct fg_slicefile *s)
{
	(void)ctx;
	slices++;
	for (size_t i = 0; i < fg_slicefile__n_processes(s); i++) {
		const struct fg_slicefile_process *p = fg_slicefile__process(s, i);

		printf("%llu %d %llu %s\n", (unsigned long long)fg_slicefile__start(s), p->pid,
		       (unsigned long long)p->start_time, p->comm ? p->comm : "[unknown]");
	}
	return 0;
}

static int print_slice(void *ctx, const struct fg_slicefile *s)
{
	(void)ctx;
	slices++;
	for (size_t i = 0; i < fg_slicefile__n_stacks(s); i++) {
		struct fg_slicefile_stack st;
		const char *comm;

		fg_slicefile__stack(s, i, &st);
		comm = fg_slicefile__process(s, st.proc)->comm;
		fputs(comm ? comm : "[unknown]", stdout);
		for (size_t k = 0; k < st.n; k++)
			printf(";%s", fg_slicefile__string(s, st.frames[k]));
		printf(" %llu\n", (unsigned long long)st.count);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct fg_history *h;
	struct fg_history_stats st;
	bool processes = argc == 3 && strcmp(argv[1], "--processes") == 0;
	const char *dir = argv[argc - 1];
	int r;

	if (argc != 2 + processes) {
		fprintf(stderr, "usage: fgtest-history [--processes] STATE_DIRECTORY\n");
		return 2;
	}
	r = fg_history__open(dir, &h);
	if (r < 0) {
		fprintf(stderr, "fgtest-history: %s: %s\n", dir, strerror(-r));
		return 1;
	}
	r = fg_history__read(h, 0, UINT64_MAX, processes ? print_processes : print_slice, NULL,
			     NULL);
	fg_history__stats(h, &st);
	fprintf(stderr, "slices %llu corrupt %llu\n", (unsigned long long)slices,
		(unsigned long long)st.corrupt);
	fg_history__free(h);
	return r < 0;
}
