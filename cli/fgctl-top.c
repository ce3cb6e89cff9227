/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fgctl top: processes by CPU share over a period of fgd's always-on
 * sampling, once or refreshed like top.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/macro.h"
#include "base/parse.h"
#include "base/utf8.h"
#include "fgctl-client.h"
#include "fgctl-display.h"
#include "fgctl-query.h"
#include "fgctl-top.h"
#include "fgctl-verb.h"
#include "fgctl.h"
#include "proto/proto.h"

static int top_once(const char *socket, const struct fg_request *req, bool clear, bool json)
{
	_cleanup_(json_object_putp) struct json_object *msg = NULL;
	_cleanup_(fg_snapshot_meta_done) struct fg_snapshot_meta m = {};
	struct json_object *list, *meta;
	struct fgctl_conn conn;
	enum fgctl_event ev;
	const char *data;
	size_t len;
	int r;

	r = fgctl_query_send(socket, req, &conn);
	if (r != 0)
		return r;
	r = fgctl_next(&conn, &ev, &msg, &data, &len);
	fgctl_disconnect(&conn);
	if (r >= 0 && ev == FGCTL_EV_SIGNAL)
		return FGCTL_EXIT_INTERRUPTED;
	if (r < 0 || ev != FGCTL_EV_MESSAGE) {
		fprintf(stderr, "fgctl: no answer from fgd\n");
		return FGCTL_EXIT_FAILURE;
	}
	if (strcmp(fgctl_get_str(msg, "type"), "error") == 0)
		return fgctl_query_error(msg, NULL);
	if (!json_object_object_get_ex(msg, "processes", &list) ||
	    !json_object_object_get_ex(msg, "meta", &meta)) {
		fprintf(stderr, "fgctl: malformed answer from fgd\n");
		return FGCTL_EXIT_FAILURE;
	}
	/* The reply itself for scripts (docs/PROTOCOL.md): pretty once, a line per refresh. */
	if (json) {
		printf("%s\n",
		       json_object_to_json_string_ext(msg, clear ? JSON_C_TO_STRING_PLAIN :
								   JSON_C_TO_STRING_PRETTY));
		fflush(stdout);
		return FGCTL_EXIT_OK;
	}
	if (clear) {
		/* Cleared before a warning that the metadata does not decode, not after. */
		printf("\033[H\033[2J");
		fflush(stdout);
	}
	fgctl_snapshot_meta(stderr, meta, &m);
	printf("always-on, %g s, %" PRIu64 " samples at %" PRIu32
	       " Hz; folded into [other]: %" PRIu64 " samples\n\n",
	       (double)m.covered_ms / 1000.0, m.samples, m.frequency, m.folded_samples);
	fgctl_note_kernel_hidden(stderr, m.kernel_hidden);
	fgctl_note_untimed(stderr, m.untimed_slices);
	fgctl_note_missing(stderr, NULL, &m.missing);
	if (m.dropped_samples || m.dropped_leaf_samples)
		fprintf(stderr,
			"fgctl: too many processes in that period for fgd's top list: %" PRIu64
			" samples left out, %" PRIu64 " counted without their leaf\n",
			m.dropped_samples, m.dropped_leaf_samples);
	printf("%8s %6s %-16s %7s %8s  %s\n", "PID", "UID", "COMM", "CPU%", "SAMPLES",
	       "HOTTEST LEAF");
	for (size_t i = 0; i < json_object_array_length(list); i++) {
		struct json_object *e = json_object_array_get_idx(list, i), *v;
		double pct =
			json_object_object_get_ex(e, "cpu_pct", &v) ? json_object_get_double(v) : 0;

		const char *comm = fgctl_get_str(e, "comm");
		size_t comm_len = strlen(comm), cut = 0, chars = 0;
		uint32_t cp;

		/*
		 * 16 characters of the name, not 16 bytes: a cut through a character
		 * (fgd sends U+FFFD for a name's bytes that are not UTF-8) would make
		 * the line no longer UTF-8.
		 */
		for (; cut < comm_len && chars < 16; chars++)
			cut += fg_utf8_next((const unsigned char *)comm + cut, comm_len - cut, &cp);
		printf("%8" PRId64 " %6" PRId64 " %.*s%*s %6.1f%% %8" PRId64 "  %s\n",
		       fgctl_get_int(e, "pid"), fgctl_get_int(e, "uid"), (int)cut, comm,
		       (int)(16 - chars), "", pct, fgctl_get_int(e, "samples"),
		       fgctl_get_str(e, "leaf"));
	}
	fflush(stdout);
	return FGCTL_EXIT_OK;
}

