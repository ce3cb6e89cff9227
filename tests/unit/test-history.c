/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "consumers/fgd-history.h"
#include "test.h"

/* One process, one stack of `frames` frames, each named after its depth and tag. */
static void slice_bytes(uint64_t tag, size_t frames, uint8_t **ret, size_t *ret_len)
{
	const struct fg_slicefile_process p = { 42, 7, 0, "worker", "/usr/bin/worker", "/" };
	struct fg_slicefile_writer *w;
	const char **names = calloc(frames, sizeof(*names));
	char(*buf)[160] = calloc(frames, sizeof(*buf));
	const uint8_t *data;
	uint32_t proc;
	size_t len;

	ASSERT_TRUE(names && buf);
	for (size_t i = 0; i < frames; i++) {
		/* Long names, so that a deep stack makes a large file. */
		snprintf(buf[i], sizeof(buf[i]), "f%0120zu_%" PRIu64, i, tag);
		names[i] = buf[i];
	}
	ASSERT_OK(fg_slicefile_writer__new(tag * 1000, tag * 1000 + 1000, &w));
	ASSERT_OK(fg_slicefile_writer__add_process(w, &p, &proc));
	ASSERT_OK(fg_slicefile_writer__add_stack(w, proc, names, frames, tag));
	ASSERT_OK(fg_slicefile_writer__finish(w, &data, &len));
	*ret = malloc(len);
	ASSERT_TRUE(*ret);
	memcpy(*ret, data, len);
	*ret_len = len;
	fg_slicefile_writer__free(w);
	free(names);
	free(buf);
}

/* Stores tag's bytes as [start, end): the store's result. */
static int store_span(struct fg_history *h, uint64_t tag, uint64_t start, uint64_t end)
{
	uint8_t *data;
	size_t len;
	int r;

	slice_bytes(tag, 3, &data, &len);
	r = fg_history__store(h, start, end, data, len);
	free(data);
	return r;
}

/* Stores tag's slice as [tag * 1000, tag * 1000 + 1000). */
static void store(struct fg_history *h, uint64_t tag)
{
	ASSERT_OK(store_span(h, tag, tag * 1000, tag * 1000 + 1000));
}

struct seen {
	uint64_t starts[16];
	size_t n;
};

static int on_slice(void *ctx, const struct fg_slicefile *s)
{
	struct seen *seen = ctx;

	if (seen->n < 16)
		seen->starts[seen->n++] = fg_slicefile__start(s);
	return 0;
}

/* Overwrites one byte of a file: damage, or a later version. */
static void patch_byte(const char *path, off_t at, uint8_t byte)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(pwrite(fd, &byte, 1, at), 1);
	close(fd);
}

static void make_dir(char *dir)
{
	ASSERT_TRUE(mkdtemp(dir));
}

static void remove_dir(const char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ASSERT_OK(system(cmd));
}

TEST(stores_and_reads_a_time_range_in_order)
{
	char dir[] = "/tmp/fgd-test-history.XXXXXX";
	struct fg_history *h;
	struct fg_history_stats st;
	struct seen seen = {};

	make_dir(dir);
	ASSERT_OK(fg_history__open(dir, &h));
	store(h, 3);
	store(h, 1);
	store(h, 2);
	/* [1500, 3000): the slices starting at 1000 and 2000 overlap it; 3000 does not. */
	ASSERT_OK(fg_history__read(h, 1500, 3000, on_slice, NULL, &seen));
	ASSERT_EQ(seen.n, 2);
	ASSERT_U64_EQ(seen.starts[0], 1000);
	ASSERT_U64_EQ(seen.starts[1], 2000);
	fg_history__stats(h, &st);
	ASSERT_EQ(st.files, 3);
	ASSERT_EQ(st.written, 3);
	fg_history__free(h);

	/* Reopened (a restart): the same history. */
	ASSERT_OK(fg_history__open(dir, &h));
	fg_history__stats(h, &st);
	ASSERT_EQ(st.files, 3);
	seen.n = 0;
	ASSERT_OK(fg_history__read(h, 0, UINT64_MAX, on_slice, NULL, &seen));
	ASSERT_EQ(seen.n, 3);
	fg_history__free(h);
	remove_dir(dir);
}

