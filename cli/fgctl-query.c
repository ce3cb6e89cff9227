/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fgctl-client.h"
#include "fgctl-display.h"
#include "fgctl-output.h"
#include "fgctl-query.h"
#include "macro.h"
#include "parse.h"
#include "proto.h"
#include "when.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(struct json_object *, json_object_put);

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int32_t utc_offset(void)
{
	time_t t = time(NULL);
	struct tm tm;

	localtime_r(&t, &tm);
	return (int32_t)tm.tm_gmtoff;
}

/* HH:MM:SS of a Unix time in ms, local. */
static void local_time(char *buf, size_t size, int64_t ms)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, size, "%H:%M:%S", &tm))
		snprintf(buf, size, "?");
}

enum { ARG_TITLE = 0x100 };

#define QUERY_OPTIONS                                                      \
	FGCTL_QUERY_OPTIONS,                                               \
	{ "socket", required_argument, NULL, 's' },                        \
	{ "help", no_argument, NULL, 'h' }

const char fgctl_query_help[] =
	"      --last SPAN          the last SPAN: 30s, 5m, 1h30m\n"
	"      --since TIME         from TIME: HH:MM[:SS] (the latest such time), ISO 8601\n"
	"                           (2024-03-10T03:10, with Z or +01:00 for a zone),\n"
	"                           relative (-10m), or @UNIXSECONDS\n"
	"      --until TIME         up to TIME (default: now)\n"
	"  -p, --pid PID            only this process\n"
	"      --comm REGEX         only processes whose name matches (extended regex)\n"
	"      --uid UID            only this user's processes\n"
	"      --cgroup PATH        only processes in this cgroup or below it\n"
	"      --exe PATH           only this executable (full path or file name)\n";

static const char query_help_tail[] =
	"  -s, --socket PATH        fgd's socket\n"
	"Selectors combine. Non-root users see only their own processes.\n";

int fgctl_query_option(int c, const char *arg, struct fg_query_request *q,
		       struct fgctl_period *period)
{
	uint32_t v;

	switch (c) {
	case FGCTL_OPT_LAST:
		period->last = arg;
		return 1;
	case FGCTL_OPT_SINCE:
		period->since = arg;
		return 1;
	case FGCTL_OPT_UNTIL:
		period->until = arg;
		return 1;
	case 'p':
		if (fg_parse_u32(arg, 1, INT_MAX, &v) < 0) {
			fprintf(stderr, "fgctl: invalid pid '%s'\n", arg);
			return -1;
		}
		q->pid = (pid_t)v;
		return 1;
	case FGCTL_OPT_UID:
		if (fg_parse_u32(arg, 0, UINT32_MAX - 1, &v) < 0) {
			fprintf(stderr, "fgctl: invalid uid '%s'\n", arg);
			return -1;
		}
		q->uid = v;
		return 1;
	case FGCTL_OPT_COMM:
	case FGCTL_OPT_CGROUP:
	case FGCTL_OPT_EXE: {
		char *dst = c == FGCTL_OPT_COMM ? q->comm : c == FGCTL_OPT_CGROUP ? q->cgroup : q->exe;

		if (strlen(arg) > FG_PROTO_MAX_SELECTOR) {
			fprintf(stderr, "fgctl: selector too long (at most %d bytes)\n", FG_PROTO_MAX_SELECTOR);
			return -1;
		}
		strcpy(dst, arg);
		return 1;
	}
	}
	return 0;
}

int fgctl_query_range(struct fg_query_request *q, const struct fgctl_period *period,
		      const char *last_default)
{
	const char *since = period->since, *until = period->until;
	const char *last = period->last ? period->last : last_default;
	int64_t now = now_ms(), t;
	int32_t off = utc_offset();
	uint64_t span;

	if (period->last && since) {
		fprintf(stderr, "fgctl: give --last or --since, not both\n");
		return -EINVAL;
	}
	if (until) {
		if (fg_parse_time(until, now, off, &t) < 0) {
			fprintf(stderr, "fgctl: invalid time '%s': expected HH:MM[:SS], ISO 8601, -10m or now\n",
				until);
			return -EINVAL;
		}
		q->until_ms = t;
	}
	if (since) {
		if (fg_parse_time(since, now, off, &t) < 0) {
			fprintf(stderr, "fgctl: invalid time '%s': expected HH:MM[:SS], ISO 8601, -10m or now\n",
				since);
			return -EINVAL;
		}
		q->since_ms = t;
	} else {
		if (fg_parse_span(last, &span) < 0) {
			fprintf(stderr, "fgctl: invalid span '%s': expected e.g. 30s, 5m, 1h\n", last);
			return -EINVAL;
		}
		q->since_ms = (q->until_ms ? q->until_ms : now) - (int64_t)span;
	}
	if (q->since_ms < 0)
		q->since_ms = 0;
	if (q->until_ms && q->until_ms <= q->since_ms) {
		fprintf(stderr, "fgctl: the period ends before it starts\n");
		return -EINVAL;
	}
	return 0;
}

