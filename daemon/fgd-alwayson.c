/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <inttypes.h>
#include <stdio.h>

#include "fgd-alwayson.h"
#include "flame-html.h"
#include "flame.h"
#include "folded.h"
#include "selector.h"
#include "fgd-history.h"
#include "fgd-log.h"
#include "fgd-recording.h"
#include "fgd.h"
#include "macro.h"
#include "slicefile.h"

/*
 * The location memo and names of the internal recording are dropped at a slice's end past this
 * size, or once older than the window.
 */
#define MEMO_MAX_BYTES (32ULL << 20)
/* The history's byte budget is enforced every this many slices written. */
#define HISTORY_PRUNE_EVERY 30
/* What the internal recording's tables may hold between two resets. */
#define RECORDING_MAX_BYTES (64ULL << 20)

struct fgd_alwayson {
	struct fgd *d;             /* borrowed */
	struct fg_recording *rec;  /* owned */
	struct fg_window *window;  /* owned */
	struct fg_history *history; /* owned; NULL when the state directory is unusable */
	uint32_t *xlat;            /* owned: recording name id -> window name id, or UINT32_MAX */
	size_t cap_xlat;
	uint64_t xlat_epoch;       /* the window epoch xlat is valid for */
	uint32_t *ids;             /* owned: one sample's window name ids */
	size_t cap_ids;
	uint64_t idle_samples, unknown_process_samples, errors, memo_resets;
	uint64_t memo_since;       /* fgd_now() when the memo was last dropped (or begun) */
	uint64_t stored; /* slices written to the history */
};

struct fgd_alwayson *fgd_alwayson__free(struct fgd_alwayson *a)
{
	if (!a)
		return NULL;
	if (a->rec && fg_recording__events(a->rec))
		fgd_unwatch_rings(a->d, fg_recording__events(a->rec));
	fg_recording__free(a->rec);
	fg_window__free(a->window);
	fg_history__free(a->history);
	free(a->xlat);
	free(a->ids);
	free(a);
	return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct fgd_alwayson *, fgd_alwayson__free);

static int64_t realtime_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The executable: the first file mapping, which is where the kernel maps it. */
static const char *exe_of(const struct fg_process *p)
{
	for (size_t i = 0; i < p->n_maps && i < 4; i++)
		if (p->maps[i].dso && fg_dso__kind(p->maps[i].dso) == FG_DSO_FILE)
			return fg_dso__path(p->maps[i].dso);
	return NULL;
}

/* The window id of recording name id; -ENOSPC when the slice has no room. */
static int window_name(struct fgd_alwayson *a, uint32_t id, uint32_t *ret)
{
	const char *name;
	int err;

	if (a->xlat_epoch != fg_window__epoch(a->window)) {
		if (a->xlat)
			memset(a->xlat, 0xff, a->cap_xlat * sizeof(uint32_t));
		a->xlat_epoch = fg_window__epoch(a->window);
	}
	if (id >= a->cap_xlat) {
		size_t old = a->cap_xlat;

		err = FG_GROW(a->xlat, a->cap_xlat, (size_t)id + 1);
		if (err < 0)
			return err;
		memset(a->xlat + old, 0xff, (a->cap_xlat - old) * sizeof(uint32_t));
	}
	if (a->xlat[id] != UINT32_MAX) {
		*ret = a->xlat[id];
		return 0;
	}
	name = fg_recording__name(a->rec, id);
	err = fg_window__intern(a->window, name, strlen(name), ret);
	if (err >= 0)
		a->xlat[id] = *ret;
	return err;
}

