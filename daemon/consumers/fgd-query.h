/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Queries of what always-on sampling kept: a snapshot (the profile of a
 * period, rendered) and top (the processes of a period by CPU share). The
 * part of the period the window still holds in memory comes from there,
 * the older part from the history on disk (docs/ARCHITECTURE.md,
 * "Always-on"); each process is matched against the query's selectors and
 * the client's view.
 */

#include <json-c/json.h>

#include "base/emit.h"
#include "base/macro.h"
#include "consumers/fgd-alwayson.h"
#include "profile/view.h"
#include "proto/proto.h"

struct fgd_snapshot;

/*
 * Builds the result of a snapshot query for a client whose view (borrowed
 * for the call) says what it may see: non-root users only processes they
 * own, and kernel frames as the view shows them (common/profile/view.h). The result
 * may hold at most max_bytes while it streams (fgd_snapshot__bytes()): the
 * profile is checked against it as it is read, so a query too large is
 * refused before it is read whole, and the result once it is laid out.
 * -ENOBUFS past max_bytes, -ENODATA when the window holds no sample for it
 * (for both, *ret_error says more), -EINVAL for a bad selector, -ENOMEM.
 * Caller frees *ret with fgd_snapshot__free() and puts *ret_meta. The
 * metadata says what the answer is missing of the period: time no slice
 * covers (gaps), files of the history that could not be read, samples
 * lost; on -ENODATA *ret_meta may be set too (else NULL), for the error to
 * carry, so that a period with no data is told from an idle one.
 */
int fgd_query__snapshot(const struct fgd_alwayson_data *a, const struct fg_query_request *q,
			const struct fg_view *view, uint64_t max_bytes, struct fgd_snapshot **ret,
			struct json_object **ret_meta, char *ret_error, size_t error_size);
/* Streams the result (emit.h): 0 while more remains, 1 when done, or a negative errno. */
int fgd_snapshot__emit(struct fgd_snapshot *s, fg_write_fn fn, void *ctx, size_t budget);
struct fgd_snapshot *fgd_snapshot__free(struct fgd_snapshot *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fgd_snapshot *, fgd_snapshot__free);
/* Heap bytes the result holds while it streams: its profile and its renderer. */
size_t fgd_snapshot__bytes(const struct fgd_snapshot *s);

/*
 * The reply of a top query, as a "top" message, for a client of view. Same
 * errors as snapshots; on -ENODATA *ret may be set to the period's metadata
 * for the error to carry (else NULL).
 */
int fgd_query__top(const struct fgd_alwayson_data *a, const struct fg_query_request *q,
		   const struct fg_view *view, struct json_object **ret, char *ret_error,
		   size_t error_size);
