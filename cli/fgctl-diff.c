/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fgctl diff: a differential flame graph of two profiles (difffolded.pl
 * and flamegraph.pl), read from files through the render pipeline, or with
 * --baseline fetched from fgd's always-on sampling as two folded snapshots
 * (the protocol has no diff of its own) and fed line by line as they arrive
 * into the same models, so that it draws what a diff of those snapshots
 * saved as files would.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/argsplit.h"
#include "base/macro.h"
#include "fgctl-client.h"
#include "fgctl-diff.h"
#include "fgctl-display.h"
#include "fgctl-graphopts.h"
#include "fgctl-pipeline.h"
#include "fgctl-query.h"
#include "fgctl-verb.h"
#include "fgctl.h"
#include "profile/folded.h"
#include "profile/lines.h"
#include "profile/transform.h"

void fgctl_diff_help(FILE *out)
{
	fputs("Usage: fgctl diff [OPTIONS] BEFORE AFTER\n"
	      "       fgctl diff --baseline 'QUERY' [PERIOD] [SELECTORS] [OPTIONS]\n"
	      "\n"
	      "Draws a differential flame graph of two profiles: widths from AFTER (from\n"
	      "BEFORE with --negate), each frame red where its own samples grew and blue\n"
	      "where they shrank; tooltips give both counts and the change. The BEFORE\n"
	      "counts are first scaled to AFTER's total, so colours show changes in share\n"
	      "(the default, also with --baseline, whose two periods usually differ in\n"
	      "length).\n"
	      "  fgctl diff before.folded after.folded -o diff.svg\n"
	      "\n"
	      "  -n, --normalize          scale BEFORE to AFTER's total (the default)\n"
	      "      --no-normalize       compare raw counts, not shares\n"
	      "\n"
	      "Two periods of fgd's always-on sampling (from memory, and from the history\n"
	      "on disk for older times), instead of files:\n"
	      "  fgctl diff --baseline '--since -1h --until -55m' --last 5m -o what-changed.svg\n"
	      "\n"
	      "      --baseline QUERY     the before profile: a period of its own (--last, or\n"
	      "                           --since [--until]) and selectors, as for fgctl\n"
	      "                           snapshot, in one word. It is split like a shell\n"
	      "                           would: blanks separate options, '...' and \"...\"\n"
	      "                           quote, a backslash escapes; nothing else is special\n"
	      "  PERIOD, SELECTORS        the after profile: --last SPAN (default 5m), or\n"
	      "                           --since TIME [--until TIME]; -p PID, --comm REGEX,\n"
	      "                           --uid UID, --cgroup PATH, --exe PATH. Selectors\n"
	      "                           given here apply to the baseline too, unless it\n"
	      "                           gives the same selector itself\n",
	      out);
	fputs(fgctl_help_socket_short, out);
	fputs("The graph's subtitle and the lines under it give both periods. With --baseline,\n"
	      "-p is the process selector and the input options (--from, --pid, ...) do not\n"
	      "apply. A differential graph is svg, html or folded ('before after' counts):\n"
	      "pprof and speedscope have no differential form, and it has no one time order\n"
	      "to chart (--flamechart).\n"
	      "\n",
	      out);
	fputs(fgctl_graph_help, out);
}

/* Whether argv asks for diff --baseline, which changes the options (-p takes a pid). */
static bool baseline_given(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--baseline") == 0 || strncmp(argv[i], "--baseline=", 11) == 0)
			return true;
	return false;
}

/* diff of files: the graph options, how files are read, and --baseline only to say it must be spelled out. */
static const struct option file_options[] = {
	FGCTL_GRAPH_OPTIONS,
	FGCTL_INPUT_OPTIONS,
	/* See baseline_given(). */
	{ "baseline", required_argument, NULL, FGCTL_GRAPH_OPT_BASELINE },
	{},
};

/* diff --baseline: the graph options, the after query's period and selectors, and where fgd is. */
static const struct option baseline_options[] = {
	FGCTL_GRAPH_OPTIONS,
	{ "baseline", required_argument, NULL, FGCTL_GRAPH_OPT_BASELINE },
	FGCTL_QUERY_OPTIONS,
	{ "socket", required_argument, NULL, 's' },
	{},
};

static int diff_option(void *args, int c, const char *arg, FILE *err)
{
	struct fgctl_diff_args *a = args;
	int r;

	if (a->from_fgd) {
		r = fgctl_query_option(c, arg, &a->after, &a->after_period, err);
		if (r != 0)
			return r;
	}
	r = fgctl_graph_option(c, arg, &a->graph, err);
	if (r != 0 || c != FGCTL_GRAPH_OPT_BASELINE)
		return r;
	if (!a->from_fgd) {
		/* An abbreviation: the options were read as a diff of files. */
		fprintf(err, "fgctl: spell --baseline out in full\n");
		return -1;
	}
	a->baseline = arg;
	return 1;
}

