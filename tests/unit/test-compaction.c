/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/compaction.h"
#include "test.h"

#define S 1000000000ULL /* ns */
#define MIN (60 * S)
#define HOUR (3600 * S)
#define DAY (24 * HOUR)
/* A multiple of 600 s, so that it starts a group of every default tier. */
#define T0 (1800000000ULL * S)

/* fgd's defaults: an hour of 10 s files, a day of 1 min files, a week of 10 min files. */
static const struct fg_compaction_policy defaults = {
	.tiers = { { HOUR, MIN }, { DAY, 10 * MIN } },
	.n_tiers = 2,
	.keep_ns = 7 * DAY,
};

#define FILES(...) ((struct fg_compaction_file[]){ __VA_ARGS__ })
#define F(a, b)                          \
	{                                \
		.start = (a), .end = (b) \
	}

/* The plan for n files at now, checked to leave the spans alone. */
static int plan(struct fg_compaction_file *f, size_t n, uint64_t now,
		const struct fg_compaction_policy *p, struct fg_compaction_group *g)
{
	uint64_t spans[64][2];
	int r;

	ASSERT_TRUE(n <= 64);
	for (size_t i = 0; i < n; i++) {
		spans[i][0] = f[i].start;
		spans[i][1] = f[i].end;
	}
	r = fg_compaction_plan(f, n, now, UINT64_MAX, p, g);
	for (size_t i = 0; i < n; i++) {
		ASSERT_U64_EQ(f[i].start, spans[i][0]);
		ASSERT_U64_EQ(f[i].end, spans[i][1]);
	}
	return r;
}

/* Six 10 s files filling the minute starting at t. */
static void minute(struct fg_compaction_file *f, uint64_t t)
{
	for (int i = 0; i < 6; i++)
		f[i] = (struct fg_compaction_file)F(t + i * 10 * S, t + (i + 1) * 10 * S);
}

TEST(young_files_stay_and_a_minute_is_merged_once_all_of_it_is_an_hour_old)
{
	struct fg_compaction_file f[7];
	struct fg_compaction_group g[4];

	minute(f, T0);
	f[6] = (struct fg_compaction_file)F(T0 + MIN, T0 + MIN + 10 * S);
	/* The minute ended 59:59 ago: nothing yet. */
	ASSERT_EQ(plan(f, 7, T0 + MIN + HOUR - 1, &defaults, g), 0);
	for (int i = 0; i < 7; i++)
		ASSERT_EQ(f[i].fate, FG_COMPACTION_KEEP);
	/* Exactly an hour: the six become one file; the next minute's file waits. */
	ASSERT_EQ(plan(f, 7, T0 + MIN + HOUR, &defaults, g), 1);
	ASSERT_U64_EQ(g[0].start, T0);
	ASSERT_U64_EQ(g[0].end, T0 + MIN);
	ASSERT_EQ(g[0].tier, 0);
	ASSERT_EQ(g[0].n_files, 6);
	for (int i = 0; i < 6; i++) {
		ASSERT_EQ(f[i].fate, FG_COMPACTION_MERGE);
		ASSERT_EQ(f[i].group, 0);
	}
	ASSERT_EQ(f[6].fate, FG_COMPACTION_KEEP);
}

TEST(a_group_whose_period_is_not_over_waits_even_if_its_files_are_old)
{
	/* fgd stopped at T0 + 20 s and has not run since: the minute's files are old enough... */
	struct fg_compaction_file f[] = { F(T0, T0 + 10 * S), F(T0 + 10 * S, T0 + 20 * S) };
	struct fg_compaction_group g[1];

	/* ...but the minute ends an hour before T0 + 1 min + 1 h, not earlier. */
	ASSERT_EQ(plan(f, 2, T0 + 20 * S + HOUR, &defaults, g), 0);
	ASSERT_EQ(plan(f, 2, T0 + MIN + HOUR - 1, &defaults, g), 0);
	ASSERT_EQ(plan(f, 2, T0 + MIN + HOUR, &defaults, g), 1);
	ASSERT_U64_EQ(g[0].start, T0);
	/* The merged file spans what its sources cover, not the whole minute. */
	ASSERT_U64_EQ(g[0].end, T0 + 20 * S);
}

