/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The render pipeline of fgctl render and diff: flamegraph.pl,
 * stackcollapse-perf.pl and difffolded.pl in one. Inputs (folded text or
 * perf script text) are read into a model, the filters applied
 * (common/transform.h), and SVG, HTML or folded text written, as the graph
 * options (fgctl-graphopts.h) say. Malformed input lines are reported by
 * file and line number and skipped, or stop the run with --strict; nothing
 * is dropped silently.
 */

#include <stddef.h>
#include <stdint.h>

#include "fgctl-graphopts.h"
#include "folded.h"
#include "perfscript.h"

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
 * callback of fg_lines (common/lines.h), for text that arrives in pieces.
 * A malformed line is named on stderr (the first few) and skipped, or is
 * -EBADMSG with --strict; other errors are the model's.
 */
int fgctl_reader_folded_line(void *ctx, const char *line, size_t len, uint64_t lineno);
/* Says how many malformed lines were skipped, past those named one by one. */
void fgctl_reader_report(const struct fgctl_reader *rd);

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
