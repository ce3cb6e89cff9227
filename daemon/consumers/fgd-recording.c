/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/budget.h"
#include "base/cpulist.h"
#include "base/macro.h"
#include "consumers/fgd-pprof.h"
#include "consumers/fgd-recording.h"
#include "fgd-clock.h"
#include "profile/folded.h"
#include "profile/timed.h"
#include "proto/meta.h"
#include "render/result.h"
#include "sources/fgd-offcpu.h"

/* Bounds on what one recording may hold; what they refuse is counted. */
#define MAX_STACKS (1U << 20)
/* How far up a process's parents the recording of a command looks for it (children). */
#define MAX_ANCESTRY 64
/*
 * The waiting room of samples whose binaries are being read (fgd-resolve.h):
 * an eighth of the tables' budget, within these bounds. A DWARF-mode sample
 * takes its stack dump along (32 KiB by default): 8 MiB holds about 250,
 * two seconds of both CPUs at 99 Hz; 64 MiB, a quarter second of 64 CPUs.
 */
#define WAITING_MIN_BYTES (8ULL << 20)
#define WAITING_MAX_BYTES (64ULL << 20)
/*
 * At finish, the most time given to the blocks an off-CPU source's ring
 * still holds, as to any drain's (fgd-engine.c): the server let a
 * recording behind catch up first. What is left then is counted as lost.
 */
#define FINISH_BLOCKS_NS (10ULL * 1000000ULL)

/*
 * Every sample's time, as compact pairs: ms after the recording started and
 * the stack's id in the model, and in µs recordings its weight. 8 bytes a
 * sample (12 in µs), charged with the recording's tables: a timed result
 * (a heat map's) is made of them at finish.
 */
struct times {
	uint32_t *at;     /* owned */
	uint32_t *stack;  /* owned */
	uint32_t *weight; /* owned; NULL unless weighed */
	size_t n, cap;
	uint64_t dropped; /* samples whose time was not kept: no room */
};

static void times_done(struct times *t)
{
	free(t->at);
	free(t->stack);
	free(t->weight);
	*t = (struct times){};
}

static size_t times_bytes(const struct times *t)
{
	return t->cap * (2 + (t->weight ? 1 : 0)) * sizeof(uint32_t);
}

/* Appends a sample's time; counted as dropped when there is no room. */
static void times_add(struct times *t, bool weighed, uint32_t at, uint32_t stack, uint32_t weight)
{
	if (t->n == t->cap) {
		size_t cap = t->cap, cap_stack = t->cap, cap_weight = t->cap;

		if (t->n >= FG_TIMED_MAX_SAMPLES || FG_GROW(t->at, cap, t->n + 1) < 0 ||
		    FG_GROW(t->stack, cap_stack, t->n + 1) < 0 ||
		    (weighed && FG_GROW(t->weight, cap_weight, t->n + 1) < 0)) {
			t->dropped++;
			return;
		}
		t->cap = MIN(cap, MIN(cap_stack, weighed ? cap_weight : cap));
	}
	t->at[t->n] = at;
	t->stack[t->n] = stack;
	if (weighed)
		t->weight[t->n] = weight;
	t->n++;
}

struct target {
	pid_t pid;
	uint64_t lineage; /* the process, through any exec */
	uint64_t serial;  /* the generation current when we started: its owner was checked */
	bool exited;
};

enum state {
	RUNNING,
	STOPPED,
	FINISHED,
};

struct fg_recording {
	struct fg_recording_opts opts; /* hostname not kept */
	char hostname[256];
	struct fg_proctab *procs;  /* borrowed */
	struct fg_symbolizer *sym; /* borrowed: pprof's system names */
	struct fg_evset *events;   /* owned until finish: the source (on-CPU) */
	struct fg_offcpu *offcpu;  /* owned until finish: the source (off-CPU); NULL for on-CPU */
	struct fg_offcpu_stats offcpu_stats; /* its losses, kept at finish */
	uint64_t blocks, blocked_us;         /* off-CPU: the blocks of the recording's time */
	uint64_t other_threads;              /* samples of threads --tid left out */
	struct fg_resolver *res; /* owned until finish: samples to stacks of names in model */
	enum state state;
	bool starting; /* its off-CPU source is being made (fg_recording__attach_source()) */

	struct target *targets; /* owned */
	size_t n_targets;
	char target_comm[FG_COMM_LEN]; /* the first target's, at the start: see target_comm() */

	struct fg_folded *model; /* owned: the aggregate itself, until finish hands it to result */
	/* owned: pprof's, the same stacks as code locations (fgd-pprof.h); NULL for other formats */
	struct fg_loc_profile *locs;
	struct times times; /* every sample's time and stack id in model */
	uint32_t n_roots;   /* frames above the stack: [cgroup,] process */
	bool memory_limited;
	struct fg_resolve_stats resolved; /* the resolver's figures, kept at finish */

	uint64_t started, stopped;     /* CLOCK_MONOTONIC ns */
	int64_t started_wall;          /* CLOCK_REALTIME ms at started */
	int64_t wall_offset;           /* fgd_wall_offset_ns() at the last drain */
	struct fg_cpu_counters totals; /* of the events, at finish */
	struct fg_status_cpu *cpus;    /* owned: each CPU's figures as reported, at finish */
	size_t n_cpus;
	/* owned: the resolver's part of the metadata, at finish */
	struct fg_meta_resolve resolver_meta;

	struct fg_result *result; /* owned: the output, once finished */
	struct fg_budget *budget; /* borrowed (deps): NULL for none */
	uint64_t tables_charged;  /* what the budget's recordings part holds of ours */
	uint64_t rings_charged;   /* and its rings part: our sources' rings */
};

