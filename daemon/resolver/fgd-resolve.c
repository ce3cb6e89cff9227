/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/budget.h"
#include "base/hash.h"
#include "base/idxmap.h"
#include "base/macro.h"
#include "base/procfs.h"
#include "fgd-clock.h"
#include "profile/view.h"
#include "proto/meta.h"
#include "resolver/fgd-jit.h"
#include "resolver/fgd-resolve.h"

/* Bounds on what one resolver may hold; what they refuse is counted. */
#define MAX_LOCATIONS (1U << 22)
#define MAX_UNREADABLE_LISTED 32
#define MAX_JIT_MAPS 1024
#define MAX_JIT_LISTED 32
/*
 * A sample waits this long at most: then it is handled with what is known.
 * libc with its DWARF takes a tenth of a second to read, a large C++
 * program a second or two; longer is a hostile binary, or a hung
 * filesystem, and holds up every load queued behind it. Well within the
 * time an ended process stays in the table (the engine's REAP_GRACE_NS), so the
 * sample still finds its process.
 */
#define PARK_MAX_WAIT_NS (5ULL * 1000000000ULL)

/*
 * A raw code location seen in a callchain, named once when first seen. It
 * stands for one frame or several: the function containing it, then each
 * function inlined there, outermost first. Their name ids are a range of
 * the resolver's loc_names, so a sample copies ranges and never looks
 * anything up again.
 */
struct location {
	/* owned reference, keeping the pointer in the key valid; NULL for kernel */
	struct fg_dso *dso;
	uint64_t addr;   /* file offset (user) or address (kernel) */
	uint32_t names;  /* index of its first frame name id in loc_names */
	uint8_t n_names; /* >= 1; at most FG_SYM_MAX_FRAMES */
	bool kernel;
	bool outermost;   /* named like a process's or thread's first function */
	bool jit;         /* addr is a JIT map entry's id (fgd-jit.h), dso NULL */
	bool provisional; /* named without waiting for the loader: not in loc_index */
	uint8_t kind;     /* enum frame_kind, of its outermost frame */
};

struct loc_key {
	const struct fg_dso *dso;
	uint64_t addr;
	bool kernel;
	bool jit;
};

/*
 * A function of a binary whose addresses are all named alike
 * (fg_symbolizer__function()), and the first location named in it: the
 * next ones take its names instead of asking the symbolizer and interning
 * them again. In a recording of g++ compiles in fp mode, a third of the new
 * locations were (sampled pcs in cc1plus's functions, mostly).
 */
struct function {
	const struct fg_dso *dso; /* borrowed: the location holds a reference */
	uint64_t symbol;          /* fg_symbolizer__function()'s */
	uint32_t loc;
};

struct fg_resolver {
	struct fg_resolve_opts opts;
	struct fg_proctab *procs;     /* borrowed */
	struct fg_symbolizer *sym;    /* borrowed */
	struct fg_unwinder *unwinder; /* borrowed; DWARF mode only */
	struct fg_loader *loader;     /* borrowed; NULL: files are read at once */
	struct fg_budget *budget;     /* borrowed; NULL: none */
	struct fg_folded *names;      /* borrowed: where frame names are interned */

	struct location *locs; /* owned: the memo */
	size_t n_locs, cap_locs;
	struct fg_idxmap loc_index;
	uint32_t *loc_names; /* owned: frame name ids of every location, in ranges */
	size_t n_loc_names, cap_loc_names;
	struct function *functions; /* owned */
	size_t n_functions, cap_functions;
	struct fg_idxmap function_index;
	uint32_t *scratch; /* owned: one sample's locations, leaf first */
	size_t cap_scratch, n_scratch;
	bool scratch_truncated; /* its user stack was cut short: a FG_RESOLVE_TRUNCATED frame */
	uint32_t *stack; /* owned: one sample's root slots, then its frame name ids, root first */
	size_t cap_stack;
	uint64_t *chain; /* owned: DWARF mode: one sample's kernel callchain and unwound user pcs */
	size_t cap_chain;
	struct fg_stack_quality quality;
	uint32_t truncated_name; /* FG_RESOLVE_TRUNCATED's id in names; UINT32_MAX: not yet */
	size_t max_locs;         /* lowered to the current count when frozen */
	bool memory_limited;

