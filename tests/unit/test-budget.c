/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>

#include "base/budget.h"
#include "base/macro.h"
#include "proto/status-types.h"
#include "test.h"

#define MIB (1ULL << 20)
#define SEC (1000ULL * 1000000ULL)

/*
 * A cache of entries for the evictors: each has a part, a size and the
 * time of its last use. Evictions are logged in order, so tests can check
 * who went first.
 */
struct entry {
	enum fg_budget_part part;
	uint64_t bytes, used;
	bool gone;
};

struct cache {
	struct fg_budget *b;
	struct entry e[32];
	size_t n;
	size_t log[32]; /* indexes of evicted entries, in order */
	size_t n_log;
};

static size_t add(struct cache *c, enum fg_budget_part p, uint64_t bytes, uint64_t used)
{
	c->e[c->n] = (struct entry){ p, bytes, used, false };
	fg_budget__charge(c->b, p, bytes);
	return c->n++;
}

/* Least recently used first, among those unused for idle_ns, until want is freed. */
static uint64_t evict_part(struct cache *c, enum fg_budget_part p, uint64_t want, uint64_t now,
			   uint64_t idle)
{
	uint64_t freed = 0, n = 0;

	while (freed < want) {
		struct entry *lru = NULL;

		for (size_t i = 0; i < c->n; i++)
			if (c->e[i].part == p && !c->e[i].gone && c->e[i].used + idle <= now &&
			    (!lru || c->e[i].used < lru->used))
				lru = &c->e[i];
		if (!lru)
			break;
		lru->gone = true;
		fg_budget__release(c->b, p, lru->bytes);
		freed += lru->bytes;
		c->log[c->n_log++] = (size_t)(lru - c->e);
		n++;
	}
	return n;
}

static struct cache *the_cache;

#define EVICTOR(part, fn)                                                         \
	static uint64_t fn(void *ctx, uint64_t want, uint64_t now, uint64_t idle) \
	{                                                                         \
		return evict_part(ctx, part, want, now, idle);                    \
	}
EVICTOR(FG_BUDGET_DWARF, evict_dwarf)
EVICTOR(FG_BUDGET_CFI, evict_cfi)
EVICTOR(FG_BUDGET_SYMBOLS, evict_symbols)

/* The kept names go all at once, whatever their age. */
static uint64_t evict_names(void *ctx, uint64_t want, uint64_t now, uint64_t idle)
{
	return evict_part(ctx, FG_BUDGET_NAMES, UINT64_MAX, now, 0);
}

static void setup(struct cache *c, uint64_t total)
{
	memset(c, 0, sizeof(*c));
	ASSERT_OK(fg_budget__new(total, &c->b));
	fg_budget__set_evictor(c->b, FG_BUDGET_DWARF, evict_dwarf, c);
	fg_budget__set_evictor(c->b, FG_BUDGET_CFI, evict_cfi, c);
	fg_budget__set_evictor(c->b, FG_BUDGET_SYMBOLS, evict_symbols, c);
	fg_budget__set_evictor(c->b, FG_BUDGET_NAMES, evict_names, c);
	the_cache = c;
}

TEST(charges_releases_and_peaks)
{
	struct fg_budget *b;
	struct fg_status_memory st;
	uint64_t held = 0;

	ASSERT_OK(fg_budget__new(96 * MIB, &b));
	fg_budget__charge(b, FG_BUDGET_WINDOW, 3 * MIB);
	fg_budget__charge(b, FG_BUDGET_DWARF, 5 * MIB);
	fg_budget__release(b, FG_BUDGET_WINDOW, 1 * MIB);
	/* A holder that knows its size: the difference is charged, then released. */
	fg_budget__account(b, FG_BUDGET_RECORDINGS, &held, 10 * MIB);
	ASSERT_U64_EQ(held, 10 * MIB);
	fg_budget__account(b, FG_BUDGET_RECORDINGS, &held, 4 * MIB);
	fg_budget__stats(b, &st);
	ASSERT_U64_EQ(st.budget, 96 * MIB);
	ASSERT_U64_EQ(st.by_part[FG_BUDGET_WINDOW].bytes, 2 * MIB);
	ASSERT_U64_EQ(st.by_part[FG_BUDGET_WINDOW].peak, 3 * MIB);
	ASSERT_U64_EQ(st.by_part[FG_BUDGET_RECORDINGS].bytes, 4 * MIB);
	ASSERT_U64_EQ(st.by_part[FG_BUDGET_RECORDINGS].peak, 10 * MIB);
	ASSERT_U64_EQ(st.charged, 11 * MIB);
	ASSERT_U64_EQ(st.charged_peak, 17 * MIB);
	/* Releasing more than held is clamped: the part never goes below zero. */
	fg_budget__release(b, FG_BUDGET_WINDOW, 100 * MIB);
	fg_budget__stats(b, &st);
	ASSERT_U64_EQ(st.by_part[FG_BUDGET_WINDOW].bytes, 0);
	ASSERT_U64_EQ(st.charged, 9 * MIB);
	/* The shares, as documented: a third for the window, half for DWARF, an eighth for JIT. */
	ASSERT_U64_EQ(st.by_part[FG_BUDGET_WINDOW].share, 32 * MIB);
	ASSERT_U64_EQ(st.by_part[FG_BUDGET_DWARF].share, 48 * MIB);
	ASSERT_U64_EQ(st.by_part[FG_BUDGET_JIT].share, 12 * MIB);
	ASSERT_STREQ(fg_budget_part_name(FG_BUDGET_NAMES), "names");
	fg_budget__free(b);
}

