/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "profile/top.h"
#include "test.h"

/* Root's view: everything as stored. */
static const struct fg_view root_view = { .uid = 0, .kernel_suffix = true };

static void add(struct fg_top *t, pid_t pid, uint64_t start, const char *comm, const char *leaf,
		uint64_t count)
{
	const struct fg_top_process p = { pid, start, 1000, comm };

	ASSERT_OK(fg_top__add(t, &p, leaf, leaf ? strlen(leaf) : 0, count));
}

TEST(the_hottest_leaf_comes_from_the_summed_counts)
{
	const struct fg_top_entry *e;
	struct fg_top *t;
	size_t n;

	ASSERT_OK(fg_top__new(16, 16, 99, &root_view, &t));
	/* One source (the disk) has f ahead, the other (memory) only g: g wins overall. */
	add(t, 10, 1, "burn", "f", 5);
	add(t, 10, 1, "burn", "g", 4);
	add(t, 10, 1, "burn", "g", 4);
	add(t, 10, 1, "burn", NULL, 3);
	ASSERT_OK(fg_top__list(t, &e, &n));
	ASSERT_EQ(n, 1);
	ASSERT_EQ(e[0].samples, 16);
	ASSERT_STREQ(e[0].leaf, "g");
	ASSERT_EQ(e[0].leaf_samples, 8);
	fg_top__free(t);
}

TEST(a_process_is_its_pid_and_start_time)
{
	const struct fg_top_process first = { 10, 1, 1000, "sh" }, later = { 10, 1, 0, "burn" };
	const struct fg_top_entry *e;
	struct fg_top *t;
	size_t n;

	ASSERT_OK(fg_top__new(16, 16, 99, &root_view, &t));
	ASSERT_OK(fg_top__add(t, &first, "main", 4, 2));
	/* It exec'd: the later name is shown, the uid first fed is kept. */
	ASSERT_OK(fg_top__add(t, &later, "hot", 3, 3));
	/* The pid reused by another process: another entry. */
	add(t, 10, 2, "other", "poll", 1);
	ASSERT_OK(fg_top__list(t, &e, &n));
	ASSERT_EQ(n, 2);
	ASSERT_EQ(e[0].pid, 10);
	ASSERT_EQ(e[0].start_time, 1);
	ASSERT_STREQ(e[0].comm, "burn");
	ASSERT_EQ(e[0].uid, 1000);
	ASSERT_EQ(e[0].samples, 5);
	ASSERT_STREQ(e[0].leaf, "hot");
	ASSERT_EQ(e[1].start_time, 2);
	ASSERT_STREQ(e[1].comm, "other");
	fg_top__free(t);
}

TEST(order_is_deterministic)
{
	const struct fg_top_entry *e;
	struct fg_top *t;
	size_t n;

	ASSERT_OK(fg_top__new(16, 16, 99, &root_view, &t));
	add(t, 30, 1, "c", "zeta", 2);
	add(t, 30, 1, "c", "alpha", 2);
	add(t, 20, 9, "b", "x", 4);
	add(t, 20, 5, "b", "x", 4);
	add(t, 5, 1, "a", "x", 1);
	add(t, 40, 1, NULL, NULL, 9);
	ASSERT_OK(fg_top__list(t, &e, &n));
	ASSERT_EQ(n, 5);
	/* Busiest first; equal samples by pid, then start time. */
	ASSERT_EQ(e[0].pid, 40);
	ASSERT_STREQ(e[0].comm, "[unknown]");
	ASSERT_TRUE(e[0].leaf == NULL);
	ASSERT_EQ(e[0].leaf_samples, 0);
	ASSERT_EQ(e[1].pid, 20);
	ASSERT_EQ(e[1].start_time, 5);
	ASSERT_EQ(e[2].pid, 20);
	ASSERT_EQ(e[2].start_time, 9);
	ASSERT_EQ(e[3].pid, 30);
	/* Equal leaves: the first name in byte order, whatever the feeding order. */
	ASSERT_STREQ(e[3].leaf, "alpha");
	ASSERT_EQ(e[4].pid, 5);
	/* Listing again after more samples sees them. */
	add(t, 5, 1, "a", "x", 20);
	ASSERT_OK(fg_top__list(t, &e, &n));
	ASSERT_EQ(e[0].pid, 5);
	ASSERT_EQ(e[0].samples, 21);
	ASSERT_EQ(e[0].leaf_samples, 21);
	fg_top__free(t);
}

