/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/macro.h"
#include "consumers/fgd-history.h"
#include "consumers/fgd-query.h"
#include "fgd-clock.h"
#include "profile/folded.h"
#include "profile/procframe.h"
#include "profile/timed.h"
#include "profile/top.h"
#include "profile/view.h"
#include "proto/meta.h"
#include "proto/selector.h"
#include "render/result.h"
#include "storage/slicefile.h"
#include "storage/spans.h"

/* What one top query may hold: processes, and (process, leaf frame) pairs; past them, counted. */
#define TOP_MAX_PROCESSES (1u << 18)
#define TOP_MAX_LEAVES (1u << 20)
/*
 * Time no slice covers shorter than this is not named a gap: files written
 * before slices abutted left up to a drain round (a second at most) between
 * them, and a restart takes longer.
 */
#define GAP_MIN_MS 1000
/* Gaps and unreadable files an answer lists; past them, counted and summed. */
#define MISSING_LISTED 16

struct fgd_snapshot {
	struct fg_result *result; /* owned */
};

struct fgd_snapshot *fgd_snapshot__free(struct fgd_snapshot *s)
{
	if (!s)
		return NULL;
	fg_result__free(s->result);
	free(s);
	return NULL;
}

size_t fgd_snapshot__bytes(const struct fgd_snapshot *s)
{
	return sizeof(*s) + (s->result ? fg_result__bytes(s->result) : 0);
}

int fgd_snapshot__emit(struct fgd_snapshot *s, fg_write_fn fn, void *ctx, size_t budget)
{
	return fg_result__emit(s->result, fn, ctx, budget);
}

/*
 * How far outside a stored slice's span a query looks for its samples: one
 * drained late lies past it by a drain round (a second at most when idle).
 */
#define HISTORY_SLACK_MS 5000

struct match_ctx {
	const struct fg_selector *sel;
	const struct fg_view *view; /* the client's */
};

/*
 * What an answer is missing of its period, whoever's processes it asks
 * for: files of the history it could not read, and time no slice covers
 * (fgd was not running, its loop stalled, or a slice was not written). The
 * time the slices read cover, and the unreadable files' spans, are
 * gathered as the query reads; the gaps are what they leave of the period.
 */
struct missing {
	struct fg_span *known; /* owned: covered, or named unreadable */
	size_t n_known, cap_known;
	struct fg_history_unreadable bad[MISSING_LISTED];
	uint64_t n_bad;
	struct fg_span gaps[MISSING_LISTED];
	size_t n_gaps;
	int64_t gap_ms;
	int err; /* -ENOMEM when a span could not be kept: then no gap is named */
};

static void missing_done(struct missing *m)
{
	free(m->known);
}

static void missing_span(struct missing *m, int64_t start, int64_t end)
{
	if (FG_GROW(m->known, m->cap_known, m->n_known + 1) < 0) {
		m->err = -ENOMEM;
		return;
	}
	m->known[m->n_known++] = (struct fg_span){ start, end };
}

static int window_span(void *ctx, int64_t start, int64_t end)
{
	missing_span(ctx, start, end);
	return 0;
}

/* ns to ms, the span widened to whole ms, so that abutting spans still abut. */
static struct fg_span span_ms(uint64_t start_ns, uint64_t end_ns)
{
	return (struct fg_span){ (int64_t)(start_ns / 1000000),
				 (int64_t)((end_ns + 999999) / 1000000) };
}

/*
 * Whether the query takes every process the client may see, and the client
 * sees every process: it then takes the unattributed samples too.
 */
static bool whole_machine(const struct match_ctx *m)
{
	return fg_view_shows_all(m->view) && fg_selector__is_all(m->sel);
}

static bool match(void *ctx, const struct fg_window_proc *p)
{
	const struct match_ctx *m = ctx;

	/* Non-root users see only what they could record: their own processes. */
	if (!fg_view_shows_process(m->view, p->uid))
		return false;
	return fg_selector__match(m->sel, p->pid, p->uid, p->comm, p->exe, p->cgroup);
}

/*
 * What a query does with each matched stack of a stored slice: p (borrowed
 * for the call) is its process, rest true for the "[other processes]"
 * pseudo-process. 0 or a negative errno, which stops the reading.
 */
typedef int (*stored_stack_fn)(void *ctx, const struct fg_slicefile *f,
			       const struct fg_slicefile_stack *st, const struct fg_window_proc *p,
			       bool rest);

/*
 * What a timed query does with each time of a matched stack of a stored
 * slice: count samples of stack i of f at time_ms. 0 or a negative errno.
 */
typedef int (*stored_time_fn)(void *ctx, const struct fg_slicefile *f, uint64_t serial, size_t i,
			      const struct fg_window_proc *p, bool rest, int64_t time_ms,
			      uint64_t count);

/* Reading the history for a query: which processes it covers, and its figures. */
struct disk_query {
	struct match_ctx *mc;
	bool match_all;
	int64_t since, until;   /* the query's range: a file it cuts is read by its times */
	stored_stack_fn fn;     /* a profile's or a top list's query; or */
	stored_time_fn time_fn; /* a timed query's */
	void *ctx;
	uint32_t frequency;          /* the window's: the rate other slices are compared with */
	struct fg_window_result res; /* the disk's part alone */
	bool *wanted;                /* owned: per process of the slice read */
	size_t cap_wanted;
	uint64_t *in; /* owned: per stack of a cut file, its samples in the range */
	size_t cap_in;
	struct missing *missing; /* borrowed: what the files cover, and those that did not read */
};

