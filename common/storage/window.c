/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/idxmap.h"
#include "base/macro.h"
#include "profile/timed.h"
#include "profile/top.h"
#include "storage/slicefile.h"
#include "storage/window.h"

struct sproc {
	pid_t pid;
	uid_t uid;
	uint64_t start_time;
	uint32_t comm, exe, cgroup; /* name ids */
	uint64_t samples;           /* all, folded ones included */
	uint64_t other;             /* folded into "[other]" */
	uint64_t folded_stacks;
};

struct sstack {
	uint32_t proc;
	uint32_t off; /* into frames */
	uint32_t n;
	uint64_t count;
};

/* A sample's time in a slice, and what it was counted in. */
struct stime {
	int32_t at;   /* ms after the slice's start; below 0: taken before it, added after */
	uint32_t ref; /* a stack's index, REF_OTHER | a process's index, or REF_UNATTRIBUTED */
};
#define REF_OTHER 0x80000000U
#define REF_UNATTRIBUTED UINT32_MAX

struct fg_slice {
	int64_t start_ms, end_ms;
	bool closed;
	char *chars; /* owned: names, each NUL-terminated */
	size_t n_chars, cap_chars;
	uint32_t *name_off; /* owned */
	size_t n_names, cap_names;
	struct fg_idxmap name_index; /* open slice only */
	struct sproc *procs;         /* owned */
	size_t n_procs, cap_procs;
	struct fg_idxmap proc_index; /* open slice only */
	struct sstack *stacks;       /* owned */
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
	struct stime *times;   /* owned */
	uint32_t *time_counts; /* owned: each time's count, once one is not 1; else NULL */
	size_t n_times, cap_times, cap_time_counts;
	int32_t min_at, max_at; /* of the times kept */
	bool times_lost;
	uint64_t times_reserve; /* what the times may take whatever the profile holds */
};

struct fg_window {
	struct fg_window_opts opts;
	uint64_t slice_budget;
	size_t max_closed; /* ceil(window / slice) + 1: one may straddle the window's start */
	struct fg_slice **closed; /* owned, oldest first */
	size_t n_closed, cap_closed;
	struct fg_slice *open; /* owned */
	int64_t now_ms;        /* the latest time given to new or tick */
	uint64_t epoch;
	fg_window_expire_fn expire_fn;
	void *expire_ctx;
	uint64_t total_samples, total_folded_samples, total_folded_stacks, total_unattributed;
	uint64_t compactions, expired;
	uint64_t last_times; /* the bytes of times the last slice closed held (or would have) */
};

/* The least a slice's times keep free of the profile (profile_budget()). */
#define TIMES_RESERVE_MIN 4096

/* ---- slices ---- */

static size_t slice_bytes(const struct fg_slice *s)
{
	return sizeof(*s) + s->cap_chars + s->cap_names * sizeof(uint32_t) +
	       s->cap_procs * sizeof(struct sproc) + s->cap_stacks * sizeof(struct sstack) +
	       s->cap_frames * sizeof(uint32_t) + fg_idxmap_bytes(&s->name_index) +
	       fg_idxmap_bytes(&s->proc_index) + fg_idxmap_bytes(&s->stack_index) +
	       s->cap_times * sizeof(struct stime) + s->cap_time_counts * sizeof(uint32_t);
}

static struct fg_slice *slice_free(struct fg_slice *s)
{
	if (!s)
		return NULL;
	free(s->chars);
	free(s->name_off);
	fg_idxmap_done(&s->name_index);
	free(s->procs);
	fg_idxmap_done(&s->proc_index);
	free(s->stacks);
	fg_idxmap_done(&s->stack_index);
	free(s->frames);
	free(s->times);
	free(s->time_counts);
	free(s);
	return NULL;
}

static size_t times_bytes(const struct fg_slice *s)
{
	return s->cap_times * sizeof(struct stime) + s->cap_time_counts * sizeof(uint32_t);
}

/*
 * What the profile (names, processes, stacks) may hold of the slice's
 * budget: all but what the times hold, and while they are kept, their
 * reserve at least (twice what the slice before needed, a quarter of the
 * budget at most), so a storm of new stacks does not leave them without
 * room.
 */
static uint64_t profile_budget(const struct fg_slice *s)
{
	uint64_t times = s->times_lost ? 0 : MAX((uint64_t)times_bytes(s), s->times_reserve);

	return s->budget > times ? s->budget - times : 0;
}

