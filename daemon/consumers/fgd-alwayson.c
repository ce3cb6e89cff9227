/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/budget.h"
#include "base/macro.h"
#include "consumers/fgd-alwayson.h"
#include "consumers/fgd-history.h"
#include "consumers/fgd-recording.h"
#include "fgd-clock.h"
#include "fgd-log.h"
#include "profile/folded.h"
#include "sources/fgd-offcpu.h"
#include "storage/slice.h"
#include "storage/slicefile.h"

/*
 * The resolver's location memo and names are dropped at a slice's end past this size, or once
 * older than the window; twice this, and they stop growing until then.
 */
#define MEMO_MAX_BYTES (32ULL << 20)
/* The history's byte budget is enforced every this many slices written. */
#define HISTORY_PRUNE_EVERY 30
/* Groups of history files merged each time a slice closes: bounds the work in the loop. */
#define HISTORY_MERGES_PER_SLICE 1
/* The waiting room of samples whose binaries are being read (fgd-resolve.h). */
#define WAITING_MAX_BYTES (8ULL << 20)
/* At a flush (shutdown, reload), the most time given to the blocks in the off-CPU ring. */
#define FLUSH_BLOCKS_NS (10ULL * 1000000ULL)
/*
 * A slice's end noticed later than this (the loop stalled: a storm starved
 * fgd, or the machine slept) leaves the time between as a gap in the
 * history, which queries name, rather than a slice that stretches over it as
 * if fgd had been sampling. Drain rounds come every second at most, and the
 * loop's slowest turns under load take a second or two: those abut.
 */
#define TICK_GAP_MS 5000

struct fgd_alwayson {
	struct fgd_alwayson_opts opts; /* its pointers borrowed */
	struct fg_proctab *procs;      /* borrowed */
	struct fg_evset *events;       /* owned: the source (sampling); NULL for off-CPU */
	struct fg_offcpu *offcpu;      /* owned: the source (off-CPU); NULL for sampling */
	struct fg_resolver *res;       /* owned: samples to stacks of names in names */
	/* owned: the names the resolver interns, until the memo is dropped */
	struct fg_folded *names;
	struct fg_window *window;   /* owned */
	struct fg_history *history; /* owned; NULL when the state directory is unusable */
	char *history_dir; /* owned copy: the state directory in use; NULL with no history */
	/*
	 * The settings it started with: a reload replaces the sampler to change
	 * them (fgd.c), and until then the configuration may already hold others.
	 */
	uint32_t frequency;
	enum fg_call_graph call_graph;
	uint32_t slice_seconds, window_seconds;
	uint32_t min_block_us; /* off-CPU */
	uint32_t *xlat;        /* owned: recording name id -> window name id, or UINT32_MAX */
	size_t cap_xlat;
	uint64_t xlat_epoch; /* the window epoch xlat is valid for */
	uint32_t *ids;       /* owned: one sample's window name ids */
	size_t cap_ids;
	uint64_t idle_samples, unknown_process_samples, errors, memo_resets;
	uint64_t lost_counted; /* of lost_so_far(), what the window's slices were given */
	uint64_t memo_since;   /* fgd_now() when the memo was last dropped (or begun) */
	uint64_t stored;       /* slices written to the history */
	int64_t wall_offset;   /* fgd_wall_offset_ns() at the last drain: samples' times to Unix */
	/* The daemon's memory budget (deps; NULL for none), and what its parts hold of ours. */
	struct fg_budget *budget;
	uint64_t window_charged, memo_charged, rings_charged;
};

/* Charges the budget's rings part with what the source's rings take in fgd now. */
static void account_rings(struct fgd_alwayson *a)
{
	uint64_t bytes = (a->events ? fg_evset__bytes(a->events) : 0) +
			 (a->offcpu ? fg_offcpu__ring_bytes(a->offcpu) : 0);

	fg_budget__account(a->budget, FG_BUDGET_RINGS, &a->rings_charged, bytes);
}

