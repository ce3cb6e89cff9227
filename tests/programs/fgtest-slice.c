/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Writes one history slice file, as fgd would, with samples at given times:
 * a process "fgtest-late" (pid 4242) whose stack main;late has one sample
 * at each TIME_MS, kept in 10 ms ticks, at 99 Hz. Times may lie outside
 * [START_MS, END_MS), as those of samples drained after their slice closed.
 * Usage: fgtest-slice DIRECTORY START_MS END_MS TIME_MS...
 * (writes DIRECTORY/START_NS-END_NS.fgdh, the name fgd's history reads)
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/slicefile.h"

int main(int argc, char **argv)
{
	static const char *const frames[] = { "main", "late" };
	const struct fg_slicefile_process p = { 4242, 1, 0, "fgtest-late", NULL, NULL };
	struct fg_slicefile_writer *w = NULL;
	long long start, end;
	const uint8_t *data;
	char path[4096];
	uint32_t proc;
	size_t len;
	FILE *f;
	bool ok;
	int r;

	if (argc < 5) {
		fprintf(stderr, "usage: fgtest-slice DIRECTORY START_MS END_MS TIME_MS...\n");
		return 2;
	}
	start = atoll(argv[2]);
	end = atoll(argv[3]);
	r = fg_slicefile_writer__new((uint64_t)start * 1000000, (uint64_t)end * 1000000, &w);
	if (r >= 0)
		r = fg_slicefile_writer__set_times(w, 10);
	fg_slicefile_writer__set_frequency(w, 99);
	if (r >= 0)
		r = fg_slicefile_writer__add_process(w, &p, &proc);
	if (r >= 0)
		r = fg_slicefile_writer__add_stack(w, proc, frames, 2, (uint64_t)(argc - 4));
	for (int i = 4; r >= 0 && i < argc; i++)
		r = fg_slicefile_writer__add_time(w, 0, atoll(argv[i]), 1);
	if (r >= 0)
		r = fg_slicefile_writer__finish(w, &data, &len);
	if (r < 0) {
		fprintf(stderr, "fgtest-slice: %s\n", strerror(-r));
		fg_slicefile_writer__free(w);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/%020llu-%020llu.fgdh", argv[1],
		 (unsigned long long)start * 1000000, (unsigned long long)end * 1000000);
	f = fopen(path, "we");
	ok = f && fwrite(data, 1, len, f) == len;
	if (f && fclose(f) != 0)
		ok = false;
	if (!ok) {
		fprintf(stderr, "fgtest-slice: %s: %s\n", path, strerror(errno));
		fg_slicefile_writer__free(w);
		return 1;
	}
	fg_slicefile_writer__free(w);
	return 0;
}