static int on_unreadable(void *ctx, const struct fg_history_unreadable *u)
{
	struct disk_query *dq = ctx;
	struct missing *m = dq->missing;
	struct fg_span sp = span_ms(u->start_ns, u->end_ns);

	/* Read for the slack around the range: one outside it is not this answer's. */
	if (sp.start >= dq->until || sp.end <= dq->since)
		return 0;
	if (m->n_bad < MISSING_LISTED)
		m->bad[m->n_bad] = *u;
	m->n_bad++;
	/* Said as unreadable, not again as a gap. */
	missing_span(m, sp.start, sp.end);
	return 0;
}

static bool is_other_processes(const struct fg_slicefile_process *p)
{
	return p->pid == 0 && p->comm && strcmp(p->comm, FG_PROCFRAME_OTHER) == 0;
}

/* A stack of the one frame "[other]": what the memory ceiling folded away. */
static bool is_folded_stack(const struct fg_slicefile *f, const struct fg_slicefile_stack *st)
{
	return st->n == 1 && strcmp(fg_slicefile__string(f, st->frames[0]), FG_WINDOW_OTHER) == 0;
}

static void stored_proc(const struct fg_slicefile_process *p, struct fg_window_proc *ret)
{
	*ret = (struct fg_window_proc){ p->pid, p->start_time, p->uid, p->comm ?: "[unknown]",
					p->exe, p->cgroup };
}

/*
 * The times of a stored slice the query's range cuts, to the tick: its
 * stacks' samples in the range into dq->in, or as a timed query wants them.
 * A slice without times counts whole (untimed_slices), or for a timed
 * query, not at all.
 */
static int stored_times(struct disk_query *dq, const struct fg_slicefile *f, bool cut, bool *ret_in)
{
	size_t n_stacks = fg_slicefile__n_stacks(f);
	struct fg_window_proc wp;
	int err;

	*ret_in = false;
	if (!fg_slicefile__tick_ms(f)) {
		if (cut || dq->time_fn)
			dq->res.untimed_slices++;
		return 0;
	}
	if (!cut && !dq->time_fn)
		return 0;
	err = FG_GROW(dq->in, dq->cap_in, n_stacks + 1);
	if (err < 0)
		return err;
	memset(dq->in, 0, n_stacks * sizeof(*dq->in));
	for (size_t i = 0; i < fg_slicefile__n_times(f); i++) {
		const struct fg_slicefile_time *t = fg_slicefile__time(f, i);
		int64_t at = t->time_ms;
		struct fg_slicefile_stack st;
		const struct fg_slicefile_process *p;

		if (at < dq->since || at >= dq->until)
			continue;
		dq->in[t->stack] += t->count;
		if (!dq->time_fn)
			continue;
		fg_slicefile__stack(f, t->stack, &st);
		if (!dq->wanted[st.proc])
			continue;
		p = fg_slicefile__process(f, st.proc);
		stored_proc(p, &wp);
		/* The files read before this one: what tells one file from the next. */
		err = dq->time_fn(dq->ctx, f, dq->res.slices, t->stack, &wp, is_other_processes(p),
				  at, t->count);
		if (err < 0)
			return err;
	}
	*ret_in = true;
	return 0;
}

/*
 * Where a stored slice's samples lie (Unix ms, [*ret_lo, *ret_hi)): by
 * their times when it kept them, as the window's slices say (a sample
 * drained after its slice closed lies past the slice's end), else the
 * slice's own span.
 */
static void stored_extent(const struct fg_slicefile *f, int64_t *ret_lo, int64_t *ret_hi)
{
	size_t n = fg_slicefile__n_times(f);
	/* The ms that hold its span: a slice shorter than a ms still holds one. */
	struct fg_span whole = span_ms(fg_slicefile__start(f), fg_slicefile__end(f));

	*ret_lo = whole.start;
	*ret_hi = whole.end;
	if (!fg_slicefile__tick_ms(f) || n == 0)
		return;
	*ret_lo = INT64_MAX;
	*ret_hi = INT64_MIN;
	for (size_t i = 0; i < n; i++) {
		int64_t at = fg_slicefile__time(f, i)->time_ms;

		*ret_lo = MIN(*ret_lo, at);
		*ret_hi = MAX(*ret_hi, at + 1);
	}
}

/*
 * What a stored slice covers of [start, end) (its span, cut to the range
 * where its times allow): the time its stretches hold, as the window counts
 * its slices' spans, so that a merged file gives the figures its sources
 * gave; and its losses, where a stretch lies in the range.
 */
static void stored_coverage(struct disk_query *dq, const struct fg_slicefile *f, int64_t start,
			    int64_t end)
{
	for (size_t i = 0; i < fg_slicefile__n_coverage(f); i++) {
		const struct fg_slicefile_span *c = fg_slicefile__coverage(f, i);
		struct fg_span sp = span_ms(c->start_ns, c->end_ns);
		/* ms as the span gives them: a file of whole ms covers exactly those. */
		int64_t lo = MAX((int64_t)(c->start_ns / 1000000), start),
			hi = MIN((int64_t)(c->end_ns / 1000000), end);

		dq->res.covered_ms += MAX(hi - lo, (int64_t)0);
		if (sp.start < dq->until && sp.end > dq->since)
			dq->res.lost += c->lost;
	}
}

