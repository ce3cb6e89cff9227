/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* How fgctl shows the daemon's replies to a person. */

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "proto/meta.h"
#include "proto/status.h"

/* The status reply, decoded (common/proto/status.h), as an aligned summary. */
void fgctl_show_status(FILE *f, const struct fg_status *status);

/*
 * The one-line progress of a running recording, redrawn in place on a
 * terminal. duration_ms 0: until stopped.
 */
void fgctl_show_progress(FILE *f, const char *target, uint64_t duration_ms, uint64_t elapsed_ms,
			 uint64_t samples, uint64_t lost);
/* Ends the progress line, if one is showing. */
void fgctl_end_progress(FILE *f);

/*
 * The summary and warnings after a recording: what was written, how many
 * samples, and anything lost, dropped, unreadable or exited.
 */
void fgctl_show_summary(FILE *f, const char *output, struct json_object *meta, bool quiet);

/*
 * An always-on answer's metadata (meta, borrowed; NULL: none) decoded into
 * *ret, once for all that is shown of it; the caller releases *ret with
 * fg_snapshot_meta_done() and its strings point into meta. No metadata
 * reads as all zero; metadata that does not decode is said on f and reads
 * as all zero too. Returns 0, or the decoder's negative errno, already said.
 */
int fgctl_snapshot_meta(FILE *f, struct json_object *meta, struct fg_snapshot_meta *ret);

/*
 * The warning (kept by -q) that kernel frames were collapsed into [kernel] for this user,
 * when a reply's metadata says so (kernel_hidden): after a recording, a
 * snapshot, a top list or a diff of snapshots.
 */
void fgctl_note_kernel_hidden(FILE *f, bool kernel_hidden);

/*
 * The warnings (kept by -q) that an always-on answer lacks part of its
 * period, when its metadata's missing part says so (m, borrowed): time no
 * slice covers (gaps), slices of the history that could not be read and
 * why, samples fgd lost. label (may be NULL) says which answer ("baseline").
 */
void fgctl_note_missing(FILE *f, const char *label, const struct fg_meta_missing *m);
/*
 * The note for a query whose range cut slices of always-on data that kept
 * no times: they counted whole (the metadata's untimed_slices).
 */
void fgctl_note_untimed(FILE *f, uint64_t untimed_slices);

/*
 * Local time of ms (Unix milliseconds) into buf: "HH:MM:SS", with ".fff"
 * when it is not on a whole second, and the date first if with_date.
 * "?" if it cannot be said.
 */
void fgctl_format_time(char *buf, size_t size, int64_t ms, bool with_date);

/* A JSON member as an integer, or 0. */
int64_t fgctl_get_int(struct json_object *obj, const char *key);
/* A JSON member as a string, or "". Borrowed from obj. */
const char *fgctl_get_str(struct json_object *obj, const char *key);
