/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The timed profile: samples kept in time order with their stacks, the
 * share of a range each gets (instants, and µs that end at a sample), the
 * text form read back as written, malformed text refused line by line, and
 * perf script's times read into one.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "profile/lines.h"
#include "profile/perfscript.h"
#include "profile/timed.h"
#include "render-test.h"

/* Adds a sample on the stack written as folded text ("a;b;c"). */
static void add(struct fg_timed *t, int64_t time, const char *stack, uint64_t weight)
{
	const uint32_t *frames;
	uint32_t copy[64];
	size_t n;

	ASSERT_OK(fg_folded__intern_stack(fg_timed__model(t), stack, strlen(stack), &frames, &n));
	ASSERT_TRUE(n <= ELEMENTSOF(copy));
	memcpy(copy, frames, n * sizeof(*frames));
	ASSERT_OK(fg_timed__add(t, time, copy, n, weight));
}

/* Sample i's stack as folded text, in buf. */
static const char *stack_of(const struct fg_timed *t, size_t i, char *buf, size_t size)
{
	const struct fg_folded *m = fg_timed__model_const(t);
	struct fg_stack st;
	size_t len = 0;

	fg_folded__stack_by_id(m, fg_timed__samples(t)[i].stack, &st);
	buf[0] = '\0';
	for (size_t k = 0; k < st.n_frames; k++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", k ? ";" : "",
					fg_folded__name(m, st.frames[k]));
	return buf;
}

/* The range [since, until) of t as sorted folded text. */
static void range_text(const struct fg_timed *t, int64_t since, int64_t until, struct membuf *m)
{
	_cleanup_(fg_folded__freep) struct fg_folded *f = fg_folded__new();
	size_t cursor = 0;
	int r;

	ASSERT_TRUE(f);
	ASSERT_OK(fg_timed__range(t, since, until, NULL, NULL, f));
	ASSERT_OK(fg_folded__sort(f));
	membuf_done(m);
	while ((r = fg_folded__emit(f, &cursor, membuf_write, m, 4096)) == 0)
		;
	ASSERT_EQ(r, 1);
	if (!m->data)
		ASSERT_OK(membuf_write(m, "", 1));
}

TEST(samples_are_kept_in_time_order_with_their_stacks)
{
	_cleanup_(fg_timed__freep) struct fg_timed *t = NULL;
	char buf[256];

	ASSERT_OK(fg_timed__new(FG_TIMED_SAMPLES, FG_TIMED_CLOCK_UNIX, &t));
	add(t, 1005, "app;main;work", 1);
	add(t, 1001, "app;main;idle", 1);
	add(t, 1005, "app;main;idle", 2);
	add(t, 1003, "app;main;work", 1);
	ASSERT_OK(fg_timed__sort(t));
	ASSERT_EQ(fg_timed__n_samples(t), 4);
	ASSERT_U64_EQ(fg_timed__total(t), 5);
	ASSERT_EQ(fg_timed__samples(t)[0].time, 1001);
	ASSERT_EQ(fg_timed__samples(t)[1].time, 1003);
	/* Equal times keep the order they came in. */
	ASSERT_STREQ(stack_of(t, 2, buf, sizeof(buf)), "app;main;work");
	ASSERT_STREQ(stack_of(t, 3, buf, sizeof(buf)), "app;main;idle");
	ASSERT_EQ(fg_timed__samples(t)[3].weight, 2);
	/* The model's counts are the whole profile's. */
	ASSERT_EQ(fg_folded__n_stacks(fg_timed__model(t)), 2);
	ASSERT_TRUE(fg_folded__total(fg_timed__model(t)) == 5);
	ASSERT_ERR(fg_timed__add(t, 0, NULL, 0, 1), -EINVAL);
}

