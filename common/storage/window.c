/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "profile/procframe.h"
#include "profile/timed.h"
#include "profile/top.h"
#include "storage/slice.h"
#include "storage/window.h"

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
	/*
	 * The figures of the slices expired so far: with those of the slices
	 * held, the window's totals (fg_window__stats()).
	 */
	uint64_t expired_samples, expired_folded_samples, expired_folded_stacks,
		expired_unattributed_samples, expired_compactions;
	uint64_t expired_slices;
	uint64_t last_times; /* the bytes of times the last slice closed held (or would have) */
};

/* The least a slice's times keep free of the profile (profile_budget()). */
#define TIMES_RESERVE_MIN 4096

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
	uint64_t reserve =
		MIN(w->slice_budget / 4, MAX((uint64_t)TIMES_RESERVE_MIN, 2 * w->last_times));
	int err = fg_slice__new(start, slice_end_for(w, now), w->slice_budget, reserve, &w->open);

	if (err >= 0)
		w->epoch++;
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
		fg_slice__free(w->closed[i]);
	free(w->closed);
	fg_slice__free(w->open);
	free(w);
	return NULL;
}

int fg_window__intern(struct fg_window *w, const char *name, size_t len, uint32_t *ret_id)
{
	return fg_slice__intern(w->open, name, len, ret_id);
}

uint64_t fg_window__epoch(const struct fg_window *w)
{
	return w->epoch;
}

int fg_window__add(struct fg_window *w, const struct fg_window_proc *proc, const uint32_t *frames,
		   size_t n, uint64_t count, int64_t time_ms)
{
	static const uint32_t none[1];

	/* No frames: an empty stack of its own, and no NULL for memcpy and the hash. */
	return fg_slice__add(w->open, proc, n ? frames : none, n, count, false, time_ms);
}

int fg_window__add_other(struct fg_window *w, const struct fg_window_proc *proc, uint64_t count,
			 int64_t time_ms)
{
	return fg_slice__add(w->open, proc, NULL, 0, count, true, time_ms);
}

void fg_window__add_lost(struct fg_window *w, uint64_t n)
{
	fg_slice__add_lost(w->open, n);
}

void fg_window__set_expire_hook(struct fg_window *w, fg_window_expire_fn fn, void *ctx)
{
	w->expire_fn = fn;
	w->expire_ctx = ctx;
}

