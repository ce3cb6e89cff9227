/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the verbs that query fgd's always-on sampling share (snapshot, top,
 * and diff --baseline): the period and the selectors of a query as
 * getopt_long options (codes from 0x200, and 'p'), their help, and the
 * conversations with fgd. A socket parameter is the path to connect to,
 * borrowed for the call.
 */

#include <getopt.h>
#include <json-c/json.h>
#include <stddef.h>
#include <stdio.h>

#include "fgctl-client.h"
#include "proto/proto.h"

enum {
	FGCTL_OPT_SINCE = 0x200,
	FGCTL_OPT_UNTIL,
	FGCTL_OPT_LAST,
	FGCTL_OPT_COMM,
	FGCTL_OPT_UID,
	FGCTL_OPT_CGROUP,
	FGCTL_OPT_EXE,
};

#define FGCTL_QUERY_OPTIONS                                              \
	{ "last", required_argument, NULL, FGCTL_OPT_LAST },             \
		{ "since", required_argument, NULL, FGCTL_OPT_SINCE },   \
		{ "until", required_argument, NULL, FGCTL_OPT_UNTIL },   \
		{ "pid", required_argument, NULL, 'p' },                 \
		{ "comm", required_argument, NULL, FGCTL_OPT_COMM },     \
		{ "uid", required_argument, NULL, FGCTL_OPT_UID },       \
		{ "cgroup", required_argument, NULL, FGCTL_OPT_CGROUP }, \
	{                                                                \
		"exe", required_argument, NULL, FGCTL_OPT_EXE            \
	}

/* snapshot's and top's: the query options, and --socket and --help. */
#define FGCTL_QUERY_VERB_OPTIONS                                         \
	FGCTL_QUERY_OPTIONS, { "socket", required_argument, NULL, 's' }, \
	{                                                                \
		"help", no_argument, NULL, 'h'                           \
	}

/*
 * Their help text, one line each: the period's options, then the
 * selectors' (push takes the selectors only); and the lines that end
 * snapshot's and top's help.
 */
extern const char fgctl_query_period_help[];
extern const char fgctl_query_selector_help[];
extern const char fgctl_query_help_tail[];

/* The period options as given; borrowed from argv. NULL: not given. */
struct fgctl_period {
	const char *since, *until, *last;
};

/*
 * Applies option c with value arg to q (selectors) or period. Returns 1 if
 * c is one of the options above, 0 if not, -1 for a bad value (said why on
 * err).
 */
int fgctl_query_option(int c, const char *arg, struct fg_query_request *q,
		       struct fgctl_period *period, FILE *err);

/* A time as --since and --until take it (when.h), in Unix ms; says why not on err. 0 or -EINVAL. */
int fgctl_time_arg(const char *arg, int64_t *ret_ms, FILE *err);

/*
 * Turns the period into q's range, relative times from now; last_default
 * when neither --last nor --since was given. 0, or -EINVAL (said why).
 */
int fgctl_query_range(struct fg_query_request *q, const struct fgctl_period *period,
		      const char *last_default, FILE *err);

/*
 * Connects to socket and sends req. Returns 0 with *ret_conn open (the
 * caller closes it with fgctl_disconnect()), or the exit code to use,
 * having said why.
 */
int fgctl_query_send(const char *socket, const struct fg_request *req, struct fgctl_conn *ret_conn);

/*
 * An error reply, printed as "fgctl: LABEL: message" ("fgctl: message" when
 * label is NULL). Returns the exit code for its errno name.
 */
int fgctl_query_error(struct json_object *msg, const char *label);

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
