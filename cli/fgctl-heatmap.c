/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fgctl heatmap: the subsecond-offset heat map of a timed profile
 * (common/profile/timed.h, common/render/heatmap.h) as an interactive page, JSON or SVG.
 * The profile comes from a recording fgd makes now (-p, -a: a record
 * request for the timed format), or from perf script text or a saved timed
 * profile (--from), read here without fgd.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/macro.h"
#include "base/parse.h"
#include "config.h"
#include "fgctl-client.h"
#include "fgctl-display.h"
#include "fgctl-heatmap.h"
#include "fgctl-output.h"
#include "fgctl-query.h"
#include "fgctl-record.h"
#include "fgctl-verb.h"
#include "fgctl.h"
#include "profile/lines.h"
#include "profile/perfscript.h"
#include "profile/timed.h"
#include "render/heatmap-html.h"
#include "render/heatmap.h"

#define MAX_LINE (64u << 20)

void fgctl_heatmap_help(FILE *out)
{
	fputs("Usage: fgctl heatmap (-p PID[,PID...] | -a) [-t SECONDS] [OPTIONS]\n"
	      "       fgctl heatmap (--last SPAN | --since TIME [--until TIME]) [SELECTORS] [OPTIONS]\n"
	      "       fgctl heatmap --from perf|timed [OPTIONS] [FILE...]\n"
	      "\n"
	      "Draws the subsecond-offset heat map of a profile: one column per second, one\n"
	      "row per bucket of the offset within the second, each cell the samples taken\n"
	      "then. Bursts, gaps and periodic work stand out; in the HTML page, select a\n"
	      "range of cells to get the flame graph of exactly that range. Columns are\n"
	      "wall-clock seconds: a burst at the same offset of every second is a band.\n"
	      "\n"
	      "  fgctl heatmap -a -t 30 -o all.html\n"
	      "  fgctl heatmap --last 5m --comm '^nginx' -o nginx.html\n"
	      "  fgctl heatmap -p 1234 -t 10 --off-cpu -o waits.html\n"
	      "  perf record -F 99 -a -g -- sleep 30; perf script | fgctl heatmap --from perf -o x.html\n"
	      "\n"
	      "  -p, --pid PIDS           record these processes (all their threads) now\n"
	      "  -a, --all                record the whole machine now (root only)\n"
	      "  -t, --time SECONDS       how long (default: until Ctrl-C or the processes exit)\n"
	      "  -F, --frequency HZ       samples per second per CPU (default: fgd's)\n"
	      "      --call-graph MODE    dwarf or fp, as fgctl record\n"
	      "      --off-cpu            where threads wait: each block's time spread over the\n"
	      "                           cells it lasted through, in microseconds (BPF)\n"
	      "      --wall               on-CPU and off-CPU time together, in microseconds\n"
	      "      --min-block US       with --off-cpu or --wall: leave out shorter blocks\n"
	      "      --tid-frames         root frames 'comm-PID/TID'\n",
	      out);
	fputs(fgctl_help_socket, out);
	fputs("\n"
	      "From fgd's always-on sampling instead (memory, then the history on disk;\n"
	      "--off-cpu: always-on off-CPU):\n",
	      out);
	fputs(fgctl_query_period_help, out);
	fputs(fgctl_query_selector_help, out);
	fputs("\n"
	      "  -o, --output FILE        where to write ('-' for stdout); the format follows\n"
	      "                           the extension: .html, .json, .svg, or .timed\n"
	      "  -f, --format FORMAT      html, json, svg or timed, whatever the extension\n"
	      "      --from FORMAT        the input: 'perf' (perf script output, with its\n"
	      "                           times) or 'timed' (a profile saved with -f timed)\n"
	      "      --bucket-ms N        the rows: each N ms of a second (1 to 1000; default 20)\n"
	      "      --scale SCALE        colours by count ('linear', the default) or by rank\n"
	      "                           among the cells ('rank'); the page has a toggle\n"
	      "      --comm REGEX         only processes whose name (the stacks' root frame)\n"
	      "                           matches this POSIX extended regex\n"
	      "      --title TEXT         the title\n"
	      "      --subtitle TEXT      a line under it\n"
	      "      --pid-frames         root frames 'comm-PID' (recorded or from perf), so\n"
	      "                           that processes are told apart\n"
	      "  -q, --quiet              no summary\n"
	      "\n"
	      "JSON: {\"start\": seconds of the first column (Unix, or perf's clock with\n"
	      "--from perf), \"bucket_ms\", \"rows\", \"columns\": [[count per bucket, bucket 0\n"
	      "at offset 0], one array per second], \"total\", \"max\", \"clock\", \"unit\"}.\n",
	      out);
}

