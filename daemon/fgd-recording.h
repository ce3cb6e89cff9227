/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One recording: its own per-CPU sampling events at its frequency, a filter
 * (the whole machine, or a set of processes), and the aggregate.
 *
 * The hot path turns each sample's callchain into code locations (binary,
 * file offset), names each location the first time it sees it (a memo of
 * locations to frame names), and adds the named stack to a folded model;
 * when the recording ends, the model streams out as folded text, SVG or
 * HTML. Whatever a location's names need that takes reading a file (a
 * binary's symbols, its DWARF, its CFI, kallsyms) is read on the loader's
 * thread: the sample waits, parked, and is handled again once it is read.
 *
 * Lifecycle: new -> (snapshot, handle samples)* -> stop -> last drain ->
 * finish -> emit until done -> free.
 */

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "emit.h"
#include "fgd-loader.h"
#include "fgd-proc.h"
#include "fgd-sampler.h"
#include "fgd-symbols.h"
#include "fgd-unwind.h"
#include "proto.h"
#include "view.h"

/*
 * Where a sink-mode recording's samples go instead of its own aggregate:
 * proc (NULL if unknown; borrowed for the call) and the stack as frame name
 * ids, root first, without a process frame; names[] and the ids are
 * borrowed for the call, the names readable with fg_recording__name().
 */
typedef void (*fg_recording_sink_fn)(void *ctx, struct fg_process *proc, const struct fg_sample *s,
				     const uint32_t *names, size_t n);

struct fg_recording_opts {
	struct fg_record_request req; /* what the client asked for, validated */
	struct fg_view view;          /* what the client may see (view.h); its kernel_suffix is req's */
	struct fg_event_choice event;
	uint32_t frequency;           /* resolved: never 0 */
	uint32_t max_stack;
	enum fg_call_graph call_graph; /* resolved: FP or DWARF */
	uint32_t stack_dump;          /* DWARF: bytes of user stack per sample */
	size_t ring_pages;
	uint64_t max_bytes;           /* the aggregate's memory; past it, new stacks are dropped */
	const char *hostname;         /* borrowed for the call */
	fg_recording_sink_fn sink;    /* NULL: the recording aggregates itself */
	void *sink_ctx;
	/*
	 * Where sym and unwinder read files (borrowed; the same loader, or
	 * NULL for none): samples that wait for it are parked and taken again
	 * as its jobs complete.
	 */
	struct fg_loader *loader;
	/*
	 * The daemon's memory budget (common/budget.h; borrowed, NULL for
	 * none): the tables are charged to its recordings part, the waiting
	 * room to its waiting part. Tables the part has no room for stop
	 * growing as at max_bytes; a sample the room has no room for is
	 * handled with what is known (degraded).
	 */
	struct fg_budget *budget;
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
	uint64_t fp_frames;   /* DWARF mode: frames unwound by frame pointer for want of CFI */
};

static inline void fg_stack_quality_add(struct fg_stack_quality *dst, const struct fg_stack_quality *src)
{
	dst->user_stacks += src->user_stacks;
	dst->complete += src->complete;
	dst->truncated += src->truncated;
	dst->failed += src->failed;
	dst->fp_frames += src->fp_frames;
}

/* The figures as metadata and status report them. NULL on ENOMEM. */
struct json_object *fg_stack_quality_json(const struct fg_stack_quality *q);

struct fg_recording;

/*
 * Opens and enables the events. For a pid list, each pid's current process
 * is the target; one that does not exist fails the recording with -ESRCH
 * and its pid stored in *ret_bad_pid. procs, sym and unwinder (needed in
 * DWARF mode) are borrowed and must outlive the recording. Caller frees
 * *ret with fg_recording__free().
 */
int fg_recording__new(const struct fg_recording_opts *opts, struct fg_proctab *procs,
		      struct fg_symbolizer *sym, struct fg_unwinder *unwinder,
		      struct fg_recording **ret, pid_t *ret_bad_pid);
struct fg_recording *fg_recording__free(struct fg_recording *r);

/* The events, for epoll registration; NULL after finish. Borrowed. */
struct fg_evset *fg_recording__events(struct fg_recording *r);

/* Drains what the last snapshot of the events saw into the aggregate. */
void fg_recording__drain(struct fg_recording *r);

/* Stops sampling. Call one more drain round after it, then finish. */
void fg_recording__stop(struct fg_recording *r);

/*
 * Samples waiting for a binary, its CFI or kallsyms to be read on the
 * loader's thread (fgd-loader.h). Each drain round handles again those
 * whose wait may be over. None waits for ever: after a few seconds, when
 * the waiting room is full, or at finish, a sample is handled with what is
 * known then (its frames may be module+offset, lack inline frames, or have
 * been unwound by frame pointer), and counted as degraded. A stopped
 * recording does best to wait for them to go to 0 before it finishes.
 */
size_t fg_recording__waiting(const struct fg_recording *r);
/* Handles every waiting sample now, with what is known (finish does it too). */
void fg_recording__settle(struct fg_recording *r);

/* What waiting cost. */
struct fg_recording_waits {
	uint64_t waiting;  /* now */
	uint64_t waited;   /* ever */
	uint64_t degraded; /* ever: handled without all they waited for */
};
void fg_recording__waits(const struct fg_recording *r, struct fg_recording_waits *ret);

/* True once every target process has exited (never for whole-machine recordings). */
bool fg_recording__targets_gone(struct fg_recording *r);

uint64_t fg_recording__samples(const struct fg_recording *r);
const struct fg_stack_quality *fg_recording__stack_quality(const struct fg_recording *r);
enum fg_call_graph fg_recording__call_graph(const struct fg_recording *r);
uint64_t fg_recording__lost(const struct fg_recording *r);
/* CLOCK_MONOTONIC ns when sampling started; and when it stopped (0 while running). */
uint64_t fg_recording__started(const struct fg_recording *r);

/* A frame name id handed to the sink: borrowed until fg_recording__forget(). */
const char *fg_recording__name(const struct fg_recording *r, uint32_t id);

/*
 * Sink mode: drops the location memo and the names, which a long-lived
 * recording would otherwise grow for ever; ids handed out before are stale.
 * Returns the bytes they held. 0 or -ENOMEM (then the old ones stay).
 */
int fg_recording__forget(struct fg_recording *r);
/* Bytes the memo and names hold now. */
uint64_t fg_recording__bytes(const struct fg_recording *r);

/* Closes the events, symbolizes and prepares the output. 0 or a negative errno. */
int fg_recording__finish(struct fg_recording *r);

/* The recording's metadata (see docs/PROTOCOL.md). Caller puts the reference. */
struct json_object *fg_recording__metadata(struct fg_recording *r);

/* Streams the output (see emit.h): 0 while more remains, 1 when done, or an error. */
int fg_recording__emit(struct fg_recording *r, fg_write_fn fn, void *ctx, size_t budget);
