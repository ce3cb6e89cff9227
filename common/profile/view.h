/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What one client may see of the profiles fgd holds: the one policy every
 * output applies, decided once per request (fg_view_init()) from the
 * client's uid and kernel.perf_event_paranoid, which the daemon reads then.
 *
 *   - Processes: root sees every process; another user only the processes
 *     they own (fg_view_shows_process()). A reader (a member of fgd's
 *     ReaderGroup=, fgd.conf(5)) sees every process in what it reads of the
 *     always-on data, and only there: fg_view_read_all() widens the view of
 *     such a query; a recording's view is never widened.
 *   - Kernel frames: when kernel.perf_event_paranoid >= 2 the kernel would
 *     not let an unprivileged user profile the kernel, so fgd does not show
 *     them its symbols either: each run of kernel frames in a stack becomes
 *     one FG_VIEW_KERNEL frame, and stacks that become identical merge.
 *
 * Where it is applied: every output is made from a model through one of
 * two objects that take the view when they are made and cannot be made
 * without one: common/render/result (record, snapshot, and so diff --baseline;
 * every format of stacks, folded text, SVG, HTML and whatever comes next)
 * and common/profile/top (the top list, whose leaf frames the view maps alike).
 * Models and the always-on window hold everything; only what leaves fgd
 * for a client is filtered.
 *
 * How kernel frames are told apart: inside fgd a kernel frame is always
 * spelled with the FG_KERNEL_SUFFIX suffix. Recordings name kernel frames
 * so whatever their request (a request for no suffix is honoured by the
 * view, as names leave), and the always-on window and the history store
 * them so. A user-space name spelled with the suffix (a JIT map can say
 * anything) is taken for a kernel frame: it is hidden with them, which
 * shows less, never more.
 *
 * Pure.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "profile/folded.h"

#define FG_KERNEL_SUFFIX "_[k]"
/* The frame that stands for a run of kernel frames a view hides. */
#define FG_VIEW_KERNEL "[kernel]"

struct fg_view {
	uid_t uid;          /* the client's; 0: root */
	bool all_processes; /* a reader's query: every process, whoever owns it */
	bool hide_kernel;   /* kernel frames collapse into one FG_VIEW_KERNEL frame */
	bool kernel_suffix; /* kernel frames shown keep their suffix: true unless the request says */
};

/*
 * The policy, for a client of uid while kernel.perf_event_paranoid is
 * paranoid (a value that could not be read counts as 2: hiding is the safe
 * side). Kernel frames keep their suffix.
 */
void fg_view_init(struct fg_view *v, uid_t uid, int paranoid);

/*
 * Widens v to every process: what a reader gets for a query of the always-on
 * data (snapshot, top, a heat map of a period), never for a recording. Kernel
 * frames stay as fg_view_init() decided: the role widens which processes
 * are seen, and nothing else.
 */
void fg_view_read_all(struct fg_view *v);

/* Whether v shows the processes of owner. */
bool fg_view_shows_process(const struct fg_view *v, uid_t owner);

/* Whether v shows every process: root's view, or a reader's query. */
bool fg_view_shows_all(const struct fg_view *v);

/* Whether a stored frame name is a kernel frame: it ends in FG_KERNEL_SUFFIX. */
bool fg_frame_is_kernel(const char *name, size_t len);
/*
 * Whether a frame as a client got it is the kernel's: a kernel frame, or
 * the FG_VIEW_KERNEL frame a hidden kernel's runs became.
 */
bool fg_frame_is_kernel_seen(const char *name, size_t len);

/*
 * A frame as v shows it on its own, as the last frame of a stack (top's
 * leaf): name, FG_VIEW_KERNEL, or name without its suffix. The result
 * points into name or is static; its length is stored in *ret_len.
 */
const char *fg_view_frame(const struct fg_view *v, const char *name, size_t len, size_t *ret_len);

/*
 * The model in as v shows it. Takes in over: *ret is in itself when v
 * changes none of its names (root's view, or no kernel frame), else a new
 * model with every run of kernel frames made one FG_VIEW_KERNEL frame (or
 * with their suffix taken off), identical stacks merged, and in freed. The
 * new model keeps in's counts, differential pairs and sequence; it is not
 * sorted. Caller frees *ret with fg_folded__free(). On failure in is freed
 * too. 0 or -ENOMEM.
 */
int fg_view_model(const struct fg_view *v, struct fg_folded *in, struct fg_folded **ret);

struct fg_timed;

/*
 * The timed profile in (common/profile/timed.h) as v shows it, as fg_view_model()
 * does for a model: takes in over, and *ret is in itself or a new profile
 * whose samples keep their times and weights on the stacks as v shows
 * them. On failure in is freed too. 0 or -ENOMEM.
 */
int fg_view_timed(const struct fg_view *v, struct fg_timed *in, struct fg_timed **ret);