/*
 * The directory is fgd's own (0750), so nobody else should plant anything
 * there; should anything be there anyway, a link at a slice's temporary
 * name is neither followed nor reused: the store fails and is counted.
 */
TEST(a_link_at_the_temporary_name_is_not_written_through)
{
	char dir[] = "/tmp/fgd-test-history.XXXXXX";
	char victim[64], link[128], text[16] = "";
	struct fg_history *h;
	struct fg_history_stats st;
	ssize_t n;
	int fd;

	make_dir(dir);
	ASSERT_OK(fg_history__open(dir, &h));
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	fd = open(victim, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(write(fd, "secret", 6), 6);
	close(fd);
	snprintf(link, sizeof(link), "%s/slices/%020d-%020d.fgdh.tmp", dir, 1000, 2000);
	ASSERT_OK(symlink(victim, link));

	ASSERT_ERR(store_span(h, 1, 1000, 2000), -EEXIST);
	fd = open(victim, O_RDONLY | O_CLOEXEC);
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	ASSERT_EQ(n, 6);
	ASSERT_STREQ(text, "secret");
	fg_history__stats(h, &st);
	ASSERT_EQ(st.write_errors, 1);
	ASSERT_EQ(st.files, 0);
	fg_history__free(h);
	remove_dir(dir);
}

TEST(a_slice_nesting_with_a_stored_file_is_refused_not_taken_for_a_leftover)
{
	char dir[] = "/tmp/fgd-test-history.XXXXXX";
	struct fg_history *h;
	struct fg_history_stats st;
	struct seen seen = {};

	make_dir(dir);
	ASSERT_OK(fg_history__open(dir, &h));
	ASSERT_OK(store_span(h, 1, 1000, 7000)); /* a merged file, say */
	/* The wall clock went back: within it, the same span, around it. */
	ASSERT_EQ(store_span(h, 2, 2000, 3000), -ERANGE);
	ASSERT_EQ(store_span(h, 3, 1000, 7000), -ERANGE);
	ASSERT_EQ(store_span(h, 4, 500, 8000), -ERANGE);
	/* Overlapping without nesting is read as two slices: stored. So is what comes before. */
	ASSERT_OK(store_span(h, 5, 6000, 9000));
	ASSERT_OK(store_span(h, 6, 0, 1000));
	fg_history__stats(h, &st);
	ASSERT_EQ(st.out_of_order, 3);
	ASSERT_EQ(st.write_errors, 3);
	ASSERT_EQ(st.last_write_error, -ERANGE);
	ASSERT_EQ(st.files, 3);
	fg_history__free(h);

	/* Nothing was taken for a leftover: all three are read after a reopen. */
	ASSERT_OK(fg_history__open(dir, &h));
	ASSERT_OK(fg_history__read(h, 0, UINT64_MAX, on_slice, NULL, &seen));
	ASSERT_EQ(seen.n, 3);
	fg_history__stats(h, &st);
	ASSERT_EQ(st.leftovers, 0);
	/* The latest end is known after a reopen too. */
	ASSERT_EQ(store_span(h, 7, 7000, 8000), -ERANGE);
	fg_history__free(h);
	remove_dir(dir);
}

TEST(a_damaged_file_is_skipped_and_counted_and_a_torn_one_removed)
{
	char dir[] = "/tmp/fgd-test-history.XXXXXX", path[512];
	struct fg_history *h;
	struct fg_history_stats st;
	struct seen seen = {};
	int fd;

	make_dir(dir);
	ASSERT_OK(fg_history__open(dir, &h));
	store(h, 1);
	store(h, 2);
	store(h, 3);
	fg_history__free(h);
	/* A flipped byte in the middle slice. */
	snprintf(path, sizeof(path), "%s/slices/%020d-%020d.fgdh", dir, 2000, 3000);
	patch_byte(path, 40, 'X');
	/* A crash during a write: the temporary file is left behind. */
	snprintf(path, sizeof(path), "%s/slices/%020d-%020d.fgdh.tmp", dir, 4000, 5000);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0640);
	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(write(fd, "FGDH", 4), 4);
	close(fd);

	ASSERT_OK(fg_history__open(dir, &h));
	ASSERT_TRUE(access(path, F_OK) < 0);
	ASSERT_OK(fg_history__read(h, 0, UINT64_MAX, on_slice, NULL, &seen));
	ASSERT_EQ(seen.n, 2);
	ASSERT_U64_EQ(seen.starts[0], 1000);
	ASSERT_U64_EQ(seen.starts[1], 3000);
	fg_history__stats(h, &st);
	ASSERT_EQ(st.corrupt, 1);
	ASSERT_EQ(st.temp_removed, 1);
	fg_history__free(h);
	remove_dir(dir);
}