int fg_window__expire(struct fg_window *w)
{
	struct fg_slice *s;

	if (w->n_closed == 0)
		return 0;
	s = w->closed[0];
	if (w->expire_fn)
		w->expire_fn(w->expire_ctx, s);
	w->expired_samples += s->samples;
	w->expired_folded_samples += s->folded_samples;
	w->expired_folded_stacks += s->folded_stacks;
	w->expired_unattributed_samples += s->unattributed;
	w->expired_compactions += s->compactions;
	fg_slice__free(s);
	memmove(w->closed, w->closed + 1, (w->n_closed - 1) * sizeof(*w->closed));
	w->n_closed--;
	w->expired_slices++;
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
					old->n_times * (sizeof(struct fg_slice_time) +
							(old->time_counts ? sizeof(uint32_t) : 0));
			w->open = NULL;
			err = open_slice(w, abut ? old->end_ms : now_ms, now_ms);
			if (err < 0) {
				w->open = old; /* keep adding to the old one; try again next tick */
			} else {
				fg_slice__close(old, MIN(now_ms, old->end_ms) > old->start_ms ?
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

static void proc_view(const struct fg_slice *s, const struct fg_slice_proc *p,
		      struct fg_window_proc *ret)
{
	*ret = (struct fg_window_proc){
		.pid = p->pid,
		.start_time = p->start_time,
		.uid = p->uid,
		.comm = fg_slice_name(s, p->comm),
		.exe = fg_slice_name(s, p->exe),
		.cgroup = fg_slice_name(s, p->cgroup),
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
			const struct fg_slice_time *t = &s->times[i];
			int64_t at = s->start_ms + t->at;

			if (at < since || at >= until)
				continue;
			if (t->ref == FG_SLICE_REF_UNATTRIBUTED)
				c->unattributed += fg_slice_time_count(s, i);
			else if (t->ref & FG_SLICE_REF_OTHER)
				c->other[t->ref & ~FG_SLICE_REF_OTHER] += fg_slice_time_count(s, i);
			else
				c->stack[t->ref] += fg_slice_time_count(s, i);
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
	err = fg_folded__intern(query_model(q), fg_slice_name(s, id), strlen(fg_slice_name(s, id)),
				ret);
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
static int query_roots(struct query_ctx *q, const struct fg_slice *s, const struct fg_slice_proc *p,
		       size_t *ret_n)
{
	size_t n = 0;
	char buf[256]; /* a comm is 15 bytes; "[unknown]" */
	const char *name;
	int err = 0;

	if (q->roots & (FG_WINDOW_ROOTS_CGROUP | FG_WINDOW_ROOTS_CGROUP_NAME)) {
		const char *cg = fg_window_cgroup_frame(fg_slice_name(s, p->cgroup), q->roots);

		err = fg_folded__intern(query_model(q), cg, strlen(cg), &q->stack[n++]);
	}
	if (err >= 0 && (q->roots & FG_WINDOW_ROOTS_PID)) {
		name = fg_window_process_frame(fg_slice_name(s, p->comm), p->pid, q->roots, buf,
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
	const struct fg_slice_stack *st = other >= 0 ? NULL : &s->stacks[i];
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

		err = fg_folded__intern(q->out, FG_PROCFRAME_OTHER, strlen(FG_PROCFRAME_OTHER),
					&id);
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
	size_t slot = ref == FG_SLICE_REF_UNATTRIBUTED ? s->n_stacks + s->n_procs :
		      ref & FG_SLICE_REF_OTHER         ? s->n_stacks + (ref & ~FG_SLICE_REF_OTHER) :
							 ref;
	size_t n;
	int err;

	if (q->refs[slot] != UINT32_MAX - 1) {
		*ret = q->refs[slot];
		return 0;
	}
	q->refs[slot] = UINT32_MAX;
	if (ref == FG_SLICE_REF_UNATTRIBUTED) {
		if (!q->match_all)
			goto out;
		err = fg_folded__intern(query_model(q), FG_PROCFRAME_OTHER,
					strlen(FG_PROCFRAME_OTHER), &q->stack[0]);
		n = 1;
	} else if (ref & FG_SLICE_REF_OTHER) {
		if (!q->wanted[ref & ~FG_SLICE_REF_OTHER])
			goto out;
		err = query_stack(q, s, -1, ref & ~FG_SLICE_REF_OTHER, &n);
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
			err = fg_timed__add_id(q->timed, at, id, fg_slice_time_count(s, i));
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
		const struct fg_slice_stack *st = &s->stacks[i];
		const struct fg_slice_proc *p = &s->procs[st->proc];
		const char *leaf;

		if (!q->wanted[st->proc] || q->c.stack[i] == 0)
			continue;
		/* A sample without frames has no leaf: it counts for its process only. */
		leaf = st->n ? fg_slice_name(s, s->frames[st->off + st->n - 1]) : NULL;
		tp = (struct fg_top_process){ p->pid, p->start_time, p->uid,
					      fg_slice_name(s, p->comm) };
		err = fg_top__add(q->top, &tp, leaf, leaf ? strlen(leaf) : 0, q->c.stack[i]);
		if (err < 0)
			return err;
	}
	/* Every matched process, also one whose samples were all folded into "[other]". */
	for (size_t i = 0; i < s->n_procs; i++) {
		const struct fg_slice_proc *p = &s->procs[i];

		if (!q->wanted[i] || q->c.other[i] == 0)
			continue;
		tp = (struct fg_top_process){ p->pid, p->start_time, p->uid,
					      fg_slice_name(s, p->comm) };
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
		.total_samples = w->expired_samples,
		.total_folded_samples = w->expired_folded_samples,
		.total_folded_stacks = w->expired_folded_stacks,
		.total_unattributed_samples = w->expired_unattributed_samples,
		.compactions = w->expired_compactions,
		.expired_slices = w->expired_slices,
	};
	for (size_t i = 0; i <= w->n_closed; i++) {
		const struct fg_slice *s = i < w->n_closed ? w->closed[i] : w->open;

		if (!s)
			continue;
		if (ret->slices++ == 0)
			ret->oldest_ms = s->start_ms;
		ret->bytes += fg_slice__bytes(s);
		ret->times_bytes += fg_slice__times_bytes(s);
		ret->untimed_slices += s->times_lost;
		ret->samples += s->samples;
		ret->folded_samples += s->folded_samples;
		ret->unattributed_samples += s->unattributed;
		ret->total_folded_stacks += s->folded_stacks;
		ret->compactions += s->compactions;
	}
	/* Since the window was made: what expired, and what it holds. */
	ret->total_samples += ret->samples;
	ret->total_folded_samples += ret->folded_samples;
	ret->total_unattributed_samples += ret->unattributed_samples;
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
