/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/macro.h"
#include "base/parse.h"
#include "fgctl-client.h"
#include "fgctl-display.h"
#include "fgctl-query.h"
#include "proto/proto.h"
#include "proto/when.h"

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

const char fgctl_query_period_help[] =
	"      --last SPAN          the last SPAN: 30s, 5m, 1h30m\n"
	"      --since TIME         from TIME: HH:MM[:SS[.fff]] (the latest such time),\n"
	"                           ISO 8601 (2024-03-10T03:10, with Z or +01:00 for a\n"
	"                           zone), relative (-10m), or Unix seconds (1764205200.250,\n"
	"                           @1764205200); to the millisecond\n"
	"      --until TIME         up to TIME (default: now)\n";

const char fgctl_query_selector_help[] =
	"  -p, --pid PID            only this process\n"
	"      --comm REGEX         only processes whose name matches (extended regex)\n"
	"      --uid UID            only this user's processes\n"
	"      --cgroup PATH        only processes in this cgroup or below it\n"
	"      --exe PATH           only this executable (full path or file name)\n";

const char fgctl_query_help_tail[] =
	"  -s, --socket PATH        fgd's socket\n"
	"Selectors combine. Non-root users see only their own processes, unless they\n"
	"are in fgd's reader group (fgd(8), ACCESS CONTROL).\n";

int fgctl_query_option(int c, const char *arg, struct fg_query_request *q,
		       struct fgctl_period *period, FILE *err)
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
			fprintf(err, "fgctl: invalid pid '%s'\n", arg);
			return -1;
		}
		q->pid = (pid_t)v;
		return 1;
	case FGCTL_OPT_UID:
		if (fg_parse_u32(arg, 0, UINT32_MAX - 1, &v) < 0) {
			fprintf(err, "fgctl: invalid uid '%s'\n", arg);
			return -1;
		}
		q->uid = v;
		return 1;
	case FGCTL_OPT_COMM:
	case FGCTL_OPT_CGROUP:
	case FGCTL_OPT_EXE: {
		char *dst = c == FGCTL_OPT_COMM   ? q->comm :
			    c == FGCTL_OPT_CGROUP ? q->cgroup :
						    q->exe;

		if (strlen(arg) > FG_PROTO_MAX_SELECTOR) {
			fprintf(err, "fgctl: selector too long (at most %d bytes)\n",
				FG_PROTO_MAX_SELECTOR);
			return -1;
		}
		strcpy(dst, arg);
		return 1;
	}
	}
	return 0;
}

int fgctl_time_arg(const char *arg, int64_t *ret_ms, FILE *err)
{
	if (fg_parse_time(arg, now_ms(), utc_offset(), ret_ms) < 0) {
		fprintf(err,
			"fgctl: invalid time '%s': expected HH:MM[:SS[.fff]], ISO 8601, -10m, now, "
			"or Unix seconds (1764205200.250)\n",
			arg);
		return -EINVAL;
	}
	return 0;
}

int fgctl_query_range(struct fg_query_request *q, const struct fgctl_period *period,
		      const char *last_default, FILE *err)
{
	const char *since = period->since, *until = period->until;
	const char *last = period->last ? period->last : last_default;
	int64_t now = now_ms(), t;
	uint64_t span;

	if (period->last && since) {
		fprintf(err, "fgctl: give --last or --since, not both\n");
		return -EINVAL;
	}
	if (until) {
		if (fgctl_time_arg(until, &t, err) < 0)
			return -EINVAL;
		q->until_ms = t;
	}
	if (since) {
		if (fgctl_time_arg(since, &t, err) < 0)
			return -EINVAL;
		q->since_ms = t;
	} else {
		if (fg_parse_span(last, &span) < 0) {
			fprintf(err, "fgctl: invalid span '%s': expected e.g. 30s, 5m, 1h\n", last);
			return -EINVAL;
		}
		q->since_ms = (q->until_ms ? q->until_ms : now) - (int64_t)span;
	}
	if (q->since_ms < 0)
		q->since_ms = 0;
	if (q->until_ms && q->until_ms <= q->since_ms) {
		fprintf(err, "fgctl: the period ends before it starts\n");
		return -EINVAL;
	}
	return 0;
}

int fgctl_query_send(const char *socket, const struct fg_request *req, struct fgctl_conn *conn)
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

int fgctl_query_error(struct json_object *msg, const char *label)
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

	r = fgctl_query_send(socket, req, &conn);
	if (r != 0)
		return r;
	for (;;) {
		_cleanup_(json_object_putp) struct json_object *msg = NULL;
		enum fgctl_event ev;
		const char *data, *type;
		size_t len;

		r = fgctl_next(&conn, &ev, &msg, &data, &len);
		if (r < 0 || ev == FGCTL_EV_EOF || ev == FGCTL_EV_SIGNAL) {
			fprintf(stderr, "fgctl: %s\n",
				r < 0                 ? strerror(-r) :
				ev == FGCTL_EV_SIGNAL ? "interrupted; nothing written" :
							"fgd closed the connection early");
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
			r = fgctl_query_error(msg, label);
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