int fgctl_diff_parse(const struct fgctl_ctx *ctx, int argc, char **argv, struct fgctl_diff_args *a,
		     FILE *err)
{
	int r;

	*a = (struct fgctl_diff_args){
		.after = { .uid = -1, .limit = 20, .format = FG_FORMAT_FOLDED },
		.from_fgd = baseline_given(argc, argv),
	};
	fgctl_graph_opts_init(&a->graph);
	/* Options may follow the files (fgctl_getopt_reset()). */
	r = fgctl_parse_options(ctx, argc, argv, a->from_fgd ? "o:f:qhnukp:s:" : "o:f:qhnuk",
				a->from_fgd ? baseline_options : file_options, diff_option, a,
				&a->co, err);
	if (r != FGCTL_EXIT_OK || a->co.help)
		return r;
	a->socket = a->co.socket;
	a->inputs = a->co.operands;
	a->n_inputs = (size_t)a->co.n_operands;
	return FGCTL_EXIT_OK;
}

int fgctl_diff_check(struct fgctl_diff_args *a, FILE *err)
{
	int r = fgctl_graph_opts_check(&a->graph, "diff", err);

	if (r != FGCTL_EXIT_OK)
		return r;
	if (a->graph.flame.flamechart) {
		fprintf(err, "fgctl: a flame chart cannot be differential\n");
		return FGCTL_EXIT_USAGE;
	}
	return FGCTL_EXIT_OK;
}

/* ---- diff --baseline: both profiles from fgd ---- */

/* Reads the words of --baseline as query options into q, range included. Returns 0 or an exit code. */
static int parse_baseline(const char *text, struct fg_query_request *q)
{
	static const struct option options[] = { FGCTL_QUERY_OPTIONS, {} };
	struct fgctl_period period = {};
	_cleanup_free_ char **words = NULL, **argv = NULL;
	const char *why = NULL;
	size_t n, offset = 0;
	int c, r;

	r = fg_split_args(text, &words, &n, &why, &offset);
	if (r == -EINVAL) {
		fprintf(stderr,
			"fgctl: cannot split --baseline '%s' into options: %s (at byte %zu)\n",
			text, why, offset + 1);
		return FGCTL_EXIT_USAGE;
	}
	if (r < 0 || !(argv = calloc(n + 2, sizeof(*argv))))
		return FGCTL_EXIT_FAILURE;
	if (n == 0) {
		fprintf(stderr, "fgctl: --baseline is empty: give its period, e.g. --baseline "
				"'--since -1h --until -55m'\n");
		return FGCTL_EXIT_USAGE;
	}
	/* getopt's own messages then read "fgctl diff --baseline: unrecognized option ...". */
	argv[0] = (char *)"fgctl diff --baseline";
	memcpy(argv + 1, words, n * sizeof(*argv));
	fgctl_getopt_reset();
	while ((c = getopt_long((int)n + 1, argv, "+p:", options, NULL)) >= 0) {
		r = fgctl_query_option(c, optarg, q, &period, stderr);
		if (r < 0)
			return FGCTL_EXIT_USAGE;
		if (r == 0) {
			fprintf(stderr,
				"fgctl: --baseline takes a period (--last, --since, --until) and "
				"selectors (-p, --comm, --uid, --cgroup, --exe) only\n");
			return FGCTL_EXIT_USAGE;
		}
	}
	if (optind <= (int)n) {
		fprintf(stderr, "fgctl: unexpected '%s' in --baseline: it takes options only\n",
			argv[optind]);
		return FGCTL_EXIT_USAGE;
	}
	if (!period.last && !period.since) {
		fprintf(stderr,
			"fgctl: --baseline needs a period of its own: --last SPAN, or --since "
			"TIME [--until TIME]\n");
		return FGCTL_EXIT_USAGE;
	}
	/* Here, while the period's strings (borrowed from words) live. */
	return fgctl_query_range(q, &period, NULL, stderr) < 0 ? FGCTL_EXIT_USAGE : 0;
}

/* Selectors given outside --baseline apply to both profiles, unless the baseline sets the same one. */
static void inherit_selectors(struct fg_query_request *before, const struct fg_query_request *after)
{
	if (!before->pid)
		before->pid = after->pid;
	if (before->uid < 0)
		before->uid = after->uid;
	if (!before->comm[0])
		strcpy(before->comm, after->comm);
	if (!before->cgroup[0])
		strcpy(before->cgroup, after->cgroup);
	if (!before->exe[0])
		strcpy(before->exe, after->exe);
}