struct fgd_alwayson *fgd_alwayson__free(struct fgd_alwayson *a)
{
	if (!a)
		return NULL;
	fg_budget__account(a->budget, FG_BUDGET_WINDOW, &a->window_charged, 0);
	fg_budget__account(a->budget, FG_BUDGET_RECORDINGS, &a->memo_charged, 0);
	fg_budget__account(a->budget, FG_BUDGET_RINGS, &a->rings_charged, 0);
	fg_evset__free(a->events);
	fg_offcpu__free(a->offcpu);
	fg_resolver__free(a->res);
	fg_folded__free(a->names);
	fg_window__free(a->window);
	fg_history__free(a->history);
	free(a->history_dir);
	free(a->xlat);
	free(a->ids);
	free(a);
	return NULL;
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
	name = fg_folded__name(a->names, id);
	err = fg_window__intern(a->window, name, strlen(name), ret);
	if (err >= 0)
		a->xlat[id] = *ret;
	return err;
}

/* A resolved stack into the window's open slice (fgd-resolve.h's emit). */
static int on_stack(void *ctx, struct fg_process *proc, const struct fg_sample *s, uint32_t *names,
		    size_t n)
{
	struct fgd_alwayson *a = ctx;
	struct fg_window_proc wp = { .pid = (pid_t)s->sid.pid, .comm = "[unknown]" };
	uint64_t count;
	int64_t time_ms;
	int err = 0;

	/* The idle task is not a process: counted, not kept. */
	if (s->sid.pid == 0) {
		a->idle_samples++;
		return 0;
	}
	if (proc) {
		uid_t owner = 0;

		/* Read once per generation; a process gone unread is root's, visible to root only. */
		if (fg_process_owner(proc, &owner) < 0)
			owner = 0;
		/* Unknown (0) only for a process gone before fgd saw it. */
		if (fg_proctab__born(a->procs, proc, &wp.start_time) < 0)
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
		return 0;
	}
	for (size_t i = 0; i < n && err >= 0; i++)
		err = window_name(a, names[i], &a->ids[i]);
	/* Off-CPU counts the µs blocked. */
	count = a->offcpu ? s->period : 1;
	/* When it was taken, by the wall clock as it read at the drain (it follows NTP). */
	time_ms = ((int64_t)s->sid.time + a->wall_offset) / 1000000;
	if (err == -ENOSPC)
		err = fg_window__add_other(a->window, &wp, count, time_ms);
	else if (err >= 0)
		err = fg_window__add(a->window, &wp, a->ids, n, count, time_ms);
	/* The window's ceiling is its own to count; anything else is an error of ours. */
	if (err < 0)
		a->errors++;
	return 0;
}

/* The off-CPU source, whole machine, with the configuration's threshold and call graph. */
static int offcpu_open(struct fgd_alwayson *a, const char **ret_why)
{
	const struct fgd_config *c = a->opts.conf;
	struct fg_offcpu_opts o = {
		.min_block_ns = (uint64_t)c->off_cpu_min_block_us * 1000,
		.user_stacks = true,
		.stack_dump = c->call_graph == FG_CALL_GRAPH_DWARF ? c->stack_dump : 0,
		.ring_bytes = fg_offcpu_ring_bytes_for(c->call_graph == FG_CALL_GRAPH_DWARF,
						       fg_budget__room(a->budget, FG_BUDGET_RINGS)),
	};
	const char *why = NULL;
	int r = fg_offcpu__new(&o, &a->offcpu, &why);

	if (r < 0 && ret_why)
		*ret_why = why;
	return r;
}

/* Opens the history in dir, or (off-CPU) its off-cpu/ subdirectory; failures are logged. */
static int history_open(struct fgd_alwayson *a, const char *dir)
{
	char path[4096];
	int r;

	if (a->offcpu) {
		if (snprintf(path, sizeof(path), "%s/off-cpu", dir) >= (int)sizeof(path))
			return -ENAMETOOLONG;
		dir = path;
	}
	r = fg_history__open(dir, &a->history);
	if (r < 0) {
		log_warning("Cannot use %s for the history, keeping none: %s", dir, strerror(-r));
		return 0;
	}
	a->history_dir = strdup(dir);
	return a->history_dir ? 0 : -ENOMEM;
}