int fgctl_heatmap_format_for_path(const char *path, enum fgctl_heatmap_format *ret)
{
	static const struct {
		const char *ext;
		enum fgctl_heatmap_format f;
	} exts[] = {
		{ ".html", FGCTL_HEATMAP_HTML },   { ".htm", FGCTL_HEATMAP_HTML },
		{ ".json", FGCTL_HEATMAP_JSON },   { ".svg", FGCTL_HEATMAP_SVG },
		{ ".timed", FGCTL_HEATMAP_TIMED },
	};
	size_t len = strlen(path);

	for (size_t i = 0; i < ELEMENTSOF(exts); i++) {
		size_t n = strlen(exts[i].ext);

		if (len > n && strcasecmp(path + len - n, exts[i].ext) == 0) {
			*ret = exts[i].f;
			return 0;
		}
	}
	return -EINVAL;
}

int fgctl_heatmap_format_arg(const char *arg, enum fgctl_heatmap_format *ret, FILE *err)
{
	static const char *const names[] = {
		[FGCTL_HEATMAP_HTML] = "html",
		[FGCTL_HEATMAP_JSON] = "json",
		[FGCTL_HEATMAP_SVG] = "svg",
		[FGCTL_HEATMAP_TIMED] = "timed",
	};

	for (size_t i = 0; i < ELEMENTSOF(names); i++)
		if (strcmp(arg, names[i]) == 0) {
			*ret = (enum fgctl_heatmap_format)i;
			return 0;
		}
	fprintf(err, "fgctl: unknown format '%s': expected html, json, svg or timed\n", arg);
	return -EINVAL;
}

static bool comm_matches(void *ctx, const struct fg_folded *model, const uint32_t *frames, size_t n)
{
	const regex_t *re = ctx;

	return n > 0 && regexec(re, fg_folded__name(model, frames[0]), 0, NULL, 0) == 0;
}

static int output_sink(void *ctx, const void *buf, size_t len)
{
	return fgctl_output_write(ctx, buf, len);
}

int fgctl_heatmap_write(struct fg_timed *t, const struct fg_heatmap_html_opts *opts,
			enum fgctl_heatmap_format to, const char *path, bool quiet)
{
	_cleanup_(fg_heatmap__freep) struct fg_heatmap *h = NULL;
	struct fgctl_output out = { .path = path, .fd = -1 };
	size_t cursor = 0;
	int r;

	r = fg_timed__sort(t);
	if (r >= 0)
		r = fg_heatmap__new(t, &opts->heatmap, &h);
	if (r == -E2BIG) {
		fprintf(stderr,
			"fgctl: the profile is too long for a heat map of such buckets (at most %d "
			"seconds, and %u cells: a longer --bucket-ms draws more seconds)\n",
			FG_HEATMAP_MAX_COLUMNS, FG_HEATMAP_MAX_CELLS);
		return FGCTL_EXIT_INPUT;
	}
	if (r < 0) {
		fprintf(stderr, "fgctl: cannot draw the heat map: %s\n", strerror(-r));
		return FGCTL_EXIT_FAILURE;
	}
	if (fgctl_output_open(&out) < 0)
		return FGCTL_EXIT_OUTPUT;
	switch (to) {
	case FGCTL_HEATMAP_JSON:
		r = fg_heatmap__json(h, output_sink, &out);
		break;
	case FGCTL_HEATMAP_SVG:
		r = fg_heatmap__svg(h, &opts->heatmap, output_sink, &out);
		break;
	case FGCTL_HEATMAP_TIMED:
		while ((r = fg_timed__emit(t, &cursor, output_sink, &out, 1u << 20)) == 0)
			;
		break;
	case FGCTL_HEATMAP_HTML:
		r = fg_heatmap_html(t, opts, output_sink, &out);
		break;
	}
	if (r >= 0)
		r = fgctl_output_close(&out, true);
	fgctl_output_close(&out, false);
	if (r < 0) {
		fprintf(stderr, "fgctl: cannot write %s: %s\n",
			strcmp(path, "-") == 0 ? "stdout" : path, strerror(-r));
		return FGCTL_EXIT_OUTPUT;
	}
	if (!quiet && strcmp(path, "-") != 0)
		fprintf(stderr, "fgctl: wrote %s: %u seconds of %u buckets of %u ms, %.0f %s\n",
			path, h->columns, h->rows, h->bucket_ms, h->total,
			fg_timed_unit_name(h->unit));
	return FGCTL_EXIT_OK;
}

