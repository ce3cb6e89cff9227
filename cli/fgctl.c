/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fgctl: the command line for fgd. main, the global options and the table
 * of verbs; each verb is one function in a file of its own (fgctl.h),
 * fgctl-client.c speaks the protocol and fgctl-display.c shows the replies.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "config.h"
#include "fgctl-client.h"
#include "fgctl.h"

static const char *arg_socket;

static const char *socket_path(void)
{
	const char *env = getenv("FGD_SOCKET");

	if (arg_socket)
		return arg_socket;
	return env && *env ? env : FG_DEFAULT_SOCKET;
}

static int verb_help(const struct fgctl_ctx *ctx, int argc, char **argv);

static int verb_version(const struct fgctl_ctx *ctx, int argc, char **argv)
{
	printf("fgctl %s\n", FG_VERSION);
	return FGCTL_EXIT_OK;
}

static const struct verb {
	const char *name;
	fgctl_verb_fn fn;
	const char *summary;
} verbs[] = {
	{ "record", fgctl_verb_record,
	  "sample processes or the whole machine; write a flame graph" },
	{ "snapshot", fgctl_verb_snapshot,
	  "the last minutes of the whole machine, from memory, at once" },
	{ "top", fgctl_verb_top, "processes by CPU share, each with its hottest function" },
	{ "status", fgctl_verb_status, "show what fgd is doing, with every loss counter" },
	{ "render", fgctl_verb_render,
	  "draw a flame graph from folded stacks or perf script output" },
	{ "diff", fgctl_verb_diff,
	  "draw a differential flame graph of two profiles or two periods" },
	{ "heatmap", fgctl_verb_heatmap,
	  "subsecond-offset heat map of a profile, and flame graphs of its ranges" },
	{ "push", fgctl_verb_push, "send always-on profiles to a Pyroscope-compatible server" },
	{ "help", verb_help, "show this help" },
	{ "version", verb_version, "show the version" },
};

static int verb_help(const struct fgctl_ctx *ctx, int argc, char **argv)
{
	printf("Usage: fgctl [--socket PATH] COMMAND [OPTIONS]\n\n"
	       "Control fgd, the sampling profiler daemon.\n\nCommands:\n");
	for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
		printf("  %-8s %s\n", verbs[i].name, verbs[i].summary);
	printf("\nExamples:\n"
	       "  fgctl record -p 1234 -t 30 -o x.svg          30 s of pid 1234 as a flame graph\n"
	       "  fgctl record -a -t 10 -F 999 -o all.folded   the whole machine, folded stacks\n"
	       "  fgctl record -p 1234,5678 -t 5 -o -          folded stacks to stdout\n"
	       "  fgctl snapshot --last 5m -o now.svg         what the machine did, from memory\n"
	       "  fgctl top --last 60s -n 10\n"
	       "  fgctl status\n"
	       "  fgctl render in.folded -o out.svg            offline, no daemon needed\n"
	       "  perf script | fgctl render --from perf -o out.svg\n"
	       "  fgctl diff before.folded after.folded -o diff.svg\n"
	       "\n'fgctl COMMAND --help' describes each command; fgctl(1) has the details.\n"
	       "The socket is --socket, else $FGD_SOCKET, else %s.\n",
	       FG_DEFAULT_SOCKET);
	return FGCTL_EXIT_OK;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{},
	};
	struct fgctl_ctx ctx = {};
	int c;

	/* Global options stop at the verb; the verb parses the rest. */
	while ((c = getopt_long(argc, argv, "+s:h", options, NULL)) >= 0) {
		switch (c) {
		case 's':
			arg_socket = optarg;
			break;
		case 'h':
			return verb_help(&ctx, 0, NULL);
		case 'V':
			return verb_version(&ctx, 0, NULL);
		default:
			fprintf(stderr, "Try 'fgctl --help'.\n");
			return FGCTL_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		verb_help(&ctx, 0, NULL);
		return FGCTL_EXIT_USAGE;
	}
	ctx.socket = socket_path();
	for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
		if (strcmp(argv[optind], verbs[i].name) == 0)
			return verbs[i].fn(&ctx, argc - optind, argv + optind);
	fprintf(stderr, "fgctl: unknown command '%s'. Try 'fgctl --help'.\n", argv[optind]);
	return FGCTL_EXIT_USAGE;
}