int fgd_alwayson__new(const struct fgd_alwayson_opts *opts, const struct fg_resolve_deps *deps,
		      struct fgd_alwayson **ret, const char **ret_why)
{
	_cleanup_(fgd_alwayson__freep) struct fgd_alwayson *a = calloc(1, sizeof(*a));
	const struct fgd_config *c = opts->conf;
	struct fg_window_opts wo = {
		.slice_ms = (uint64_t)c->slice_seconds * 1000,
		.window_ms = (uint64_t)c->window_seconds * 1000,
		/* The window's share of the daemon's budget (MemoryMax=, common/base/budget.h). */
		.memory_max = (deps->budget ? fg_budget__share(deps->budget, FG_BUDGET_WINDOW) :
					      c->memory_max) /
			      MAX(opts->windows, 1u),
		.gap_ms = TICK_GAP_MS,
	};
	struct fg_evset_opts eo = {
		.kind = FG_EVSET_SAMPLE,
		.event = opts->event,
		.frequency = c->always_on_frequency,
		.max_stack = opts->max_stack,
		.call_graph = c->call_graph,
		.stack_dump = c->stack_dump,
		.ring_pages = c->ring_pages,
	};
	struct fg_resolve_opts ro = {
		.call_graph = c->call_graph,
		.max_stack = opts->max_stack,
		.inline_frames = true,
		.demangle = true,
		.jit_suffix = true,
		.waiting_max = WAITING_MAX_BYTES,
		.emit = on_stack,
	};
	int r;

	if (!a)
		return -ENOMEM;
	a->opts = *opts;
	a->procs = deps->procs;
	a->budget = deps->budget;
	a->frequency = opts->off_cpu ? 0 : c->always_on_frequency;
	a->call_graph = c->call_graph;
	a->slice_seconds = c->slice_seconds;
	a->window_seconds = c->window_seconds;
	a->min_block_us = c->off_cpu_min_block_us;
	ro.ctx = a;
	r = fg_window__new(&wo, fgd_wall_ms(), &a->window);
	if (r < 0)
		return r;
	a->memo_since = fgd_now();
	if (opts->off_cpu) {
		r = offcpu_open(a, ret_why);
		if (r < 0)
			return r;
	}
	/* Without a usable state directory fgd still samples; the history is what is lost. */
	if (c->state_directory) {
		r = history_open(a, c->state_directory);
		if (r < 0)
			return r;
	}
	/* Kernel frames are named with their suffix, always (fgd-resolve.c): the window's names keep it. */
	a->names = fg_folded__new();
	if (!a->names)
		return -ENOMEM;
	r = fg_resolver__new(&ro, deps, a->names, &a->res);
	if (r < 0)
		return r;
	if (!opts->off_cpu) {
		r = fg_evset__open(&eo, &a->events);
		if (r >= 0)
			r = fg_evset__enable(a->events);
		if (r < 0)
			return r;
	}
	account_rings(a);
	a->wall_offset = fgd_wall_offset_ns();
	*ret = TAKE_PTR(a);
	return 0;
}

struct fg_evset *fgd_alwayson__events(struct fgd_alwayson *a)
{
	return a->events;
}

int fgd_alwayson__ring_fd(const struct fgd_alwayson *a)
{
	return a->offcpu ? fg_offcpu__fd(a->offcpu) : -1;
}

static void on_record(void *ctx, const struct fg_record *rec)
{
	struct fgd_alwayson *a = ctx;

	fg_resolver__sample(a->res, rec);
}

/* An off-CPU block, as the sample record the resolver takes. */
static void on_block(void *ctx, const struct fg_sample *s, const char *comm)
{
	struct fg_record rec;

	(void)comm; /* the process table names it */
	fg_offcpu_record(s, &rec);
	on_record(ctx, &rec);
}