/* Room for need elements in *arr, within the profile's budget: 0, -ENOSPC or -ENOMEM. */
static int slice_grow(struct fg_slice *s, void **arr, size_t *cap, size_t need, size_t elem)
{
	uint64_t budget = profile_budget(s);
	size_t used, room, want;
	void *p;

	if (need <= *cap)
		return 0;
	used = slice_bytes(s) - times_bytes(s);
	room = budget > used ? (size_t)(budget - used) / elem : 0;
	if (need - *cap > room)
		return -ENOSPC;
	want = MAX(need, MAX(*cap * 2, (size_t)16));
	want = MIN(want, *cap + room);
	p = realloc(*arr, want * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = want;
	return 0;
}

#define SLICE_GROW(s, arr, cap, need) \
	slice_grow((s), (void **)&(arr), &(cap), (need), sizeof(*(arr)))

/* Whether the index can take one more entry within the budget. */
static int index_room(const struct fg_slice *s, const struct fg_idxmap *m)
{
	size_t grow;

	if (m->slots && (m->count + 1) * 2 <= m->mask + 1)
		return 0;
	grow = (m->slots ? (m->mask + 1) : 64) * sizeof(uint64_t);
	return slice_bytes(s) - times_bytes(s) + grow > profile_budget(s) ? -ENOSPC : 0;
}

/* The slice's times no longer add up to it: they go, and give their memory back. */
static void times_lose(struct fg_slice *s)
{
	s->times_lost = true;
	free(s->times);
	free(s->time_counts);
	s->times = NULL;
	s->time_counts = NULL;
	s->n_times = s->cap_times = s->cap_time_counts = 0;
}

/*
 * Room for one more time (with its count if counted) within half the
 * slice's budget and the budget itself (a quarter is theirs whatever the
 * stacks hold: profile_budget()): 0, -ENOSPC or -ENOMEM. The counts, made
 * when the first count other than 1 comes, start at 1 for the times before
 * it.
 */
static int times_room(struct fg_slice *s, bool counted)
{
	size_t need = s->n_times + 1, cap = s->cap_times, want = cap;
	size_t elem = sizeof(struct stime) + (counted ? sizeof(uint32_t) : 0);
	bool count_now = counted && !s->time_counts;
	uint64_t held = times_bytes(s), used = slice_bytes(s), room, extra;
	void *p;

	if (need <= cap && !count_now)
		return 0;
	room = MIN(s->budget / 2 > held ? s->budget / 2 - held : 0,
		   s->budget > used ? s->budget - used : 0);
	/* Counting from now on: the counts of the times already there come first. */
	extra = count_now ? cap * sizeof(uint32_t) : 0;
	if (extra > room)
		return -ENOSPC;
	room -= extra;
	if (need > cap) {
		want = MAX(need, MAX(cap * 2, (size_t)64));
		if ((want - cap) * elem > room)
			want = cap + (size_t)(room / elem);
		if (want < need)
			return -ENOSPC;
		p = realloc(s->times, want * sizeof(*s->times));
		if (!p)
			return -ENOMEM;
		s->times = p;
		s->cap_times = want;
	}
	if (counted && (count_now || want > s->cap_time_counts)) {
		p = realloc(s->time_counts, want * sizeof(*s->time_counts));
		if (!p)
			return -ENOMEM;
		s->time_counts = p;
		s->cap_time_counts = want;
		for (size_t i = 0; count_now && i < s->n_times; i++)
			s->time_counts[i] = 1;
	}
	return 0;
}

/* Notes that count samples at time_ms went to ref; past the times' room, they are all lost. */
static void slice_time(struct fg_slice *s, int64_t time_ms, uint32_t ref, uint64_t count)
{
	bool counted = s->time_counts || count != 1;
	int64_t at;

	if (s->times_lost)
		return;
	if (time_ms == FG_WINDOW_NO_TIME || __builtin_sub_overflow(time_ms, s->start_ms, &at) ||
	    count > UINT32_MAX || at < INT32_MIN || at > INT32_MAX || times_room(s, counted) < 0) {
		times_lose(s);
		return;
	}
	if (counted)
		s->time_counts[s->n_times] = (uint32_t)count;
	if (s->n_times == 0 || at < s->min_at)
		s->min_at = (int32_t)at;
	if (s->n_times == 0 || at > s->max_at)
		s->max_at = (int32_t)at;
	s->times[s->n_times++] = (struct stime){ (int32_t)at, ref };
}

static uint32_t time_count(const struct fg_slice *s, size_t i)
{
	return s->time_counts ? s->time_counts[i] : 1;
}

static const char *slice_name(const struct fg_slice *s, uint32_t id)
{
	return s->chars + s->name_off[id];
}

struct name_key {
	const char *s;
	size_t len;
};

static bool name_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct fg_slice *s = ctx;
	const struct name_key *k = key;
	const char *name = slice_name(s, idx);

	return strncmp(name, k->s, k->len) == 0 && name[k->len] == '\0';
}

/* Stored NUL-terminated: a name ends at its first NUL byte. Allocates only for a new name. */
static int slice_intern(struct fg_slice *s, const char *name, size_t len, uint32_t *ret)
{
	struct name_key key = { name, strnlen(name, len) };
	uint64_t h = fg_hash_str(name, key.len);
	int64_t i;
	int err;

	len = key.len;
	i = fg_idxmap_find(&s->name_index, h, name_eq, s, &key);
	if (i >= 0) {
		*ret = (uint32_t)i;
		return 0;
	}
	err = index_room(s, &s->name_index);
	if (err >= 0)
		err = SLICE_GROW(s, s->name_off, s->cap_names, s->n_names + 1);
	if (err >= 0)
		err = SLICE_GROW(s, s->chars, s->cap_chars, s->n_chars + len + 1);
	if (err < 0)
		return err;
	err = fg_idxmap_insert(&s->name_index, h, (uint32_t)s->n_names);
	if (err < 0)
		return err;
	memcpy(s->chars + s->n_chars, name, len);
	s->chars[s->n_chars + len] = '\0';
	s->name_off[s->n_names] = (uint32_t)s->n_chars;
	s->n_chars += len + 1;
	*ret = (uint32_t)s->n_names++;
	return 0;
}

static int slice_new(int64_t start, int64_t end, uint64_t budget, struct fg_slice **ret)
{
	struct fg_slice *s = calloc(1, sizeof(*s));
	uint32_t id;
	int err;

	if (!s)
		return -ENOMEM;
	s->start_ms = start;
	s->end_ms = end;
	s->budget = budget;
	/* Name 0 is the empty string: unknown exe or cgroup. */
	err = slice_intern(s, "", 0, &id);
	if (err < 0 && err != -ENOSPC) {
		slice_free(s);
		return err;
	}
	*ret = s;
	return 0;
}

static bool proc_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct sproc *a = &((const struct fg_slice *)ctx)->procs[idx], *b = key;

	return a->pid == b->pid && a->start_time == b->start_time && a->uid == b->uid &&
	       a->comm == b->comm && a->exe == b->exe && a->cgroup == b->cgroup;
}

static uint64_t proc_hash(const struct sproc *p)
{
	uint64_t h = fg_hash_mix((uint64_t)p->pid);

	h = fg_hash_combine(h, p->start_time);
	h = fg_hash_combine(h, p->uid);
	h = fg_hash_combine(h, p->comm);
	h = fg_hash_combine(h, p->exe);
	return fg_hash_combine(h, p->cgroup);
}

static const char *nonnull(const char *s)
{
	return s ? s : "";
}

/* The process's index in the slice; -ENOSPC when there is no room for it. */
static int64_t slice_proc(struct fg_slice *s, const struct fg_window_proc *p)
{
	struct sproc k = { .pid = p->pid, .uid = p->uid, .start_time = p->start_time };
	const char *comm = p->comm && *p->comm ? p->comm : "[unknown]";
	uint64_t h;
	int64_t i;
	int err;

	if (s->n_names == 0)
		return -ENOSPC;
	err = slice_intern(s, comm, strlen(comm), &k.comm);
	if (err >= 0)
		err = slice_intern(s, nonnull(p->exe), strlen(nonnull(p->exe)), &k.exe);
	if (err >= 0)
		err = slice_intern(s, nonnull(p->cgroup), strlen(nonnull(p->cgroup)), &k.cgroup);
	if (err < 0)
		return err;
	h = proc_hash(&k);
	i = fg_idxmap_find(&s->proc_index, h, proc_eq, s, &k);
	if (i >= 0)
		return i;
	err = index_room(s, &s->proc_index);
	if (err >= 0)
		err = SLICE_GROW(s, s->procs, s->cap_procs, s->n_procs + 1);
	if (err >= 0)
		err = fg_idxmap_insert(&s->proc_index, h, (uint32_t)s->n_procs);
	if (err < 0)
		return err;
	s->procs[s->n_procs] = k;
	return (int64_t)s->n_procs++;
}

