/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The process frame fgd puts at the root of a recording's stacks, split
 * back into its parts for the exports that make it something else than a
 * frame (pprof labels, speedscope profiles): "comm", "comm-pid" or
 * "comm-pid/tid", stackcollapse-perf.pl's forms (--pid, --tid).
 *
 * Pure.
 */

#include <stdbool.h>
#include <stddef.h>

/*
 * The root frame of samples that the window could keep no process for: past
 * its ceiling, a slice counts the samples of processes it has no room for
 * under this one frame. Exports treat it as no process.
 */
#define FG_PROCFRAME_OTHER "[other processes]"

struct fg_procframe {
	size_t comm_len;       /* the comm is the frame's first comm_len bytes */
	const char *pid, *tid; /* borrowed from the frame; NULL: not in it */
	size_t pid_len, tid_len;
};

/*
 * Splits name[0..len), written in the form pid and tid say ("comm-pid" with
 * pid, "comm-pid/tid" with tid, else "comm"): a comm may hold '-' and
 * digits itself, so the form is not guessed. A frame not in that form
 * ("[other processes]", a comm of a snapshot) is all comm.
 */
void fg_procframe_split(const char *name, size_t len, bool pid, bool tid, struct fg_procframe *ret);