struct reader {
	struct fg_timed *t;
	struct fg_perfscript *perf; /* NULL: the timed text form */
	const char *name;
	uint64_t bad;
};

static int timed_line(void *ctx, const char *line, size_t len, uint64_t lineno)
{
	struct reader *rd = ctx;
	int r = fg_timed__add_line(rd->t, line, len);

	if (r == -EPROTONOSUPPORT) {
		fprintf(stderr, "fgctl: %s:%llu: a timed profile of another version or kind\n",
			rd->name, (unsigned long long)lineno);
		return -EBADMSG;
	}
	if (r == -ERANGE && !fg_timed__has_header(rd->t)) {
		fprintf(stderr, "fgctl: %s:%llu: a time in the header is out of range\n", rd->name,
			(unsigned long long)lineno);
		return -EBADMSG;
	}
	if (r == -EINVAL && !fg_timed__has_header(rd->t)) {
		fprintf(stderr, "fgctl: %s:%llu: not a timed profile (no 'fgd-timed' header)\n",
			rd->name, (unsigned long long)lineno);
		return -EBADMSG;
	}
	if (r == -EINVAL || r == -ERANGE) {
		if (rd->bad++ == 0)
			fprintf(stderr, "fgctl: %s:%llu: %s, skipped\n", rd->name,
				(unsigned long long)lineno,
				r == -ERANGE ? "a time out of range" : "malformed line");
		return 0;
	}
	return r < 0 ? r : 0;
}

static int perf_line(void *ctx, const char *line, size_t len, uint64_t lineno)
{
	struct reader *rd = ctx;

	return fg_perfscript__feed(rd->perf, line, len, lineno);
}

/* Reads one input ("-": stdin) into t. 0 or an exit code. */
static int read_input(const char *path, bool perf_input, const struct fg_perfscript_opts *popts,
		      struct fg_timed *t)
{
	_cleanup_close_ int fd = -1;
	_cleanup_(fg_perfscript__freep) struct fg_perfscript *perf = NULL;
	struct reader rd = { .t = t, .name = path };
	int r;

	fd = fgctl_input_open(path, &rd.name);
	if (fd < 0)
		return FGCTL_EXIT_INPUT;
	if (perf_input) {
		r = fg_perfscript__new_timed(t, popts, &perf);
		if (r < 0)
			return FGCTL_EXIT_FAILURE;
		rd.perf = perf;
		r = fg_lines_read_fd(fd, MAX_LINE, perf_line, &rd);
		if (r >= 0)
			r = fg_perfscript__finish(perf);
	} else {
		r = fg_lines_read_fd(fd, MAX_LINE, timed_line, &rd);
	}
	if (r == -EBADMSG)
		return FGCTL_EXIT_INPUT;
	if (r < 0) {
		fprintf(stderr, "fgctl: cannot read %s: %s\n", rd.name, strerror(-r));
		return FGCTL_EXIT_INPUT;
	}
	if (perf) {
		struct fg_perfscript_stats st;

		fg_perfscript__stats(perf, &st);
		if (st.untimed)
			fprintf(stderr,
				"fgctl: %s: %llu samples without a time, left out (perf script -F "
				"without 'time'?)\n",
				rd.name, (unsigned long long)st.untimed);
		if (st.malformed)
			fprintf(stderr,
				"fgctl: %s: %llu lines not understood as perf script output, skipped "
				"(first at line %llu)\n",
				rd.name, (unsigned long long)st.malformed,
				(unsigned long long)st.first_bad_line);
		if (st.multiple_events)
			fprintf(stderr,
				"fgctl: %s holds several events; using '%s' (%llu samples of others "
				"skipped)\n",
				rd.name, st.event, (unsigned long long)st.filtered);
	} else if (rd.bad > 1) {
		fprintf(stderr, "fgctl: %s: %llu malformed lines skipped in all\n", rd.name,
			(unsigned long long)rd.bad);
	}
	return 0;
}