TEST(prune_keeps_the_newest_within_the_budget)
{
	char dir[] = "/tmp/fgd-test-history.XXXXXX";
	struct fg_history *h;
	struct fg_history_stats st;
	struct seen seen = {};
	uint64_t one;

	make_dir(dir);
	ASSERT_OK(fg_history__open(dir, &h));
	for (uint64_t t = 1; t <= 5; t++)
		store(h, t);
	fg_history__stats(h, &st);
	one = st.bytes / 5;
	ASSERT_OK(fg_history__prune(h, 2 * one + one / 2));
	fg_history__stats(h, &st);
	ASSERT_EQ(st.files, 2);
	ASSERT_EQ(st.pruned, 3);
	ASSERT_OK(fg_history__read(h, 0, UINT64_MAX, on_slice, NULL, &seen));
	ASSERT_EQ(seen.n, 2);
	ASSERT_U64_EQ(seen.starts[0], 4000);
	fg_history__free(h);
	remove_dir(dir);
}

TEST(a_full_disk_is_an_error_not_a_partial_file)
{
	char dir[] = "/tmp/fgd-test-history.XXXXXX", slices[512];
	struct fg_history *h;
	struct fg_history_stats st;
	struct seen seen = {};
	uint8_t *data;
	size_t len;

	if (geteuid() != 0)
		SKIP("mounting a small tmpfs needs root");
	/* Far more than the 64 KiB the file system holds. */
	slice_bytes(2, 1000, &data, &len);
	ASSERT_TRUE(len > 64 * 1024);
	make_dir(dir);
	if (mount("fgd-test", dir, "tmpfs", 0, "size=64k") < 0) {
		remove_dir(dir);
		SKIP("cannot mount a tmpfs here");
	}
	ASSERT_OK(fg_history__open(dir, &h));
	store(h, 1);
	ASSERT_EQ(fg_history__store(h, 2000, 3000, data, len), -ENOSPC);
	free(data);
	fg_history__stats(h, &st);
	ASSERT_EQ(st.write_errors, 1);
	ASSERT_EQ(st.last_write_error, -ENOSPC);
	ASSERT_EQ(st.files, 1);
	/* Nothing half-written is left; the older slice is still there. */
	snprintf(slices, sizeof(slices), "%s/slices/%020d-%020d.fgdh.tmp", dir, 2000, 3000);
	ASSERT_TRUE(access(slices, F_OK) < 0);
	ASSERT_OK(fg_history__read(h, 0, UINT64_MAX, on_slice, NULL, &seen));
	ASSERT_EQ(seen.n, 1);
	fg_history__free(h);
	ASSERT_OK(umount(dir));
	remove_dir(dir);
}

/* ---- compaction ---- */

#define NS ((uint64_t)1000000000)
/* A multiple of 600 s. */
#define T0 ((uint64_t)1800000000 * NS)

/* fgd's first tier: an hour old, into 1 min files. */
static const struct fg_compaction_policy minutes = {
	.tiers = { { 3600 * NS, 60 * NS } },
	.n_tiers = 1,
	.keep_ns = 86400 * NS,
};

/*
 * A slice of [start, end) s after T0: `count` samples of "main;f<tag>" and
 * one of "main;common" in process 42, `frames` frames deep.
 */