static int connect_and_send(const char *socket, const struct fg_request *req, struct fgctl_conn *conn)
{
	_cleanup_(json_object_putp) struct json_object *msg = fg_proto_encode_request(req);
	int r = fgctl_connect(socket, conn);

	if (r < 0)
		return -r;
	r = msg ? fgctl_send(conn, msg) : -ENOMEM;
	if (r < 0) {
		r = fgctl_send_failed(conn, r);
		fgctl_disconnect(conn);
		return r;
	}
	return 0;
}

static int error_reply(struct json_object *msg, const char *label)
{
	fprintf(stderr, "fgctl: %s%s%s\n", label ? label : "", label ? ": " : "",
		fgctl_get_str(msg, "message"));
	return fgctl_exit_code_for(fgctl_get_str(msg, "error"));
}

int fgctl_query_snapshot(const char *socket, const struct fg_request *req, const char *label,
			 const struct fgctl_sink *sink, void *ctx, struct json_object **ret_meta)
{
	_cleanup_(json_object_putp) struct json_object *meta = NULL;
	struct fgctl_conn conn;
	int r;

	r = connect_and_send(socket, req, &conn);
	if (r != 0)
		return r;
	for (;;) {
		_cleanup_(json_object_putp) struct json_object *msg = NULL;
		enum fgctl_event ev;
		const char *data, *type;
		size_t len;

		r = fgctl_next(&conn, &ev, &msg, &data, &len);
		if (r < 0 || ev == FGCTL_EV_EOF || ev == FGCTL_EV_SIGNAL) {
			fprintf(stderr, "fgctl: %s\n", r < 0 ? strerror(-r) : ev == FGCTL_EV_SIGNAL ?
				"interrupted; nothing written" : "fgd closed the connection early");
			r = ev == FGCTL_EV_SIGNAL ? FGCTL_EXIT_INTERRUPTED : FGCTL_EXIT_FAILURE;
			break;
		}
		if (ev == FGCTL_EV_DATA) {
			r = sink->write(ctx, data, len);
			if (r != FGCTL_EXIT_OK)
				break;
			continue;
		}
		type = fgctl_get_str(msg, "type");
		if (strcmp(type, "error") == 0) {
			r = error_reply(msg, label);
			break;
		}
		if (strcmp(type, "result") == 0) {
			struct json_object *m;

			if (json_object_object_get_ex(msg, "meta", &m))
				meta = json_object_get(m);
			r = sink->open(ctx);
			if (r != FGCTL_EXIT_OK)
				break;
		} else if (strcmp(type, "end") == 0) {
			*ret_meta = TAKE_PTR(meta);
			r = FGCTL_EXIT_OK;
			break;
		}
	}
	fgctl_disconnect(&conn);
	return r;
}

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

