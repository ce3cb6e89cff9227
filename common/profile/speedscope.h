/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A folded model (common/profile/folded.h) as a speedscope file
 * (https://www.speedscope.app/file-format-schema.json): what
 * `-o FILE.speedscope.json` writes for a recording, a snapshot or a folded
 * file. speedscope shows one profile at a time and switches between them,
 * so each process is a profile of its own rather than a root frame.
 *
 * - One "sampled" profile per distinct process frame at the root of the
 *   stacks (the frames the daemon adds: "comm", "comm-pid" or
 *   "comm-pid/tid", under a cgroup frame with --group-by), named
 *   "comm (pid N)", "comm (pid N, tid M)" or "comm", with " in CGROUP"
 *   after it when there is a cgroup frame. The root frames are not in the
 *   profile's samples. A stack of root frames alone ("[other processes]")
 *   keeps its frame and goes to a profile of that name. Without roots
 *   (a folded file, whose root frames may be anything) there is one
 *   profile, named as the file is, and every frame stays a frame.
 * - Profiles heaviest first (ties by name), so "activeProfileIndex": 0,
 *   the one speedscope opens, is the process that took the most.
 * - Each distinct stack is one sample, its frames root first, weighted by
 *   its count, in the model's sorted order: speedscope's "Time Order" view
 *   then draws the flame graph fgd draws (a flame chart for a sequence
 *   model), and "Left Heavy" merges them itself. Its start is 0 and its
 *   end the profile's total.
 * - Units: on-CPU counts are samples, unit "none", weights the counts as
 *   fgd's other formats show them (a sample stands for 1/frequency s; the
 *   count is exact where nanoseconds from an integral period would not be,
 *   and the same for a recording and a folded file). Off-CPU and wall
 *   counts are µs: "microseconds". Fractional counts (a normalised folded
 *   file) are written as they are.
 * - Frames are shared by all profiles, one per distinct name, named as
 *   fgd names them everywhere: kernel frames keep their "_[k]" suffix and
 *   JIT frames their "_[j]", since a speedscope frame has no mapping to
 *   tell a kernel "read" from a user one.
 *
 * Pure.
 */

#include <stdbool.h>
#include <stddef.h>

#include "profile/folded.h"

/* What a model's counts are. */
enum fg_speedscope_unit {
	FG_SPEEDSCOPE_SAMPLES,      /* on-CPU samples: "none" */
	FG_SPEEDSCOPE_MICROSECONDS, /* off-CPU or wall-clock µs */
};

/* What the frames above each stack's own are, root first. */
enum fg_speedscope_roots {
	FG_SPEEDSCOPE_ROOTS_NONE,          /* none: every frame is a frame (a folded file) */
	FG_SPEEDSCOPE_ROOTS_PROCESS,       /* the process frame */
	FG_SPEEDSCOPE_ROOTS_CGROUP_PROCESS /* a cgroup frame, then the process frame */
};

struct fg_speedscope_meta {
	enum fg_speedscope_unit unit;
	enum fg_speedscope_roots roots;
	bool pid, tid; /* the process frame is "comm-pid" (pid) or "comm-pid/tid" (tid) */
	/* The file's name, and the profile's without roots; borrowed for the call. NULL: "fgd" */
	const char *name;
};

/*
 * The speedscope file of model, which must be sorted (fg_folded__sort())
 * and not differential: JSON text, valid UTF-8, ending in a newline, in
 * *ret (caller frees; NUL-terminated) of *ret_len bytes without the NUL.
 * A model without stacks gives one empty profile, named as the file, so
 * that speedscope has one to open. 0, -EINVAL for a differential model
 * (a speedscope weight is one profile's), or -ENOMEM.
 */
int fg_speedscope_from_model(const struct fg_folded *model, const struct fg_speedscope_meta *meta,
			     char **ret, size_t *ret_len);