static void store_at(struct fg_history *h, uint64_t start, uint64_t end, unsigned tag,
		     uint64_t count, size_t frames)
{
	const struct fg_slicefile_process p = { 42, 7, 0, "worker", "/usr/bin/worker", "/" };
	const char *common[] = { "main", "common" };
	const char **names = calloc(frames, sizeof(*names));
	char(*buf)[160] = calloc(frames, sizeof(*buf));
	struct fg_slicefile_writer *w;
	const uint8_t *data;
	uint32_t proc;
	size_t len;

	ASSERT_TRUE(names && buf && frames >= 2);
	names[0] = "main";
	for (size_t i = 1; i < frames; i++) {
		snprintf(buf[i], sizeof(buf[i]), i == 1 ? "f%u" : "f%u_%0120zu", tag, i);
		names[i] = buf[i];
	}
	ASSERT_OK(fg_slicefile_writer__new(T0 + start * NS, T0 + end * NS, &w));
	ASSERT_OK(fg_slicefile_writer__add_process(w, &p, &proc));
	ASSERT_OK(fg_slicefile_writer__add_stack(w, proc, names, frames, count));
	ASSERT_OK(fg_slicefile_writer__add_stack(w, proc, common, 2, 1));
	ASSERT_OK(fg_slicefile_writer__finish(w, &data, &len));
	ASSERT_OK(fg_history__store(h, T0 + start * NS, T0 + end * NS, data, len));
	fg_slicefile_writer__free(w);
	free(names);
	free(buf);
}

/* Samples per stack (its first two frames) over everything read, and the files read. */
struct totals {
	char stack[16][32];
	uint64_t count[16];
	size_t n;
	uint64_t files, first_start, last_end;
};

static int add_totals(void *ctx, const struct fg_slicefile *s)
{
	struct totals *t = ctx;

	if (!t->files++)
		t->first_start = fg_slicefile__start(s);
	t->last_end = fg_slicefile__end(s);
	for (size_t i = 0; i < fg_slicefile__n_stacks(s); i++) {
		struct fg_slicefile_stack st;
		char key[32];
		size_t k;

		fg_slicefile__stack(s, i, &st);
		snprintf(key, sizeof(key), "%s;%.8s", fg_slicefile__string(s, st.frames[0]),
			 fg_slicefile__string(s, st.frames[1]));
		for (k = 0; k < t->n && strcmp(t->stack[k], key) != 0; k++)
			;
		if (k == t->n) {
			ASSERT_TRUE(t->n < 16);
			snprintf(t->stack[t->n++], sizeof(t->stack[0]), "%s", key);
		}
		t->count[k] += st.count;
	}
	return 0;
}

static void read_totals(struct fg_history *h, struct totals *ret)
{
	*ret = (struct totals){ 0 };
	ASSERT_OK(fg_history__read(h, 0, UINT64_MAX, add_totals, NULL, ret));
}

static void assert_same_samples(const struct totals *a, const struct totals *b)
{
	ASSERT_EQ(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		size_t k;

		for (k = 0; k < b->n && strcmp(a->stack[i], b->stack[k]) != 0; k++)
			;
		ASSERT_TRUE(k < b->n);
		ASSERT_U64_EQ(a->count[i], b->count[k]);
	}
}

static void span_path(char *buf, size_t size, const char *dir, uint64_t start, uint64_t end)
{
	snprintf(buf, size, "%s/slices/%020" PRIu64 "-%020" PRIu64 ".fgdh", dir, T0 + start * NS,
		 T0 + end * NS);
}

static bool exists(const char *dir, uint64_t start, uint64_t end)
{
	char path[512];

	span_path(path, sizeof(path), dir, start, end);
	return access(path, F_OK) == 0;
}

/*
 * Puts a slice file for [start, end) into dir's history behind the
 * history's back, as a merge that crashed before deleting its sources
 * leaves it (fg_history__store() refuses a span within a stored file).
 */
static void plant_at(const char *dir, uint64_t start, uint64_t end, unsigned tag, uint64_t count,
		     size_t frames)
{
	char other[] = "/tmp/fgd-test-history.XXXXXX", from[512], to[512];
	struct fg_history *h;

	make_dir(other);
	ASSERT_OK(fg_history__open(other, &h));
	store_at(h, start, end, tag, count, frames);
	fg_history__free(h);
	span_path(from, sizeof(from), other, start, end);
	span_path(to, sizeof(to), dir, start, end);
	ASSERT_OK(rename(from, to));
	remove_dir(other);
}

static void flip_byte(const char *dir, uint64_t start, uint64_t end)
{
	char path[512];

	span_path(path, sizeof(path), dir, start, end);
	patch_byte(path, 40, 'X');
}

