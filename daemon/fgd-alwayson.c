/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <inttypes.h>
#include <stdio.h>

#include "budget.h"
#include "fgd-alwayson.h"
#include "folded.h"
#include "selector.h"
#include "fgd-history.h"
#include "fgd-log.h"
#include "fgd-recording.h"
#include "fgd.h"
#include "macro.h"
#include "result.h"
#include "slicefile.h"
#include "top.h"
#include "view.h"

/*
 * The location memo and names of the internal recording are dropped at a slice's end past this
 * size, or once older than the window.
 */
#define MEMO_MAX_BYTES (32ULL << 20)
/* The history's byte budget is enforced every this many slices written. */
#define HISTORY_PRUNE_EVERY 30
/* Groups of history files merged each time a slice closes: bounds the work in the loop. */
#define HISTORY_MERGES_PER_SLICE 1
/* What the internal recording's tables may hold between two resets. */
#define RECORDING_MAX_BYTES (64ULL << 20)

struct fgd_alwayson {
	struct fgd *d;             /* borrowed */
	struct fg_recording *rec;  /* owned */
	struct fg_window *window;  /* owned */
	struct fg_history *history; /* owned; NULL when the state directory is unusable */
	char *history_dir;         /* owned copy: the state directory in use; NULL with no history */
	/*
	 * The settings it started with: a reload replaces the sampler to change
	 * them (fgd.c), and until then the configuration may already hold others.
	 */
	uint32_t frequency;
	enum fg_call_graph call_graph;
	uint32_t slice_seconds, window_seconds;
	uint32_t *xlat;            /* owned: recording name id -> window name id, or UINT32_MAX */
	size_t cap_xlat;
	uint64_t xlat_epoch;       /* the window epoch xlat is valid for */
	uint32_t *ids;             /* owned: one sample's window name ids */
	size_t cap_ids;
	uint64_t idle_samples, unknown_process_samples, errors, memo_resets;
	uint64_t memo_since;       /* fgd_now() when the memo was last dropped (or begun) */
	uint64_t stored; /* slices written to the history */
	uint64_t window_charged;   /* what the memory budget's window part holds of ours */
};

struct fgd_alwayson *fgd_alwayson__free(struct fgd_alwayson *a)
{
	if (!a)
		return NULL;
	if (a->rec && fg_recording__events(a->rec))
		fgd_unwatch_rings(a->d, fg_recording__events(a->rec));
	fg_recording__free(a->rec);
	fg_window__free(a->window);
	fg_budget__account(a->d->budget, FG_BUDGET_WINDOW, &a->window_charged, 0); /* memory budget */
	fg_history__free(a->history);
	free(a->history_dir);
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
		/* Unknown (0) only for a process gone before fgd saw it. */
		if (fg_proctab__born(a->d->procs, proc, &wp.start_time) < 0)
			wp.start_time = 0;
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
		/* Memory budget: the window's share of MemoryMax= (common/budget.h). */
		.memory_max = d->budget ? fg_budget__share(d->budget, FG_BUDGET_WINDOW) :
					  d->conf.memory_max,
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
		.loader = d->loader,
		.budget = d->budget,
	};
	int r;

	if (!a)
		return -ENOMEM;
	a->d = d;
	a->frequency = d->conf.always_on_frequency;
	a->call_graph = d->conf.call_graph;
	a->slice_seconds = d->conf.slice_seconds;
	a->window_seconds = d->conf.window_seconds;
	fg_record_request_init(&o.req);
	o.req.all = true;
	/* Stored names tell kernel frames by their suffix (view.h): the window must have it. */
	o.req.kernel_suffix = true;
	/* Its samples go to the window; what a client sees of them, its own view decides. */
	fg_view_init(&o.view, 0, 0);
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
		else if (!(a->history_dir = strdup(d->conf.state_directory)))
			return -ENOMEM;
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
		fg_slicefile_writer__set_frequency(w, a->frequency);
		r = fg_slicefile_writer__finish(w, &data, &len);
		if (r >= 0)
			r = fg_history__store(a->history, (uint64_t)start * 1000000, (uint64_t)end * 1000000,
					      data, len);
		fg_slicefile_writer__free(w);
	}
	/* A full disk must not fill the log too: say so when it starts. */
	if (r == -ERANGE && before.last_write_error != r)
		log_warning("The wall clock went back: a slice falls within history already on disk and "
			    "is not written (sampling goes on; it stays in memory for the window)");
	else if (r < 0 && before.last_write_error != r)
		log_warning("Cannot write a history slice: %s (sampling goes on)", strerror(-r));
	if (r >= 0 && ++a->stored % HISTORY_PRUNE_EVERY == 0)
		(void)fg_history__prune(a->history, a->d->conf.history_max);
}