int fgctl_verb_snapshot(int argc, char **argv, const char *socket)
{
	static const struct option options[] = {
		QUERY_OPTIONS,
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "title", required_argument, NULL, ARG_TITLE },
		{ "quiet", no_argument, NULL, 'q' },
		{}
	};
	static const struct fgctl_sink to_output = { output_open, output_write };
	struct fg_request req = { .cmd = FG_CMD_SNAPSHOT, .query = { .uid = -1, .limit = 20 } };
	struct fgctl_output out = { .fd = -1 };
	struct fgctl_period period = {};
	_cleanup_(json_object_putp) struct json_object *meta = NULL;
	bool format_given = false, quiet = false;
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "p:o:f:qs:h", options, NULL)) >= 0) {
		r = fgctl_query_option(c, optarg, &req.query, &period);
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
			if (fg_format_from_name(optarg, &req.query.format) < 0) {
				fprintf(stderr, "fgctl: unknown format '%s': expected svg, html or folded\n", optarg);
				return FGCTL_EXIT_USAGE;
			}
			format_given = true;
			break;
		case ARG_TITLE:
			if (strlen(optarg) >= sizeof(req.query.title)) {
				fprintf(stderr, "fgctl: title too long\n");
				return FGCTL_EXIT_USAGE;
			}
			strcpy(req.query.title, optarg);
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			printf("Usage: fgctl snapshot [--last SPAN | --since TIME [--until TIME]] [SELECTORS] -o FILE\n"
			       "\nThe profile fgd's always-on sampling kept for a period (default: the last\n"
			       "5 minutes), at once: the whole machine, or the selected processes. Times\n"
			       "older than the window in memory come from the history on disk.\n\n"
			       "  -o, --output FILE        where to write ('-' for stdout); the format follows\n"
			       "                           the extension (.svg, .html, .folded, .txt)\n"
			       "  -f, --format FORMAT      svg, html or folded\n"
			       "      --title TEXT         flame graph title\n"
			       "  -q, --quiet              no summary\n%s%s", fgctl_query_help, query_help_tail);
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
	r = fgctl_output_target(&out, format_given, &req.query.format);
	if (r != FGCTL_EXIT_OK)
		return r;
	/* The output is opened only once fgd accepted: a query with no data leaves no empty file. */
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
	if (!quiet && meta) {
		char from[16], to[16];

		/* What the slices cover, which coarse history on disk may make wider than asked. */
		local_time(from, sizeof(from), fgctl_get_int(meta, "first_ms"));
		local_time(to, sizeof(to), fgctl_get_int(meta, "last_ms"));
		fprintf(stderr, "fgctl: wrote %s: %" PRId64 " samples of %" PRId64 " processes in %" PRId64
			" slices (%s to %s, %.0f s); folded into [other] by the memory ceiling: %" PRId64
			" samples\n",
			strcmp(out.path, "-") == 0 ? "stdout" : out.path, fgctl_get_int(meta, "samples"),
			fgctl_get_int(meta, "processes"), fgctl_get_int(meta, "slices"), from, to,
			(double)fgctl_get_int(meta, "duration_ms") / 1000.0,
			fgctl_get_int(meta, "folded_samples"));
		if (fgctl_get_int(meta, "other_rate_samples"))
			fprintf(stderr, "fgctl: note: %" PRId64 " of those samples come from history taken at "
					"another sampling rate than %" PRId64 " Hz (or an unknown one); the graph "
					"adds counts as they are\n",
				fgctl_get_int(meta, "other_rate_samples"), fgctl_get_int(meta, "frequency"));
	}
	/* As after a recording, whatever -q says: the graph is not what root would get. */
	fgctl_note_kernel_hidden(stderr, meta);
	return FGCTL_EXIT_OK;
}

static int top_once(const char *socket, const struct fg_request *req, bool clear)
{
	_cleanup_(json_object_putp) struct json_object *msg = NULL;
	struct json_object *list, *meta;
	struct fgctl_conn conn;
	enum fgctl_event ev;
	const char *data;
	size_t len;
	int r;

	r = connect_and_send(socket, req, &conn);
	if (r != 0)
		return r;
	r = fgctl_next(&conn, &ev, &msg, &data, &len);
	fgctl_disconnect(&conn);
	if (r < 0 || ev != FGCTL_EV_MESSAGE) {
		fprintf(stderr, "fgctl: no answer from fgd\n");
		return FGCTL_EXIT_FAILURE;
	}
	if (strcmp(fgctl_get_str(msg, "type"), "error") == 0)
		return error_reply(msg, NULL);
	if (!json_object_object_get_ex(msg, "processes", &list) ||
	    !json_object_object_get_ex(msg, "meta", &meta)) {
		fprintf(stderr, "fgctl: malformed answer from fgd\n");
		return FGCTL_EXIT_FAILURE;
	}
	if (clear)
		printf("\033[H\033[2J");
	printf("always-on, %.0f s, %" PRId64 " samples at %" PRId64 " Hz; folded into [other]: %" PRId64
	       " samples\n\n", (double)fgctl_get_int(meta, "covered_ms") / 1000.0,
	       fgctl_get_int(meta, "samples"), fgctl_get_int(meta, "frequency"),
	       fgctl_get_int(meta, "folded_samples"));
	fgctl_note_kernel_hidden(stderr, meta);
	if (fgctl_get_int(meta, "dropped_samples") || fgctl_get_int(meta, "dropped_leaf_samples"))
		fprintf(stderr, "fgctl: too many processes in that period for fgd's top list: %" PRId64
				" samples left out, %" PRId64 " counted without their leaf\n",
			fgctl_get_int(meta, "dropped_samples"), fgctl_get_int(meta, "dropped_leaf_samples"));
	printf("%8s %6s %-16s %7s %8s  %s\n", "PID", "UID", "COMM", "CPU%", "SAMPLES", "HOTTEST LEAF");
	for (size_t i = 0; i < json_object_array_length(list); i++) {
		struct json_object *e = json_object_array_get_idx(list, i), *v;
		double pct = json_object_object_get_ex(e, "cpu_pct", &v) ? json_object_get_double(v) : 0;

		printf("%8" PRId64 " %6" PRId64 " %-16.16s %6.1f%% %8" PRId64 "  %s\n",
		       fgctl_get_int(e, "pid"), fgctl_get_int(e, "uid"), fgctl_get_str(e, "comm"), pct,
		       fgctl_get_int(e, "samples"), fgctl_get_str(e, "leaf"));
	}
	fflush(stdout);
	return FGCTL_EXIT_OK;
}

