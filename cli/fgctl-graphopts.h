/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The graph options: what fgctl render and diff share about the output, the
 * graph, the filters and how input files are read, with the names of
 * flamegraph.pl, stackcollapse-perf.pl and difffolded.pl. getopt_long
 * tables (as macros, to be joined with a verb's own options), their parser,
 * the checks of the output once all are read, and their help text. The
 * pipeline that applies them is fgctl-pipeline.h.
 */

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "fgctl-output.h"
#include "profile/perfscript.h"
#include "profile/transform.h"
#include "proto/proto.h"
#include "render/flame.h"

enum fgctl_input_format { FGCTL_FROM_FOLDED, FGCTL_FROM_PERF };

/* The most CPUs a --cpu list of render may name. */
#define FGCTL_MAX_CPUS 4096

struct fgctl_graph_opts {
	struct fg_flame_opts flame;         /* strings borrowed from argv */
	struct fg_transform_opts transform; /* strings borrowed from argv */
	struct fg_perfscript_opts perf;     /* strings borrowed from argv */
	enum fgctl_input_format from;
	enum fg_format to; /* svg unless -f or -o's extension says otherwise */
	bool to_given;
	bool strict, quiet;
	bool normalize;     /* diff: scale the before profile to the after total (the default) */
	const char *output; /* borrowed from argv, or default_output; "-" is stdout */
	char default_output[FGCTL_DEFAULT_OUTPUT_MAX]; /* without -o on a terminal */
	const char *cp_file;   /* borrowed from argv (or static: "palette.map"); NULL unless --cp */
	bool count_name_given; /* --countname: else perf script input names its counts */
	bool palette_given;    /* --colors: else the graph's kind picks the palette */
	int look_option;       /* the first option given that only changes the drawing, or 0 */
	int cpus[FGCTL_MAX_CPUS]; /* --cpu's list, which perf.cpus points into */
	char perf_count_name[64]; /* what perf script input's counts are, when periods ("ns") */
};

/* getopt_long codes of the long options, from 0x100 (fgctl-query.h's start at 0x200). */
enum {
	FGCTL_GRAPH_OPT_TITLE = 0x100,
	FGCTL_GRAPH_OPT_SUBTITLE,
	FGCTL_GRAPH_OPT_WIDTH,
	FGCTL_GRAPH_OPT_HEIGHT,
	FGCTL_GRAPH_OPT_FONTTYPE,
	FGCTL_GRAPH_OPT_FONTSIZE,
	FGCTL_GRAPH_OPT_FONTWIDTH,
	FGCTL_GRAPH_OPT_MINWIDTH,
	FGCTL_GRAPH_OPT_COUNTNAME,
	FGCTL_GRAPH_OPT_NAMETYPE,
	FGCTL_GRAPH_OPT_COLORS,
	FGCTL_GRAPH_OPT_BGCOLORS,
	FGCTL_GRAPH_OPT_HASH,
	FGCTL_GRAPH_OPT_RANDOM,
	FGCTL_GRAPH_OPT_CP,
	FGCTL_GRAPH_OPT_CP_FILE,
	FGCTL_GRAPH_OPT_REVERSE,
	FGCTL_GRAPH_OPT_INVERTED,
	FGCTL_GRAPH_OPT_FLAMECHART,
	FGCTL_GRAPH_OPT_NEGATE,
	FGCTL_GRAPH_OPT_NOTES,
	FGCTL_GRAPH_OPT_TOTAL,
	FGCTL_GRAPH_OPT_FROM,
	FGCTL_GRAPH_OPT_STRICT,
	FGCTL_GRAPH_OPT_INCLUDE,
	FGCTL_GRAPH_OPT_EXCLUDE,
	FGCTL_GRAPH_OPT_IGNORE_CASE,
	FGCTL_GRAPH_OPT_FOCUS,
	FGCTL_GRAPH_OPT_COLLAPSE_RECURSION,
	FGCTL_GRAPH_OPT_STACKCOLLAPSE_NAMES,
	FGCTL_GRAPH_OPT_NO_IDLE,
	FGCTL_GRAPH_OPT_PID,
	FGCTL_GRAPH_OPT_TID,
	FGCTL_GRAPH_OPT_KERNEL,
	FGCTL_GRAPH_OPT_JIT,
	FGCTL_GRAPH_OPT_ALL,
	FGCTL_GRAPH_OPT_ADDRS,
	FGCTL_GRAPH_OPT_NO_INLINE,
	FGCTL_GRAPH_OPT_EVENT_FILTER,
	FGCTL_GRAPH_OPT_COUNT_SAMPLES,
	FGCTL_GRAPH_OPT_NO_NORMALIZE,
	FGCTL_GRAPH_OPT_CPU,
	/* diff's; the graph parser leaves it to the verb */
	FGCTL_GRAPH_OPT_BASELINE,
};

/*
 * How a graph is drawn and what of the profile: what record and snapshot
 * take too, drawing the graph here from fgd's folded stacks (fgctl(1)).
 */
#define FGCTL_DRAW_OPTIONS                                                                         \
	{ "title", required_argument, NULL, FGCTL_GRAPH_OPT_TITLE },                               \
		{ "subtitle", required_argument, NULL, FGCTL_GRAPH_OPT_SUBTITLE },                 \
		{ "width", required_argument, NULL, FGCTL_GRAPH_OPT_WIDTH },                       \
		{ "height", required_argument, NULL, FGCTL_GRAPH_OPT_HEIGHT },                     \
		{ "fonttype", required_argument, NULL, FGCTL_GRAPH_OPT_FONTTYPE },                 \
		{ "fontsize", required_argument, NULL, FGCTL_GRAPH_OPT_FONTSIZE },                 \
		{ "fontwidth", required_argument, NULL, FGCTL_GRAPH_OPT_FONTWIDTH },               \
		{ "minwidth", required_argument, NULL, FGCTL_GRAPH_OPT_MINWIDTH },                 \
		{ "countname", required_argument, NULL, FGCTL_GRAPH_OPT_COUNTNAME },               \
		{ "nametype", required_argument, NULL, FGCTL_GRAPH_OPT_NAMETYPE },                 \
		{ "colors", required_argument, NULL, FGCTL_GRAPH_OPT_COLORS },                     \
		{ "colours", required_argument, NULL, FGCTL_GRAPH_OPT_COLORS },                    \
		{ "bgcolors", required_argument, NULL, FGCTL_GRAPH_OPT_BGCOLORS },                 \
		{ "hash", no_argument, NULL, FGCTL_GRAPH_OPT_HASH },                               \
		{ "random", no_argument, NULL, FGCTL_GRAPH_OPT_RANDOM },                           \
		{ "cp", no_argument, NULL, FGCTL_GRAPH_OPT_CP },                                   \
		{ "cp-file", required_argument, NULL, FGCTL_GRAPH_OPT_CP_FILE },                   \
		{ "reverse", no_argument, NULL, FGCTL_GRAPH_OPT_REVERSE },                         \
		{ "inverted", no_argument, NULL, FGCTL_GRAPH_OPT_INVERTED },                       \
		{ "flamechart", no_argument, NULL, FGCTL_GRAPH_OPT_FLAMECHART },                   \
		{ "notes", required_argument, NULL, FGCTL_GRAPH_OPT_NOTES },                       \
		{ "total", required_argument, NULL, FGCTL_GRAPH_OPT_TOTAL },                       \
		{ "include", required_argument, NULL, FGCTL_GRAPH_OPT_INCLUDE },                   \
		{ "exclude", required_argument, NULL, FGCTL_GRAPH_OPT_EXCLUDE },                   \
		{ "ignore-case", no_argument, NULL, FGCTL_GRAPH_OPT_IGNORE_CASE },                 \
		{ "focus", required_argument, NULL, FGCTL_GRAPH_OPT_FOCUS },                       \
		{ "collapse-recursion", no_argument, NULL, FGCTL_GRAPH_OPT_COLLAPSE_RECURSION },   \
		{ "stackcollapse-names", no_argument, NULL, FGCTL_GRAPH_OPT_STACKCOLLAPSE_NAMES }, \
	{                                                                                          \
		"no-idle", no_argument, NULL, FGCTL_GRAPH_OPT_NO_IDLE                              \
	}

/* Output, graph and filters: every mode of render and diff ('h' is the verb's to answer). */
#define FGCTL_GRAPH_OPTIONS                                                                     \
	{ "output", required_argument, NULL, 'o' }, { "format", required_argument, NULL, 'f' }, \
		{ "quiet", no_argument, NULL, 'q' }, { "help", no_argument, NULL, 'h' },        \
		FGCTL_DRAW_OPTIONS, { "negate", no_argument, NULL, FGCTL_GRAPH_OPT_NEGATE },    \
		{ "user-only", no_argument, NULL, 'u' },                                        \
		{ "kernel-only", no_argument, NULL, 'k' },                                      \
		{ "normalize", no_argument, NULL, 'n' },                                        \
	{                                                                                       \
		"no-normalize", no_argument, NULL, FGCTL_GRAPH_OPT_NO_NORMALIZE                 \
	}

/* How input files are read: not for diff --baseline, whose profiles come from fgd. */
#define FGCTL_INPUT_OPTIONS                                                                \
	{ "from", required_argument, NULL, FGCTL_GRAPH_OPT_FROM },                         \
		{ "strict", no_argument, NULL, FGCTL_GRAPH_OPT_STRICT },                   \
		{ "pid", no_argument, NULL, FGCTL_GRAPH_OPT_PID },                         \
		{ "tid", no_argument, NULL, FGCTL_GRAPH_OPT_TID },                         \
		{ "kernel", no_argument, NULL, FGCTL_GRAPH_OPT_KERNEL },                   \
		{ "jit", no_argument, NULL, FGCTL_GRAPH_OPT_JIT },                         \
		{ "all", no_argument, NULL, FGCTL_GRAPH_OPT_ALL },                         \
		{ "addrs", no_argument, NULL, FGCTL_GRAPH_OPT_ADDRS },                     \
		{ "no-inline", no_argument, NULL, FGCTL_GRAPH_OPT_NO_INLINE },             \
		{ "event-filter", required_argument, NULL, FGCTL_GRAPH_OPT_EVENT_FILTER }, \
		{ "cpu", required_argument, NULL, FGCTL_GRAPH_OPT_CPU },                   \
	{                                                                                  \
		"count-samples", no_argument, NULL, FGCTL_GRAPH_OPT_COUNT_SAMPLES          \
	}

/* The defaults: an SVG, flamegraph.pl's look, no filters, diff normalized; no output yet. */
void fgctl_graph_opts_init(struct fgctl_graph_opts *o);

/*
 * Applies option c (a getopt_long code of the tables above) with value arg
 * to o. Returns 1 if c is one of them, 0 if not (the verb's own, 'h' and
 * FGCTL_GRAPH_OPT_BASELINE among them), -1 for a bad value (said why on
 * err).
 */
int fgctl_graph_option(int c, const char *arg, struct fgctl_graph_opts *o, FILE *err);

/*
 * Once every option is read: where the output goes (stdout, "-", when no
 * -o was given and stdout is not a terminal; on a terminal, a default name
 * for what, fgctl_default_output()) and its format from the extension
 * unless --format was given. Returns FGCTL_EXIT_OK, or the exit code
 * having said what is wrong.
 */
int fgctl_graph_opts_check(struct fgctl_graph_opts *o, const char *what, FILE *err);
/*
 * FGCTL_EXIT_OK, or FGCTL_EXIT_USAGE (said why) when o has an option that
 * only changes how a graph is drawn (--inverted, --width, ...) and the
 * output, in format to, is folded text, which is not drawn.
 */
int fgctl_graph_check_look(const struct fgctl_graph_opts *o, enum fg_format to, FILE *err);

/* Their help text: input, output, filters and graph, for render's and diff's --help. */
extern const char fgctl_graph_help[];