/*
 * One bounded step of the history's compaction, after a slice was stored.
 * What the window still holds is not merged: a query reads the disk only
 * before the window's oldest slice. Failures are counted there and logged
 * when they change; sampling goes on.
 */
static void compact(struct fgd_alwayson *a, int64_t now_ms)
{
	const struct fg_compaction_policy *p = &a->d->conf.history_policy;
	struct fg_history_stats before;
	struct fg_window_stats ws;
	int r;

	/* Nothing to merge or expire: spare the directory listing (leftovers go at open). */
	if (!a->history || (p->n_tiers == 0 && p->keep_ns == 0))
		return;
	fg_window__stats(a->window, &ws);
	fg_history__stats(a->history, &before);
	r = fg_history__compact(a->history, (uint64_t)now_ms * 1000000, (uint64_t)ws.oldest_ms * 1000000,
				p, HISTORY_MERGES_PER_SLICE);
	if (r < 0 && before.last_compact_error != r)
		log_warning("Cannot compact the history: %s (sampling goes on; retried at the next slice)",
			    strerror(-r));
}

void fgd_alwayson__flush(struct fgd_alwayson *a)
{
	/* Samples still waiting for the loader go in with what is known: fgd is stopping. */
	fg_recording__settle(a->rec);
	store(a, fg_window__open_slice(a->window), realtime_ms());
}