static void on_stack(void *ctx, struct fg_process *proc, const struct fg_sample *s,
		     const uint32_t *names, size_t n)
{
	struct fgd_alwayson *a = ctx;
	struct fg_window_proc wp = { .pid = (pid_t)s->sid.pid, .comm = "[unknown]" };
	int err = 0;

	/* The idle task is not a process: counted, not kept. */
	if (s->sid.pid == 0) {
		a->idle_samples++;
		return;
	}
	if (proc) {
		uid_t owner = 0;

		/* Read once per generation; a process gone unread is root's, visible to root only. */
		if (fg_process_owner(proc, &owner) < 0)
			owner = 0;
		wp.start_time = proc->lineage;
		wp.uid = owner;
		wp.comm = proc->comm;
		wp.exe = exe_of(proc);
		wp.cgroup = proc->cgroup;
	} else {
		a->unknown_process_samples++;
	}
	if (FG_GROW(a->ids, a->cap_ids, n + 1) < 0) {
		a->errors++;
		return;
	}
	for (size_t i = 0; i < n && err >= 0; i++)
		err = window_name(a, names[i], &a->ids[i]);
	if (err == -ENOSPC)
		err = fg_window__add_other(a->window, &wp, 1);
	else if (err >= 0)
		err = fg_window__add(a->window, &wp, a->ids, n, 1);
	if (err < 0)
		a->errors++;
}

int fgd_alwayson__new(struct fgd *d, struct fgd_alwayson **ret)
{
	_cleanup_(fgd_alwayson__freep) struct fgd_alwayson *a = calloc(1, sizeof(*a));
	struct fg_window_opts wo = {
		.slice_ms = (uint64_t)d->conf.slice_seconds * 1000,
		.window_ms = (uint64_t)d->conf.window_seconds * 1000,
		.memory_max = d->conf.memory_max,
	};
	struct fg_recording_opts o = {
		.event = d->event,
		.frequency = d->conf.always_on_frequency,
		.max_stack = d->max_stack,
		.call_graph = d->conf.call_graph,
		.stack_dump = d->conf.stack_dump,
		.ring_pages = d->conf.ring_pages,
		.max_bytes = RECORDING_MAX_BYTES,
		.hostname = d->hostname,
		.sink = on_stack,
	};
	int r;

	if (!a)
		return -ENOMEM;
	a->d = d;
	fg_record_request_init(&o.req);
	o.req.all = true;
	o.sink_ctx = a;
	r = fg_window__new(&wo, realtime_ms(), &a->window);
	if (r < 0)
		return r;
	a->memo_since = fgd_now();
	/* Without a usable state directory fgd still samples; the history is what is lost. */
	if (d->conf.state_directory) {
		r = fg_history__open(d->conf.state_directory, &a->history);
		if (r < 0)
			log_warning("Cannot use %s for the history, keeping none: %s",
				    d->conf.state_directory, strerror(-r));
	}
	r = fg_recording__new(&o, d->procs, d->sym, d->unwinder, &a->rec, NULL);
	if (r >= 0)
		r = fgd_watch_rings(d, fg_recording__events(a->rec));
	if (r < 0)
		return r;
	*ret = TAKE_PTR(a);
	return 0;
}

void fgd_alwayson__snapshot(struct fgd_alwayson *a)
{
	fg_evset__snapshot(fg_recording__events(a->rec));
}

void fgd_alwayson__drain(struct fgd_alwayson *a)
{
	fg_recording__drain(a->rec);
}

/* Writes slice s, ending at end_ms, to the history. Failures are counted there and logged once. */
static void store(struct fgd_alwayson *a, const struct fg_slice *s, int64_t end_ms)
{
	struct fg_slicefile_writer *w;
	struct fg_history_stats before;
	const uint8_t *data;
	int64_t start, end;
	size_t len;
	int r;

	if (!a->history || !s)
		return;
	fg_slice_span(s, &start, &end);
	end = MIN(end, end_ms);
	fg_history__stats(a->history, &before);
	r = fg_slice_export(s, end, &w);
	if (r >= 0) {
		r = fg_slicefile_writer__finish(w, &data, &len);
		if (r >= 0)
			r = fg_history__store(a->history, (uint64_t)start * 1000000, (uint64_t)end * 1000000,
					      data, len);
		fg_slicefile_writer__free(w);
	}
	/* A full disk must not fill the log too: say so when it starts. */
	if (r < 0 && before.last_write_error != r)
		log_warning("Cannot write a history slice: %s (sampling goes on)", strerror(-r));
	if (r >= 0 && ++a->stored % HISTORY_PRUNE_EVERY == 0)
		(void)fg_history__prune(a->history, a->d->conf.history_max);
}