	uint64_t samples;      /* emitted */
	uint64_t filtered;     /* not wanted */
	uint64_t dropped_full; /* refused: a table was full */
	uint64_t frames[_FG_FRAME_KIND_MAX];
	uint64_t inlined_frames; /* frames added for inlined functions */
	uint64_t unreadable_count;
	struct fg_dso *unreadable[MAX_UNREADABLE_LISTED]; /* owned references */
	size_t n_unreadable;

	struct fg_jit *jit; /* borrowed from procs */
	uint64_t started;   /* CLOCK_MONOTONIC ns: JIT maps looked at before are looked at again */
	/* owned references: the JIT maps looked at, for the metadata */
	struct fg_jitmap **jit_maps;
	size_t n_jit_maps, cap_jit_maps;
	struct fg_idxmap jit_index; /* over jit_maps, by pointer */
	struct fg_jitmap *jit_last; /* the last one noted: most samples come from one process */
	bool jit_maps_truncated;    /* more than MAX_JIT_MAPS were looked at */

	/*
	 * Samples waiting for a binary to be read, copied in arrival order
	 * (struct parked entries): the loader's thread reads it meanwhile, and
	 * drain rounds take them again (fg_resolver__replay()).
	 */
	uint8_t *park; /* owned */
	size_t park_len, park_cap;
	uint64_t park_charged; /* what the budget's waiting part holds of it */
	size_t park_dead;      /* bytes of handled entries not compacted away yet */
	size_t n_parked;
	uint64_t waited;      /* samples that waited, ever (each counted once) */
	uint64_t degraded;    /* samples handled without all they waited for (handle_now()) */
	bool nowait;          /* handling one that way now */
	bool sample_degraded; /* the sample being handled got less than was coming */
};

size_t fg_resolver__sample_locations(const struct fg_resolver *r, const uint32_t **ret,
				     bool *ret_truncated)
{
	*ret = r->scratch;
	*ret_truncated = r->scratch_truncated;
	return r->n_scratch;
}

int fg_resolver__location(const struct fg_resolver *r, uint32_t idx,
			  struct fg_resolve_location *ret)
{
	const struct location *l;

	if (idx >= r->n_locs)
		return -ENOENT;
	l = &r->locs[idx];
	*ret = (struct fg_resolve_location){
		.kind = l->kernel ? FG_LOCATION_KERNEL :
			l->jit    ? FG_LOCATION_JIT :
				    FG_LOCATION_USER,
		.dso = l->dso,
		.addr = l->addr,
		.names = r->loc_names + l->names,
		.n_names = l->n_names,
	};
	return 0;
}

static void drop_locations(struct fg_resolver *r)
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
	free(r->functions);
	r->functions = NULL;
	r->n_functions = r->cap_functions = 0;
	fg_idxmap_done(&r->function_index);
}

struct fg_resolver *fg_resolver__free(struct fg_resolver *r)
{
	if (!r)
		return NULL;
	drop_locations(r);
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
	fg_budget__account(r->budget, FG_BUDGET_WAITING, &r->park_charged, 0);
	free(r);
	return NULL;
}

int fg_resolver__new(const struct fg_resolve_opts *opts, const struct fg_resolve_deps *deps,
		     struct fg_folded *names, struct fg_resolver **ret)
{
	struct fg_resolver *r;

	if (opts->call_graph == FG_CALL_GRAPH_DWARF && !deps->unwinder)
		return -EINVAL;
	if (opts->root_slots > FG_RESOLVE_MAX_ROOT_SLOTS)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->opts = *opts;
	r->procs = deps->procs;
	r->sym = deps->sym;
	r->unwinder = deps->unwinder;
	r->loader = deps->loader;
	r->budget = deps->budget;
	r->jit = fg_proctab__jit(deps->procs);
	r->started = fgd_now();
	r->names = names;
	r->truncated_name = UINT32_MAX;
	r->max_locs = MAX_LOCATIONS;
	*ret = r;
	return 0;
}