/* The profile from the inputs named (none: stdin), read without fgd. 0 or an exit code. */
static int read_offline(const char *from, char **paths, size_t n_paths,
			const struct fg_perfscript_opts *popts, struct fg_timed **ret)
{
	static char *const stdin_only[] = { "-" };
	_cleanup_(fg_timed__freep) struct fg_timed *t = NULL;
	bool perf = strcmp(from, "perf") == 0;
	int r;

	if (!perf && strcmp(from, "timed") != 0) {
		fprintf(stderr, "fgctl: unknown input '%s': expected perf or timed\n", from);
		return FGCTL_EXIT_USAGE;
	}
	if (n_paths == 0) {
		if (isatty(STDIN_FILENO)) {
			fprintf(stderr,
				"fgctl: no input: give a file, or pipe perf script output in\n");
			return FGCTL_EXIT_USAGE;
		}
		paths = (char **)stdin_only;
		n_paths = 1;
	}
	r = fg_timed__new(FG_TIMED_SAMPLES, perf ? FG_TIMED_CLOCK_PERF : FG_TIMED_CLOCK_UNIX, &t);
	if (r < 0)
		return FGCTL_EXIT_FAILURE;
	for (size_t i = 0; i < n_paths; i++) {
		r = read_input(paths[i], perf, popts, t);
		if (r != 0)
			return r;
	}
	*ret = TAKE_PTR(t);
	return 0;
}

/* fgd's reply in the timed form, a chunk at a time, into a profile. */
struct reply {
	struct fg_timed *t; /* owned until taken */
	struct fg_lines lines;
	struct reader rd;
};

static int reply_init(struct reply *rp)
{
	if (fg_timed__new(FG_TIMED_SAMPLES, FG_TIMED_CLOCK_UNIX, &rp->t) < 0)
		return FGCTL_EXIT_FAILURE;
	rp->rd = (struct reader){ .t = rp->t, .name = "fgd's reply" };
	fg_lines_init(&rp->lines, MAX_LINE, timed_line, &rp->rd);
	return FGCTL_EXIT_OK;
}

static int reply_data(void *ctx, const char *data, size_t len)
{
	struct reply *rp = ctx;
	int r = fg_lines_feed(&rp->lines, data, len);

	if (r < 0) {
		fprintf(stderr, "fgctl: cannot read fgd's timed profile: %s\n",
			r == -EBADMSG ? "it is not one" : strerror(-r));
		return FGCTL_EXIT_FAILURE;
	}
	return FGCTL_EXIT_OK;
}

static int reply_open(void *ctx)
{
	return FGCTL_EXIT_OK;
}

/*
 * The end of the conversation that ended with exit status r: the profile
 * read, in *ret, if all went well. Returns the exit status.
 */
static int reply_done(struct reply *rp, int r, struct fg_timed **ret)
{
	if (r == FGCTL_EXIT_OK && fg_lines_finish(&rp->lines) < 0)
		r = FGCTL_EXIT_FAILURE;
	fg_lines_done(&rp->lines);
	if (r == FGCTL_EXIT_OK && !fg_timed__has_header(rp->t)) {
		fprintf(stderr,
			"fgctl: fgd sent no timed profile (an fgd older than heat maps?)\n");
		r = FGCTL_EXIT_FAILURE;
	}
	if (r == FGCTL_EXIT_OK)
		*ret = TAKE_PTR(rp->t);
	rp->t = fg_timed__free(rp->t);
	return r;
}