/* Bytes of the memo: the resolver's locations and the names they are interned in. */
static uint64_t memo_bytes(const struct fgd_alwayson *a)
{
	return fg_resolver__bytes(a->res) + fg_folded__bytes(a->names);
}

/*
 * What the budget's recordings part holds of ours: the memo, and (off-CPU)
 * the stacks the source read, which a drop of the memo does not free.
 */
static uint64_t charged_bytes(const struct fgd_alwayson *a)
{
	return memo_bytes(a) + (a->offcpu ? fg_offcpu__bytes(a->offcpu) : 0);
}

/*
 * Samples (off-CPU: blocks) lost so far: those the kernel could not write,
 * and those this side could not keep.
 */
static uint64_t lost_so_far(const struct fgd_alwayson *a)
{
	struct fg_offcpu_stats os;
	struct fg_cpu_counters c;

	if (a->events) {
		fg_evset__totals(a->events, &c);
		return c.lost + c.lost_samples + c.malformed + a->errors;
	}
	fg_offcpu__stats(a->offcpu, &os);
	return fg_offcpu_lost(&os) + a->errors;
}

/*
 * After a drain: what this round lost goes with the slice it was drained
 * into (slices carry their losses). Between two drops of the memo its
 * tables may not grow past MEMO_MAX_BYTES twice, nor past what the
 * budget's recordings part has room for: new locations wait. The window is
 * charged every round: its open slice grows between ticks.
 */
static void account(struct fgd_alwayson *a)
{
	struct fg_window_stats ws;
	uint64_t bytes, lost;

	lost = lost_so_far(a);
	if (lost > a->lost_counted)
		fg_window__add_lost(a->window, lost - a->lost_counted);
	a->lost_counted = lost;
	bytes = memo_bytes(a);
	fg_budget__account(a->budget, FG_BUDGET_RECORDINGS, &a->memo_charged, charged_bytes(a));
	if (!fg_resolver__frozen(a->res)) {
		bool full = a->budget && fg_budget__room(a->budget, FG_BUDGET_RECORDINGS) == 0;

		if (full)
			fg_budget__refused(a->budget, FG_BUDGET_RECORDINGS);
		if (full || bytes > MEMO_MAX_BYTES * 2)
			fg_resolver__freeze(a->res);
	}
	fg_window__stats(a->window, &ws);
	fg_budget__account(a->budget, FG_BUDGET_WINDOW, &a->window_charged, ws.bytes);
	account_rings(a);
}

void fgd_alwayson__drain(struct fgd_alwayson *a)
{
	if (!a->events)
		return;
	a->wall_offset = fgd_wall_offset_ns();
	/* First what waited: a binary it needed may have been read since. */
	fg_resolver__replay(a->res, false);
	fg_evset__drain(a->events, on_record, a);
	account(a);
}

bool fgd_alwayson__drain_blocks(struct fgd_alwayson *a, uint64_t deadline)
{
	if (!a->offcpu)
		return false;
	a->wall_offset = fgd_wall_offset_ns();
	fg_resolver__replay(a->res, false);
	(void)fg_offcpu__drain(a->offcpu, on_block, a, deadline);
	account(a);
	return fg_offcpu__behind(a->offcpu);
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
			r = fg_history__store(a->history, (uint64_t)start * 1000000,
					      (uint64_t)end * 1000000, data, len);
		fg_slicefile_writer__free(w);
	}
	/* A full disk must not fill the log too: say so when it starts. */
	if (r == -ERANGE && before.last_write_error != r)
		log_warning(
			"The wall clock went back: a slice falls within history already on disk and "
			"is not written (sampling goes on; it stays in memory for the window)");
	else if (r < 0 && before.last_write_error != r)
		log_warning("Cannot write a history slice: %s (sampling goes on)", strerror(-r));
	if (r >= 0 && ++a->stored % HISTORY_PRUNE_EVERY == 0)
		(void)fg_history__prune(a->history, a->opts.conf->history_max);
}

