/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/folded.h"
#include "profile/timed.h"
#include "profile/top.h"
#include "storage/slice.h"
#include "storage/slicefile.h"
#include "storage/window.h"
#include "test.h"

#define T0 1700000000000LL /* a multiple of 10 s */

/* Root's view: everything as stored. */
static const struct fg_view root_view = { .uid = 0, .kernel_suffix = true };

static void add_at(struct fg_window *w, const struct fg_window_proc *p, const char *stack,
		   uint64_t count, int64_t time_ms)
{
	uint32_t ids[64];
	size_t n = 0;
	char buf[1024];

	snprintf(buf, sizeof(buf), "%s", stack);
	for (char *save = NULL, *tok = strtok_r(buf, ";", &save); tok;
	     tok = strtok_r(NULL, ";", &save)) {
		int r = fg_window__intern(w, tok, strlen(tok), &ids[n++]);

		if (r == -ENOSPC) {
			ASSERT_OK(fg_window__add_other(w, p, count, time_ms));
			return;
		}
		ASSERT_OK(r);
	}
	ASSERT_OK(fg_window__add(w, p, ids, n, count, time_ms));
}

static void add(struct fg_window *w, const struct fg_window_proc *p, const char *stack,
		uint64_t count)
{
	add_at(w, p, stack, count, FG_WINDOW_NO_TIME);
}

/* The query's folded text, sorted, as one string. */
static char *folded_text(struct fg_folded *f)
{
	static char out[1 << 16];
	size_t len = 0;

	ASSERT_OK(fg_folded__sort(f));
	out[0] = '\0';
	for (size_t i = 0; i < fg_folded__n_stacks(f); i++) {
		struct fg_stack st;

		fg_folded__stack(f, i, &st);
		for (size_t k = 0; k < st.n_frames; k++)
			len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%s", k ? ";" : "",
						fg_folded__name(f, st.frames[k]));
		len += (size_t)snprintf(out + len, sizeof(out) - len, " %.0f\n", st.count);
	}
	return out;
}

static bool only_pid(void *ctx, const struct fg_window_proc *p)
{
	return p->pid == *(pid_t *)ctx;
}

