/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/idxmap.h"
#include "base/macro.h"
#include "profile/procframe.h"
#include "storage/slice.h"
#include "storage/slicefile.h"

size_t fg_slice__bytes(const struct fg_slice *s)
{
	return sizeof(*s) + s->cap_chars + s->cap_names * sizeof(uint32_t) +
	       s->cap_procs * sizeof(struct fg_slice_proc) +
	       s->cap_stacks * sizeof(struct fg_slice_stack) + s->cap_frames * sizeof(uint32_t) +
	       fg_idxmap_bytes(&s->name_index) + fg_idxmap_bytes(&s->proc_index) +
	       fg_idxmap_bytes(&s->stack_index) + s->cap_times * sizeof(struct fg_slice_time) +
	       s->cap_time_counts * sizeof(uint32_t);
}

struct fg_slice *fg_slice__free(struct fg_slice *s)
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

size_t fg_slice__times_bytes(const struct fg_slice *s)
{
	return s->cap_times * sizeof(struct fg_slice_time) + s->cap_time_counts * sizeof(uint32_t);
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
	uint64_t times =
		s->times_lost ? 0 : MAX((uint64_t)fg_slice__times_bytes(s), s->times_reserve);

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
	used = fg_slice__bytes(s) - fg_slice__times_bytes(s);
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
	return fg_slice__bytes(s) - fg_slice__times_bytes(s) + grow > profile_budget(s) ? -ENOSPC :
											  0;
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
	size_t elem = sizeof(struct fg_slice_time) + (counted ? sizeof(uint32_t) : 0);
	bool count_now = counted && !s->time_counts;
	uint64_t held = fg_slice__times_bytes(s), used = fg_slice__bytes(s), room, extra;
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
	s->times[s->n_times++] = (struct fg_slice_time){ (int32_t)at, ref };
}

struct name_key {
	const char *s;
	size_t len;
};

static bool name_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct fg_slice *s = ctx;
	const struct name_key *k = key;
	const char *name = fg_slice_name(s, idx);

	return strncmp(name, k->s, k->len) == 0 && name[k->len] == '\0';
}

/* Stored NUL-terminated: a name ends at its first NUL byte. Allocates only for a new name. */
int fg_slice__intern(struct fg_slice *s, const char *name, size_t len, uint32_t *ret)
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

int fg_slice__new(int64_t start_ms, int64_t end_ms, uint64_t budget, uint64_t times_reserve,
		  struct fg_slice **ret)
{
	struct fg_slice *s = calloc(1, sizeof(*s));
	uint32_t id;
	int err;

	if (!s)
		return -ENOMEM;
	s->start_ms = start_ms;
	s->end_ms = end_ms;
	s->budget = budget;
	/* Name 0 is the empty string: unknown exe or cgroup. */
	err = fg_slice__intern(s, "", 0, &id);
	if (err < 0 && err != -ENOSPC) {
		fg_slice__free(s);
		return err;
	}
	/* Reserved from here on: the empty name came first, taking from the whole budget. */
	s->times_reserve = times_reserve;
	*ret = s;
	return 0;
}

static bool proc_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct fg_slice_proc *a = &((const struct fg_slice *)ctx)->procs[idx], *b = key;

	return a->pid == b->pid && a->start_time == b->start_time && a->uid == b->uid &&
	       a->comm == b->comm && a->exe == b->exe && a->cgroup == b->cgroup;
}

static uint64_t proc_hash(const struct fg_slice_proc *p)
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
	struct fg_slice_proc k = { .pid = p->pid, .uid = p->uid, .start_time = p->start_time };
	const char *comm = p->comm && *p->comm ? p->comm : "[unknown]";
	uint64_t h;
	int64_t i;
	int err;

	if (s->n_names == 0)
		return -ENOSPC;
	err = fg_slice__intern(s, comm, strlen(comm), &k.comm);
	if (err >= 0)
		err = fg_slice__intern(s, nonnull(p->exe), strlen(nonnull(p->exe)), &k.exe);
	if (err >= 0)
		err = fg_slice__intern(s, nonnull(p->cgroup), strlen(nonnull(p->cgroup)),
				       &k.cgroup);
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
	const struct fg_slice_stack *a = &s->stacks[idx];
	const struct stack_key *k = key;

	return a->proc == k->proc && a->n == k->n &&
	       (k->n == 0 || memcmp(s->frames + a->off, k->frames, k->n * sizeof(uint32_t)) == 0);
}