/* The bytes of the slice files in dir, as the directory has them. */
static uint64_t dir_bytes(const char *dir)
{
	char path[512];
	uint64_t total = 0;
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/slices", dir);
	d = opendir(path);
	ASSERT_TRUE(d);
	while ((de = readdir(d))) {
		struct stat st;

		if (de->d_name[0] != '.' && fstatat(dirfd(d), de->d_name, &st, 0) == 0)
			total += (uint64_t)st.st_size;
	}
	closedir(d);
	return total;
}

/* Six 10 s slices of the minute at T0, with stacks f0 to f2. */
static void store_minute(struct fg_history *h)
{
	for (unsigned i = 0; i < 6; i++)
		store_at(h, i * 10, i * 10 + 10, i % 3, i + 1, 2);
}

TEST(compaction_merges_a_minute_once_it_is_an_hour_old_and_keeps_every_sample)
{
	char dir[] = "/tmp/fgd-test-history.XXXXXX";
	struct fg_history *h;
	struct fg_history_stats st;
	struct totals before, after;

	make_dir(dir);
	ASSERT_OK(fg_history__open(dir, &h));
	store_minute(h);
	store_at(h, 60, 70, 0, 5, 2);
	read_totals(h, &before);
	ASSERT_EQ(before.files, 7);
	ASSERT_EQ(before.n, 4);

	ASSERT_EQ(fg_history__compact(h, T0 + (60 + 3600) * NS - 1, UINT64_MAX, &minutes, 1), 0);
	/* Old enough, but the caller still holds the minute elsewhere (the window). */
	ASSERT_EQ(fg_history__compact(h, T0 + (60 + 3600) * NS, T0 + 59 * NS, &minutes, 1), 0);
	fg_history__stats(h, &st);
	ASSERT_EQ(st.files, 7);
	ASSERT_EQ(st.merged, 0);

	ASSERT_EQ(fg_history__compact(h, T0 + (60 + 3600) * NS, UINT64_MAX, &minutes, 1), 1);
	fg_history__stats(h, &st);
	ASSERT_EQ(st.merged, 1);
	ASSERT_EQ(st.merged_sources, 6);
	ASSERT_EQ(st.files, 2);
	ASSERT_U64_EQ(st.bytes, dir_bytes(dir));
	ASSERT_EQ(st.compact_errors, 0);
	ASSERT_TRUE(exists(dir, 0, 60));
	ASSERT_TRUE(!exists(dir, 0, 10) && !exists(dir, 50, 60));
	ASSERT_TRUE(exists(dir, 60, 70));
	read_totals(h, &after);
	ASSERT_EQ(after.files, 2);
	assert_same_samples(&before, &after);
	/* A range inside the minute reads the whole minute: coarse history has coarse edges. */
	after = (struct totals){ 0 };
	ASSERT_OK(fg_history__read(h, T0 + 20 * NS, T0 + 30 * NS, add_totals, NULL, &after));
	ASSERT_EQ(after.files, 1);
	ASSERT_U64_EQ(after.first_start, T0);
	ASSERT_U64_EQ(after.last_end, T0 + 60 * NS);
	/* Nothing more to do; the byte count matches the directory's. */
	ASSERT_EQ(fg_history__compact(h, T0 + (60 + 3600) * NS, UINT64_MAX, &minutes, 1), 0);
	fg_history__stats(h, &st);
	ASSERT_U64_EQ(st.bytes, dir_bytes(dir));
	fg_history__free(h);
	ASSERT_OK(fg_history__open(dir, &h));
	fg_history__stats(h, &st);
	ASSERT_EQ(st.files, 2);
	fg_history__free(h);
	remove_dir(dir);
}