/* The profile of a period of fgd's always-on sampling, as a timed profile. 0 or an exit code. */
static int query_window(const char *socket, struct fg_request *req, struct fg_timed **ret)
{
	static const struct fgctl_sink sink = { .open = reply_open, .write = reply_data };
	_cleanup_(json_object_putp) struct json_object *meta = NULL;
	_cleanup_(fg_snapshot_meta_done) struct fg_snapshot_meta m = {};
	struct reply rp = {};
	int r;

	r = reply_init(&rp);
	if (r != FGCTL_EXIT_OK)
		return r;
	req->query.format = FG_FORMAT_TIMED;
	r = reply_done(&rp, fgctl_query_snapshot(socket, req, NULL, &sink, &rp, &meta), ret);
	if (r != FGCTL_EXIT_OK)
		return r;
	fgctl_snapshot_meta(stderr, meta, &m);
	if (m.untimed_slices > 0)
		fprintf(stderr,
			"fgctl: note: %" PRIu64
			" slices of that period kept no times (written before fgd kept them, or "
			"past the window's room for them): their samples are not on the map\n",
			m.untimed_slices);
	fgctl_note_missing(stderr, NULL, &m.missing);
	return r;
}

/* Records req through fgd now, as a timed profile. 0 or an exit code. */
static int record_live(const char *socket, struct fg_request *req, bool quiet,
		       struct fg_timed **ret)
{
	_cleanup_(json_object_putp) struct json_object *msg = NULL, *meta = NULL;
	struct fgctl_conn conn;
	struct reply rp = {};
	char reason[32];
	int r;

	r = reply_init(&rp);
	if (r != FGCTL_EXIT_OK)
		return r;
	r = fgctl_connect(socket, &conn);
	if (r < 0)
		return reply_done(&rp, -r, ret);
	req->record.format = FG_FORMAT_TIMED;
	msg = fg_proto_encode_request(req);
	r = msg ? fgctl_send(&conn, msg) : -ENOMEM;
	if (r < 0)
		r = fgctl_send_failed(&conn, r);
	else
		r = fgctl_record_conversation(&conn, req, reply_data, &rp, &meta, reason, quiet,
					      NULL);
	fgctl_disconnect(&conn);
	r = reply_done(&rp, r, ret);
	/* What was lost or left out, as after a recording; the heat map says what was written. */
	if (r == FGCTL_EXIT_OK)
		fgctl_show_summary(stderr, NULL, meta, true);
	return r;
}

enum {
	ARG_FROM = 0x100,
	ARG_BUCKET,
	ARG_SCALE,
	ARG_COMM,
	ARG_TITLE,
	ARG_SUBTITLE,
};

/* fgctl-query.h's codes, from 0x200, for the always-on source. */
static const struct option heatmap_options[] = {
	FGCTL_RECORD_OPTIONS,
	{ "last", required_argument, NULL, FGCTL_OPT_LAST },
	{ "since", required_argument, NULL, FGCTL_OPT_SINCE },
	{ "until", required_argument, NULL, FGCTL_OPT_UNTIL },
	{ "uid", required_argument, NULL, FGCTL_OPT_UID },
	{ "cgroup", required_argument, NULL, FGCTL_OPT_CGROUP },
	{ "exe", required_argument, NULL, FGCTL_OPT_EXE },
	{ "socket", required_argument, NULL, 's' },
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, 'f' },
	{ "from", required_argument, NULL, ARG_FROM },
	{ "bucket-ms", required_argument, NULL, ARG_BUCKET },
	{ "scale", required_argument, NULL, ARG_SCALE },
	{ "comm", required_argument, NULL, ARG_COMM },
	{ "title", required_argument, NULL, ARG_TITLE },
	{ "subtitle", required_argument, NULL, ARG_SUBTITLE },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{},
};

static int heatmap_option(void *args, int c, const char *arg, FILE *err)
{
	struct fgctl_heatmap_args *a = args;
	int r;

	r = fgctl_record_option(c, arg, &a->req.record, err);
	if (r != 0)
		return r;
	switch (c) {
	case 'f':
		if (fgctl_heatmap_format_arg(arg, &a->to, err) < 0)
			return -1;
		a->to_given = true;
		return 1;
	case ARG_FROM:
		a->from = arg;
		return 1;
	case ARG_BUCKET:
		if (fg_parse_u32(arg, 1, 1000, &a->html.heatmap.bucket_ms) < 0) {
			fprintf(err, "fgctl: invalid --bucket-ms '%s': expected 1 to 1000\n", arg);
			return -1;
		}
		return 1;
	case ARG_SCALE:
		if (strcmp(arg, "linear") == 0) {
			a->html.heatmap.scale = FG_HEATMAP_LINEAR;
		} else if (strcmp(arg, "rank") == 0) {
			a->html.heatmap.scale = FG_HEATMAP_RANK;
		} else {
			fprintf(err, "fgctl: unknown scale '%s': expected linear or rank\n", arg);
			return -1;
		}
		return 1;
	case ARG_COMM:
		a->comm = arg;
		return 1;
	case ARG_TITLE:
		a->html.heatmap.title = arg;
		return 1;
	case ARG_SUBTITLE:
		a->html.heatmap.subtitle = arg;
		return 1;
	}
	return fgctl_query_option(c, arg, &a->req.query, &a->period, err);
}

