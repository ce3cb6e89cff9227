/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* fgctl render's options (cli/fgctl-render.c): the graph options, then the files to read. */

#include <stdio.h>

#include "fgctl-graphopts.h"
#include "fgctl-verb.h"

struct fgctl_ctx;

struct fgctl_render_args {
	struct fgctl_common co; /* its operands: the files to read (none: stdin) */
	struct fgctl_graph_opts graph;
};

/*
 * Parses argv (argv[0] "render") into *a. FGCTL_EXIT_OK (a->co.help for
 * --help) or FGCTL_EXIT_USAGE, having said why on err. a borrows from argv.
 * The checks are fgctl_graph_opts_check()'s.
 */
int fgctl_render_parse(const struct fgctl_ctx *ctx, int argc, char **argv,
		       struct fgctl_render_args *a, FILE *err);
void fgctl_render_help(FILE *out);
