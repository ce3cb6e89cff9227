/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The top list: processes by samples, each with the leaf frame most of its
 * samples ended in, aggregated from any number of sources (the always-on
 * window's slices, the history's slice files) fed one (process, leaf,
 * count) at a time.
 *
 * A process is the same across sources when its pid and start time are.
 * Sources may have sampled at different rates: each count is weighed by its
 * own, so a process's CPU time is right across a change of rate.
 * Leaf counts add up per process before the hottest is chosen, so the
 * answer does not depend on how the samples were split between sources or
 * slices. The name shown is the last one fed: feed the oldest source first.
 * Names (process names, leaves) are kept clean (common/profile/framename.h): from a
 * history file of any age, they are valid UTF-8 in the list.
 *
 * Bounded: at most max_processes processes and max_leaves (process, leaf)
 * pairs. Samples of a process past the first cap are counted as dropped and
 * listed nowhere; samples of a pair past the second still count for their
 * process, and are counted as dropped leaf samples.
 *
 * Pure. Not thread-safe.
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/macro.h"
#include "profile/view.h"

/* A process as a source knows it. */
struct fg_top_process {
	pid_t pid;
	uint64_t start_time; /* with pid, tells reuses of a pid apart */
	uid_t uid;
	const char *comm;   /* borrowed for the call; NULL: "[unknown]" */
	uint32_t frequency; /* Hz the counts were taken at; 0: the list's default */
};

struct fg_top_entry {
	pid_t pid;
	uint64_t start_time;
	uid_t uid;          /* as first fed */
	const char *comm;   /* the last name fed; borrowed until fg_top__free() */
	uint64_t samples;   /* all of the process's samples, with or without a leaf */
	double cpu_seconds; /* the CPU time they stand for: each count over its frequency */
	const char *leaf;   /* borrowed until fg_top__free(); NULL when no sample had a leaf */
	uint64_t leaf_samples;
};

struct fg_top_stats {
	size_t processes;         /* distinct processes held */
	size_t leaves;            /* distinct (process, leaf) pairs held */
	uint64_t dropped_samples; /* of processes past max_processes: listed nowhere */
	/* of pairs past max_leaves: in their process's samples only */
	uint64_t dropped_leaf_samples;
};

struct fg_top;

/*
 * default_frequency (Hz) is the rate of counts fed without one. view (copied)
 * is what the client the list is for may see: a leaf it hides is counted as
 * the frame that stands for it (view.h), before the hottest is chosen.
 * Caller frees *ret with fg_top__free(). 0, -EINVAL (a cap or the frequency
 * 0) or -ENOMEM.
 */
int fg_top__new(size_t max_processes, size_t max_leaves, uint32_t default_frequency,
		const struct fg_view *view, struct fg_top **ret);
struct fg_top *fg_top__free(struct fg_top *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_top *, fg_top__free);

/*
 * Adds count samples to process p, that ended in the frame leaf[0..leaf_len)
 * (a name ends at its first NUL byte), or in no frame of their own when leaf
 * is NULL (samples without frames, or folded into "[other]"). 0 or -ENOMEM;
 * samples past a cap are counted, not an error.
 */
int fg_top__add(struct fg_top *t, const struct fg_top_process *p, const char *leaf, size_t leaf_len,
		uint64_t count);

/*
 * The processes, busiest first (by CPU time, then samples; ties: lower
 * pid, then earlier start time),
 * each with its hottest leaf (ties: the name first in byte order). *ret is
 * borrowed until the next fg_top__add() or fg_top__free(). 0 or -ENOMEM.
 */
int fg_top__list(struct fg_top *t, const struct fg_top_entry **ret, size_t *ret_n);

void fg_top__stats(const struct fg_top *t, struct fg_top_stats *ret);