TEST(no_budget_means_no_limit)
{
	uint64_t held = 0;

	fg_budget__charge(NULL, FG_BUDGET_DWARF, MIB);
	fg_budget__release(NULL, FG_BUDGET_DWARF, MIB);
	fg_budget__account(NULL, FG_BUDGET_WINDOW, &held, 7);
	ASSERT_U64_EQ(held, 7);
	ASSERT_U64_EQ(fg_budget__room(NULL, FG_BUDGET_RESULTS), UINT64_MAX);
	ASSERT_TRUE(fg_budget__fits(NULL, FG_BUDGET_RESULTS, UINT64_MAX));
	ASSERT_TRUE(!fg_budget__over(NULL));
	ASSERT_U64_EQ(fg_budget__relieve(NULL, 0), 0);
}

TEST(room_of_data_and_caches)
{
	struct fg_budget *b;

	ASSERT_OK(fg_budget__new(80 * MIB, &b));
	fg_budget__set_base(b, 8 * MIB);
	/* The share bounds a part alone: the window may take 80/3 MiB. */
	ASSERT_U64_EQ(fg_budget__room(b, FG_BUDGET_WINDOW), 80 * MIB / 3);
	fg_budget__charge(b, FG_BUDGET_WINDOW, 20 * MIB);
	ASSERT_U64_EQ(fg_budget__room(b, FG_BUDGET_WINDOW), 80 * MIB / 3 - 20 * MIB);
	/* Then the total: 8 base + 20 window + 40 recordings leaves 12. */
	fg_budget__charge(b, FG_BUDGET_RECORDINGS, 40 * MIB);
	ASSERT_U64_EQ(fg_budget__room(b, FG_BUDGET_RESULTS), 12 * MIB);
	ASSERT_TRUE(fg_budget__fits(b, FG_BUDGET_RESULTS, 12 * MIB));
	ASSERT_TRUE(!fg_budget__fits(b, FG_BUDGET_RESULTS, 12 * MIB + 1));
	/*
	 * Caches hold 20: a data part may push them down to their floor (an
	 * eighth, 10), so it has 10 more than the 0 left over the total; a
	 * cache may push every cache out.
	 */
	fg_budget__charge(b, FG_BUDGET_SYMBOLS, 20 * MIB);
	ASSERT_TRUE(fg_budget__over(b));
	ASSERT_U64_EQ(fg_budget__room(b, FG_BUDGET_RESULTS), 2 * MIB);
	ASSERT_U64_EQ(fg_budget__room(b, FG_BUDGET_DWARF), 12 * MIB);
	/* A part at its share has no room, whatever the total. */
	ASSERT_U64_EQ(fg_budget__room(b, FG_BUDGET_RECORDINGS), 0);
	fg_budget__refused(b, FG_BUDGET_RECORDINGS);
	{
		struct fg_status_memory st;

		fg_budget__stats(b, &st);
		ASSERT_EQ(st.by_part[FG_BUDGET_RECORDINGS].refused, 1);
		ASSERT_EQ(st.by_part[FG_BUDGET_RESULTS].refused, 0);
	}
	/* A smaller total applies at once. */
	fg_budget__set_total(b, 40 * MIB);
	ASSERT_U64_EQ(fg_budget__room(b, FG_BUDGET_WINDOW), 0);
	fg_budget__free(b);
}