/* Charges the budget's rings part with what our sources' rings take in fgd now. */
static void account_rings(struct fg_recording *r)
{
	uint64_t bytes = (r->events ? fg_evset__bytes(r->events) : 0) +
			 (r->offcpu ? fg_offcpu__ring_bytes(r->offcpu) : 0);

	fg_budget__account(r->budget, FG_BUDGET_RINGS, &r->rings_charged, bytes);
}

struct fg_recording *fg_recording__free(struct fg_recording *r)
{
	if (!r)
		return NULL;
	fg_budget__account(r->budget, FG_BUDGET_RECORDINGS, &r->tables_charged, 0);
	fg_budget__account(r->budget, FG_BUDGET_RINGS, &r->rings_charged, 0);
	fg_evset__free(r->events);
	fg_offcpu__free(r->offcpu);
	fg_resolver__free(r->res);
	fg_result__free(r->result);
	fg_folded__free(r->model);
	fg_loc_profile__free(r->locs);
	times_done(&r->times);
	fg_meta_resolve_done(&r->resolver_meta);
	free(r->targets);
	free(r->cpus);
	free(r);
	return NULL;
}

/* The target proc descends from (one of its ancestors' lineages is the target's), or NULL. */
static const struct target *ancestor_target(struct fg_recording *r, const struct fg_process *proc)
{
	/* Each ancestor is the generation of its pid alive when its child began. */
	for (int depth = 0; proc && proc->ppid > 0 && depth < MAX_ANCESTRY; depth++) {
		proc = fg_proctab__find(r->procs, proc->ppid, proc->start_time);
		for (size_t i = 0; proc && i < r->n_targets; i++)
			if (fg_process_is(proc, r->targets[i].lineage))
				return &r->targets[i];
	}
	return NULL;
}

/* Whether a sample's process is one the recording targets (all of them, with -a). */
static bool want(void *ctx, struct fg_process *proc)
{
	struct fg_recording *r = ctx;
	uid_t uid;

	if (!r->n_targets)
		return true;
	if (!proc)
		return false;
	/*
	 * The processes the targets started, with children: they run as the
	 * target's owner unless an exec made them someone else's, which a
	 * client that is not root may not see.
	 */
	if (r->opts.req.children && ancestor_target(r, proc))
		return r->opts.view.uid == 0 || (fg_process_owner(proc, &uid) >= 0 &&
						 fg_view_shows_process(&r->opts.view, uid));
	for (size_t i = 0; i < r->n_targets; i++) {
		if (r->targets[i].pid != proc->pid || !fg_process_is(proc, r->targets[i].lineage))
			continue;
		/* An exec may have made it someone else's (setuid): re-check for non-root clients. */
		if (r->opts.view.uid != 0 && proc->serial != r->targets[i].serial &&
		    (fg_process_owner(proc, &uid) < 0 ||
		     !fg_view_shows_process(&r->opts.view, uid)))
			return false;
		return true;
	}
	return false;
}

static int root_frame(struct fg_recording *r, const struct fg_sample *s,
		      const struct fg_process *proc, uint32_t *ret)
{
	const char *comm = s->sid.pid == 0 ? "swapper" :
			   proc ? fg_proctab__comm(r->procs, (pid_t)s->sid.tid, proc, s->sid.time) :
				  "[unknown]";
	char buf[64];

	/*
	 * The stackcollapse-perf.pl --pid / --tid forms. A pprof profile has
	 * the pid always: its process frames become comm and pid labels. So
	 * does a speedscope file: a profile per process, not per comm.
	 */
	if (r->opts.req.with_tid)
		snprintf(buf, sizeof(buf), "%s-%u/%u", comm, s->sid.pid, s->sid.tid);
	else if (r->opts.req.with_pid || r->opts.req.format == FG_FORMAT_PPROF ||
		 r->opts.req.format == FG_FORMAT_SPEEDSCOPE)
		snprintf(buf, sizeof(buf), "%s-%u", comm, s->sid.pid);
	else
		return fg_resolve_intern(r->model, comm, NULL, ret);
	return fg_resolve_intern(r->model, buf, NULL, ret);
}

/* The frame above the process name for --group-by: the cgroup, whole or its last component. */
static int group_frame(struct fg_recording *r, const struct fg_sample *s,
		       const struct fg_process *proc, uint32_t *ret)
{
	/* The idle task (pid 0) is in the root cgroup. */
	const char *cg = s->sid.pid == 0 ? "/" : proc && proc->cgroup ? proc->cgroup : "[unknown]";
	const char *last = strrchr(cg, '/');

	if (r->opts.req.group_by == FG_GROUP_CGROUP_NAME && last && last[1])
		cg = last + 1;
	return fg_resolve_intern(r->model, cg, NULL, ret);
}

/* Whether counts are µs (off-CPU, wall-clock) rather than samples. */
static bool in_us(const struct fg_recording *r)
{
	return r->opts.req.off_cpu || r->opts.req.wall;
}