static const struct option top_options[] = {
	FGCTL_QUERY_VERB_OPTIONS,
	{ "lines", required_argument, NULL, 'n' },
	{ "watch", no_argument, NULL, 'w' },
	{ "interval", required_argument, NULL, 'i' },
	{ "json", no_argument, NULL, FGCTL_OPT_JSON },
	{},
};

void fgctl_top_help(FILE *out)
{
	fprintf(out,
		"Usage: fgctl top [--last SPAN | --since TIME [--until TIME]] [-n N]\n"
		"                 [-w [-i SECONDS]] [SELECTORS]\n"
		"\nProcesses by CPU share over a period (default: the last 60 s) of fgd's\n"
		"always-on sampling, from memory and, for older times, from the history on\n"
		"disk; each with the frame most of its samples ended in. A process is one\n"
		"row however many slices it spans.\n\n"
		"  -n, --lines N            processes shown (default 20)\n"
		"  -w, --watch              refresh like top until interrupted\n"
		"  -i, --interval SECONDS   refresh interval with -w (default 2)\n"
		"      --json               fgd's answer as JSON (a line per refresh with -w)\n%s%s%s",
		fgctl_query_period_help, fgctl_query_selector_help, fgctl_query_help_tail);
}

static int top_option(void *args, int c, const char *arg, FILE *err)
{
	struct fgctl_top_args *a = args;
	uint32_t v;
	int r;

	r = fgctl_query_option(c, arg, &a->req.query, &a->period, err);
	if (r != 0)
		return r;
	switch (c) {
	case 'n':
		if (fg_parse_u32(arg, 1, FG_PROTO_MAX_TOP, &v) < 0) {
			fprintf(err, "fgctl: invalid count '%s': 1 to %d\n", arg, FG_PROTO_MAX_TOP);
			return -1;
		}
		a->req.query.limit = v;
		return 1;
	case 'w':
		a->watch = true;
		return 1;
	case 'i':
		if (fg_parse_u32(arg, 1, 3600, &a->interval) < 0) {
			fprintf(err, "fgctl: invalid interval '%s'\n", arg);
			return -1;
		}
		return 1;
	}
	return 0;
}

int fgctl_top_parse(const struct fgctl_ctx *ctx, int argc, char **argv, struct fgctl_top_args *a,
		    FILE *err)
{
	int r;

	*a = (struct fgctl_top_args){
		.req = { .cmd = FG_CMD_TOP, .query = { .uid = -1, .limit = 20 } },
		.interval = 2,
	};
	r = fgctl_parse_options(ctx, argc, argv, "p:n:wi:s:h", top_options, top_option, a, &a->co,
				err);
	if (r != FGCTL_EXIT_OK || a->co.help)
		return r;
	return fgctl_no_operands(&a->co, err);
}

int fgctl_verb_top(const struct fgctl_ctx *ctx, int argc, char **argv)
{
	struct fgctl_top_args a;
	int r;

	r = fgctl_top_parse(ctx, argc, argv, &a, stderr);
	if (r != FGCTL_EXIT_OK)
		return r;
	if (a.co.help) {
		fgctl_top_help(stdout);
		return FGCTL_EXIT_OK;
	}
	for (;;) {
		struct fg_request now = a.req;

		/* Relative times are relative to each refresh. */
		if (fgctl_query_range(&now.query, &a.period, "60s", stderr) < 0)
			return FGCTL_EXIT_USAGE;
		/* --watch --json: one JSON line a refresh, never a cleared screen. */
		r = top_once(a.co.socket, &now, a.watch && (a.co.json || isatty(STDOUT_FILENO)),
			     a.co.json);
		/* Watching ends with Ctrl-C (or SIGTERM), as top does: not an error. */
		if (a.watch && r == FGCTL_EXIT_INTERRUPTED)
			return FGCTL_EXIT_OK;
		if (!a.watch || r != FGCTL_EXIT_OK)
			return r;
		if (fgctl_wait_for_signal((int64_t)a.interval * 1000))
			return FGCTL_EXIT_OK;
	}
}