TEST(a_weight_past_32_bits_is_split_where_its_parts_end)
{
	_cleanup_(fg_timed__freep) struct fg_timed *t = NULL;
	const struct fg_timed_sample *v;

	/* A block of 9,000 s: 4,000 s, 4,000 s and 1,000 s. */
	ASSERT_OK(fg_timed__new(FG_TIMED_US, FG_TIMED_CLOCK_UNIX, &t));
	add(t, 10000000, "app;wait", 9000000000ULL);
	ASSERT_OK(fg_timed__sort(t));
	ASSERT_EQ(fg_timed__n_samples(t), 3);
	v = fg_timed__samples(t);
	ASSERT_EQ(v[0].time, 10000000 - 8000000);
	ASSERT_EQ(v[0].weight, 1000000000);
	ASSERT_EQ(v[1].time, 10000000 - 4000000);
	ASSERT_EQ(v[2].time, 10000000);
	ASSERT_EQ(v[2].weight, 4000000000U);
	ASSERT_U64_EQ(fg_timed__total(t), 9000000000ULL);
}

TEST(a_range_gets_the_samples_in_it_or_the_part_of_a_block_in_it)
{
	struct fg_timed_sample s = { .time = 100, .weight = 3 };
	_cleanup_(fg_timed__freep) struct fg_timed *t = NULL;
	_cleanup_(membuf_done) struct membuf m = {};

	/* An instant: all or nothing. */
	ASSERT_TRUE(fg_timed_share(FG_TIMED_SAMPLES, &s, 100, 101) == 3);
	ASSERT_TRUE(fg_timed_share(FG_TIMED_SAMPLES, &s, 90, 100) == 0);
	/* µs ending with ms 100: (100,001 - w, 101,000] µs. */
	s.weight = 4000;
	ASSERT_TRUE(fg_timed_share(FG_TIMED_US, &s, 97, 99) == 2000);
	ASSERT_TRUE(fg_timed_share(FG_TIMED_US, &s, 0, 1000) == 4000);
	ASSERT_TRUE(fg_timed_share(FG_TIMED_US, &s, 101, 200) == 0);

	ASSERT_OK(fg_timed__new(FG_TIMED_US, FG_TIMED_CLOCK_UNIX, &t));
	add(t, 1999, "db;fsync", 1000000); /* [1000, 2000) ms */
	add(t, 1499, "db;read", 100000);   /* [1400, 1500) ms */
	add(t, 5000, "db;poll", 10);
	ASSERT_OK(fg_timed__sort(t));
	range_text(t, 1450, 1550, &m);
	ASSERT_STREQ(m.data, "db;fsync 100000\ndb;read 50000\n");
	/* A long block that ended after the range still covers it. */
	range_text(t, 1000, 1100, &m);
	ASSERT_STREQ(m.data, "db;fsync 100000\n");
	range_text(t, 2000, 5000, &m);
	ASSERT_STREQ(m.data, "");
}

static int add_line(void *ctx, const char *line, size_t len, uint64_t lineno)
{
	return fg_timed__add_line(ctx, line, len);
}

TEST(the_text_form_reads_back_as_written)
{
	_cleanup_(fg_timed__freep) struct fg_timed *t = NULL, *back = NULL;
	_cleanup_(membuf_done) struct membuf m = {}, again = {};
	size_t cursor = 0;
	int r;

	ASSERT_OK(fg_timed__new(FG_TIMED_US, FG_TIMED_CLOCK_PERF, &t));
	add(t, 5000, "a;b", 1);
	add(t, 5000, "a;c", 7);
	add(t, 5012, "a;b", 1);
	add(t, 4990, "x y;z_[k]", 2);
	ASSERT_OK(fg_timed__sort(t));
	while ((r = fg_timed__emit(t, &cursor, membuf_write, &m, 8)) == 0)
		;
	ASSERT_EQ(r, 1);
	ASSERT_STREQ(m.data, "fgd-timed 1 clock=perf unit=us start=4990\n"
			     "s a;b\n"
			     "s a;c\n"
			     "s x y;z_[k]\n"
			     "0 2 2\n"
			     "10 0\n"
			     "0 1 7\n"
			     "12 0\n");
	ASSERT_OK(fg_timed__new(FG_TIMED_SAMPLES, FG_TIMED_CLOCK_UNIX, &back));
	ASSERT_EQ(fg_lines_split(m.data, m.len, add_line, back), 0);
	ASSERT_EQ(fg_timed__unit(back), FG_TIMED_US);
	ASSERT_EQ(fg_timed__clock(back), FG_TIMED_CLOCK_PERF);
	ASSERT_EQ(fg_timed__n_samples(back), 4);
	ASSERT_U64_EQ(fg_timed__total(back), 11);
	ASSERT_OK(fg_timed__sort(back));
	cursor = 0;
	while ((r = fg_timed__emit(back, &cursor, membuf_write, &again, 1 << 20)) == 0)
		;
	ASSERT_STREQ(again.data, m.data);
}

