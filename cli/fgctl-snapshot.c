/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fgctl snapshot: the profile fgd's always-on sampling kept for a period,
 * written as a file at once.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/macro.h"
#include "fgctl-client.h"
#include "fgctl-display.h"
#include "fgctl-output.h"
#include "fgctl-pipeline.h"
#include "fgctl-query.h"
#include "fgctl-snapshot.h"
#include "fgctl-verb.h"
#include "fgctl.h"
#include "proto/proto.h"

/* From 0x400: the draw options' codes start at 0x100, the query options' at 0x200. */
enum { ARG_OFF_CPU = 0x400, ARG_GROUP_BY, ARG_PID_FRAMES };

/* A snapshot's result goes straight to the output file. */
static int output_open(void *ctx)
{
	return fgctl_output_open(ctx) < 0 ? FGCTL_EXIT_OUTPUT : FGCTL_EXIT_OK;
}

static int output_write(void *ctx, const char *data, size_t len)
{
	struct fgctl_output *out = ctx;
	int r = fgctl_output_write(out, data, len);

	if (r < 0) {
		fprintf(stderr, "fgctl: cannot write %s: %s\n", out->path, strerror(-r));
		return FGCTL_EXIT_OUTPUT;
	}
	return FGCTL_EXIT_OK;
}

static const struct option snapshot_options[] = {
	FGCTL_QUERY_VERB_OPTIONS,
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, 'f' },
	FGCTL_DRAW_OPTIONS,
	{ "off-cpu", no_argument, NULL, ARG_OFF_CPU },
	{ "group-by", required_argument, NULL, ARG_GROUP_BY },
	{ "pid-frames", no_argument, NULL, ARG_PID_FRAMES },
	{ "json", no_argument, NULL, FGCTL_OPT_JSON },
	{ "user-only", no_argument, NULL, 'u' },
	{ "kernel-only", no_argument, NULL, 'k' },
	{ "quiet", no_argument, NULL, 'q' },
	{},
};

void fgctl_snapshot_help(FILE *out)
{
	fprintf(out,
		"Usage: fgctl snapshot [--last SPAN | --since TIME [--until TIME]] [SELECTORS] -o FILE\n"
		"\nThe profile fgd's always-on sampling kept for a period (default: the last\n"
		"5 minutes), at once: the whole machine, or the selected processes. Times\n"
		"older than the window in memory come from the history on disk.\n\n"
		"  -o, --output FILE        where to write ('-' for stdout; without -o, on a\n"
		"                           terminal, fgd-snapshot-TIME.svg here); the format\n"
		"                           follows the extension (.svg, .html, .folded, .txt,\n"
		"                           .pb.gz for pprof, .speedscope.json)\n"
		"  -f, --format FORMAT      svg, html, folded, pprof or speedscope (a\n"
		"                           profile per process)\n"
		"      --off-cpu            blocked time by stack (us) that always-on off-CPU\n"
		"                           kept (OffCpu=yes in fgd.conf) instead of CPU samples\n"
		"      --group-by WHAT      a root frame above each process name: 'cgroup'\n"
		"                           (its cgroup v2 path), 'cgroup-name' (the path's\n"
		"                           last component) or 'process' (none, the default)\n"
		"      --pid-frames         root frame 'comm-PID' (stackcollapse-perf.pl --pid;\n"
		"                           always for pprof and speedscope)\n"
		"      --title TEXT         flame graph title\n"
		"      --subtitle, --width, --colors, --inverted, --flamechart, --focus, ...\n"
		"                           render's graph options (fgctl render --help): with\n"
		"                           any but --title, fgctl draws the graph from fgd's\n"
		"                           stacks (or writes them filtered, to .folded)\n"
		"      --stackcollapse-names names cut at the first '(' as stackcollapse-perf.pl\n"
		"                           cuts them (Java signatures; render --help)\n"
		"  -u, --user-only          only user frames (kernel frames dropped)\n"
		"  -k, --kernel-only        only kernel frames, under the process frame\n"
		"      --json               the summary as JSON on stdout (the profile goes\n"
		"                           to -o FILE): samples, processes, slices, losses\n"
		"  -q, --quiet              no summary\n%s%s%s",
		fgctl_query_period_help, fgctl_query_selector_help, fgctl_query_help_tail);
}

/* snapshot's own options, beyond the query's, the drawing's and the common ones. */
static int snapshot_option(void *args, int c, const char *arg, FILE *err)
{
	struct fgctl_snapshot_args *a = args;
	struct fg_query_request *q = &a->req.query;
	int r;

	r = fgctl_query_option(c, arg, q, &a->period, err);
	if (r == 0)
		r = fgctl_draw_option(&a->draw, c, arg, q->title, err);
	if (r != 0)
		return r;
	switch (c) {
	case ARG_OFF_CPU:
		q->off_cpu = true;
		return 1;
	case ARG_PID_FRAMES:
		q->with_pid = true;
		return 1;
	case 'u':
	case 'k':
		return fgctl_frames_arg(c, &q->frames, err) != FGCTL_EXIT_OK ? -1 : 1;
	case ARG_GROUP_BY:
		return fgctl_group_by_arg(arg, &q->group_by, err) != FGCTL_EXIT_OK ? -1 : 1;
	}
	return 0;
}

int fgctl_snapshot_parse(const struct fgctl_ctx *ctx, int argc, char **argv,
			 struct fgctl_snapshot_args *a, FILE *err)
{
	int r;

	*a = (struct fgctl_snapshot_args){
		.req = { .cmd = FG_CMD_SNAPSHOT, .query = { .uid = -1, .limit = 20 } },
	};
	fgctl_draw_init(&a->draw);
	r = fgctl_parse_options(ctx, argc, argv, "p:o:f:qs:huk", snapshot_options, snapshot_option,
				a, &a->co, err);
	if (r == FGCTL_EXIT_OK && a->co.format_given)
		a->req.query.format = a->co.format;
	return r;
}