TEST(a_file_running_past_its_group_holds_the_group_back_until_it_is_old_enough)
{
	/* Slices of 15 s (SliceSec=15 with 1 min files): the last starts in the minute, ends after. */
	struct fg_compaction_file f[] = {
		F(T0 + 30 * S, T0 + 45 * S),
		F(T0 + 45 * S, T0 + 60 * S + 15 * S),
		F(T0 + 75 * S, T0 + 90 * S),
	};
	struct fg_compaction_group g[1];

	ASSERT_EQ(plan(f, 3, T0 + MIN + HOUR + 14 * S, &defaults, g), 0);
	ASSERT_EQ(f[0].fate, FG_COMPACTION_KEEP);
	/* A file belongs to the group it starts in. */
	ASSERT_EQ(plan(f, 3, T0 + MIN + HOUR + 15 * S, &defaults, g), 1);
	ASSERT_U64_EQ(g[0].start, T0 + 30 * S);
	ASSERT_U64_EQ(g[0].end, T0 + 75 * S);
	ASSERT_EQ(g[0].n_files, 2);
	ASSERT_EQ(f[2].fate, FG_COMPACTION_KEEP);
}

TEST(gaps_odd_lengths_and_restarts_merge_into_one_file_per_minute)
{
	struct fg_compaction_file f[] = {
		/* fgd started at 4.5 s: its first slice is short. */
		F(T0 + 4500000000ULL, T0 + 10 * S),
		F(T0 + 10 * S, T0 + 20 * S),
		/* stopped at 23 s (the open slice cut short), started again at 31 s */
		F(T0 + 20 * S, T0 + 23 * S),
		F(T0 + 31 * S, T0 + 40 * S),
		/* a gap: nothing written for [40 s, 50 s) */
		F(T0 + 50 * S, T0 + 60 * S),
		/* the next minute holds one file */
		F(T0 + 60 * S, T0 + 70 * S),
	};
	struct fg_compaction_group g[3];

	ASSERT_EQ(plan(f, 6, T0 + 3 * MIN + HOUR, &defaults, g), 1);
	ASSERT_U64_EQ(g[0].start, T0 + 4500000000ULL);
	ASSERT_U64_EQ(g[0].end, T0 + MIN);
	ASSERT_EQ(g[0].n_files, 5);
	/* One file alone is left as it is: it is as coarse as its data. */
	ASSERT_EQ(f[5].fate, FG_COMPACTION_KEEP);
}

TEST(nothing_past_the_horizon_is_merged)
{
	struct fg_compaction_file f[12];
	struct fg_compaction_group g[6];

	/* Two minutes, two hours old, but the caller still holds the second one in memory. */
	minute(f, T0);
	minute(f + 6, T0 + MIN);
	ASSERT_EQ(fg_compaction_plan(f, 12, T0 + 2 * MIN + 2 * HOUR, T0 + MIN + 50 * S, &defaults,
				     g),
		  1);
	ASSERT_U64_EQ(g[0].end, T0 + MIN);
	ASSERT_EQ(f[6].fate, FG_COMPACTION_KEEP);
	ASSERT_EQ(fg_compaction_plan(f, 12, T0 + 2 * MIN + 2 * HOUR, T0 + MIN - 1, &defaults, g),
		  0);
	/* Expiry is by age alone. */
	ASSERT_EQ(fg_compaction_plan(f, 12, T0 + 30 * S + 7 * DAY, 0, &defaults, g), 0);
	ASSERT_EQ(f[2].fate, FG_COMPACTION_EXPIRED);
	ASSERT_EQ(f[3].fate, FG_COMPACTION_KEEP);
}