/* A resolved stack into the aggregate: [cgroup,] process, then its frames (fgd-resolve.h). */
static int add_stack(void *ctx, struct fg_process *proc, const struct fg_sample *s, uint32_t *names,
		     size_t n)
{
	struct fg_recording *r = ctx;
	uint32_t *stack = names - r->n_roots, id;
	/* Off-CPU and wall-clock samples weigh their time (µs); on-CPU ones count once. */
	uint64_t weight = in_us(r) ? MAX(MIN(s->period, (uint64_t)UINT32_MAX), (uint64_t)1) : 1;
	int err;

	err = r->n_roots > 1 ? group_frame(r, s, proc, &stack[0]) : 0;
	if (err >= 0)
		err = root_frame(r, s, proc, &stack[r->n_roots - 1]);
	/*
	 * Locations first: a stack of locations is new whenever its names are,
	 * so once the tables are frozen, a sample the location profile refuses
	 * is refused by both, and one it takes the names model takes too.
	 */
	if (err >= 0 && r->locs) {
		const uint32_t *locs;
		bool cut;
		size_t n_locs = fg_resolver__sample_locations(r->res, &locs, &cut);

		err = fg_loc_profile__add(r->locs, r->model, stack, r->n_roots + cut, locs, n_locs,
					  in_us(r) ? (double)s->period : 1.0);
	}
	if (err >= 0)
		err = fg_folded__add_id(r->model, stack, r->n_roots + n,
					in_us(r) ? (double)s->period : 1.0, &id);
	if (err < 0)
		return err;
	/* With the tables frozen (memory_limited), the times stop growing too. */
	if (r->memory_limited) {
		r->times.dropped++;
	} else {
		/* Wall-clock ms after the start, as the wall clock read when the sample was drained. */
		int64_t at = ((int64_t)s->sid.time + r->wall_offset) / 1000000 - r->started_wall;

		times_add(&r->times, in_us(r),
			  (uint32_t)MIN(MAX(at, (int64_t)0), (int64_t)UINT32_MAX), id,
			  (uint32_t)weight);
	}
	return 0;
}

bool fg_recording__starting(const struct fg_recording *r)
{
	return r->starting;
}

void fg_recording__source_opts(const struct fg_recording *r, struct fg_offcpu_opts *ret,
			       pid_t pids[FG_PROTO_MAX_PIDS])
{
	for (size_t i = 0; i < r->n_targets; i++)
		pids[i] = r->targets[i].pid;
	*ret = (struct fg_offcpu_opts){
		.min_block_ns =
			(uint64_t)(r->opts.req.min_block_us ? r->opts.req.min_block_us : 1) * 1000,
		.user_stacks = true,
		.stack_dump = r->opts.call_graph == FG_CALL_GRAPH_DWARF ? r->opts.stack_dump : 0,
		.pids = r->n_targets ? pids : NULL,
		.n_pids = r->n_targets,
		.max_rate = r->opts.off_cpu_rate,
		/* Its ring as the budget has room for: a storm fills it whole. */
		.ring_bytes = fg_offcpu_ring_bytes_for(r->opts.call_graph == FG_CALL_GRAPH_DWARF,
						       fg_budget__room(r->budget, FG_BUDGET_RINGS)),
	};
}

/* The recording's time begins now (again, once a source being made is attached). */
static void mark_start(struct fg_recording *r)
{
	r->started = fgd_now();
	r->started_wall = fgd_wall_ms();
	r->wall_offset = fgd_wall_offset_ns();
}

/* Its sources sample from now on. */
static int begin(struct fg_recording *r)
{
	int err = r->events ? fg_evset__enable(r->events) : 0;

	if (err < 0)
		return err;
	account_rings(r);
	mark_start(r);
	return 0;
}

int fg_recording__attach_source(struct fg_recording *r, struct fg_offcpu *source)
{
	if (!r->starting || r->state != RUNNING) {
		fg_offcpu__free(source);
		return -ECANCELED;
	}
	r->offcpu = source;
	r->starting = false;
	return begin(r);
}

/*
 * Whether the request's threads (--tid) leave out thread tid of process
 * pid: counted, and not resolved. Only threads of the target processes
 * count so: other processes' samples are the process filter's to count
 * (other_processes), as without --tid.
 */
static bool other_thread(struct fg_recording *r, uint32_t pid, uint32_t tid)
{
	bool target = false;

	if (!r->opts.req.n_tids)
		return false;
	for (size_t i = 0; i < r->opts.req.n_tids; i++)
		if ((uint32_t)r->opts.req.tids[i] == tid)
			return false;
	for (size_t i = 0; i < r->n_targets && !target; i++)
		target = (uint32_t)r->targets[i].pid == pid;
	if (!target)
		return false;
	r->other_threads++;
	return true;
}

/* A block, as the sample record the resolver takes; those after the stop are not the recording's. */
static void on_block(void *ctx, const struct fg_sample *s, const char *comm)
{
	struct fg_recording *r = ctx;
	struct fg_record rec;

	if ((r->stopped && s->sid.time > r->stopped) || other_thread(r, s->sid.pid, s->sid.tid))
		return;
	r->blocks++;
	r->blocked_us += s->period;
	fg_offcpu_record(s, &rec);
	fg_resolver__sample(r->res, &rec);
}

