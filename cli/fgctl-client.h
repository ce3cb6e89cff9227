/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * fgctl's side of the protocol: a blocking connection that sends a request
 * and then yields the daemon's messages and result bytes one by one, while
 * watching for Ctrl-C.
 */

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "proto/proto.h"

/* Exit codes, documented in fgctl(1). */
enum {
	FGCTL_EXIT_OK = 0,
	FGCTL_EXIT_FAILURE = 1,
	FGCTL_EXIT_USAGE = 2,
	FGCTL_EXIT_NO_DAEMON = 3,
	FGCTL_EXIT_DENIED = 4,
	FGCTL_EXIT_NO_PROCESS = 5,
	FGCTL_EXIT_OUTPUT = 6,
	FGCTL_EXIT_INPUT = 7, /* unreadable, malformed (--strict) or empty input */
	FGCTL_EXIT_INTERRUPTED = 130,
};

struct fgctl_conn {
	int fd;
	int signal_fd; /* SIGINT and SIGTERM, blocked and read here */
	struct fg_proto_reader in;
	bool eof;
};

/*
 * Connects to the daemon at path. On failure prints why (daemon not
 * running, permission denied, ...) and returns the exit code to use, as a
 * negative number; 0 on success.
 */
int fgctl_connect(const char *path, struct fgctl_conn *ret);
/*
 * Waits ms for SIGINT or SIGTERM, which it blocks first (as fgctl_connect()
 * does, so one that comes meanwhile waits for the next wait or query):
 * true if one came, false once ms passed.
 */
bool fgctl_wait_for_signal(int64_t ms);
void fgctl_disconnect(struct fgctl_conn *c);

/* Sends one message. 0 or a negative errno. */
int fgctl_send(struct fgctl_conn *c, struct json_object *msg);

enum fgctl_event {
	FGCTL_EV_MESSAGE, /* *ret_msg holds a new reference */
	FGCTL_EV_DATA,    /* result bytes in *ret_data, *ret_len; borrowed until the next call */
	FGCTL_EV_SIGNAL,  /* Ctrl-C (or SIGTERM) */
	FGCTL_EV_EOF,     /* the daemon closed the connection */
};

/* Waits for the next event. 0 or a negative errno (malformed message: -EBADMSG). */
int fgctl_next(struct fgctl_conn *c, enum fgctl_event *ret_ev, struct json_object **ret_msg,
	       const char **ret_data, size_t *ret_len);

/*
 * After a failed send: fgd may have refused the connection with a reason
 * before closing it. Prints that reason and returns its exit code, or prints
 * the send error and returns FGCTL_EXIT_FAILURE.
 */
int fgctl_send_failed(struct fgctl_conn *c, int err);

/* Exit code for an error reply's errno name. */
int fgctl_exit_code_for(const char *errno_name);
