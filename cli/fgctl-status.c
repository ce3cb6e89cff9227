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
#include "fgctl.h"
#include "proto/proto.h"
#include "proto/status.h"

int fgctl_verb_status(const struct fgctl_ctx *ctx, int argc, char **argv)
{
	static const struct option options[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	_cleanup_(json_object_putp) struct json_object *req = NULL, *reply = NULL;
	/* Declared after reply: its strings point into reply, so it goes first. */
	_cleanup_(fg_status_done) struct fg_status st = {};
	struct fgctl_conn conn;
	enum fgctl_event ev;
	const char *data, *socket = ctx->socket;
	bool json = false;
	size_t len;
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "js:h", options, NULL)) >= 0) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 's':
			socket = optarg;
			break;
		case 'h':
			printf("Usage: fgctl status [--json]\n\n"
			       "Shows what fgd is doing: the sampling event, recordings, clients, and every\n"
			       "counter of lost, dropped or malformed data.\n\n"
			       "      --json               the status as JSON on stdout: the reply fgd\n"
			       "                           sends, whose members docs/PROTOCOL.md describes\n");
			return FGCTL_EXIT_OK;
		default:
			fprintf(stderr, "Try 'fgctl status --help'.\n");
			return FGCTL_EXIT_USAGE;
		}
	}
	r = fgctl_connect(socket, &conn);
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
	if (json) {
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