TEST(leftovers_of_a_crashed_merge_are_read_once_and_deleted)
{
	char dir[] = "/tmp/fgd-test-history.XXXXXX";
	struct fg_history *h;
	struct fg_history_stats st;
	struct totals merged, now;

	make_dir(dir);
	ASSERT_OK(fg_history__open(dir, &h));
	store_minute(h);
	ASSERT_EQ(fg_history__compact(h, T0 + (60 + 3600) * NS, UINT64_MAX, &minutes, 1), 1);
	read_totals(h, &merged);
	/* fgd died after the rename, before deleting these two sources. */
	plant_at(dir, 10, 20, 1, 2, 2);
	plant_at(dir, 50, 60, 2, 6, 2);
	read_totals(h, &now);
	ASSERT_EQ(now.files, 1);
	assert_same_samples(&merged, &now);
	/* The next compaction deletes them. */
	ASSERT_EQ(fg_history__compact(h, T0 + (60 + 3600) * NS, UINT64_MAX, &minutes, 1), 0);
	fg_history__stats(h, &st);
	ASSERT_EQ(st.leftovers, 2);
	ASSERT_EQ(st.files, 1);
	ASSERT_U64_EQ(st.bytes, dir_bytes(dir));
	ASSERT_TRUE(!exists(dir, 10, 20) && !exists(dir, 50, 60));
	/* So does the next open. */
	plant_at(dir, 30, 40, 0, 4, 2);
	fg_history__free(h);
	ASSERT_OK(fg_history__open(dir, &h));
	fg_history__stats(h, &st);
	ASSERT_EQ(st.leftovers, 1);
	ASSERT_EQ(st.files, 1);
	ASSERT_TRUE(!exists(dir, 30, 40) && exists(dir, 0, 60));
	read_totals(h, &now);
	assert_same_samples(&merged, &now);
	fg_history__free(h);
	remove_dir(dir);
}

/* Whether the file of [start, end) (s after T0) was set aside for reason. */
static bool set_aside_as(const char *dir, uint64_t start, uint64_t end, const char *reason)
{
	char path[512], aside[600];

	span_path(path, sizeof(path), dir, start, end);
	snprintf(aside, sizeof(aside), "%s.%s", path, reason);
	return access(aside, F_OK) == 0 && access(path, F_OK) < 0;
}

struct unreadable {
	struct fg_history_unreadable v[8];
	size_t n;
	size_t slices; /* read */
};

static int on_unreadable(void *ctx, const struct fg_history_unreadable *u)
{
	struct unreadable *un = ctx;

	ASSERT_TRUE(un->n < 8);
	un->v[un->n++] = *u;
	return 0;
}

static int ignore_slice(void *ctx, const struct fg_slicefile *s)
{
	return 0;
}

TEST(a_damaged_source_is_set_aside_and_its_group_merged_without_it)
{
	char dir[] = "/tmp/fgd-test-history.XXXXXX";
	struct fg_history *h;
	struct fg_history_stats st;
	struct totals t;

	make_dir(dir);
	ASSERT_OK(fg_history__open(dir, &h));
	store_at(h, 0, 10, 0, 1, 2);
	store_at(h, 10, 20, 1, 2, 2);
	store_at(h, 20, 30, 0, 3, 2);
	/* A minute whose two files are both damaged. */
	store_at(h, 60, 70, 0, 1, 2);
	store_at(h, 70, 80, 0, 1, 2);
	flip_byte(dir, 10, 20);
	flip_byte(dir, 60, 70);
	flip_byte(dir, 70, 80);
	ASSERT_EQ(fg_history__compact(h, T0 + (120 + 3600) * NS, UINT64_MAX, &minutes, 2), 2);
	fg_history__stats(h, &st);
	ASSERT_EQ(st.corrupt, 3);
	ASSERT_EQ(st.corrupt_dropped, 3);
	ASSERT_EQ(st.merged, 1);
	ASSERT_EQ(st.merged_sources, 2);
	/* The merged file, and the three set aside: they say what their spans are missing. */
	ASSERT_EQ(st.files, 4);
	ASSERT_U64_EQ(st.bytes, dir_bytes(dir));
	ASSERT_TRUE(exists(dir, 0, 30) && !exists(dir, 60, 80));
	ASSERT_TRUE(set_aside_as(dir, 10, 20, "bad-checksum") &&
		    set_aside_as(dir, 60, 70, "bad-checksum") &&
		    set_aside_as(dir, 70, 80, "bad-checksum"));
	/* The readable sources' samples: f0 (1 + 3) and main;common (2). */
	read_totals(h, &t);
	ASSERT_EQ(t.n, 2);
	ASSERT_STREQ(t.stack[0], "main;f0");
	ASSERT_EQ(t.count[0], 4);
	ASSERT_STREQ(t.stack[1], "main;common");
	ASSERT_EQ(t.count[1], 2);
	/* Read again, and after a restart: named, not read, not counted again. */
	for (int pass = 0; pass < 2; pass++) {
		struct unreadable un = {};

		ASSERT_OK(fg_history__read(h, T0 + 15 * NS, T0 + 75 * NS, ignore_slice,
					   on_unreadable, &un));
		ASSERT_EQ(un.n, 3);
		ASSERT_U64_EQ(un.v[0].start_ns, T0 + 10 * NS);
		ASSERT_U64_EQ(un.v[0].end_ns, T0 + 20 * NS);
		ASSERT_EQ(un.v[0].why, FG_HISTORY_BAD_CHECKSUM);
		ASSERT_U64_EQ(un.v[2].start_ns, T0 + 70 * NS);
		fg_history__stats(h, &st);
		ASSERT_EQ(st.corrupt, pass ? 0 : 3);
		fg_history__free(h);
		ASSERT_OK(fg_history__open(dir, &h));
	}
	/* Gone when they age out, as slices do. */
	ASSERT_TRUE(fg_history__compact(h, T0 + 80 * NS + 7 * 24 * 3600 * NS, UINT64_MAX, &minutes,
					2) >= 0);
	fg_history__stats(h, &st);
	ASSERT_EQ(st.files, 0);
	ASSERT_U64_EQ(dir_bytes(dir), 0);
	fg_history__free(h);
	remove_dir(dir);
}