TEST(slices_aggregate_rotate_and_expire)
{
	struct fg_window_opts o = { .slice_ms = 10000, .window_ms = 30000, .memory_max = 16 << 20 };
	struct fg_window_proc a = { 100, 1, 1000, "burn", "/usr/bin/burn", "/user.slice" };
	struct fg_window_proc b = {
		200, 2, 0, "sshd", "/usr/sbin/sshd", "/system.slice/ssh.service"
	};
	struct fg_window_result res;
	struct fg_window_stats st;
	struct fg_window *w;
	struct fg_folded *f;
	uint64_t epoch;
	pid_t pid = 100;

	ASSERT_OK(fg_window__new(&o, T0 + 1000, &w));
	epoch = fg_window__epoch(w);
	add(w, &a, "main;hot_a", 3);
	add(w, &a, "main;hot_b", 1);
	add(w, &a, "main;hot_a", 2);
	add(w, &b, "main;poll", 1);
	ASSERT_EQ(fg_window__tick(w, T0 + 9999), 0);
	ASSERT_EQ(fg_window__tick(w, T0 + 10000), 1);
	ASSERT_TRUE(fg_window__epoch(w) != epoch);
	add(w, &a, "main;hot_a", 10);

	f = fg_folded__new();
	ASSERT_OK(fg_window__query(w, T0, T0 + 20000, FG_WINDOW_ROOTS_COMM, NULL, NULL, true, f,
				   &res));
	ASSERT_STREQ(folded_text(f), "burn;main;hot_a 15\nburn;main;hot_b 1\nsshd;main;poll 1\n");
	ASSERT_EQ(res.slices, 2);
	ASSERT_EQ(res.samples, 17);
	ASSERT_EQ(res.first_ms, T0 + 1000);
	ASSERT_EQ(res.last_ms, T0 + 20000);
	fg_folded__free(f);

	/* A cgroup frame above each process, whole or its last component. */
	f = fg_folded__new();
	ASSERT_OK(fg_window__query(w, T0, T0 + 20000, FG_WINDOW_ROOTS_CGROUP, NULL, NULL, true, f,
				   &res));
	ASSERT_STREQ(folded_text(f),
		     "/system.slice/ssh.service;sshd;main;poll 1\n"
		     "/user.slice;burn;main;hot_a 15\n/user.slice;burn;main;hot_b 1\n");
	fg_folded__free(f);
	f = fg_folded__new();
	ASSERT_OK(fg_window__query(w, T0, T0 + 20000, FG_WINDOW_ROOTS_CGROUP_NAME, NULL, NULL, true,
				   f, &res));
	ASSERT_STREQ(folded_text(f), "ssh.service;sshd;main;poll 1\nuser.slice;burn;main;hot_a 15\n"
				     "user.slice;burn;main;hot_b 1\n");
	ASSERT_STREQ(fg_window_cgroup_frame(NULL, FG_WINDOW_ROOTS_CGROUP), "[unknown]");
	fg_folded__free(f);
	/* The pid in the process frame, as stackcollapse-perf.pl --pid writes it. */
	f = fg_folded__new();
	ASSERT_OK(fg_window__query(w, T0, T0 + 20000,
				   FG_WINDOW_ROOTS_CGROUP_NAME | FG_WINDOW_ROOTS_PID, NULL, NULL,
				   true, f, &res));
	ASSERT_STREQ(folded_text(f),
		     "ssh.service;sshd-200;main;poll 1\n"
		     "user.slice;burn-100;main;hot_a 15\nuser.slice;burn-100;main;hot_b 1\n");
	ASSERT_STREQ(fg_window_cgroup_frame("/", FG_WINDOW_ROOTS_CGROUP_NAME), "/");
	fg_folded__free(f);

	/* Only the first slice, only pid 100. */
	f = fg_folded__new();
	ASSERT_OK(fg_window__query(w, T0, T0 + 5000, FG_WINDOW_ROOTS_COMM, only_pid, &pid, false, f,
				   &res));
	ASSERT_STREQ(folded_text(f), "burn;main;hot_a 5\nburn;main;hot_b 1\n");
	ASSERT_EQ(res.slices, 1);
	ASSERT_EQ(res.processes, 1);
	fg_folded__free(f);

	/* Nothing before the first slice. */
	f = fg_folded__new();
	ASSERT_OK(fg_window__query(w, T0 - 60000, T0, FG_WINDOW_ROOTS_COMM, NULL, NULL, true, f,
				   &res));
	ASSERT_EQ(res.slices, 0);
	ASSERT_EQ(fg_folded__n_stacks(f), 0);
	fg_folded__free(f);

	/* 40 s later the first slice (ended T0+10s) is out of the 30 s window. */
	ASSERT_EQ(fg_window__tick(w, T0 + 41000), 1);
	fg_window__stats(w, &st);
	ASSERT_EQ(st.expired_slices, 1);
	ASSERT_EQ(st.slices, 2);
	ASSERT_EQ(st.samples, 10);
	ASSERT_EQ(st.total_samples, 17);
	fg_window__free(w);
}

static int expired_calls;
static void on_expire(void *ctx, const struct fg_slice *s)
{
	int64_t start, end;

	fg_slice_span(s, &start, &end);
	ASSERT_TRUE(end > start);
	expired_calls++;
}

TEST(expired_slices_leave_through_the_hook_and_the_count_is_bounded)
{
	struct fg_window_opts o = { .slice_ms = 1000, .window_ms = 5000, .memory_max = 1 << 20 };
	struct fg_window_proc a = { 1, 1, 0, "x", NULL, NULL };
	struct fg_window_stats st;
	struct fg_window *w;

	ASSERT_OK(fg_window__new(&o, T0, &w));
	fg_window__set_expire_hook(w, on_expire, NULL);
	/* The clock going back and forth still closes slices, and their number stays bounded. */
	for (int i = 0; i < 100; i++) {
		add(w, &a, "f", 1);
		fg_window__tick(w, T0 + (i % 2 ? 1000 * i : -1000 * i));
	}
	fg_window__stats(w, &st);
	ASSERT_TRUE(st.slices <= 5 + 2 + 1);
	ASSERT_TRUE(expired_calls > 80);
	ASSERT_EQ(fg_window__expire(w), 1);
	fg_window__free(w);
}