struct stack_key {
	uint32_t proc;
	const uint32_t *frames;
	size_t n;
};

static bool stack_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct fg_slice *s = ctx;
	const struct sstack *a = &s->stacks[idx];
	const struct stack_key *k = key;

	return a->proc == k->proc && a->n == k->n &&
	       (k->n == 0 || memcmp(s->frames + a->off, k->frames, k->n * sizeof(uint32_t)) == 0);
}

static uint64_t stack_hash(uint32_t proc, const uint32_t *frames, size_t n)
{
	return fg_hash_bytes(frames, n * sizeof(uint32_t), fg_hash_mix(proc));
}

static void fold_into_other(struct fg_slice *s, struct sproc *p, uint64_t count)
{
	p->other += count;
	s->folded_samples += count;
}

/*
 * Folds the coldest stacks into their processes' "[other]": those with the
 * fewest samples, doubling the threshold until at least a quarter of the
 * stacks go. Stacks and frames are compacted in place and the index
 * rebuilt at its size, so the room freed is reused without growing.
 */
static uint64_t slice_compact(struct fg_slice *s)
{
	uint64_t threshold = 1, folded = 0;
	size_t goal = s->n_stacks / 4, k = 0, fk = 0;
	/* What each stack becomes, for the times that refer to it. */
	_cleanup_free_ uint32_t *remap = NULL;

	if (s->n_times) {
		remap = malloc(MAX(s->n_stacks, (size_t)1) * sizeof(*remap));
		if (!remap)
			times_lose(s);
	}

	for (;; threshold *= 2) {
		size_t n = 0;

		for (size_t i = 0; i < s->n_stacks; i++)
			n += s->stacks[i].count <= threshold;
		if (n >= goal || threshold > (UINT64_MAX >> 2))
			break;
	}
	memset(s->stack_index.slots, 0, fg_idxmap_bytes(&s->stack_index));
	s->stack_index.count = 0;
	for (size_t i = 0; i < s->n_stacks; i++) {
		struct sstack st = s->stacks[i];

		if (st.count <= threshold) {
			fold_into_other(s, &s->procs[st.proc], st.count);
			s->procs[st.proc].folded_stacks++;
			s->folded_stacks++;
			folded++;
			if (remap)
				remap[i] = REF_OTHER | st.proc;
			continue;
		}
		if (remap)
			remap[i] = (uint32_t)k;
		if (st.n > 0)
			memmove(s->frames + fk, s->frames + st.off, st.n * sizeof(uint32_t));
		st.off = (uint32_t)fk;
		fk += st.n;
		s->stacks[k] = st;
		/* The index keeps its size: at most as many entries as before. */
		(void)fg_idxmap_insert(&s->stack_index,
				       stack_hash(st.proc, s->frames + st.off, st.n), (uint32_t)k);
		k++;
	}
	s->n_stacks = k;
	s->n_frames = fk;
	s->compactions++;
	for (size_t i = 0; remap && i < s->n_times; i++)
		if (s->times[i].ref < REF_OTHER)
			s->times[i].ref = remap[s->times[i].ref];
	return folded;
}

/* Adds count to the stack, new or not: its index in *ret. 0, -ENOSPC or -ENOMEM. */
static int slice_add_stack(struct fg_slice *s, uint32_t proc, const uint32_t *frames, size_t n,
			   uint64_t count, uint32_t *ret)
{
	struct stack_key key = { proc, frames, n };
	uint64_t h = stack_hash(proc, frames, n);
	int64_t i = fg_idxmap_find(&s->stack_index, h, stack_eq, s, &key);
	int err;

	if (i >= 0) {
		s->stacks[i].count += count;
		*ret = (uint32_t)i;
		return 0;
	}
	if (s->full)
		return -ENOSPC;
	err = index_room(s, &s->stack_index);
	if (err >= 0)
		err = SLICE_GROW(s, s->stacks, s->cap_stacks, s->n_stacks + 1);
	if (err >= 0)
		err = SLICE_GROW(s, s->frames, s->cap_frames, s->n_frames + n);
	if (err >= 0 && s->n_frames + n > UINT32_MAX)
		err = -ENOSPC;
	if (err < 0)
		return err;
	err = fg_idxmap_insert(&s->stack_index, h, (uint32_t)s->n_stacks);
	if (err < 0)
		return err;
	if (n > 0)
		memcpy(s->frames + s->n_frames, frames, n * sizeof(uint32_t));
	*ret = (uint32_t)s->n_stacks;
	s->stacks[s->n_stacks++] =
		(struct sstack){ proc, (uint32_t)s->n_frames, (uint32_t)n, count };
	s->n_frames += n;
	return 0;
}

/* A closed slice needs no index and no spare capacity. */
static void slice_close(struct fg_slice *s, int64_t end)
{
	s->end_ms = end;
	s->closed = true;
	fg_idxmap_done(&s->name_index);
	fg_idxmap_done(&s->proc_index);
	fg_idxmap_done(&s->stack_index);
#define SHRINK(arr, n, cap)                                                   \
	do {                                                                  \
		void *p_ = (n) ? realloc((arr), (n) * sizeof(*(arr))) : NULL; \
		if ((n) == 0) {                                               \
			free(arr);                                            \
			(arr) = NULL;                                         \
			(cap) = 0;                                            \
		} else if (p_) {                                              \
			(arr) = p_;                                           \
			(cap) = (n);                                          \
		}                                                             \
	} while (0)
	SHRINK(s->chars, s->n_chars, s->cap_chars);
	SHRINK(s->name_off, s->n_names, s->cap_names);
	SHRINK(s->procs, s->n_procs, s->cap_procs);
	SHRINK(s->stacks, s->n_stacks, s->cap_stacks);
	SHRINK(s->frames, s->n_frames, s->cap_frames);
	SHRINK(s->times, s->n_times, s->cap_times);
	if (s->time_counts)
		SHRINK(s->time_counts, s->n_times, s->cap_time_counts);
#undef SHRINK
}

void fg_slice_span(const struct fg_slice *s, int64_t *ret_start, int64_t *ret_end)
{
	*ret_start = s->start_ms;
	*ret_end = s->end_ms;
}

uint64_t fg_slice_lost(const struct fg_slice *s)
{
	return s->lost;
}

/* ---- the window ---- */

static int64_t slice_end_for(const struct fg_window *w, int64_t now)
{
	int64_t len = (int64_t)w->opts.slice_ms;
	int64_t base = now - ((now % len) + len) % len;

	return base + len;
}