static int count_slice(void *ctx, const struct fg_slicefile *s)
{
	((struct unreadable *)ctx)->slices++;
	return 0;
}

TEST(damaged_files_are_named_why_and_set_aside_once)
{
	static const char *const kinds[] = { "truncated", "bad-checksum", "not-slice", "not-file",
					     "not-file" };
	char dir[] = "/tmp/fgd-test-history.XXXXXX", path[512];
	struct fg_history *h;
	struct fg_history_stats st;
	struct unreadable un = {};
	int fd;

	make_dir(dir);
	ASSERT_OK(fg_history__open(dir, &h));
	for (uint64_t i = 0; i < 6; i++)
		store_at(h, 10 * i, 10 * i + 10, 0, 1, 2);
	/* Truncated, a flipped bit, random bytes, a FIFO, a link to a file nobody may read. */
	span_path(path, sizeof(path), dir, 0, 10);
	ASSERT_OK(truncate(path, 30));
	flip_byte(dir, 10, 20);
	span_path(path, sizeof(path), dir, 20, 30);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(write(fd, "\x13\x37random bytes, not a slice", 27), 27);
	close(fd);
	span_path(path, sizeof(path), dir, 30, 40);
	ASSERT_OK(unlink(path));
	ASSERT_OK(mkfifo(path, 0600));
	span_path(path, sizeof(path), dir, 40, 50);
	ASSERT_OK(unlink(path));
	ASSERT_OK(symlink("/etc/shadow", path));
	ASSERT_OK(fg_history__read(h, 0, T0 + 50 * NS, count_slice, on_unreadable, &un));
	ASSERT_EQ(un.slices, 0);
	ASSERT_EQ(un.n, 5);
	for (size_t i = 0; i < 5; i++) {
		ASSERT_U64_EQ(un.v[i].start_ns, T0 + 10 * i * NS);
		ASSERT_STREQ(fg_history_damage_name(un.v[i].why), i == 0 ? "truncated" :
								  i == 1 ? "bad checksum" :
								  i == 2 ? "not a slice file" :
									   "not a regular file");
		ASSERT_TRUE(set_aside_as(dir, 10 * i, 10 * i + 10, kinds[i]));
	}
	/* The sixth reads; each damaged one was counted once, and is named again, unread. */
	un.n = 0;
	ASSERT_OK(fg_history__read(h, 0, UINT64_MAX, count_slice, on_unreadable, &un));
	fg_history__stats(h, &st);
	ASSERT_EQ(st.corrupt, 5);
	ASSERT_EQ(un.n, 5);
	ASSERT_EQ(un.slices, 1);
	/* Nothing was opened through the link. */
	ASSERT_STREQ(fg_history_damage_name(un.v[4].why), "not a regular file");
	fg_history__free(h);
	remove_dir(dir);
}

