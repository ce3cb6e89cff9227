/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A slice of the always-on window (common/storage/window.h): the samples
 * of one stretch of time as a profile of its own, with its own frame
 * names, processes and stacks, and each sample's time, within a memory
 * budget (its share of the window's ceiling).
 *
 * Filling it: fg_slice__add() counts a stack; when the budget runs out it
 * folds the coldest stacks into their process's "[other]" (at most
 * FG_WINDOW_MAX_COMPACTIONS times), then sends new stacks there directly,
 * and a process it has no room for to "[other processes]". The times are
 * kept within half the budget, a reserve of it theirs whatever the stacks
 * hold; past that, or for a sample without a time, they are dropped
 * (times_lost) and queries count the slice whole.
 *
 * The window opens, fills, closes and frees slices; the history stores
 * closed ones (fg_slice_export()). The layout below is open to the
 * window's queries, which read a slice's stacks and times in place rather
 * than copy them out once per query; only slice.c changes a slice.
 *
 * Pure, not thread-safe.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/idxmap.h"
#include "storage/window.h"

/* A process as a slice holds it: names as the slice's name ids. */
struct fg_slice_proc {
	pid_t pid;
	uid_t uid;
	uint64_t start_time;
	uint32_t comm, exe, cgroup; /* name ids */
	uint64_t samples;           /* all, folded ones included */
	uint64_t other;             /* folded into "[other]" */
	uint64_t folded_stacks;
};

/* A stack of a process: frames[off..off + n) of the slice, root first. */
struct fg_slice_stack {
	uint32_t proc;
	uint32_t off; /* into frames */
	uint32_t n;
	uint64_t count;
};

/* A sample's time in a slice, and what it was counted in. */
struct fg_slice_time {
	int32_t at; /* ms after the slice's start; below 0: taken before it, added after */
	/* a stack's index, FG_SLICE_REF_OTHER | a process's index, or FG_SLICE_REF_UNATTRIBUTED */
	uint32_t ref;
};
#define FG_SLICE_REF_OTHER 0x80000000U
#define FG_SLICE_REF_UNATTRIBUTED UINT32_MAX

struct fg_slice {
	int64_t start_ms, end_ms;
	bool closed;
	char *chars; /* owned: names, each NUL-terminated */
	size_t n_chars, cap_chars;
	uint32_t *name_off; /* owned */
	size_t n_names, cap_names;
	struct fg_idxmap name_index; /* open slice only */
	struct fg_slice_proc *procs; /* owned */
	size_t n_procs, cap_procs;
	struct fg_idxmap proc_index;   /* open slice only */
	struct fg_slice_stack *stacks; /* owned */
	size_t n_stacks, cap_stacks;
	struct fg_idxmap stack_index; /* open slice only */
	uint32_t *frames;             /* owned */
	size_t n_frames, cap_frames;
	uint64_t samples, folded_samples, unattributed, folded_stacks;
	uint64_t lost; /* samples the caller lost while it was open */
	unsigned compactions;
	bool full; /* compactions used up: new stacks fold directly */
	uint64_t budget;
	/*
	 * Every sample's time, in the order added, within half the budget: the
	 * profile comes first. Past it, or for a sample without a time, the
	 * slice's times no longer add up to it: they are dropped, and queries
	 * take the slice whole (times_lost).
	 */
	struct fg_slice_time *times; /* owned */
	uint32_t *time_counts;       /* owned: each time's count, once one is not 1; else NULL */
	size_t n_times, cap_times, cap_time_counts;
	int32_t min_at, max_at; /* of the times kept */
	bool times_lost;
	uint64_t times_reserve; /* what the times may take whatever the profile holds */
};

/*
 * An open slice of [start_ms, end_ms) (end_ms planned), that may hold
 * budget bytes, times_reserve of them for its times whatever its stacks
 * take. Caller frees with fg_slice__free(). 0 or -ENOMEM.
 */
int fg_slice__new(int64_t start_ms, int64_t end_ms, uint64_t budget, uint64_t times_reserve,
		  struct fg_slice **ret);
struct fg_slice *fg_slice__free(struct fg_slice *s);

/*
 * Interns a frame name in an open slice (a name ends at its first NUL
 * byte). 0, or -ENOSPC when the slice has no room for a new name, or
 * -ENOMEM.
 */
int fg_slice__intern(struct fg_slice *s, const char *name, size_t len, uint32_t *ret_id);

/*
 * Adds count samples, taken at time_ms (Unix ms, or FG_WINDOW_NO_TIME), to
 * proc in an open slice: of the stack frames[0..n) (ids from
 * fg_slice__intern(), root first; not NULL, though n may be 0), or with
 * other (frames NULL, n 0), to proc's "[other]". Never fails for want of room (see above);
 * 0, -EINVAL for an id the slice does not hold, or -ENOMEM. What went
 * where shows in the slice's figures (samples, folded_samples,
 * folded_stacks, unattributed, compactions), which only grow.
 */
int fg_slice__add(struct fg_slice *s, const struct fg_window_proc *proc, const uint32_t *frames,
		  size_t n, uint64_t count, bool other, int64_t time_ms);
/* Counts n samples lost while the slice was open (saturating). */
void fg_slice__add_lost(struct fg_slice *s, uint64_t n);

/* Closes the slice at end_ms: a closed slice needs no index and no spare capacity. */
void fg_slice__close(struct fg_slice *s, int64_t end_ms);

/* The bytes the slice holds, and of those, its times'. */
size_t fg_slice__bytes(const struct fg_slice *s);
size_t fg_slice__times_bytes(const struct fg_slice *s);

/* A slice's span, Unix ms: [start, end); the open slice's end is its planned one. */
void fg_slice_span(const struct fg_slice *s, int64_t *ret_start, int64_t *ret_end);
/* The samples a slice lost (fg_window__add_lost()). */
uint64_t fg_slice_lost(const struct fg_slice *s);

struct fg_slicefile_writer;

/*
 * Slice s as a history slice file (common/storage/slicefile.h), spanning
 * [start, end_ms) (end_ms: the slice's own end, or earlier for the open
 * slice cut short), covered whole, with its losses. Each process's
 * "[other]" samples are a stack of that one
 * frame; samples of "[other processes]" a pseudo-process with pid 0 and
 * that comm. Caller finishes and frees *ret. 0 or a negative errno.
 */
int fg_slice_export(const struct fg_slice *s, int64_t end_ms, struct fg_slicefile_writer **ret);

/* Name id's text; borrowed until the slice is freed. */
static inline const char *fg_slice_name(const struct fg_slice *s, uint32_t id)
{
	return s->chars + s->name_off[id];
}

/* The count of the slice's time i. */
static inline uint32_t fg_slice_time_count(const struct fg_slice *s, size_t i)
{
	return s->time_counts ? s->time_counts[i] : 1;
}
