/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "storage/spans.h"
#include "test.h"

TEST(spans_that_overlap_or_abut_are_one)
{
	struct fg_span v[] = {
		{ 30, 40 }, { 0, 10 }, { 10, 20 }, { 35, 50 }, { 60, 60 }, { 5, 8 }
	};
	size_t n = fg_spans_unite(v, 6);

	ASSERT_EQ(n, 2);
	ASSERT_EQ(v[0].start, 0);
	ASSERT_EQ(v[0].end, 20);
	ASSERT_EQ(v[1].start, 30);
	ASSERT_EQ(v[1].end, 50);
	ASSERT_EQ(fg_spans_unite(v, 0), 0);
}

TEST(gaps_are_what_the_spans_leave_of_the_period)
{
	struct fg_span v[] = { { 1000, 2000 }, { 2500, 2600 }, { 5000, 9000 } }, g[4];
	int64_t total;

	/* Before the first, between them, and after the last; the 500 ms one is too short. */
	ASSERT_EQ(fg_spans_gaps(v, 3, 0, 10000, 1000, g, 4, &total), 3);
	ASSERT_EQ(g[0].start, 0);
	ASSERT_EQ(g[0].end, 1000);
	ASSERT_EQ(g[1].start, 2600);
	ASSERT_EQ(g[1].end, 5000);
	ASSERT_EQ(g[2].start, 9000);
	ASSERT_EQ(g[2].end, 10000);
	ASSERT_EQ(total, 1000 + 2400 + 1000);
	/* Every ms counts with no minimum; cut to the period; fewer listed than found. */
	ASSERT_EQ(fg_spans_gaps(v, 3, 1500, 5500, 0, g, 1, &total), 2);
	ASSERT_EQ(g[0].start, 2000);
	ASSERT_EQ(g[0].end, 2500);
	ASSERT_EQ(total, 500 + 2400);
	/* A period the spans cover has none; no spans leave it whole. */
	ASSERT_EQ(fg_spans_gaps(v, 3, 5500, 8000, 0, NULL, 0, &total), 0);
	ASSERT_EQ(total, 0);
	ASSERT_EQ(fg_spans_gaps(v, 0, 10, 20, 0, g, 4, &total), 1);
	ASSERT_EQ(g[0].start, 10);
	ASSERT_EQ(g[0].end, 20);
}
