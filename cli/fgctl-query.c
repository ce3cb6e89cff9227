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

enum { ARG_SINCE = 0x100, ARG_UNTIL, ARG_LAST, ARG_COMM, ARG_UID, ARG_CGROUP, ARG_EXE, ARG_TITLE };

#define QUERY_OPTIONS                                                      \
	{ "last", required_argument, NULL, ARG_LAST },                     \
	{ "since", required_argument, NULL, ARG_SINCE },                   \
	{ "until", required_argument, NULL, ARG_UNTIL },                   \
	{ "pid", required_argument, NULL, 'p' },                           \
	{ "comm", required_argument, NULL, ARG_COMM },                     \
	{ "uid", required_argument, NULL, ARG_UID },                       \
	{ "cgroup", required_argument, NULL, ARG_CGROUP },                 \
	{ "exe", required_argument, NULL, ARG_EXE },                       \
	{ "socket", required_argument, NULL, 's' },                        \
	{ "help", no_argument, NULL, 'h' }

static const char query_help[] =
	"      --last SPAN          the last SPAN: 30s, 5m, 1h30m (default 5m)\n"
	"      --since TIME         from TIME: HH:MM[:SS] (the latest such time), ISO 8601\n"
	"                           (2024-03-10T03:10, with Z or +01:00 for a zone),\n"
	"                           relative (-10m), or @UNIXSECONDS\n"
	"      --until TIME         up to TIME (default: now)\n"
	"  -p, --pid PID            only this process\n"
	"      --comm REGEX         only processes whose name matches (extended regex)\n"
	"      --uid UID            only this user's processes\n"
	"      --cgroup PATH        only processes in this cgroup or below it\n"
	"      --exe PATH           only this executable (full path or file name)\n"
	"  -s, --socket PATH        fgd's socket\n"
	"Selectors combine. Non-root users see only their own processes.\n";

/* One option common to both verbs: 1 if handled, 0 if not, -1 on a bad value. */
static int query_option(int c, struct fg_query_request *q, const char **since, const char **until,
			const char **last, const char **socket)
{
	uint32_t v;

	switch (c) {
	case ARG_LAST:
		*last = optarg;
		return 1;
	case ARG_SINCE:
		*since = optarg;
		return 1;
	case ARG_UNTIL:
		*until = optarg;
		return 1;
	case 'p':
		if (fg_parse_u32(optarg, 1, INT_MAX, &v) < 0) {
			fprintf(stderr, "fgctl: invalid pid '%s'\n", optarg);
			return -1;
		}
		q->pid = (pid_t)v;
		return 1;
	case ARG_UID:
		if (fg_parse_u32(optarg, 0, UINT32_MAX - 1, &v) < 0) {
			fprintf(stderr, "fgctl: invalid uid '%s'\n", optarg);
			return -1;
		}
		q->uid = v;
		return 1;
	case ARG_COMM:
	case ARG_CGROUP:
	case ARG_EXE: {
		char *dst = c == ARG_COMM ? q->comm : c == ARG_CGROUP ? q->cgroup : q->exe;

		if (strlen(optarg) > FG_PROTO_MAX_SELECTOR) {
			fprintf(stderr, "fgctl: selector too long (at most %d bytes)\n", FG_PROTO_MAX_SELECTOR);
			return -1;
		}
		strcpy(dst, optarg);
		return 1;
	}
	case 's':
		*socket = optarg;
		return 1;
	}
	return 0;
}