void fgd_alwayson__flush(struct fgd_alwayson *a)
{
	store(a, fg_window__open_slice(a->window), realtime_ms());
}

void fgd_alwayson__tick(struct fgd_alwayson *a, int64_t now_ms)
{
	if (fg_window__tick(a->window, now_ms) <= 0)
		return;
	/* The slice that just closed goes to disk now: a crash loses at most the open one. */
	store(a, fg_window__last_closed(a->window), now_ms);
	/*
	 * A new slice re-interns its names anyway: the moment to drop a grown memo, or an old one.
	 * Its locations hold their binaries, with their symbols and DWARF: kept for ever, a memo
	 * that never grows to its cap would keep every binary ever sampled in memory long after
	 * its processes are gone. Dropped once a window, it holds those sampled within the last.
	 */
	if ((fg_recording__bytes(a->rec) > MEMO_MAX_BYTES ||
	     fgd_now() - a->memo_since >= (uint64_t)a->d->conf.window_seconds * 1000000000u) &&
	    fg_recording__forget(a->rec) >= 0) {
		a->memo_resets++;
		a->memo_since = fgd_now();
		a->cap_xlat = 0;
		free(a->xlat);
		a->xlat = NULL;
	}
}

const struct fg_window *fgd_alwayson__window(const struct fgd_alwayson *a)
{
	return a->window;
}

uint32_t fgd_alwayson__frequency(const struct fgd_alwayson *a)
{
	return a->d->conf.always_on_frequency;
}

struct json_object *fgd_alwayson__status(const struct fgd_alwayson *a)
{
	struct json_object *o = json_object_new_object();
	struct fg_window_stats ws;
	struct fg_cpu_counters c;

	if (!o)
		return NULL;
	fg_window__stats(a->window, &ws);
	fg_evset__totals(fg_recording__events(a->rec), &c);
	fg_json_add_bool(o, "enabled", true);
	fg_json_add_int(o, "frequency", a->d->conf.always_on_frequency);
	fg_json_add_str(o, "call_graph", fg_call_graph_name(a->d->conf.call_graph));
	fg_json_add_int(o, "slice_seconds", a->d->conf.slice_seconds);
	fg_json_add_int(o, "window_seconds", a->d->conf.window_seconds);
	fg_json_add_int(o, "memory_max", (int64_t)ws.memory_max);
	fg_json_add_int(o, "slice_budget", (int64_t)ws.slice_budget);
	fg_json_add_int(o, "bytes", (int64_t)ws.bytes);
	fg_json_add_int(o, "slices", (int64_t)ws.slices);
	fg_json_add_int(o, "oldest_ms", ws.oldest_ms);
	fg_json_add_int(o, "samples", (int64_t)ws.samples);
	fg_json_add_int(o, "folded_samples", (int64_t)ws.folded_samples);
	fg_json_add_int(o, "unattributed_samples", (int64_t)ws.unattributed);
	fg_json_add_int(o, "total_samples", (int64_t)ws.total_samples);
	fg_json_add_int(o, "total_folded_samples", (int64_t)ws.total_folded_samples);
	fg_json_add_int(o, "total_folded_stacks", (int64_t)ws.total_folded_stacks);
	fg_json_add_int(o, "total_unattributed_samples", (int64_t)ws.total_unattributed);
	fg_json_add_int(o, "compactions", (int64_t)ws.compactions);
	fg_json_add_int(o, "expired_slices", (int64_t)ws.expired);
	fg_json_add_int(o, "idle_samples", (int64_t)a->idle_samples);
	fg_json_add_int(o, "unknown_process_samples", (int64_t)a->unknown_process_samples);
	fg_json_add_int(o, "errors", (int64_t)a->errors);
	fg_json_add_int(o, "memo_bytes", (int64_t)fg_recording__bytes(a->rec));
	fg_json_add_int(o, "memo_resets", (int64_t)a->memo_resets);
	fg_json_add_int(o, "lost", (int64_t)(c.lost + c.lost_samples));
	fg_json_add_int(o, "throttled", (int64_t)c.throttled);
	if (a->history) {
		struct json_object *h = json_object_new_object();
		struct fg_history_stats hs;

		fg_history__stats(a->history, &hs);
		json_object_object_add(o, "history", h);
		fg_json_add_str(h, "directory", a->d->conf.state_directory);
		fg_json_add_int(h, "files", (int64_t)hs.files);
		fg_json_add_int(h, "bytes", (int64_t)hs.bytes);
		fg_json_add_int(h, "written", (int64_t)hs.written);
		fg_json_add_int(h, "write_errors", (int64_t)hs.write_errors);
		fg_json_add_int(h, "corrupt", (int64_t)hs.corrupt);
		fg_json_add_int(h, "pruned", (int64_t)hs.pruned);
	}
	return o;
}

