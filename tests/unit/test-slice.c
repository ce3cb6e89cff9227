/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/slice.h"
#include "storage/slicefile.h"
#include "storage/window.h"
#include "test.h"

#define T0 1700000000000LL /* a multiple of 10 s */

static uint32_t intern(struct fg_slice *s, const char *name)
{
	uint32_t id;

	ASSERT_OK(fg_slice__intern(s, name, strlen(name), &id));
	return id;
}

TEST(names_are_interned_once_and_end_at_a_nul)
{
	struct fg_slice *s;
	uint32_t id;

	ASSERT_OK(fg_slice__new(T0, T0 + 10000, 1 << 20, 4096, &s));
	/* Name 0 is the empty string: an unknown exe or cgroup. */
	ASSERT_STREQ(fg_slice_name(s, 0), "");
	id = intern(s, "main");
	ASSERT_EQ(intern(s, "main"), id);
	ASSERT_OK(fg_slice__intern(s, "main\0tail", 9, &id));
	ASSERT_EQ(id, intern(s, "main"));
	ASSERT_TRUE(intern(s, "mai") != id);
	ASSERT_STREQ(fg_slice_name(s, id), "main");
	fg_slice__free(s);
}

TEST(samples_count_in_their_stack_process_and_times)
{
	struct fg_window_proc a = { 100, 1, 1000, "burn", "/usr/bin/burn", "/user.slice" };
	struct fg_window_proc b = { 200, 2, 1000, NULL, NULL, NULL };
	uint32_t st[2];
	struct fg_slice *s;
	int64_t start, end;

	ASSERT_OK(fg_slice__new(T0, T0 + 10000, 1 << 20, 4096, &s));
	st[0] = intern(s, "main");
	st[1] = intern(s, "hot");
	ASSERT_OK(fg_slice__add(s, &a, st, 2, 3, false, T0 + 10));
	ASSERT_OK(fg_slice__add(s, &a, st, 2, 1, false, T0 + 20));
	ASSERT_OK(fg_slice__add(s, &a, st, 1, 1, false, T0 + 30));
	ASSERT_OK(fg_slice__add(s, &b, NULL, 0, 2, true, T0 + 40));
	/* Nothing to count, and an id the slice does not hold. */
	ASSERT_OK(fg_slice__add(s, &a, st, 2, 0, false, T0));
	st[1] = 999;
	ASSERT_ERR(fg_slice__add(s, &a, st, 2, 1, false, T0), -EINVAL);

	ASSERT_U64_EQ(s->samples, 7);
	ASSERT_EQ(s->n_procs, 2);
	ASSERT_EQ(s->n_stacks, 2);
	ASSERT_U64_EQ(s->stacks[0].count, 4);
	ASSERT_U64_EQ(s->stacks[1].count, 1);
	ASSERT_U64_EQ(s->procs[1].other, 2);
	ASSERT_U64_EQ(s->folded_samples, 2);
	/* A process without a comm is "[unknown]". */
	ASSERT_STREQ(fg_slice_name(s, s->procs[1].comm), "[unknown]");
	/* Each sample's time, what it went to, and its count once one was not 1. */
	ASSERT_EQ(s->n_times, 4);
	ASSERT_TRUE(!s->times_lost);
	ASSERT_EQ(s->times[0].at, 10);
	ASSERT_EQ(s->times[0].ref, 0);
	ASSERT_EQ(fg_slice_time_count(s, 0), 3);
	ASSERT_EQ(fg_slice_time_count(s, 1), 1);
	ASSERT_EQ(s->times[3].ref, FG_SLICE_REF_OTHER | 1);
	/* A sample without a time: the slice's times no longer add up, and go. */
	ASSERT_OK(fg_slice__add(s, &a, st, 1, 1, false, FG_WINDOW_NO_TIME));
	ASSERT_TRUE(s->times_lost);
	ASSERT_EQ(s->n_times, 0);

	fg_slice__add_lost(s, 5);
	fg_slice__add_lost(s, UINT64_MAX);
	ASSERT_U64_EQ(fg_slice_lost(s), UINT64_MAX);
	fg_slice_span(s, &start, &end);
	ASSERT_TRUE(start == T0 && end == T0 + 10000);
	fg_slice__free(s);
}

