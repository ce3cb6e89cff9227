/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fgctl render: folded stacks or perf script text in, a flame graph or
 * folded stacks out, without fgd (flamegraph.pl and stackcollapse-perf.pl).
 */
#include <getopt.h>
#include <stdio.h>

#include "base/macro.h"
#include "fgctl-client.h"
#include "fgctl-graphopts.h"
#include "fgctl-pipeline.h"
#include "fgctl.h"
#include "profile/folded.h"

static void render_help(void)
{
	printf("Usage: fgctl render [OPTIONS] [FILE...]\n"
	       "\n"
	       "Draws a flame graph from folded stacks or perf script output, without fgd.\n"
	       "Reads the FILEs, or standard input. Examples:\n"
	       "  fgctl render in.folded -o out.svg\n"
	       "  perf script | fgctl render --from perf -o out.svg\n"
	       "  perf script | fgctl render --from perf --all -f folded > out.folded\n"
	       "\n");
	fputs(fgctl_graph_help, stdout);
}

int fgctl_verb_render(const struct fgctl_ctx *ctx, int argc, char **argv)
{
	static const struct option options[] = {
		FGCTL_GRAPH_OPTIONS,
		FGCTL_INPUT_OPTIONS,
		/* Here only to say it is diff's. */
		{ "baseline", required_argument, NULL, FGCTL_GRAPH_OPT_BASELINE },
		{},
	};
	_cleanup_(fg_folded__freep) struct fg_folded *model = NULL;
	struct fgctl_graph_opts opts;
	int c, r;

	fgctl_graph_opts_init(&opts);
	/* 0, not 1: glibc then re-reads the option string, so options may follow the files. */
	optind = 0;
	while ((c = getopt_long(argc, argv, "o:f:qhuk", options, NULL)) >= 0) {
		r = fgctl_graph_option(c, optarg, &opts);
		if (r < 0)
			return FGCTL_EXIT_USAGE;
		if (r > 0)
			continue;
		switch (c) {
		case 'h':
			render_help();
			return FGCTL_EXIT_OK;
		case FGCTL_GRAPH_OPT_BASELINE:
			fprintf(stderr, "fgctl: --baseline is an option of fgctl diff\n");
			return FGCTL_EXIT_USAGE;
		default:
			fprintf(stderr, "Try 'fgctl %s --help'.\n", argv[0]);
			return FGCTL_EXIT_USAGE;
		}
	}
	r = fgctl_graph_opts_check(&opts, "render");
	if (r != FGCTL_EXIT_OK)
		return r;
	model = fg_folded__new();
	if (!model)
		return FGCTL_EXIT_FAILURE;
	if (opts.flame.flamechart)
		fg_folded__set_sequence(model);
	r = fgctl_pipeline_read(&opts, argv + optind, (size_t)(argc - optind), model);
	if (r != 0)
		return r;
	return fgctl_pipeline_write(&opts, &model);
}
