/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Always-on sampling: whole-machine events of its own at a low rate and a
 * resolver (fgd-resolve.h) whose stacks fold into the per-process slices of
 * a rolling window (common/storage/window); closed slices go to the history on disk.
 * On-demand recordings neither see nor count its samples, and it never sees
 * theirs. Queries of what it kept are fgd-query.h's.
 *
 * Always-on off-CPU (OffCpu=) is a second one whose source is the off-CPU
 * BPF program (fgd-offcpu.h) instead of sampling events: its window and
 * history (in the state directory's off-cpu/) count blocked time in µs.
 */

#include <stdbool.h>
#include <stdint.h>

#include "base/macro.h"
#include "consumers/fgd-history.h"
#include "consumers/fgd-recording.h"
#include "fgd-conf.h"
#include "proto/status.h"
#include "storage/window.h"

struct fgd_alwayson;

struct fgd_alwayson_opts {
	/*
	 * Borrowed for its life: the settings it starts with (rate, slices,
	 * window, ceiling, state directory, call graph) are copied; the
	 * history's budget and compaction policy are read at each step, so a
	 * reload changes them.
	 */
	const struct fgd_config *conf;
	struct fg_event_choice event;
	uint32_t max_stack;
	const char *hostname; /* borrowed for its life */
	bool off_cpu;         /* blocked time from the off-CPU program, rather than samples */
	/* Windows that share the budget's window part (1, or 2 with off-CPU): this one's share. */
	unsigned windows;
};

/*
 * Starts sampling (deps copied). For off-CPU, *ret_why (may be NULL) names
 * the cause of a failure (fg_offcpu__new()). Caller frees *ret with
 * fgd_alwayson__free().
 */
int fgd_alwayson__new(const struct fgd_alwayson_opts *opts, const struct fg_resolve_deps *deps,
		      struct fgd_alwayson **ret, const char **ret_why);
struct fgd_alwayson *fgd_alwayson__free(struct fgd_alwayson *a);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fgd_alwayson *, fgd_alwayson__free);

/* Its per-CPU events, for the engine's drain round and ring watch; NULL for off-CPU. Borrowed. */
struct fg_evset *fgd_alwayson__events(struct fgd_alwayson *a);
/* Off-CPU: the ring's fd, readable when it fills (fg_offcpu__fd()); -1 for sampling. */
int fgd_alwayson__ring_fd(const struct fgd_alwayson *a);
/* Sampling: drains its rings up to their last snapshot into the window. */
void fgd_alwayson__drain(struct fgd_alwayson *a);
/*
 * Off-CPU: drains the source's blocks until deadline (CLOCK_MONOTONIC ns)
 * at most (fg_offcpu__drain()). Returns whether some were left behind.
 */
bool fgd_alwayson__drain_blocks(struct fgd_alwayson *a, uint64_t deadline);
/* Rotates slices when their time is up; now_ms is CLOCK_REALTIME. */
void fgd_alwayson__tick(struct fgd_alwayson *a, int64_t now_ms);
/* Writes the open slice, cut short now, to the history: at shutdown. */
void fgd_alwayson__flush(struct fgd_alwayson *a);

/* What queries read (fgd-query.h): pointers borrowed until fgd_alwayson__free(). */
struct fgd_alwayson_data {
	const struct fg_window *window;
	struct fg_history *history; /* NULL: no usable state directory */
	const char *event, *hostname;
	bool off_cpu;       /* counts are µs blocked, not samples */
	uint32_t frequency; /* the settings it samples with; 0 for off-CPU */
	enum fg_call_graph call_graph;
	uint32_t slice_seconds;
};
void fgd_alwayson__data(const struct fgd_alwayson *a, struct fgd_alwayson_data *ret);
/* Whether its slices go to a history on disk (a usable state directory). */
bool fgd_alwayson__has_history(const struct fgd_alwayson *a);

/*
 * The "always_on" member of status. Its strings are borrowed from a (and
 * strerror()) for the call that encodes them; the history's tiers are
 * allocated, released with the status they are part of (fg_status_done()).
 * 0, or -ENOMEM with *ret untouched.
 */
int fgd_alwayson__status(const struct fgd_alwayson *a, struct fg_status_always_on *ret);
/* Off-CPU: the "off_cpu" member's always-on part, the window's as above. Same returns. */
int fgd_alwayson__status_off_cpu(const struct fgd_alwayson *a, struct fg_status_off_cpu *ret);