void fg_resolver__forget(struct fg_resolver *r, struct fg_folded *names)
{
	drop_locations(r);
	r->names = names;
	r->truncated_name = UINT32_MAX;
	r->max_locs = MAX_LOCATIONS;
	r->memory_limited = false;
}

void fg_resolver__freeze(struct fg_resolver *r)
{
	r->memory_limited = true;
	r->max_locs = r->n_locs;
}

bool fg_resolver__frozen(const struct fg_resolver *r)
{
	return r->memory_limited;
}

uint64_t fg_resolver__bytes(const struct fg_resolver *r)
{
	return r->cap_locs * sizeof(struct location) + r->cap_loc_names * sizeof(uint32_t) +
	       fg_idxmap_bytes(&r->loc_index) + r->cap_functions * sizeof(struct function) +
	       fg_idxmap_bytes(&r->function_index);
}

/* ---- the hot path ---- */

static bool loc_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct location *l = &((const struct fg_resolver *)ctx)->locs[idx];
	const struct loc_key *k = key;

	return l->addr == k->addr && l->dso == k->dso && l->kernel == k->kernel && l->jit == k->jit;
}

int fg_resolve_intern(struct fg_folded *names, const char *name, const char *suffix, uint32_t *ret)
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
	return fg_folded__intern(names, buf, len, ret);
}

static void note_unreadable(struct fg_resolver *r, struct fg_dso *dso)
{
	for (size_t i = 0; i < r->n_unreadable; i++)
		if (r->unreadable[i] == dso)
			return;
	r->unreadable_count++;
	if (r->n_unreadable < MAX_UNREADABLE_LISTED)
		r->unreadable[r->n_unreadable++] = fg_dso__ref(dso);
}

/* Interns one more frame name of the location being named: its ids are the last of loc_names. */
static int add_loc_name(struct fg_resolver *r, const char *name, const char *suffix)
{
	uint32_t id;
	int err;

	err = FG_GROW(r->loc_names, r->cap_loc_names, r->n_loc_names + 1);
	if (err < 0)
		return err;
	err = fg_resolve_intern(r->names, name, suffix, &id);
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
		"_start",
		"__libc_start_main",
		"__libc_start_main_impl",
		"__libc_start_call_main",
		"start_thread",
		"clone",
		"clone3",
		"__clone",
		"__clone3",
		"__clone_internal",
	};

	/* Called for every new location: most names fail on their first letter. */
	if (name[0] != '_' && name[0] != 's' && name[0] != 'c')
		return false;
	for (size_t i = 0; i < ELEMENTSOF(names); i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

/*
 * The sampled process reaches the very file it mapped, while it lives: ""
 * if proc or m is NULL, or if dso's file will not be opened (a new location
 * in a loaded binary, the common case, formats nothing).
 */
static void map_files_hint(const struct fg_process *proc, const struct fg_map *m,
			   const struct fg_dso *dso, char *buf, size_t size)
{
	buf[0] = '\0';
	if (proc && m && dso && fg_dso__may_open(dso))
		fg_proc_map_files_path(buf, proc->pid, m->start, m->end);
}

/* What the symbolizer is asked for: the same for every location of the resolver. */
static unsigned sym_flags(const struct fg_resolver *r)
{
	return (r->opts.inline_frames ? FG_SYM_INLINE : 0) |
	       (r->opts.demangle ? FG_SYM_DEMANGLE : 0);
}

/*
 * Names a new location; for user code, proc and m say where it was
 * sampled. -EINPROGRESS when its names are being read on the loader's
 * thread (the binary, its DWARF, kallsyms): nothing was added then. With
 * r->nowait, names what is known now and marks the location provisional.
 */
static int name_location(struct fg_resolver *r, struct location *l, const struct fg_process *proc,
			 const struct fg_map *m)
{
	unsigned flags = sym_flags(r);
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
		l->kind = name ? FG_FRAME_KERNEL : FG_FRAME_KERNEL_UNKNOWN;
		/*
		 * Always with the suffix: it is how a kernel frame is told from a user one
		 * by name (view.h), which the client's view hides or takes off as names leave.
		 */
		return add_loc_name(r, name ? name : "[unknown]", FG_KERNEL_SUFFIX);
	}
	map_files_hint(proc, m, l->dso, hint, sizeof(hint));
	/* A binary, or the names of this address, still being read: the sample waits (park()). */
	err = fg_symbolizer__frames(r->sym, l->dso, l->addr, hint[0] ? hint : NULL,
				    flags | (r->nowait ? FG_SYM_NOWAIT : 0), &fr);
	if (err < 0)
		return err;
	l->provisional = err > 0;
	l->kind = fr.result == FG_SYM_NAMED  ? FG_FRAME_NAMED :
		  fr.result == FG_SYM_OFFSET ? FG_FRAME_OFFSET :
					       FG_FRAME_UNKNOWN;
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
static int reserve_location(struct fg_resolver *r, struct location **ret)
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

/*
 * Makes the named location in the reserved slot l findable under hash h:
 * its index, or -ENOMEM. own_names: its names were the last ones added to
 * loc_names (and go if it does not make it), rather than another's.
 */
static int64_t commit_location(struct fg_resolver *r, struct location *l, uint64_t h,
			       bool own_names)
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
		if (own_names)
			r->n_loc_names = l->names;
		return err;
	}
	return (int64_t)r->n_locs++;
}