static uint64_t stack_hash(uint32_t proc, const uint32_t *frames, size_t n)
{
	return fg_hash_bytes(frames, n * sizeof(uint32_t), fg_hash_mix(proc));
}

static void fold_into_other(struct fg_slice *s, struct fg_slice_proc *p, uint64_t count)
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
static void slice_compact(struct fg_slice *s)
{
	uint64_t threshold = 1;
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
		struct fg_slice_stack st = s->stacks[i];

		if (st.count <= threshold) {
			fold_into_other(s, &s->procs[st.proc], st.count);
			s->procs[st.proc].folded_stacks++;
			s->folded_stacks++;
			if (remap)
				remap[i] = FG_SLICE_REF_OTHER | st.proc;
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
		if (s->times[i].ref < FG_SLICE_REF_OTHER)
			s->times[i].ref = remap[s->times[i].ref];
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
		(struct fg_slice_stack){ proc, (uint32_t)s->n_frames, (uint32_t)n, count };
	s->n_frames += n;
	return 0;
}

int fg_slice__add(struct fg_slice *s, const struct fg_window_proc *proc, const uint32_t *frames,
		  size_t n, uint64_t count, bool other, int64_t time_ms)
{
	uint32_t idx;
	int64_t pi;
	int err;

	if (count == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (frames[i] >= s->n_names)
			return -EINVAL;
	s->samples += count;
	pi = slice_proc(s, proc);
	if (pi == -ENOSPC) {
		s->unattributed += count;
		slice_time(s, time_ms, FG_SLICE_REF_UNATTRIBUTED, count);
		return 0;
	}
	if (pi < 0)
		return (int)pi;
	s->procs[pi].samples += count;
	if (other) {
		fold_into_other(s, &s->procs[pi], count);
		slice_time(s, time_ms, FG_SLICE_REF_OTHER | (uint32_t)pi, count);
		return 0;
	}
	err = slice_add_stack(s, (uint32_t)pi, frames, n, count, &idx);
	if (err == -ENOSPC && !s->full) {
		slice_compact(s);
		/* Past the last compaction, new stacks go to "[other]" directly. */
		s->full = s->compactions >= FG_WINDOW_MAX_COMPACTIONS;
		err = slice_add_stack(s, (uint32_t)pi, frames, n, count, &idx);
	}
	if (err == -ENOSPC) {
		fold_into_other(s, &s->procs[pi], count);
		slice_time(s, time_ms, FG_SLICE_REF_OTHER | (uint32_t)pi, count);
		return 0;
	}
	if (err >= 0)
		slice_time(s, time_ms, idx, count);
	return err;
}

void fg_slice__add_lost(struct fg_slice *s, uint64_t n)
{
	s->lost = s->lost + n < n ? UINT64_MAX : s->lost + n;
}

/* A closed slice needs no index and no spare capacity. */
void fg_slice__close(struct fg_slice *s, int64_t end_ms)
{
	s->end_ms = end_ms;
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

/* A name for the file: empty names (unknown exe or cgroup) are stored as unknown. */
static const char *known(const struct fg_slice *s, uint32_t id)
{
	const char *name = fg_slice_name(s, id);

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
		const struct fg_slice_time *t = &s->times[i];
		uint32_t stack =
			t->ref == FG_SLICE_REF_UNATTRIBUTED ? unattributed_at :
			t->ref & FG_SLICE_REF_OTHER ? other_at[t->ref & ~FG_SLICE_REF_OTHER] :
						      t->ref;

		err = fg_slicefile_writer__add_time(w, stack, s->start_ms + t->at,
						    fg_slice_time_count(s, i));
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
		const struct fg_slice_proc *p = &s->procs[i];
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
		const struct fg_slice_stack *st = &s->stacks[i];
		size_t n = MIN((size_t)st->n, (size_t)FG_SLICEFILE_MAX_DEPTH);

		/* A sample with no frames at all has nothing to store but its process. */
		if (n == 0) {
			err = fg_slicefile_writer__add_stack(w, st->proc, other, 1, st->count);
			continue;
		}
		/* Deeper than a file holds: keep the root end, as the kernel's limit does. */
		for (size_t k = 0; k < n; k++)
			frames[k] = fg_slice_name(s, s->frames[st->off + k]);
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
		const struct fg_slicefile_process rest = { .comm = FG_PROCFRAME_OTHER };
		const char *rest_frame[] = { FG_PROCFRAME_OTHER };
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