/* The error of the last of lines, each added in turn to a new profile (all but the last must pass). */
static int last_error(const char *const *lines, size_t n)
{
	_cleanup_(fg_timed__freep) struct fg_timed *t = NULL;
	int r = 0;

	ASSERT_OK(fg_timed__new(FG_TIMED_SAMPLES, FG_TIMED_CLOCK_UNIX, &t));
	for (size_t i = 0; i < n; i++) {
		r = add_line(t, lines[i], strlen(lines[i]), i + 1);
		if (i + 1 < n)
			ASSERT_TRUE(r >= 0);
	}
	return r;
}

TEST(malformed_text_is_refused_a_line_at_a_time)
{
	static const char *const no_header[] = { "0 0" };
	static const char *const other_version[] = { "fgd-timed 2 clock=unix" };
	static const char *const other_clock[] = { "fgd-timed 1 clock=tai" };
	static const char *const undefined_stack[] = { "fgd-timed 1", "s a;b", "0 1" };
	static const char *const negative_delta[] = { "fgd-timed 1", "s a", "-1 0" };
	static const char *const zero_weight[] = { "fgd-timed 1", "s a", "0 0 0" };
	static const char *const trailing[] = { "fgd-timed 1", "s a", "0 0 1 9" };
	/* Times past FG_TIMED_TIME_MAX (2^43 ms), in the header or from a delta. */
	static const char *const far_start[] = { "fgd-timed 1 start=9223372036854775800" };
	static const char *const far_until[] = { "fgd-timed 1 since=0 until=8796093022209" };
	static const char *const far_sample[] = { "fgd-timed 1 start=8796093022208", "s a", "0 0",
						  "1 0" };
	static const char *const overflow[] = { "fgd-timed 1 start=8796093022208", "s a",
						"9223372036854775807 0" };
	static const char *const empty_stack[] = { "fgd-timed 1", "s " };
	static const char *const fine[] = { "# a comment", "fgd-timed 1 newer=key", "", "s a;b",
					    "3 0 5" };

	ASSERT_ERR(last_error(no_header, 1), -EINVAL);
	ASSERT_ERR(last_error(other_version, 1), -EPROTONOSUPPORT);
	ASSERT_ERR(last_error(other_clock, 1), -EPROTONOSUPPORT);
	ASSERT_ERR(last_error(undefined_stack, 3), -EINVAL);
	ASSERT_ERR(last_error(negative_delta, 3), -EINVAL);
	ASSERT_ERR(last_error(zero_weight, 3), -EINVAL);
	ASSERT_ERR(last_error(trailing, 3), -EINVAL);
	ASSERT_ERR(last_error(far_start, 1), -ERANGE);
	ASSERT_ERR(last_error(far_until, 1), -ERANGE);
	ASSERT_ERR(last_error(far_sample, 4), -ERANGE);
	ASSERT_ERR(last_error(overflow, 3), -EINVAL);
	ASSERT_ERR(last_error(empty_stack, 2), -EINVAL);
	ASSERT_EQ(last_error(fine, 5), 1);

	/* A refused header leaves nothing of itself: the period is what a good one says. */
	{
		_cleanup_(fg_timed__freep) struct fg_timed *t = NULL;
		const char *good = "fgd-timed 1 since=5 until=10";
		int64_t since, until;

		ASSERT_OK(fg_timed__new(FG_TIMED_SAMPLES, FG_TIMED_CLOCK_UNIX, &t));
		ASSERT_ERR(add_line(t, far_until[0], strlen(far_until[0]), 1), -ERANGE);
		fg_timed__period(t, &since, &until);
		ASSERT_TRUE(since == 0 && until == 0 && !fg_timed__has_header(t));
		ASSERT_OK(add_line(t, good, strlen(good), 2));
		fg_timed__period(t, &since, &until);
		ASSERT_TRUE(since == 5 && until == 10);
	}
}

static bool only_db(void *ctx, const struct fg_folded *model, const uint32_t *frames, size_t n)
{
	return strcmp(fg_folded__name(model, frames[0]), "db") == 0;
}