static uint64_t function_hash(const struct fg_dso *dso, uint64_t symbol)
{
	return fg_hash_combine(fg_hash_mix((uintptr_t)dso ^ 3), symbol);
}

static bool function_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct function *f = &((const struct fg_resolver *)ctx)->functions[idx], *k = key;

	return f->dso == k->dso && f->symbol == k->symbol;
}

/* The location first named in dso's function symbol, or -1. */
static int64_t function_location(const struct fg_resolver *r, const struct fg_dso *dso,
				 uint64_t symbol)
{
	struct function k = { dso, symbol, 0 };
	int64_t i =
		fg_idxmap_find(&r->function_index, function_hash(dso, symbol), function_eq, r, &k);

	return i < 0 ? -1 : (int64_t)r->functions[i].loc;
}

/* Notes loc as named for its function; out of memory, its function's next locations are named anew. */
static void note_function(struct fg_resolver *r, const struct fg_dso *dso, uint64_t symbol,
			  uint32_t loc)
{
	if (FG_GROW(r->functions, r->cap_functions, r->n_functions + 1) < 0 ||
	    fg_idxmap_insert(&r->function_index, function_hash(dso, symbol),
			     (uint32_t)r->n_functions) < 0)
		return;
	r->functions[r->n_functions++] = (struct function){ dso, symbol, loc };
}

/*
 * The location's index; -E2BIG when the table is full. proc and m (user code
 * only, else NULL) are used only to name a location seen for the first time.
 */
static int64_t location(struct fg_resolver *r, struct fg_dso *dso, uint64_t addr, bool kernel,
			const struct fg_process *proc, const struct fg_map *m)
{
	struct loc_key k = { dso, addr, kernel };
	uint64_t h = fg_hash_combine(fg_hash_mix((uintptr_t)dso ^ kernel), addr), symbol;
	int64_t i = fg_idxmap_find(&r->loc_index, h, loc_eq, r, &k), named = -1;
	bool loaded, by_function;
	struct location *l;
	int err = 0;

	if (i >= 0)
		return i;
	err = reserve_location(r, &l);
	if (err < 0)
		return err;
	*l = (struct location){ .dso = fg_dso__ref(dso), .addr = addr, .kernel = kernel };
	loaded = !kernel && dso && fg_dso__state(dso) == FG_DSO_LOADED;
	by_function = loaded && fg_symbolizer__function(dso, addr, sym_flags(r), &symbol);
	if (by_function)
		named = function_location(r, dso, symbol);
	if (named >= 0) {
		const struct location *first = &r->locs[named];

		l->names = first->names;
		l->n_names = first->n_names;
		l->kind = first->kind;
		l->outermost = first->outermost;
	} else {
		err = name_location(r, l, proc, m);
		/* Its binary was read for it: the first location of its function, perhaps. */
		if (!kernel && !loaded && err >= 0)
			by_function = fg_symbolizer__function(dso, addr, sym_flags(r), &symbol);
	}
	i = err < 0 ? err : commit_location(r, l, h, named < 0);
	if (i < 0)
		fg_dso__unref(l->dso);
	else if (by_function && named < 0 && !l->provisional)
		note_function(r, dso, symbol, (uint32_t)i);
	return i;
}