TEST(ceiling_holds_under_a_unique_stack_storm)
{
	struct fg_window_opts o = { .slice_ms = 10000, .window_ms = 60000, .memory_max = 1 << 20 };
	struct fg_window_result res;
	struct fg_window_stats st;
	struct fg_window *w;
	struct fg_folded *f;
	uint64_t total = 0;

	ASSERT_OK(fg_window__new(&o, T0, &w));
	for (int s = 0; s < 12; s++) {
		for (int i = 0; i < 20000; i++) {
			struct fg_window_proc p = { 100 + i % 7, 1, 0, "storm", "/bin/storm", "/" };
			char stack[128];

			/* A hot stack and a flood of unique ones. */
			if (i % 2 == 0)
				snprintf(stack, sizeof(stack), "main;hot");
			else
				snprintf(stack, sizeof(stack), "main;f%d_%d;g%d", s, i, i * 7);
			add(w, &p, stack, 1);
			total++;
			fg_window__stats(w, &st);
			ASSERT_TRUE(st.bytes <= o.memory_max);
		}
		fg_window__tick(w, T0 + 10000 * (s + 1));
	}
	fg_window__stats(w, &st);
	ASSERT_TRUE(st.bytes <= o.memory_max);
	ASSERT_TRUE(st.total_folded_samples > 0);
	ASSERT_TRUE(st.compactions > 0);
	ASSERT_EQ(st.total_samples, total);

	/* Every sample still counts: the hot stack kept its own, the rest is [other]. */
	f = fg_folded__new();
	ASSERT_OK(fg_window__query(w, T0 + 110000, T0 + 120000, FG_WINDOW_ROOTS_COMM, NULL, NULL,
				   true, f, &res));
	ASSERT_EQ(res.samples, 20000);
	ASSERT_EQ((uint64_t)fg_folded__total(f), 20000);
	ASSERT_TRUE(res.folded_samples > 0);
	ASSERT_TRUE(strstr(folded_text(f), "storm;main;hot 1") != NULL ||
		    strstr(folded_text(f), "storm;main;hot ") != NULL);
	ASSERT_TRUE(strstr(folded_text(f), "storm;[other] ") != NULL);
	fg_folded__free(f);
	/* [other] has the process's roots too. */
	f = fg_folded__new();
	ASSERT_OK(fg_window__query(w, T0 + 110000, T0 + 120000, FG_WINDOW_ROOTS_CGROUP_NAME, NULL,
				   NULL, true, f, &res));
	ASSERT_EQ((uint64_t)fg_folded__total(f), 20000);
	ASSERT_TRUE(strstr(folded_text(f), ";storm;[other] ") != NULL);
	fg_folded__free(f);
	fg_window__free(w);
}

TEST(ceiling_holds_under_a_process_storm)
{
	struct fg_window_opts o = { .slice_ms = 10000,
				    .window_ms = 10000,
				    .memory_max = 256 << 10 };
	struct fg_window_result res;
	struct fg_window_stats st;
	struct fg_window *w;
	struct fg_folded *f;

	ASSERT_OK(fg_window__new(&o, T0, &w));
	for (int i = 0; i < 100000; i++) {
		char comm[16], exe[64];
		struct fg_window_proc p = { i + 1, (uint64_t)i, (uid_t)i, comm, exe, "/" };

		snprintf(comm, sizeof(comm), "p%d", i);
		snprintf(exe, sizeof(exe), "/tmp/fork/%d", i);
		add(w, &p, "main;work", 1);
	}
	fg_window__stats(w, &st);
	ASSERT_TRUE(st.bytes <= o.memory_max);
	ASSERT_TRUE(st.unattributed_samples > 0);
	f = fg_folded__new();
	ASSERT_OK(fg_window__query(w, T0, T0 + 10000, FG_WINDOW_ROOTS_COMM, NULL, NULL, true, f,
				   &res));
	ASSERT_EQ((uint64_t)fg_folded__total(f), 100000);
	ASSERT_EQ(res.unattributed, st.unattributed_samples);
	fg_folded__free(f);
	fg_window__free(w);
}