TEST(caps_count_what_they_leave_out)
{
	const struct fg_top_entry *e;
	struct fg_top_stats st;
	struct fg_top *t;
	size_t n;

	ASSERT_OK(fg_top__new(2, 3, 99, &root_view, &t));
	add(t, 1, 1, "a", "f", 5);
	add(t, 2, 1, "b", "f", 4);
	/* A third process: its samples are listed nowhere, and counted. */
	add(t, 3, 1, "c", "f", 7);
	/* A fourth (process, leaf) pair: the process counts it, its leaf does not. */
	add(t, 1, 1, "a", "g", 1);
	add(t, 2, 1, "b", "g", 6);
	/* Known pairs and processes still add up. */
	add(t, 1, 1, "a", "g", 1);
	add(t, 2, 1, "b", "f", 1);
	ASSERT_OK(fg_top__list(t, &e, &n));
	ASSERT_EQ(n, 2);
	ASSERT_EQ(e[0].pid, 2);
	ASSERT_EQ(e[0].samples, 11);
	ASSERT_STREQ(e[0].leaf, "f");
	ASSERT_EQ(e[0].leaf_samples, 5);
	ASSERT_EQ(e[1].pid, 1);
	ASSERT_EQ(e[1].samples, 7);
	fg_top__stats(t, &st);
	ASSERT_EQ(st.processes, 2);
	ASSERT_EQ(st.leaves, 3);
	ASSERT_EQ(st.dropped_samples, 7);
	ASSERT_EQ(st.dropped_leaf_samples, 6);
	fg_top__free(t);
}

TEST(counts_are_weighed_by_the_rate_they_were_taken_at)
{
	/* 99 samples at 99 Hz (the default), 19 at 19 Hz, 190 at 19 Hz: 1 s, 1 s, 10 s of CPU. */
	const struct fg_top_process fast = { 1, 1, 0, "fast" }, slow = { 2, 2, 0, "slow", 19 },
				    busy = { 3, 3, 0, "busy", 19 };
	const struct fg_top_entry *e;
	struct fg_top *t;
	size_t n;

	ASSERT_OK(fg_top__new(4, 4, 99, &root_view, &t));
	ASSERT_OK(fg_top__add(t, &fast, "f", 1, 99));
	ASSERT_OK(fg_top__add(t, &slow, "s", 1, 19));
	ASSERT_OK(fg_top__add(t, &busy, "b", 1, 100));
	ASSERT_OK(fg_top__add(t, &busy, "b", 1, 90));
	ASSERT_OK(fg_top__list(t, &e, &n));
	ASSERT_EQ(n, 3);
	/* By CPU time: busy, then fast and slow at a second each (a tie), fast first for its samples. */
	ASSERT_EQ(e[0].pid, 3);
	ASSERT_TRUE(e[0].cpu_seconds > 9.999 && e[0].cpu_seconds < 10.001);
	ASSERT_EQ(e[1].pid, 1);
	ASSERT_TRUE(e[1].cpu_seconds > 0.999 && e[1].cpu_seconds < 1.001);
	ASSERT_EQ(e[2].pid, 2);
	ASSERT_EQ(e[2].samples, 19);
	ASSERT_TRUE(e[2].cpu_seconds > 0.999 && e[2].cpu_seconds < 1.001);
	fg_top__free(t);
}

