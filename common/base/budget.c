/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "base/budget.h"
#include "base/macro.h"
#include "proto/status-types.h"

/*
 * What each part may hold, as a fraction of the total. Ceilings, not
 * reservations: they add up to more than the total (see budget.h). Why
 * these:
 *   - window: a third, the always-on aggregates' own ceiling (MemoryMax=
 *     alone was that before this budget; at the default 96M a 10 s slice
 *     of the 15 min window may hold 350 KiB);
 *   - recordings: half: a whole-machine recording at 999 Hz of a busy
 *     machine holds a few tens of MiB of stacks and locations;
 *   - results: a third: a root snapshot of a full window as an HTML page
 *     lays out about three times its profile;
 *   - waiting rooms, process table, JIT maps: an eighth each: tens of
 *     thousands of processes, or a few hundred samples with their stacks;
 *   - rings: the whole total, which they never ask for: they are charged
 *     as they are made, so that what they take is counted against the
 *     total and the other parts make room;
 *   - DWARF and symbol tables: half each, CFI a quarter: no single binary
 *     (a crafted one, or a browser's debug file) may push every other out;
 *   - kept names: an eighth (what was 32 MiB at most).
 */
/* Status's parts by name are by_part[] by enum: the same parts, in the same order. */
_Static_assert(FG_STATUS_MEMORY_PARTS == _FG_BUDGET_PART_MAX, "a part missing from status");
_Static_assert(sizeof(struct fg_status_memory_parts) ==
		       sizeof(struct fg_status_memory_part[FG_STATUS_MEMORY_PARTS]),
	       "status's parts are not an array");