int fg_recording__new(const struct fg_recording_opts *opts, const struct fg_resolve_deps *deps,
		      struct fg_recording **ret, pid_t *ret_bad_pid)
{
	_cleanup_(fg_recording__freep) struct fg_recording *r = NULL;
	_cleanup_free_ int *cpus = NULL;
	struct fg_evset_opts eo = {
		.kind = FG_EVSET_SAMPLE,
		.event = opts->event,
		.frequency = opts->frequency,
		.max_stack = opts->max_stack,
		.call_graph = opts->call_graph,
		.stack_dump = opts->stack_dump,
		.ring_pages = opts->ring_pages,
	};
	struct fg_resolve_opts ro = {
		.call_graph = opts->call_graph,
		.max_stack = opts->max_stack,
		.inline_frames = opts->req.inline_frames,
		.demangle = opts->req.demangle,
		.jit_suffix = opts->req.jit_suffix,
		.waiting_max = MIN(MAX(opts->max_bytes / 8, WAITING_MIN_BYTES), WAITING_MAX_BYTES),
		.root_slots = opts->req.group_by != FG_GROUP_PROCESS ? 2 : 1,
		.want = want,
		.emit = add_stack,
	};
	int err;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->opts = *opts;
	/* The suffix a request may do without is the view's to take off (view.h). */
	r->opts.view.kernel_suffix = opts->req.kernel_suffix;
	r->opts.hostname = NULL;
	snprintf(r->hostname, sizeof(r->hostname), "%s", opts->hostname ? opts->hostname : "");
	r->procs = deps->procs;
	r->sym = deps->sym;
	r->budget = deps->budget;
	r->n_roots = (uint32_t)ro.root_slots;
	r->model = fg_folded__new();
	if (!r->model)
		return -ENOMEM;
	fg_folded__set_max_stacks(r->model, MAX_STACKS);
	ro.ctx = r;
	err = fg_resolver__new(&ro, deps, r->model, &r->res);
	if (err < 0)
		return err;
	/* pprof has addresses, mappings and inline lines: the stacks are kept as locations too. */
	if (opts->req.format == FG_FORMAT_PPROF && (err = fg_loc_profile__new(&r->locs)) < 0)
		return err;

	if (!opts->req.all) {
		r->targets = calloc(opts->req.n_pids, sizeof(*r->targets));
		if (!r->targets)
			return -ENOMEM;
		for (size_t i = 0; i < opts->req.n_pids; i++) {
			struct fg_process *p = fg_proctab__current(r->procs, opts->req.pids[i]);

			if (!p || p->end_time != FG_TIME_ALIVE) {
				if (ret_bad_pid)
					*ret_bad_pid = opts->req.pids[i];
				return -ESRCH;
			}
			r->targets[r->n_targets++] =
				(struct target){ p->pid, p->lineage, p->serial, false };
			if (i == 0)
				memcpy(r->target_comm, p->comm, sizeof(r->target_comm));
		}
	}
	/*
	 * Off-CPU: blocks only; wall-clock: blocks and on-CPU samples; else
	 * samples. The off-CPU source is made by the caller, off the loop, and
	 * the recording begins once it is attached: the events wait for it.
	 */
	/* --cpu: sampled on those CPUs only (the server checked they are online). */
	if (opts->req.cpus[0] && fg_cpulist_parse(opts->req.cpus, &cpus, &eo.n_cpus) == 0)
		eo.cpus = cpus;
	r->starting = opts->req.off_cpu || opts->req.wall;
	mark_start(r);
	err = 0;
	if (!opts->req.off_cpu)
		err = fg_evset__open(&eo, &r->events);
	if (err >= 0 && !r->starting)
		err = begin(r);
	if (err < 0)
		return err;
	*ret = TAKE_PTR(r);
	return 0;
}

struct fg_evset *fg_recording__events(struct fg_recording *r)
{
	return r->state == FINISHED ? NULL : r->events;
}

int fg_recording__ring_fd(const struct fg_recording *r)
{
	return r->state != FINISHED && r->offcpu ? fg_offcpu__fd(r->offcpu) : -1;
}

static void on_record(void *ctx, const struct fg_record *rec)
{
	struct fg_recording *r = ctx;
	struct fg_record wall;

	if (rec->type == PERF_RECORD_SAMPLE &&
	    other_thread(r, rec->sample.sid.pid, rec->sample.sid.tid))
		return;
	/* Wall-clock: an on-CPU sample stands for 1/frequency s of CPU time, in µs. */
	if (r->opts.req.wall && rec->type == PERF_RECORD_SAMPLE) {
		wall = *rec;
		wall.sample.period = 1000000 / (r->opts.frequency ? r->opts.frequency : 1);
		rec = &wall;
	}
	fg_resolver__sample(r->res, rec);
}

void fg_recording__feed(struct fg_recording *r, const struct fg_record *rec)
{
	if (r->state != FINISHED)
		fg_resolver__sample(r->res, rec);
}

/*
 * After a drain: what the tables hold is charged, and checked once a round,
 * not per sample: past the client's limit, or with no room left in the
 * daemon's budget (its recordings part, or the total), the tables stop
 * growing. Known stacks keep counting; new ones are dropped, and counted.
 */
static void account_tables(struct fg_recording *r)
{
	uint64_t bytes;
	bool full;

	bytes = fg_folded__bytes(r->model) + fg_resolver__bytes(r->res) +
		(r->offcpu ? fg_offcpu__bytes(r->offcpu) : 0) + times_bytes(&r->times) +
		(r->locs ? fg_loc_profile__bytes(r->locs) : 0);
	fg_budget__account(r->budget, FG_BUDGET_RECORDINGS, &r->tables_charged, bytes);
	account_rings(r);
	if (r->memory_limited)
		return;
	full = r->budget && fg_budget__room(r->budget, FG_BUDGET_RECORDINGS) == 0;
	if (full)
		fg_budget__refused(r->budget, FG_BUDGET_RECORDINGS);
	if (full || bytes > r->opts.max_bytes) {
		r->memory_limited = true;
		fg_resolver__freeze(r->res);
		fg_folded__set_max_stacks(r->model, fg_folded__n_stacks(r->model));
		if (r->locs)
			fg_loc_profile__freeze(r->locs);
	}
}

void fg_recording__drain(struct fg_recording *r)
{
	if (r->state == FINISHED || !r->events)
		return;
	r->wall_offset = fgd_wall_offset_ns();
	/* First what waited: a binary it needed may have been read since. */
	fg_resolver__replay(r->res, false);
	fg_evset__drain(r->events, on_record, r);
	account_tables(r);
}