int fgctl_heatmap_parse(const struct fgctl_ctx *ctx, int argc, char **argv,
			struct fgctl_heatmap_args *a, FILE *err)
{
	*a = (struct fgctl_heatmap_args){
		.req = { .cmd = FG_CMD_RECORD, .query = { .uid = -1, .limit = 20 } },
	};
	fg_record_request_init(&a->req.record);
	fg_flame_opts_init(&a->html.flame);
	return fgctl_parse_options(ctx, argc, argv, "p:at:F:s:o:f:qh", heatmap_options,
				   heatmap_option, a, &a->co, err);
}

/* A period names always-on sampling; -p and --comm then select in it. */
static int check_window(struct fgctl_heatmap_args *a, FILE *err)
{
	struct fg_record_request *rec = &a->req.record;

	if (a->from || rec->all || rec->n_pids > 1) {
		fprintf(err,
			"fgctl: --last, --since and --until read fgd's always-on sampling: not "
			"with --from, -a or several -p\n");
		return FGCTL_EXIT_USAGE;
	}
	if (rec->wall || rec->duration_ms || rec->frequency) {
		fprintf(err, "fgctl: -t, -F and --wall are for recording now, not with a period of "
			     "always-on sampling\n");
		return FGCTL_EXIT_USAGE;
	}
	a->req.query.pid = rec->n_pids ? rec->pids[0] : 0;
	rec->n_pids = 0;
	if (a->comm) {
		if (fgctl_query_option(FGCTL_OPT_COMM, a->comm, &a->req.query, &a->period, err) < 0)
			return FGCTL_EXIT_USAGE;
		a->comm = NULL;
	}
	a->req.query.off_cpu = rec->off_cpu;
	if (fgctl_query_range(&a->req.query, &a->period, "5m", err) < 0)
		return FGCTL_EXIT_USAGE;
	a->req.cmd = FG_CMD_SNAPSHOT;
	return FGCTL_EXIT_OK;
}

/* Where the heat map goes, and in what format. */
static int check_output(struct fgctl_heatmap_args *a, FILE *err)
{
	a->output = a->co.output;
	if (!a->output && isatty(STDOUT_FILENO) && !a->to_given) {
		/* Nobody named it, and a page is not for the terminal: a file here, named. */
		fgctl_default_output("heatmap", FG_FORMAT_HTML, a->default_output);
		a->output = a->default_output;
	}
	if (!a->output) {
		if (isatty(STDOUT_FILENO)) {
			fprintf(err, "fgctl: say where to write: -o FILE.html (or .json, .svg)\n");
			return FGCTL_EXIT_USAGE;
		}
		a->output = "-";
	}
	if (!a->to_given && fgctl_heatmap_format_for_path(a->output, &a->to) < 0) {
		if (strcmp(a->output, "-") != 0) {
			fprintf(err,
				"fgctl: cannot tell the format from '%s': name it .html, .json, .svg "
				"or .timed, or give -f\n",
				a->output);
			return FGCTL_EXIT_USAGE;
		}
		a->to = FGCTL_HEATMAP_JSON;
	}
	if (strcmp(a->output, "-") != 0 && fgctl_is_directory(a->output)) {
		fprintf(err, "fgctl: cannot write %s: it is a directory\n", a->output);
		return FGCTL_EXIT_OUTPUT;
	}
	return FGCTL_EXIT_OK;
}

