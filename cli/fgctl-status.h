/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* fgctl status's options (cli/fgctl-status.c): the common ones only (--json, -s, --help). */

#include <stdio.h>

#include "fgctl-verb.h"

struct fgctl_ctx;

/*
 * Parses argv (argv[0] "status") into *co. FGCTL_EXIT_OK (co->help for
 * --help) or FGCTL_EXIT_USAGE, having said why on err. Operands are
 * ignored, as they always were.
 */
int fgctl_status_parse(const struct fgctl_ctx *ctx, int argc, char **argv, struct fgctl_common *co,
		       FILE *err);
void fgctl_status_help(FILE *out);
