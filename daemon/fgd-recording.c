/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "budget.h"
#include "folded.h"
#include "fgd-clock.h"
#include "fgd-jit.h"
#include "fgd-recording.h"
#include "hash.h"
#include "idxmap.h"
#include "macro.h"
#include "result.h"

/* Bounds on what one recording may hold; what they refuse is counted. */
#define MAX_STACKS (1U << 20)
#define MAX_LOCATIONS (1U << 22)
#define MAX_UNREADABLE_LISTED 32
#define MAX_JIT_MAPS 1024
#define MAX_JIT_LISTED 32
/*
 * The waiting room of samples whose binaries are being read (see park()): an
 * eighth of the tables' budget, within these bounds. A DWARF-mode sample
 * takes its stack dump along (32 KiB by default): 8 MiB holds about 250,
 * two seconds of both CPUs at 99 Hz; 64 MiB, a quarter second of 64 CPUs.
 */
#define PARK_MIN_BYTES (8ULL << 20)
#define PARK_MAX_BYTES (64ULL << 20)
/*
 * A sample waits this long at most: then it is handled with what is known.
 * libc with its DWARF takes a tenth of a second to read, a large C++
 * program a second or two; longer is a hostile binary, or a hung
 * filesystem, and holds up every load queued behind it. Well within the
 * time an ended process stays in the table (fgd.c's REAP_GRACE_NS), so the
 * sample still finds its process.
 */
#define PARK_MAX_WAIT_NS (5ULL * 1000000000ULL)

DEFINE_TRIVIAL_CLEANUP_FUNC(struct json_object *, json_object_put);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_recording *, fg_recording__free);

/* What a frame resolved to, for the stack-quality figures. */
enum frame_kind {
	FRAME_NAMED,
	FRAME_OFFSET,
	FRAME_UNKNOWN,
	FRAME_KERNEL,
	FRAME_KERNEL_UNKNOWN,
	FRAME_JIT,
	_FRAME_KIND_MAX,
};

/*
 * A raw code location seen in a callchain, named once when first seen. It
 * stands for one frame or several: the function containing it, then each
 * function inlined there, outermost first. Their name ids are a range of
 * the recording's loc_names, so a sample copies ranges and never looks
 * anything up again.
 */
struct location {
	struct fg_dso *dso; /* owned reference, keeping the pointer in the key valid; NULL for kernel */
	uint64_t addr;      /* file offset (user) or address (kernel) */
	uint32_t names;     /* index of its first frame name id in loc_names */
	uint8_t n_names;    /* >= 1; at most FG_SYM_MAX_FRAMES */
	bool kernel;
	bool outermost;     /* named like a process's or thread's first function */
	bool jit;           /* addr is a JIT map entry's id (fgd-jit.h), dso NULL */
	bool provisional;   /* named without waiting for the loader: not in loc_index */
	uint8_t kind;       /* enum frame_kind, of its outermost frame */
};

struct loc_key {
	const struct fg_dso *dso;
	uint64_t addr;
	bool kernel;
	bool jit;
};

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
	struct fg_symbolizer *sym; /* borrowed */
	struct fg_unwinder *unwinder; /* borrowed; DWARF mode only */
	struct fg_evset *events;   /* owned until finish */
	enum state state;

	struct target *targets; /* owned */
	size_t n_targets;
	char target_comm[FG_COMM_LEN];

	struct fg_folded *model; /* owned: the aggregate itself, until finish hands it to result */
	struct location *locs;   /* owned */
	size_t n_locs, cap_locs;
	struct fg_idxmap loc_index;
	uint32_t *loc_names; /* owned: frame name ids of every location, in ranges */
	size_t n_loc_names, cap_loc_names;
	uint32_t *scratch; /* owned: one sample's locations, leaf first */
	size_t cap_scratch;
	uint32_t *stack;   /* owned: one sample's frame name ids, root first */
	size_t cap_stack;
	uint64_t *chain;   /* owned: DWARF mode: one sample's kernel callchain and unwound user pcs */
	size_t cap_chain;
	struct fg_stack_quality quality;
	size_t max_locs;   /* lowered to the current count when memory runs out */
	bool memory_limited;

	uint64_t started, stopped; /* CLOCK_MONOTONIC ns */
	struct fg_cpu_counters totals; /* of the events, at finish */
	struct fg_cpu_counters *per_cpu; /* owned: each CPU's, at finish */
	int *cpu_ids;                    /* owned */
	size_t n_cpus;
	uint64_t samples;          /* kept */
	uint64_t filtered;         /* other processes' samples */
	uint64_t dropped_full;     /* refused: a table was full */
	uint64_t frames[_FRAME_KIND_MAX];
	uint64_t inlined_frames; /* frames added for inlined functions */
	uint64_t unreadable_count;
	struct fg_dso *unreadable[MAX_UNREADABLE_LISTED]; /* owned references */
	size_t n_unreadable;

	struct fg_jit *jit;           /* borrowed from procs */
	struct fg_jitmap **jit_maps;  /* owned references: the JIT maps looked at, for the metadata */
	size_t n_jit_maps, cap_jit_maps;
	struct fg_idxmap jit_index;   /* over jit_maps, by pointer */
	struct fg_jitmap *jit_last;   /* the last one noted: most samples come from one process */
	bool jit_maps_truncated;      /* more than MAX_JIT_MAPS were looked at */

	/*
	 * Samples waiting for a binary to be read, copied in arrival order
	 * (struct parked entries): the loader's thread reads it meanwhile, and
	 * drain rounds take them again (replay()).
	 */
	uint8_t *park;              /* owned */
	size_t park_len, park_cap;
	size_t park_dead;           /* bytes of handled entries not compacted away yet */
	size_t n_parked;
	uint64_t park_max;          /* bytes */
	uint64_t waited;            /* samples that waited, ever (each counted once) */
	uint64_t degraded;          /* samples handled without all they waited for (handle_now()) */
	bool nowait;                /* handling one that way now */
	bool sample_degraded;       /* the sample being handled got less than was coming */

	struct fg_result *result; /* owned: the output, once finished */
	/* What the budget's parts hold of ours (opts.budget): the tables (or the result), the room. */
	uint64_t tables_charged, park_charged;
};

struct fg_recording *fg_recording__free(struct fg_recording *r)
{
	if (!r)
		return NULL;
	fg_budget__account(r->opts.budget, FG_BUDGET_RECORDINGS, &r->tables_charged, 0);
	fg_budget__account(r->opts.budget, FG_BUDGET_WAITING, &r->park_charged, 0);
	fg_evset__free(r->events);
	fg_result__free(r->result);
	fg_folded__free(r->model);
	for (size_t i = 0; i < r->n_locs; i++)
		fg_dso__unref(r->locs[i].dso);
	free(r->locs);
	fg_idxmap_done(&r->loc_index);
	free(r->loc_names);
	for (size_t i = 0; i < r->n_unreadable; i++)
		fg_dso__unref(r->unreadable[i]);
	for (size_t i = 0; i < r->n_jit_maps; i++)
		fg_jitmap__unref(r->jit_maps[i]);
	free(r->jit_maps);
	fg_idxmap_done(&r->jit_index);
	free(r->scratch);
	free(r->stack);
	free(r->chain);
	free(r->park);
	free(r->targets);
	free(r->per_cpu);
	free(r->cpu_ids);
	free(r);
	return NULL;
}