TEST(files_already_at_the_coarse_size_are_left_alone)
{
	struct fg_compaction_file f[] = {
		F(T0, T0 + MIN),
		F(T0 + MIN, T0 + 2 * MIN),
		F(T0 + 10 * MIN, T0 + 20 * MIN),
	};
	struct fg_compaction_group g[1];

	/* Two hours old: 1 min files are the tier's size. */
	ASSERT_EQ(plan(f, 3, T0 + 20 * MIN + 2 * HOUR, &defaults, g), 0);
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(f[i].fate, FG_COMPACTION_KEEP);
	/* A day old: the two minutes become one 10 min file; the 10 min file stays. */
	ASSERT_EQ(plan(f, 3, T0 + 20 * MIN + DAY, &defaults, g), 1);
	ASSERT_EQ(g[0].tier, 1);
	ASSERT_U64_EQ(g[0].start, T0);
	ASSERT_U64_EQ(g[0].end, T0 + 2 * MIN);
	ASSERT_EQ(f[2].fate, FG_COMPACTION_KEEP);
}

TEST(a_compacted_minute_and_late_files_of_the_same_minute_merge_again)
{
	/* After a restart (or a changed policy) a 1 min file meets 10 s files of its minute. */
	struct fg_compaction_file f[] = {
		F(T0, T0 + 30 * S),
		F(T0 + 40 * S, T0 + 50 * S),
		F(T0 + 50 * S, T0 + 60 * S),
	};
	struct fg_compaction_group g[1];

	ASSERT_EQ(plan(f, 3, T0 + MIN + HOUR, &defaults, g), 1);
	ASSERT_EQ(g[0].n_files, 3);
	ASSERT_U64_EQ(g[0].start, T0);
	ASSERT_U64_EQ(g[0].end, T0 + MIN);
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(f[i].fate, FG_COMPACTION_MERGE);
}

TEST(files_older_than_a_day_go_straight_to_ten_minute_files)
{
	struct fg_compaction_file f[14];
	struct fg_compaction_group g[7];

	/* A minute of 10 s files, a 1 min file, then 10 s files again: fgd was off for a day. */
	minute(f, T0);
	f[6] = (struct fg_compaction_file)F(T0 + MIN, T0 + 2 * MIN);
	minute(f + 7, T0 + 5 * MIN);
	f[13] = (struct fg_compaction_file)F(T0 + 10 * MIN, T0 + 10 * MIN + 10 * S);
	ASSERT_EQ(plan(f, 14, T0 + 10 * MIN + DAY, &defaults, g), 1);
	ASSERT_EQ(g[0].tier, 1);
	ASSERT_EQ(g[0].n_files, 13);
	ASSERT_U64_EQ(g[0].start, T0);
	ASSERT_U64_EQ(g[0].end, T0 + 6 * MIN);
	/* The next 10 min file's period is not a day old; its minute is, as a 1 min group of one. */
	ASSERT_EQ(f[13].fate, FG_COMPACTION_KEEP);

	/* A second earlier the 10 min group waits, and its minutes are merged as 1 min files. */
	ASSERT_EQ(plan(f, 14, T0 + 10 * MIN + DAY - 1, &defaults, g), 2);
	ASSERT_EQ(g[0].tier, 0);
	ASSERT_U64_EQ(g[0].start, T0);
	ASSERT_EQ(g[0].n_files, 6);
	ASSERT_EQ(f[6].fate, FG_COMPACTION_KEEP);
	ASSERT_U64_EQ(g[1].start, T0 + 5 * MIN);
	ASSERT_EQ(g[1].n_files, 6);
}

