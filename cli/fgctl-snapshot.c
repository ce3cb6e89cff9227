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
#include "fgctl.h"
#include "proto/proto.h"

/* From 0x400: the draw options' codes start at 0x100, the query options' at 0x200. */
enum { ARG_OFF_CPU = 0x400, ARG_GROUP_BY, ARG_PID_FRAMES, ARG_JSON };

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

int fgctl_verb_snapshot(const struct fgctl_ctx *ctx, int argc, char **argv)
{
	static const struct option options[] = {
		FGCTL_QUERY_VERB_OPTIONS,
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		FGCTL_DRAW_OPTIONS,
		{ "off-cpu", no_argument, NULL, ARG_OFF_CPU },
		{ "group-by", required_argument, NULL, ARG_GROUP_BY },
		{ "pid-frames", no_argument, NULL, ARG_PID_FRAMES },
		{ "json", no_argument, NULL, ARG_JSON },
		{ "user-only", no_argument, NULL, 'u' },
		{ "kernel-only", no_argument, NULL, 'k' },
		{ "quiet", no_argument, NULL, 'q' },
		{},
	};
	static const struct fgctl_sink to_output = { output_open, output_write };
	struct fg_request req = { .cmd = FG_CMD_SNAPSHOT, .query = { .uid = -1, .limit = 20 } };
	struct fgctl_output out = { .fd = -1 };
	struct fgctl_period period = {};
	_cleanup_(json_object_putp) struct json_object *meta = NULL;
	const char *socket = ctx->socket;
	bool format_given = false, quiet = false, json = false;
	_cleanup_(fg_folded__freep) struct fg_folded *model = NULL;
	struct fgctl_draw draw;
	struct fgctl_fetched fetched;
	int c, r;

	fgctl_draw_init(&draw);
	optind = 1;
	while ((c = getopt_long(argc, argv, "p:o:f:qs:huk", options, NULL)) >= 0) {
		r = fgctl_query_option(c, optarg, &req.query, &period);
		if (r == 0)
			r = fgctl_draw_option(&draw, c, optarg, req.query.title);
		if (r < 0)
			return FGCTL_EXIT_USAGE;
		if (r > 0)
			continue;
		switch (c) {
		case 's':
			socket = optarg;
			break;
		case 'o':
			out.path = optarg;
			break;
		case 'f':
			if (fgctl_format_arg(optarg, &req.query.format) != FGCTL_EXIT_OK)
				return FGCTL_EXIT_USAGE;
			format_given = true;
			break;
		case ARG_OFF_CPU:
			req.query.off_cpu = true;
			break;
		case ARG_PID_FRAMES:
			req.query.with_pid = true;
			break;
		case ARG_JSON:
			json = true;
			break;
		case 'u':
		case 'k':
			if (fgctl_frames_arg(c, &req.query.frames) != FGCTL_EXIT_OK)
				return FGCTL_EXIT_USAGE;
			break;
		case ARG_GROUP_BY:
			if (fgctl_group_by_arg(optarg, &req.query.group_by) != FGCTL_EXIT_OK)
				return FGCTL_EXIT_USAGE;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			printf("Usage: fgctl snapshot [--last SPAN | --since TIME [--until TIME]] [SELECTORS] -o FILE\n"
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
			       fgctl_query_period_help, fgctl_query_selector_help,
			       fgctl_query_help_tail);
			return FGCTL_EXIT_OK;
		default:
			fprintf(stderr, "Try 'fgctl snapshot --help'.\n");
			return FGCTL_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "fgctl: unexpected argument '%s'\n", argv[optind]);
		return FGCTL_EXIT_USAGE;
	}
	if (fgctl_query_range(&req.query, &period, "5m") < 0)
		return FGCTL_EXIT_USAGE;
	r = fgctl_output_target(&out, "snapshot", format_given, &req.query.format);
	if (r != FGCTL_EXIT_OK)
		return r;
	if (json && strcmp(out.path, "-") == 0) {
		fprintf(stderr, "fgctl: --json writes the summary to stdout: give -o FILE for the "
				"profile\n");
		return FGCTL_EXIT_USAGE;
	}
	r = fgctl_draw_prepare(&draw, &out, &req.query.format, req.query.off_cpu,
			       req.query.off_cpu);
	if (r != FGCTL_EXIT_OK)
		return r;
	if (draw.here) {
		/* fgd's folded stacks, drawn here with the graph options. */
		model = fg_folded__new();
		if (!model)
			return FGCTL_EXIT_FAILURE;
		fgctl_fetched_init(&fetched, &draw.graph, model, "snapshot");
		r = fgctl_query_snapshot(socket, &req, NULL, &fgctl_fetched_sink, &fetched, &meta);
		r = fgctl_fetched_finish(&fetched, r);
		if (r == FGCTL_EXIT_OK)
			r = fgctl_pipeline_write(&draw.graph, &model);
		if (r != FGCTL_EXIT_OK)
			return r;
	} else {
		/* Opened only once fgd accepted: a query with no data leaves no empty file. */
		r = fgctl_query_snapshot(socket, &req, NULL, &to_output, &out, &meta);
		if (r != FGCTL_EXIT_OK) {
			if (out.fd >= 0)
				fgctl_output_close(&out, false);
			return r;
		}
		r = fgctl_output_close(&out, true);
		if (r < 0) {
			fprintf(stderr, "fgctl: cannot write %s: %s\n", out.path, strerror(-r));
			return FGCTL_EXIT_OUTPUT;
		}
	}
	/* The summary for scripts: the snapshot's metadata (docs/PROTOCOL.md), on stdout. */
	if (json)
		printf("%s\n",
		       meta ? json_object_to_json_string_ext(meta, JSON_C_TO_STRING_PRETTY) : "{}");
	if (!quiet && !json && meta) {
		char from[24], to[24];
		const char *where = strcmp(out.path, "-") == 0 ? "stdout" : out.path;

		/*
		 * What the slices cover, which coarse history on disk may make wider
		 * than asked. (The metadata's processes are entries summed over slices,
		 * not distinct processes: not said here.)
		 */
		fgctl_format_time(from, sizeof(from), fgctl_get_int(meta, "first_ms"), false);
		fgctl_format_time(to, sizeof(to), fgctl_get_int(meta, "last_ms"), false);
		if (req.query.off_cpu)
			fprintf(stderr,
				"fgctl: wrote %s: %.3f s blocked in %" PRId64
				" slices (%s to %s, %g s); folded into [other] by the memory "
				"ceiling: %.3f s\n",
				where, (double)fgctl_get_int(meta, "samples") / 1e6,
				fgctl_get_int(meta, "slices"), from, to,
				(double)fgctl_get_int(meta, "duration_ms") / 1000.0,
				(double)fgctl_get_int(meta, "folded_samples") / 1e6);
		else
			fprintf(stderr,
				"fgctl: wrote %s: %" PRId64 " samples in %" PRId64
				" slices (%s to %s, %g s); folded into "
				"[other] by the memory ceiling: %" PRId64 " samples\n",
				where, fgctl_get_int(meta, "samples"),
				fgctl_get_int(meta, "slices"), from, to,
				(double)fgctl_get_int(meta, "duration_ms") / 1000.0,
				fgctl_get_int(meta, "folded_samples"));
		if (fgctl_get_int(meta, "other_rate_samples"))
			fprintf(stderr,
				"fgctl: note: %" PRId64
				" of those samples come from history taken at "
				"another sampling rate than %" PRId64
				" Hz (or an unknown one); the graph "
				"adds counts as they are\n",
				fgctl_get_int(meta, "other_rate_samples"),
				fgctl_get_int(meta, "frequency"));
	}
	/* As after a recording, whatever -q says: the graph is not what root would get. */
	fgctl_note_kernel_hidden(stderr, meta);
	fgctl_note_untimed(stderr, meta);
	fgctl_note_missing(stderr, NULL, meta);
	return FGCTL_EXIT_OK;
}