/* Turns --last/--since/--until into the request's range. */
static int query_range(struct fg_query_request *q, const char *since, const char *until,
		       const char *last)
{
	int64_t now = now_ms(), t;
	int32_t off = utc_offset();
	uint64_t span;

	if (last && since) {
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
		if (fg_parse_span(last ? last : "5m", &span) < 0) {
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

static int error_reply(struct json_object *msg)
{
	fprintf(stderr, "fgctl: %s\n", fgctl_get_str(msg, "message"));
	return fgctl_exit_code_for(fgctl_get_str(msg, "error"));
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
	struct fg_request req = { .cmd = FG_CMD_SNAPSHOT, .query = { .uid = -1, .limit = 20 } };
	struct fgctl_output out = { .fd = -1 };
	const char *since = NULL, *until = NULL, *last = NULL;
	_cleanup_(json_object_putp) struct json_object *meta = NULL;
	bool format_given = false, quiet = false, got_end = false;
	struct fgctl_conn conn;
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "p:o:f:qs:h", options, NULL)) >= 0) {
		r = query_option(c, &req.query, &since, &until, &last, &socket);
		if (r < 0)
			return FGCTL_EXIT_USAGE;
		if (r > 0)
			continue;
		switch (c) {
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
			       "\nThe profile fgd's always-on sampling kept in memory, at once: the whole\n"
			       "machine, or the selected processes.\n\n"
			       "  -o, --output FILE        where to write ('-' for stdout); the format follows\n"
			       "                           the extension (.svg, .html, .folded, .txt)\n"
			       "  -f, --format FORMAT      svg, html or folded\n"
			       "      --title TEXT         flame graph title\n"
			       "  -q, --quiet              no summary\n%s", query_help);
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
	if (query_range(&req.query, since, until, last) < 0)
		return FGCTL_EXIT_USAGE;
	r = fgctl_output_target(&out, format_given, &req.query.format);
	if (r != FGCTL_EXIT_OK)
		return r;
	r = connect_and_send(socket, &req, &conn);
	if (r != 0)
		return r;
	/* Opened only now: a query with no data leaves no empty file behind. */
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
			goto fail;
		}
		if (ev == FGCTL_EV_DATA) {
			r = fgctl_output_write(&out, data, len);
			if (r < 0) {
				fprintf(stderr, "fgctl: cannot write %s: %s\n", out.path, strerror(-r));
				r = FGCTL_EXIT_OUTPUT;
				goto fail;
			}
			continue;
		}
		type = fgctl_get_str(msg, "type");
		if (strcmp(type, "error") == 0) {
			r = error_reply(msg);
			goto fail;
		}
		if (strcmp(type, "result") == 0) {
			struct json_object *m;

			if (json_object_object_get_ex(msg, "meta", &m))
				meta = json_object_get(m);
			if (fgctl_output_open(&out) < 0) {
				r = FGCTL_EXIT_OUTPUT;
				goto fail;
			}
		} else if (strcmp(type, "end") == 0) {
			got_end = true;
			break;
		}
	}
	fgctl_disconnect(&conn);
	r = got_end ? fgctl_output_close(&out, true) : -EIO;
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
	}
	return FGCTL_EXIT_OK;
fail:
	fgctl_disconnect(&conn);
	if (out.fd >= 0)
		fgctl_output_close(&out, false);
	return r;
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
		return error_reply(msg);
	if (!json_object_object_get_ex(msg, "processes", &list) ||
	    !json_object_object_get_ex(msg, "meta", &meta)) {
		fprintf(stderr, "fgctl: malformed answer from fgd\n");
		return FGCTL_EXIT_FAILURE;
	}
	if (clear)
		printf("\033[H\033[2J");
	printf("always-on, %.0f s, %" PRId64 " samples at %" PRId64 " Hz; folded into [other]: %" PRId64
	       " samples\n\n", (double)fgctl_get_int(meta, "duration_ms") / 1000.0,
	       fgctl_get_int(meta, "samples"), fgctl_get_int(meta, "frequency"),
	       fgctl_get_int(meta, "folded_samples"));
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
	const char *since = NULL, *until = NULL, *last = "60s";
	uint32_t interval = 2, v;
	bool watch = false;
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "p:n:wi:s:h", options, NULL)) >= 0) {
		r = query_option(c, &req.query, &since, &until, &last, &socket);
		if (r < 0)
			return FGCTL_EXIT_USAGE;
		if (r > 0)
			continue;
		switch (c) {
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
			printf("Usage: fgctl top [--last SPAN] [-n N] [-w [-i SECONDS]] [SELECTORS]\n"
			       "\nProcesses by CPU share over the always-on window (default: the last\n"
			       "60 s), each with the frame most of its samples ended in.\n\n"
			       "  -n, --lines N            processes shown (default 20)\n"
			       "  -w, --watch              refresh like top until interrupted\n"
			       "  -i, --interval SECONDS   refresh interval with -w (default 2)\n%s", query_help);
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
	if (since)
		last = NULL;
	for (;;) {
		struct fg_request now = req;

		/* Relative times are relative to each refresh. */
		if (query_range(&now.query, since, until, last) < 0)
			return FGCTL_EXIT_USAGE;
		r = top_once(socket, &now, watch && isatty(STDOUT_FILENO));
		if (!watch || r != FGCTL_EXIT_OK)
			return r;
		sleep(interval);
	}
}