TEST(leftovers_of_a_crashed_merge_are_found_and_not_merged)
{
	/* The 1 min file was stored; two of its six sources were not deleted yet. */
	struct fg_compaction_file f[] = {
		F(T0, T0 + 10 * S),
		F(T0, T0 + MIN),
		F(T0 + 30 * S, T0 + 40 * S),
		F(T0 + MIN, T0 + MIN + 10 * S),
	};
	struct fg_compaction_group g[2];

	ASSERT_EQ(plan(f, 4, T0 + 2 * MIN, &defaults, g), 0);
	ASSERT_EQ(f[0].fate, FG_COMPACTION_LEFTOVER);
	ASSERT_EQ(f[1].fate, FG_COMPACTION_KEEP);
	ASSERT_EQ(f[2].fate, FG_COMPACTION_LEFTOVER);
	ASSERT_EQ(f[3].fate, FG_COMPACTION_KEEP);
	/* Later, the coarse file is not merged with its leftovers. */
	ASSERT_EQ(plan(f, 4, T0 + DAY, &defaults, g), 0);
	ASSERT_EQ(f[0].fate, FG_COMPACTION_LEFTOVER);
	ASSERT_EQ(f[3].fate, FG_COMPACTION_KEEP);
}

TEST(leftovers_nest_and_touch_but_neighbours_do_not)
{
	struct fg_compaction_file f[] = {
		F(100, 200), F(100, 200), /* the same span twice: the second is the leftover */
		F(150, 200),              /* shares an end */
		F(200, 300),              /* a neighbour, not inside */
		F(250, 350),              /* overlaps without nesting: kept (a clock set back) */
		F(260, 270),              /* inside the one before */
		F(400, 400),              /* empty */
		F(400, 500),
	};

	ASSERT_EQ(fg_compaction_leftovers(f, 8), 4);
	ASSERT_EQ(f[0].fate, FG_COMPACTION_KEEP);
	ASSERT_EQ(f[1].fate, FG_COMPACTION_LEFTOVER);
	ASSERT_EQ(f[2].fate, FG_COMPACTION_LEFTOVER);
	ASSERT_EQ(f[3].fate, FG_COMPACTION_KEEP);
	ASSERT_EQ(f[4].fate, FG_COMPACTION_KEEP);
	ASSERT_EQ(f[5].fate, FG_COMPACTION_LEFTOVER);
	ASSERT_EQ(f[6].fate, FG_COMPACTION_LEFTOVER);
	ASSERT_EQ(f[7].fate, FG_COMPACTION_KEEP);
	ASSERT_EQ(fg_compaction_leftovers(f, 0), 0);
}

TEST(files_that_ended_a_week_ago_expire)
{
	struct fg_compaction_file f[] = {
		F(T0, T0 + 10 * MIN),
		F(T0 + 10 * MIN, T0 + 20 * MIN),
	};
	struct fg_compaction_group g[1];
	struct fg_compaction_policy forever = defaults;

	ASSERT_EQ(plan(f, 2, T0 + 10 * MIN + 7 * DAY, &defaults, g), 0);
	ASSERT_EQ(f[0].fate, FG_COMPACTION_EXPIRED);
	ASSERT_EQ(f[1].fate, FG_COMPACTION_KEEP);
	ASSERT_EQ(plan(f, 2, T0 + 10 * MIN + 7 * DAY - 1, &defaults, g), 0);
	ASSERT_EQ(f[0].fate, FG_COMPACTION_KEEP);
	/* keep_ns 0: nothing expires (the byte budget still applies). */
	forever.keep_ns = 0;
	ASSERT_EQ(plan(f, 2, T0 + 1000 * DAY, &forever, g), 0);
	ASSERT_EQ(f[0].fate, FG_COMPACTION_KEEP);
	ASSERT_EQ(f[1].fate, FG_COMPACTION_KEEP);
}

