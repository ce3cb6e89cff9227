/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What fgctl heatmap's sources share (cli/fgctl-heatmap.c): the output
 * formats and the writer of a timed profile in one of them.
 */

#include <regex.h>
#include <stdbool.h>
#include <stdio.h>

#include "fgctl-output.h"
#include "fgctl-query.h"
#include "fgctl-verb.h"
#include "profile/timed.h"
#include "proto/proto.h"
#include "render/heatmap-html.h"

struct fgctl_ctx;

enum fgctl_heatmap_format {
	FGCTL_HEATMAP_HTML,
	FGCTL_HEATMAP_JSON,
	FGCTL_HEATMAP_SVG,
	FGCTL_HEATMAP_TIMED, /* the profile itself, for --from timed later */
};

/* The format an output's extension names: .html, .json, .svg, .timed. 0 or -EINVAL. */
int fgctl_heatmap_format_for_path(const char *path, enum fgctl_heatmap_format *ret);
/* -f's argument; says what is wrong on err. 0 or -EINVAL. */
int fgctl_heatmap_format_arg(const char *arg, enum fgctl_heatmap_format *ret, FILE *err);

/*
 * Writes t (sorted here) to path ("-": stdout) in format to, drawn as opts
 * says, with a one-line summary on stderr unless quiet. Returns fgctl's exit
 * status.
 */
int fgctl_heatmap_write(struct fg_timed *t, const struct fg_heatmap_html_opts *opts,
			enum fgctl_heatmap_format to, const char *path, bool quiet);

/* fgctl heatmap's options, as parsed from its argv (fgctl_heatmap_parse()). */
struct fgctl_heatmap_args {
	struct fgctl_common co;     /* its operands: the files of --from */
	struct fg_request req;      /* a recording now, or (a period given) a snapshot */
	struct fgctl_period period; /* borrowed from argv */
	struct fg_heatmap_html_opts html;
	enum fgctl_heatmap_format to;
	bool to_given;
	const char *from;   /* --from perf|timed: borrowed from argv; NULL: from fgd */
	const char *comm;   /* --comm, filtered here (a recording or --from): borrowed */
	const char *output; /* settled by the check: co.output, default_output or "-" */
	char default_output[FGCTL_DEFAULT_OUTPUT_MAX];
	bool window; /* a period of always-on sampling was given */
	regex_t comm_re;
	bool has_re; /* comm_re is compiled: fgctl_heatmap_args_done() frees it */
};

/*
 * Parses argv (argv[0] "heatmap") into *a. FGCTL_EXIT_OK (a->co.help for
 * --help) or FGCTL_EXIT_USAGE, having said why on err. a borrows from argv.
 */
int fgctl_heatmap_parse(const struct fgctl_ctx *ctx, int argc, char **argv,
			struct fgctl_heatmap_args *a, FILE *err);
/*
 * Checks the combinations, turns a period into a snapshot request and
 * settles the output. FGCTL_EXIT_OK, or the exit code having said why on
 * err. Call fgctl_heatmap_args_done() after it, whatever it returned.
 */
int fgctl_heatmap_check(struct fgctl_heatmap_args *a, FILE *err);
void fgctl_heatmap_args_done(struct fgctl_heatmap_args *a);
void fgctl_heatmap_help(FILE *out);
