/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Storage figures of a history directory, and of the same history merged
 * into 1 min and 10 min files by fgd's own compaction (fg_history__compact,
 * tiers of age 0 so that every group whose period is over is merged).
 * CHANGES THE DIRECTORY: run it on a copy. tests/bench/bench_history.py
 * collects a history with fgd at its defaults and runs this on a copy.
 *
 * Usage: bench-history STATE_DIRECTORY
 * Prints one line per stage: files, bytes, samples, stacks (summed over
 * files), seconds covered, bytes per sample, bytes per stack, bytes per
 * second covered.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "consumers/fgd-history.h"

struct figures {
	uint64_t files, bytes, samples, stacks, span_ns;
};

/* Reads every slice file of dir/slices directly, for its size and contents. */
static int measure(const char *dir, struct figures *ret)
{
	char path[4096];
	struct dirent *de;
	DIR *d;

	*ret = (struct figures){ 0 };
	snprintf(path, sizeof(path), "%s/slices", dir);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		struct fg_slicefile *s;
		struct stat st;
		uint8_t *buf;
		size_t len = strlen(de->d_name);
		int fd;

		if (len < 5 || strcmp(de->d_name + len - 5, ".fgdh") != 0)
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0 || !(buf = malloc((size_t)st.st_size + 1)) ||
		    read(fd, buf, (size_t)st.st_size) != st.st_size) {
			fprintf(stderr, "bench-history: cannot read %s\n", de->d_name);
			exit(1);
		}
		close(fd);
		if (fg_slicefile__parse(buf, (size_t)st.st_size, &s) < 0) {
			fprintf(stderr, "bench-history: %s is damaged, skipped\n", de->d_name);
			free(buf);
			continue;
		}
		ret->files++;
		ret->bytes += (uint64_t)st.st_size;
		ret->stacks += fg_slicefile__n_stacks(s);
		ret->span_ns += fg_slicefile__end(s) - fg_slicefile__start(s);
		for (size_t i = 0; i < fg_slicefile__n_stacks(s); i++) {
			struct fg_slicefile_stack stack;

			fg_slicefile__stack(s, i, &stack);
			ret->samples += stack.count;
		}
		fg_slicefile__free(s);
		free(buf);
	}
	closedir(d);
	return 0;
}

static void print(const char *stage, const struct figures *f)
{
	double seconds = (double)f->span_ns / 1e9;

	printf("%-8s files %6llu  bytes %10llu  samples %9llu  stacks %8llu  seconds %8.0f  "
	       "B/sample %6.2f  B/stack %6.2f  B/s %8.1f\n",
	       stage, (unsigned long long)f->files, (unsigned long long)f->bytes,
	       (unsigned long long)f->samples, (unsigned long long)f->stacks, seconds,
	       f->samples ? (double)f->bytes / (double)f->samples : 0.0,
	       f->stacks ? (double)f->bytes / (double)f->stacks : 0.0,
	       seconds > 0 ? (double)f->bytes / seconds : 0.0);
}

/* Merges everything into files of width_s seconds, as compaction would once old enough. */
static int merge_all(struct fg_history *h, uint64_t width_s)
{
	struct fg_compaction_policy p = { .tiers = { { 0, width_s * 1000000000ULL } },
					  .n_tiers = 1 };
	struct fg_history_stats st;
	int r;

	/* "Now" far in the future: every group's period is over. */
	while ((r = fg_history__compact(h, UINT64_MAX / 2, UINT64_MAX, &p, 1000)) > 0)
		;
	fg_history__stats(h, &st);
	if (r < 0 || st.compact_errors) {
		fprintf(stderr, "bench-history: compaction failed: %s\n",
			strerror(-st.last_compact_error));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct figures f;
	struct fg_history *h;
	int r;

	if (argc != 2) {
		fprintf(stderr, "usage: bench-history STATE_DIRECTORY (a copy: it is compacted)\n");
		return 2;
	}
	r = fg_history__open(argv[1], &h);
	if (r < 0) {
		fprintf(stderr, "bench-history: %s: %s\n", argv[1], strerror(-r));
		return 1;
	}
	if (measure(argv[1], &f) < 0)
		return 1;
	print("as-is", &f);
	if (merge_all(h, 60) < 0 || measure(argv[1], &f) < 0)
		return 1;
	print("1min", &f);
	if (merge_all(h, 600) < 0 || measure(argv[1], &f) < 0)
		return 1;
	print("10min", &f);
	fg_history__free(h);
	return 0;
}