int fgctl_snapshot_check(struct fgctl_snapshot_args *a, FILE *err)
{
	struct fg_query_request *q = &a->req.query;
	int r;

	r = fgctl_no_operands(&a->co, err);
	if (r != FGCTL_EXIT_OK)
		return r;
	if (fgctl_query_range(q, &a->period, "5m", err) < 0)
		return FGCTL_EXIT_USAGE;
	a->out = (struct fgctl_output){ .path = a->co.output, .fd = -1 };
	r = fgctl_output_target(&a->out, "snapshot", a->co.format_given, &q->format, err);
	if (r == FGCTL_EXIT_OK)
		r = fgctl_check_json_output(&a->co, a->out.path, err);
	if (r == FGCTL_EXIT_OK)
		r = fgctl_draw_prepare(&a->draw, &a->out, &q->format, q->off_cpu, q->off_cpu, err);
	return r;
}

/* Asks fgd for the snapshot a describes, checked, writes it and says what it holds. */
static int snapshot_run(struct fgctl_snapshot_args *a)
{
	static const struct fgctl_sink to_output = { output_open, output_write };
	_cleanup_(json_object_putp) struct json_object *meta = NULL;
	_cleanup_(fg_folded__freep) struct fg_folded *model = NULL;
	_cleanup_(fg_snapshot_meta_done) struct fg_snapshot_meta m = {};
	struct fgctl_fetched fetched;
	int r;

	if (a->draw.here) {
		/* fgd's folded stacks, drawn here with the graph options. */
		model = fg_folded__new();
		if (!model)
			return FGCTL_EXIT_FAILURE;
		fgctl_fetched_init(&fetched, &a->draw.graph, model, "snapshot");
		r = fgctl_query_snapshot(a->co.socket, &a->req, NULL, &fgctl_fetched_sink, &fetched,
					 &meta);
		r = fgctl_fetched_finish(&fetched, r);
		if (r == FGCTL_EXIT_OK)
			r = fgctl_pipeline_write(&a->draw.graph, &model);
		if (r != FGCTL_EXIT_OK)
			return r;
	} else {
		/* Opened only once fgd accepted: a query with no data leaves no empty file. */
		r = fgctl_query_snapshot(a->co.socket, &a->req, NULL, &to_output, &a->out, &meta);
		if (r != FGCTL_EXIT_OK) {
			if (a->out.fd >= 0)
				fgctl_output_close(&a->out, false);
			return r;
		}
		r = fgctl_output_close(&a->out, true);
		if (r < 0) {
			fprintf(stderr, "fgctl: cannot write %s: %s\n", a->out.path, strerror(-r));
			return FGCTL_EXIT_OUTPUT;
		}
	}
	/* The summary for scripts: the snapshot's metadata (docs/PROTOCOL.md), on stdout. */
	if (a->co.json)
		printf("%s\n",
		       meta ? json_object_to_json_string_ext(meta, JSON_C_TO_STRING_PRETTY) : "{}");
	fgctl_snapshot_meta(stderr, meta, &m);
	if (!a->co.quiet && !a->co.json && meta) {
		char from[24], to[24];
		const char *where = strcmp(a->out.path, "-") == 0 ? "stdout" : a->out.path;

		/*
		 * What the slices cover, which coarse history on disk may make wider
		 * than asked. (The metadata's processes are entries summed over slices,
		 * not distinct processes: not said here.)
		 */
		fgctl_format_time(from, sizeof(from), m.first_ms, false);
		fgctl_format_time(to, sizeof(to), m.last_ms, false);
		if (a->req.query.off_cpu)
			fprintf(stderr,
				"fgctl: wrote %s: %.3f s blocked in %" PRIu64
				" slices (%s to %s, %g s); folded into [other] by the memory "
				"ceiling: %.3f s\n",
				where, (double)m.samples / 1e6, m.slices, from, to,
				(double)m.duration_ms / 1000.0, (double)m.folded_samples / 1e6);
		else
			fprintf(stderr,
				"fgctl: wrote %s: %" PRIu64 " samples in %" PRIu64
				" slices (%s to %s, %g s); folded into "
				"[other] by the memory ceiling: %" PRIu64 " samples\n",
				where, m.samples, m.slices, from, to,
				(double)m.duration_ms / 1000.0, m.folded_samples);
		if (m.other_rate_samples)
			fprintf(stderr,
				"fgctl: note: %" PRIu64
				" of those samples come from history taken at "
				"another sampling rate than %" PRIu32
				" Hz (or an unknown one); the graph "
				"adds counts as they are\n",
				m.other_rate_samples, m.frequency);
	}
	/* As after a recording, whatever -q says: the graph is not what root would get. */
	fgctl_note_kernel_hidden(stderr, m.kernel_hidden);
	fgctl_note_untimed(stderr, m.untimed_slices);
	fgctl_note_missing(stderr, NULL, &m.missing);
	return FGCTL_EXIT_OK;
}

int fgctl_verb_snapshot(const struct fgctl_ctx *ctx, int argc, char **argv)
{
	struct fgctl_snapshot_args a;
	int r;

	r = fgctl_snapshot_parse(ctx, argc, argv, &a, stderr);
	if (r != FGCTL_EXIT_OK)
		return r;
	if (a.co.help) {
		fgctl_snapshot_help(stdout);
		return FGCTL_EXIT_OK;
	}
	r = fgctl_snapshot_check(&a, stderr);
	if (r != FGCTL_EXIT_OK)
		return r;
	return snapshot_run(&a);
}