static bool jit_map_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct fg_resolver *)ctx)->jit_maps[idx] == key;
}

/* Keeps a reference to a JIT map the resolver looked at, so the metadata can report it. */
static void note_jit_map(struct fg_resolver *r, struct fg_jitmap *jm)
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
static int64_t jit_location(struct fg_resolver *r, struct fg_process *proc, uint64_t ip)
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
	if (fg_jitmap__lookup(r->jit, jm, proc, ip, r->started, &f) <= 0)
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
		.kind = FG_FRAME_JIT,
		.names = (uint32_t)r->n_loc_names,
		.n_names = 1,
	};
	/* JIT maps spell names as the runtime wants them shown: not demangled. */
	err = add_loc_name(r, f.name, r->opts.jit_suffix ? "_[j]" : NULL);
	return err < 0 ? err : commit_location(r, l, h, true);
}

static int64_t user_location(struct fg_resolver *r, struct fg_process *proc, uint64_t ip)
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

/* What walking a sample's chain found about its user part, for the stack figures. */
struct user_part {
	int64_t outermost; /* location of the outermost user frame; -1 if none */
	/* every frame, kernel ones too: what the kernel's depth limit (max_stack) counts */
	size_t chain_frames;
};

/*
 * Turns a PERF_CONTEXT_*-marked chain, leaf first, into locations in
 * r->scratch. Every frame but a context's first is a return address, looked
 * up at ip - 1 so that it names the call site. Returns how many,
 * -EINPROGRESS when a binary or kallsyms is still being read (the loads of
 * all of them have started), or a negative errno (a table is full).
 */
static int64_t chain_locations(struct fg_resolver *r, struct fg_process *proc, const uint64_t *ips,
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
			      ip == (uint64_t)PERF_CONTEXT_USER   ? USER :
								    NONE;
			first = true;
			continue;
		}
		if (ctx == NONE)
			continue;
		user->chain_frames++;
		if (!first)
			ip--;
		first = false;
		loc = ctx == KERNEL ? location(r, NULL, ip, true, NULL, NULL) :
				      user_location(r, proc, ip);
		if (loc == -EINPROGRESS) {
			/* Go on: every binary this sample needs starts loading now, not one per round. */
			pending = true;
			continue;
		}
		if (loc < 0)
			return loc;
		if (ctx == USER)
			user->outermost = loc;
		r->scratch[n++] = (uint32_t)loc;
	}
	return pending ? -EINPROGRESS : (int64_t)n;
}

/* How a sample's user stack was unwound (DWARF mode): accounted once the sample is kept. */
struct unwound {
	bool user;   /* the sample has a user part */
	uint8_t end; /* enum fg_unwind_end; FAILED for a 32-bit process */
	uint32_t fp_frames;
};

static void account_unwound(struct fg_resolver *r, const struct unwound *u)
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
 * is unwound from the sample's registers and stack dump (a sample without
 * registers keeps its callchain's own user part: off-CPU blocks,
 * fgd-offcpu.h). Builds the same PERF_CONTEXT_*-marked chain the kernel
 * would have, in r->chain, and says
 * how the user part ended in *ret. Returns its length, -EINPROGRESS when
 * some CFI is still being read, or -ENOMEM.
 */