/* Opens the slice from start to the end of the slice now_ms is in. */
static int open_slice(struct fg_window *w, int64_t start, int64_t now)
{
	int err = slice_new(start, slice_end_for(w, now), w->slice_budget, &w->open);

	if (err >= 0) {
		w->open->times_reserve = MIN(w->slice_budget / 4,
					     MAX((uint64_t)TIMES_RESERVE_MIN, 2 * w->last_times));
		w->epoch++;
	}
	return err;
}

int fg_window__new(const struct fg_window_opts *opts, int64_t now_ms, struct fg_window **ret)
{
	struct fg_window *w;
	int err;

	if (opts->slice_ms == 0 || opts->window_ms < opts->slice_ms || opts->memory_max == 0)
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->opts = *opts;
	if (!w->opts.gap_ms)
		w->opts.gap_ms = opts->slice_ms;
	w->now_ms = now_ms;
	/* Closed slices in the window, one that may straddle its start, and the open one. */
	w->max_closed = (opts->window_ms + opts->slice_ms - 1) / opts->slice_ms + 1;
	w->slice_budget = opts->memory_max / (w->max_closed + 1);
	/* Nothing is known of the times' needs yet: the first slice reserves them all it may. */
	w->last_times = w->slice_budget;
	err = open_slice(w, now_ms, now_ms);
	if (err < 0) {
		fg_window__free(w);
		return err;
	}
	*ret = w;
	return 0;
}

struct fg_window *fg_window__free(struct fg_window *w)
{
	if (!w)
		return NULL;
	for (size_t i = 0; i < w->n_closed; i++)
		slice_free(w->closed[i]);
	free(w->closed);
	slice_free(w->open);
	free(w);
	return NULL;
}

int fg_window__intern(struct fg_window *w, const char *name, size_t len, uint32_t *ret_id)
{
	return slice_intern(w->open, name, len, ret_id);
}

uint64_t fg_window__epoch(const struct fg_window *w)
{
	return w->epoch;
}

/* Folds the open slice's coldest stacks into "[other]", counted in the window's figures. */
static void compact(struct fg_window *w, struct fg_slice *s)
{
	uint64_t before = s->folded_samples;

	w->total_folded_stacks += slice_compact(s);
	w->total_folded_samples += s->folded_samples - before;
	w->compactions++;
	s->full = s->compactions >= FG_WINDOW_MAX_COMPACTIONS;
}

