/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * fgctl diff's options (cli/fgctl-diff.c): the graph options and two
 * files, or with --baseline two periods of fgd's always-on sampling.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "fgctl-graphopts.h"
#include "fgctl-query.h"
#include "fgctl-verb.h"
#include "proto/proto.h"

struct fgctl_ctx;

struct fgctl_diff_args {
	struct fgctl_common co;
	struct fgctl_graph_opts graph;
	/* --baseline: both profiles come from fgd's always-on sampling. */
	bool from_fgd;        /* argv spells --baseline out: -p is then the after query's pid */
	const char *baseline; /* borrowed from argv: the baseline's query options; NULL: files */
	struct fg_query_request after; /* the after query's selectors */
	struct fgctl_period after_period;
	const char *socket; /* borrowed: co.socket */
	char **inputs;      /* borrowed from argv: co.operands */
	size_t n_inputs;
};

/*
 * Parses argv (argv[0] "diff") into *a. FGCTL_EXIT_OK (a->co.help for
 * --help) or FGCTL_EXIT_USAGE, having said why on err. a borrows from argv.
 */
int fgctl_diff_parse(const struct fgctl_ctx *ctx, int argc, char **argv, struct fgctl_diff_args *a,
		     FILE *err);
/* The graph options' checks (fgctl_graph_opts_check()), and no flame chart. */
int fgctl_diff_check(struct fgctl_diff_args *a, FILE *err);
void fgctl_diff_help(FILE *out);
