/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The verbs that query fgd's always-on sampling: snapshot and top. socket is
 * the path to connect to, borrowed for the call.
 */

#include <getopt.h>
#include <json-c/json.h>
#include <stddef.h>

#include "proto.h"

int fgctl_verb_snapshot(int argc, char **argv, const char *socket);
int fgctl_verb_top(int argc, char **argv, const char *socket);

/*
 * What they share with fgctl diff --baseline: the period and the selectors
 * of a query, as getopt_long options (codes above 0x200, and 'p').
 */
enum {
	FGCTL_OPT_SINCE = 0x200,
	FGCTL_OPT_UNTIL,
	FGCTL_OPT_LAST,
	FGCTL_OPT_COMM,
	FGCTL_OPT_UID,
	FGCTL_OPT_CGROUP,
	FGCTL_OPT_EXE,
};

#define FGCTL_QUERY_OPTIONS                                                \
	{ "last", required_argument, NULL, FGCTL_OPT_LAST },               \
	{ "since", required_argument, NULL, FGCTL_OPT_SINCE },             \
	{ "until", required_argument, NULL, FGCTL_OPT_UNTIL },             \
	{ "pid", required_argument, NULL, 'p' },                           \
	{ "comm", required_argument, NULL, FGCTL_OPT_COMM },               \
	{ "uid", required_argument, NULL, FGCTL_OPT_UID },                 \
	{ "cgroup", required_argument, NULL, FGCTL_OPT_CGROUP },           \
	{ "exe", required_argument, NULL, FGCTL_OPT_EXE }

/* Their help text, one line each. */
extern const char fgctl_query_help[];

/* The period options as given; borrowed from argv. NULL: not given. */
struct fgctl_period {
	const char *since, *until, *last;
};

/*
 * Applies option c with value arg to q (selectors) or period. Returns 1 if
 * c is one of the options above, 0 if not, -1 for a bad value (said why on
 * stderr).
 */
int fgctl_query_option(int c, const char *arg, struct fg_query_request *q,
		       struct fgctl_period *period);

/*
 * Turns the period into q's range, relative times from now; last_default
 * when neither --last nor --since was given. 0, or -EINVAL (said why).
 */
int fgctl_query_range(struct fg_query_request *q, const struct fgctl_period *period,
		      const char *last_default);

/*
 * Where a snapshot's result goes, as it arrives. open is called once the
 * daemon accepted the query (so a query without data creates no file),
 * write with each piece of the result. Both return FGCTL_EXIT_OK or an exit
 * code, having said why.
 */
struct fgctl_sink {
	int (*open)(void *ctx);
	int (*write)(void *ctx, const char *data, size_t len);
};

/*
 * Sends a snapshot request and hands its result to sink. An error reply is
 * printed as "fgctl: LABEL: message" ("fgctl: message" when label is NULL).
 * Stores the result's metadata in *ret_meta (the caller puts it; NULL if
 * the daemon sent none). Returns FGCTL_EXIT_OK, or the exit code to use.
 */
int fgctl_query_snapshot(const char *socket, const struct fg_request *req, const char *label,
			 const struct fgctl_sink *sink, void *ctx, struct json_object **ret_meta);