#define PART_AT(member, p)                                                 \
	_Static_assert(offsetof(struct fg_status_memory_parts, member) ==  \
			       (p) * sizeof(struct fg_status_memory_part), \
		       #member " out of place")
PART_AT(window, FG_BUDGET_WINDOW);
PART_AT(recordings, FG_BUDGET_RECORDINGS);
PART_AT(waiting, FG_BUDGET_WAITING);
PART_AT(results, FG_BUDGET_RESULTS);
PART_AT(processes, FG_BUDGET_PROCESSES);
PART_AT(jit, FG_BUDGET_JIT);
PART_AT(rings, FG_BUDGET_RINGS);
PART_AT(dwarf, FG_BUDGET_DWARF);
PART_AT(cfi, FG_BUDGET_CFI);
PART_AT(symbols, FG_BUDGET_SYMBOLS);
PART_AT(names, FG_BUDGET_NAMES);
#undef PART_AT

static const struct {
	const char *name;
	uint8_t num, den;
} parts[_FG_BUDGET_PART_MAX] = {
	[FG_BUDGET_WINDOW] = { "window", 1, 3 },
	[FG_BUDGET_RECORDINGS] = { "recordings", 1, 2 },
	[FG_BUDGET_WAITING] = { "waiting", 1, 8 },
	[FG_BUDGET_RESULTS] = { "results", 1, 3 },
	[FG_BUDGET_PROCESSES] = { "processes", 1, 8 },
	[FG_BUDGET_JIT] = { "jit", 1, 8 },
	[FG_BUDGET_RINGS] = { "rings", 1, 1 },
	[FG_BUDGET_DWARF] = { "dwarf", 1, 2 },
	[FG_BUDGET_CFI] = { "cfi", 1, 4 },
	[FG_BUDGET_SYMBOLS] = { "symbols", 1, 2 },
	[FG_BUDGET_NAMES] = { "names", 1, 8 },
};

/* What the caches keep whatever data parts want: an eighth of the total. */
#define CACHE_FLOOR_DEN 8
/* Relieving aims this far below the total: a sixteenth of it. */
#define SLACK_DEN 16

/* Passes of eviction: entries unused for this long first. */
static const uint64_t idle_passes_ns[] = { 60000ULL * 1000000ULL, FG_BUDGET_MIN_IDLE_NS };
/* After a relief that could not get within the total, the next waits this long. */
#define RETRY_NS (1000ULL * 1000000ULL)

struct evictor {
	fg_budget_evict_fn fn;
	void *ctx;
};

struct fg_budget {
	uint64_t total, base, rss;
	/* now_ns of the last relief that could not get within the total; 0: none */
	uint64_t failed_at;
	uint64_t charged; /* every part's bytes */
	uint64_t caches;  /* the cache parts' bytes */
	struct evictor evictors[_FG_BUDGET_PART_MAX];
	struct fg_status_memory stats;
};

int fg_budget__new(uint64_t total, struct fg_budget **ret)
{
	struct fg_budget *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	b->total = total;
	*ret = b;
	return 0;
}

struct fg_budget *fg_budget__free(struct fg_budget *b)
{
	free(b);
	return NULL;
}

void fg_budget__set_total(struct fg_budget *b, uint64_t total)
{
	if (b)
		b->total = total;
}

void fg_budget__set_base(struct fg_budget *b, uint64_t bytes)
{
	if (b)
		b->base = bytes;
}

void fg_budget__set_rss(struct fg_budget *b, uint64_t bytes, uint64_t peak)
{
	if (!b)
		return;
	b->rss = bytes;
	b->stats.rss_peak = MAX(b->stats.rss_peak, MAX(peak, bytes));
}

const char *fg_budget_part_name(enum fg_budget_part p)
{
	return p < _FG_BUDGET_PART_MAX ? parts[p].name : "?";
}

void fg_budget__charge(struct fg_budget *b, enum fg_budget_part p, uint64_t bytes)
{
	struct fg_status_memory_part *ps;

	if (!b || bytes == 0)
		return;
	ps = &b->stats.by_part[p];
	ps->bytes += bytes;
	ps->peak = MAX(ps->peak, ps->bytes);
	b->charged += bytes;
	b->stats.charged_peak = MAX(b->stats.charged_peak, b->charged);
	if (fg_budget_part_is_cache(p))
		b->caches += bytes;
}

void fg_budget__release(struct fg_budget *b, enum fg_budget_part p, uint64_t bytes)
{
	struct fg_status_memory_part *ps;

	if (!b)
		return;
	ps = &b->stats.by_part[p];
	bytes = MIN(bytes, ps->bytes);
	ps->bytes -= bytes;
	b->charged -= bytes;
	if (fg_budget_part_is_cache(p))
		b->caches -= bytes;
}

void fg_budget__account(struct fg_budget *b, enum fg_budget_part p, uint64_t *held, uint64_t bytes)
{
	if (bytes > *held)
		fg_budget__charge(b, p, bytes - *held);
	else
		fg_budget__release(b, p, *held - bytes);
	*held = bytes;
}

uint64_t fg_budget__share(const struct fg_budget *b, enum fg_budget_part p)
{
	if (!b)
		return UINT64_MAX;
	return b->total / parts[p].den * parts[p].num;
}

uint64_t fg_budget__room(const struct fg_budget *b, enum fg_budget_part p)
{
	uint64_t share, held, floor, giveable, used, left;

	if (!b)
		return UINT64_MAX;
	share = fg_budget__share(b, p);
	held = b->stats.by_part[p].bytes;
	used = b->base + b->charged;
	/*
	 * A cache may push out any cache, its own part's older entries too: the
	 * most one entry may take is its share, of what the data parts leave.
	 */
	if (fg_budget_part_is_cache(p)) {
		used -= b->caches;
		return MIN(share, b->total > used ? b->total - used : 0);
	}
	if (held >= share)
		return 0;
	/* Data may push the caches down to their floor. */
	floor = b->total / CACHE_FLOOR_DEN;
	giveable = b->caches > floor ? b->caches - floor : 0;
	left = b->total + giveable > used ? b->total + giveable - used : 0;
	return MIN(share - held, left);
}

void fg_budget__refused(struct fg_budget *b, enum fg_budget_part p)
{
	if (b)
		b->stats.by_part[p].refused++;
}

void fg_budget__set_evictor(struct fg_budget *b, enum fg_budget_part p, fg_budget_evict_fn fn,
			    void *ctx)
{
	if (b && fg_budget_part_is_cache(p))
		b->evictors[p] = (struct evictor){ fn, ctx };
}

/* What cache part p holds above its share; 0 when within it. */
static uint64_t part_excess(const struct fg_budget *b, enum fg_budget_part p)
{
	uint64_t share = fg_budget__share(b, p), held = b->stats.by_part[p].bytes;

	return held > share ? held - (share - share / SLACK_DEN) : 0;
}

bool fg_budget__over(const struct fg_budget *b)
{
	if (!b)
		return false;
	for (enum fg_budget_part p = FG_BUDGET_FIRST_CACHE; p < _FG_BUDGET_PART_MAX; p++)
		if (b->stats.by_part[p].bytes > fg_budget__share(b, p))
			return true;
	return b->base + b->charged > b->total;
}

/* Bytes above the level relieving aims for; 0 once there. */
static uint64_t excess(const struct fg_budget *b)
{
	uint64_t target = b->total - b->total / SLACK_DEN, used = b->base + b->charged;

	return used > target ? used - target : 0;
}

/* Asks p's evictor for what is left to free, counting what it gave. */
static void evict(struct fg_budget *b, enum fg_budget_part p, uint64_t now_ns, uint64_t idle_ns)
{
	struct evictor *e = &b->evictors[p];
	struct fg_status_memory_part *ps = &b->stats.by_part[p];
	uint64_t want = MAX(excess(b), part_excess(b, p)), before = ps->bytes, n;

	if (!e->fn || want == 0 || ps->bytes == 0)
		return;
	n = e->fn(e->ctx, want, now_ns, idle_ns);
	ps->evicted += n;
	ps->evicted_bytes += before > ps->bytes ? before - ps->bytes : 0;
}

uint64_t fg_budget__relieve(struct fg_budget *b, uint64_t now_ns)
{
	uint64_t before;

	if (!fg_budget__over(b))
		return 0;
	/*
	 * What is left is in use: trying again at every turn of the loop would
	 * only rescan the caches. Once a second, entries may have gone cold.
	 */
	if (b->failed_at && now_ns - b->failed_at < RETRY_NS)
		return 0;
	before = b->charged;
	b->stats.relieved++;
	for (size_t i = 0; i < ELEMENTSOF(idle_passes_ns); i++)
		for (enum fg_budget_part p = FG_BUDGET_DWARF; p <= FG_BUDGET_SYMBOLS; p++)
			evict(b, p, now_ns, idle_passes_ns[i]);
	/* Last, the kept names: all of them, which the loader will find again as they are asked. */
	evict(b, FG_BUDGET_NAMES, now_ns, FG_BUDGET_MIN_IDLE_NS);
	b->failed_at = 0;
	if (fg_budget__over(b)) {
		b->stats.unrelieved++;
		b->failed_at = now_ns ? now_ns : 1;
	}
	return before > b->charged ? before - b->charged : 0;
}

void fg_budget__stats(const struct fg_budget *b, struct fg_status_memory *ret)
{
	*ret = b->stats;
	ret->budget = b->total;
	ret->base = b->base;
	ret->charged = b->charged;
	ret->rss = b->rss;
	ret->pressure = fg_budget__over(b);
	for (enum fg_budget_part p = 0; p < _FG_BUDGET_PART_MAX; p++)
		ret->by_part[p].share = fg_budget__share(b, p);
}