TEST(a_storm_of_stacks_folds_into_other_within_the_budget)
{
	struct fg_window_proc p = { 100, 1, 0, "storm", "/bin/storm", "/" };
	const uint64_t budget = 64 << 10;
	struct fg_slice *s;
	uint32_t hot[2];
	uint64_t total = 0;

	ASSERT_OK(fg_slice__new(T0, T0 + 10000, budget, budget / 4, &s));
	hot[0] = intern(s, "main");
	hot[1] = intern(s, "hot");
	for (int i = 0; i < 20000; i++) {
		uint32_t frames[2] = { hot[0], hot[1] };
		char name[32];

		/* A hot stack, and a flood of unique ones until names run out. */
		if (i % 2) {
			snprintf(name, sizeof(name), "f%d", i);
			if (fg_slice__intern(s, name, strlen(name), &frames[1]) == -ENOSPC) {
				ASSERT_OK(fg_slice__add(s, &p, NULL, 0, 1, true, T0 + i % 10000));
				total++;
				continue;
			}
		}
		ASSERT_OK(fg_slice__add(s, &p, frames, 2, 1, false, T0 + i % 10000));
		total++;
		ASSERT_TRUE(fg_slice__bytes(s) <= budget);
	}
	ASSERT_U64_EQ(s->samples, total);
	ASSERT_TRUE(s->compactions > 0 && s->compactions <= FG_WINDOW_MAX_COMPACTIONS);
	ASSERT_TRUE(s->folded_stacks > 0);
	ASSERT_U64_EQ(s->procs[0].other, s->folded_samples);
	/* Every sample still counts: the hot stack's and "[other]"'s add up. */
	{
		uint64_t sum = s->procs[0].other;

		for (size_t i = 0; i < s->n_stacks; i++)
			sum += s->stacks[i].count;
		ASSERT_U64_EQ(sum, total);
		ASSERT_U64_EQ(s->procs[0].samples, total);
	}
	fg_slice__free(s);
}

TEST(a_closed_slice_keeps_its_samples_in_less_memory)
{
	struct fg_window_proc p = { 100, 1, 0, "burn", NULL, NULL };
	struct fg_slice *s;
	uint32_t st[1];
	size_t open;

	ASSERT_OK(fg_slice__new(T0, T0 + 10000, 1 << 20, 4096, &s));
	st[0] = intern(s, "main");
	ASSERT_OK(fg_slice__add(s, &p, st, 1, 2, false, T0 + 5));
	open = fg_slice__bytes(s);
	fg_slice__close(s, T0 + 8000);
	ASSERT_TRUE(s->closed);
	ASSERT_TRUE(fg_slice__bytes(s) < open);
	ASSERT_U64_EQ(s->stacks[0].count, 2);
	ASSERT_EQ(s->n_times, 1);
	ASSERT_EQ(s->end_ms, T0 + 8000);
	fg_slice__free(s);
}

TEST(an_exported_slice_holds_its_stacks_other_and_times)
{
	struct fg_window_proc a = { 100, 1, 1000, "burn", "/usr/bin/burn", "/user.slice" };
	struct fg_slicefile_writer *fw;
	struct fg_slicefile_stack fst;
	struct fg_slicefile *f;
	const uint8_t *data;
	struct fg_slice *s;
	uint32_t st[2];
	size_t len;

	ASSERT_OK(fg_slice__new(T0, T0 + 10000, 1 << 20, 4096, &s));
	st[0] = intern(s, "main");
	st[1] = intern(s, "hot");
	ASSERT_OK(fg_slice__add(s, &a, st, 2, 2, false, T0 + 100));
	ASSERT_OK(fg_slice__add(s, &a, NULL, 0, 3, true, T0 + 200));
	fg_slice__add_lost(s, 7);
	ASSERT_OK(fg_slice_export(s, T0 + 4000, &fw));
	ASSERT_OK(fg_slicefile_writer__finish(fw, &data, &len));
	ASSERT_OK(fg_slicefile__parse(data, len, &f));

	ASSERT_EQ(fg_slicefile__n_coverage(f), 1);
	ASSERT_U64_EQ(fg_slicefile__coverage(f, 0)->end_ns, (uint64_t)(T0 + 4000) * 1000000);
	ASSERT_U64_EQ(fg_slicefile__coverage(f, 0)->lost, 7);
	ASSERT_EQ(fg_slicefile__n_processes(f), 1);
	ASSERT_STREQ(fg_slicefile__process(f, 0)->comm, "burn");
	ASSERT_STREQ(fg_slicefile__process(f, 0)->cgroup, "/user.slice");
	/* Stack i of the slice is stack i of the file; then each process's "[other]". */
	ASSERT_EQ(fg_slicefile__n_stacks(f), 2);
	fg_slicefile__stack(f, 0, &fst);
	ASSERT_EQ(fst.n, 2);
	ASSERT_U64_EQ(fst.count, 2);
	ASSERT_STREQ(fg_slicefile__string(f, fst.frames[1]), "hot");
	fg_slicefile__stack(f, 1, &fst);
	ASSERT_EQ(fst.n, 1);
	ASSERT_U64_EQ(fst.count, 3);
	ASSERT_STREQ(fg_slicefile__string(f, fst.frames[0]), FG_WINDOW_OTHER);
	ASSERT_EQ(fg_slicefile__tick_ms(f), FG_WINDOW_FILE_TICK_MS);
	ASSERT_EQ(fg_slicefile__n_times(f), 2);

	fg_slicefile__free(f);
	fg_slicefile_writer__free(fw);
	fg_slice__free(s);
}