bool fg_recording__drain_blocks(struct fg_recording *r, uint64_t deadline)
{
	if (r->state == FINISHED || !r->offcpu)
		return false;
	r->wall_offset = fgd_wall_offset_ns();
	/* A wall-clock recording's waiting samples went again with its events. */
	if (!r->events)
		fg_resolver__replay(r->res, false);
	(void)fg_offcpu__drain(r->offcpu, on_block, r, deadline);
	account_tables(r);
	return fg_offcpu__behind(r->offcpu);
}

bool fg_recording__behind(const struct fg_recording *r)
{
	return r->state != FINISHED && r->offcpu && fg_offcpu__behind(r->offcpu);
}

/* ---- lifecycle ---- */

void fg_recording__stop(struct fg_recording *r)
{
	if (r->state != RUNNING)
		return;
	/*
	 * Off-CPU blocks that end after this are left out as they come
	 * (on_block()); the program stops, so the ring holds no more than now.
	 */
	if (r->events)
		(void)fg_evset__disable(r->events);
	if (r->offcpu)
		fg_offcpu__stop(r->offcpu);
	r->stopped = fgd_now();
	r->state = STOPPED;
}

bool fg_recording__targets_gone(struct fg_recording *r)
{
	bool any_alive = false;

	for (size_t i = 0; i < r->n_targets; i++) {
		struct target *t = &r->targets[i];
		struct fg_process *cur = fg_proctab__current(r->procs, t->pid);

		if (!t->exited &&
		    (!cur || cur->end_time != FG_TIME_ALIVE || !fg_process_is(cur, t->lineage)))
			t->exited = true;
		any_alive |= !t->exited;
	}
	return r->n_targets > 0 && !any_alive;
}

/*
 * The first target's name as the process has it now, or as it had it when
 * the recording started if it is gone: an exec since (its record may even
 * have been on its way when the recording started) renames it.
 */
static const char *target_comm(struct fg_recording *r)
{
	const struct fg_process *p = fg_proctab__current(r->procs, r->targets[0].pid);

	if (fg_process_is(p, r->targets[0].lineage))
		memcpy(r->target_comm, p->comm, sizeof(r->target_comm));
	return r->target_comm;
}

/*
 * The resolver's figures: live while it runs, kept once the recording
 * finished (the resolver is gone then). r->resolved is a cache.
 */
static const struct fg_resolve_stats *resolved(const struct fg_recording *r)
{
	struct fg_recording *w = (struct fg_recording *)r;

	if (w->res)
		fg_resolver__stats(w->res, &w->resolved);
	return &w->resolved;
}

void fg_recording__settle(struct fg_recording *r)
{
	if (r->res)
		fg_resolver__replay(r->res, true);
}

size_t fg_recording__waiting(const struct fg_recording *r)
{
	return resolved(r)->waiting;
}

void fg_recording__waits(const struct fg_recording *r, struct fg_recording_waits *ret)
{
	const struct fg_resolve_stats *st = resolved(r);

	*ret = (struct fg_recording_waits){ st->waiting, st->waited, st->degraded };
}

uint64_t fg_recording__samples(const struct fg_recording *r)
{
	return resolved(r)->samples;
}

const struct fg_stack_quality *fg_recording__stack_quality(const struct fg_recording *r)
{
	return &resolved(r)->quality;
}

enum fg_call_graph fg_recording__call_graph(const struct fg_recording *r)
{
	return r->opts.call_graph;
}

const struct fg_recording_opts *fg_recording__opts(const struct fg_recording *r)
{
	return &r->opts;
}

uint64_t fg_recording__rate_limited(const struct fg_recording *r)
{
	struct fg_offcpu_stats o = r->offcpu_stats;

	if (r->offcpu)
		fg_offcpu__stats(r->offcpu, &o);
	return o.rate_limited;
}

uint64_t fg_recording__lost(const struct fg_recording *r)
{
	struct fg_offcpu_stats o = r->offcpu_stats;
	struct fg_cpu_counters c;
	uint64_t lost;

	if (r->offcpu)
		fg_offcpu__stats(r->offcpu, &o);
	lost = fg_offcpu_lost(&o);
	if (r->state == FINISHED)
		return lost + r->totals.lost + r->totals.lost_samples;
	if (r->events) {
		fg_evset__totals(r->events, &c);
		lost += c.lost + c.lost_samples;
	}
	return lost;
}

uint64_t fg_recording__started(const struct fg_recording *r)
{
	return r->started;
}