/* Hands a stored slice's matched stacks to the query, counting them as the window's queries do. */
static int read_stored_slice(void *ctx, const struct fg_slicefile *f)
{
	struct disk_query *dq = ctx;
	int64_t start = (int64_t)(fg_slicefile__start(f) / 1000000),
		end = (int64_t)(fg_slicefile__end(f) / 1000000), lo, hi;
	size_t n_procs = fg_slicefile__n_processes(f);
	uint64_t before = dq->res.samples;
	bool cut, in_range;
	struct fg_window_proc wp;
	int err;

	/*
	 * Read for the slack around the range (query_history()): its samples
	 * may all lie outside. What it covers is its span and its samples'
	 * times, as for the window's slices (slice_extent()): a period in its
	 * span that none of its samples fall in has no samples, not no data.
	 */
	stored_extent(f, &lo, &hi);
	if (MIN(lo, start) >= dq->until || MAX(hi, end) <= dq->since)
		return 0;
	cut = lo < dq->since || hi > dq->until;
	/* Its time is known, whatever the query takes of it: no gap. */
	for (size_t i = 0; i < fg_slicefile__n_coverage(f); i++) {
		const struct fg_slicefile_span *c = fg_slicefile__coverage(f, i);
		struct fg_span sp = span_ms(c->start_ns, c->end_ns);

		missing_span(dq->missing, sp.start, sp.end);
	}

	err = FG_GROW(dq->wanted, dq->cap_wanted, n_procs + 1);
	if (err < 0)
		return err;
	/* The selector once per process, not once per stack. */
	for (size_t i = 0; i < n_procs; i++) {
		const struct fg_slicefile_process *p = fg_slicefile__process(f, i);

		stored_proc(p, &wp);
		dq->wanted[i] = is_other_processes(p) ? dq->match_all : match(dq->mc, &wp);
		dq->res.processes += dq->wanted[i] && !is_other_processes(p);
	}
	err = stored_times(dq, f, cut, &in_range);
	if (err < 0)
		return err;
	/* A timed query places what it can: a file without times has nothing to place. */
	if (dq->time_fn && !in_range)
		return 0;
	for (size_t i = 0; i < fg_slicefile__n_stacks(f); i++) {
		const struct fg_slicefile_process *p;
		struct fg_slicefile_stack st;
		bool rest;

		fg_slicefile__stack(f, i, &st);
		if (!dq->wanted[st.proc])
			continue;
		if (in_range)
			st.count = dq->in[i];
		if (st.count == 0)
			continue;
		p = fg_slicefile__process(f, st.proc);
		rest = is_other_processes(p);
		stored_proc(p, &wp);
		err = dq->fn ? dq->fn(dq->ctx, f, &st, &wp, rest) : 0;
		if (err < 0)
			return err;
		dq->res.samples += st.count;
		if (rest)
			dq->res.unattributed += st.count;
		else if (is_folded_stack(f, &st))
			dq->res.folded_samples += st.count;
	}
	/* Counts at another rate weigh differently: what a snapshot adds up, it says. */
	if (fg_slicefile__frequency(f) != dq->frequency)
		dq->res.other_rate_samples += dq->res.samples - before;
	if (in_range) {
		start = MAX(start, dq->since);
		end = MIN(end, dq->until);
	}
	if (dq->res.slices++ == 0 || start < dq->res.first_ms)
		dq->res.first_ms = start;
	dq->res.last_ms = MAX(dq->res.last_ms, end);
	stored_coverage(dq, f, start, end);
	return 0;
}

/* Adds the figures of another part of a query's period to res. */
static void add_result(struct fg_window_result *res, const struct fg_window_result *part)
{
	/* A timed query's part whose every slice kept no times has no slices, only those. */
	res->untimed_slices += part->untimed_slices;
	if (part->slices == 0)
		return;
	if (res->slices == 0 || part->first_ms < res->first_ms)
		res->first_ms = part->first_ms;
	res->last_ms = MAX(res->last_ms, part->last_ms);
	res->slices += part->slices;
	res->covered_ms += part->covered_ms;
	res->processes += part->processes;
	res->samples += part->samples;
	res->folded_samples += part->folded_samples;
	res->folded_stacks += part->folded_stacks;
	res->unattributed += part->unattributed;
	res->other_rate_samples += part->other_rate_samples;
	res->lost += part->lost;
}

/*
 * The part of [since, until) older than the window in memory comes from the
 * history on disk: slices written before a restart, or expired from the
 * window. Slices still in memory are not read twice. fn gets every matched
 * stack, oldest slice first; the figures are added to res.
 */
static int query_history(const struct fgd_alwayson_data *a, int64_t since, int64_t until,
			 struct match_ctx *mc, bool match_all, stored_stack_fn fn,
			 stored_time_fn time_fn, void *ctx, struct missing *missing,
			 struct fg_window_result *res)
{
	struct disk_query dq = { .mc = mc,
				 .missing = missing,
				 .match_all = match_all,
				 .since = since,
				 .until = until,
				 .fn = fn,
				 .time_fn = time_fn,
				 .ctx = ctx,
				 .frequency = a->frequency };
	struct fg_window_stats ws;
	int64_t from, to;
	int r;

	if (!a->history)
		return 0;
	fg_window__stats(a->window, &ws);
	/*
	 * The files of slices the window still holds (from its oldest on) are
	 * read there, not twice. A slice's samples may lie a little outside its
	 * span (drained after it closed), so the files within HISTORY_SLACK_MS
	 * of the range are read too, and their samples' times say what is in
	 * it, as in the window: a sample counts in exactly one range.
	 */
	if (since < 0 || until <= since)
		return 0;
	from = MAX(since, (int64_t)HISTORY_SLACK_MS) - HISTORY_SLACK_MS;
	to = MIN(until, ws.oldest_ms - HISTORY_SLACK_MS) + HISTORY_SLACK_MS;
	if (to <= from)
		return 0;
	r = fg_history__read(a->history, (uint64_t)from * 1000000, (uint64_t)to * 1000000,
			     read_stored_slice, on_unreadable, &dq);
	free(dq.wanted);
	free(dq.in);
	if (r < 0)
		return r;
	add_result(res, &dq.res);
	return 0;
}