TEST(early_clocks_empty_policies_and_unsorted_input)
{
	struct fg_compaction_file f[6];
	struct fg_compaction_file bad[] = { F(20, 30), F(10, 20) }, inverted[] = { F(30, 20) };
	struct fg_compaction_group g[3];
	struct fg_compaction_policy none = { 0 };

	/* A clock before the tiers' ages (no underflow): nothing is old. */
	minute(f, 0);
	ASSERT_EQ(plan(f, 6, 2 * MIN, &defaults, g), 0);
	ASSERT_EQ(plan(f, 6, UINT64_MAX, &none, g), 0);
	for (int i = 0; i < 6; i++)
		ASSERT_EQ(f[i].fate, FG_COMPACTION_KEEP);
	ASSERT_EQ(plan(f, 0, T0, &defaults, g), 0);

	bad[0].fate = FG_COMPACTION_MERGE;
	ASSERT_ERR(plan(bad, 2, T0, &defaults, g), -EINVAL);
	ASSERT_EQ(bad[0].fate, FG_COMPACTION_MERGE); /* untouched */
	ASSERT_ERR(plan(inverted, 1, T0, &defaults, g), -EINVAL);
}

TEST(policies_are_checked)
{
	struct fg_compaction_policy p = defaults;
	const char *why = NULL;

	ASSERT_OK(fg_compaction_policy_check(&p, &why));
	p.tiers[1].age_ns = HOUR;
	ASSERT_ERR(fg_compaction_policy_check(&p, &why), -EINVAL);
	ASSERT_STREQ(why, "the tiers' ages must increase");
	p = defaults;
	p.tiers[1].width_ns = MIN;
	ASSERT_ERR(fg_compaction_policy_check(&p, &why), -EINVAL);
	ASSERT_STREQ(why, "the tiers' file lengths must increase");
	p.tiers[1].width_ns = 90 * S;
	ASSERT_ERR(fg_compaction_policy_check(&p, &why), -EINVAL);
	ASSERT_STREQ(why, "each tier's file length must be a multiple of the one before");
	p = defaults;
	p.tiers[0].width_ns = 0;
	ASSERT_ERR(fg_compaction_policy_check(&p, &why), -EINVAL);
	ASSERT_STREQ(why, "a tier's file length is zero");
	p = defaults;
	p.keep_ns = DAY;
	ASSERT_ERR(fg_compaction_policy_check(&p, &why), -EINVAL);
	ASSERT_STREQ(why, "history must be kept longer than the last tier's age");
	p.keep_ns = 0;
	ASSERT_OK(fg_compaction_policy_check(&p, &why));
	p.n_tiers = FG_COMPACTION_MAX_TIERS + 1;
	ASSERT_ERR(fg_compaction_policy_check(&p, &why), -EINVAL);
	ASSERT_STREQ(why, "too many tiers");
	p.n_tiers = 0;
	p.keep_ns = 1;
	ASSERT_OK(fg_compaction_policy_check(&p, &why));
	/* A plan refuses a bad policy. */
	p = defaults;
	p.tiers[1].age_ns = 0;
	ASSERT_ERR(fg_compaction_plan(NULL, 0, T0, UINT64_MAX, &p, NULL), -EINVAL);
}

/* ---- a simulated daemon: slices written, plans carried out, over simulated days ---- */

struct sim_file {
	uint64_t start, end, weight; /* weight: the samples it holds */
};

static int cmp_sim(const void *a, const void *b)
{
	const struct sim_file *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->end > y->end) - (x->end < y->end);
}

/*
 * Carries out a plan as fgd-history does: merged files replace their
 * sources, leftovers and expired files go. Checks every group on the way.
 */