/* Fetches one side's profile, named label in messages. Returns 0 or an exit code. */
static int fetch_profile(const struct fgctl_diff_args *args, const char *label,
			 const struct fg_query_request *q, struct fg_folded *model,
			 struct json_object **ret_meta)
{
	struct fg_request req = { .cmd = FG_CMD_SNAPSHOT, .query = *q };
	struct fgctl_fetched f;
	int r;

	req.query.format = FG_FORMAT_FOLDED;
	fgctl_fetched_init(&f, &args->graph, model, label);
	r = fgctl_query_snapshot(args->socket, &req, label, &fgctl_fetched_sink, &f, ret_meta);
	return fgctl_fetched_finish(&f, r);
}

/* "2024-03-10 10:00:00 to 10:05:00.250": the span of the slices a profile came from. */
static void describe_span(const struct fg_snapshot_meta *m, char *buf, size_t size)
{
	int64_t from = m->first_ms, to = m->last_ms;
	time_t tf = (time_t)(from / 1000), tt = (time_t)(to / 1000);
	char a[40], b[40];
	struct tm ta, tb;
	bool same_day = localtime_r(&tf, &ta) && localtime_r(&tt, &tb) &&
			ta.tm_yday == tb.tm_yday && ta.tm_year == tb.tm_year;

	fgctl_format_time(a, sizeof(a), from, true);
	fgctl_format_time(b, sizeof(b), to, !same_day);
	snprintf(buf, size, "%s to %s", a, b);
}

/* The after side's period options, as given or defaulted. */
static void describe_period(const struct fgctl_period *p, char *buf, size_t size)
{
	snprintf(buf, size, "%s %s%s%s", p->since ? "--since" : "--last",
		 p->since ? p->since :
		 p->last  ? p->last :
			    "5m",
		 p->until ? " --until " : "", p->until ? p->until : "");
}

/* "pid 12, comm ^x$", or "all processes". */
static void describe_selectors(const struct fg_query_request *q, char *buf, size_t size)
{
	size_t n = 0;

#define PIECE(...) n += (size_t)snprintf(buf + n, n < size ? size - n : 0, __VA_ARGS__)
	buf[0] = '\0';
	if (q->pid)
		PIECE("%spid %d", n ? ", " : "", (int)q->pid);
	if (q->comm[0])
		PIECE("%scomm %s", n ? ", " : "", q->comm);
	if (q->uid >= 0)
		PIECE("%suid %lld", n ? ", " : "", (long long)q->uid);
	if (q->cgroup[0])
		PIECE("%scgroup %s", n ? ", " : "", q->cgroup);
	if (q->exe[0])
		PIECE("%sexe %s", n ? ", " : "", q->exe);
#undef PIECE
	if (n == 0)
		snprintf(buf, size, "all processes");
}

/* Compares before with after and writes the differential profile. Returns the exit code. */
static int compare(const struct fgctl_diff_args *args, const struct fg_folded *before,
		   const struct fg_folded *after)
{
	_cleanup_(fg_folded__freep) struct fg_folded *diff = NULL;
	int r = fg_folded_diff(before, after, args->graph.normalize, &diff);

	if (r < 0) {
		fprintf(stderr, "fgctl: cannot compare the profiles: %s\n", strerror(-r));
		return FGCTL_EXIT_FAILURE;
	}
	return fgctl_pipeline_write(&args->graph, &diff);
}

/* Room for a line naming a query: its options as given, or five selectors. */
#define DESCRIPTION_MAX 8192

