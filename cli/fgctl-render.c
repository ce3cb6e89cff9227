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
#include "fgctl-render.h"
#include "fgctl-verb.h"
#include "fgctl.h"
#include "profile/folded.h"

void fgctl_render_help(FILE *out)
{
	fputs("Usage: fgctl render [OPTIONS] [FILE...]\n"
	      "\n"
	      "Draws a flame graph from folded stacks or perf script output, without fgd.\n"
	      "Reads the FILEs, or standard input. Examples:\n"
	      "  fgctl render in.folded -o out.svg\n"
	      "  perf script | fgctl render --from perf -o out.svg\n"
	      "  perf script | fgctl render --from perf --all -f folded > out.folded\n"
	      "\n",
	      out);
	fputs(fgctl_graph_help, out);
}

static const struct option render_options[] = {
	FGCTL_GRAPH_OPTIONS,
	FGCTL_INPUT_OPTIONS,
	/* Here only to say it is diff's. */
	{ "baseline", required_argument, NULL, FGCTL_GRAPH_OPT_BASELINE },
	{},
};

static int render_option(void *args, int c, const char *arg, FILE *err)
{
	struct fgctl_render_args *a = args;

	if (c == FGCTL_GRAPH_OPT_BASELINE) {
		fprintf(err, "fgctl: --baseline is an option of fgctl diff\n");
		return -1;
	}
	return fgctl_graph_option(c, arg, &a->graph, err);
}

int fgctl_render_parse(const struct fgctl_ctx *ctx, int argc, char **argv,
		       struct fgctl_render_args *a, FILE *err)
{
	fgctl_graph_opts_init(&a->graph);
	/* Options may follow the files (fgctl_getopt_reset()). */
	return fgctl_parse_options(ctx, argc, argv, "o:f:qhuk", render_options, render_option, a,
				   &a->co, err);
}

int fgctl_verb_render(const struct fgctl_ctx *ctx, int argc, char **argv)
{
	_cleanup_(fg_folded__freep) struct fg_folded *model = NULL;
	struct fgctl_render_args a;
	int r;

	r = fgctl_render_parse(ctx, argc, argv, &a, stderr);
	if (r != FGCTL_EXIT_OK)
		return r;
	if (a.co.help) {
		fgctl_render_help(stdout);
		return FGCTL_EXIT_OK;
	}
	r = fgctl_graph_opts_check(&a.graph, "render", stderr);
	if (r != FGCTL_EXIT_OK)
		return r;
	model = fg_folded__new();
	if (!model)
		return FGCTL_EXIT_FAILURE;
	if (a.graph.flame.flamechart)
		fg_folded__set_sequence(model);
	r = fgctl_pipeline_read(&a.graph, a.co.operands, (size_t)a.co.n_operands, model);
	if (r != 0)
		return r;
	return fgctl_pipeline_write(&a.graph, &model);
}
