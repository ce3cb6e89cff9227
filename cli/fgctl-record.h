/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What fgctl's recording verbs share (cli/fgctl-record.c): the parsers of
 * -p and -t, and the conversation of a recording with fgd, its result's
 * bytes handed to a callback.
 */

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fgctl-client.h"
#include "proto.h"

/* -p's list of pids into req; says what is wrong on stderr. 0 or -EINVAL. */
int fgctl_parse_pids(const char *s, struct fg_record_request *req);
/* -t's duration (30, 0.5, 30s, 5m, 1h) in ms; says what is wrong on stderr. 0 or -EINVAL. */
int fgctl_parse_duration(const char *s, uint64_t *ret_ms);

/* A piece of the result: returns FGCTL_EXIT_OK, or an exit code after saying what is wrong. */
typedef int (*fgctl_record_data_fn)(void *ctx, const char *data, size_t len);

/*
 * Runs the recording req (sent already) on conn: progress on stderr unless
 * quiet, Ctrl-C stops it (twice abandons it), the result's bytes go to
 * data_fn, its metadata to *ret_meta (caller puts it; NULL if none came) and
 * why it ended to reason. Returns fgctl's exit status.
 */
int fgctl_record_conversation(struct fgctl_conn *conn, const struct fg_request *req,
			      fgctl_record_data_fn data_fn, void *data_ctx,
			      struct json_object **ret_meta, char reason[32], bool quiet);