static int diff_baseline(struct fgctl_diff_args *args)
{
	_cleanup_(fg_folded__freep) struct fg_folded *before = NULL, *after = NULL;
	_cleanup_(json_object_putp) struct json_object *meta_before = NULL, *meta_after = NULL;
	_cleanup_(fg_snapshot_meta_done) struct fg_snapshot_meta m_before = {}, m_after = {};
	struct fg_query_request bq = { .uid = -1, .limit = 20 }, aq = args->after;
	char span_before[96], span_after[96], period_after[160], subtitle[256], scale[160];
	char sel_before[DESCRIPTION_MAX], sel_after[DESCRIPTION_MAX];
	char info_before[DESCRIPTION_MAX], info_after[DESCRIPTION_MAX],
		info_sel[2 * DESCRIPTION_MAX + 64];
	const char *info[5] = { info_before, info_after, info_sel, scale, NULL };
	double ratio;
	int r;

	if (args->n_inputs > 0) {
		fprintf(stderr,
			"fgctl: with --baseline, diff compares two periods of fgd's always-on "
			"sampling and takes no files ('%s')\n",
			args->inputs[0]);
		return FGCTL_EXIT_USAGE;
	}
	if (!args->baseline) {
		fprintf(stderr, "fgctl: --baseline needs the baseline's query options\n");
		return FGCTL_EXIT_USAGE;
	}
	r = parse_baseline(args->baseline, &bq);
	if (r != 0)
		return r;
	inherit_selectors(&bq, &aq);
	if (fgctl_query_range(&aq, &args->after_period, "5m", stderr) < 0)
		return FGCTL_EXIT_USAGE;
	before = fg_folded__new();
	after = fg_folded__new();
	if (!before || !after)
		return FGCTL_EXIT_FAILURE;
	r = fetch_profile(args, "baseline", &bq, before, &meta_before);
	if (r == 0)
		r = fetch_profile(args, "after", &aq, after, &meta_after);
	if (r != 0)
		return r;

	/* What was compared, for the graph's headings and the summary. */
	fgctl_snapshot_meta(stderr, meta_before, &m_before);
	fgctl_snapshot_meta(stderr, meta_after, &m_after);
	describe_span(&m_before, span_before, sizeof(span_before));
	describe_span(&m_after, span_after, sizeof(span_after));
	describe_period(&args->after_period, period_after, sizeof(period_after));
	describe_selectors(&bq, sel_before, sizeof(sel_before));
	describe_selectors(&aq, sel_after, sizeof(sel_after));
	snprintf(info_before, sizeof(info_before),
		 "baseline (%s): %s, %" PRIu64 " samples in %" PRIu64 " slices", args->baseline,
		 span_before, m_before.samples, m_before.slices);
	snprintf(info_after, sizeof(info_after),
		 "after (%s): %s, %" PRIu64 " samples in %" PRIu64 " slices", period_after,
		 span_after, m_after.samples, m_after.slices);
	if (strcmp(sel_before, sel_after) == 0)
		snprintf(info_sel, sizeof(info_sel), "processes: %s", sel_after);
	else
		snprintf(info_sel, sizeof(info_sel), "processes: baseline %s; after %s", sel_before,
			 sel_after);
	ratio = fg_folded__total(before) > 0 ? fg_folded__total(after) / fg_folded__total(before) :
					       0;
	if (args->graph.normalize)
		snprintf(scale, sizeof(scale),
			 "baseline counts scaled by %.4g to the after total "
			 "(--no-normalize: raw counts)",
			 ratio);
	else
		snprintf(scale, sizeof(scale),
			 "raw counts, not normalized (the after profile has "
			 "%.4g times the samples)",
			 ratio);
	snprintf(subtitle, sizeof(subtitle), "always-on: baseline %s, after %s", span_before,
		 span_after);
	if (!args->graph.flame.subtitle)
		args->graph.flame.subtitle = subtitle;
	args->graph.flame.info = info;
	if (!args->graph.quiet)
		fprintf(stderr, "fgctl: %s\nfgctl: %s\nfgctl: %s\n", info_before, info_after,
			scale);
	fgctl_note_kernel_hidden(stderr, m_before.kernel_hidden || m_after.kernel_hidden);
	fgctl_note_missing(stderr, "baseline", &m_before.missing);
	fgctl_note_missing(stderr, "after", &m_after.missing);
	return compare(args, before, after);
}

int fgctl_verb_diff(const struct fgctl_ctx *ctx, int argc, char **argv)
{
	_cleanup_(fg_folded__freep) struct fg_folded *before = NULL, *after = NULL;
	struct fgctl_diff_args args;
	int r;

	r = fgctl_diff_parse(ctx, argc, argv, &args, stderr);
	if (r != FGCTL_EXIT_OK)
		return r;
	if (args.co.help) {
		fgctl_diff_help(stdout);
		return FGCTL_EXIT_OK;
	}
	r = fgctl_diff_check(&args, stderr);
	if (r != FGCTL_EXIT_OK)
		return r;
	if (args.from_fgd)
		return diff_baseline(&args);
	if (args.n_inputs != 2) {
		fprintf(stderr, "fgctl: diff takes two profiles, BEFORE and AFTER. Try 'fgctl diff "
				"--help'.\n");
		return FGCTL_EXIT_USAGE;
	}
	before = fg_folded__new();
	after = fg_folded__new();
	if (!before || !after)
		return FGCTL_EXIT_FAILURE;
	r = fgctl_pipeline_read(&args.graph, args.inputs, 1, before);
	if (r == 0)
		r = fgctl_pipeline_read(&args.graph, args.inputs + 1, 1, after);
	if (r != 0)
		return r;
	if (fg_folded__is_diff(before) || fg_folded__is_diff(after)) {
		fprintf(stderr,
			"fgctl: the inputs of diff must be plain profiles, one count per line\n");
		return FGCTL_EXIT_INPUT;
	}
	return compare(&args, before, after);
}
