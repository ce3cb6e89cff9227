/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One connection's conversation: what fgd does with each request in each
 * state of the connection, so that every request gets exactly one reply
 * (docs/PROTOCOL.md, "One reply per request"). A pure table: the daemon
 * keeps the state and carries the actions out; the unit tests read the
 * table back against the documentation.
 *
 * Requests are read in order. In the states that read (idle, short,
 * recording, finishing) each one is decided as it is read; a streaming connection reads
 * nothing until its result has ended, so a request sent meanwhile is decided
 * then, as on an idle connection, and its reply follows the result's "end";
 * a closing connection reads nothing more: the last message it was sent
 * said why it closes.
 */

#include <stdbool.h>

#include "proto/proto.h"

enum fg_session_state {
	FG_SESSION_IDLE,      /* waiting for a request */
	FG_SESSION_SHORT,     /* let in past a full client table: one request, status or top */
	FG_SESSION_RECORDING, /* a recording samples; its result will be the reply to record */
	FG_SESSION_FINISHING, /* stopped; its last samples wait for binaries being read */
	FG_SESSION_STREAMING, /* a result (a recording's or a snapshot's) is being sent */
	FG_SESSION_CLOSING,   /* flushing its last messages, then closed */
	_FG_SESSION_STATE_MAX,
};

enum fg_session_action {
	FG_SESSION_RUN,    /* carry the request out; its reply follows (one message, or a result) */
	FG_SESSION_STOP,   /* end the recording: its result answers both the record and this stop */
	FG_SESSION_REFUSE, /* answer with an error, the rule's errno, and carry on */
	FG_SESSION_DEFER,  /* not read yet: decided once the result has ended, as when idle */
	FG_SESSION_IGNORE, /* never read: the connection is closing */
};

struct fg_session_rule {
	enum fg_session_action action;
	int error; /* FG_SESSION_REFUSE: the errno the error reply names */
};

/* Whether a connection in state reads requests (and so decides them) now. */
bool fg_session_reads(enum fg_session_state state);
/* Whether a connection in state closes after its next reply, whatever the request was. */
bool fg_session_one_request(enum fg_session_state state);

/*
 * The rule for a request cmd arriving on a connection in state. A malformed
 * request has no cmd to decide by: every state that reads answers it with
 * its error.
 */
struct fg_session_rule fg_session_rule(enum fg_session_state state, enum fg_cmd cmd);

/* "idle", "short", "recording", "finishing", "streaming", "closing"; NULL out of range. */
const char *fg_session_state_name(enum fg_session_state state);