/*
 * One bounded step of the history's compaction, after a slice was stored.
 * What the window still holds is not merged: a query reads the disk only
 * before the window's oldest slice. Failures are counted there and logged
 * when they change; sampling goes on.
 */
static void compact(struct fgd_alwayson *a, int64_t now_ms)
{
	const struct fg_compaction_policy *p = &a->opts.conf->history_policy;
	struct fg_history_stats before;
	struct fg_window_stats ws;
	int r;

	/* Nothing to merge or expire: spare the directory listing (leftovers go at open). */
	if (!a->history || (p->n_tiers == 0 && p->keep_ns == 0))
		return;
	fg_window__stats(a->window, &ws);
	fg_history__stats(a->history, &before);
	r = fg_history__compact(a->history, (uint64_t)now_ms * 1000000,
				(uint64_t)ws.oldest_ms * 1000000, p, HISTORY_MERGES_PER_SLICE);
	if (r < 0 && before.last_compact_error != r)
		log_warning(
			"Cannot compact the history: %s (sampling goes on; retried at the next slice)",
			strerror(-r));
}

void fgd_alwayson__flush(struct fgd_alwayson *a)
{
	/* Off-CPU: the blocks in the ring, and those still waiting for a user stack. */
	if (a->offcpu) {
		(void)fg_offcpu__drain(a->offcpu, on_block, a, fgd_now() + FLUSH_BLOCKS_NS);
		(void)fg_offcpu__abandon(a->offcpu);
		(void)fg_offcpu__flush(a->offcpu, on_block, a);
		account(a);
	}
	/* Samples still waiting for the loader go in with what is known: fgd is stopping. */
	fg_resolver__replay(a->res, true);
	store(a, fg_window__open_slice(a->window), fgd_wall_ms());
}

void fgd_alwayson__tick(struct fgd_alwayson *a, int64_t now_ms)
{
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
	if (memo_bytes(a) > MEMO_MAX_BYTES ||
	    fgd_now() - a->memo_since >= (uint64_t)a->window_seconds * 1000000000u) {
		struct fg_folded *names = fg_folded__new();

		if (!names)
			return;
		fg_resolver__forget(a->res, names);
		fg_folded__free(a->names);
		a->names = names;
		fg_budget__account(a->budget, FG_BUDGET_RECORDINGS, &a->memo_charged,
				   charged_bytes(a));
		a->memo_resets++;
		a->memo_since = fgd_now();
		a->cap_xlat = 0;
		free(a->xlat);
		a->xlat = NULL;
	}
}

void fgd_alwayson__data(const struct fgd_alwayson *a, struct fgd_alwayson_data *ret)
{
	*ret = (struct fgd_alwayson_data){
		.window = a->window,
		.history = a->history,
		.event = a->offcpu ? FG_OFFCPU_EVENT : a->opts.event.name,
		.off_cpu = a->offcpu != NULL,
		.hostname = a->opts.hostname,
		.frequency = a->frequency,
		.call_graph = a->call_graph,
		.slice_seconds = a->slice_seconds,
	};
}

bool fgd_alwayson__has_history(const struct fgd_alwayson *a)
{
	return a->history != NULL;
}