TEST(a_filter_keeps_the_samples_of_matching_stacks)
{
	_cleanup_(fg_timed__freep) struct fg_timed *t = NULL, *db = NULL;
	char buf[64];

	ASSERT_OK(fg_timed__new(FG_TIMED_SAMPLES, FG_TIMED_CLOCK_UNIX, &t));
	add(t, 1, "web;a", 1);
	add(t, 2, "db;b", 3);
	add(t, 3, "web;a", 1);
	add(t, 4, "db;b", 1);
	ASSERT_OK(fg_timed__sort(t));
	ASSERT_OK(fg_timed__filter(t, only_db, NULL, &db));
	ASSERT_EQ(fg_timed__n_samples(db), 2);
	ASSERT_U64_EQ(fg_timed__total(db), 4);
	ASSERT_EQ(fg_timed__samples(db)[1].time, 4);
	ASSERT_STREQ(stack_of(db, 0, buf, sizeof(buf)), "db;b");
	ASSERT_TRUE(fg_folded__total(fg_timed__model(db)) == 4);
}

static int perf_line(void *ctx, const char *line, size_t len, uint64_t lineno)
{
	return fg_perfscript__feed(ctx, line, len, lineno);
}

/* perf script text, recorded (tests/data/perfscript) or given, into a timed profile. */
static struct fg_timed *from_perf(const char *file, const char *text,
				  struct fg_perfscript_stats *ret_stats)
{
	struct fg_timed *t = NULL;
	struct fg_perfscript *p = NULL;
	struct fg_perfscript_opts o = { .count_samples = true };

	ASSERT_OK(fg_timed__new(FG_TIMED_SAMPLES, FG_TIMED_CLOCK_PERF, &t));
	ASSERT_OK(fg_perfscript__new_timed(t, &o, &p));
	if (file) {
		char path[4096];
		int fd;

		snprintf(path, sizeof(path), "%s/perfscript/%s", fg_test_data_dir(), file);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		ASSERT_TRUE(fd >= 0);
		ASSERT_OK(fg_lines_read_fd(fd, 1 << 20, perf_line, p));
		close(fd);
	} else {
		ASSERT_OK(fg_lines_split(text, strlen(text), perf_line, p));
	}
	ASSERT_OK(fg_perfscript__finish(p));
	fg_perfscript__stats(p, ret_stats);
	fg_perfscript__free(p);
	ASSERT_OK(fg_timed__sort(t));
	return t;
}

TEST(perf_script_times_come_with_their_samples)
{
	static const char text[] = "app 10/11 [003] 12.345678: 1 cpu-clock:\n"
				   "\t1 hot (/bin/app)\n"
				   "\t2 main (/bin/app)\n"
				   "\n"
				   "app 10/11 12.3:\n"
				   "\t1 hot (/bin/app)\n"
				   "\n"
				   "app 10/11 [003] cpu-clock:\n"
				   "\t1 cold (/bin/app)\n"
				   "\n";
	_cleanup_(fg_timed__freep) struct fg_timed *t = NULL, *rec = NULL;
	struct fg_perfscript_stats st;
	char buf[128];

	t = from_perf(NULL, text, &st);
	ASSERT_EQ(fg_timed__n_samples(t), 2);
	ASSERT_EQ(fg_timed__samples(t)[0].time, 12300);
	ASSERT_EQ(fg_timed__samples(t)[1].time, 12345);
	ASSERT_STREQ(stack_of(t, 1, buf, sizeof(buf)), "app;main;hot");
	/* A header without a time has no place on a heat map: counted, left out. */
	ASSERT_U64_EQ(st.untimed, 1);
	ASSERT_U64_EQ(st.samples, 2);

	/* perf 6.1's default output, with [CPU]; every sample counts 1, whatever its period. */
	rec = from_perf("fp-default.txt", NULL, &st);
	ASSERT_U64_EQ(st.untimed, 0);
	ASSERT_TRUE(fg_timed__n_samples(rec) > 0);
	ASSERT_U64_EQ(fg_timed__total(rec), fg_timed__n_samples(rec));
	ASSERT_EQ(fg_timed__samples(rec)[0].time, 6736229);
}
