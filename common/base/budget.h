/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One memory budget for the whole daemon (MemoryMax= in fgd.conf(5)).
 *
 * Every component that holds memory the workload decides charges it to its
 * part of the budget and releases it when it lets go. Parts are of two
 * kinds:
 *
 *   - data: what fgd exists to keep or serve, which nothing else can give
 *     back: the always-on window, recordings' tables, their waiting rooms,
 *     clients' results, the process table, JIT maps, and the rings the
 *     kernel writes samples to (charged whole when they are made, since the
 *     kernel allocates them whole; they never ask: a recording without its
 *     rings would sample nothing). A data part asks
 *     before it grows (fg_budget__room(), fg_budget__fits()) and, when the
 *     answer is no, degrades in its own way, counted (the window folds
 *     stacks into [other], a recording drops new stacks, a sample that
 *     would wait is named with what is known, a snapshot is refused...).
 *   - caches: what can be read again: binaries' symbol tables, DWARF, CFI,
 *     the names kept of addresses named on the loader. A cache may use
 *     whatever the data parts leave, and gives it back under pressure:
 *     fg_budget__relieve() asks their evictors, least recently used first.
 *
 * Shares. Each part may hold at most a share of the total (FG_BUDGET_SHARES
 * in budget.c, one table, documented in docs/ARCHITECTURE.md): no single
 * part takes the whole budget. The shares add up to more than the total:
 * they are ceilings, not reservations. What bounds the sum is the total
 * itself: a data part may grow only while everything charged, plus the
 * base (the daemon's own code, libraries and stacks, charged to no part),
 * stays within the total once the caches above their floor (an eighth of
 * the total, which data growth never evicts) have given theirs back.
 *
 * Eviction order (fg_budget__relieve()): while more is charged than the
 * total allows, the caches' evictors are asked in passes, each for what is
 * left to free: first entries unused for a minute, then for 10 s, each
 * pass asking DWARF (its loss costs only inline frames), then CFI (re-read
 * when a stack needs it), then symbol tables (names are module+offset
 * until re-read); then the kept names are started again (at most every
 * 10 s). Entries used within the last 10 s are never evicted
 * (FG_BUDGET_MIN_IDLE_NS). What cannot be relieved that way is counted
 * (unrelieved) and left, tried again a second later: the data parts stop
 * growing at their next check.
 *
 * Pure: no system calls and no clock. The daemon tells it the time, the
 * base and the process's RSS (which status shows beside the parts), and
 * calls fg_budget__relieve() from its loop. Components get the budget as a
 * borrowed pointer; NULL means no budget, and every call accepts it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fg_status_memory;

enum fg_budget_part {
	/* Data. */
	FG_BUDGET_WINDOW,     /* the always-on window's slices */
	FG_BUDGET_RECORDINGS, /* every recording's tables, the always-on sampler's memo included */
	FG_BUDGET_WAITING,    /* recordings' waiting rooms: samples parked for the loader */
	FG_BUDGET_RESULTS,    /* clients' results: snapshots being streamed, output buffers */
	FG_BUDGET_PROCESSES,  /* the process table: generations, maps, threads */
	FG_BUDGET_JIT,        /* JIT maps (/tmp/perf-PID.map) */
	FG_BUDGET_RINGS,      /* the kernel's rings mapped into fgd: perf events', BPF's */
	/* Caches, in the order they are evicted. */
	FG_BUDGET_DWARF,   /* binaries' DWARF, for inline frames */
	FG_BUDGET_CFI,     /* binaries' CFI, for DWARF unwinding */
	FG_BUDGET_SYMBOLS, /* binaries' symbol tables, kallsyms */
	FG_BUDGET_NAMES,   /* names kept of addresses named on the loader */
	_FG_BUDGET_PART_MAX
};

#define FG_BUDGET_FIRST_CACHE FG_BUDGET_DWARF

/*
 * Entries used more recently than this are never evicted: the working set
 * of what is being recorded stays, even over the total. Evicting it would
 * only have it read again at once, which costs more memory (a symbol table
 * being read takes twice its size) than it frees.
 */
#define FG_BUDGET_MIN_IDLE_NS (10000ULL * 1000000ULL)

/*
 * A part's evictor: frees entries of its part unused for at least idle_ns
 * (before now - idle_ns, on the clock fg_budget__relieve() was given),
 * least recently used first, until at least want bytes are gone or none is
 * left that old, and releases them from the budget itself
 * (fg_budget__release(), or fg_budget__account()). Returns how many
 * entries it evicted. It must not charge the budget, nor call
 * fg_budget__relieve().
 */
typedef uint64_t (*fg_budget_evict_fn)(void *ctx, uint64_t want, uint64_t now_ns, uint64_t idle_ns);

struct fg_budget;

/* total: bytes (MemoryMax=). Caller frees *ret with fg_budget__free(). 0 or -ENOMEM. */
int fg_budget__new(uint64_t total, struct fg_budget **ret);
struct fg_budget *fg_budget__free(struct fg_budget *b);

/* A new total (a reload): shares follow; data parts already over theirs stop growing. */
void fg_budget__set_total(struct fg_budget *b, uint64_t total);
/* What the daemon holds outside every part (its code, libraries, stacks): counted against the total. */
void fg_budget__set_base(struct fg_budget *b, uint64_t bytes);
/*
 * The process's resident memory now and the most it ever was (VmRSS and
 * VmHWM), for status: the peak is the kernel's, so a burst between two
 * looks is in it.
 */
void fg_budget__set_rss(struct fg_budget *b, uint64_t bytes, uint64_t peak);

/* The part's name in status ("window", "dwarf", ...); static. */
const char *fg_budget_part_name(enum fg_budget_part p);
static inline bool fg_budget_part_is_cache(enum fg_budget_part p)
{
	return p >= FG_BUDGET_FIRST_CACHE && p < _FG_BUDGET_PART_MAX;
}

void fg_budget__charge(struct fg_budget *b, enum fg_budget_part p, uint64_t bytes);
/* Gives bytes back; more than the part holds is clamped (and a bug of the caller's). */
void fg_budget__release(struct fg_budget *b, enum fg_budget_part p, uint64_t bytes);
/*
 * For a holder that knows its own size: charges or releases the difference
 * between what it holds now (bytes) and what it had charged (*held), which
 * becomes bytes. With b NULL only *held changes.
 */
void fg_budget__account(struct fg_budget *b, enum fg_budget_part p, uint64_t *held, uint64_t bytes);

/* The most part p may hold: its share of the total. UINT64_MAX without a budget. */
uint64_t fg_budget__share(const struct fg_budget *b, enum fg_budget_part p);
/*
 * How much more p may take now. For a data part: what is left of its
 * share, and of the total once the caches have given back what they may,
 * down to their floor. For a cache, the most one new entry may take: its
 * share, of what the data parts leave (older entries, its own part's too,
 * are evicted to make the room: fg_budget__relieve()). UINT64_MAX without
 * a budget.
 */
uint64_t fg_budget__room(const struct fg_budget *b, enum fg_budget_part p);
static inline bool fg_budget__fits(const struct fg_budget *b, enum fg_budget_part p, uint64_t bytes)
{
	return bytes <= fg_budget__room(b, p);
}
/* Counts a growth of p refused for want of room (a degradation, in status). */
void fg_budget__refused(struct fg_budget *b, enum fg_budget_part p);

/* Registers the evictor of cache part p (fn NULL: none). ctx is borrowed until unregistered. */
void fg_budget__set_evictor(struct fg_budget *b, enum fg_budget_part p, fg_budget_evict_fn fn,
			    void *ctx);

/* Whether more is charged (with the base) than the total, or a cache holds more than its share. */
bool fg_budget__over(const struct fg_budget *b);

/*
 * If more is charged than the total, or a cache part holds more than its
 * share, asks the caches' evictors to give back the excess and a sixteenth
 * more (so that the next small growth does not start it all again), in
 * the order above
 * (now_ns: the clock their entries' use is told on). Returns the bytes
 * released, 0 when nothing was over. Call it where no component is in the
 * middle of a change: the daemon's loop, between events.
 */
uint64_t fg_budget__relieve(struct fg_budget *b, uint64_t now_ns);

/*
 * The budget's part of status ("memory"): its figures, kept in that struct,
 * with the shares and whether it is over now. Parts are by_part[] by enum
 * fg_budget_part, and parts by name.
 */
void fg_budget__stats(const struct fg_budget *b, struct fg_status_memory *ret);