/* A snapshot's model, fed from the history. */
struct stored_model {
	struct fg_folded *out; /* borrowed */
	unsigned roots;        /* FG_WINDOW_ROOTS_* */
	uint32_t *stack;       /* owned: one stack's name ids in out */
	size_t cap_stack;
	uint64_t max_bytes; /* past it, -ENOBUFS: a week of history must not be read whole */
};

/*
 * Adds a stored stack to the model in the window's form (fg_window__query()):
 * "[cgroup;]comm;frame;...", "[other processes]" alone.
 */
static int add_stored_stack(void *ctx, const struct fg_slicefile *f,
			    const struct fg_slicefile_stack *st, const struct fg_window_proc *p,
			    bool rest)
{
	struct stored_model *sm = ctx;
	size_t roots = sm->roots & (FG_WINDOW_ROOTS_CGROUP | FG_WINDOW_ROOTS_CGROUP_NAME) ? 2 : 1;
	const char *cg = fg_window_cgroup_frame(p->cgroup, sm->roots);
	char buf[256];
	const char *proc = fg_window_process_frame(p->comm, p->pid, sm->roots, buf, sizeof(buf));
	int err = FG_GROW(sm->stack, sm->cap_stack, st->n + roots);

	if (err < 0)
		return err;
	if (roots == 2)
		err = fg_folded__intern(sm->out, cg, strlen(cg), &sm->stack[0]);
	if (err >= 0)
		err = fg_folded__intern(sm->out, proc, strlen(proc), &sm->stack[roots - 1]);
	for (size_t k = 0; err >= 0 && k < st->n; k++) {
		const char *name = fg_slicefile__string(f, st->frames[k]);

		err = fg_folded__intern(sm->out, name, strlen(name), &sm->stack[k + roots]);
	}
	if (err < 0)
		return err;
	err = rest ? fg_folded__add(sm->out, sm->stack + roots, st->n, (double)st->count) :
		     fg_folded__add(sm->out, sm->stack, st->n + roots, (double)st->count);
	if (err >= 0 && fg_folded__bytes(sm->out) > sm->max_bytes)
		return -ENOBUFS;
	return err;
}

/* A timed snapshot's profile, fed from the history. */
struct stored_timed {
	struct fg_timed *out; /* borrowed */
	uint64_t serial;      /* the file ids is for */
	uint32_t *ids;        /* owned: per stack of that file, its id in out, or UINT32_MAX */
	size_t cap_ids;
	uint32_t *stack; /* owned: one stack's name ids in out */
	size_t cap_stack;
	uint64_t max_bytes; /* past it, -ENOBUFS */
};

/* Adds a stored time to the profile: its stack as the window's are, "[other processes]" alone. */
static int add_stored_time(void *ctx, const struct fg_slicefile *f, uint64_t serial, size_t i,
			   const struct fg_window_proc *p, bool rest, int64_t time_ms,
			   uint64_t count)
{
	struct stored_timed *st = ctx;
	struct fg_folded *model = fg_timed__model(st->out);
	size_t n_stacks = fg_slicefile__n_stacks(f);
	int err = 0;

	if (!st->ids || st->serial != serial) {
		err = FG_GROW(st->ids, st->cap_ids, n_stacks + 1);
		if (err < 0)
			return err;
		memset(st->ids, 0xff, n_stacks * sizeof(*st->ids));
		st->serial = serial;
	}
	if (st->ids[i] == UINT32_MAX) {
		struct fg_slicefile_stack s;

		fg_slicefile__stack(f, i, &s);
		err = FG_GROW(st->stack, st->cap_stack, s.n + 1);
		if (err >= 0)
			err = fg_folded__intern(model, p->comm, strlen(p->comm), &st->stack[0]);
		for (size_t k = 0; err >= 0 && k < s.n; k++) {
			const char *name = fg_slicefile__string(f, s.frames[k]);

			err = fg_folded__intern(model, name, strlen(name), &st->stack[k + 1]);
		}
		if (err >= 0)
			err = rest ? fg_folded__add_id(model, st->stack + 1, s.n, 0, &st->ids[i]) :
				     fg_folded__add_id(model, st->stack, s.n + 1, 0, &st->ids[i]);
		if (err < 0)
			return err;
	}
	/* A tick's count may pass what one sample weighs: in parts, at the tick's time. */
	for (; count > 0 && err >= 0; count -= MIN(count, (uint64_t)UINT32_MAX))
		err = fg_timed__add_id(st->out, time_ms, st->ids[i],
				       (uint32_t)MIN(count, (uint64_t)UINT32_MAX));
	if (err >= 0 && fg_timed__bytes(st->out) > st->max_bytes)
		return -ENOBUFS;
	return err;
}

/* Feeds a stored stack to a top list: its leaf, or none for what was folded into "[other]". */
static int top_stored_stack(void *ctx, const struct fg_slicefile *f,
			    const struct fg_slicefile_stack *st, const struct fg_window_proc *p,
			    bool rest)
{
	const struct fg_top_process tp = { p->pid, p->start_time, p->uid, p->comm,
					   fg_slicefile__frequency(f) };
	const char *leaf = st->n && !is_folded_stack(f, st) ?
				   fg_slicefile__string(f, st->frames[st->n - 1]) :
				   NULL;

	(void)rest; /* top never asks for the unattributed */
	return fg_top__add(ctx, &tp, leaf, leaf ? strlen(leaf) : 0, st->count);
}