int fgctl_heatmap_check(struct fgctl_heatmap_args *a, FILE *err)
{
	struct fg_record_request *rec = &a->req.record;
	int r;

	a->window = a->period.last || a->period.since || a->period.until;
	if (a->window) {
		r = check_window(a, err);
		if (r != FGCTL_EXIT_OK)
			return r;
	} else if (a->req.query.uid != -1 || a->req.query.cgroup[0] || a->req.query.exe[0]) {
		fprintf(err,
			"fgctl: --uid, --cgroup and --exe select in always-on sampling: give a "
			"period (--last, --since)\n");
		return FGCTL_EXIT_USAGE;
	}
	if (a->from && (rec->all || rec->n_pids > 0)) {
		fprintf(err, "fgctl: --from reads a profile; -p and -a record one: not both\n");
		return FGCTL_EXIT_USAGE;
	}
	if (rec->all && rec->n_pids > 0) {
		fprintf(err, "fgctl: -p and -a exclude each other: record the processes, or all\n");
		return FGCTL_EXIT_USAGE;
	}
	if (!a->from && !a->window && !rec->all && rec->n_pids == 0) {
		fprintf(err, "fgctl: say what to draw: -p PID or -a to record now, --last 5m for "
			     "fgd's always-on sampling, or --from perf or --from timed to read a "
			     "profile\n");
		return FGCTL_EXIT_USAGE;
	}
	if (!a->from && a->co.n_operands > 0) {
		fprintf(err, "fgctl: unexpected argument '%s' (files are read with --from)\n",
			a->co.operands[0]);
		return FGCTL_EXIT_USAGE;
	}
	if (rec->off_cpu && rec->wall) {
		fprintf(err, "fgctl: --off-cpu and --wall exclude each other\n");
		return FGCTL_EXIT_USAGE;
	}
	r = check_output(a, err);
	if (r != FGCTL_EXIT_OK)
		return r;
	if (a->comm) {
		if (regcomp(&a->comm_re, a->comm, REG_EXTENDED | REG_NOSUB) != 0) {
			fprintf(err, "fgctl: invalid --comm regular expression '%s'\n", a->comm);
			return FGCTL_EXIT_USAGE;
		}
		a->has_re = true;
	}
	if (rec->off_cpu || rec->wall) {
		a->html.flame.count_name = "us";
		if (rec->off_cpu)
			a->html.flame.palette = FG_PALETTE_IO;
	}
	return FGCTL_EXIT_OK;
}

void fgctl_heatmap_args_done(struct fgctl_heatmap_args *a)
{
	if (a->has_re)
		regfree(&a->comm_re);
	a->has_re = false;
}

/* Reads, queries or records the profile a asks for, checked, and writes its heat map. */
static int heatmap_run(struct fgctl_heatmap_args *a)
{
	_cleanup_(fg_timed__freep) struct fg_timed *t = NULL;
	/* --pid-frames names perf script's processes as it names a recording's. */
	struct fg_perfscript_opts popts = { .count_samples = true, .pid = a->req.record.with_pid };
	int r;

	if (a->from)
		r = read_offline(a->from, a->co.operands, (size_t)a->co.n_operands, &popts, &t);
	else if (a->window)
		r = query_window(a->co.socket, &a->req, &t);
	else
		r = record_live(a->co.socket, &a->req, a->co.quiet, &t);
	if (r != 0)
		return r;
	if (a->has_re) {
		struct fg_timed *kept = NULL;

		r = fg_timed__filter(t, comm_matches, &a->comm_re, &kept);
		if (r < 0) {
			fprintf(stderr, "fgctl: %s\n", strerror(-r));
			return FGCTL_EXIT_FAILURE;
		}
		fg_timed__free(t);
		t = kept;
	}
	if (fg_timed__n_samples(t) == 0) {
		fprintf(stderr, "fgctl: no samples%s\n",
			a->from ? " with a time in the input" : " were recorded");
		return FGCTL_EXIT_INPUT;
	}
	return fgctl_heatmap_write(t, &a->html, a->to, a->output, a->co.quiet);
}

int fgctl_verb_heatmap(const struct fgctl_ctx *ctx, int argc, char **argv)
{
	struct fgctl_heatmap_args a;
	int r;

	r = fgctl_heatmap_parse(ctx, argc, argv, &a, stderr);
	if (r != FGCTL_EXIT_OK)
		return r;
	if (a.co.help) {
		fgctl_heatmap_help(stdout);
		return FGCTL_EXIT_OK;
	}
	r = fgctl_heatmap_check(&a, stderr);
	if (r == FGCTL_EXIT_OK)
		r = heatmap_run(&a);
	fgctl_heatmap_args_done(&a);
	return r;
}
