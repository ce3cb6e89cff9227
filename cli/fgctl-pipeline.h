/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The render pipeline of fgctl render and diff: flamegraph.pl,
 * stackcollapse-perf.pl and difffolded.pl in one. Inputs (folded text or
 * perf script text) are read into a model, the filters applied
 * (common/profile/transform.h), and SVG, HTML or folded text written, as the graph
 * options (fgctl-graphopts.h) say. Malformed input lines are reported by
 * file and line number and skipped, or stop the run with --strict; nothing
 * is dropped silently.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fgctl-graphopts.h"
#include "fgctl-query.h"
#include "profile/folded.h"
#include "profile/lines.h"
#include "profile/perfscript.h"

/* Longer input lines are refused, not buffered. */
#define FGCTL_MAX_LINE (64u << 20)

/* Reading one input into a model. */
struct fgctl_reader {
	const struct fgctl_graph_opts *opts; /* borrowed */
	const char *name;                    /* borrowed; for messages */
	struct fg_folded *model;             /* borrowed */
	struct fg_perfscript *perf;          /* borrowed; NULL for folded input */
	uint64_t n_bad;                      /* malformed lines */
};

/*
 * One line of folded text into the model of ctx, a struct fgctl_reader: the
 * callback of fg_lines (common/profile/lines.h), for text that arrives in pieces.
 * A malformed line is named on stderr (the first few) and skipped, or is
 * -EBADMSG with --strict; other errors are the model's.
 */
int fgctl_reader_folded_line(void *ctx, const char *line, size_t len, uint64_t lineno);
/* Says how many malformed lines were skipped, past those named one by one. */
void fgctl_reader_report(const struct fgctl_reader *rd);

/*
 * A profile arriving from fgd as folded text, in chunks, line by line into
 * a model: what diff --baseline, and record and snapshot drawing here
 * (graph options), make of fgd's result. For a flame chart (--flamechart),
 * fgd sends a timed profile (fgctl_draw_prepare() asks for one), whose
 * samples go into the model, a sequence, in time order at the end.
 */
struct fgctl_fetched {
	struct fgctl_reader rd;
	struct fg_lines lines;
	struct fg_timed *timed; /* owned; --flamechart: the samples with their times */
};

/*
 * opts, model (new, empty) and name (for messages: "the NAME profile") are
 * borrowed until finish. With opts' flamechart, model becomes a sequence.
 */
void fgctl_fetched_init(struct fgctl_fetched *f, const struct fgctl_graph_opts *opts,
			struct fg_folded *model, const char *name);
/* A chunk of the result (a fgctl_record_data_fn): FGCTL_EXIT_OK or an exit code, said why. */
int fgctl_fetched_write(void *ctx, const char *data, size_t len);
/* The sink of fgctl_query_snapshot() that feeds an fgctl_fetched. */
extern const struct fgctl_sink fgctl_fetched_sink;
/*
 * After the conversation that ended with exit code r: the last line, the
 * report of malformed lines, and f's memory. Returns r, or the exit code
 * of what went wrong here.
 */
int fgctl_fetched_finish(struct fgctl_fetched *f, int r);

/*
 * Reads the named inputs ("-" for stdin; stdin when n is 0, unless it is a
 * terminal) into model, as opts->from says. perf script input whose
 * samples counted their periods names its counts in opts->flame.count_name
 * ("ns" for cpu-clock), unless --countname did. Returns 0 or an exit code,
 * having said why.
 */
int fgctl_pipeline_read(struct fgctl_graph_opts *opts, char **paths, size_t n,
			struct fg_folded *model);

/*
 * Filters *model (replacing it with the filtered one), sorts it, and
 * writes it to opts->output in opts->to's format, with the --cp palette
 * file read and written back; then the summary, unless opts->quiet.
 * Returns the exit code.
 */
int fgctl_pipeline_write(const struct fgctl_graph_opts *opts, struct fg_folded **model);

/*
 * record's and snapshot's graph options (FGCTL_DRAW_OPTIONS): with any but
 * --title, the graph is drawn here, from the folded stacks fgd sends, as
 * render draws it; --title alone goes to fgd, which draws it then.
 */
struct fgctl_draw {
	struct fgctl_graph_opts graph;
	bool here; /* a draw option other than --title was given */
};

void fgctl_draw_init(struct fgctl_draw *d);
/*
 * Option c with value arg: 1 if it is a draw option (--title also into
 * title, of FG_PROTO_MAX_TITLE bytes, for fgd), 0 if not, -1 for a bad
 * value (said why).
 */
int fgctl_draw_option(struct fgctl_draw *d, int c, const char *arg, char *title, FILE *err);
/*
 * Once the output is settled (its path and format): when drawing here,
 * checks the format is a graph's and asks fgd for folded stacks instead
 * (*request_format); counts in µs (off-CPU, wall-clock) are "us", blocked
 * time in the off-CPU palette, as fgd draws them. Returns the exit code.
 */
int fgctl_draw_prepare(struct fgctl_draw *d, const struct fgctl_output *out,
		       enum fg_format *request_format, bool us, bool blocked, FILE *err);