/* The range a query asks for, and its selector. */
static int query_setup(const struct fg_query_request *q, int64_t *since, int64_t *until,
		       struct fg_selector **sel, char *err, size_t size)
{
	struct fg_selector_spec spec = {
		.pid = q->pid,
		.uid = q->uid,
		.comm = q->comm,
		.cgroup = q->cgroup,
		.exe = q->exe,
	};
	const char *why = NULL;
	int r;

	*since = q->since_ms;
	*until = q->until_ms ? q->until_ms : fgd_wall_ms() + 1;
	r = fg_selector__new(&spec, sel, &why);
	if (r < 0)
		snprintf(err, size, "%s", why ? why : strerror(-r));
	return r;
}

/*
 * The gaps: what neither the files read nor the window cover of [since,
 * until), up to the window's latest tick (what is after it is not history
 * yet). Without room to gather the spans, none is named.
 */
static void missing_finish(struct missing *m, const struct fgd_alwayson_data *a, int64_t since,
			   int64_t until)
{
	struct fg_window_stats ws;

	fg_window__stats(a->window, &ws);
	(void)fg_window__coverage(a->window, window_span, m);
	if (m->err < 0)
		return;
	m->n_known = fg_spans_unite(m->known, m->n_known);
	m->n_gaps =
		fg_spans_gaps(m->known, m->n_known, MAX(since, (int64_t)0), MIN(until, ws.now_ms),
			      GAP_MIN_MS, m->gaps, MISSING_LISTED, &m->gap_ms);
}

/* Local time of ms: "HH:MM:SS", ".mmm" when not whole, the date before it when not today's. */
static void format_ms(char *buf, size_t size, int64_t ms)
{
	time_t t = (time_t)(ms / 1000), now = time(NULL);
	struct tm tm, today;
	size_t n;

	localtime_r(&t, &tm);
	localtime_r(&now, &today);
	n = strftime(buf, size,
		     tm.tm_yday == today.tm_yday && tm.tm_year == today.tm_year ?
			     "%H:%M:%S" :
			     "%Y-%m-%d %H:%M:%S",
		     &tm);
	if (ms % 1000 && n < size)
		snprintf(buf + n, size - n, ".%03d", (int)(ms % 1000));
}

/* Appends to buf (of size, holding a string) as snprintf() would. */
_printf_(3, 4) static void append(char *buf, size_t size, const char *fmt, ...)
{
	size_t n = strnlen(buf, size);
	va_list ap;

	if (n + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, size - n, fmt, ap);
	va_end(ap);
}

/*
 * What the answer is missing, in words: the gaps, the files that did not
 * read and why, the samples lost. Empty when nothing is.
 */
static void missing_text(char *buf, size_t size, const struct missing *m,
			 const struct fg_window_result *res)
{
	char a[40], b[40];
	const char *sep = "";

	buf[0] = '\0';
	if (m->n_gaps) {
		format_ms(a, sizeof(a), m->gaps[0].start);
		format_ms(b, sizeof(b), m->gaps[0].end);
		append(buf, size, "no data for %s-%s", a, b);
		if (m->n_gaps > 1)
			append(buf, size, " and %zu more stretches (%.1f s in all)", m->n_gaps - 1,
			       (double)m->gap_ms / 1000.0);
		append(buf, size, ": fgd was not sampling or lost samples");
		sep = "; ";
	}
	if (m->n_bad) {
		enum fg_history_damage why = m->bad[0].why;
		struct fg_span sp = span_ms(m->bad[0].start_ns, m->bad[0].end_ns);

		format_ms(a, sizeof(a), sp.start);
		format_ms(b, sizeof(b), sp.end);
		append(buf, size,
		       "%s%" PRIu64 " slice%s of the history could not be read: %s-%s (%s)", sep,
		       m->n_bad, m->n_bad > 1 ? "s" : "", a, b, fg_history_damage_name(why));
		if (m->n_bad > 1)
			append(buf, size, " and %" PRIu64 " more", m->n_bad - 1);
		sep = "; ";
	}
	if (res->lost)
		append(buf, size, "%sfgd lost %" PRIu64 " sample%s in the slices read", sep,
		       res->lost, res->lost > 1 ? "s" : "");
}

static void no_data(const struct fg_window *w, const struct fg_window_result *res,
		    const struct match_ctx *mc, const struct missing *m, char *err, size_t size)
{
	bool selective = !whole_machine(mc);
	struct fg_window_stats st;
	char more[384];

	fg_window__stats(w, &st);
	if (res->slices == 0)
		snprintf(err, size,
			 "no always-on data for that period: the window in memory covers the "
			 "last %" PRId64 " s",
			 (fgd_wall_ms() - st.oldest_ms) / 1000);
	else if (selective)
		snprintf(err, size,
			 "no samples of the selected processes in that period "
			 "(%" PRIu64 " slices looked at)",
			 res->slices);
	else
		snprintf(err, size, "no samples in that period (%" PRIu64 " slices looked at)",
			 res->slices);
	/* Not idle time: what the period is missing, it says. */
	missing_text(more, sizeof(more), m, res);
	if (more[0])
		append(err, size, "; %s", more);
}