TEST(names_and_bad_input)
{
	const struct fg_top_process p = { 1, 1, 0, "x" };
	const struct fg_top_entry *e;
	struct fg_top *t;
	size_t n;

	ASSERT_ERR(fg_top__new(0, 1, 99, &root_view, &t), -EINVAL);
	ASSERT_ERR(fg_top__new(1, 0, 99, &root_view, &t), -EINVAL);
	ASSERT_ERR(fg_top__new(1, 1, 0, &root_view, &t), -EINVAL);
	ASSERT_OK(fg_top__new(4, 4, 99, &root_view, &t));
	ASSERT_OK(fg_top__list(t, &e, &n));
	ASSERT_EQ(n, 0);
	/* A name ends at its length or its first NUL byte; a zero count adds nothing. */
	ASSERT_OK(fg_top__add(t, &p, "hot_a\0junk", 10, 2));
	ASSERT_OK(fg_top__add(t, &p, "hot_abc", 5, 1));
	ASSERT_OK(fg_top__add(t, &p, "cold", 4, 0));
	ASSERT_OK(fg_top__list(t, &e, &n));
	ASSERT_EQ(n, 1);
	ASSERT_EQ(e[0].samples, 3);
	ASSERT_STREQ(e[0].leaf, "hot_a");
	ASSERT_EQ(e[0].leaf_samples, 3);
	ASSERT_TRUE(fg_top__free(t) == NULL);
	ASSERT_TRUE(fg_top__free(NULL) == NULL);
}

TEST(a_hiding_view_counts_kernel_leaves_as_one)
{
	const struct fg_top_entry *e;
	struct fg_view user, root;
	struct fg_top *t;
	size_t n;

	/* 30 + 25 samples in the kernel beat 40 in hot_a once the kernel is one frame. */
	fg_view_init(&user, 1000, 2);
	ASSERT_OK(fg_top__new(16, 16, 99, &user, &t));
	add(t, 7, 1, "app", "hot_a", 40);
	add(t, 7, 1, "app", "read_zero_[k]", 30);
	add(t, 7, 1, "app", "[unknown]_[k]", 25);
	ASSERT_OK(fg_top__list(t, &e, &n));
	ASSERT_EQ(n, 1);
	ASSERT_STREQ(e[0].leaf, FG_VIEW_KERNEL);
	ASSERT_EQ(e[0].leaf_samples, 55);
	fg_top__free(t);

	fg_view_init(&root, 0, 2);
	ASSERT_OK(fg_top__new(16, 16, 99, &root, &t));
	add(t, 7, 1, "app", "hot_a", 40);
	add(t, 7, 1, "app", "read_zero_[k]", 30);
	add(t, 7, 1, "app", "[unknown]_[k]", 25);
	ASSERT_OK(fg_top__list(t, &e, &n));
	ASSERT_STREQ(e[0].leaf, "hot_a");
	fg_top__free(t);
}

TEST(names_from_any_source_come_out_clean)
{
	const struct fg_top_entry *e;
	struct fg_top *t;
	size_t n;

	ASSERT_OK(fg_top__new(16, 16, 99, &root_view, &t));
	/* A process name its process chose (prctl), and a leaf from a damaged history file. */
	add(t, 9, 1, "a\xff;b\n", "jit\xc0\xaf;x\r", 3);
	ASSERT_OK(fg_top__list(t, &e, &n));
	ASSERT_EQ(n, 1);
	ASSERT_STREQ(e[0].comm, "a\xef\xbf\xbd:b\xef\xbf\xbd");
	ASSERT_STREQ(e[0].leaf, "jit\xef\xbf\xbd\xef\xbf\xbd:x\xef\xbf\xbd");
	/* The same name again, raw or clean, is the same leaf. */
	add(t, 9, 1, "a\xff;b\n", "jit\xef\xbf\xbd\xef\xbf\xbd:x\xef\xbf\xbd", 2);
	ASSERT_OK(fg_top__list(t, &e, &n));
	ASSERT_EQ(e[0].leaf_samples, 5);
	fg_top__free(t);
}