/* ---- queries ---- */

#define EMIT_BUDGET_FLOOR 4096

DEFINE_TRIVIAL_CLEANUP_FUNC(struct json_object *, json_object_put);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_folded *, fg_folded__free);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_selector *, fg_selector__free);

struct fgd_snapshot {
	enum fg_format format;
	struct fg_folded *model;    /* owned */
	struct fg_flame *flame;     /* owned */
	struct fg_flame_html *html; /* owned */
	size_t cursor;
	char title[FG_PROTO_MAX_TITLE], subtitle[512], info[2][256]; /* borrowed by the renderers */
	const char *info_lines[3];
};

struct fgd_snapshot *fgd_snapshot__free(struct fgd_snapshot *s)
{
	if (!s)
		return NULL;
	fg_flame__free(s->flame);
	fg_flame_html__free(s->html);
	fg_folded__free(s->model);
	free(s);
	return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct fgd_snapshot *, fgd_snapshot__free);

int fgd_snapshot__emit(struct fgd_snapshot *s, fg_write_fn fn, void *ctx, size_t budget)
{
	budget = MAX(budget, (size_t)EMIT_BUDGET_FLOOR);
	if (s->format == FG_FORMAT_SVG)
		return fg_flame__emit(s->flame, fn, ctx, budget);
	if (s->format == FG_FORMAT_HTML)
		return fg_flame_html__emit(s->html, fn, ctx, budget);
	return fg_folded__emit(s->model, &s->cursor, fn, ctx, budget);
}

struct match_ctx {
	const struct fg_selector *sel;
	uid_t uid; /* the client's */
};

static bool match(void *ctx, const struct fg_window_proc *p)
{
	const struct match_ctx *m = ctx;

	/* Non-root users see only what they could record: their own processes. */
	if (m->uid != 0 && p->uid != m->uid)
		return false;
	return fg_selector__match(m->sel, p->pid, p->uid, p->comm, p->exe, p->cgroup);
}

/* What reading the history for a query needs. */
struct disk_query {
	struct match_ctx *mc;
	bool match_all;
	struct fg_folded *out;
	struct fg_window_result *res;
	uint32_t *stack; /* owned: one stack's name ids in out */
	size_t cap_stack;
	int64_t first_ms, last_ms;
};

