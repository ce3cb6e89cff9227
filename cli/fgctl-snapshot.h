/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * fgctl snapshot's options (cli/fgctl-snapshot.c): parsed from argv into a
 * struct, then checked, before the verb runs.
 */

#include <stdio.h>

#include "fgctl-output.h"
#include "fgctl-pipeline.h"
#include "fgctl-query.h"
#include "fgctl-verb.h"
#include "proto/proto.h"

struct fgctl_ctx;

struct fgctl_snapshot_args {
	struct fgctl_common co;
	struct fg_request req;      /* the snapshot asked of fgd */
	struct fgctl_period period; /* borrowed from argv */
	struct fgctl_draw draw;     /* the graph options: drawn here, unless only --title */
	struct fgctl_output out;    /* where the result goes, once checked */
};

/*
 * Parses argv (argv[0] "snapshot") into *a. FGCTL_EXIT_OK (a->co.help for
 * --help) or FGCTL_EXIT_USAGE, having said why on err. a borrows from argv.
 */
int fgctl_snapshot_parse(const struct fgctl_ctx *ctx, int argc, char **argv,
			 struct fgctl_snapshot_args *a, FILE *err);
/* The period from now, the output settled. FGCTL_EXIT_OK, or the exit code having said why on err. */
int fgctl_snapshot_check(struct fgctl_snapshot_args *a, FILE *err);
void fgctl_snapshot_help(FILE *out);
