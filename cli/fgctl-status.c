/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fgctl status: what fgd is doing, with every counter of lost, dropped or
 * malformed data, decoded with common/proto/status.h and shown by
 * fgctl-display.c; or the reply itself, with --json.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "base/macro.h"
#include "fgctl-client.h"
#include "fgctl-display.h"
#include "fgctl-status.h"
#include "fgctl-verb.h"
#include "fgctl.h"
#include "proto/proto.h"
#include "proto/status.h"

static const struct option status_options[] = {
	{ "json", no_argument, NULL, FGCTL_OPT_JSON },
	{ "socket", required_argument, NULL, 's' },
	{ "help", no_argument, NULL, 'h' },
	{},
};

void fgctl_status_help(FILE *out)
{
	fputs("Usage: fgctl status [--json]\n\n"
	      "Shows what fgd is doing: the sampling event, recordings, clients, and every\n"
	      "counter of lost, dropped or malformed data.\n\n"
	      "      --json               the status as JSON on stdout: the reply fgd\n"
	      "                           sends, whose members docs/PROTOCOL.md describes\n",
	      out);
}

/* status has no options of its own: --json, -s and --help are the common ones. */
int fgctl_status_parse(const struct fgctl_ctx *ctx, int argc, char **argv, struct fgctl_common *co,
		       FILE *err)
{
	return fgctl_parse_options(ctx, argc, argv, "js:h", status_options, NULL, NULL, co, err);
}

int fgctl_verb_status(const struct fgctl_ctx *ctx, int argc, char **argv)
{
	_cleanup_(json_object_putp) struct json_object *req = NULL, *reply = NULL;
	/* Declared after reply: its strings point into reply, so it goes first. */
	_cleanup_(fg_status_done) struct fg_status st = {};
	struct fgctl_common co;
	struct fgctl_conn conn;
	enum fgctl_event ev;
	const char *data;
	size_t len;
	int r;

	r = fgctl_status_parse(ctx, argc, argv, &co, stderr);
	if (r != FGCTL_EXIT_OK)
		return r;
	if (co.help) {
		fgctl_status_help(stdout);
		return FGCTL_EXIT_OK;
	}
	r = fgctl_connect(co.socket, &conn);
	if (r < 0)
		return -r;
	req = fg_proto_new_request("status");
	r = req ? fgctl_send(&conn, req) : -ENOMEM;
	if (r < 0) {
		r = fgctl_send_failed(&conn, r);
		fgctl_disconnect(&conn);
		return r;
	}
	r = fgctl_next(&conn, &ev, &reply, &data, &len);
	fgctl_disconnect(&conn);
	if (r < 0 || ev != FGCTL_EV_MESSAGE) {
		fprintf(stderr, "fgctl: no status from fgd: %s\n",
			r < 0 ? strerror(-r) : "connection closed");
		return FGCTL_EXIT_FAILURE;
	}
	if (strcmp(fgctl_get_str(reply, "type"), "error") == 0) {
		fprintf(stderr, "fgctl: %s\n", fgctl_get_str(reply, "message"));
		return fgctl_exit_code_for(fgctl_get_str(reply, "error"));
	}
	/* As fgd sent it, members this fgctl does not know included: for scripts. */
	if (co.json) {
		printf("%s\n", json_object_to_json_string_ext(reply, JSON_C_TO_STRING_PRETTY));
		return FGCTL_EXIT_OK;
	}
	r = fg_status_from_json(reply, &st);
	if (r < 0) {
		fprintf(stderr, "fgctl: malformed status from fgd: %s\n", strerror(-r));
		return FGCTL_EXIT_FAILURE;
	}
	fgctl_show_status(stdout, &st);
	return FGCTL_EXIT_OK;
}