/* Adds a stored slice's matched stacks to the query's model, as the window's query does. */
static int add_stored_slice(void *ctx, const struct fg_slicefile *f)
{
	struct disk_query *dq = ctx;
	int64_t start = (int64_t)(fg_slicefile__start(f) / 1000000), end = (int64_t)(fg_slicefile__end(f) / 1000000);
	uint64_t samples = 0;
	int err;

	for (size_t i = 0; i < fg_slicefile__n_stacks(f); i++) {
		struct fg_slicefile_stack st;
		const struct fg_slicefile_process *p;
		struct fg_window_proc wp;
		bool rest;

		fg_slicefile__stack(f, i, &st);
		p = fg_slicefile__process(f, st.proc);
		rest = p->pid == 0 && p->comm && strcmp(p->comm, FG_WINDOW_OTHER_PROCESSES) == 0;
		wp = (struct fg_window_proc){ p->pid, p->start_time, p->uid, p->comm ?: "[unknown]",
					      p->exe, p->cgroup };
		if (rest ? !dq->match_all : !match(dq->mc, &wp))
			continue;
		err = FG_GROW(dq->stack, dq->cap_stack, st.n + 1);
		if (err < 0)
			return err;
		/* The window's form: "comm;frame;...", and "[other processes]" alone. */
		err = fg_folded__intern(dq->out, wp.comm, strlen(wp.comm), &dq->stack[0]);
		for (size_t k = 0; err >= 0 && k < st.n; k++) {
			const char *name = fg_slicefile__string(f, st.frames[k]);

			err = fg_folded__intern(dq->out, name, strlen(name), &dq->stack[k + 1]);
		}
		if (err >= 0)
			err = rest ? fg_folded__add(dq->out, dq->stack + 1, st.n, (double)st.count) :
				     fg_folded__add(dq->out, dq->stack, st.n + 1, (double)st.count);
		if (err < 0)
			return err;
		samples += st.count;
		if (rest)
			dq->res->unattributed += st.count;
		else if (st.n == 1 && strcmp(fg_slicefile__string(f, st.frames[0]), FG_WINDOW_OTHER) == 0)
			dq->res->folded_samples += st.count;
	}
	dq->res->slices++;
	dq->res->samples += samples;
	if (!dq->first_ms || start < dq->first_ms)
		dq->first_ms = start;
	dq->last_ms = MAX(dq->last_ms, end);
	return 0;
}

/*
 * The part of [since, until) older than the window in memory comes from the
 * history on disk: slices written before a restart, or expired from the
 * window. Slices still in memory are not read twice.
 */
static int query_history(struct fgd_alwayson *a, int64_t since, int64_t until, struct match_ctx *mc,
			 bool match_all, struct fg_folded *out, struct fg_window_result *res)
{
	struct disk_query dq = { .mc = mc, .match_all = match_all, .out = out, .res = res };
	struct fg_window_stats ws;
	int r;

	if (!a->history)
		return 0;
	fg_window__stats(a->window, &ws);
	until = MIN(until, ws.oldest_ms);
	if (since < 0 || until <= since)
		return 0;
	r = fg_history__read(a->history, (uint64_t)since * 1000000, (uint64_t)until * 1000000,
			     add_stored_slice, &dq);
	free(dq.stack);
	if (r < 0)
		return r;
	if (dq.first_ms && (!res->first_ms || dq.first_ms < res->first_ms))
		res->first_ms = dq.first_ms;
	res->last_ms = MAX(res->last_ms, dq.last_ms);
	return 0;
}

/* The range a query asks for, and its selector. */
static int query_setup(const struct fg_query_request *q, int64_t *since, int64_t *until,
		       struct fg_selector **sel, char *err, size_t size)
{
	struct fg_selector_spec spec = {
		.pid = q->pid, .uid = q->uid, .comm = q->comm, .cgroup = q->cgroup, .exe = q->exe,
	};
	const char *why = NULL;
	int r;

	*since = q->since_ms;
	*until = q->until_ms ? q->until_ms : realtime_ms() + 1;
	r = fg_selector__new(&spec, sel, &why);
	if (r < 0)
		snprintf(err, size, "%s", why ? why : strerror(-r));
	return r;
}

