/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fgd-history.h"
#include "test.h"

/* One process, one stack of `frames` frames, each named after its depth and tag. */
static void slice_bytes(uint64_t tag, size_t frames, uint8_t **ret, size_t *ret_len)
{
	const struct fg_slicefile_process p = { 42, 7, 0, "worker", "/usr/bin/worker", "/" };
	struct fg_slicefile_writer *w;
	const char **names = calloc(frames, sizeof(*names));
	char (*buf)[160] = calloc(frames, sizeof(*buf));
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

static void store(struct fg_history *h, uint64_t tag)
{
	uint8_t *data;
	size_t len;

	slice_bytes(tag, 3, &data, &len);
	ASSERT_OK(fg_history__store(h, tag * 1000, tag * 1000 + 1000, data, len));
	free(data);
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
	ASSERT_OK(fg_history__read(h, 1500, 3000, on_slice, &seen));
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
	ASSERT_OK(fg_history__read(h, 0, UINT64_MAX, on_slice, &seen));
	ASSERT_EQ(seen.n, 3);
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
	fd = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(pwrite(fd, "X", 1, 40), 1);
	close(fd);
	/* A crash during a write: the temporary file is left behind. */
	snprintf(path, sizeof(path), "%s/slices/%020d-%020d.fgdh.tmp", dir, 4000, 5000);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0640);
	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(write(fd, "FGDH", 4), 4);
	close(fd);

	ASSERT_OK(fg_history__open(dir, &h));
	ASSERT_TRUE(access(path, F_OK) < 0);
	ASSERT_OK(fg_history__read(h, 0, UINT64_MAX, on_slice, &seen));
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
	ASSERT_OK(fg_history__read(h, 0, UINT64_MAX, on_slice, &seen));
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
	ASSERT_OK(fg_history__read(h, 0, UINT64_MAX, on_slice, &seen));
	ASSERT_EQ(seen.n, 1);
	fg_history__free(h);
	ASSERT_OK(umount(dir));
	remove_dir(dir);
}