int fgd_alwayson__status(const struct fgd_alwayson *a, struct fg_status_always_on *ret)
{
	const struct fg_compaction_policy *policy = &a->opts.conf->history_policy;
	struct fg_status_always_on st;
	struct fg_window_stats ws;
	struct fg_resolve_stats rs;
	struct fg_cpu_counters c;

	fg_window__stats(a->window, &ws);
	if (a->events) {
		fg_evset__totals(a->events, &c);
	} else {
		struct fg_offcpu_stats os;

		fg_offcpu__stats(a->offcpu, &os);
		c = (struct fg_cpu_counters){ .lost = fg_offcpu_lost(&os) };
	}
	fg_resolver__stats(a->res, &rs);
	st = (struct fg_status_always_on){
		.enabled = true,
		.frequency = a->frequency,
		.call_graph = fg_call_graph_name(a->call_graph),
		.slice_seconds = a->slice_seconds,
		.window_seconds = a->window_seconds,
		.memory_max = ws.memory_max,
		.slice_budget = ws.slice_budget,
		.bytes = ws.bytes,
		.times_bytes = ws.times_bytes,
		.untimed_slices = ws.untimed_slices,
		.slices = ws.slices,
		.oldest_ms = ws.oldest_ms,
		.samples = ws.samples,
		.folded_samples = ws.folded_samples,
		.unattributed_samples = ws.unattributed_samples,
		.total_samples = ws.total_samples,
		.total_folded_samples = ws.total_folded_samples,
		.total_folded_stacks = ws.total_folded_stacks,
		.total_unattributed_samples = ws.total_unattributed_samples,
		.compactions = ws.compactions,
		.expired_slices = ws.expired_slices,
		.idle_samples = a->idle_samples,
		.unknown_process_samples = a->unknown_process_samples,
		.errors = a->errors,
		.memo_bytes = memo_bytes(a),
		.memo_resets = a->memo_resets,
		.waiting = rs.waiting,
		.waited = rs.waited,
		.degraded = rs.degraded,
		.lost = c.lost + c.lost_samples,
		.throttled = c.throttled,
	};
	if (a->history) {
		struct fg_status_history *h = &st.history;
		struct fg_history_stats hs;

		fg_history__stats(a->history, &hs);
		*h = (struct fg_status_history){
			.directory = a->history_dir,
			.files = hs.files,
			.bytes = hs.bytes,
			.written = hs.written,
			.write_errors = hs.write_errors,
			.out_of_order = hs.out_of_order,
			.corrupt = hs.corrupt,
			.future = hs.future,
			.pruned = hs.pruned,
			.max_bytes = a->opts.conf->history_max,
			/* The policy as read now: a reload changes it at the next step. */
			.keep_seconds = policy->keep_ns / 1000000000,
			.merged = hs.merged,
			.merged_sources = hs.merged_sources,
			.corrupt_dropped = hs.corrupt_dropped,
			.leftovers = hs.leftovers,
			.expired = hs.expired,
			.compact_errors = hs.compact_errors,
			.last_compact_error =
				hs.last_compact_error ? strerror(-hs.last_compact_error) : NULL,
		};
		h->tiers = calloc(MAX(policy->n_tiers, (size_t)1), sizeof(*h->tiers));
		if (!h->tiers)
			return -ENOMEM;
		h->n_tiers = policy->n_tiers;
		for (size_t i = 0; i < policy->n_tiers; i++)
			h->tiers[i] = (struct fg_status_tier){
				.age_seconds = policy->tiers[i].age_ns / 1000000000,
				.length_seconds = policy->tiers[i].width_ns / 1000000000,
			};
		st.has_history = true;
	}
	*ret = st;
	return 0;
}

int fgd_alwayson__status_off_cpu(const struct fgd_alwayson *a, struct fg_status_off_cpu *ret)
{
	struct fg_offcpu_stats os;
	int r;

	fg_offcpu__stats(a->offcpu, &os);
	r = fgd_alwayson__status(a, &ret->window);
	if (r < 0)
		return r;
	ret->always_on = true;
	ret->min_block_us = a->min_block_us;
	ret->blocks = os.blocks;
	ret->blocked_us = os.blocked_ns / 1000;
	ret->lost = fg_offcpu_lost(&os);
	ret->stacks_not_taken = os.kernel_stack_failed + os.user_stack_failed;
	ret->user_dump_failed = os.user_dump_failed;
	ret->switch_ins_unseen = os.switch_ins_unseen;
	ret->stack_renewals = os.stack_renewals;
	ret->stacks_lost = os.stacks_lost;
	return 0;
}