static void no_data(const struct fg_window *w, const struct fg_window_result *res, bool selective,
		    char *err, size_t size)
{
	struct fg_window_stats st;

	fg_window__stats(w, &st);
	if (res->slices == 0)
		snprintf(err, size, "no always-on data for that period: the window in memory covers the "
				    "last %" PRId64 " s", (realtime_ms() - st.oldest_ms) / 1000);
	else if (selective)
		snprintf(err, size, "no samples of the selected processes in that period "
				    "(%" PRIu64 " slices looked at)", res->slices);
	else
		snprintf(err, size, "no samples in that period (%" PRIu64 " slices looked at)", res->slices);
}

static struct json_object *result_json(const struct fgd_alwayson *a, const struct fg_window_result *res)
{
	struct json_object *m = json_object_new_object();
	struct fg_window_stats st;

	if (!m)
		return NULL;
	fg_window__stats(a->window, &st);
	fg_json_add_str(m, "source", "always-on");
	fg_json_add_str(m, "event", a->d->event.name);
	fg_json_add_int(m, "frequency", a->d->conf.always_on_frequency);
	fg_json_add_str(m, "call_graph", fg_call_graph_name(a->d->conf.call_graph));
	fg_json_add_int(m, "first_ms", res->first_ms);
	fg_json_add_int(m, "last_ms", res->last_ms);
	fg_json_add_int(m, "duration_ms", res->last_ms - res->first_ms);
	fg_json_add_int(m, "slices", (int64_t)res->slices);
	fg_json_add_int(m, "slice_seconds", a->d->conf.slice_seconds);
	fg_json_add_int(m, "processes", (int64_t)res->processes);
	fg_json_add_int(m, "samples", (int64_t)res->samples);
	fg_json_add_int(m, "folded_samples", (int64_t)res->folded_samples);
	fg_json_add_int(m, "folded_stacks", (int64_t)res->folded_stacks);
	fg_json_add_int(m, "unattributed_samples", (int64_t)res->unattributed);
	fg_json_add_int(m, "memory_max", (int64_t)st.memory_max);
	fg_json_add_int(m, "window_total_folded_samples", (int64_t)st.total_folded_samples);
	return m;
}

int fgd_alwayson__snapshot_query(struct fgd_alwayson *a, const struct fg_query_request *q, uid_t uid,
				 struct fgd_snapshot **ret, struct json_object **ret_meta,
				 char *ret_error, size_t error_size)
{
	_cleanup_(fgd_snapshot__freep) struct fgd_snapshot *s = calloc(1, sizeof(*s));
	_cleanup_(fg_selector__freep) struct fg_selector *sel = NULL;
	struct fg_window_result res;
	struct match_ctx mc = { .uid = uid };
	struct fg_flame_opts fo;
	int64_t since, until;
	char from[32], to[32];
	time_t t;
	int r;

	if (!s)
		return -ENOMEM;
	r = query_setup(q, &since, &until, &sel, ret_error, error_size);
	if (r < 0)
		return r;
	mc.sel = sel;
	s->format = q->format;
	s->model = fg_folded__new();
	if (!s->model)
		return -ENOMEM;
	/* Unattributed samples belong to no process: only a root query of everything shows them. */
	r = fg_window__query(a->window, since, until, match, &mc, uid == 0 && fg_selector__is_all(sel),
			     s->model, &res);
	if (r >= 0)
		r = query_history(a, since, until, &mc, uid == 0 && fg_selector__is_all(sel), s->model,
				  &res);
	if (r < 0)
		return r;
	if (res.samples == 0 || fg_folded__n_stacks(s->model) == 0) {
		no_data(a->window, &res, !fg_selector__is_all(sel) || uid != 0, ret_error, error_size);
		return -ENODATA;
	}
	r = fg_folded__sort(s->model);
	if (r < 0)
		return r;
	*ret_meta = result_json(a, &res);
	if (!*ret_meta)
		return -ENOMEM;
	if (q->format != FG_FORMAT_FOLDED) {
		t = (time_t)(res.first_ms / 1000);
		strftime(from, sizeof(from), "%Y-%m-%d %H:%M:%S", localtime(&t));
		t = (time_t)(res.last_ms / 1000);
		strftime(to, sizeof(to), "%H:%M:%S", localtime(&t));
		snprintf(s->title, sizeof(s->title), "%s", q->title[0] ? q->title : "Flame Graph");
		snprintf(s->subtitle, sizeof(s->subtitle), "%s: always-on, %s to %s", a->d->hostname,
			 from, to);
		snprintf(s->info[0], sizeof(s->info[0]),
			 "event: %s   frequency: %u Hz   slices: %" PRIu64 "   samples: %" PRIu64,
			 a->d->event.name, a->d->conf.always_on_frequency, res.slices, res.samples);
		snprintf(s->info[1], sizeof(s->info[1]),
			 "folded into [other] (memory ceiling): %" PRIu64 " samples, %" PRIu64
			 " stacks   [other processes]: %" PRIu64, res.folded_samples, res.folded_stacks,
			 res.unattributed);
		s->info_lines[0] = s->info[0];
		s->info_lines[1] = s->info[1];
		fg_flame_opts_init(&fo);
		fo.title = s->title;
		fo.subtitle = s->subtitle;
		fo.info = s->info_lines;
		r = q->format == FG_FORMAT_HTML ? fg_flame_html__new(s->model, &fo, &s->html) :
						  fg_flame__new(s->model, &fo, &s->flame);
		if (r < 0) {
			json_object_put(*ret_meta);
			*ret_meta = NULL;
			return r;
		}
	}
	*ret = TAKE_PTR(s);
	return 0;
}