static size_t apply(struct sim_file *v, size_t n, uint64_t now,
		    const struct fg_compaction_policy *p, uint64_t *expired_weight)
{
	struct fg_compaction_file *f = calloc(n + 1, sizeof(*f));
	struct fg_compaction_group *g = calloc(n / 2 + 1, sizeof(*g));
	size_t out = 0;
	int ng;

	ASSERT_TRUE(f && g);
	for (size_t i = 0; i < n; i++)
		f[i] = (struct fg_compaction_file)F(v[i].start, v[i].end);
	ng = fg_compaction_plan(f, n, now, UINT64_MAX, p, g);
	ASSERT_TRUE(ng >= 0);
	for (int k = 0; k < ng; k++) {
		const struct fg_compaction_tier *t = &p->tiers[g[k].tier];
		uint64_t first = g[k].start - g[k].start % t->width_ns, weight = 0;
		uint32_t members = 0;

		/* Whole, old enough, and within one aligned period of its tier. */
		ASSERT_TRUE(first + t->width_ns <= now - t->age_ns);
		ASSERT_TRUE(g[k].end <= first + t->width_ns);
		for (size_t i = 0; i < n; i++) {
			if (f[i].fate != FG_COMPACTION_MERGE || f[i].group != (uint32_t)k)
				continue;
			ASSERT_TRUE(v[i].start >= g[k].start && v[i].end <= g[k].end);
			weight += v[i].weight;
			members++;
		}
		ASSERT_EQ(members, g[k].n_files);
		v[n + k] = (struct sim_file){ g[k].start, g[k].end, weight };
	}
	for (size_t i = 0; i < n; i++) {
		ASSERT_TRUE(f[i].fate != FG_COMPACTION_LEFTOVER); /* no crash here: none made */
		if (f[i].fate == FG_COMPACTION_EXPIRED)
			*expired_weight += v[i].weight;
		if (f[i].fate == FG_COMPACTION_KEEP)
			v[out++] = v[i];
	}
	for (int k = 0; k < ng; k++)
		v[out++] = v[n + k];
	qsort(v, out, sizeof(*v), cmp_sim);
	free(f);
	free(g);
	return out;
}

TEST(a_simulated_week_conserves_every_sample_and_ends_in_the_coarsest_files)
{
	/* Scaled down: 1 s slices; 2 s files after 20 s, 10 s files after 100 s, gone after 400 s. */
	const struct fg_compaction_policy p = {
		.tiers = { { 20 * S, 2 * S }, { 100 * S, 10 * S } },
		.n_tiers = 2,
		.keep_ns = 400 * S,
	};
	const size_t cap = 4096;
	struct sim_file *v = calloc(cap, sizeof(*v));
	uint64_t written = 0, expired = 0, t = T0 + 3 * S / 10, held;
	size_t n = 0;
	unsigned seed = 1;

	ASSERT_TRUE(v);
	/* 600 s of slices, with a restart now and then, then 600 s without fgd. */
	while (t < T0 + 1200 * S) {
		uint64_t next = (t / S + 1) * S, w;

		if (t < T0 + 600 * S) {
			seed = seed * 1103515245 + 12345;
			if ((seed >> 16) % 50 == 0) {
				/* stopped: the slice cut short, back 2.5 s later */
				v[n++] = (struct sim_file){ t, t + S / 4, 1 };
				written += 1;
				t = t + 2 * S + S / 2;
				continue;
			}
			w = 1 + (seed >> 16) % 19;
			v[n++] = (struct sim_file){ t, next, w };
			written += w;
			ASSERT_TRUE(n < cap / 2);
		}
		t = next;
		n = apply(v, n, t, &p, &expired);
		held = 0;
		for (size_t i = 0; i < n; i++) {
			held += v[i].weight;
			if (i)
				ASSERT_TRUE(v[i].start >= v[i - 1].end); /* never overlapping */
		}
		ASSERT_U64_EQ(held + expired, written);
		if (t != T0 + 750 * S)
			continue;
		/* Kept files are younger than 400 s; those older than 110 s are one per 10 s. */
		for (size_t i = 0; i < n; i++) {
			ASSERT_TRUE(v[i].end > t - 400 * S);
			if (i && v[i].end <= t - 110 * S)
				ASSERT_TRUE(v[i].start / (10 * S) != v[i - 1].start / (10 * S));
		}
		ASSERT_TRUE(n > 10);
	}
	/* A week later (scaled), all of it has expired, none lost on the way. */
	ASSERT_EQ(n, 0);
	ASSERT_U64_EQ(expired, written);
	free(v);
}
