/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * fgctl's verbs: one function each, with one signature, in a file of its
 * own (cli/fgctl-VERB.c); fgctl.c holds main, the global options and the
 * table that lists the verbs with their one-line help. Each verb has one
 * shape (fgctl-verb.h): it parses argv into a struct of its options
 * (fgctl_VERB_parse(), declared in fgctl-VERB.h), checks them, then runs.
 */

/* What main settles before a verb runs. */
struct fgctl_ctx {
	/* fgd's: --socket, else $FGD_SOCKET, else the default; borrowed. A verb's -s overrides it. */
	const char *socket;
};

/*
 * Runs a verb: argv[0] is its name, the rest its own arguments (ctx is
 * borrowed for the call). Returns fgctl's exit status (fgctl-client.h).
 */
typedef int (*fgctl_verb_fn)(const struct fgctl_ctx *ctx, int argc, char **argv);

int fgctl_verb_record(const struct fgctl_ctx *ctx, int argc, char **argv);
int fgctl_verb_snapshot(const struct fgctl_ctx *ctx, int argc, char **argv);
int fgctl_verb_top(const struct fgctl_ctx *ctx, int argc, char **argv);
int fgctl_verb_status(const struct fgctl_ctx *ctx, int argc, char **argv);
int fgctl_verb_render(const struct fgctl_ctx *ctx, int argc, char **argv);
int fgctl_verb_diff(const struct fgctl_ctx *ctx, int argc, char **argv);
int fgctl_verb_heatmap(const struct fgctl_ctx *ctx, int argc, char **argv);
int fgctl_verb_push(const struct fgctl_ctx *ctx, int argc, char **argv);