void fgd_alwayson__tick(struct fgd_alwayson *a, int64_t now_ms)
{
	struct fg_window_stats ws;

	/* Memory budget: the window's slices, every round (the open slice grows between ticks). */
	fg_window__stats(a->window, &ws);
	fg_budget__account(a->d->budget, FG_BUDGET_WINDOW, &a->window_charged, ws.bytes);
	if (fg_window__tick(a->window, now_ms) <= 0)
		return;
	/* The slice that just closed goes to disk now: a crash loses at most the open one. */
	store(a, fg_window__last_closed(a->window), now_ms);
	compact(a, now_ms);
	/*
	 * A new slice re-interns its names anyway: the moment to drop a grown memo, or an old one.
	 * Its locations hold their binaries, with their symbols and DWARF: kept for ever, a memo
	 * that never grows to its cap would keep every binary ever sampled in memory long after
	 * its processes are gone. Dropped once a window, it holds those sampled within the last.
	 */
	if ((fg_recording__bytes(a->rec) > MEMO_MAX_BYTES ||
	     fgd_now() - a->memo_since >= (uint64_t)a->window_seconds * 1000000000u) &&
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

bool fgd_alwayson__has_history(const struct fgd_alwayson *a)
{
	return a->history != NULL;
}

/* The tiers as [{age_seconds, length_seconds}, ...] and keep_seconds (0: kept until HistoryMax=). */
static void history_policy_json(struct json_object *h, const struct fg_compaction_policy *p)
{
	struct json_object *tiers = json_object_new_array();

	for (size_t i = 0; tiers && i < p->n_tiers; i++) {
		struct json_object *t = json_object_new_object();

		fg_json_add_int(t, "age_seconds", (int64_t)(p->tiers[i].age_ns / 1000000000));
		fg_json_add_int(t, "length_seconds", (int64_t)(p->tiers[i].width_ns / 1000000000));
		json_object_array_add(tiers, t);
	}
	json_object_object_add(h, "tiers", tiers);
	fg_json_add_int(h, "keep_seconds", (int64_t)(p->keep_ns / 1000000000));
}

struct json_object *fgd_alwayson__status(const struct fgd_alwayson *a)
{
	struct json_object *o = json_object_new_object();
	struct fg_window_stats ws;
	struct fg_recording_waits waits;
	struct fg_cpu_counters c;

	if (!o)
		return NULL;
	fg_window__stats(a->window, &ws);
	fg_evset__totals(fg_recording__events(a->rec), &c);
	fg_json_add_bool(o, "enabled", true);
	fg_json_add_int(o, "frequency", a->frequency);
	fg_json_add_str(o, "call_graph", fg_call_graph_name(a->call_graph));
	fg_json_add_int(o, "slice_seconds", a->slice_seconds);
	fg_json_add_int(o, "window_seconds", a->window_seconds);
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
	fg_recording__waits(a->rec, &waits);
	fg_json_add_int(o, "waiting", (int64_t)waits.waiting);
	fg_json_add_int(o, "waited", (int64_t)waits.waited);
	fg_json_add_int(o, "degraded", (int64_t)waits.degraded);
	fg_json_add_int(o, "lost", (int64_t)(c.lost + c.lost_samples));
	fg_json_add_int(o, "throttled", (int64_t)c.throttled);
	if (a->history) {
		struct json_object *h = json_object_new_object();
		struct fg_history_stats hs;

		fg_history__stats(a->history, &hs);
		json_object_object_add(o, "history", h);
		fg_json_add_str(h, "directory", a->history_dir);
		fg_json_add_int(h, "files", (int64_t)hs.files);
		fg_json_add_int(h, "bytes", (int64_t)hs.bytes);
		fg_json_add_int(h, "written", (int64_t)hs.written);
		fg_json_add_int(h, "write_errors", (int64_t)hs.write_errors);
		fg_json_add_int(h, "out_of_order", (int64_t)hs.out_of_order);
		fg_json_add_int(h, "corrupt", (int64_t)hs.corrupt);
		fg_json_add_int(h, "future", (int64_t)hs.future);
		fg_json_add_int(h, "pruned", (int64_t)hs.pruned);
		fg_json_add_int(h, "max_bytes", (int64_t)a->d->conf.history_max);
		history_policy_json(h, &a->d->conf.history_policy);
		fg_json_add_int(h, "merged", (int64_t)hs.merged);
		fg_json_add_int(h, "merged_sources", (int64_t)hs.merged_sources);
		fg_json_add_int(h, "corrupt_dropped", (int64_t)hs.corrupt_dropped);
		fg_json_add_int(h, "leftovers", (int64_t)hs.leftovers);
		fg_json_add_int(h, "expired", (int64_t)hs.expired);
		fg_json_add_int(h, "compact_errors", (int64_t)hs.compact_errors);
		if (hs.last_compact_error)
			fg_json_add_str(h, "last_compact_error", strerror(-hs.last_compact_error));
	}
	return o;
}

/* ---- queries ---- */

/* What one top query may hold: processes, and (process, leaf frame) pairs; past them, counted. */
#define TOP_MAX_PROCESSES (1u << 18)
#define TOP_MAX_LEAVES (1u << 20)

DEFINE_TRIVIAL_CLEANUP_FUNC(struct json_object *, json_object_put);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_folded *, fg_folded__free);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_selector *, fg_selector__free);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_top *, fg_top__free);

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

DEFINE_TRIVIAL_CLEANUP_FUNC(struct fgd_snapshot *, fgd_snapshot__free);

size_t fgd_snapshot__bytes(const struct fgd_snapshot *s)
{
	return sizeof(*s) + (s->result ? fg_result__bytes(s->result) : 0);
}

int fgd_snapshot__emit(struct fgd_snapshot *s, fg_write_fn fn, void *ctx, size_t budget)
{
	return fg_result__emit(s->result, fn, ctx, budget);
}

struct match_ctx {
	const struct fg_selector *sel;
	const struct fg_view *view; /* the client's */
};

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

