/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Stack resolution: a sample in, its stack of frame names out.
 *
 * For each sample a source delivers (a perf record today; see
 * common/perf/record.h for its shape: a task, a time, a weight, a callchain of
 * kernel and user addresses marked with PERF_CONTEXT_*, and in DWARF mode
 * the user registers and a copy of the user stack), the resolver:
 *   1. finds the process generation alive at the sample's time and asks the
 *      consumer whether it wants it;
 *   2. in DWARF mode unwinds the user stack (fgd-unwind) into return
 *      addresses;
 *   3. turns each address into a location (binary and offset, a JIT map
 *      entry, or a kernel address), named the first time it is seen (a memo
 *      of locations to frame name ids, so a warm sample looks nothing up);
 *   4. hands the consumer the stack, root first, as name ids interned in
 *      the consumer's name table (a folded model: the recording's own
 *      aggregate, so its stacks need no translation).
 * What takes reading a file (a binary's symbols, DWARF, CFI, kallsyms) is
 * read on the loader's thread: the sample waits in the resolver's waiting
 * room and is handled again once it is read (docs/ARCHITECTURE.md,
 * "Reading files off the loop").
 *
 * It knows nothing of perf events, rings or clients: a unit test feeds it
 * synthesized samples (tests/unit/test-resolve.c).
 */

#include <stdbool.h>
#include <stdint.h>

#include "fgd-loader.h"
#include "perf/record.h"
#include "profile/folded.h"
#include "proto/proto-types.h"
#include "resolver/fgd-proctab.h"
#include "resolver/fgd-unwind.h"
#include "symbols/fgd-symbols.h"

/* The components the resolver reads with: the engine's, borrowed for its life. */
struct fg_resolve_deps {
	struct fg_proctab *procs;
	struct fg_symbolizer *sym;
	struct fg_unwinder *unwinder; /* needed in DWARF mode */
	/*
	 * Where sym and unwinder read files (the same loader, or NULL for
	 * none): samples that wait for it are parked and taken again as its
	 * jobs complete.
	 */
	struct fg_loader *loader;
	/*
	 * The daemon's memory budget (common/base/budget.h; NULL for none): the
	 * waiting room is charged to its waiting part, and a sample the part
	 * has no room for is handled with what is known (degraded). The
	 * resolver's owner charges its memo (fg_resolver__bytes()) with its
	 * own tables.
	 */
	struct fg_budget *budget;
};

/* Whether the consumer wants proc's samples (NULL proc: a pid the table does not know). */
typedef bool (*fg_resolve_want_fn)(void *ctx, struct fg_process *proc);
/*
 * A resolved sample: proc (NULL if unknown; borrowed for the call), the
 * sample (its time, task, CPU; borrowed for the call) and its stack as n
 * name ids, root first, without a process frame; the ids are the name
 * table's. names[] is borrowed for the call, and the opts' root_slots
 * entries before names[0] are the consumer's to fill (a process frame, a
 * cgroup frame) so it can add the whole stack without a copy. A negative
 * errno counts the sample as dropped (a table of the consumer's is full).
 */
typedef int (*fg_resolve_emit_fn)(void *ctx, struct fg_process *proc, const struct fg_sample *s,
				  uint32_t *names, size_t n);

/* The frame at the root end of a user stack cut short (fg_stack_quality's truncated). */
#define FG_RESOLVE_TRUNCATED "[truncated]"

/* The most root slots a consumer may ask for. */
#define FG_RESOLVE_MAX_ROOT_SLOTS 4

struct fg_resolve_opts {
	enum fg_call_graph call_graph; /* FP or DWARF: how user stacks are walked */
	/*
	 * The depth limit: user frames unwound at most (DWARF mode); frames the
	 * kernel's callchain holds at most, kernel and user together (fp mode:
	 * the events' sample_max_stack), so a chain that long was cut.
	 */
	uint32_t max_stack;
	bool inline_frames, demangle; /* of user frames */
	bool jit_suffix;              /* "_[j]" on frames named from a JIT map */
	uint64_t waiting_max;         /* bytes of samples the waiting room holds at most */
	size_t root_slots;            /* free name slots before each emitted stack (see emit) */
	fg_resolve_want_fn want;      /* NULL: every sample */
	fg_resolve_emit_fn emit;
	void *ctx;
};

/* How a sample's frames resolved (a sample's each frame counts once). */
enum fg_frame_kind {
	FG_FRAME_NAMED,
	FG_FRAME_OFFSET,
	FG_FRAME_UNKNOWN,
	FG_FRAME_KERNEL,
	FG_FRAME_KERNEL_UNKNOWN,
	FG_FRAME_JIT,
	_FG_FRAME_KIND_MAX,
};

/*
 * How samples' user stacks ended. Complete: the walk reached the outermost
 * frame (in DWARF mode, a frame whose CFI leaves the return address
 * undefined, as _start and thread entry points do; in frame-pointer mode, a
 * frame named like one of them, see docs/PERFORMANCE.md). Truncated: the
 * stack dump (DWARF) or the depth limit ended it. Failed: anything else.
 */
struct fg_stack_quality {
	uint64_t user_stacks; /* samples with a user part */
	uint64_t complete, truncated, failed;
	uint64_t fp_frames; /* DWARF mode: frames unwound by frame pointer for want of CFI */
};

static inline void fg_stack_quality_add(struct fg_stack_quality *dst,
					const struct fg_stack_quality *src)
{
	dst->user_stacks += src->user_stacks;
	dst->complete += src->complete;
	dst->truncated += src->truncated;
	dst->failed += src->failed;
	dst->fp_frames += src->fp_frames;
}

/* A location of the memo, as fg_resolver__location() describes it. */
struct fg_resolve_location {
	enum { FG_LOCATION_USER, FG_LOCATION_KERNEL, FG_LOCATION_JIT } kind;
	struct fg_dso *dso; /* borrowed while the resolver lives; NULL for kernel, JIT, unknown */
	uint64_t addr;      /* user: file offset in dso; kernel: address; JIT: the map entry's id */
	const uint32_t *names; /* borrowed until the memo changes: name ids, outermost first */
	size_t n_names;        /* >= 1: the function, then each function inlined there */
};

struct fg_status_stack_quality;

/* The figures as status and a recording's metadata report them (proto/status.h). */
void fg_stack_quality_status(const struct fg_stack_quality *q, struct fg_status_stack_quality *ret);

struct fg_resolve_stats {
	uint64_t samples;      /* emitted */
	uint64_t filtered;     /* not wanted */
	uint64_t dropped_full; /* refused: a table was full */
	uint64_t frames[_FG_FRAME_KIND_MAX];
	uint64_t inlined_frames; /* frames added for inlined functions */
	struct fg_stack_quality quality;
	uint64_t waiting;    /* in the waiting room now */
	uint64_t waited;     /* samples that waited, ever (each counted once) */
	uint64_t degraded;   /* handled without all they waited for */
	uint64_t unreadable; /* binaries whose symbols could not be read */
	bool memory_limited; /* frozen: new locations are refused */
};

struct fg_resolver;

/*
 * names is the table frame names are interned in (borrowed until
 * fg_resolver__forget() swaps it or the resolver is freed); deps is copied.
 * Caller frees *ret with fg_resolver__free().
 */
int fg_resolver__new(const struct fg_resolve_opts *opts, const struct fg_resolve_deps *deps,
		     struct fg_folded *names, struct fg_resolver **ret);
struct fg_resolver *fg_resolver__free(struct fg_resolver *r);

/* Resolves a sample record (other types are ignored), or parks it to be handled again. */
void fg_resolver__sample(struct fg_resolver *r, const struct fg_record *rec);

/*
 * Handles again the parked samples whose wait may be over (a drain round
 * does this first). With all, every parked sample is handled now, with
 * what is known then (finishing, stopping): none is left waiting.
 */
void fg_resolver__replay(struct fg_resolver *r, bool all);

/*
 * Drops the memo and takes names as the table to intern in from now on (a
 * long-lived consumer starts afresh now and then): name ids handed out
 * before are stale. Parked samples stay.
 */
void fg_resolver__forget(struct fg_resolver *r, struct fg_folded *names);

/*
 * No new locations from now on (the consumer's memory budget is spent):
 * samples that need one are counted as dropped_full; known ones go on.
 * fg_resolver__forget() lifts it.
 */
void fg_resolver__freeze(struct fg_resolver *r);
/* Whether it is frozen (fg_resolver__freeze() since the last fg_resolver__forget()). */
bool fg_resolver__frozen(const struct fg_resolver *r);
/* Bytes the memo holds (the name table is its owner's to count). */
uint64_t fg_resolver__bytes(const struct fg_resolver *r);

void fg_resolver__stats(const struct fg_resolver *r, struct fg_resolve_stats *ret);

/*
 * Called from the emit callback: the sample's locations (indices of the
 * memo), leaf first, one per code address, in *ret (borrowed for the
 * call), and whether its user stack was cut short. The names emitted are
 * theirs, expanded, after a FG_RESOLVE_TRUNCATED frame when cut short: a
 * consumer that keeps these instead keeps where each frame came from.
 */
size_t fg_resolver__sample_locations(const struct fg_resolver *r, const uint32_t **ret,
				     bool *ret_truncated);

/* The memo's location idx (one fg_resolver__sample_locations() gave). 0, or -ENOENT. */
int fg_resolver__location(const struct fg_resolver *r, uint32_t idx,
			  struct fg_resolve_location *ret);

/*
 * Interns name, cut to a bounded length, with its suffix (may be NULL) into
 * names, which cleans it (common/profile/framename.h): what the resolver does with
 * frame names, for a consumer's own root frames.
 */
int fg_resolve_intern(struct fg_folded *names, const char *name, const char *suffix, uint32_t *ret);

struct fg_meta_resolve;

/*
 * The resolver's part of a recording's metadata (proto/meta.h): "frames",
 * the unreadable binaries and "jit_maps", into *ret, which the caller
 * releases with fg_meta_resolve_done() (its strings are copies: it outlives
 * r). Returns 0 or -ENOMEM (*ret is then released).
 */
int fg_resolver__metadata(const struct fg_resolver *r, struct fg_meta_resolve *ret);