static int64_t dwarf_chain(struct fg_resolver *r, const struct fg_record *rec,
			   const struct fg_process *proc, struct unwound *ret)
{
	const struct fg_sample *s = &rec->sample;
	size_t max_user = r->opts.max_stack, n = 0;
	struct fg_unwind_result res;
	uint64_t i;
	int err;

	*ret = (struct unwound){};
	if (FG_GROW(r->chain, r->cap_chain, s->nr + 3 + max_user) < 0)
		return -ENOMEM;
	for (i = 0; i < s->nr && s->ips[i] != (uint64_t)PERF_CONTEXT_USER; i++)
		r->chain[n++] = s->ips[i];
	if (n == 0 && (rec->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL) {
		r->chain[n++] = PERF_CONTEXT_KERNEL;
		r->chain[n++] = s->ip;
	}
	/* Kernel threads and the idle task have no user part. */
	if (!proc)
		return (int64_t)n;
	/*
	 * Without registers, the callchain's own user part if any: an off-CPU
	 * block whose stack could not be copied has its frame-pointer walk.
	 */
	if (s->regs_abi == PERF_SAMPLE_REGS_ABI_NONE) {
		for (; i < s->nr; i++)
			r->chain[n++] = s->ips[i];
		return (int64_t)n;
	}
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

/* Frame-pointer mode: how far the kernel's walk of the user stack got. */
static void account_fp_chain(struct fg_resolver *r, const struct user_part *user)
{
	if (user->outermost < 0)
		return;
	r->quality.user_stacks++;
	if (r->locs[user->outermost].outermost)
		r->quality.complete++;
	else if (user->chain_frames >= r->opts.max_stack)
		r->quality.truncated++;
	else
		r->quality.failed++;
}

/*
 * Hands the n locations in r->scratch (leaf first) to the consumer as one
 * stack, root first: user frames outermost first, then kernel frames; each
 * location expands into its precomputed range of names. A user stack cut
 * short (truncated) starts with a FG_RESOLVE_TRUNCATED frame, so it is not
 * drawn as if whole. The consumer's root slots come first in the buffer.
 * Its error is the sample's.
 */
static int emit_stack(struct fg_resolver *r, const struct fg_sample *s, struct fg_process *proc,
		      size_t n, bool truncated)
{
	size_t total = r->opts.root_slots + truncated, k = r->opts.root_slots;

	for (size_t i = 0; i < n; i++)
		total += r->locs[r->scratch[i]].n_names;
	if (FG_GROW(r->stack, r->cap_stack, total) < 0)
		return -ENOMEM;
	r->n_scratch = n;
	r->scratch_truncated = truncated;
	if (truncated) {
		if (r->truncated_name == UINT32_MAX &&
		    fg_resolve_intern(r->names, FG_RESOLVE_TRUNCATED, NULL, &r->truncated_name) < 0)
			return -ENOMEM;
		r->stack[k++] = r->truncated_name;
	}
	for (size_t i = n; i-- > 0;) {
		const struct location *l = &r->locs[r->scratch[i]];

		r->frames[l->kind]++;
		r->inlined_frames += l->n_names - 1u;
		memcpy(r->stack + k, r->loc_names + l->names, l->n_names * sizeof(uint32_t));
		k += l->n_names;
	}
	return r->opts.emit(r->opts.ctx, proc, s, r->stack + r->opts.root_slots,
			    total - r->opts.root_slots);
}

/*
 * Whether the sample's user stack was cut short: by the stack dump's end or
 * the depth limit (DWARF), or by the depth limit short of an outermost
 * function (frame pointers); what the stack figures count as truncated.
 */
static bool truncated(const struct fg_resolver *r, bool dwarf, const struct unwound *uw,
		      const struct user_part *user)
{
	if (dwarf)
		return uw->user &&
		       (uw->end == FG_UNWIND_TRUNCATED || uw->end == FG_UNWIND_MAX_DEPTH);
	return user->outermost >= 0 && !r->locs[user->outermost].outermost &&
	       user->chain_frames >= r->opts.max_stack;
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
static int handle_sample(struct fg_resolver *r, const struct fg_record *rec,
			 const struct unwound *pre, struct unwound *ret_unwound,
			 size_t *ret_chain_len)
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
	if (r->opts.want && !r->opts.want(r->opts.ctx, proc)) {
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
	if (n < 0 || emit_stack(r, s, proc, (size_t)n, truncated(r, dwarf, &uw, &user)) < 0) {
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
static void handle_now(struct fg_resolver *r, const struct fg_record *rec,
		       const struct unwound *pre)
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
	uint32_t size; /* of the entry, these arrays included, a multiple of 8 */
	uint16_t misc;
	bool dead;        /* handled: its bytes wait for compact() */
	bool has_unwound; /* the callchain is the unwound chain, see unwound */
	uint32_t n_regs;
	struct unwound unwound;
	uint64_t wait;      /* the loader's submission count when it was parked: see replay() */
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
static void park(struct fg_resolver *r, const struct fg_record *rec, const uint64_t *chain,
		 size_t chain_len, const struct unwound *unwound)
{
	const struct fg_sample *s = &rec->sample;
	uint64_t nr = chain ? chain_len : s->nr, n_regs = chain ? 0 : s->n_regs;
	uint64_t stack_size = chain ? 0 : s->stack_size;
	uint64_t size =
		ALIGN_TO(sizeof(struct parked) + (nr + n_regs) * sizeof(uint64_t) + stack_size, 8);
	struct parked *p;
	uint8_t *at;

	/* A room that must grow asks the budget for what doubling it takes. */
	if (r->park_len + size > r->opts.waiting_max ||
	    (r->park_len + size > r->park_cap &&
	     !fg_budget__fits(r->budget, FG_BUDGET_WAITING, MAX(r->park_cap, size))) ||
	    FG_GROW(r->park, r->park_cap, r->park_len + size) < 0) {
		if (r->park_len + size <= r->opts.waiting_max)
			fg_budget__refused(r->budget, FG_BUDGET_WAITING);
		handle_now(r, rec, unwound);
		return;
	}
	fg_budget__account(r->budget, FG_BUDGET_WAITING, &r->park_charged, r->park_cap);
	r->waited++;
	p = (struct parked *)(r->park + r->park_len);
	*p = (struct parked){
		.size = (uint32_t)size,
		.misc = rec->misc,
		.has_unwound = chain != NULL,
		.n_regs = (uint32_t)n_regs,
		.unwound = chain ? *unwound : (struct unwound){},
		.wait = fg_loader__submitted(r->loader),
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
static void compact(struct fg_resolver *r)
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
void fg_resolver__replay(struct fg_resolver *r, bool all)
{
	uint64_t completed = fg_loader__completed(r->loader), now = fgd_now();

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
			p->wait = fg_loader__submitted(r->loader);
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
		fg_budget__account(r->budget, FG_BUDGET_WAITING, &r->park_charged, 0);
	} else if (r->park_dead > r->park_len / 2) {
		compact(r);
	}
}

void fg_resolver__sample(struct fg_resolver *r, const struct fg_record *rec)
{
	struct unwound unwound;
	size_t chain_len;

	if (rec->type != PERF_RECORD_SAMPLE ||
	    handle_sample(r, rec, NULL, &unwound, &chain_len) != -EINPROGRESS)
		return;
	park(r, rec, chain_len ? r->chain : NULL, chain_len, chain_len ? &unwound : NULL);
}

void fg_resolver__stats(const struct fg_resolver *r, struct fg_resolve_stats *ret)
{
	*ret = (struct fg_resolve_stats){
		.samples = r->samples,
		.filtered = r->filtered,
		.dropped_full = r->dropped_full,
		.inlined_frames = r->inlined_frames,
		.quality = r->quality,
		.waiting = r->n_parked,
		.waited = r->waited,
		.degraded = r->degraded,
		.unreadable = r->unreadable_count,
		.memory_limited = r->memory_limited,
	};
	memcpy(ret->frames, r->frames, sizeof(ret->frames));
}

void fg_stack_quality_status(const struct fg_stack_quality *q, struct fg_status_stack_quality *ret)
{
	*ret = (struct fg_status_stack_quality){
		.user_stacks = q->user_stacks,
		.complete = q->complete,
		.truncated = q->truncated,
		.failed = q->failed,
		.fp_frames = q->fp_frames,
	};
}

/* One JIT map that was not read, and why: its path (and error) copied, for they outlive r. */
static int jit_refusal(const struct fg_jitmap_info *info, struct fg_meta_jit_refusal *ret)
{
	*ret = (struct fg_meta_jit_refusal){
		.pid = (uint32_t)info->pid,
		.path = strdup(info->path),
	};
	if (info->state == FG_JIT_REFUSED) {
		ret->reason = fg_jit_refusal_name(info->refusal);
		ret->has_uid = info->refusal == FG_JIT_OWNER;
		ret->uid = ret->has_uid ? info->file_uid : 0;
		ret->has_size = info->refusal == FG_JIT_TOO_LARGE;
		ret->size = ret->has_size ? info->file_size : 0;
	} else {
		ret->reason = "unreadable";
		ret->error = strdup(strerror(-info->error));
		if (!ret->error)
			return -ENOMEM;
	}
	return ret->path ? 0 : -ENOMEM;
}

/* The JIT maps the resolver looked at: what was read, and what was refused and why. */
static int jit_maps_meta(const struct fg_resolver *r, struct fg_meta_jit_maps *ret)
{
	ret->refused = calloc(MAX(MIN(r->n_jit_maps, (size_t)MAX_JIT_LISTED), (size_t)1),
			      sizeof(*ret->refused));
	if (!ret->refused)
		return -ENOMEM;
	for (size_t i = 0; i < r->n_jit_maps; i++) {
		struct fg_jitmap_info info;

		fg_jitmap__info(r->jit_maps[i], &info);
		ret->budget_limited |= info.budget_limited;
		ret->size_limited |= info.size_limited;
		if (info.state == FG_JIT_READING) {
			ret->maps++;
			ret->entries += info.stats.entries;
			ret->malformed += info.stats.malformed;
			ret->dropped += info.stats.dropped;
		}
		/* A map that exists but could not be read is listed too, with its error. */
		if (info.state != FG_JIT_REFUSED &&
		    (info.state != FG_JIT_ABSENT || info.error == 0))
			continue;
		if (ret->refused_count++ >= MAX_JIT_LISTED)
			continue;
		if (jit_refusal(&info, &ret->refused[ret->n_refused++]) < 0)
			return -ENOMEM;
	}
	ret->frames = r->frames[FG_FRAME_JIT];
	ret->truncated = r->jit_maps_truncated;
	return 0;
}

static int unreadable_meta(const struct fg_resolver *r, struct fg_meta_resolve *ret)
{
	ret->unreadable_count = r->unreadable_count;
	ret->unreadable_binaries =
		calloc(MAX(r->n_unreadable, (size_t)1), sizeof(*ret->unreadable_binaries));
	if (!ret->unreadable_binaries)
		return -ENOMEM;
	for (size_t i = 0; i < r->n_unreadable; i++) {
		struct fg_meta_binary *b = &ret->unreadable_binaries[ret->n_unreadable_binaries++];

		b->path = strdup(fg_dso__path(r->unreadable[i]));
		b->error = strdup(strerror(-fg_dso__error(r->unreadable[i])));
		if (!b->path || !b->error)
			return -ENOMEM;
	}
	return 0;
}

int fg_resolver__metadata(const struct fg_resolver *r, struct fg_meta_resolve *ret)
{
	struct fg_meta_resolve m = {
		.has_frames = true,
		.frames = {
			.named = r->frames[FG_FRAME_NAMED] + r->frames[FG_FRAME_KERNEL] +
				 r->frames[FG_FRAME_JIT],
			.module_offset = r->frames[FG_FRAME_OFFSET],
			.unknown = r->frames[FG_FRAME_UNKNOWN] + r->frames[FG_FRAME_KERNEL_UNKNOWN],
			.inlined = r->inlined_frames,
		},
	};
	int err = unreadable_meta(r, &m);

	if (err >= 0)
		err = jit_maps_meta(r, &m.jit_maps);
	if (err < 0) {
		fg_meta_resolve_done(&m);
		return err;
	}
	*ret = m;
	return 0;
}