/* Reading the history for a query: which processes it covers, and its figures. */
struct disk_query {
	struct match_ctx *mc;
	bool match_all;
	stored_stack_fn fn;
	void *ctx;
	uint32_t frequency;          /* the window's: the rate other slices are compared with */
	struct fg_window_result res; /* the disk's part alone */
	bool *wanted;                /* owned: per process of the slice read */
	size_t cap_wanted;
};

static bool is_other_processes(const struct fg_slicefile_process *p)
{
	return p->pid == 0 && p->comm && strcmp(p->comm, FG_WINDOW_OTHER_PROCESSES) == 0;
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

/* Hands a stored slice's matched stacks to the query, counting them as the window's queries do. */
static int read_stored_slice(void *ctx, const struct fg_slicefile *f)
{
	struct disk_query *dq = ctx;
	int64_t start = (int64_t)(fg_slicefile__start(f) / 1000000), end = (int64_t)(fg_slicefile__end(f) / 1000000);
	size_t n_procs = fg_slicefile__n_processes(f);
	uint64_t before = dq->res.samples;
	struct fg_window_proc wp;
	int err;

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
	for (size_t i = 0; i < fg_slicefile__n_stacks(f); i++) {
		const struct fg_slicefile_process *p;
		struct fg_slicefile_stack st;
		bool rest;

		fg_slicefile__stack(f, i, &st);
		if (!dq->wanted[st.proc])
			continue;
		p = fg_slicefile__process(f, st.proc);
		rest = is_other_processes(p);
		stored_proc(p, &wp);
		err = dq->fn(dq->ctx, f, &st, &wp, rest);
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
	if (dq->res.slices++ == 0 || start < dq->res.first_ms)
		dq->res.first_ms = start;
	dq->res.last_ms = MAX(dq->res.last_ms, end);
	dq->res.covered_ms += end - start;
	return 0;
}

/* Adds the figures of another part of a query's period to res. */
static void add_result(struct fg_window_result *res, const struct fg_window_result *part)
{
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
}

/*
 * The part of [since, until) older than the window in memory comes from the
 * history on disk: slices written before a restart, or expired from the
 * window. Slices still in memory are not read twice. fn gets every matched
 * stack, oldest slice first; the figures are added to res.
 */
static int query_history(struct fgd_alwayson *a, int64_t since, int64_t until, struct match_ctx *mc,
			 bool match_all, stored_stack_fn fn, void *ctx, struct fg_window_result *res)
{
	struct disk_query dq = { .mc = mc, .match_all = match_all, .fn = fn, .ctx = ctx,
				 .frequency = a->frequency };
	struct fg_window_stats ws;
	int r;

	if (!a->history)
		return 0;
	fg_window__stats(a->window, &ws);
	until = MIN(until, ws.oldest_ms);
	if (since < 0 || until <= since)
		return 0;
	r = fg_history__read(a->history, (uint64_t)since * 1000000, (uint64_t)until * 1000000,
			     read_stored_slice, &dq);
	free(dq.wanted);
	if (r < 0)
		return r;
	add_result(res, &dq.res);
	return 0;
}

/* A snapshot's model, fed from the history. */
struct stored_model {
	struct fg_folded *out; /* borrowed */
	uint32_t *stack;       /* owned: one stack's name ids in out */
	size_t cap_stack;
	uint64_t max_bytes; /* past it, -ENOBUFS: a week of history must not be read whole */
};

/* Adds a stored stack to the model in the window's form: "comm;frame;...", "[other processes]" alone. */
static int add_stored_stack(void *ctx, const struct fg_slicefile *f, const struct fg_slicefile_stack *st,
			    const struct fg_window_proc *p, bool rest)
{
	struct stored_model *sm = ctx;
	int err = FG_GROW(sm->stack, sm->cap_stack, st->n + 1);

	if (err < 0)
		return err;
	err = fg_folded__intern(sm->out, p->comm, strlen(p->comm), &sm->stack[0]);
	for (size_t k = 0; err >= 0 && k < st->n; k++) {
		const char *name = fg_slicefile__string(f, st->frames[k]);

		err = fg_folded__intern(sm->out, name, strlen(name), &sm->stack[k + 1]);
	}
	if (err < 0)
		return err;
	err = rest ? fg_folded__add(sm->out, sm->stack + 1, st->n, (double)st->count) :
		     fg_folded__add(sm->out, sm->stack, st->n + 1, (double)st->count);
	if (err >= 0 && fg_folded__bytes(sm->out) > sm->max_bytes)
		return -ENOBUFS;
	return err;
}

/* Feeds a stored stack to a top list: its leaf, or none for what was folded into "[other]". */
static int top_stored_stack(void *ctx, const struct fg_slicefile *f, const struct fg_slicefile_stack *st,
			    const struct fg_window_proc *p, bool rest)
{
	const struct fg_top_process tp = { p->pid, p->start_time, p->uid, p->comm, fg_slicefile__frequency(f) };
	const char *leaf = st->n && !is_folded_stack(f, st) ?
				   fg_slicefile__string(f, st->frames[st->n - 1]) : NULL;

	(void)rest; /* top never asks for the unattributed */
	return fg_top__add(ctx, &tp, leaf, leaf ? strlen(leaf) : 0, st->count);
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

static struct json_object *result_json(const struct fgd_alwayson *a, const struct fg_window_result *res,
				       const struct fg_view *view)
{
	struct json_object *m = json_object_new_object();
	struct fg_window_stats st;

	if (!m)
		return NULL;
	fg_window__stats(a->window, &st);
	fg_json_add_str(m, "source", "always-on");
	fg_json_add_str(m, "event", a->d->event.name);
	fg_json_add_int(m, "frequency", a->frequency);
	fg_json_add_str(m, "call_graph", fg_call_graph_name(a->call_graph));
	fg_json_add_int(m, "first_ms", res->first_ms);
	fg_json_add_int(m, "last_ms", res->last_ms);
	fg_json_add_int(m, "duration_ms", res->last_ms - res->first_ms);
	fg_json_add_int(m, "covered_ms", res->covered_ms);
	fg_json_add_int(m, "slices", (int64_t)res->slices);
	fg_json_add_int(m, "slice_seconds", a->slice_seconds);
	fg_json_add_int(m, "processes", (int64_t)res->processes);
	fg_json_add_int(m, "samples", (int64_t)res->samples);
	fg_json_add_int(m, "folded_samples", (int64_t)res->folded_samples);
	fg_json_add_int(m, "folded_stacks", (int64_t)res->folded_stacks);
	fg_json_add_int(m, "unattributed_samples", (int64_t)res->unattributed);
	fg_json_add_int(m, "other_rate_samples", (int64_t)res->other_rate_samples);
	fg_json_add_int(m, "memory_max", (int64_t)st.memory_max);
	fg_json_add_int(m, "window_total_folded_samples", (int64_t)st.total_folded_samples);
	fg_json_add_bool(m, "kernel_hidden", view->hide_kernel);
	return m;
}

static double mib(uint64_t bytes)
{
	return (double)bytes / (1 << 20);
}

#define NARROW "narrow the period or the processes (--last, --since, -p, --comm, --exe, --cgroup)"

int fgd_alwayson__snapshot_query(struct fgd_alwayson *a, const struct fg_query_request *q,
				 const struct fg_view *view, uint64_t max_bytes,
				 struct fgd_snapshot **ret, struct json_object **ret_meta,
				 char *ret_error, size_t error_size)
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
	struct match_ctx mc = { .view = view };
	struct fg_window_result res;
	int64_t since, until;
	size_t model_bytes;
	bool match_all;
	time_t t;
	int r;

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
	match_all = view->uid == 0 && fg_selector__is_all(sel);
	r = fg_window__query(a->window, since, until, match, &mc, match_all, model, &res);
	/* The window is bounded by its ceiling; the history is not, so it is read against the budget. */
	if (r >= 0 && fg_folded__bytes(model) > max_bytes)
		r = -ENOBUFS;
	if (r >= 0) {
		struct stored_model sm = { .out = model, .max_bytes = max_bytes };

		r = query_history(a, since, until, &mc, match_all, add_stored_stack, &sm, &res);
		free(sm.stack);
	}
	if (r == -ENOBUFS)
		snprintf(ret_error, error_size, "its profile alone takes more than %.1f MiB: " NARROW,
			 mib(max_bytes));
	if (r < 0)
		return r;
	if (res.samples == 0 || fg_folded__n_stacks(model) == 0) {
		no_data(a->window, &res, !fg_selector__is_all(sel) || view->uid != 0, ret_error, error_size);
		return -ENODATA;
	}
	meta = result_json(a, &res, view);
	if (!meta)
		return -ENOMEM;
	t = (time_t)(res.first_ms / 1000);
	strftime(from, sizeof(from), "%Y-%m-%d %H:%M:%S", localtime(&t));
	t = (time_t)(res.last_ms / 1000);
	strftime(to, sizeof(to), "%H:%M:%S", localtime(&t));
	snprintf(subtitle, sizeof(subtitle), "%s: always-on, %s to %s", a->d->hostname, from, to);
	snprintf(info[0], sizeof(info[0]),
		 "event: %s   frequency: %u Hz   slices: %" PRIu64 "   samples: %" PRIu64,
		 a->d->event.name, a->frequency, res.slices, res.samples);
	snprintf(info[1], sizeof(info[1]),
		 "folded into [other] (memory ceiling): %" PRIu64 " samples, %" PRIu64
		 " stacks   [other processes]: %" PRIu64, res.folded_samples, res.folded_stacks,
		 res.unattributed);
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
			snprintf(ret_error, error_size,
				 "its %s takes %.1f MiB laid out, from a profile of %.1f MiB: " NARROW
				 ", or ask for folded text, which streams from the profile alone",
				 q->format == FG_FORMAT_HTML ? "HTML page" : "SVG",
				 mib(fgd_snapshot__bytes(s)), mib(model_bytes));
		return -ENOBUFS;
	}
	*ret_meta = TAKE_PTR(meta);
	*ret = TAKE_PTR(s);
	return 0;
}

int fgd_alwayson__top_query(struct fgd_alwayson *a, const struct fg_query_request *q,
			    const struct fg_view *view, struct json_object **ret, char *ret_error,
			    size_t error_size)
{
	_cleanup_(fg_selector__freep) struct fg_selector *sel = NULL;
	_cleanup_(json_object_putp) struct json_object *m = NULL;
	_cleanup_(fg_top__freep) struct fg_top *top = NULL;
	struct match_ctx mc = { .view = view };
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
	r = query_history(a, since, until, &mc, false, top_stored_stack, top, &res);
	if (r >= 0)
		r = fg_window__top(a->window, since, until, match, &mc, top, &window);
	if (r >= 0)
		r = fg_top__list(top, &list, &n);
	if (r < 0)
		return r;
	add_result(&res, &window);
	if (res.samples == 0) {
		no_data(a->window, &res, !fg_selector__is_all(sel) || view->uid != 0, ret_error, error_size);
		return -ENODATA;
	}
	fg_top__stats(top, &ts);
	m = fg_proto_new_message("top");
	meta = result_json(a, &res, view);
	procs = json_object_new_array();
	if (!m || !meta || !procs) {
		json_object_put(meta);
		json_object_put(procs);
		return -ENOMEM;
	}
	fg_json_add_int(meta, "dropped_samples", (int64_t)ts.dropped_samples);
	fg_json_add_int(meta, "dropped_leaf_samples", (int64_t)ts.dropped_leaf_samples);
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
		json_object_object_add(e, "cpu_pct", json_object_new_double(
			seconds > 0 ? 100.0 * list[i].cpu_seconds / seconds : 0.0));
		fg_json_add_str(e, "leaf", list[i].leaf ? list[i].leaf : "");
		fg_json_add_int(e, "leaf_samples", (int64_t)list[i].leaf_samples);
		json_object_array_add(procs, e);
	}
	*ret = TAKE_PTR(m);
	return 0;
}