int fgctl_verb_top(int argc, char **argv, const char *socket)
{
	static const struct option options[] = {
		QUERY_OPTIONS,
		{ "lines", required_argument, NULL, 'n' },
		{ "watch", no_argument, NULL, 'w' },
		{ "interval", required_argument, NULL, 'i' },
		{}
	};
	struct fg_request req = { .cmd = FG_CMD_TOP, .query = { .uid = -1, .limit = 20 } };
	struct fgctl_period period = {};
	uint32_t interval = 2, v;
	bool watch = false;
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "p:n:wi:s:h", options, NULL)) >= 0) {
		r = fgctl_query_option(c, optarg, &req.query, &period);
		if (r < 0)
			return FGCTL_EXIT_USAGE;
		if (r > 0)
			continue;
		switch (c) {
		case 's':
			socket = optarg;
			break;
		case 'n':
			if (fg_parse_u32(optarg, 1, FG_PROTO_MAX_TOP, &v) < 0) {
				fprintf(stderr, "fgctl: invalid count '%s': 1 to %d\n", optarg, FG_PROTO_MAX_TOP);
				return FGCTL_EXIT_USAGE;
			}
			req.query.limit = v;
			break;
		case 'w':
			watch = true;
			break;
		case 'i':
			if (fg_parse_u32(optarg, 1, 3600, &interval) < 0) {
				fprintf(stderr, "fgctl: invalid interval '%s'\n", optarg);
				return FGCTL_EXIT_USAGE;
			}
			break;
		case 'h':
			printf("Usage: fgctl top [--last SPAN | --since TIME [--until TIME]] [-n N]\n"
			       "                 [-w [-i SECONDS]] [SELECTORS]\n"
			       "\nProcesses by CPU share over a period (default: the last 60 s) of fgd's\n"
			       "always-on sampling, from memory and, for older times, from the history on\n"
			       "disk; each with the frame most of its samples ended in. A process is one\n"
			       "row however many slices it spans.\n\n"
			       "  -n, --lines N            processes shown (default 20)\n"
			       "  -w, --watch              refresh like top until interrupted\n"
			       "  -i, --interval SECONDS   refresh interval with -w (default 2)\n%s%s",
			       fgctl_query_help, query_help_tail);
			return FGCTL_EXIT_OK;
		default:
			fprintf(stderr, "Try 'fgctl top --help'.\n");
			return FGCTL_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "fgctl: unexpected argument '%s'\n", argv[optind]);
		return FGCTL_EXIT_USAGE;
	}
	for (;;) {
		struct fg_request now = req;

		/* Relative times are relative to each refresh. */
		if (fgctl_query_range(&now.query, &period, "60s") < 0)
			return FGCTL_EXIT_USAGE;
		r = top_once(socket, &now, watch && isatty(STDOUT_FILENO));
		if (!watch || r != FGCTL_EXIT_OK)
			return r;
		sleep(interval);
	}
}
