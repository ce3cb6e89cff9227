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
#include <stdio.h>

#include "fgctl-client.h"
#include "fgctl-output.h"
#include "fgctl-pipeline.h"
#include "fgctl-verb.h"
#include "proto/proto.h"

struct fgctl_ctx;

/* -p's list of pids into req; says what is wrong on err. 0 or -EINVAL. */
int fgctl_parse_pids(const char *s, struct fg_record_request *req, FILE *err);
/* -t's duration (30, 0.5, 30s, 5m, 1h) in ms; says what is wrong on err. 0 or -EINVAL. */
int fgctl_parse_duration(const char *s, uint64_t *ret_ms, FILE *err);

/* getopt_long codes of the options below, from 0x300 (fgctl-query.h's start at 0x200). */
enum {
	FGCTL_REC_OPT_CALL_GRAPH = 0x300,
	FGCTL_REC_OPT_OFF_CPU,
	FGCTL_REC_OPT_WALL,
	FGCTL_REC_OPT_MIN_BLOCK,
	FGCTL_REC_OPT_PID_FRAMES,
	FGCTL_REC_OPT_TID_FRAMES,
};

/* What a recording records: record's and heatmap's ('p', 'a', 't' and 'F' as short options). */
#define FGCTL_RECORD_OPTIONS                                                         \
	{ "pid", required_argument, NULL, 'p' }, { "all", no_argument, NULL, 'a' },  \
		{ "time", required_argument, NULL, 't' },                            \
		{ "frequency", required_argument, NULL, 'F' },                       \
		{ "call-graph", required_argument, NULL, FGCTL_REC_OPT_CALL_GRAPH }, \
		{ "off-cpu", no_argument, NULL, FGCTL_REC_OPT_OFF_CPU },             \
		{ "wall", no_argument, NULL, FGCTL_REC_OPT_WALL },                   \
		{ "min-block", required_argument, NULL, FGCTL_REC_OPT_MIN_BLOCK },   \
		{ "pid-frames", no_argument, NULL, FGCTL_REC_OPT_PID_FRAMES },       \
	{                                                                            \
		"tid-frames", no_argument, NULL, FGCTL_REC_OPT_TID_FRAMES            \
	}

/*
 * Applies option c (of the table above) with value arg to req. Returns 1 if
 * c is one of them, 0 if not, -1 for a bad value (said why on err).
 */
int fgctl_record_option(int c, const char *arg, struct fg_record_request *req, FILE *err);

/* A piece of the result: returns FGCTL_EXIT_OK, or an exit code after saying what is wrong. */
typedef int (*fgctl_record_data_fn)(void *ctx, const char *data, size_t len);

/*
 * A command fgctl launched (record -- CMD): its process waits to exec until
 * the recording runs, so none of its run is missed.
 */
struct fgctl_launched {
	const char *name; /* borrowed: argv[0] */
	pid_t pid;
	int release_fd;   /* owned: written to once the recording runs; -1 after */
	int exec_fd;      /* owned: the child's errno if its exec failed, EOF once it exec'd */
	bool exec_failed; /* said, and the recording abandoned: nothing is written */
};

/*
 * Runs the recording req (sent already) on conn: progress on stderr unless
 * quiet, Ctrl-C stops it (twice abandons it), the result's bytes go to
 * data_fn, its metadata to *ret_meta (caller puts it; NULL if none came) and
 * why it ended to reason. cmd (else NULL) is released once fgd says the
 * recording started; if it cannot run, the recording is abandoned and the
 * exit status is the shell's for it (126 or 127). Returns fgctl's exit
 * status.
 */
int fgctl_record_conversation(struct fgctl_conn *conn, const struct fg_request *req,
			      fgctl_record_data_fn data_fn, void *data_ctx,
			      struct json_object **ret_meta, char reason[32], bool quiet,
			      struct fgctl_launched *cmd);

/* fgctl record's options, as parsed from its argv (fgctl_record_parse()). */
struct fgctl_record_args {
	struct fgctl_common co;
	struct fg_request req;   /* the recording asked of fgd */
	struct fgctl_draw draw;  /* the graph options: drawn here, unless only --title */
	const char *meta_path;   /* --metadata FILE: borrowed from argv; NULL: none */
	char **command;          /* -- CMD ARGS: borrowed from argv; NULL: none */
	struct fgctl_output out; /* where the result goes, once checked */
};

/*
 * Parses argv (argv[0] "record") into *a, fgctl_verb_fn's ctx giving the
 * socket. Returns FGCTL_EXIT_OK (a->co.help for --help) or
 * FGCTL_EXIT_USAGE, having said why on err. a borrows from argv.
 */
int fgctl_record_parse(const struct fgctl_ctx *ctx, int argc, char **argv,
		       struct fgctl_record_args *a, FILE *err);
/*
 * Checks the options' combinations and settles the output (path and
 * format: fgctl_output_target()). FGCTL_EXIT_OK, or the exit code having
 * said why on err.
 */
int fgctl_record_check(struct fgctl_record_args *a, FILE *err);
/* record's --help. */
void fgctl_record_help(FILE *out);