int fg_recording__new(const struct fg_recording_opts *opts, struct fg_proctab *procs,
		      struct fg_symbolizer *sym, struct fg_unwinder *unwinder,
		      struct fg_recording **ret, pid_t *ret_bad_pid)
{
	_cleanup_(fg_recording__freep) struct fg_recording *r = NULL;
	struct fg_evset_opts eo = {
		.kind = FG_EVSET_SAMPLE,
		.event = opts->event,
		.frequency = opts->frequency,
		.max_stack = opts->max_stack,
		.call_graph = opts->call_graph,
		.stack_dump = opts->stack_dump,
		.ring_pages = opts->ring_pages,
	};
	int err;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	if (opts->call_graph == FG_CALL_GRAPH_DWARF && !unwinder)
		return -EINVAL;
	r->unwinder = unwinder;
	r->opts = *opts;
	/* The suffix a request may do without is the view's to take off (view.h). */
	r->opts.view.kernel_suffix = opts->req.kernel_suffix;
	r->opts.hostname = NULL;
	snprintf(r->hostname, sizeof(r->hostname), "%s", opts->hostname ? opts->hostname : "");
	r->procs = procs;
	r->sym = sym;
	r->jit = fg_proctab__jit(procs);
	r->model = fg_folded__new();
	if (!r->model)
		return -ENOMEM;
	fg_folded__set_max_stacks(r->model, MAX_STACKS);
	r->max_locs = MAX_LOCATIONS;
	r->park_max = MIN(MAX(opts->max_bytes / 8, PARK_MIN_BYTES), PARK_MAX_BYTES);

	if (!opts->req.all) {
		r->targets = calloc(opts->req.n_pids, sizeof(*r->targets));
		if (!r->targets)
			return -ENOMEM;
		for (size_t i = 0; i < opts->req.n_pids; i++) {
			struct fg_process *p = fg_proctab__current(procs, opts->req.pids[i]);

			if (!p || p->end_time != FG_TIME_ALIVE) {
				if (ret_bad_pid)
					*ret_bad_pid = opts->req.pids[i];
				return -ESRCH;
			}
			r->targets[r->n_targets++] = (struct target){ p->pid, p->lineage, p->serial, false };
			if (i == 0)
				memcpy(r->target_comm, p->comm, sizeof(r->target_comm));
		}
	}
	(void)fg_symbolizer__refresh_kernel(sym, false);
	err = fg_evset__open(&eo, &r->events);
	if (err < 0)
		return err;
	err = fg_evset__enable(r->events);
	if (err < 0)
		return err;
	r->started = fgd_now();
	*ret = TAKE_PTR(r);
	return 0;
}

struct fg_evset *fg_recording__events(struct fg_recording *r)
{
	return r->state == FINISHED ? NULL : r->events;
}

/* ---- the hot path ---- */

static bool loc_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct location *l = &((const struct fg_recording *)ctx)->locs[idx];
	const struct loc_key *k = key;

	return l->addr == k->addr && l->dso == k->dso && l->kernel == k->kernel && l->jit == k->jit;
}

/*
 * Copies name, cut to a bounded length, with its suffix into the model, which
 * cleans it (common/framename.h: ';', control bytes, invalid UTF-8).
 */
static int intern_name(struct fg_recording *r, const char *name, const char *suffix, uint32_t *ret)
{
	char buf[1024];
	size_t len = strnlen(name, sizeof(buf) - 8);

	memcpy(buf, name, len);
	if (len == 0)
		buf[len++] = '?';
	if (suffix) {
		memcpy(buf + len, suffix, strlen(suffix));
		len += strlen(suffix);
	}
	return fg_folded__intern(r->model, buf, len, ret);
}

static void note_unreadable(struct fg_recording *r, struct fg_dso *dso)
{
	for (size_t i = 0; i < r->n_unreadable; i++)
		if (r->unreadable[i] == dso)
			return;
	r->unreadable_count++;
	if (r->n_unreadable < MAX_UNREADABLE_LISTED)
		r->unreadable[r->n_unreadable++] = fg_dso__ref(dso);
}

/* Interns one more frame name of the location being named: its ids are the last of loc_names. */
static int add_loc_name(struct fg_recording *r, const char *name, const char *suffix)
{
	uint32_t id;
	int err;

	err = FG_GROW(r->loc_names, r->cap_loc_names, r->n_loc_names + 1);
	if (err < 0)
		return err;
	err = intern_name(r, name, suffix, &id);
	if (err < 0)
		return err;
	r->loc_names[r->n_loc_names++] = id;
	return 0;
}

/*
 * Where a process's or a thread's user stack begins: a frame-pointer chain
 * that reaches one of these is complete. (DWARF mode knows from the CFI.)
 */