TEST(top_ranks_processes_with_their_hottest_leaf)
{
	struct fg_window_opts o = { .slice_ms = 10000, .window_ms = 60000, .memory_max = 1 << 20 };
	struct fg_window_proc a = { 100, 1, 1000, "burn", "/usr/bin/burn", "/" };
	struct fg_window_proc b = { 200, 2, 0, "sshd", "/usr/sbin/sshd", "/" };
	struct fg_window_proc c = { 300, 3, 0, "empty", NULL, NULL };
	const struct fg_top_entry *e;
	struct fg_window_result res;
	struct fg_window *w;
	struct fg_top *top;
	size_t n;

	ASSERT_OK(fg_window__new(&o, T0, &w));
	ASSERT_OK(fg_top__new(100, 100, 99, &root_view, &top));
	add(w, &a, "main;hot_a", 3);
	add(w, &b, "main;poll", 2);
	fg_window__tick(w, T0 + 10000);
	add(w, &a, "main;hot_b", 1);
	add(w, &a, "main;x;hot_a", 3);
	/* Folded samples and frameless ones count for the process, but name no leaf. */
	ASSERT_OK(fg_window__add_other(w, &b, 4, FG_WINDOW_NO_TIME));
	ASSERT_OK(fg_window__add(w, &c, NULL, 0, 1, FG_WINDOW_NO_TIME));
	fg_window__tick(w, T0 + 12500);
	ASSERT_OK(fg_window__top(w, T0, T0 + 20000, NULL, NULL, top, &res));
	ASSERT_OK(fg_top__list(top, &e, &n));
	ASSERT_EQ(n, 3);
	ASSERT_EQ(e[0].pid, 100);
	ASSERT_EQ(e[0].samples, 7);
	ASSERT_STREQ(e[0].leaf, "hot_a");
	ASSERT_EQ(e[0].leaf_samples, 6);
	ASSERT_STREQ(e[1].comm, "sshd");
	ASSERT_EQ(e[1].samples, 6);
	ASSERT_STREQ(e[1].leaf, "poll");
	ASSERT_EQ(e[1].leaf_samples, 2);
	ASSERT_STREQ(e[2].comm, "empty");
	ASSERT_TRUE(e[2].leaf == NULL);
	ASSERT_EQ(res.samples, 14);
	ASSERT_EQ(res.slices, 2);
	/* The closed slice's 10 s, and the open one's 2.5 s so far. */
	ASSERT_EQ(res.covered_ms, 12500);
	ASSERT_EQ(res.last_ms - res.first_ms, 20000);
	fg_top__free(top);
	fg_window__free(w);
}

TEST(bad_input)
{
	struct fg_window_opts o = { .slice_ms = 0, .window_ms = 1, .memory_max = 1 };
	struct fg_window_proc a = { 1, 1, 0, "x", NULL, NULL };
	struct fg_window *w;
	uint32_t bogus = 999;

	ASSERT_EQ(fg_window__new(&o, T0, &w), -EINVAL);
	o = (struct fg_window_opts){ .slice_ms = 10, .window_ms = 5, .memory_max = 1 };
	ASSERT_EQ(fg_window__new(&o, T0, &w), -EINVAL);
	o = (struct fg_window_opts){ .slice_ms = 10, .window_ms = 100, .memory_max = 1 << 20 };
	ASSERT_OK(fg_window__new(&o, T0, &w));
	ASSERT_EQ(fg_window__add(w, &a, &bogus, 1, 1, FG_WINDOW_NO_TIME), -EINVAL);
	/* A sample without frames still counts for its process. */
	ASSERT_OK(fg_window__add(w, &a, NULL, 0, 1, FG_WINDOW_NO_TIME));
	fg_window__free(w);
}

/*
 * Each sample's time is kept: a range that cuts a slice takes the samples in
 * it, to the ms, through the slice's compactions; a slice without its
 * times counts whole and is said to; a timed query places every sample.
 */
