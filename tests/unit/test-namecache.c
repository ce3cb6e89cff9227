/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <string.h>

#include "base/budget.h"
#include "base/macro.h"
#include "proto/status-types.h"
#include "symbols/fgd-namecache.h"
#include "test.h"

#define SEC (1000ULL * 1000000ULL)

/* An answer of n frames, named "NAME.0" (outermost) to "NAME.n-1". */
static void answer(struct fg_sym_frames *f, const char *name, size_t n)
{
	*f = (struct fg_sym_frames){ .n = n, .result = FG_SYM_NAMED, .inlined = n - 1 };
	for (size_t i = 0; i < n; i++) {
		char *out = f->buf + f->used;

		f->used += (size_t)snprintf(out, sizeof(f->buf) - f->used, "%s.%zu", name, i) + 1;
		f->names[i] = out;
	}
}

static uint64_t names_charged(struct fg_budget *b)
{
	struct fg_status_memory st;

	fg_budget__stats(b, &st);
	return st.by_part[FG_BUDGET_NAMES].bytes;
}

TEST(an_answer_is_kept_under_its_key)
{
	struct fg_name_key k = { .dso_serial = 1, .offset = 0x1234, .flags = 1 };
	struct fg_name_key other = { .dso_serial = 1,
				     .offset = 0x1234,
				     .flags = 1 | FG_NAME_BY_SYMBOL };
	struct fg_status_symbols st = {};
	struct fg_sym_frames f, got;
	struct fg_name_cache *c;
	struct fg_name_entry *e;

	ASSERT_OK(fg_name_cache__new(&c));
	ASSERT_TRUE(!fg_name_cache__find(c, &k));
	e = fg_name_cache__add(c, &k);
	ASSERT_TRUE(e);
	ASSERT_EQ(e->n, 0);
	ASSERT_TRUE(!e->pending);
	answer(&f, "inlined", 3);
	ASSERT_TRUE(fg_name_cache__fill(c, e, &f));
	e = fg_name_cache__find(c, &k);
	ASSERT_TRUE(e);
	ASSERT_EQ(e->n, 3);
	fg_name_cache__frames(c, e, &got);
	ASSERT_EQ(got.n, 3);
	ASSERT_EQ(got.inlined, 2);
	ASSERT_EQ(got.result, FG_SYM_NAMED);
	ASSERT_STREQ(got.names[0], "inlined.0");
	ASSERT_STREQ(got.names[2], "inlined.2");
	/* Kept by symbol is another answer than kept by offset. */
	ASSERT_TRUE(!fg_name_cache__find(c, &other));
	fg_name_cache__stats(c, &st);
	ASSERT_EQ(st.resolved, 1);
	ASSERT_TRUE(st.resolved_bytes > 0);
	ASSERT_EQ(st.resolved_resets, 0);
	fg_name_cache__free(c);
}

TEST(the_table_starts_again_past_the_budgets_share)
{
	struct fg_name_key first = { .dso_serial = 7, .offset = 0 };
	struct fg_status_symbols st = {};
	struct fg_name_cache *c;
	struct fg_budget *b;
	struct fg_sym_frames f;
	uint64_t i;

	/* The names' share: an eighth, 128 KiB. */
	ASSERT_OK(fg_budget__new(1ULL << 20, &b));
	ASSERT_OK(fg_name_cache__new(&c));
	fg_name_cache__set_budget(c, b);
	for (i = 0;; i++) {
		struct fg_name_key k = { .dso_serial = 7, .offset = i };
		struct fg_name_entry *e = fg_name_cache__add(c, &k);
		char name[64];

		ASSERT_TRUE(e);
		snprintf(name, sizeof(name), "function_number_%" PRIu64, i);
		answer(&f, name, 4);
		ASSERT_TRUE(fg_name_cache__fill(c, e, &f));
		fg_name_cache__stats(c, &st);
		/* Charged as it grows. */
		ASSERT_U64_EQ(names_charged(b), st.resolved_bytes);
		if (st.resolved_resets > 0)
			break;
		ASSERT_TRUE(i < 100000);
	}
	ASSERT_EQ(st.resolved_resets, 1);
	ASSERT_EQ(st.resolved, 1);
	ASSERT_TRUE(!fg_name_cache__find(c, &first));
	ASSERT_TRUE(fg_name_cache__find(c, &(struct fg_name_key){ .dso_serial = 7, .offset = i }));
	/* Freed, the names give their bytes back. */
	fg_name_cache__free(c);
	ASSERT_U64_EQ(names_charged(b), 0);
	fg_budget__free(b);
}

TEST(pressure_starts_the_names_again)
{
	struct fg_name_key k = { .dso_serial = 3, .offset = 0x40 };
	struct fg_status_symbols st = {};
	struct fg_name_cache *c;
	struct fg_budget *b;
	struct fg_sym_frames f;

	ASSERT_OK(fg_budget__new(64ULL << 20, &b));
	ASSERT_OK(fg_name_cache__new(&c));
	fg_name_cache__set_budget(c, b);
	answer(&f, "f", 1);
	ASSERT_TRUE(fg_name_cache__fill(c, fg_name_cache__add(c, &k), &f));
	ASSERT_TRUE(names_charged(b) > 0);
	/* Everything else takes the whole budget: the names go, being older than the least idle. */
	fg_budget__set_base(b, 64ULL << 20);
	fg_budget__relieve(b, 1000 * SEC);
	fg_name_cache__stats(c, &st);
	ASSERT_EQ(st.resolved, 0);
	ASSERT_EQ(st.resolved_resets, 1);
	ASSERT_U64_EQ(names_charged(b), st.resolved_bytes);
	ASSERT_TRUE(!fg_name_cache__find(c, &k));
	/* Left without a budget, the names give their charge back to the old one. */
	ASSERT_TRUE(fg_name_cache__fill(c, fg_name_cache__add(c, &k), &f));
	fg_name_cache__set_budget(c, NULL);
	ASSERT_U64_EQ(names_charged(b), 0);
	fg_name_cache__free(c);
	fg_budget__free(b);
}