static bool is_outermost_name(const char *name)
{
	static const char *const names[] = {
		"_start", "__libc_start_main", "__libc_start_main_impl", "__libc_start_call_main",
		"start_thread", "clone", "clone3", "__clone", "__clone3", "__clone_internal",
	};

	for (size_t i = 0; i < ELEMENTSOF(names); i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

/* The sampled process reaches the very file it mapped, while it lives: "" if proc or m is NULL. */
static void map_files_hint(const struct fg_process *proc, const struct fg_map *m, char *buf, size_t size)
{
	buf[0] = '\0';
	if (proc && m)
		snprintf(buf, size, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, proc->pid, m->start,
			 m->end);
}

/*
 * Names a new location; for user code, proc and m say where it was
 * sampled. -EINPROGRESS when its names are being read on the loader's
 * thread (the binary, its DWARF, kallsyms): nothing was added then. With
 * r->nowait, names what is known now and marks the location provisional.
 */
static int name_location(struct fg_recording *r, struct location *l, const struct fg_process *proc,
			 const struct fg_map *m)
{
	unsigned flags = (r->opts.req.inline_frames ? FG_SYM_INLINE : 0) |
			 (r->opts.req.demangle ? FG_SYM_DEMANGLE : 0);
	struct fg_sym_frames fr;
	const char *name;
	char hint[80];
	int err;

	l->names = (uint32_t)r->n_loc_names;
	l->n_names = 1;
	if (l->kernel) {
		name = fg_symbolizer__name_kernel(r->sym, l->addr);
		if (!name) {
			/* New kernel code (a module, a BPF program): kallsyms is read again, and we wait. */
			err = fg_symbolizer__refresh_kernel(r->sym, true);
			if (err == -EINPROGRESS && !r->nowait)
				return err;
			l->provisional = err == -EINPROGRESS;
			if (err > 0)
				name = fg_symbolizer__name_kernel(r->sym, l->addr);
		}
		l->kind = name ? FRAME_KERNEL : FRAME_KERNEL_UNKNOWN;
		/*
		 * Always with the suffix: it is how a kernel frame is told from a user one
		 * by name (view.h), which the client's view hides or takes off as names leave.
		 */
		return add_loc_name(r, name ? name : "[unknown]", FG_KERNEL_SUFFIX);
	}
	map_files_hint(proc, m, hint, sizeof(hint));
	/* A binary, or the names of this address, still being read: the sample waits (park()). */
	err = fg_symbolizer__frames(r->sym, l->dso, l->addr, hint[0] ? hint : NULL,
				    flags | (r->nowait ? FG_SYM_NOWAIT : 0), &fr);
	if (err < 0)
		return err;
	l->provisional = err > 0;
	l->kind = fr.result == FG_SYM_NAMED ? FRAME_NAMED :
		  fr.result == FG_SYM_OFFSET ? FRAME_OFFSET : FRAME_UNKNOWN;
	/* The real function, not what was inlined into it; C names, never demangled. */
	l->outermost = fr.result == FG_SYM_NAMED && is_outermost_name(fr.names[0]);
	if (l->dso && fg_dso__state(l->dso) == FG_DSO_FAILED)
		note_unreadable(r, l->dso);
	for (size_t i = 0; i < fr.n; i++) {
		err = add_loc_name(r, fr.names[i], NULL);
		if (err < 0) {
			r->n_loc_names = l->names;
			return err;
		}
	}
	l->n_names = (uint8_t)fr.n;
	return 0;
}

/* The slot a new location goes in, past the last one: 0, -E2BIG when the table is full, or -ENOMEM. */
static int reserve_location(struct fg_recording *r, struct location **ret)
{
	int err;

	if (r->n_locs >= r->max_locs)
		return -E2BIG;
	err = FG_GROW(r->locs, r->cap_locs, r->n_locs + 1);
	if (err < 0)
		return err;
	*ret = &r->locs[r->n_locs];
	return 0;
}

/* Makes the named location in the reserved slot l findable under hash h: its index, or -ENOMEM. */
static int64_t commit_location(struct fg_recording *r, struct location *l, uint64_t h)
{
	int err = 0;

	/*
	 * Named with less than was coming (see handle_sample()'s nowait): kept
	 * for this sample only, out of the index, so the next one asks again.
	 */
	if (l->provisional)
		r->sample_degraded = true;
	else
		err = fg_idxmap_insert(&r->loc_index, h, (uint32_t)r->n_locs);
	if (err < 0) {
		r->n_loc_names = l->names; /* its names were the last ones added */
		return err;
	}
	return (int64_t)r->n_locs++;
}

/*
 * The location's index; -E2BIG when the table is full. proc and m (user code
 * only, else NULL) are used only to name a location seen for the first time.
 */
static int64_t location(struct fg_recording *r, struct fg_dso *dso, uint64_t addr, bool kernel,
			const struct fg_process *proc, const struct fg_map *m)
{
	struct loc_key k = { dso, addr, kernel };
	uint64_t h = fg_hash_combine(fg_hash_mix((uintptr_t)dso ^ kernel), addr);
	int64_t i = fg_idxmap_find(&r->loc_index, h, loc_eq, r, &k);
	struct location *l;
	int err;

	if (i >= 0)
		return i;
	err = reserve_location(r, &l);
	if (err < 0)
		return err;
	*l = (struct location){ .dso = fg_dso__ref(dso), .addr = addr, .kernel = kernel };
	err = name_location(r, l, proc, m);
	i = err < 0 ? err : commit_location(r, l, h);
	if (i < 0)
		fg_dso__unref(l->dso);
	return i;
}

static bool jit_map_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct fg_recording *)ctx)->jit_maps[idx] == key;
}

/* Keeps a reference to a JIT map the recording looked at, so the metadata can report it. */
static void note_jit_map(struct fg_recording *r, struct fg_jitmap *jm)
{
	uint64_t h = fg_hash_mix((uintptr_t)jm);

	if (jm == r->jit_last)
		return;
	if (fg_idxmap_find(&r->jit_index, h, jit_map_eq, r, jm) < 0) {
		if (r->n_jit_maps >= MAX_JIT_MAPS ||
		    FG_GROW(r->jit_maps, r->cap_jit_maps, r->n_jit_maps + 1) < 0 ||
		    fg_idxmap_insert(&r->jit_index, h, (uint32_t)r->n_jit_maps) < 0) {
			r->jit_maps_truncated = true;
			return;
		}
		r->jit_maps[r->n_jit_maps++] = fg_jitmap__ref(jm);
	}
	/* Only a map we hold a reference to: a freed one's address may come back as another. */
	r->jit_last = jm;
}

/*
 * JIT code, named from the process's perf map: the location is the map
 * entry, so every address in one compiled function is one location.
 * -ENOENT if the map does not name ip.
 */
static int64_t jit_location(struct fg_recording *r, struct fg_process *proc, uint64_t ip)
{
	struct fg_jitmap *jm = fg_jit__map(r->jit, proc);
	struct fg_jit_frame f;
	struct loc_key k;
	struct location *l;
	uint64_t h;
	int64_t i;
	int err;

	if (!jm)
		return -ENOENT;
	note_jit_map(r, jm);
	if (fg_jitmap__lookup(r->jit, jm, proc, ip, &f) <= 0)
		return -ENOENT;
	k = (struct loc_key){ .addr = f.id, .jit = true };
	h = fg_hash_combine(fg_hash_mix(2), f.id);
	i = fg_idxmap_find(&r->loc_index, h, loc_eq, r, &k);
	if (i >= 0)
		return i;
	err = reserve_location(r, &l);
	if (err < 0)
		return err;
	*l = (struct location){
		.addr = f.id,
		.jit = true,
		.kind = FRAME_JIT,
		.names = (uint32_t)r->n_loc_names,
		.n_names = 1,
	};
	/* JIT maps spell names as the runtime wants them shown: not demangled. */
	err = add_loc_name(r, f.name, r->opts.req.jit_suffix ? "_[j]" : NULL);
	return err < 0 ? err : commit_location(r, l, h);
}

static int64_t user_location(struct fg_recording *r, struct fg_process *proc, uint64_t ip)
{
	const struct fg_map *m = proc ? fg_process_find_map(proc, ip) : NULL;

	/* Anonymous executable memory, or memory we saw no mapping for: JIT code, perhaps. */
	if (proc && (!m || (m->dso && fg_dso__kind(m->dso) == FG_DSO_ANON))) {
		int64_t loc = jit_location(r, proc, ip);

		if (loc != -ENOENT)
			return loc;
	}
	/* Everything unknown is one location: garbage addresses must not bloat the table. */
	if (!m || !m->dso)
		return location(r, NULL, 0, false, NULL, NULL);
	return location(r, m->dso, ip - m->start + m->pgoff, false, proc, m);
}