/* The answer's metadata about what it is missing: "lost_samples", the gaps, the unreadable files. */
static int missing_meta(const struct missing *m, const struct fg_window_result *res,
			struct fg_meta_missing *ret)
{
	*ret = (struct fg_meta_missing){
		.lost_samples = res->lost,
		.gap_count = m->n_gaps,
		.gap_ms = m->gap_ms,
		.unreadable_slices = m->n_bad,
		.gaps = calloc(MISSING_LISTED, sizeof(*ret->gaps)),
		.unreadable = calloc(MISSING_LISTED, sizeof(*ret->unreadable)),
	};
	if (!ret->gaps || !ret->unreadable)
		return -ENOMEM;
	for (size_t i = 0; i < MIN(m->n_gaps, (size_t)MISSING_LISTED); i++)
		ret->gaps[ret->n_gaps++] = (struct fg_meta_span){
			.from_ms = m->gaps[i].start,
			.until_ms = m->gaps[i].end,
		};
	for (size_t i = 0; i < MIN(m->n_bad, (uint64_t)MISSING_LISTED); i++) {
		struct fg_span sp = span_ms(m->bad[i].start_ns, m->bad[i].end_ns);

		ret->unreadable[ret->n_unreadable++] = (struct fg_meta_span){
			.from_ms = sp.start,
			.until_ms = sp.end,
			.reason = fg_history_damage_name(m->bad[i].why),
		};
	}
	return 0;
}

/* The answer's metadata (proto/meta.h); top (may be NULL) adds what its list dropped. */
static struct json_object *result_json(const struct fgd_alwayson_data *a,
				       const struct fg_window_result *res,
				       const struct missing *missing, const struct fg_view *view,
				       const struct fg_top_stats *top)
{
	_cleanup_(fg_snapshot_meta_done) struct fg_snapshot_meta m = {};
	struct fg_window_stats st;

	if (missing_meta(missing, res, &m.missing) < 0)
		return NULL;
	fg_window__stats(a->window, &st);
	m.source = "always-on";
	m.event = a->event;
	/* Off-CPU: "samples" and the figures below count µs blocked. */
	m.unit = a->off_cpu ? "us" : NULL;
	m.frequency = a->frequency;
	m.call_graph = fg_call_graph_name(a->call_graph);
	m.first_ms = res->first_ms;
	m.last_ms = res->last_ms;
	m.duration_ms = res->last_ms - res->first_ms;
	m.covered_ms = res->covered_ms;
	m.slices = res->slices;
	m.slice_seconds = a->slice_seconds;
	m.processes = res->processes;
	m.samples = res->samples;
	m.folded_samples = res->folded_samples;
	m.folded_stacks = res->folded_stacks;
	m.unattributed_samples = res->unattributed;
	m.other_rate_samples = res->other_rate_samples;
	m.untimed_slices = res->untimed_slices;
	m.memory_max = st.memory_max;
	m.window_total_folded_samples = st.total_folded_samples;
	m.kernel_hidden = view->hide_kernel;
	if (top) {
		m.has_top = true;
		m.dropped_samples = top->dropped_samples;
		m.dropped_leaf_samples = top->dropped_leaf_samples;
	}
	return fg_snapshot_meta_to_json(&m);
}

static double mib(uint64_t bytes)
{
	return (double)bytes / (1 << 20);
}

#define NARROW "narrow the period or the processes (--last, --since, -p, --comm, --exe, --cgroup)"

/*
 * A snapshot in the timed format: every sample of the period with its time,
 * from the window (to the ms) and the history (to its files' tick), over
 * the part of the period they hold.
 */
static int timed_snapshot(const struct fgd_alwayson_data *a, const struct fg_query_request *q,
			  const struct fg_view *view, uint64_t max_bytes, struct fgd_snapshot **ret,
			  struct json_object **ret_meta, char *ret_error, size_t error_size)
{
	_cleanup_(fgd_snapshot__freep) struct fgd_snapshot *s = calloc(1, sizeof(*s));
	_cleanup_(fg_selector__freep) struct fg_selector *sel = NULL;
	_cleanup_(fg_timed__freep) struct fg_timed *t = NULL;
	_cleanup_(json_object_putp) struct json_object *meta = NULL;
	struct fg_result_opts ro = { .format = FG_FORMAT_TIMED, .view = *view };
	struct stored_timed st = { .max_bytes = max_bytes };
	struct match_ctx mc = { .view = view };
	_cleanup_(missing_done) struct missing missing = {};
	struct fg_window_result res, window;
	int64_t since, until;
	bool match_all;
	int r;

	if (!s)
		return -ENOMEM;
	r = query_setup(q, &since, &until, &sel, ret_error, error_size);
	if (r < 0)
		return r;
	mc.sel = sel;
	match_all = whole_machine(&mc);
	r = fg_timed__new(a->off_cpu ? FG_TIMED_US : FG_TIMED_SAMPLES, FG_TIMED_CLOCK_UNIX, &t);
	if (r < 0)
		return r;
	st.out = t;
	res = (struct fg_window_result){};
	/* Oldest first: the disk, then memory. */
	r = query_history(a, since, until, &mc, match_all, NULL, add_stored_time, &st, &missing,
			  &res);
	free(st.ids);
	free(st.stack);
	if (r >= 0)
		r = fg_window__timed(a->window, since, until, match, &mc, match_all, t, &window);
	if (r >= 0 && fg_timed__bytes(t) > max_bytes)
		r = -ENOBUFS;
	if (r == -ENOBUFS)
		snprintf(ret_error, error_size,
			 "its samples' times alone take more than %.1f MiB: " NARROW,
			 mib(max_bytes));
	if (r < 0)
		return r;
	add_result(&res, &window);
	missing_finish(&missing, a, since, until);
	if (fg_timed__n_samples(t) == 0) {
		if (res.untimed_slices > 0)
			snprintf(ret_error, error_size,
				 "no times kept for that period: none of its %" PRIu64
				 " slices has them (written before fgd kept them, or past the "
				 "window's room for them); snapshot and top still read it",
				 res.untimed_slices);
		else
			no_data(a->window, &res, &mc, &missing, ret_error, error_size);
		/* The error carries what the period is missing, for clients that act on it. */
		*ret_meta = result_json(a, &res, &missing, view, NULL);
		return -ENODATA;
	}
	/* The period is what the slices cover of the one asked for. */
	fg_timed__set_period(t, MAX(since, res.first_ms), MIN(until, res.last_ms));
	meta = result_json(a, &res, &missing, view, NULL);
	if (!meta)
		return -ENOMEM;
	r = fg_result__new_timed(TAKE_PTR(t), &ro, &s->result);
	if (r < 0)
		return r;
	*ret_meta = TAKE_PTR(meta);
	*ret = TAKE_PTR(s);
	return 0;
}

