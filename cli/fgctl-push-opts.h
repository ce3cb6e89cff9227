/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * fgctl push's options (cli/fgctl-push-opts.c): the command line, with the
 * words of a --config file in front of it, parsed into struct
 * fgctl_push_args, then checked, the token and basic auth files read. The
 * pushing itself is fgctl-push.c's.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fgctl-http.h"
#include "fgctl-query.h"
#include "fgctl-verb.h"
#include "proto/ingest.h"
#include "proto/proto.h"

struct fgctl_ctx;

/* What a push sends, where and when. */
struct fgctl_push_opts {
	const char *url;         /* borrowed from argv */
	const char *name;        /* the application template; borrowed */
	const char *cursor_path; /* borrowed; NULL: the cursor lives in memory */
	struct fg_ingest_label labels[FG_INGEST_MAX_LABELS];
	size_t n_labels;
	enum fg_ingest_format format;
	struct fg_ingest_plan plan;
	uint32_t retries;
	bool once, quiet;
};

struct fgctl_push_args {
	struct fgctl_common co; /* -s, -q, --help */
	struct fgctl_push_opts o;
	struct fg_request query;     /* the snapshot request: selectors, folded */
	struct fgctl_period period;  /* borrowed from argv: --last only */
	struct fgctl_http_opts http; /* its strings borrowed from argv, or token and basic */
	const char *token_path, *basic_path; /* borrowed from argv; NULL: not given */
	char *token, *basic; /* owned: the files' secrets, read by fgctl_push_check() */
};

/*
 * Parses argv (argv[0] "push", the option file's words already in it:
 * fgctl_push_with_config()) into *a. FGCTL_EXIT_OK (a->co.help for --help)
 * or FGCTL_EXIT_USAGE, having said why on err. a borrows from argv.
 */
int fgctl_push_parse(const struct fgctl_ctx *ctx, int argc, char **argv, struct fgctl_push_args *a,
		     FILE *err);
/*
 * Checks the combinations and reads the secrets' files: FGCTL_EXIT_OK, or
 * the exit code having said why on err (FGCTL_EXIT_INPUT for a file that
 * cannot be read). fgctl_push_args_done() then wipes and frees the secrets.
 */
int fgctl_push_check(struct fgctl_push_args *a, FILE *err);
void fgctl_push_args_done(struct fgctl_push_args *a);

/*
 * argv with the words of the option file given with --config in front of
 * its options (fgctl-optfile.h): *ret_argv is argv itself without one, else
 * a new array that borrows argv's strings (caller frees it and
 * *ret_words, the file's, with fgctl_optfile_free()). An exit code.
 */
int fgctl_push_with_config(int argc, char **argv, int *ret_argc, char ***ret_argv,
			   char ***ret_words);
void fgctl_push_help(FILE *out);
