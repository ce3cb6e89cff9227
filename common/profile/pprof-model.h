/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A folded model (common/profile/folded.h) as a pprof profile (common/profile/pprof.h):
 * what `-o FILE.pb.gz` writes for a recording, a snapshot or a folded file.
 *
 * - Each distinct stack is one sample, its frames leaf first as pprof
 *   orders them. By default each distinct frame name is one function and
 *   one location (a model keeps names, not addresses: its address is 0);
 *   a caller that knows its frames' code locations says so through
 *   meta->locate.
 *   Kernel frames ("name_[k]") are in a "[kernel.kallsyms]" mapping and
 *   JIT frames ("name_[j]") in a "[jit]" mapping, named without their
 *   suffix, so pprof's views group them as perf does.
 * - A stack of root frames alone (a sample without frames) gets an
 *   "[unknown]" frame; "[other processes]" alone (the window's samples of
 *   no process) keeps its frame and has no labels.
 * - The root frames the daemon adds above a process's stack become labels,
 *   as pprof's readers and fleet stores expect: the process frame ("comm",
 *   "comm-pid" or "comm-pid/tid", the stackcollapse forms) gives "comm",
 *   "pid" and "thread_id"; a cgroup frame above it gives "cgroup".
 * - Values: on-CPU, samples/count and cpu/nanoseconds (count times the
 *   period; samples/count alone without a period); off-CPU, off_cpu/microseconds; wall-clock, wall/microseconds.
 *   Fractional counts (a normalised folded file) are rounded.
 *
 * Pure.
 */

#include <stddef.h>
#include <stdint.h>

#include "profile/folded.h"

/* What a model's counts are. */
enum fg_pprof_values {
	FG_PPROF_SAMPLES, /* on-CPU samples, each standing for period_ns of CPU */
	FG_PPROF_OFF_CPU, /* µs blocked */
	FG_PPROF_WALL,    /* µs on or off the CPU */
};

/* What the frames above each stack's own are, root first. */
enum fg_pprof_roots {
	FG_PPROF_ROOTS_NONE,          /* none: every frame is a frame (a folded file) */
	FG_PPROF_ROOTS_PROCESS,       /* the process frame */
	FG_PPROF_ROOTS_CGROUP_PROCESS /* a cgroup frame, then the process frame */
};

struct fg_pprof;

/*
 * Makes the location of frame name_id of model in p (its mapping,
 * functions and address, with fg_pprof__mapping(), fg_pprof__function()
 * and fg_pprof__location()), its id in *ret_id: for models whose frames
 * stand for code locations the caller knows (a recording's), instead of
 * the default of a function and location per name. Called once per
 * distinct frame below the roots. 0, -ENOENT for a frame that is only a
 * name (the default then applies to it), or another negative errno.
 */
typedef int (*fg_pprof_locate_fn)(void *ctx, struct fg_pprof *p, const struct fg_folded *model,
				  uint32_t name_id, uint64_t *ret_id);

struct fg_pprof_meta {
	enum fg_pprof_values values;
	uint64_t period_ns;  /* FG_PPROF_SAMPLES: what one sample stands for; 0: unknown */
	int64_t time_ns;     /* Unix ns of the profile's start; 0: unknown */
	int64_t duration_ns; /* 0: unknown */
	enum fg_pprof_roots roots;
	bool pid, tid; /* the process frame is "comm-pid" (pid) or "comm-pid/tid" (tid) */
	const char *const *comments; /* NULL-terminated, borrowed for the call; NULL: none */
	fg_pprof_locate_fn locate;   /* NULL: a function and a location per frame name */
	void *locate_ctx;
};

/*
 * The pprof profile of model (sorted or not; not differential), protobuf
 * gzipped, in *ret (caller frees) of *ret_len bytes. 0, -EINVAL for a
 * differential model (pprof has no such form), -E2BIG for one beyond
 * pprof's int64 values, or -ENOMEM.
 */
int fg_pprof_from_model(const struct fg_folded *model, const struct fg_pprof_meta *meta,
			uint8_t **ret, size_t *ret_len);