TEST(nothing_evicted_within_the_budget)
{
	struct cache c;

	setup(&c, 64 * MIB);
	add(&c, FG_BUDGET_DWARF, 10 * MIB, 0);
	add(&c, FG_BUDGET_SYMBOLS, 10 * MIB, 0);
	ASSERT_TRUE(!fg_budget__over(c.b));
	ASSERT_U64_EQ(fg_budget__relieve(c.b, 3600 * SEC), 0);
	ASSERT_EQ(c.n_log, 0);
	fg_budget__free(c.b);
}

TEST(eviction_order_cold_first_dwarf_cfi_symbols_then_names)
{
	struct fg_status_memory st;
	struct cache c;
	uint64_t now = 1000 * SEC;
	size_t sym_cold, dwarf_warm, cfi_cold, dwarf_cold, names, dwarf_hot, sym_warm;

	setup(&c, 64 * MIB);
	/* Cold: unused for over a minute. Warm: 30 s. Hot: now. */
	sym_cold = add(&c, FG_BUDGET_SYMBOLS, 8 * MIB, now - 120 * SEC);
	dwarf_warm = add(&c, FG_BUDGET_DWARF, 8 * MIB, now - 30 * SEC);
	cfi_cold = add(&c, FG_BUDGET_CFI, 8 * MIB, now - 90 * SEC);
	dwarf_cold = add(&c, FG_BUDGET_DWARF, 8 * MIB, now - 100 * SEC);
	names = add(&c, FG_BUDGET_NAMES, 8 * MIB, now - 500 * SEC);
	dwarf_hot = add(&c, FG_BUDGET_DWARF, 8 * MIB, now);
	sym_warm = add(&c, FG_BUDGET_SYMBOLS, 8 * MIB, now - 20 * SEC);
	/* 56 MiB of caches and 16 of data: 8 over, and relieving aims 4 below the total. */
	fg_budget__charge(c.b, FG_BUDGET_RECORDINGS, 16 * MIB);
	ASSERT_TRUE(fg_budget__over(c.b));
	ASSERT_U64_EQ(fg_budget__relieve(c.b, now), 16 * MIB);
	ASSERT_TRUE(!fg_budget__over(c.b));
	/* The cold ones first, DWARF before CFI before symbols: then enough was free. */
	ASSERT_EQ(c.n_log, 2);
	ASSERT_EQ(c.log[0], dwarf_cold);
	ASSERT_EQ(c.log[1], cfi_cold);

	/*
	 * 28 over the aim: the cold symbols, then the warm ones of the 10 s
	 * pass, DWARF first; that is 24, so the kept names go too, last.
	 */
	fg_budget__charge(c.b, FG_BUDGET_RECORDINGS, 32 * MIB);
	ASSERT_U64_EQ(fg_budget__relieve(c.b, now), 32 * MIB);
	ASSERT_EQ(c.n_log, 6);
	ASSERT_EQ(c.log[2], sym_cold);
	ASSERT_EQ(c.log[3], dwarf_warm);
	ASSERT_EQ(c.log[4], sym_warm);
	ASSERT_EQ(c.log[5], names);
	ASSERT_TRUE(!c.e[dwarf_hot].gone);

	/* Only what was used within the last 10 s is left: it stays, and the excess is counted. */
	fg_budget__charge(c.b, FG_BUDGET_WINDOW, 9 * MIB);
	ASSERT_TRUE(fg_budget__over(c.b));
	ASSERT_U64_EQ(fg_budget__relieve(c.b, now), 0);
	ASSERT_TRUE(!c.e[dwarf_hot].gone);
	ASSERT_TRUE(fg_budget__over(c.b));
	fg_budget__stats(c.b, &st);
	ASSERT_EQ(st.relieved, 3);
	ASSERT_EQ(st.unrelieved, 1);
	ASSERT_EQ(st.by_part[FG_BUDGET_DWARF].evicted, 2);
	ASSERT_U64_EQ(st.by_part[FG_BUDGET_DWARF].evicted_bytes, 16 * MIB);
	ASSERT_EQ(st.by_part[FG_BUDGET_CFI].evicted, 1);
	ASSERT_EQ(st.by_part[FG_BUDGET_SYMBOLS].evicted, 2);
	ASSERT_EQ(st.by_part[FG_BUDGET_NAMES].evicted, 1);
	ASSERT_U64_EQ(st.by_part[FG_BUDGET_DWARF].bytes, 8 * MIB);
	/* Tried again at once: not before a second has passed, nothing is looked at. */
	ASSERT_U64_EQ(fg_budget__relieve(c.b, now + SEC / 2), 0);
	fg_budget__stats(c.b, &st);
	ASSERT_EQ(st.relieved, 3);
	/* 10 s later the hot entry is old enough to go. */
	ASSERT_U64_EQ(fg_budget__relieve(c.b, now + 11 * SEC), 8 * MIB);
	ASSERT_TRUE(c.e[dwarf_hot].gone);
	fg_budget__free(c.b);
}