TEST(ranges_cut_slices_to_the_ms_by_the_samples_times)
{
	struct fg_window_opts o = { .slice_ms = 10000, .window_ms = 60000, .memory_max = 1 << 20 };
	struct fg_window_proc a = { 100, 1, 0, "app", "/bin/app", "/" };
	struct fg_window_result res;
	struct fg_window *w;
	struct fg_folded *f;
	struct fg_timed *t;
	const struct fg_timed_sample *v;

	ASSERT_OK(fg_window__new(&o, T0, &w));
	/* 2,000 samples of one stack a ms apart, a burst of another between 1,250 and 1,500 ms. */
	for (int i = 0; i < 2000; i++)
		add_at(w, &a, i >= 1250 && i < 1500 ? "main;burst" : "main;idle", 1, T0 + i);
	/* One taken just before the slice began, added after: it is counted at its time. */
	add_at(w, &a, "main;late", 1, T0 - 3);
	fg_window__tick(w, T0 + 5000);
	f = fg_folded__new();
	ASSERT_OK(fg_window__query(w, T0 + 1250, T0 + 1500, FG_WINDOW_ROOTS_COMM, NULL, NULL, true,
				   f, &res));
	ASSERT_STREQ(folded_text(f), "app;main;burst 250\n");
	ASSERT_EQ(res.samples, 250);
	ASSERT_EQ(res.untimed_slices, 0);
	ASSERT_EQ(res.first_ms, T0 + 1250);
	ASSERT_EQ(res.last_ms, T0 + 1500);
	ASSERT_EQ(res.covered_ms, 250);
	fg_folded__free(f);
	f = fg_folded__new();
	ASSERT_OK(
		fg_window__query(w, T0 - 10, T0, FG_WINDOW_ROOTS_COMM, NULL, NULL, true, f, &res));
	ASSERT_STREQ(folded_text(f), "app;main;late 1\n");
	fg_folded__free(f);

	/* A timed query: every sample at its time. */
	ASSERT_OK(fg_timed__new(FG_TIMED_SAMPLES, FG_TIMED_CLOCK_UNIX, &t));
	ASSERT_OK(fg_window__timed(w, T0 + 1499, T0 + 1502, NULL, NULL, true, t, &res));
	ASSERT_OK(fg_timed__sort(t));
	ASSERT_EQ(fg_timed__n_samples(t), 3);
	v = fg_timed__samples(t);
	ASSERT_EQ(v[0].time, T0 + 1499);
	ASSERT_EQ(v[2].time, T0 + 1501);
	ASSERT_TRUE(v[0].stack != v[1].stack && v[1].stack == v[2].stack);
	fg_timed__free(t);

	/* A sample without its time: the slice's times no longer add up. */
	add(w, &a, "main;idle", 1);
	f = fg_folded__new();
	ASSERT_OK(fg_window__query(w, T0 + 1250, T0 + 1500, FG_WINDOW_ROOTS_COMM, NULL, NULL, true,
				   f, &res));
	ASSERT_EQ(res.untimed_slices, 1);
	ASSERT_EQ(res.samples, 2002);
	fg_folded__free(f);
	ASSERT_OK(fg_timed__new(FG_TIMED_SAMPLES, FG_TIMED_CLOCK_UNIX, &t));
	ASSERT_OK(fg_window__timed(w, T0, T0 + 10000, NULL, NULL, true, t, &res));
	ASSERT_EQ(fg_timed__n_samples(t), 0);
	ASSERT_EQ(res.untimed_slices, 1);
	fg_timed__free(t);
	fg_window__free(w);
}

/*
 * Times of one stack fill most of the half of the slice's budget that is
 * theirs, then a sample comes with a count: the counts of the times already
 * there do not fit, so the slice loses its times rather than its ceiling.
 */