static int add(struct fg_window *w, const struct fg_window_proc *proc, const uint32_t *frames,
	       size_t n, uint64_t count, bool other, int64_t time_ms)
{
	struct fg_slice *s = w->open;
	uint32_t idx;
	int64_t pi;
	int err;

	if (count == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (frames[i] >= s->n_names)
			return -EINVAL;
	s->samples += count;
	w->total_samples += count;
	pi = slice_proc(s, proc);
	if (pi == -ENOSPC) {
		s->unattributed += count;
		w->total_unattributed += count;
		slice_time(s, time_ms, REF_UNATTRIBUTED, count);
		return 0;
	}
	if (pi < 0)
		return (int)pi;
	s->procs[pi].samples += count;
	if (other) {
		fold_into_other(s, &s->procs[pi], count);
		w->total_folded_samples += count;
		slice_time(s, time_ms, REF_OTHER | (uint32_t)pi, count);
		return 0;
	}
	err = slice_add_stack(s, (uint32_t)pi, frames, n, count, &idx);
	if (err == -ENOSPC && !s->full) {
		compact(w, s);
		err = slice_add_stack(s, (uint32_t)pi, frames, n, count, &idx);
	}
	if (err == -ENOSPC) {
		fold_into_other(s, &s->procs[pi], count);
		w->total_folded_samples += count;
		slice_time(s, time_ms, REF_OTHER | (uint32_t)pi, count);
		return 0;
	}
	if (err >= 0)
		slice_time(s, time_ms, idx, count);
	return err;
}

int fg_window__add(struct fg_window *w, const struct fg_window_proc *proc, const uint32_t *frames,
		   size_t n, uint64_t count, int64_t time_ms)
{
	static const uint32_t none[1];

	/* No frames: an empty stack of its own, and no NULL for memcpy and the hash. */
	return add(w, proc, n ? frames : none, n, count, false, time_ms);
}

int fg_window__add_other(struct fg_window *w, const struct fg_window_proc *proc, uint64_t count,
			 int64_t time_ms)
{
	return add(w, proc, NULL, 0, count, true, time_ms);
}

void fg_window__add_lost(struct fg_window *w, uint64_t n)
{
	w->open->lost = w->open->lost + n < n ? UINT64_MAX : w->open->lost + n;
}

void fg_window__set_expire_hook(struct fg_window *w, fg_window_expire_fn fn, void *ctx)
{
	w->expire_fn = fn;
	w->expire_ctx = ctx;
}

int fg_window__expire(struct fg_window *w)
{
	if (w->n_closed == 0)
		return 0;
	if (w->expire_fn)
		w->expire_fn(w->expire_ctx, w->closed[0]);
	slice_free(w->closed[0]);
	memmove(w->closed, w->closed + 1, (w->n_closed - 1) * sizeof(*w->closed));
	w->n_closed--;
	w->expired++;
	return 1;
}

int fg_window__tick(struct fg_window *w, int64_t now_ms)
{
	struct fg_slice *old = w->open;
	int changed = 0, err;

	w->now_ms = now_ms;
	/* Time up, or the clock went back past the slice's start. */
	if (now_ms >= old->end_ms || now_ms < old->start_ms) {
		/*
		 * The next slice takes over where this one ends, so that the ms
		 * between its end and the tick that noticed it (a drain round) are
		 * covered, by the next one: not left out of both while their
		 * samples count. Only a tick too late for that, or the clock set
		 * back, leaves a gap.
		 */
		bool abut =
			now_ms >= old->end_ms && now_ms - old->end_ms <= (int64_t)w->opts.gap_ms;

		/* Room first: a closed slice is never lost for want of a pointer slot. */
		if (FG_GROW(w->closed, w->cap_closed, w->n_closed + 1) >= 0) {
			/* What its times took, for the next one's reserve: all it could, if lost. */
			w->last_times =
				old->times_lost ?
					w->slice_budget / 4 :
					old->n_times * (sizeof(struct stime) +
							(old->time_counts ? sizeof(uint32_t) : 0));
			w->open = NULL;
			err = open_slice(w, abut ? old->end_ms : now_ms, now_ms);
			if (err < 0) {
				w->open = old; /* keep adding to the old one; try again next tick */
			} else {
				slice_close(old, MIN(now_ms, old->end_ms) > old->start_ms ?
							 MIN(now_ms, old->end_ms) :
							 old->start_ms + 1);
				w->closed[w->n_closed++] = old;
				changed = 1;
			}
		}
	}
	while (w->n_closed > 0 && (w->closed[0]->end_ms <= now_ms - (int64_t)w->opts.window_ms ||
				   w->n_closed > w->max_closed))
		fg_window__expire(w);
	return changed;
}

/* ---- queries ---- */

static void proc_view(const struct fg_slice *s, const struct sproc *p, struct fg_window_proc *ret)
{
	*ret = (struct fg_window_proc){
		.pid = p->pid,
		.start_time = p->start_time,
		.uid = p->uid,
		.comm = slice_name(s, p->comm),
		.exe = slice_name(s, p->exe),
		.cgroup = slice_name(s, p->cgroup),
	};
}

/*
 * When the slice's samples were taken, [*ret_lo, *ret_hi): its span, and
 * with times, the span of its times too (a sample taken just before the
 * slice began may be added to it).
 */
static void slice_extent(const struct fg_slice *s, int64_t *ret_lo, int64_t *ret_hi)
{
	*ret_lo = s->start_ms;
	*ret_hi = s->end_ms;
	if (s->n_times) {
		*ret_lo = MIN(*ret_lo, s->start_ms + s->min_at);
		*ret_hi = MAX(*ret_hi, s->start_ms + s->max_at + 1);
	}
}

/* Whether [since, until) leaves out some of the slice's samples: its times say which are in. */
static bool cut_by(const struct fg_slice *s, int64_t since, int64_t until)
{
	int64_t lo = s->n_times ? s->start_ms + s->min_at : s->start_ms;
	int64_t hi = s->n_times ? s->start_ms + s->max_at + 1 : s->end_ms;

	return lo < since || hi > until;
}

/*
 * What a query counts of a slice: each stack's, each process's "[other]"
 * and the unattributed samples, and each process's sum. The slice's own
 * counts, or with a range that cuts it, those of its times in the range.
 */
struct counts {
	uint64_t *stack; /* owned; per stack */
	uint64_t *other; /* owned; per process */
	uint64_t *proc;  /* owned; per process: its stacks' and its "[other]" */
	uint64_t unattributed;
	size_t cap_stack, cap_proc, cap_other;
};

static void counts_done(struct counts *c)
{
	free(c->stack);
	free(c->other);
	free(c->proc);
}

static int slice_counts(const struct fg_slice *s, bool cut, int64_t since, int64_t until,
			struct counts *c)
{
	int err = FG_GROW(c->stack, c->cap_stack, s->n_stacks + 1);

	if (err >= 0)
		err = FG_GROW(c->other, c->cap_other, s->n_procs + 1);
	if (err >= 0)
		err = FG_GROW(c->proc, c->cap_proc, s->n_procs + 1);
	if (err < 0)
		return err;
	memset(c->proc, 0, s->n_procs * sizeof(*c->proc));
	if (!cut) {
		for (size_t i = 0; i < s->n_stacks; i++)
			c->stack[i] = s->stacks[i].count;
		for (size_t i = 0; i < s->n_procs; i++)
			c->other[i] = s->procs[i].other;
		c->unattributed = s->unattributed;
	} else {
		memset(c->stack, 0, s->n_stacks * sizeof(*c->stack));
		memset(c->other, 0, s->n_procs * sizeof(*c->other));
		c->unattributed = 0;
		for (size_t i = 0; i < s->n_times; i++) {
			const struct stime *t = &s->times[i];
			int64_t at = s->start_ms + t->at;

			if (at < since || at >= until)
				continue;
			if (t->ref == REF_UNATTRIBUTED)
				c->unattributed += time_count(s, i);
			else if (t->ref & REF_OTHER)
				c->other[t->ref & ~REF_OTHER] += time_count(s, i);
			else
				c->stack[t->ref] += time_count(s, i);
		}
	}
	for (size_t i = 0; i < s->n_stacks; i++)
		c->proc[s->stacks[i].proc] += c->stack[i];
	for (size_t i = 0; i < s->n_procs; i++)
		c->proc[i] += c->other[i];
	return 0;
}

typedef int (*slice_visit_fn)(void *ctx, const struct fg_slice *s, bool cut);

/*
 * Calls fn for each slice with samples in [since, until), saying whether
 * the range cuts it. A slice the range cuts but whose times were not kept
 * counts whole (res->untimed_slices) unless skip_untimed: then it is left
 * out.
 */
static int each_slice(const struct fg_window *w, int64_t since, int64_t until, slice_visit_fn fn,
		      void *ctx, bool skip_untimed, struct fg_window_result *res)
{
	int err;

	for (size_t i = 0; i <= w->n_closed; i++) {
		const struct fg_slice *s = i < w->n_closed ? w->closed[i] : w->open;
		int64_t lo, hi;
		bool cut;

		if (!s)
			continue;
		slice_extent(s, &lo, &hi);
		if (lo >= until || hi <= since)
			continue;
		cut = cut_by(s, since, until);
		/* A timed query places samples by their times: a slice without them has none to place. */
		if (s->times_lost && (cut || skip_untimed)) {
			res->untimed_slices++;
			if (skip_untimed)
				continue;
			cut = false;
		}
		if (res->slices++ == 0)
			res->first_ms = cut ? MAX(s->start_ms, since) : s->start_ms;
		res->last_ms = cut ? MIN(s->end_ms, until) : s->end_ms;
		/* The open slice holds samples up to the last tick, not to its planned end. */
		hi = s == w->open ? MIN(s->end_ms, MAX(w->now_ms, s->start_ms)) : s->end_ms;
		lo = s->start_ms;
		if (cut) {
			lo = MAX(lo, since);
			hi = MIN(hi, until);
		}
		res->covered_ms += MAX(hi - lo, (int64_t)0);
		res->lost += s->lost;
		err = fn(ctx, s, cut);
		if (err < 0)
			return err;
	}
	return 0;
}

struct query_ctx {
	fg_window_match_fn match;
	void *match_ctx;
	bool match_all;
	unsigned roots; /* FG_WINDOW_ROOTS_* */
	int64_t since, until;
	/* What the query makes, one of: */
	struct fg_folded *out;
	struct fg_timed *timed;
	struct fg_top *top; /* borrowed */
	struct fg_window_result *res;
	struct counts c;
	uint32_t *ids; /* owned: the slice's name ids in out */
	size_t cap_ids;
	uint32_t *stack; /* owned */
	size_t cap_stack;
	bool *wanted; /* owned: per process of the slice */
	size_t cap_wanted;
	uint32_t *refs; /* owned, timed: per stack, process's "[other]" and unattributed, its id */
	size_t cap_refs;
};

static void query_done(struct query_ctx *q)
{
	counts_done(&q->c);
	free(q->ids);
	free(q->stack);
	free(q->wanted);
	free(q->refs);
}

static struct fg_folded *query_model(struct query_ctx *q)
{
	return q->timed ? fg_timed__model(q->timed) : q->out;
}

static int out_name(struct query_ctx *q, const struct fg_slice *s, uint32_t id, uint32_t *ret)
{
	int err;

	if (q->ids[id] != UINT32_MAX) {
		*ret = q->ids[id];
		return 0;
	}
	err = fg_folded__intern(query_model(q), slice_name(s, id), strlen(slice_name(s, id)), ret);
	if (err >= 0)
		q->ids[id] = *ret;
	return err;
}

/* Marks the slice's matched processes, counting them and what the query takes of them. */
static int match_procs(struct query_ctx *q, const struct fg_slice *s, bool cut)
{
	int err = FG_GROW(q->wanted, q->cap_wanted, s->n_procs + 1);

	if (err >= 0)
		err = slice_counts(s, cut, q->since, q->until, &q->c);
	if (err < 0)
		return err;
	for (size_t i = 0; i < s->n_procs; i++) {
		struct fg_window_proc v;

		proc_view(s, &s->procs[i], &v);
		q->wanted[i] = (!q->match || q->match(q->match_ctx, &v)) && q->c.proc[i] > 0;
		if (!q->wanted[i])
			continue;
		q->res->processes++;
		q->res->samples += q->c.proc[i];
		q->res->folded_samples += q->c.other[i];
		q->res->folded_stacks += s->procs[i].folded_stacks;
	}
	if (q->match_all) {
		q->res->unattributed += q->c.unattributed;
		q->res->samples += q->c.unattributed;
	}
	return 0;
}

const char *fg_window_cgroup_frame(const char *cgroup, unsigned roots)
{
	const char *last;

	if (!cgroup || !*cgroup)
		return "[unknown]";
	last = strrchr(cgroup, '/');
	return (roots & FG_WINDOW_ROOTS_CGROUP_NAME) && last && last[1] ? last + 1 : cgroup;
}

const char *fg_window_process_frame(const char *comm, pid_t pid, unsigned roots, char *buf,
				    size_t size)
{
	if (!(roots & FG_WINDOW_ROOTS_PID))
		return comm;
	snprintf(buf, size, "%s-%d", comm, (int)pid);
	return buf;
}

/* The process's root frames in the query's model: [cgroup,] comm[-pid]; how many in *ret_n. */
static int query_roots(struct query_ctx *q, const struct fg_slice *s, const struct sproc *p,
		       size_t *ret_n)
{
	size_t n = 0;
	char buf[256]; /* a comm is 15 bytes; "[unknown]" */
	const char *name;
	int err = 0;

	if (q->roots & (FG_WINDOW_ROOTS_CGROUP | FG_WINDOW_ROOTS_CGROUP_NAME)) {
		const char *cg = fg_window_cgroup_frame(slice_name(s, p->cgroup), q->roots);

		err = fg_folded__intern(query_model(q), cg, strlen(cg), &q->stack[n++]);
	}
	if (err >= 0 && (q->roots & FG_WINDOW_ROOTS_PID)) {
		name = fg_window_process_frame(slice_name(s, p->comm), p->pid, q->roots, buf,
					       sizeof(buf));
		err = fg_folded__intern(query_model(q), name, strlen(name), &q->stack[n++]);
	} else if (err >= 0) {
		err = out_name(q, s, p->comm, &q->stack[n++]);
	}
	*ret_n = n;
	return err;
}

/* Stack i of the slice, the process's "[other]" (other: its index), as frames of the query's model. */
static int query_stack(struct query_ctx *q, const struct fg_slice *s, int64_t i, int64_t other,
		       size_t *ret_n)
{
	const struct sstack *st = other >= 0 ? NULL : &s->stacks[i];
	size_t roots = 0;
	int err;

	err = FG_GROW(q->stack, q->cap_stack, (st ? st->n : 1) + 2);
	if (err >= 0)
		err = query_roots(q, s, &s->procs[other >= 0 ? other : st->proc], &roots);
	if (err >= 0 && !st)
		err = fg_folded__intern(query_model(q), FG_WINDOW_OTHER, strlen(FG_WINDOW_OTHER),
					&q->stack[roots]);
	for (size_t k = 0; err >= 0 && st && k < st->n; k++)
		err = out_name(q, s, s->frames[st->off + k], &q->stack[roots + k]);
	*ret_n = roots + (st ? st->n : 1);
	return err;
}

static int query_slice(void *ctx, const struct fg_slice *s, bool cut)
{
	struct query_ctx *q = ctx;
	size_t n;
	int err;

	err = match_procs(q, s, cut);
	if (err >= 0)
		err = FG_GROW(q->ids, q->cap_ids, s->n_names);
	if (err < 0)
		return err;
	memset(q->ids, 0xff, s->n_names * sizeof(uint32_t));
	for (size_t i = 0; i < s->n_stacks; i++) {
		if (!q->wanted[s->stacks[i].proc] || q->c.stack[i] == 0)
			continue;
		err = query_stack(q, s, (int64_t)i, -1, &n);
		if (err >= 0)
			err = fg_folded__add(q->out, q->stack, n, (double)q->c.stack[i]);
		if (err < 0)
			return err;
	}
	for (size_t i = 0; i < s->n_procs; i++) {
		if (!q->wanted[i] || q->c.other[i] == 0)
			continue;
		err = query_stack(q, s, -1, (int64_t)i, &n);
		if (err >= 0)
			err = fg_folded__add(q->out, q->stack, n, (double)q->c.other[i]);
		if (err < 0)
			return err;
	}
	if (q->match_all && q->c.unattributed > 0) {
		uint32_t id;

		err = fg_folded__intern(q->out, FG_WINDOW_OTHER_PROCESSES,
					strlen(FG_WINDOW_OTHER_PROCESSES), &id);
		if (err >= 0)
			err = fg_folded__add(q->out, &id, 1, (double)q->c.unattributed);
		if (err < 0)
			return err;
	}
	return 0;
}

/* Runs q (its range, selection and output set) over the slices with visit; its figures in *ret. */
static int run_query(const struct fg_window *w, struct query_ctx *q, slice_visit_fn visit,
		     bool skip_untimed, struct fg_window_result *ret)
{
	struct fg_window_result res = {};
	int err;

	q->res = &res;
	err = each_slice(w, q->since, q->until, visit, q, skip_untimed, &res);
	query_done(q);
	if (err >= 0)
		*ret = res;
	return err;
}

int fg_window__query(const struct fg_window *w, int64_t since_ms, int64_t until_ms, unsigned roots,
		     fg_window_match_fn match, void *ctx, bool match_all, struct fg_folded *out,
		     struct fg_window_result *ret)
{
	struct query_ctx q = { .match = match,
			       .match_ctx = ctx,
			       .match_all = match_all,
			       .roots = roots,
			       .since = since_ms,
			       .until = until_ms,
			       .out = out };

	return run_query(w, &q, query_slice, false, ret);
}

/* The id in the timed profile of what time ref of the slice counts to; UINT32_MAX: not wanted. */
static int timed_ref(struct query_ctx *q, const struct fg_slice *s, uint32_t ref, uint32_t *ret)
{
	size_t slot = ref == REF_UNATTRIBUTED ? s->n_stacks + s->n_procs :
		      ref & REF_OTHER         ? s->n_stacks + (ref & ~REF_OTHER) :
						ref;
	size_t n;
	int err;

	if (q->refs[slot] != UINT32_MAX - 1) {
		*ret = q->refs[slot];
		return 0;
	}
	q->refs[slot] = UINT32_MAX;
	if (ref == REF_UNATTRIBUTED) {
		if (!q->match_all)
			goto out;
		err = fg_folded__intern(query_model(q), FG_WINDOW_OTHER_PROCESSES,
					strlen(FG_WINDOW_OTHER_PROCESSES), &q->stack[0]);
		n = 1;
	} else if (ref & REF_OTHER) {
		if (!q->wanted[ref & ~REF_OTHER])
			goto out;
		err = query_stack(q, s, -1, ref & ~REF_OTHER, &n);
	} else {
		if (!q->wanted[s->stacks[ref].proc])
			goto out;
		err = query_stack(q, s, ref, -1, &n);
	}
	if (err >= 0)
		err = fg_folded__add_id(query_model(q), q->stack, n, 0, &q->refs[slot]);
	if (err < 0)
		return err;
out:
	*ret = q->refs[slot];
	return 0;
}

static int timed_slice(void *ctx, const struct fg_slice *s, bool cut)
{
	struct query_ctx *q = ctx;
	size_t slots = s->n_stacks + s->n_procs + 1;
	int err;

	err = match_procs(q, s, cut);
	if (err >= 0)
		err = FG_GROW(q->ids, q->cap_ids, s->n_names);
	if (err >= 0)
		err = FG_GROW(q->refs, q->cap_refs, slots);
	if (err >= 0)
		err = FG_GROW(q->stack, q->cap_stack, 2);
	if (err < 0)
		return err;
	memset(q->ids, 0xff, s->n_names * sizeof(uint32_t));
	for (size_t i = 0; i < slots; i++)
		q->refs[i] = UINT32_MAX - 1; /* not looked at yet */
	for (size_t i = 0; i < s->n_times; i++) {
		int64_t at = s->start_ms + s->times[i].at;
		uint32_t id;

		if (at < q->since || at >= q->until)
			continue;
		err = timed_ref(q, s, s->times[i].ref, &id);
		if (err >= 0 && id != UINT32_MAX)
			err = fg_timed__add_id(q->timed, at, id, time_count(s, i));
		if (err < 0)
			return err;
	}
	return 0;
}

int fg_window__timed(const struct fg_window *w, int64_t since_ms, int64_t until_ms,
		     fg_window_match_fn match, void *ctx, bool match_all, struct fg_timed *out,
		     struct fg_window_result *ret)
{
	struct query_ctx q = { .match = match,
			       .match_ctx = ctx,
			       .match_all = match_all,
			       .since = since_ms,
			       .until = until_ms,
			       .timed = out };

	/* A slice without times has nothing to place: it is counted, and left out. */
	return run_query(w, &q, timed_slice, true, ret);
}

/* ---- top ---- */

static int top_slice(void *ctx, const struct fg_slice *s, bool cut)
{
	struct query_ctx *q = ctx;
	struct fg_top_process tp;
	int err;

	err = match_procs(q, s, cut);
	if (err < 0)
		return err;
	for (size_t i = 0; i < s->n_stacks; i++) {
		const struct sstack *st = &s->stacks[i];
		const struct sproc *p = &s->procs[st->proc];
		const char *leaf;

		if (!q->wanted[st->proc] || q->c.stack[i] == 0)
			continue;
		/* A sample without frames has no leaf: it counts for its process only. */
		leaf = st->n ? slice_name(s, s->frames[st->off + st->n - 1]) : NULL;
		tp = (struct fg_top_process){ p->pid, p->start_time, p->uid,
					      slice_name(s, p->comm) };
		err = fg_top__add(q->top, &tp, leaf, leaf ? strlen(leaf) : 0, q->c.stack[i]);
		if (err < 0)
			return err;
	}
	/* Every matched process, also one whose samples were all folded into "[other]". */
	for (size_t i = 0; i < s->n_procs; i++) {
		const struct sproc *p = &s->procs[i];

		if (!q->wanted[i] || q->c.other[i] == 0)
			continue;
		tp = (struct fg_top_process){ p->pid, p->start_time, p->uid,
					      slice_name(s, p->comm) };
		err = fg_top__add(q->top, &tp, NULL, 0, q->c.other[i]);
		if (err < 0)
			return err;
	}
	return 0;
}

int fg_window__top(const struct fg_window *w, int64_t since_ms, int64_t until_ms,
		   fg_window_match_fn match, void *ctx, struct fg_top *top,
		   struct fg_window_result *ret)
{
	struct query_ctx q = {
		.match = match, .match_ctx = ctx, .since = since_ms, .until = until_ms, .top = top
	};

	return run_query(w, &q, top_slice, false, ret);
}

/* ---- figures ---- */

void fg_window__stats(const struct fg_window *w, struct fg_window_stats *ret)
{
	*ret = (struct fg_window_stats){
		.now_ms = w->now_ms,
		.memory_max = w->opts.memory_max,
		.slice_budget = w->slice_budget,
		.total_samples = w->total_samples,
		.total_folded_samples = w->total_folded_samples,
		.total_folded_stacks = w->total_folded_stacks,
		.total_unattributed = w->total_unattributed,
		.compactions = w->compactions,
		.expired = w->expired,
	};
	for (size_t i = 0; i <= w->n_closed; i++) {
		const struct fg_slice *s = i < w->n_closed ? w->closed[i] : w->open;

		if (!s)
			continue;
		if (ret->slices++ == 0)
			ret->oldest_ms = s->start_ms;
		ret->bytes += slice_bytes(s);
		ret->times_bytes += times_bytes(s);
		ret->untimed += s->times_lost;
		ret->samples += s->samples;
		ret->folded_samples += s->folded_samples;
		ret->unattributed += s->unattributed;
	}
}

int fg_window__coverage(const struct fg_window *w, fg_window_span_fn fn, void *ctx)
{
	for (size_t i = 0; i <= w->n_closed; i++) {
		const struct fg_slice *s = i < w->n_closed ? w->closed[i] : w->open;
		int64_t end;
		int err;

		if (!s)
			continue;
		end = s == w->open ? MIN(s->end_ms, MAX(w->now_ms, s->start_ms)) : s->end_ms;
		err = end > s->start_ms ? fn(ctx, s->start_ms, end) : 0;
		if (err < 0)
			return err;
	}
	return 0;
}

const struct fg_slice *fg_window__last_closed(const struct fg_window *w)
{
	return w->n_closed ? w->closed[w->n_closed - 1] : NULL;
}

const struct fg_slice *fg_window__open_slice(const struct fg_window *w)
{
	return w->open;
}

/* A name for the file: empty names (unknown exe or cgroup) are stored as unknown. */
static const char *known(const struct fg_slice *s, uint32_t id)
{
	const char *name = slice_name(s, id);

	return name[0] ? name : NULL;
}

/*
 * The slice's times into w, at ticks of FG_WINDOW_FILE_TICK_MS: stack i of
 * the slice is stack i of the file, then come the processes' "[other]"
 * stacks (other_at: each process's, or UINT32_MAX), then the unattributed
 * one.
 */
static int export_times(const struct fg_slice *s, const uint32_t *other_at,
			uint32_t unattributed_at, struct fg_slicefile_writer *w)
{
	int err = fg_slicefile_writer__set_times(w, FG_WINDOW_FILE_TICK_MS);

	for (size_t i = 0; i < s->n_times && err >= 0; i++) {
		const struct stime *t = &s->times[i];
		uint32_t stack = t->ref == REF_UNATTRIBUTED ? unattributed_at :
				 t->ref & REF_OTHER         ? other_at[t->ref & ~REF_OTHER] :
							      t->ref;

		err = fg_slicefile_writer__add_time(w, stack, s->start_ms + t->at,
						    time_count(s, i));
	}
	return err;
}

int fg_slice_export(const struct fg_slice *s, int64_t end_ms, struct fg_slicefile_writer **ret)
{
	struct fg_slicefile_writer *w = NULL;
	const char *frames[FG_SLICEFILE_MAX_DEPTH];
	const char *other[] = { FG_WINDOW_OTHER };
	int64_t end = MIN(end_ms, s->end_ms);
	_cleanup_free_ uint32_t *other_at = NULL;
	uint32_t next = (uint32_t)s->n_stacks, unattributed_at = UINT32_MAX;
	struct fg_slicefile_span whole;
	int err;

	if (s->start_ms < 0 || end < s->start_ms)
		return -EINVAL;
	whole = (struct fg_slicefile_span){ (uint64_t)s->start_ms * 1000000,
					    (uint64_t)end * 1000000, s->lost };
	err = fg_slicefile_writer__new(whole.start_ns, whole.end_ns, &w);
	/* The slice was sampled through its span, but for what it lost (a slice of no ms covers none). */
	if (err >= 0 && end > s->start_ms)
		err = fg_slicefile_writer__add_coverage(w, &whole);
	for (size_t i = 0; i < s->n_procs && err >= 0; i++) {
		const struct sproc *p = &s->procs[i];
		const struct fg_slicefile_process fp = {
			.pid = p->pid,
			.start_time = p->start_time,
			.uid = p->uid,
			.comm = known(s, p->comm),
			.exe = known(s, p->exe),
			.cgroup = known(s, p->cgroup),
		};
		uint32_t idx;

		/* Process i of the slice is process i of the file. */
		err = fg_slicefile_writer__add_process(w, &fp, &idx);
	}
	for (size_t i = 0; i < s->n_stacks && err >= 0; i++) {
		const struct sstack *st = &s->stacks[i];
		size_t n = MIN((size_t)st->n, (size_t)FG_SLICEFILE_MAX_DEPTH);

		/* A sample with no frames at all has nothing to store but its process. */
		if (n == 0) {
			err = fg_slicefile_writer__add_stack(w, st->proc, other, 1, st->count);
			continue;
		}
		/* Deeper than a file holds: keep the root end, as the kernel's limit does. */
		for (size_t k = 0; k < n; k++)
			frames[k] = slice_name(s, s->frames[st->off + k]);
		err = fg_slicefile_writer__add_stack(w, st->proc, frames, n, st->count);
	}
	other_at = malloc(MAX(s->n_procs, (size_t)1) * sizeof(*other_at));
	if (!other_at && err >= 0)
		err = -ENOMEM;
	for (size_t i = 0; i < s->n_procs && err >= 0; i++) {
		other_at[i] = UINT32_MAX;
		if (!s->procs[i].other)
			continue;
		err = fg_slicefile_writer__add_stack(w, (uint32_t)i, other, 1, s->procs[i].other);
		other_at[i] = next++;
	}
	if (err >= 0 && s->unattributed) {
		const struct fg_slicefile_process rest = { .comm = FG_WINDOW_OTHER_PROCESSES };
		const char *rest_frame[] = { FG_WINDOW_OTHER_PROCESSES };
		uint32_t idx;

		err = fg_slicefile_writer__add_process(w, &rest, &idx);
		if (err >= 0)
			err = fg_slicefile_writer__add_stack(w, idx, rest_frame, 1,
							     s->unattributed);
		unattributed_at = next++;
	}
	/*
	 * Times go to disk when they add up to the slice, a file keeps all or
	 * none, and none lies further out than a file may hold (the clock stepped).
	 */
	if (err >= 0 && !s->times_lost &&
	    (s->n_times == 0 || (s->min_at >= -FG_SLICEFILE_TIME_SLACK_MS &&
				 s->start_ms + s->max_at <= end + FG_SLICEFILE_TIME_SLACK_MS)))
		err = export_times(s, other_at, unattributed_at, w);
	if (err < 0) {
		fg_slicefile_writer__free(w);
		return err;
	}
	*ret = w;
	return 0;
}