static bool wanted(struct fg_recording *r, const struct fg_process *proc)
{
	uid_t uid;

	for (size_t i = 0; i < r->n_targets; i++) {
		if (r->targets[i].pid != proc->pid || !fg_process_is(proc, r->targets[i].lineage))
			continue;
		/* An exec may have made it someone else's (setuid): re-check for non-root clients. */
		if (r->opts.view.uid != 0 && proc->serial != r->targets[i].serial &&
		    (fg_process_owner((struct fg_process *)proc, &uid) < 0 ||
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
			   proc ? fg_proctab__comm(r->procs, (pid_t)s->sid.tid, proc, s->sid.time) : "[unknown]";
	char buf[64];

	/* The stackcollapse-perf.pl --pid / --tid forms. */
	if (r->opts.req.with_tid)
		snprintf(buf, sizeof(buf), "%s-%u/%u", comm, s->sid.pid, s->sid.tid);
	else if (r->opts.req.with_pid)
		snprintf(buf, sizeof(buf), "%s-%u", comm, s->sid.pid);
	else
		return intern_name(r, comm, NULL, ret);
	return intern_name(r, buf, NULL, ret);
}

/* What walking a sample's chain found about its user part, for the stack figures. */
struct user_part {
	int64_t outermost; /* location of the outermost user frame; -1 if none */
	size_t frames;
};

/*
 * Turns a PERF_CONTEXT_*-marked chain, leaf first, into locations in
 * r->scratch. Every frame but a context's first is a return address, looked
 * up at ip - 1 so that it names the call site. Returns how many,
 * -EINPROGRESS when a binary or kallsyms is still being read (the loads of
 * all of them have started), or a negative errno (a table is full).
 */
static int64_t chain_locations(struct fg_recording *r, struct fg_process *proc, const uint64_t *ips,
			       uint64_t nr, struct user_part *user)
{
	enum { NONE, KERNEL, USER } ctx = NONE;
	bool first = true, pending = false;
	size_t n = 0;

	*user = (struct user_part){ .outermost = -1 };
	if (FG_GROW(r->scratch, r->cap_scratch, nr) < 0)
		return -ENOMEM;
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t ip = ips[i];
		int64_t loc;

		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			ctx = ip == (uint64_t)PERF_CONTEXT_KERNEL ? KERNEL :
			      ip == (uint64_t)PERF_CONTEXT_USER ? USER : NONE;
			first = true;
			continue;
		}
		if (ctx == NONE)
			continue;
		if (!first)
			ip--;
		first = false;
		loc = ctx == KERNEL ? location(r, NULL, ip, true, NULL, NULL) : user_location(r, proc, ip);
		if (loc == -EINPROGRESS) {
			/* Go on: every binary this sample needs starts loading now, not one per round. */
			pending = true;
			continue;
		}
		if (loc < 0)
			return loc;
		if (ctx == USER) {
			user->outermost = loc;
			user->frames++;
		}
		r->scratch[n++] = (uint32_t)loc;
	}
	return pending ? -EINPROGRESS : (int64_t)n;
}

/* How a sample's user stack was unwound (DWARF mode): accounted once the sample is kept. */
struct unwound {
	bool user;              /* the sample has a user part */
	uint8_t end;            /* enum fg_unwind_end; FAILED for a 32-bit process */
	uint32_t fp_frames;
};

static void account_unwound(struct fg_recording *r, const struct unwound *u)
{
	if (!u->user)
		return;
	r->quality.user_stacks++;
	r->quality.fp_frames += u->fp_frames;
	if (u->end == FG_UNWIND_OUTERMOST)
		r->quality.complete++;
	else if (u->end == FG_UNWIND_FAILED)
		r->quality.failed++;
	else
		r->quality.truncated++;
}

/*
 * DWARF mode: the kernel callchain holds only kernel frames; the user part
 * is unwound from the sample's registers and stack dump. Builds the same
 * PERF_CONTEXT_*-marked chain the kernel would have, in r->chain, and says
 * how the user part ended in *ret. Returns its length, -EINPROGRESS when
 * some CFI is still being read, or -ENOMEM.
 */
static int64_t dwarf_chain(struct fg_recording *r, const struct fg_record *rec,
			   const struct fg_process *proc, struct unwound *ret)
{
	const struct fg_sample *s = &rec->sample;
	size_t max_user = r->opts.max_stack, n = 0;
	struct fg_unwind_result res;
	int err;

	*ret = (struct unwound){};
	if (FG_GROW(r->chain, r->cap_chain, s->nr + 3 + max_user) < 0)
		return -ENOMEM;
	for (uint64_t i = 0; i < s->nr && s->ips[i] != (uint64_t)PERF_CONTEXT_USER; i++)
		r->chain[n++] = s->ips[i];
	if (n == 0 && (rec->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL) {
		r->chain[n++] = PERF_CONTEXT_KERNEL;
		r->chain[n++] = s->ip;
	}
	/* Kernel threads and the idle task have no user part. */
	if (!proc || s->regs_abi == PERF_SAMPLE_REGS_ABI_NONE)
		return (int64_t)n;
	r->chain[n++] = PERF_CONTEXT_USER;
	ret->user = true;
	err = fg_unwinder__unwind(r->unwinder, proc, s, r->nowait ? FG_UNWINDER_NOWAIT : 0,
				  r->chain + n, max_user, &res);
	r->sample_degraded |= err > 0;
	if (err < 0) {
		/* A 32-bit process: its registers are not the ones asked for. */
		ret->end = FG_UNWIND_FAILED;
		return (int64_t)n;
	}
	if (res.end == FG_UNWIND_PENDING) {
		/* The frames found so far can have their binaries read meanwhile. */
		struct user_part ignored;

		(void)chain_locations(r, (struct fg_process *)proc, r->chain, n + res.n, &ignored);
		return -EINPROGRESS;
	}
	ret->end = res.end;
	ret->fp_frames = (uint32_t)res.fp_frames;
	return (int64_t)(n + res.n);
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
	return intern_name(r, cg, NULL, ret);
}

/* Frame-pointer mode: how far the kernel's walk of the user stack got. */
static void account_fp_chain(struct fg_recording *r, const struct user_part *user)
{
	if (user->outermost < 0)
		return;
	r->quality.user_stacks++;
	if (r->locs[user->outermost].outermost)
		r->quality.complete++;
	else if (user->frames >= r->opts.max_stack)
		r->quality.truncated++;
	else
		r->quality.failed++;
}

/*
 * Adds the n locations in r->scratch (leaf first) as one stack, root first:
 * [cgroup,] comm, then user frames outermost first, then kernel frames;
 * each location expands into its precomputed range of names.
 */
static int add_stack(struct fg_recording *r, const struct fg_sample *s,
		     const struct fg_process *proc, size_t n)
{
	size_t n_roots = r->opts.req.group_by != FG_GROUP_PROCESS ? 2 : 1, total;
	int err;

	if (r->opts.sink)
		n_roots = 0;
	total = n_roots;

	for (size_t i = 0; i < n; i++)
		total += r->locs[r->scratch[i]].n_names;
	if (FG_GROW(r->stack, r->cap_stack, total) < 0)
		return -ENOMEM;
	for (size_t i = n, k = n_roots; i-- > 0;) {
		const struct location *l = &r->locs[r->scratch[i]];

		r->frames[l->kind]++;
		r->inlined_frames += l->n_names - 1u;
		memcpy(r->stack + k, r->loc_names + l->names, l->n_names * sizeof(uint32_t));
		k += l->n_names;
	}
	if (r->opts.sink) {
		r->opts.sink(r->opts.sink_ctx, (struct fg_process *)proc, s, r->stack, total);
		return 0;
	}
	err = n_roots > 1 ? group_frame(r, s, proc, &r->stack[0]) : 0;
	if (err >= 0)
		err = root_frame(r, s, proc, &r->stack[n_roots - 1]);
	if (err >= 0)
		err = fg_folded__add(r->model, r->stack, total, 1.0);
	return err;
}

/*
 * One sample into the aggregate. In DWARF mode, pre (else NULL) says the
 * sample's callchain is already the unwound chain, and how it ended.
 * Returns -EINPROGRESS when something it needs is being read on the
 * loader's thread: nothing is counted then, and the caller parks it to be
 * handled again; when the stack was unwound by then, *ret_unwound is set
 * and r->chain[0..*ret_chain_len) holds the chain, which is all the sample
 * needs from then on.
 */
static int handle_sample(struct fg_recording *r, const struct fg_record *rec, const struct unwound *pre,
			 struct unwound *ret_unwound, size_t *ret_chain_len)
{
	const struct fg_sample *s = &rec->sample;
	bool dwarf = r->opts.call_graph == FG_CALL_GRAPH_DWARF;
	struct fg_process *proc = NULL;
	const uint64_t *ips = s->ips;
	uint64_t nr = s->nr, one_ip[2];
	struct unwound uw = {};
	struct user_part user;
	int64_t n;

	*ret_chain_len = 0;
	r->sample_degraded = false;
	if (s->sid.pid != 0)
		proc = fg_proctab__find(r->procs, (pid_t)s->sid.pid, s->sid.time);
	if (r->n_targets && (!proc || !wanted(r, proc))) {
		r->filtered++;
		return 0;
	}
	if (dwarf && pre) {
		uw = *pre;
	} else if (dwarf) {
		int64_t len = dwarf_chain(r, rec, proc, &uw);

		if (len == -EINPROGRESS)
			return -EINPROGRESS;
		if (len < 0) {
			r->dropped_full++;
			return 0;
		}
		ips = r->chain;
		nr = (uint64_t)len;
	}
	if (nr == 0) {
		/* No callchain (it can fail): the sampled ip alone, in its own context. */
		bool k = (rec->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;

		one_ip[0] = k ? PERF_CONTEXT_KERNEL : PERF_CONTEXT_USER;
		one_ip[1] = s->ip;
		ips = one_ip;
		nr = 2;
	}
	n = chain_locations(r, proc, ips, nr, &user);
	if (n == -EINPROGRESS) {
		if (dwarf && !pre && ips == r->chain) {
			*ret_unwound = uw;
			*ret_chain_len = nr;
		}
		return -EINPROGRESS;
	}
	if (n < 0 || add_stack(r, s, proc, (size_t)n) < 0) {
		r->dropped_full++;
		return 0;
	}
	if (dwarf)
		account_unwound(r, &uw);
	else if (proc)
		account_fp_chain(r, &user);
	r->samples++;
	r->degraded += r->sample_degraded;
	return 0;
}

/*
 * A sample that must not wait any longer (it waited too long, the room is
 * full, or the recording ends): handled with what is known now. Its frames
 * may be module+offset, lack inline frames, or have been unwound by frame
 * pointer where CFI was still being read; it is counted in r->degraded.
 */
static void handle_now(struct fg_recording *r, const struct fg_record *rec, const struct unwound *pre)
{
	struct unwound ignored;
	size_t chain_len;

	r->nowait = true;
	(void)handle_sample(r, rec, pre, &ignored, &chain_len);
	r->nowait = false;
}

/*
 * A parked sample: what handle_sample() reads of a record, followed in
 * the buffer by its callchain, registers and stack dump. A DWARF-mode
 * sample whose stack was unwound before it had to wait keeps the unwound
 * chain instead of its registers and stack (tens of bytes, not kilobytes).
 */
struct parked {
	uint32_t size;     /* of the entry, these arrays included, a multiple of 8 */
	uint16_t misc;
	bool dead;         /* handled: its bytes wait for compact() */
	bool has_unwound;  /* the callchain is the unwound chain, see unwound */
	uint32_t n_regs;
	struct unwound unwound;
	uint64_t wait;     /* the loader's submission count when it was parked: see replay() */
	uint64_t parked_at; /* CLOCK_MONOTONIC ns */
	struct fg_sample_id sid;
	uint64_t ip, period, nr, regs_abi, stack_size;
};

/*
 * Copies a sample that waits for the loader into the waiting room, or
 * handles it at once with what is known (handle_now()) when the room is
 * full. chain, when not NULL, is its unwound chain of chain_len entries,
 * with unwound saying how it ended.
 */
static void park(struct fg_recording *r, const struct fg_record *rec, const uint64_t *chain,
		 size_t chain_len, const struct unwound *unwound)
{
	const struct fg_sample *s = &rec->sample;
	uint64_t nr = chain ? chain_len : s->nr, n_regs = chain ? 0 : s->n_regs;
	uint64_t stack_size = chain ? 0 : s->stack_size;
	uint64_t size = ALIGN_TO(sizeof(struct parked) + (nr + n_regs) * sizeof(uint64_t) + stack_size, 8);
	struct parked *p;
	uint8_t *at;

	/* A room that must grow asks the budget for what doubling it takes. */
	if (r->park_len + size > r->park_max ||
	    (r->park_len + size > r->park_cap &&
	     !fg_budget__fits(r->opts.budget, FG_BUDGET_WAITING, MAX(r->park_cap, size))) ||
	    FG_GROW(r->park, r->park_cap, r->park_len + size) < 0) {
		if (r->park_len + size <= r->park_max)
			fg_budget__refused(r->opts.budget, FG_BUDGET_WAITING);
		handle_now(r, rec, unwound);
		return;
	}
	fg_budget__account(r->opts.budget, FG_BUDGET_WAITING, &r->park_charged, r->park_cap);
	r->waited++;
	p = (struct parked *)(r->park + r->park_len);
	*p = (struct parked){
		.size = (uint32_t)size,
		.misc = rec->misc,
		.has_unwound = chain != NULL,
		.n_regs = (uint32_t)n_regs,
		.unwound = chain ? *unwound : (struct unwound){},
		.wait = fg_loader__submitted(r->opts.loader),
		.parked_at = fgd_now(),
		.sid = s->sid,
		.ip = s->ip,
		.period = s->period,
		.nr = nr,
		.regs_abi = chain ? 0 : s->regs_abi,
		.stack_size = stack_size,
	};
	/* A record without registers or a stack (frame-pointer mode) has NULL for them: no memcpy. */
	at = (uint8_t *)(p + 1);
	if (nr)
		memcpy(at, chain ? chain : s->ips, nr * sizeof(uint64_t));
	at += nr * sizeof(uint64_t);
	if (n_regs)
		memcpy(at, s->regs, n_regs * sizeof(uint64_t));
	at += n_regs * sizeof(uint64_t);
	if (stack_size)
		memcpy(at, s->stack, stack_size);
	r->park_len += size;
	r->n_parked++;
}

/* The record a parked entry stands for; its arrays are borrowed from the entry. */
static void unpark(const struct parked *p, struct fg_record *ret)
{
	const uint64_t *ips = (const uint64_t *)(p + 1);

	*ret = (struct fg_record){ .type = PERF_RECORD_SAMPLE, .misc = p->misc, .sid = p->sid };
	ret->sample = (struct fg_sample){
		.sid = p->sid,
		.ip = p->ip,
		.period = p->period,
		.nr = p->nr,
		.ips = ips,
		.regs_abi = p->regs_abi,
		.regs = ips + p->nr,
		.n_regs = p->n_regs,
		.stack = (const uint8_t *)(ips + p->nr + p->n_regs),
		.stack_size = p->stack_size,
	};
}

/* Moves the entries still waiting to the front of the room, in order. */
static void compact(struct fg_recording *r)
{
	size_t to = 0;

	for (size_t off = 0; off < r->park_len;) {
		struct parked *p = (struct parked *)(r->park + off);
		size_t size = p->size;

		if (!p->dead) {
			memmove(r->park + to, p, size);
			to += size;
		}
		off += size;
	}
	r->park_len = to;
	r->park_dead = 0;
}

/*
 * Handles again the parked samples whose wait may be over: those parked
 * before the last job the loader completed was submitted (the loader
 * completes jobs in order, see fgd-loader.h). One still waiting stays where
 * it is, waiting for what the loader was given since; one that has waited
 * PARK_MAX_WAIT_NS, or every one when all is set, is handled with what is
 * known (handle_now()). Handled entries are marked dead, and the room
 * compacted once they are half of it.
 */
static void replay(struct fg_recording *r, bool all)
{
	uint64_t completed = fg_loader__completed(r->opts.loader), now = fgd_now();

	if (r->n_parked == 0)
		return;
	for (size_t off = 0; off < r->park_len; off += ((struct parked *)(r->park + off))->size) {
		struct parked *p = (struct parked *)(r->park + off);
		const struct unwound *pre = p->has_unwound ? &p->unwound : NULL;
		struct fg_record rec;
		struct unwound ignored;
		size_t chain_len;

		if (p->dead)
			continue;
		unpark(p, &rec);
		if (all || now - p->parked_at >= PARK_MAX_WAIT_NS) {
			handle_now(r, &rec, pre);
		} else if (p->wait > completed) {
			continue;
		} else if (handle_sample(r, &rec, pre, &ignored, &chain_len) == -EINPROGRESS) {
			p->wait = fg_loader__submitted(r->opts.loader);
			continue;
		}
		p->dead = true;
		r->park_dead += p->size;
		r->n_parked--;
	}
	if (r->n_parked == 0) {
		/* An empty room gives its memory back: rooms fill only while binaries are read. */
		free(r->park);
		r->park = NULL;
		r->park_len = r->park_dead = r->park_cap = 0;
		fg_budget__account(r->opts.budget, FG_BUDGET_WAITING, &r->park_charged, 0);
	} else if (r->park_dead > r->park_len / 2) {
		compact(r);
	}
}

static void on_record(void *ctx, const struct fg_record *rec)
{
	struct fg_recording *r = ctx;
	struct unwound unwound;
	size_t chain_len;

	if (rec->type != PERF_RECORD_SAMPLE ||
	    handle_sample(r, rec, NULL, &unwound, &chain_len) != -EINPROGRESS)
		return;
	park(r, rec, chain_len ? r->chain : NULL, chain_len, chain_len ? &unwound : NULL);
}

/* Bytes the aggregate holds. */
static uint64_t aggregate_bytes(const struct fg_recording *r)
{
	return fg_folded__bytes(r->model) + r->cap_locs * sizeof(struct location) +
	       r->cap_loc_names * sizeof(uint32_t) + fg_idxmap_bytes(&r->loc_index);
}

void fg_recording__drain(struct fg_recording *r)
{
	if (r->state == FINISHED)
		return;
	/* First what waited: a binary it needed may have been read since. */
	replay(r, false);
	fg_evset__drain(r->events, on_record, r);
	/*
	 * Checked once a round, not per sample: past the budget the tables stop
	 * growing. Known stacks keep counting; new ones are dropped, and counted.
	 * The daemon's budget too: its recordings part, or the total, full.
	 */
	fg_budget__account(r->opts.budget, FG_BUDGET_RECORDINGS, &r->tables_charged, aggregate_bytes(r));
	if (!r->memory_limited && r->opts.budget &&
	    fg_budget__room(r->opts.budget, FG_BUDGET_RECORDINGS) == 0)
		fg_budget__refused(r->opts.budget, FG_BUDGET_RECORDINGS);
	if (!r->memory_limited && (aggregate_bytes(r) > r->opts.max_bytes ||
				   fg_budget__room(r->opts.budget, FG_BUDGET_RECORDINGS) == 0)) {
		r->memory_limited = true;
		r->max_locs = r->n_locs;
		fg_folded__set_max_stacks(r->model, fg_folded__n_stacks(r->model));
	}
}

const char *fg_recording__name(const struct fg_recording *r, uint32_t id)
{
	return fg_folded__name(r->model, id);
}

uint64_t fg_recording__bytes(const struct fg_recording *r)
{
	return aggregate_bytes(r);
}

/* Empties the location memo and the names its locations expand to. */
static void drop_locations(struct fg_recording *r)
{
	for (size_t i = 0; i < r->n_locs; i++)
		fg_dso__unref(r->locs[i].dso);
	free(r->locs);
	r->locs = NULL;
	r->n_locs = r->cap_locs = 0;
	fg_idxmap_done(&r->loc_index);
	free(r->loc_names);
	r->loc_names = NULL;
	r->n_loc_names = r->cap_loc_names = 0;
}

int fg_recording__forget(struct fg_recording *r)
{
	struct fg_folded *model = fg_folded__new();

	if (!model)
		return -ENOMEM;
	fg_folded__set_max_stacks(model, MAX_STACKS);
	fg_folded__free(r->model);
	r->model = model;
	drop_locations(r);
	r->max_locs = MAX_LOCATIONS;
	r->memory_limited = false;
	fg_budget__account(r->opts.budget, FG_BUDGET_RECORDINGS, &r->tables_charged, aggregate_bytes(r));
	return 0;
}

/* ---- lifecycle ---- */

void fg_recording__stop(struct fg_recording *r)
{
	if (r->state != RUNNING)
		return;
	(void)fg_evset__disable(r->events);
	r->stopped = fgd_now();
	r->state = STOPPED;
}

bool fg_recording__targets_gone(struct fg_recording *r)
{
	bool any_alive = false;

	for (size_t i = 0; i < r->n_targets; i++) {
		struct target *t = &r->targets[i];
		struct fg_process *cur = fg_proctab__current(r->procs, t->pid);

		if (!t->exited && (!cur || cur->end_time != FG_TIME_ALIVE ||
				   !fg_process_is(cur, t->lineage)))
			t->exited = true;
		any_alive |= !t->exited;
	}
	return r->n_targets > 0 && !any_alive;
}

void fg_recording__settle(struct fg_recording *r)
{
	replay(r, true);
}

size_t fg_recording__waiting(const struct fg_recording *r)
{
	return r->n_parked;
}

void fg_recording__waits(const struct fg_recording *r, struct fg_recording_waits *ret)
{
	*ret = (struct fg_recording_waits){ r->n_parked, r->waited, r->degraded };
}

uint64_t fg_recording__samples(const struct fg_recording *r)
{
	return r->samples;
}

const struct fg_stack_quality *fg_recording__stack_quality(const struct fg_recording *r)
{
	return &r->quality;
}

enum fg_call_graph fg_recording__call_graph(const struct fg_recording *r)
{
	return r->opts.call_graph;
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

struct json_object *fg_stack_quality_json(const struct fg_stack_quality *q)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	fg_json_add_int(o, "user_stacks", (int64_t)q->user_stacks);
	fg_json_add_int(o, "complete", (int64_t)q->complete);
	fg_json_add_int(o, "truncated", (int64_t)q->truncated);
	fg_json_add_int(o, "failed", (int64_t)q->failed);
	fg_json_add_int(o, "fp_frames", (int64_t)q->fp_frames);
	json_object_object_add(o, "complete_pct",
			       json_object_new_double(share(q->complete, q->user_stacks)));
	return o;
}

uint64_t fg_recording__lost(const struct fg_recording *r)
{
	struct fg_cpu_counters c;

	if (r->state == FINISHED)
		return r->totals.lost + r->totals.lost_samples;
	fg_evset__totals(r->events, &c);
	return c.lost + c.lost_samples;
}

uint64_t fg_recording__started(const struct fg_recording *r)
{
	return r->started;
}

static double duration_s(const struct fg_recording *r)
{
	return (double)((r->stopped ? r->stopped : fgd_now()) - r->started) / 1e9;
}

static void stack_quality_line(const struct fg_recording *r, char *buf, size_t size)
{
	const struct fg_stack_quality *q = &r->quality;
	int n;

	if (r->opts.call_graph == FG_CALL_GRAPH_DWARF)
		n = snprintf(buf, size, "call graph: dwarf (%u-byte stack dumps)", r->opts.stack_dump);
	else
		n = snprintf(buf, size, "call graph: frame pointers");
	if (n < 0 || (size_t)n >= size)
		return;
	snprintf(buf + n, size - (size_t)n,
		 "   user stacks: %" PRIu64 ", %.1f%% complete, %.1f%% truncated, %.1f%% failed",
		 q->user_stacks, share(q->complete, q->user_stacks), share(q->truncated, q->user_stacks),
		 share(q->failed, q->user_stacks));
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
	int err;

	fg_recording__stop(r);
	fg_evset__totals(r->events, &r->totals);
	/* Keep each CPU's figures for the metadata; the events go now. */
	r->n_cpus = fg_evset__n(r->events);
	r->per_cpu = calloc(r->n_cpus, sizeof(*r->per_cpu));
	r->cpu_ids = calloc(r->n_cpus, sizeof(*r->cpu_ids));
	if (!r->per_cpu || !r->cpu_ids)
		r->n_cpus = 0;
	for (size_t i = 0; i < r->n_cpus; i++) {
		r->per_cpu[i] = *fg_evset__counters(r->events, i);
		r->cpu_ids[i] = fg_evset__cpu(r->events, i);
	}
	r->events = fg_evset__free(r->events);
	r->state = FINISHED;
	/* What still waits gets what is known now: the result is due. */
	fg_recording__settle(r);
	free(r->park);
	r->park = NULL;
	r->park_cap = 0;
	fg_budget__account(r->opts.budget, FG_BUDGET_WAITING, &r->park_charged, 0);

	/* The location memo has done its job; release it before the output is built. */
	drop_locations(r);

	if (r->n_targets == 1)
		snprintf(subtitle, sizeof(subtitle), "%s: pid %d (%s)", r->hostname,
			 r->targets[0].pid, r->target_comm);
	else if (r->n_targets > 1)
		snprintf(subtitle, sizeof(subtitle), "%s: %zu processes", r->hostname, r->n_targets);
	else
		snprintf(subtitle, sizeof(subtitle), "%s: all CPUs", r->hostname);
	snprintf(info[0], sizeof(info[0]),
		 "event: %s   frequency: %u Hz   duration: %.1f s   samples: %" PRIu64
		 "   lost: %" PRIu64 "   throttled: %" PRIu64,
		 r->opts.event.name, r->opts.frequency, duration_s(r), r->samples,
		 r->totals.lost + r->totals.lost_samples, r->totals.throttled);
	snprintf(info[1], sizeof(info[1]),
		 "frames: %" PRIu64 " named, %" PRIu64 " module+offset, %" PRIu64
		 " unknown   unreadable binaries: %" PRIu64 "   dropped (limits): %" PRIu64,
		 r->frames[FRAME_NAMED] + r->frames[FRAME_KERNEL] + r->frames[FRAME_JIT],
		 r->frames[FRAME_OFFSET],
		 r->frames[FRAME_UNKNOWN] + r->frames[FRAME_KERNEL_UNKNOWN], r->unreadable_count,
		 r->dropped_full);
	stack_quality_line(r, info[2], sizeof(info[2]));
	/* The model goes to the result, which shows the client what its view allows. */
	err = fg_result__new(TAKE_PTR(r->model), &ro, &r->result);
	/* From now on the recording holds its result: what the server streams. */
	fg_budget__account(r->opts.budget, FG_BUDGET_RECORDINGS, &r->tables_charged,
			   r->result ? fg_result__bytes(r->result) : 0);
	return err;
}

/* The JIT maps the recording looked at: what was read, and what was refused and why. */
static struct json_object *jit_maps_json(const struct fg_recording *r)
{
	struct json_object *o = json_object_new_object(), *refused = json_object_new_array();
	uint64_t read = 0, entries = 0, malformed = 0, dropped = 0, n_refused = 0;
	bool budget = false, size_limited = false;

	json_object_object_add(o, "refused", refused);
	for (size_t i = 0; i < r->n_jit_maps; i++) {
		struct fg_jitmap_info info;
		struct json_object *e;

		fg_jitmap__info(r->jit_maps[i], &info);
		budget |= info.budget_limited;
		size_limited |= info.size_limited;
		if (info.state == FG_JIT_READING) {
			read++;
			entries += info.stats.entries;
			malformed += info.stats.malformed;
			dropped += info.stats.dropped;
		}
		/* A map that exists but could not be read is listed too, with its error. */
		if (info.state != FG_JIT_REFUSED && (info.state != FG_JIT_ABSENT || info.error == 0))
			continue;
		if (n_refused++ >= MAX_JIT_LISTED)
			continue;
		e = json_object_new_object();
		fg_json_add_int(e, "pid", info.pid);
		fg_json_add_str(e, "path", info.path);
		if (info.state == FG_JIT_REFUSED) {
			fg_json_add_str(e, "reason", fg_jit_refusal_name(info.refusal));
			if (info.refusal == FG_JIT_OWNER)
				fg_json_add_int(e, "uid", info.file_uid);
			if (info.refusal == FG_JIT_TOO_LARGE)
				fg_json_add_int(e, "size", (int64_t)info.file_size);
		} else {
			fg_json_add_str(e, "reason", "unreadable");
			fg_json_add_str(e, "error", strerror(-info.error));
		}
		json_object_array_add(refused, e);
	}
	fg_json_add_int(o, "maps", (int64_t)read);
	fg_json_add_int(o, "entries", (int64_t)entries);
	fg_json_add_int(o, "malformed", (int64_t)malformed);
	fg_json_add_int(o, "dropped", (int64_t)dropped);
	fg_json_add_int(o, "frames", (int64_t)r->frames[FRAME_JIT]);
	fg_json_add_int(o, "refused_count", (int64_t)n_refused);
	fg_json_add_bool(o, "budget_limited", budget);
	fg_json_add_bool(o, "size_limited", size_limited);
	fg_json_add_bool(o, "truncated", r->jit_maps_truncated);
	return o;
}

struct json_object *fg_recording__metadata(struct fg_recording *r)
{
	_cleanup_(json_object_putp) struct json_object *m = json_object_new_object();
	struct json_object *frames, *unreadable, *exited, *cpus;
	struct fg_cpu_counters c = r->totals;

	if (!m)
		return NULL;
	if (r->state != FINISHED && r->events)
		fg_evset__totals(r->events, &c);
	fg_json_add_str(m, "event", r->opts.event.name);
	fg_json_add_int(m, "frequency", r->opts.frequency);
	fg_json_add_int(m, "duration_ms", (int64_t)(duration_s(r) * 1000));
	fg_json_add_int(m, "samples", (int64_t)r->samples);
	fg_json_add_int(m, "samples_seen", (int64_t)c.samples);
	fg_json_add_int(m, "other_processes", (int64_t)r->filtered);
	fg_json_add_int(m, "lost", (int64_t)(c.lost + c.lost_samples));
	fg_json_add_int(m, "throttled", (int64_t)c.throttled);
	fg_json_add_int(m, "malformed", (int64_t)c.malformed);
	fg_json_add_int(m, "dropped", (int64_t)r->dropped_full);
	fg_json_add_int(m, "waited", (int64_t)r->waited);
	fg_json_add_int(m, "degraded", (int64_t)r->degraded);
	fg_json_add_int(m, "stacks", (int64_t)(r->result ? fg_result__n_stacks(r->result) :
						r->model ? fg_folded__n_stacks(r->model) : 0));
	fg_json_add_bool(m, "kernel_hidden", r->opts.view.hide_kernel);
	fg_json_add_bool(m, "memory_limited", r->memory_limited);
	fg_json_add_str(m, "call_graph", fg_call_graph_name(r->opts.call_graph));
	if (r->opts.call_graph == FG_CALL_GRAPH_DWARF)
		fg_json_add_int(m, "stack_dump", r->opts.stack_dump);
	json_object_object_add(m, "stack_quality", fg_stack_quality_json(&r->quality));

	frames = json_object_new_object();
	json_object_object_add(m, "frames", frames);
	fg_json_add_int(frames, "named", (int64_t)(r->frames[FRAME_NAMED] + r->frames[FRAME_KERNEL] +
						   r->frames[FRAME_JIT]));
	fg_json_add_int(frames, "module_offset", (int64_t)r->frames[FRAME_OFFSET]);
	fg_json_add_int(frames, "unknown", (int64_t)(r->frames[FRAME_UNKNOWN] + r->frames[FRAME_KERNEL_UNKNOWN]));
	fg_json_add_int(frames, "inlined", (int64_t)r->inlined_frames);
	fg_json_add_bool(m, "inline", r->opts.req.inline_frames);
	fg_json_add_bool(m, "demangle", r->opts.req.demangle);

	unreadable = json_object_new_array();
	json_object_object_add(m, "unreadable_binaries", unreadable);
	fg_json_add_int(m, "unreadable_count", (int64_t)r->unreadable_count);
	for (size_t i = 0; i < r->n_unreadable; i++) {
		struct json_object *u = json_object_new_object();

		fg_json_add_str(u, "path", fg_dso__path(r->unreadable[i]));
		fg_json_add_str(u, "error", strerror(-fg_dso__error(r->unreadable[i])));
		json_object_array_add(unreadable, u);
	}
	cpus = json_object_new_array();
	json_object_object_add(m, "cpus", cpus);
	for (size_t i = 0; i < r->n_cpus; i++)
		json_object_array_add(cpus, fg_cpu_counters_json(r->cpu_ids[i], &r->per_cpu[i]));
	json_object_object_add(m, "jit_maps", jit_maps_json(r));
	exited = json_object_new_array();
	json_object_object_add(m, "exited", exited);
	for (size_t i = 0; i < r->n_targets; i++)
		if (r->targets[i].exited)
			json_object_array_add(exited, json_object_new_int64(r->targets[i].pid));
	return TAKE_PTR(m);
}

int fg_recording__emit(struct fg_recording *r, fg_write_fn fn, void *ctx, size_t budget)
{
	if (!r->result)
		return -EINVAL;
	return fg_result__emit(r->result, fn, ctx, budget);
}
