/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The shape every fgctl verb has: parse argv into a struct of its options,
 * check them, run. This is what the parsers share: the common options
 * (-s, -o, -f, -q, --json, --help), parsed once into struct fgctl_common;
 * the getopt_long loop that hands each option to the verb's own parser,
 * then to the common one; and the lines that end the verbs' help. Parsers
 * and checks write what is wrong to the FILE the caller gives (fgctl's
 * stderr; a memory stream in the unit tests), and return fgctl's exit
 * status for it.
 */

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "proto/proto.h"

struct fgctl_ctx;

/* getopt_long code of --json, where it has no short option. */
#define FGCTL_OPT_JSON 'j'

/* The options several verbs take, with the same meaning in each. */
struct fgctl_common {
	const char *verb;      /* borrowed: its name, for "Try 'fgctl VERB --help'." */
	const char *socket;    /* -s: borrowed from argv; else the fgctl_ctx's */
	const char *output;    /* -o: borrowed from argv; NULL when not given */
	enum fg_format format; /* -f, where it names a format of fgd's (record, snapshot) */
	bool format_given;
	bool quiet;      /* -q */
	bool json;       /* --json */
	bool help;       /* -h: parsing stopped there; the verb prints its help, exits 0 */
	char **operands; /* borrowed from argv: what follows the options */
	int n_operands;
};

/*
 * A verb's own options: applies option c with value arg to args. Returns 1
 * if c is the verb's, 0 if not (then it is a common option, or unknown),
 * -1 for a bad value, having said why on err.
 */
typedef int (*fgctl_option_fn)(void *args, int c, const char *arg, FILE *err);

/*
 * Runs getopt_long over argv (argv[0] the verb's name) with the table
 * options and the short options shorts: each option goes to option (NULL:
 * none of its own), then to the common ones. Stops at the first bad option
 * or at --help. co starts with ctx's socket and the verb's name; its
 * operands are what follows the options. Returns FGCTL_EXIT_OK (with
 * co->help set for --help) or FGCTL_EXIT_USAGE, having said why on err.
 * getopt_long's own messages (an unknown option, a missing value) go to
 * stderr as glibc writes them.
 */
int fgctl_parse_options(const struct fgctl_ctx *ctx, int argc, char **argv, const char *shorts,
			const struct option *options, fgctl_option_fn option, void *args,
			struct fgctl_common *co, FILE *err);

/*
 * Restarts getopt_long at argv[1] with all its state reset (optind 0:
 * glibc re-reads the option string too), so that options may follow
 * operands and a process may parse more than one argv.
 */
void fgctl_getopt_reset(void);

/* FGCTL_EXIT_OK, or FGCTL_EXIT_USAGE when co has operands ("unexpected argument", on err). */
int fgctl_no_operands(const struct fgctl_common *co, FILE *err);

/* FGCTL_EXIT_OK, or FGCTL_EXIT_USAGE when --json would share stdout with the profile. */
int fgctl_check_json_output(const struct fgctl_common *co, const char *output, FILE *err);

/* The lines that end the verbs' help: -s with its default, and without it. */
extern const char fgctl_help_socket[];
extern const char fgctl_help_socket_short[];