static double duration_s(const struct fg_recording *r)
{
	return (double)((r->stopped ? r->stopped : fgd_now()) - r->started) / 1e9;
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void stack_quality_line(const struct fg_recording *r, char *buf, size_t size)
{
	const struct fg_stack_quality *q = &resolved(r)->quality;
	int n;

	if (r->opts.call_graph == FG_CALL_GRAPH_DWARF)
		n = snprintf(buf, size, "call graph: dwarf (%u-byte stack dumps)",
			     r->opts.stack_dump);
	else
		n = snprintf(buf, size, "call graph: frame pointers");
	if (n < 0 || (size_t)n >= size)
		return;
	snprintf(buf + n, size - (size_t)n,
		 "   user stacks: %" PRIu64 ", %.1f%% complete, %.1f%% truncated, %.1f%% failed",
		 q->user_stacks, share(q->complete, q->user_stacks),
		 share(q->truncated, q->user_stacks), share(q->failed, q->user_stacks));
}

/*
 * The recording as a timed profile (common/profile/timed.h): its stacks and every
 * sample at its Unix ms, over the period it ran.
 */
static int timed_profile(const struct fg_recording *r, struct fg_timed **ret)
{
	_cleanup_(fg_timed__freep) struct fg_timed *t = NULL;
	_cleanup_free_ uint32_t *names = NULL, *ids = NULL;
	size_t n_names = fg_folded__n_names(r->model), n_stacks = fg_folded__n_stacks(r->model);
	const struct times *tm = &r->times;
	int err;

	err = fg_timed__new(in_us(r) ? FG_TIMED_US : FG_TIMED_SAMPLES, FG_TIMED_CLOCK_UNIX, &t);
	if (err < 0)
		return err;
	fg_timed__set_period(t, r->started_wall,
			     r->started_wall + (int64_t)((r->stopped - r->started) / 1000000));
	names = malloc(MAX(n_names, (size_t)1) * sizeof(*names));
	ids = malloc(MAX(n_stacks, (size_t)1) * sizeof(*ids));
	if (!names || !ids)
		return -ENOMEM;
	memset(names, 0xff, n_names * sizeof(*names));
	for (size_t i = 0; i < n_stacks; i++) {
		err = fg_folded__add_from(fg_timed__model(t), r->model, (uint32_t)i, 0, names,
					  &ids[i]);
		if (err < 0)
			return err;
	}
	for (size_t i = 0; i < tm->n; i++) {
		err = fg_timed__add_id(t, r->started_wall + tm->at[i], ids[tm->stack[i]],
				       tm->weight ? tm->weight[i] : 1);
		if (err < 0)
			return err;
	}
	*ret = TAKE_PTR(t);
	return 0;
}

/* Whether the client asked for a range of the recording's time. */
static bool ranged(const struct fg_recording *r)
{
	return r->opts.req.since_ms || r->opts.req.until_ms;
}

/*
 * The result of a timed recording, or of one cut to a range: made from the
 * samples' times, the model goes.
 */
static int timed_result(struct fg_recording *r, const struct fg_result_opts *ro)
{
	_cleanup_(fg_timed__freep) struct fg_timed *t = NULL;
	const struct fg_timed_sample *v;
	int64_t since, until;
	struct fg_folded *model = NULL;
	size_t n;
	int err;

	err = timed_profile(r, &t);
	r->model = fg_folded__free(r->model);
	if (err >= 0)
		err = fg_timed__sort(t);
	if (err < 0)
		return err;
	/* A range's open ends are the recording's, its samples all in it (the last ms's too). */
	fg_timed__period(t, &since, &until);
	v = fg_timed__samples(t);
	n = fg_timed__n_samples(t);
	if (n > 0) {
		since = MIN(since, v[0].time);
		until = MAX(until, v[n - 1].time + 1);
	}
	if (r->opts.req.since_ms)
		since = r->opts.req.since_ms;
	if (r->opts.req.until_ms)
		until = r->opts.req.until_ms;
	until = MAX(since, until);
	if (ranged(r) && r->opts.req.format == FG_FORMAT_TIMED) {
		struct fg_timed *cut = NULL;

		err = fg_timed__between(t, since, until, &cut);
		fg_timed__free(t);
		t = cut;
	}
	if (err < 0)
		return err;
	if (r->opts.req.format == FG_FORMAT_TIMED)
		return fg_result__new_timed(TAKE_PTR(t), ro, &r->result);
	model = fg_folded__new();
	if (!model)
		return -ENOMEM;
	err = fg_timed__range(t, since, until, NULL, NULL, model);
	if (err < 0) {
		fg_folded__free(model);
		return err;
	}
	return fg_result__new(model, ro, &r->result);
}

/*
 * pprof from the stacks as locations: addresses, mappings, inline lines.
 * The names model stays until the result is built (the locations' names
 * are its), and so does the resolver. Not for a view that hides kernel
 * frames, nor for one side's frames only (both work on names): those get
 * pprof from names.
 */
static int locations_result(struct fg_recording *r, const struct fg_result_opts *ro,
			    struct fg_pprof_meta *pprof)
{
	struct fg_folded *model;
	int err = fg_loc_profile__pprof(r->locs, r->res, r->model, r->sym, pprof, &model);

	return err < 0 ? err : fg_result__new(model, ro, &r->result);
}

int fg_recording__finish(struct fg_recording *r)
{
	char subtitle[512], info[3][256];
	const char *info_lines[] = { info[0], info[1], info[2], NULL };
	struct fg_result_opts ro = {
		.format = r->opts.req.format,
		.view = r->opts.view,
		.title = r->opts.req.title[0] ? r->opts.req.title : "Flame Graph",
		.subtitle = subtitle,
		.info = info_lines,
	};
	struct fg_pprof_meta pprof = {
		.values = r->opts.req.off_cpu ? FG_PPROF_OFF_CPU :
			  r->opts.req.wall    ? FG_PPROF_WALL :
						FG_PPROF_SAMPLES,
		.period_ns = r->opts.frequency ? 1000000000u / r->opts.frequency : 0,
		.time_ns = r->started_wall * 1000000,
		.roots = r->opts.req.group_by != FG_GROUP_PROCESS ? FG_PPROF_ROOTS_CGROUP_PROCESS :
								    FG_PPROF_ROOTS_PROCESS,
		.pid = true,
		.tid = r->opts.req.with_tid,
		.comments = info_lines,
	};
	struct fg_speedscope_meta speedscope = {
		.unit = in_us(r) ? FG_SPEEDSCOPE_MICROSECONDS : FG_SPEEDSCOPE_SAMPLES,
		.roots = r->opts.req.group_by != FG_GROUP_PROCESS ?
				 FG_SPEEDSCOPE_ROOTS_CGROUP_PROCESS :
				 FG_SPEEDSCOPE_ROOTS_PROCESS,
		.pid = true,
		.tid = r->opts.req.with_tid,
		/* What the user called it, or what was recorded where ("host: pid N (comm)"). */
		.name = r->opts.req.title[0] ? r->opts.req.title : subtitle,
	};
	const struct fg_resolve_stats *st;
	int err;

	ro.pprof = &pprof;
	ro.speedscope = &speedscope;
	ro.frames = r->opts.req.frames;
	ro.roots = r->n_roots;
	if (in_us(r))
		ro.count_name = "us";
	if (r->opts.req.off_cpu)
		ro.palette = FG_PALETTE_IO;
	fg_recording__stop(r);
	if (r->offcpu) {
		/*
		 * What the ring still holds, within a bound (the server gave a
		 * recording behind time to catch up: what is left then is counted
		 * as lost), what waits for a stack copy, then the source's
		 * figures, kept.
		 */
		(void)fg_offcpu__drain(r->offcpu, on_block, r, fgd_now() + FINISH_BLOCKS_NS);
		(void)fg_offcpu__abandon(r->offcpu);
		(void)fg_offcpu__flush(r->offcpu, on_block, r);
		fg_offcpu__stats(r->offcpu, &r->offcpu_stats);
		r->offcpu = fg_offcpu__free(r->offcpu);
	}
	if (r->events)
		fg_evset__totals(r->events, &r->totals);
	/* Keep each CPU's figures for the metadata; the events go now. */
	r->n_cpus = r->events ? fg_evset__n(r->events) : 0;
	r->cpus = calloc(r->n_cpus, sizeof(*r->cpus));
	if (!r->cpus)
		r->n_cpus = 0;
	for (size_t i = 0; i < r->n_cpus; i++)
		fg_cpu_counters_status(fg_evset__cpu(r->events, i),
				       fg_evset__counters(r->events, i), &r->cpus[i]);
	r->events = fg_evset__free(r->events);
	account_rings(r);
	r->state = FINISHED;
	/* What still waits gets what is known now: the result is due. */
	fg_recording__settle(r);
	st = resolved(r);
	/* Without it (ENOMEM), the metadata lacks the resolver's lists. */
	(void)fg_resolver__metadata(r->res, &r->resolver_meta);

	if (r->n_targets == 1)
		snprintf(subtitle, sizeof(subtitle), "%s: pid %d (%s)", r->hostname,
			 r->targets[0].pid, target_comm(r));
	else if (r->n_targets > 1)
		snprintf(subtitle, sizeof(subtitle), "%s: %zu processes", r->hostname,
			 r->n_targets);
	else
		snprintf(subtitle, sizeof(subtitle), "%s: all CPUs", r->hostname);
	if (r->opts.req.off_cpu)
		snprintf(info[0], sizeof(info[0]),
			 "event: %s   duration: %.1f s   blocks: %" PRIu64 " of %u us or more, "
			 "%.3f s blocked   lost: %" PRIu64,
			 FG_OFFCPU_EVENT, duration_s(r), st->samples, r->opts.req.min_block_us ?: 1,
			 (double)r->blocked_us / 1e6, fg_offcpu_lost(&r->offcpu_stats));
	else if (r->opts.req.wall)
		snprintf(
			info[0], sizeof(info[0]),
			"wall clock: %s at %u Hz + %s   duration: %.1f s   on-CPU samples: %" PRIu64
			"   blocks: %" PRIu64 ", %.3f s   lost: %" PRIu64,
			r->opts.event.name, r->opts.frequency, FG_OFFCPU_EVENT, duration_s(r),
			st->samples - r->blocks, r->blocks, (double)r->blocked_us / 1e6,
			r->totals.lost + r->totals.lost_samples + fg_offcpu_lost(&r->offcpu_stats));
	else
		snprintf(info[0], sizeof(info[0]),
			 "event: %s   frequency: %u Hz   duration: %.1f s   samples: %" PRIu64
			 "   lost: %" PRIu64 "   throttled: %" PRIu64,
			 r->opts.event.name, r->opts.frequency, duration_s(r), st->samples,
			 r->totals.lost + r->totals.lost_samples, r->totals.throttled);
	snprintf(info[1], sizeof(info[1]),
		 "frames: %" PRIu64 " named, %" PRIu64 " module+offset, %" PRIu64
		 " unknown   unreadable binaries: %" PRIu64 "   dropped (limits): %" PRIu64,
		 st->frames[FG_FRAME_NAMED] + st->frames[FG_FRAME_KERNEL] +
			 st->frames[FG_FRAME_JIT],
		 st->frames[FG_FRAME_OFFSET],
		 st->frames[FG_FRAME_UNKNOWN] + st->frames[FG_FRAME_KERNEL_UNKNOWN], st->unreadable,
		 st->dropped_full);
	stack_quality_line(r, info[2], sizeof(info[2]));
	pprof.duration_ns = (int64_t)(r->stopped - r->started);
	/* The model goes to the result, which shows the client what its view allows. */
	if (r->opts.req.format == FG_FORMAT_TIMED || ranged(r))
		err = timed_result(r, &ro);
	else if (r->locs && !r->opts.view.hide_kernel && r->opts.req.frames == FG_FRAMES_ALL)
		err = locations_result(r, &ro, &pprof);
	else
		err = fg_result__new(TAKE_PTR(r->model), &ro, &r->result);
	/* The location memo has done its job once the output is built. */
	r->res = fg_resolver__free(r->res);
	r->locs = fg_loc_profile__free(r->locs);
	r->model = fg_folded__free(r->model);
	times_done(&r->times);
	/* From now on the recording holds its result: what the server streams. */
	fg_budget__account(r->budget, FG_BUDGET_RECORDINGS, &r->tables_charged,
			   r->result ? fg_result__bytes(r->result) : 0);
	return err;
}

/* The off-CPU source's part, for an off-CPU or wall-clock recording. */
static struct fg_meta_off_cpu off_cpu_meta(const struct fg_recording *r)
{
	const struct fg_offcpu_stats *o = &r->offcpu_stats;
	bool dwarf = r->opts.call_graph == FG_CALL_GRAPH_DWARF;

	return (struct fg_meta_off_cpu){
		.min_block_us = r->opts.req.min_block_us ?: 1,
		.blocks = r->blocks,
		.blocked_us = r->blocked_us,
		.lost_threads = o->lost_threads,
		.lost_ring = o->lost_ring,
		.lost_late = o->lost_late,
		.rate_limit = r->opts.off_cpu_rate,
		.rate_limited = o->rate_limited,
		.ring_bytes = o->ring_bytes,
		.kernel_stack_failed = o->kernel_stack_failed,
		.user_stack_failed = o->user_stack_failed,
		.switch_ins_unseen = o->switch_ins_unseen,
		.dwarf = dwarf,
		.stack_dump =
			dwarf ? MIN(r->opts.stack_dump, (uint64_t)FG_OFFCPU_MAX_DUMP_BYTES) : 0,
		.user_dump_failed = dwarf ? o->user_dump_failed : 0,
	};
}

/* The pids of the targets that exited, into m (owned). */
static int exited_meta(const struct fg_recording *r, struct fg_recording_meta *m)
{
	m->exited = calloc(MAX(r->n_targets, (size_t)1), sizeof(*m->exited));
	if (!m->exited)
		return -ENOMEM;
	for (size_t i = 0; i < r->n_targets; i++)
		if (r->targets[i].exited)
			m->exited[m->n_exited++] = r->targets[i].pid;
	return 0;
}

struct json_object *fg_recording__metadata(struct fg_recording *r)
{
	_cleanup_(fg_recording_meta_done) struct fg_recording_meta m = {};
	const struct fg_resolve_stats *st = resolved(r);
	struct fg_cpu_counters c = r->totals;
	struct json_object *o;
	bool ranged_ = ranged(r);

	if (r->state != FINISHED && r->events)
		fg_evset__totals(r->events, &c);
	if (r->offcpu)
		fg_offcpu__stats(r->offcpu, &r->offcpu_stats);
	m = (struct fg_recording_meta){
		.has_off_cpu = r->opts.req.off_cpu || r->opts.req.wall,
		/* Off-CPU and wall-clock: samples count µs. */
		.unit = r->opts.req.off_cpu || r->opts.req.wall ? "us" : NULL,
		/* Wall-clock: the on-CPU event, with "wall" and the off-CPU part beside it. */
		.event = r->opts.req.off_cpu ? FG_OFFCPU_EVENT : r->opts.event.name,
		.wall = r->opts.req.wall,
		.frequency = r->opts.frequency,
		.duration_ms = (uint64_t)(duration_s(r) * 1000),
		.samples = st->samples,
		.samples_seen = c.samples,
		.other_processes = st->filtered,
		.other_threads = r->other_threads,
		.lost = c.lost + c.lost_samples,
		.throttled = c.throttled,
		.malformed = c.malformed,
		.dropped = st->dropped_full,
		.waited = st->waited,
		.degraded = st->degraded,
		.stacks = r->result ? fg_result__n_stacks(r->result) :
			  r->model  ? fg_folded__n_stacks(r->model) :
				      0,
		.kernel_hidden = r->opts.view.hide_kernel,
		.memory_limited = r->memory_limited,
		.times_dropped = r->times.dropped,
		.ranged = ranged_,
		.since_ms = ranged_ ? r->opts.req.since_ms : 0,
		.until_ms = ranged_ ? r->opts.req.until_ms : 0,
		.call_graph = fg_call_graph_name(r->opts.call_graph),
		.has_stack_dump = r->opts.call_graph == FG_CALL_GRAPH_DWARF,
		.stack_dump = r->opts.call_graph == FG_CALL_GRAPH_DWARF ? r->opts.stack_dump : 0,
		.inline_frames = r->opts.req.inline_frames,
		.demangle = r->opts.req.demangle,
	};
	if (m.has_off_cpu)
		m.off_cpu = off_cpu_meta(r);
	fg_stack_quality_status(&st->quality, &m.stack_quality);
	if (exited_meta(r, &m) < 0)
		return NULL;
	/* Frames, unreadable binaries, JIT maps: the resolver's, live or kept at finish. */
	if (r->res && fg_resolver__metadata(r->res, &m.resolve) < 0)
		return NULL;
	if (!r->res)
		m.resolve = r->resolver_meta;
	m.cpus = r->cpus;
	m.n_cpus = r->n_cpus;
	o = fg_recording_meta_to_json(&m);
	/* Borrowed from r: not m's to free. */
	if (!r->res)
		m.resolve = (struct fg_meta_resolve){};
	m.cpus = NULL;
	return o;
}

int fg_recording__emit(struct fg_recording *r, fg_write_fn fn, void *ctx, size_t budget)
{
	if (!r->result)
		return -EINVAL;
	return fg_result__emit(r->result, fn, ctx, budget);
}
