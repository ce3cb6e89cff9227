/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The always-on window: per-process aggregates of symbolized stacks in time
 * slices (10 s by default), kept for a rolling window (15 min), within a
 * hard memory ceiling.
 *
 * A slice (common/storage/slice.h) is self-contained: its own frame names,
 * processes and stacks, so it outlives the binaries it names, is freed
 * whole when it expires, and is the unit an on-disk history will store.
 * Closed slices leave the window through one function, fg_window__expire(),
 * which calls the expire hook first (the history's way in).
 *
 * Memory: the ceiling is split evenly between the slices the window can
 * hold (window / slice, plus the open one), so no slice may take more than
 * its share and the sum never passes the ceiling. When the open slice's
 * share runs out:
 *   1. its coldest stacks (those with the fewest samples, at most a quarter
 *      of them at a time) are folded into their process's "[other]" frame,
 *      at most FG_WINDOW_MAX_COMPACTIONS times a slice;
 *   2. after that, a stack the slice does not hold yet goes to "[other]";
 *   3. a process the slice has no room for goes to "[other processes]".
 * Folded samples still count (in CPU shares, in totals); what was folded is
 * counted in the figures of every query and of the window.
 *
 * Times: each sample's time is kept with it (what it was counted in, and
 * ms after its slice's start: 8 bytes, 12 with a count other than 1),
 * within half its slice's budget; the profile leaves them twice what the
 * slice before needed (a quarter of the budget at most, all of that for
 * the first slice), however many stacks come. A query whose range cuts a slice takes
 * just the samples in the range; a slice whose times were not all kept
 * (past that room, or samples added without a time) counts whole, and is
 * counted as untimed. Times are what heat maps are drawn from
 * (fg_window__timed()).
 *
 * Pure: the caller passes times (Unix ms, CLOCK_REALTIME) and does the
 * logging. Not thread-safe.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "profile/folded.h"

#define FG_WINDOW_MAX_COMPACTIONS 4
/* The time of a sample that has none: its slice's times then no longer add up (untimed). */
#define FG_WINDOW_NO_TIME INT64_MIN
/* The resolution of the times a slice keeps on disk (fg_slice_export()). */
#define FG_WINDOW_FILE_TICK_MS 10
/* The frame of what a slice folded away at its memory ceiling (compaction). */
#define FG_WINDOW_OTHER "[other]"

struct fg_window_opts {
	uint64_t slice_ms;   /* > 0 */
	uint64_t window_ms;  /* >= slice_ms */
	uint64_t memory_max; /* bytes for all slices together */
	/*
	 * A tick later than this after the open slice's planned end (the
	 * caller's loop stalled, the machine slept, the clock jumped ahead)
	 * leaves the time between as a gap: no slice covers it. A tick within
	 * it starts the next slice where the last one ended, so that slices
	 * abut and every ms of a run is covered once. 0: slice_ms.
	 */
	uint64_t gap_ms;
};

/* A process as a slice knows it. */
struct fg_window_proc {
	pid_t pid;
	/* tells reuses of a pid apart; fgd gives ns since the epoch, 0 unknown */
	uint64_t start_time;
	uid_t uid;
	const char *comm;   /* borrowed for the call (or until the slice changes, when read back) */
	const char *exe;    /* idem; NULL or "": unknown */
	const char *cgroup; /* idem; NULL or "": unknown */
};

struct fg_window;
struct fg_slice;

/* Caller frees with fg_window__free(). -EINVAL for bad options, -ENOMEM. */
int fg_window__new(const struct fg_window_opts *opts, int64_t now_ms, struct fg_window **ret);
struct fg_window *fg_window__free(struct fg_window *w);

/*
 * Interns a frame name in the open slice. The id is valid for
 * fg_window__add() until the open slice changes (fg_window__epoch()).
 * 0, or -ENOSPC when the slice has no room for a new name, or -ENOMEM.
 */
int fg_window__intern(struct fg_window *w, const char *name, size_t len, uint32_t *ret_id);
/*
 * Adds count samples, taken at time_ms (Unix ms, or FG_WINDOW_NO_TIME), to
 * proc's "[other]" in the open slice: for a stack whose names
 * fg_window__intern() had no room for. 0 or -ENOMEM.
 */
int fg_window__add_other(struct fg_window *w, const struct fg_window_proc *proc, uint64_t count,
			 int64_t time_ms);
/*
 * Counts n samples lost (the kernel's lost records, samples the caller
 * could not add) in the open slice: its time is covered, but not wholly
 * sampled, and queries say so.
 */
void fg_window__add_lost(struct fg_window *w, uint64_t n);

/* Changes whenever the open slice does: interned ids cached by the caller are then stale. */
uint64_t fg_window__epoch(const struct fg_window *w);

/*
 * Adds count samples, taken at time_ms (Unix ms, or FG_WINDOW_NO_TIME), of
 * the stack frames[0..n) (root first, ids from fg_window__intern(); n may
 * be 0 for a sample with no frames) to proc in the open slice, whatever
 * slice time_ms falls in. Never fails for want of room (see above); 0,
 * -EINVAL, or -ENOMEM.
 */
int fg_window__add(struct fg_window *w, const struct fg_window_proc *proc, const uint32_t *frames,
		   size_t n, uint64_t count, int64_t time_ms);

/*
 * Closes the open slice once its time is up (slices end on multiples of
 * slice_ms of the Unix epoch) and opens the next, then expires slices that
 * ended before the window. The next slice starts where the closed one
 * ended, unless now_ms is more than gap_ms past that (a gap), or before its
 * start (the clock went back): then it starts at now_ms. Returns 1 if the
 * open slice changed, else 0.
 */
int fg_window__tick(struct fg_window *w, int64_t now_ms);

/* Called with each closed slice as it leaves the window, before it is freed. */
typedef void (*fg_window_expire_fn)(void *ctx, const struct fg_slice *s);
void fg_window__set_expire_hook(struct fg_window *w, fg_window_expire_fn fn, void *ctx);
/* Makes the oldest closed slice leave the window now. 1 if one left, 0 if none is closed. */
int fg_window__expire(struct fg_window *w);

/* The newest closed slice (NULL if none), and the open one. Borrowed until the next tick. */
const struct fg_slice *fg_window__last_closed(const struct fg_window *w);
const struct fg_slice *fg_window__open_slice(const struct fg_window *w);

/* Returns true for processes a query covers; p is borrowed for the call. */
typedef bool (*fg_window_match_fn)(void *ctx, const struct fg_window_proc *p);

struct fg_window_result {
	uint64_t slices;           /* slices with samples in the range */
	int64_t first_ms, last_ms; /* the span they cover, cut to the range where times allow
				      (0, 0 with no slice) */
	int64_t covered_ms;        /* the time they hold samples for: their spans (cut to the
				      range where times allow) summed, the open slice's up to
				      the last tick */
	/*
	 * Slices the range cut whose samples' times were not all kept: counted
	 * whole by queries and top, left out of timed queries.
	 */
	uint64_t untimed_slices;
	uint64_t processes;      /* process entries matched, summed over slices */
	uint64_t samples;        /* samples of matched processes, folded ones included */
	uint64_t folded_samples; /* of those, samples in "[other]" frames */
	uint64_t folded_stacks;  /* stacks folded into "[other]" in those processes */
	uint64_t unattributed;   /* samples in "[other processes]" (counted only with match_all) */
	/*
	 * Of samples, those taken at another rate than the window's or an
	 * unknown one: set by readers of the history, never by the window.
	 */
	uint64_t other_rate_samples;
	/* Samples lost in the slices read (whole: a loss has no time), matched or not. */
	uint64_t lost;
};

/*
 * What a query puts above each process's frames, as a recording's
 * --group-by and --pid-frames do: flags, 0 for "comm;frame;...".
 */
enum {
	FG_WINDOW_ROOTS_COMM = 0,
	FG_WINDOW_ROOTS_CGROUP = 1 << 0,      /* "/system.slice/x.service;comm;frame;..." */
	FG_WINDOW_ROOTS_CGROUP_NAME = 1 << 1, /* "x.service;comm;...": the path's last component */
	FG_WINDOW_ROOTS_PID = 1 << 2, /* "comm-pid;...", stackcollapse-perf.pl's --pid form */
};

/* A process's cgroup frame under roots: the path, or its last component; "[unknown]" for none. */
const char *fg_window_cgroup_frame(const char *cgroup, unsigned roots);

/* A process's frame under roots: comm, or "comm-pid" in buf (which it returns). */
const char *fg_window_process_frame(const char *comm, pid_t pid, unsigned roots, char *buf,
				    size_t size);

/*
 * Adds the stacks of processes matched in slices overlapping [since, until)
 * to out, as "comm;frame;..." (the process's "[other]" as "comm;[other]",
 * and with match_all, unattributed samples as "[other processes]"), a
 * cgroup frame above the comm and the pid in it as roots says. match may be NULL: every
 * process. 0 or a negative errno from the model.
 */
int fg_window__query(const struct fg_window *w, int64_t since_ms, int64_t until_ms, unsigned roots,
		     fg_window_match_fn match, void *ctx, bool match_all, struct fg_folded *out,
		     struct fg_window_result *ret);

struct fg_timed;

/*
 * As fg_window__query(), each sample with its time into out (a timed
 * profile in samples, or in µs for a window counting µs: common/profile/timed.h;
 * Unix clock), its stack as "comm;frame;...". Slices without their times
 * have nothing to place and are left out (untimed_slices). 0 or a negative
 * errno from out.
 */
int fg_window__timed(const struct fg_window *w, int64_t since_ms, int64_t until_ms,
		     fg_window_match_fn match, void *ctx, bool match_all, struct fg_timed *out,
		     struct fg_window_result *ret);

struct fg_top;

/*
 * Feeds the processes matched in [since, until) to top (common/profile/top.h), oldest
 * slice first: each stack's count with its leaf frame, each process's
 * "[other]" samples without one. Unattributed samples are no process's and
 * are left out. 0 or a negative errno from top.
 */
int fg_window__top(const struct fg_window *w, int64_t since_ms, int64_t until_ms,
		   fg_window_match_fn match, void *ctx, struct fg_top *top,
		   struct fg_window_result *ret);

struct fg_window_stats {
	int64_t now_ms;          /* the latest tick's time: what the open slice covers up to */
	uint64_t bytes;          /* held by all slices now */
	uint64_t times_bytes;    /* of those, the samples' times */
	uint64_t untimed_slices; /* slices held now that kept no times (lost for want of room) */
	uint64_t memory_max;
	uint64_t slice_budget;         /* each slice's share */
	uint64_t slices;               /* closed ones held, plus the open one */
	int64_t oldest_ms;             /* start of the oldest slice held */
	uint64_t samples;              /* held now */
	uint64_t folded_samples;       /* held now, in "[other]" frames */
	uint64_t unattributed_samples; /* held now, in "[other processes]" */
	/* Since the window was created: */
	uint64_t total_samples;
	uint64_t total_folded_samples;
	uint64_t total_folded_stacks;
	uint64_t total_unattributed_samples;
	uint64_t compactions;
	uint64_t expired_slices;
};

void fg_window__stats(const struct fg_window *w, struct fg_window_stats *ret);

/*
 * Calls fn with the span of every slice held, oldest first, as far as it
 * covers (the open slice up to the latest tick): the time the window knows
 * of. fn's negative return stops it and is returned; else 0.
 */
typedef int (*fg_window_span_fn)(void *ctx, int64_t start_ms, int64_t end_ms);
int fg_window__coverage(const struct fg_window *w, fg_window_span_fn fn, void *ctx);