TEST(a_later_version_keeps_its_group_whole_and_others_go_on)
{
	char dir[] = "/tmp/fgd-test-history.XXXXXX", path[512];
	struct fg_history *h;
	struct fg_history_stats st;

	make_dir(dir);
	ASSERT_OK(fg_history__open(dir, &h));
	store_at(h, 0, 10, 0, 1, 2);
	store_at(h, 10, 20, 0, 1, 2);
	store_at(h, 60, 70, 0, 1, 2);
	store_at(h, 70, 80, 0, 1, 2);
	span_path(path, sizeof(path), dir, 10, 20);
	patch_byte(path, 4, FG_SLICEFILE_VERSION + 1);
	ASSERT_EQ(fg_history__compact(h, T0 + (120 + 3600) * NS, UINT64_MAX, &minutes, 1),
		  -EPROTONOSUPPORT);
	ASSERT_EQ(fg_history__compact(h, T0 + (120 + 3600) * NS, UINT64_MAX, &minutes, 1), 1);
	ASSERT_EQ(fg_history__compact(h, T0 + (120 + 3600) * NS, UINT64_MAX, &minutes, 1), 0);
	fg_history__stats(h, &st);
	ASSERT_EQ(st.future, 1);
	ASSERT_EQ(st.compact_errors, 1);
	ASSERT_EQ(st.last_compact_error, -EPROTONOSUPPORT);
	ASSERT_EQ(st.merged, 1);
	ASSERT_TRUE(exists(dir, 0, 10) && exists(dir, 10, 20) && exists(dir, 60, 80));
	fg_history__free(h);
	remove_dir(dir);
}

TEST(files_older_than_the_retention_are_deleted)
{
	char dir[] = "/tmp/fgd-test-history.XXXXXX";
	struct fg_history *h;
	struct fg_history_stats st;

	make_dir(dir);
	ASSERT_OK(fg_history__open(dir, &h));
	store_at(h, 0, 60, 0, 1, 2);
	store_at(h, 60, 120, 0, 1, 2);
	ASSERT_EQ(fg_history__compact(h, T0 + (60 + 86400) * NS, UINT64_MAX, &minutes, 1), 0);
	fg_history__stats(h, &st);
	ASSERT_EQ(st.expired, 1);
	ASSERT_EQ(st.files, 1);
	ASSERT_U64_EQ(st.bytes, dir_bytes(dir));
	ASSERT_TRUE(!exists(dir, 0, 60) && exists(dir, 60, 120));
	fg_history__free(h);
	remove_dir(dir);
}

TEST(a_full_disk_fails_the_merge_and_keeps_the_sources)
{
	char dir[] = "/tmp/fgd-test-history.XXXXXX", tmp[512];
	struct fg_history *h;
	struct fg_history_stats st;
	struct totals t;

	if (geteuid() != 0)
		SKIP("mounting a small tmpfs needs root");
	make_dir(dir);
	if (mount("fgd-test", dir, "tmpfs", 0, "size=64k") < 0) {
		remove_dir(dir);
		SKIP("cannot mount a tmpfs here");
	}
	ASSERT_OK(fg_history__open(dir, &h));
	/* Four sources of about 10 KB with nothing in common: their merge needs 40 KB more. */
	for (unsigned i = 0; i < 4; i++)
		store_at(h, i * 10, i * 10 + 10, i, 1, 80);
	fg_history__stats(h, &st);
	ASSERT_EQ(st.files, 4);
	ASSERT_TRUE(st.bytes > 32 * 1024 && st.bytes <= 48 * 1024);
	ASSERT_EQ(fg_history__compact(h, T0 + (60 + 3600) * NS, UINT64_MAX, &minutes, 1), -ENOSPC);
	fg_history__stats(h, &st);
	ASSERT_EQ(st.compact_errors, 1);
	ASSERT_EQ(st.last_compact_error, -ENOSPC);
	ASSERT_EQ(st.merged, 0);
	ASSERT_EQ(st.files, 4);
	snprintf(tmp, sizeof(tmp), "%s/slices/%020" PRIu64 "-%020" PRIu64 ".fgdh.tmp", dir, T0,
		 T0 + 40 * NS);
	ASSERT_TRUE(access(tmp, F_OK) < 0);
	read_totals(h, &t);
	ASSERT_EQ(t.files, 4);
	ASSERT_EQ(t.n, 5);
	fg_history__free(h);
	ASSERT_OK(umount(dir));
	remove_dir(dir);
}