TEST(ceiling_holds_when_a_count_comes_to_a_full_time_table)
{
	struct fg_window_opts o = { .slice_ms = 10000, .window_ms = 60000, .memory_max = 1 << 20 };
	struct fg_window_proc a = { 100, 1, 0, "app", "/bin/app", "/" };
	struct fg_window_result res;
	struct fg_window_stats st;
	struct fg_window *w;
	struct fg_folded *f;
	uint64_t samples = 0;

	ASSERT_OK(fg_window__new(&o, T0, &w));
	fg_window__stats(w, &st);
	while (st.times_bytes <= st.slice_budget / 3) {
		add_at(w, &a, "main;idle", 1, T0 + (int64_t)(samples++ % 10000));
		fg_window__stats(w, &st);
		ASSERT_EQ(st.untimed_slices, 0);
	}
	add_at(w, &a, "main;idle", 2, T0 + 1);
	samples += 2;
	fg_window__stats(w, &st);
	ASSERT_TRUE(st.bytes <= st.slice_budget);
	ASSERT_TRUE(st.times_bytes <= st.slice_budget / 2);
	ASSERT_EQ(st.untimed_slices, 1);
	ASSERT_EQ(st.times_bytes, 0);
	/* Every sample still counts: a range takes the slice whole, and says so. */
	f = fg_folded__new();
	ASSERT_OK(fg_window__query(w, T0 + 1000, T0 + 2000, FG_WINDOW_ROOTS_COMM, NULL, NULL, true,
				   f, &res));
	ASSERT_EQ(res.untimed_slices, 1);
	ASSERT_EQ(res.samples, samples);
	fg_folded__free(f);
	fg_window__free(w);
}

TEST(times_follow_their_stacks_into_other_when_a_slice_compacts)
{
	struct fg_window_opts o = { .slice_ms = 10000, .window_ms = 60000, .memory_max = 1 << 20 };
	struct fg_window_result res;
	struct fg_window_stats st;
	struct fg_window *w;
	struct fg_folded *f;
	struct fg_timed *t;
	uint64_t hot_in_range = 0;

	ASSERT_OK(fg_window__new(&o, T0, &w));
	/*
	 * Long unique names fill the slice's stacks long before the times fill
	 * the quarter of its budget kept for them (3,000 times are 24 KiB of 128).
	 */
	for (int i = 0; i < 3000; i++) {
		struct fg_window_proc p = { 100, 1, 0, "storm", "/bin/storm", "/" };
		char stack[512];

		if (i % 2 == 0)
			snprintf(stack, sizeof(stack), "main;hot");
		else
			snprintf(stack, sizeof(stack), "main;f%d_%0400d;g%d", i, i, i * 7);
		add_at(w, &p, stack, 1, T0 + i);
		hot_in_range += i % 2 == 0 && i >= 1000 && i < 2000;
	}
	fg_window__stats(w, &st);
	ASSERT_TRUE(st.compactions > 0);
	f = fg_folded__new();
	ASSERT_OK(fg_window__query(w, T0 + 1000, T0 + 2000, FG_WINDOW_ROOTS_COMM, NULL, NULL, true,
				   f, &res));
	ASSERT_EQ(res.untimed_slices, 0);
	ASSERT_EQ(res.samples, 1000);
	ASSERT_TRUE(strstr(folded_text(f), "storm;main;hot ") != NULL);
	{
		char *text = folded_text(f), *hot = strstr(text, "storm;main;hot ");

		ASSERT_EQ(strtoull(hot + strlen("storm;main;hot "), NULL, 10), hot_in_range);
	}
	fg_folded__free(f);
	ASSERT_OK(fg_timed__new(FG_TIMED_SAMPLES, FG_TIMED_CLOCK_UNIX, &t));
	ASSERT_OK(fg_window__timed(w, T0, T0 + 10000, NULL, NULL, true, t, &res));
	ASSERT_EQ(fg_timed__n_samples(t), 3000);
	fg_timed__free(t);
	fg_window__free(w);
}

struct spans {
	int64_t v[16][2];
	size_t n;
};

static int on_span(void *ctx, int64_t start, int64_t end)
{
	struct spans *s = ctx;

	ASSERT_TRUE(s->n < 16);
	s->v[s->n][0] = start;
	s->v[s->n][1] = end;
	s->n++;
	return 0;
}