int fgd_query__snapshot(const struct fgd_alwayson_data *a, const struct fg_query_request *q,
			const struct fg_view *view, uint64_t max_bytes, struct fgd_snapshot **ret,
			struct json_object **ret_meta, char *ret_error, size_t error_size)
{
	_cleanup_(fgd_snapshot__freep) struct fgd_snapshot *s = calloc(1, sizeof(*s));
	_cleanup_(fg_selector__freep) struct fg_selector *sel = NULL;
	_cleanup_(fg_folded__freep) struct fg_folded *model = NULL;
	_cleanup_(json_object_putp) struct json_object *meta = NULL;
	char from[32], to[32], subtitle[512], info[2][256];
	const char *info_lines[] = { info[0], info[1], NULL };
	struct fg_result_opts ro = {
		.format = q->format,
		.view = *view,
		.title = q->title[0] ? q->title : "Flame Graph",
		.subtitle = subtitle,
		.info = info_lines,
	};
	/*
	 * A cgroup frame above each process, as a recording's --group-by puts
	 * it; the pid in the process frame as --pid-frames does, and always
	 * for pprof (a pid label) and speedscope (a profile per process).
	 */
	bool pid = q->with_pid || q->format == FG_FORMAT_PPROF || q->format == FG_FORMAT_SPEEDSCOPE;
	bool cgroup = q->group_by != FG_GROUP_PROCESS;
	unsigned roots = (q->group_by == FG_GROUP_CGROUP      ? FG_WINDOW_ROOTS_CGROUP :
			  q->group_by == FG_GROUP_CGROUP_NAME ? FG_WINDOW_ROOTS_CGROUP_NAME :
								0) |
			 (pid ? FG_WINDOW_ROOTS_PID : 0);
	struct fg_pprof_meta pprof = {
		.values = a->off_cpu ? FG_PPROF_OFF_CPU : FG_PPROF_SAMPLES,
		.period_ns = a->frequency ? 1000000000u / a->frequency : 0,
		.roots = cgroup ? FG_PPROF_ROOTS_CGROUP_PROCESS : FG_PPROF_ROOTS_PROCESS,
		.pid = pid,
		.comments = info_lines,
	};
	struct fg_speedscope_meta speedscope = {
		.unit = a->off_cpu ? FG_SPEEDSCOPE_MICROSECONDS : FG_SPEEDSCOPE_SAMPLES,
		.roots = cgroup ? FG_SPEEDSCOPE_ROOTS_CGROUP_PROCESS : FG_SPEEDSCOPE_ROOTS_PROCESS,
		.pid = pid,
		.name = q->title[0] ? q->title : subtitle,
	};
	struct match_ctx mc = { .view = view };
	_cleanup_(missing_done) struct missing missing = {};
	struct fg_window_result res;
	int64_t since, until;
	size_t model_bytes;
	bool match_all;
	time_t t;
	int r;

