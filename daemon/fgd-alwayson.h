/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Always-on sampling: a long-lived internal whole-machine recording in sink
 * mode at a low rate, whose symbolized stacks fold into the per-process
 * slices of a rolling window (common/window) that queries read. It has its
 * own events, so on-demand recordings neither see nor count its samples,
 * and it never sees theirs.
 */

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "status.h"
#include "window.h"

struct fgd;
struct fgd_alwayson;

/* Starts sampling. d is borrowed and must outlive it. Caller frees *ret with fgd_alwayson__free(). */
int fgd_alwayson__new(struct fgd *d, struct fgd_alwayson **ret);
struct fgd_alwayson *fgd_alwayson__free(struct fgd_alwayson *a);

/* The drain round's two steps (fgd_drain_round()): snapshot the rings, then drain them. */
void fgd_alwayson__snapshot(struct fgd_alwayson *a);
void fgd_alwayson__drain(struct fgd_alwayson *a);
/* Rotates slices when their time is up; now_ms is CLOCK_REALTIME. */
void fgd_alwayson__tick(struct fgd_alwayson *a, int64_t now_ms);
/* Writes the open slice, cut short now, to the history: at shutdown. */
void fgd_alwayson__flush(struct fgd_alwayson *a);

/* The window, for queries. Borrowed until fgd_alwayson__free(). */
const struct fg_window *fgd_alwayson__window(const struct fgd_alwayson *a);
/* Whether its slices go to a history on disk (a usable state directory). */
bool fgd_alwayson__has_history(const struct fgd_alwayson *a);

/*
 * The "always_on" member of status. Its strings are borrowed from a (and
 * strerror()) for the call that encodes them; the history's tiers are
 * allocated, released with the status they are part of (fg_status_done()).
 * 0, or -ENOMEM with *ret untouched.
 */
int fgd_alwayson__status(const struct fgd_alwayson *a, struct fg_status_always_on *ret);

/* ---- queries ---- */

#include "emit.h"
#include "proto.h"
#include "view.h"

struct fgd_snapshot;

/*
 * Builds the result of a snapshot query for a client whose view (borrowed
 * for the call) says what it may see: non-root users only processes they
 * own, and kernel frames as the view shows them (common/view.h). The result
 * may hold at most max_bytes while it streams (fgd_snapshot__bytes()): the
 * profile is checked against it as it is read, so a query too large is
 * refused before it is read whole, and the result once it is laid out.
 * -ENOBUFS past max_bytes, -ENODATA when the window holds no sample for it
 * (for both, *ret_error says more), -EINVAL for a bad selector, -ENOMEM.
 * Caller frees *ret with fgd_snapshot__free() and puts *ret_meta.
 */
int fgd_alwayson__snapshot_query(struct fgd_alwayson *a, const struct fg_query_request *q,
				 const struct fg_view *view, uint64_t max_bytes,
				 struct fgd_snapshot **ret,
				 struct json_object **ret_meta, char *ret_error, size_t error_size);
/* Streams the result (emit.h): 0 while more remains, 1 when done, or a negative errno. */
int fgd_snapshot__emit(struct fgd_snapshot *s, fg_write_fn fn, void *ctx, size_t budget);
struct fgd_snapshot *fgd_snapshot__free(struct fgd_snapshot *s);
/* Heap bytes the result holds while it streams: its profile and its renderer. */
size_t fgd_snapshot__bytes(const struct fgd_snapshot *s);

/* The reply of a top query, as a "top" message, for a client of view. Same errors as snapshots. */
int fgd_alwayson__top_query(struct fgd_alwayson *a, const struct fg_query_request *q,
			    const struct fg_view *view, struct json_object **ret, char *ret_error,
			    size_t error_size);
