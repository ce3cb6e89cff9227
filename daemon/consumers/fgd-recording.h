/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One recording: a consumer (docs/ARCHITECTURE.md, "The engine") with a
 * source of its own. Its source is per-CPU sampling events at its
 * frequency (fgd-evset); a resolver of its own (fgd-resolve) turns each of
 * their samples into a stack of frame names, filtered to its targets (the
 * whole machine, or a set of processes); and its aggregate is a folded
 * model that the names are interned in. When the recording ends, the model
 * streams out as folded text, SVG or HTML (common/render/result).
 *
 * Lifecycle: new -> (drain)* -> stop -> last drain -> settle -> finish ->
 * emit until done -> free.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/emit.h"
#include "base/macro.h"
#include "fgd-loader.h"
#include "profile/view.h"
#include "proto/proto-types.h"
#include "resolver/fgd-proctab.h"
#include "resolver/fgd-resolve.h"
#include "resolver/fgd-unwind.h"
#include "sources/fgd-evset.h"
#include "sources/fgd-offcpu.h"
#include "symbols/fgd-symbols.h"

struct fg_recording_opts {
	struct fg_record_request req; /* what the client asked for, validated */
	struct fg_view view; /* what the client may see (view.h); its kernel_suffix is req's */
	struct fg_event_choice event;
	uint32_t frequency; /* resolved: never 0 */
	uint32_t max_stack;
	enum fg_call_graph call_graph; /* resolved: FP or DWARF */
	uint32_t stack_dump;           /* DWARF: bytes of user stack per sample */
	size_t ring_pages;
	uint64_t max_bytes; /* a client's limit on the aggregate; past it, new stacks are dropped */
	/* off-CPU and wall-clock: blocks a second kept at most (fg_offcpu_opts.max_rate); 0: any */
	uint64_t off_cpu_rate;
	const char *hostname; /* borrowed for the call */
};

struct fg_recording;

/*
 * Opens and enables the events (on-CPU). For a pid list, each pid's
 * current process is the target; one that does not exist fails the
 * recording with -ESRCH and its pid stored in *ret_bad_pid. deps is copied;
 * what it points to must outlive the recording. With deps->budget, the
 * tables (then the result) are charged to its recordings part, and stop
 * growing as at max_bytes when it has no room. Caller frees *ret with
 * fg_recording__free().
 *
 * An off-CPU or wall-clock recording (opts->req.off_cpu, wall) is made
 * starting: its off-CPU source is the caller's to make, off the loop (a
 * program's load and verification take tens of milliseconds of CPU, seconds
 * on a busy machine), from fg_recording__source_opts(), and to hand over
 * with fg_recording__attach_source(), when the recording begins (its events
 * too, for wall-clock).
 */
int fg_recording__new(const struct fg_recording_opts *opts, const struct fg_resolve_deps *deps,
		      struct fg_recording **ret, pid_t *ret_bad_pid);

/* Whether its off-CPU source is still to be attached. */
bool fg_recording__starting(const struct fg_recording *r);
/*
 * What its off-CPU source is made with, in *ret; ret->pids points into
 * pids, which must live as long as *ret is used.
 */
void fg_recording__source_opts(const struct fg_recording *r, struct fg_offcpu_opts *ret,
			       pid_t pids[FG_PROTO_MAX_PIDS]);
/*
 * Hands over its off-CPU source (source: the recording frees it from now
 * on, whatever this returns) and begins: 0, -ECANCELED if it was stopped
 * meanwhile or was not starting (the source is freed), or a negative errno
 * from enabling its events.
 */
int fg_recording__attach_source(struct fg_recording *r, struct fg_offcpu *source);
struct fg_recording *fg_recording__free(struct fg_recording *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_recording *, fg_recording__free);

/* The events, for epoll registration; NULL after finish. Borrowed. */
struct fg_evset *fg_recording__events(struct fg_recording *r);
/* The off-CPU source's ring fd, readable when it fills (fg_offcpu__fd()); -1: none, or finished. */
int fg_recording__ring_fd(const struct fg_recording *r);

/*
 * A record delivered by hand rather than from the rings (tests, and any
 * source other than the recording's own events): resolved into the
 * aggregate as a drained one would be.
 */
void fg_recording__feed(struct fg_recording *r, const struct fg_record *rec);

/*
 * Drains what the last snapshot of the per-CPU events saw into the
 * aggregate; an off-CPU source's blocks come with fg_recording__drain_blocks().
 */
void fg_recording__drain(struct fg_recording *r);

/*
 * Drains the off-CPU source's blocks (off-CPU and wall-clock recordings)
 * until deadline (CLOCK_MONOTONIC ns) at most (fg_offcpu__drain()).
 * Returns whether blocks were left behind for the next round.
 */
bool fg_recording__drain_blocks(struct fg_recording *r, uint64_t deadline);
/* Whether the last drain of its blocks left some behind: a stopped recording waits for them. */
bool fg_recording__behind(const struct fg_recording *r);

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

/* What it was started with. Borrowed until the recording is freed; hostname is NULL. */
const struct fg_recording_opts *fg_recording__opts(const struct fg_recording *r);
uint64_t fg_recording__samples(const struct fg_recording *r);
const struct fg_stack_quality *fg_recording__stack_quality(const struct fg_recording *r);
enum fg_call_graph fg_recording__call_graph(const struct fg_recording *r);
uint64_t fg_recording__lost(const struct fg_recording *r);
/* Off-CPU blocks not kept: past the recording's rate (off_cpu_rate). */
uint64_t fg_recording__rate_limited(const struct fg_recording *r);
/* CLOCK_MONOTONIC ns when sampling started; and when it stopped (0 while running). */
uint64_t fg_recording__started(const struct fg_recording *r);

/* Closes the events, symbolizes and prepares the output. 0 or a negative errno. */
int fg_recording__finish(struct fg_recording *r);

struct json_object;

/*
 * The recording's metadata (docs/PROTOCOL.md; its schema: proto/meta.h).
 * Caller puts the reference. NULL on ENOMEM.
 */
struct json_object *fg_recording__metadata(struct fg_recording *r);

/* Streams the output (see emit.h): 0 while more remains, 1 when done, or an error. */
int fg_recording__emit(struct fg_recording *r, fg_write_fn fn, void *ctx, size_t budget);