	if (q->format == FG_FORMAT_TIMED)
		return timed_snapshot(a, q, view, max_bytes, ret, ret_meta, ret_error, error_size);
	if (!s)
		return -ENOMEM;
	r = query_setup(q, &since, &until, &sel, ret_error, error_size);
	if (r < 0)
		return r;
	mc.sel = sel;
	model = fg_folded__new();
	if (!model)
		return -ENOMEM;
	/* Unattributed samples belong to no process: only a root query of everything shows them. */
	match_all = whole_machine(&mc);
	r = fg_window__query(a->window, since, until, roots, match, &mc, match_all, model, &res);
	/* The window is bounded by its ceiling; the history is not, so it is read against the budget. */
	if (r >= 0 && fg_folded__bytes(model) > max_bytes)
		r = -ENOBUFS;
	if (r >= 0) {
		struct stored_model sm = { .out = model, .roots = roots, .max_bytes = max_bytes };

		r = query_history(a, since, until, &mc, match_all, add_stored_stack, NULL, &sm,
				  &missing, &res);
		free(sm.stack);
	}
	if (r == -ENOBUFS)
		snprintf(ret_error, error_size,
			 "its profile alone takes more than %.1f MiB: " NARROW, mib(max_bytes));
	if (r < 0)
		return r;
	missing_finish(&missing, a, since, until);
	if (res.samples == 0 || fg_folded__n_stacks(model) == 0) {
		no_data(a->window, &res, &mc, &missing, ret_error, error_size);
		*ret_meta = result_json(a, &res, &missing, view, NULL);
		return -ENODATA;
	}
	meta = result_json(a, &res, &missing, view, NULL);
	if (!meta)
		return -ENOMEM;
	t = (time_t)(res.first_ms / 1000);
	strftime(from, sizeof(from), "%Y-%m-%d %H:%M:%S", localtime(&t));
	t = (time_t)(res.last_ms / 1000);
	strftime(to, sizeof(to), "%H:%M:%S", localtime(&t));
	snprintf(subtitle, sizeof(subtitle), "%s: always-on%s, %s to %s", a->hostname,
		 a->off_cpu ? " off-CPU" : "", from, to);
	if (a->off_cpu) {
		ro.count_name = "us";
		ro.palette = FG_PALETTE_IO;
		snprintf(info[0], sizeof(info[0]),
			 "event: %s   slices: %" PRIu64 "   blocked: %.3f s", a->event, res.slices,
			 (double)res.samples / 1e6);
	} else {
		snprintf(info[0], sizeof(info[0]),
			 "event: %s   frequency: %u Hz   slices: %" PRIu64 "   samples: %" PRIu64,
			 a->event, a->frequency, res.slices, res.samples);
	}
	snprintf(info[1], sizeof(info[1]),
		 "folded into [other] (memory ceiling): %" PRIu64 " %s, %" PRIu64
		 " stacks   [other processes]: %" PRIu64,
		 res.folded_samples, a->off_cpu ? "us" : "samples", res.folded_stacks,
		 res.unattributed);
	pprof.time_ns = res.first_ms * 1000000;
	pprof.duration_ns = (res.last_ms - res.first_ms) * 1000000;
	ro.pprof = &pprof;
	ro.speedscope = &speedscope;
	ro.frames = q->frames;
	ro.roots = cgroup ? 2 : 1;
	/* What the client sees of the model, the result decides: its view goes with it. */
	model_bytes = fg_folded__bytes(model);
	r = fg_result__new(TAKE_PTR(model), &ro, &s->result);
	if (r < 0)
		return r;
	if (fgd_snapshot__bytes(s) > max_bytes) {
		if (q->format == FG_FORMAT_FOLDED)
			snprintf(ret_error, error_size, "its profile takes %.1f MiB: " NARROW,
				 mib(fgd_snapshot__bytes(s)));
		else
			snprintf(
				ret_error, error_size,
				"its %s takes %.1f MiB laid out, from a profile of %.1f MiB: " NARROW
				", or ask for folded text, which streams from the profile alone",
				q->format == FG_FORMAT_HTML       ? "HTML page" :
				q->format == FG_FORMAT_PPROF      ? "pprof profile" :
				q->format == FG_FORMAT_SPEEDSCOPE ? "speedscope file" :
								    "SVG",
				mib(fgd_snapshot__bytes(s)), mib(model_bytes));
		return -ENOBUFS;
	}
	*ret_meta = TAKE_PTR(meta);
	*ret = TAKE_PTR(s);
	return 0;
}

int fgd_query__top(const struct fgd_alwayson_data *a, const struct fg_query_request *q,
		   const struct fg_view *view, struct json_object **ret, char *ret_error,
		   size_t error_size)
{
	_cleanup_(fg_selector__freep) struct fg_selector *sel = NULL;
	_cleanup_(json_object_putp) struct json_object *m = NULL;
	_cleanup_(fg_top__freep) struct fg_top *top = NULL;
	struct match_ctx mc = { .view = view };
	_cleanup_(missing_done) struct missing missing = {};
	struct fg_window_result res = {}, window;
	const struct fg_top_entry *list;
	struct json_object *meta, *procs;
	struct fg_top_stats ts;
	int64_t since, until;
	double seconds;
	size_t n;
	int r;

	r = query_setup(q, &since, &until, &sel, ret_error, error_size);
	if (r < 0)
		return r;
	mc.sel = sel;
	/* The list applies the client's view to the leaves it is fed. */
	r = fg_top__new(TOP_MAX_PROCESSES, TOP_MAX_LEAVES, a->frequency, view, &top);
	if (r < 0)
		return r;
	/* Oldest first, so each process shows the last name it had: the disk, then memory. */
	r = query_history(a, since, until, &mc, false, top_stored_stack, NULL, top, &missing, &res);
	if (r >= 0)
		r = fg_window__top(a->window, since, until, match, &mc, top, &window);
	if (r >= 0)
		r = fg_top__list(top, &list, &n);
	if (r < 0)
		return r;
	add_result(&res, &window);
	missing_finish(&missing, a, since, until);
	if (res.samples == 0) {
		no_data(a->window, &res, &mc, &missing, ret_error, error_size);
		*ret = result_json(a, &res, &missing, view, NULL);
		return -ENODATA;
	}
	fg_top__stats(top, &ts);
	m = fg_proto_new_message("top");
	meta = result_json(a, &res, &missing, view, &ts);
	procs = json_object_new_array();
	if (!m || !meta || !procs) {
		json_object_put(meta);
		json_object_put(procs);
		return -ENOMEM;
	}
	json_object_object_add(m, "meta", meta);
	json_object_object_add(m, "processes", procs);
	/* Shares of one CPU over the time the slices hold samples for. */
	seconds = (double)res.covered_ms / 1000.0;
	for (size_t i = 0; i < n && i < q->limit; i++) {
		struct json_object *e = json_object_new_object();

		if (!e)
			return -ENOMEM;
		fg_json_add_int(e, "pid", list[i].pid);
		fg_json_add_int(e, "uid", list[i].uid);
		fg_json_add_str(e, "comm", list[i].comm);
		fg_json_add_int(e, "samples", (int64_t)list[i].samples);
		json_object_object_add(e, "cpu_pct",
				       json_object_new_double(
					       seconds > 0 ? 100.0 * list[i].cpu_seconds / seconds :
							     0.0));
		fg_json_add_str(e, "leaf", list[i].leaf ? list[i].leaf : "");
		fg_json_add_int(e, "leaf_samples", (int64_t)list[i].leaf_samples);
		json_object_array_add(procs, e);
	}
	*ret = TAKE_PTR(m);
	return 0;
}