int fgd_alwayson__top_query(struct fgd_alwayson *a, const struct fg_query_request *q, uid_t uid,
			    struct json_object **ret, char *ret_error, size_t error_size)
{
	_cleanup_(fg_selector__freep) struct fg_selector *sel = NULL;
	_cleanup_(json_object_putp) struct json_object *m = NULL;
	struct match_ctx mc = { .uid = uid };
	struct fg_window_result res;
	struct fg_window_top *top = NULL;
	struct json_object *list;
	int64_t since, until;
	double seconds;
	size_t n;
	int r;

	r = query_setup(q, &since, &until, &sel, ret_error, error_size);
	if (r < 0)
		return r;
	mc.sel = sel;
	r = fg_window__top(a->window, since, until, match, &mc, &top, &n, &res);
	if (r < 0)
		return r;
	if (res.samples == 0) {
		free(top);
		no_data(a->window, &res, !fg_selector__is_all(sel) || uid != 0, ret_error, error_size);
		return -ENODATA;
	}
	m = fg_proto_new_message("top");
	if (!m) {
		free(top);
		return -ENOMEM;
	}
	json_object_object_add(m, "meta", result_json(a, &res));
	list = json_object_new_array();
	json_object_object_add(m, "processes", list);
	/* A CPU's worth of samples is the frequency times the time the slices cover. */
	seconds = (double)(res.last_ms - res.first_ms) / 1000.0;
	for (size_t i = 0; i < n && i < q->limit; i++) {
		struct json_object *e = json_object_new_object();

		fg_json_add_int(e, "pid", top[i].pid);
		fg_json_add_int(e, "uid", top[i].uid);
		fg_json_add_str(e, "comm", top[i].comm);
		fg_json_add_int(e, "samples", (int64_t)top[i].samples);
		json_object_object_add(e, "cpu_pct", json_object_new_double(
			seconds > 0 ? 100.0 * (double)top[i].samples /
					      (seconds * a->d->conf.always_on_frequency) : 0.0));
		fg_json_add_str(e, "leaf", top[i].leaf);
		fg_json_add_int(e, "leaf_samples", (int64_t)top[i].leaf_samples);
		json_object_array_add(list, e);
	}
	free(top);
	*ret = TAKE_PTR(m);
	return 0;
}