TEST(base_counts_against_the_total)
{
	struct cache c;

	setup(&c, 64 * MIB);
	add(&c, FG_BUDGET_DWARF, 20 * MIB, 0);
	ASSERT_TRUE(!fg_budget__over(c.b));
	fg_budget__set_base(c.b, 48 * MIB);
	ASSERT_TRUE(fg_budget__over(c.b));
	ASSERT_U64_EQ(fg_budget__relieve(c.b, 3600 * SEC), 20 * MIB);
	fg_budget__set_rss(c.b, 70 * MIB, 70 * MIB);
	/* The kernel's peak: a burst between two looks (98) is in it. */
	fg_budget__set_rss(c.b, 60 * MIB, 98 * MIB);
	{
		struct fg_status_memory st;

		fg_budget__stats(c.b, &st);
		ASSERT_U64_EQ(st.base, 48 * MIB);
		ASSERT_U64_EQ(st.rss, 60 * MIB);
		ASSERT_U64_EQ(st.rss_peak, 98 * MIB);
	}
	fg_budget__free(c.b);
}

/* Rings are charged as they are made, without asking, and the caches make room for them. */
TEST(rings_are_charged_whole_and_the_caches_give_way)
{
	struct cache c;
	uint64_t held = 0;
	struct fg_status_memory st;

	setup(&c, 64 * MIB);
	add(&c, FG_BUDGET_DWARF, 30 * MIB, 0);
	ASSERT_TRUE(!fg_budget__over(c.b));
	/* An off-CPU recording's ring in DWARF mode (16 MiB, mapped twice), and the others'. */
	fg_budget__account(c.b, FG_BUDGET_RINGS, &held, 40 * MIB);
	ASSERT_TRUE(fg_budget__over(c.b));
	ASSERT_U64_EQ(fg_budget__relieve(c.b, 3600 * SEC), 30 * MIB);
	ASSERT_TRUE(!fg_budget__over(c.b));
	fg_budget__stats(c.b, &st);
	ASSERT_U64_EQ(st.by_part[FG_BUDGET_RINGS].bytes, 40 * MIB);
	ASSERT_STREQ(fg_budget_part_name(FG_BUDGET_RINGS), "rings");
	/* Data parts count them as taken. */
	ASSERT_TRUE(fg_budget__room(c.b, FG_BUDGET_WINDOW) <= 24 * MIB);
	fg_budget__account(c.b, FG_BUDGET_RINGS, &held, 0);
	fg_budget__stats(c.b, &st);
	ASSERT_U64_EQ(st.by_part[FG_BUDGET_RINGS].bytes, 0);
	fg_budget__free(c.b);
}

TEST(a_cache_over_its_share_gives_back_its_oldest)
{
	struct cache c;
	size_t a, b2, hot;

	setup(&c, 64 * MIB);
	/* CFI may hold a quarter: 16 MiB. Within the total, but over the share. */
	a = add(&c, FG_BUDGET_CFI, 6 * MIB, 100 * SEC);
	b2 = add(&c, FG_BUDGET_CFI, 6 * MIB, 200 * SEC);
	hot = add(&c, FG_BUDGET_CFI, 6 * MIB, 1000 * SEC);
	add(&c, FG_BUDGET_SYMBOLS, 6 * MIB, 10 * SEC);
	/* The most one new entry may take: its share, whatever the part holds now. */
	ASSERT_U64_EQ(fg_budget__room(c.b, FG_BUDGET_CFI), 16 * MIB);
	ASSERT_TRUE(fg_budget__over(c.b));
	ASSERT_U64_EQ(fg_budget__relieve(c.b, 1000 * SEC), 6 * MIB);
	ASSERT_EQ(c.n_log, 1);
	ASSERT_EQ(c.log[0], a);
	ASSERT_TRUE(!c.e[b2].gone && !c.e[hot].gone);
	/* The other caches were within theirs and the total: untouched. */
	ASSERT_TRUE(!fg_budget__over(c.b));
	fg_budget__free(c.b);
}
