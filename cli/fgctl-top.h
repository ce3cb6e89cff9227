/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* fgctl top's options (cli/fgctl-top.c), parsed from argv into a struct. */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fgctl-query.h"
#include "fgctl-verb.h"
#include "proto/proto.h"

struct fgctl_ctx;

struct fgctl_top_args {
	struct fgctl_common co;
	struct fg_request req;      /* the top query; its range is set at each refresh */
	struct fgctl_period period; /* borrowed from argv */
	uint32_t interval;          /* -i: seconds between refreshes */
	bool watch;                 /* -w */
};

/*
 * Parses argv (argv[0] "top") into *a. FGCTL_EXIT_OK (a->co.help for
 * --help) or FGCTL_EXIT_USAGE, having said why on err. a borrows from argv.
 */
int fgctl_top_parse(const struct fgctl_ctx *ctx, int argc, char **argv, struct fgctl_top_args *a,
		    FILE *err);
void fgctl_top_help(FILE *out);