TEST(slices_abut_unless_a_tick_comes_later_than_the_gap_bound)
{
	struct fg_window_opts o = {
		.slice_ms = 10000, .window_ms = 600000, .memory_max = 16 << 20, .gap_ms = 5000
	};
	struct fg_window_proc a = { 100, 1, 1000, "burn", "/usr/bin/burn", "/user.slice" };
	struct fg_window_result res;
	struct spans sp = {};
	struct fg_window *w;
	struct fg_folded *f;
	int64_t start, end;

	ASSERT_OK(fg_window__new(&o, T0 + 300, &w));
	f = fg_folded__new();
	ASSERT_TRUE(f);
	/* The tick that notices the end comes a drain round late: the next slice starts at the end. */
	ASSERT_EQ(fg_window__tick(w, T0 + 10400), 1);
	fg_slice_span(fg_window__open_slice(w), &start, &end);
	ASSERT_EQ(start, T0 + 10000);
	ASSERT_EQ(end, T0 + 20000);
	/* 4.9 s late, within the bound: still abutting. */
	ASSERT_EQ(fg_window__tick(w, T0 + 24900), 1);
	fg_slice_span(fg_window__open_slice(w), &start, &end);
	ASSERT_EQ(start, T0 + 20000);
	ASSERT_EQ(end, T0 + 30000);
	/* Later than that (the loop stalled 35 s): the time between is a gap, and lost samples. */
	add_at(w, &a, "main;hot", 3, T0 + 29000);
	fg_window__add_lost(w, 40);
	ASSERT_EQ(fg_window__tick(w, T0 + 65000), 1);
	fg_slice_span(fg_window__open_slice(w), &start, &end);
	ASSERT_EQ(start, T0 + 65000);
	ASSERT_EQ(end, T0 + 70000);
	ASSERT_EQ(fg_slice_lost(fg_window__last_closed(w)), 40);
	fg_window__tick(w, T0 + 66000);
	ASSERT_OK(fg_window__coverage(w, on_span, &sp));
	ASSERT_EQ(sp.n, 4);
	ASSERT_EQ(sp.v[0][0], T0 + 300);
	ASSERT_EQ(sp.v[0][1], T0 + 10000);
	ASSERT_EQ(sp.v[1][0], T0 + 10000);
	ASSERT_EQ(sp.v[2][1], T0 + 30000);
	/* The open slice, as far as the last tick. */
	ASSERT_EQ(sp.v[3][0], T0 + 65000);
	ASSERT_EQ(sp.v[3][1], T0 + 66000);
	/* A query counts the time the slices cover, and their losses. */
	ASSERT_OK(fg_window__query(w, T0, T0 + 70000, 0, NULL, NULL, true, f, &res));
	ASSERT_EQ(res.covered_ms, 29700 + 1000);
	ASSERT_U64_EQ(res.lost, 40);
	ASSERT_U64_EQ(res.samples, 3);
	fg_folded__free(f);
	fg_window__free(w);
}

TEST(an_exported_slice_covers_its_span_with_its_losses)
{
	struct fg_window_opts o = { .slice_ms = 10000, .window_ms = 60000, .memory_max = 16 << 20 };
	struct fg_window_proc a = { 100, 1, 1000, "burn", "/usr/bin/burn", "/user.slice" };
	struct fg_slicefile_writer *fw;
	struct fg_slicefile *s;
	const uint8_t *data;
	struct fg_window *w;
	size_t len;

	ASSERT_OK(fg_window__new(&o, T0, &w));
	add_at(w, &a, "main;hot", 2, T0 + 100);
	fg_window__add_lost(w, 5);
	fg_window__add_lost(w, 2);
	ASSERT_OK(fg_slice_export(fg_window__open_slice(w), T0 + 4000, &fw));
	ASSERT_OK(fg_slicefile_writer__finish(fw, &data, &len));
	ASSERT_OK(fg_slicefile__parse(data, len, &s));
	ASSERT_EQ(fg_slicefile__n_coverage(s), 1);
	ASSERT_U64_EQ(fg_slicefile__coverage(s, 0)->start_ns, (uint64_t)T0 * 1000000);
	ASSERT_U64_EQ(fg_slicefile__coverage(s, 0)->end_ns, (uint64_t)(T0 + 4000) * 1000000);
	ASSERT_U64_EQ(fg_slicefile__coverage(s, 0)->lost, 7);
	fg_slicefile__free(s);
	fg_slicefile_writer__free(fw);
	fg_window__free(w);
}
