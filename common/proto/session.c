/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>

#include "base/macro.h"
#include "proto/session.h"

#define RUN                       \
	{                         \
		FG_SESSION_RUN, 0 \
	}
#define STOP                       \
	{                          \
		FG_SESSION_STOP, 0 \
	}
#define REFUSE(e)                      \
	{                              \
		FG_SESSION_REFUSE, (e) \
	}
#define DEFER                       \
	{                           \
		FG_SESSION_DEFER, 0 \
	}
#define IGNORE                       \
	{                            \
		FG_SESSION_IGNORE, 0 \
	}

/*
 * docs/PROTOCOL.md has this table in words; keep them together. The
 * reasons:
 *
 * - stop with nothing to stop is ENOENT: no recording on this connection
 *   (it never started one, or its recording ended and the result went out
 *   before the stop was read).
 * - While recording, status and top are one message each and go out at
 *   once, between progress messages. A second result cannot interleave with
 *   the recording's own, so snapshot and record are EBUSY. Nothing waits: a
 *   request left unread would hold up a stop sent after it.
 * - Finishing is the end of recording: its result is on its way, and a
 *   stop does not wait for the samples still waiting for binaries.
 * - While streaming, nothing is read: a request waits in the socket until
 *   the result has ended, so replies keep the order of the requests.
 * - A short connection is one let in past a full client table, when no
 *   idle connection could make room (fgd-server.c): it gets one request,
 *   and what answers at once from what fgd holds, status and top, runs;
 *   what would hold memory or a recording slot for long is EUSERS, as the
 *   full table would have been. Either way it closes after the reply, so
 *   the few short slots are free again at once.
 */
static const struct fg_session_rule rules[_FG_SESSION_STATE_MAX][FG_CMD_TOP + 1] = {
	[FG_SESSION_IDLE] = {
		[FG_CMD_STATUS] = RUN,
		[FG_CMD_RECORD] = RUN,
		[FG_CMD_STOP] = REFUSE(ENOENT),
		[FG_CMD_SNAPSHOT] = RUN,
		[FG_CMD_TOP] = RUN,
	},
	[FG_SESSION_SHORT] = {
		[FG_CMD_STATUS] = RUN,
		[FG_CMD_RECORD] = REFUSE(EUSERS),
		[FG_CMD_STOP] = REFUSE(ENOENT),
		[FG_CMD_SNAPSHOT] = REFUSE(EUSERS),
		[FG_CMD_TOP] = RUN,
	},
	[FG_SESSION_RECORDING] = {
		[FG_CMD_STATUS] = RUN,
		[FG_CMD_RECORD] = REFUSE(EBUSY),
		[FG_CMD_STOP] = STOP,
		[FG_CMD_SNAPSHOT] = REFUSE(EBUSY),
		[FG_CMD_TOP] = RUN,
	},
	[FG_SESSION_FINISHING] = {
		[FG_CMD_STATUS] = RUN,
		[FG_CMD_RECORD] = REFUSE(EBUSY),
		[FG_CMD_STOP] = STOP,
		[FG_CMD_SNAPSHOT] = REFUSE(EBUSY),
		[FG_CMD_TOP] = RUN,
	},
	[FG_SESSION_STREAMING] = {
		[FG_CMD_STATUS] = DEFER,
		[FG_CMD_RECORD] = DEFER,
		[FG_CMD_STOP] = DEFER,
		[FG_CMD_SNAPSHOT] = DEFER,
		[FG_CMD_TOP] = DEFER,
	},
	[FG_SESSION_CLOSING] = {
		[FG_CMD_STATUS] = IGNORE,
		[FG_CMD_RECORD] = IGNORE,
		[FG_CMD_STOP] = IGNORE,
		[FG_CMD_SNAPSHOT] = IGNORE,
		[FG_CMD_TOP] = IGNORE,
	},
};

bool fg_session_reads(enum fg_session_state state)
{
	return state == FG_SESSION_IDLE || state == FG_SESSION_SHORT ||
	       state == FG_SESSION_RECORDING || state == FG_SESSION_FINISHING;
}

bool fg_session_one_request(enum fg_session_state state)
{
	return state == FG_SESSION_SHORT;
}

struct fg_session_rule fg_session_rule(enum fg_session_state state, enum fg_cmd cmd)
{
	if ((unsigned)state >= _FG_SESSION_STATE_MAX || (unsigned)cmd > FG_CMD_TOP)
		return (struct fg_session_rule)REFUSE(EINVAL);
	return rules[state][cmd];
}

const char *fg_session_state_name(enum fg_session_state state)
{
	static const char *const names[_FG_SESSION_STATE_MAX] = {
		[FG_SESSION_IDLE] = "idle",           [FG_SESSION_SHORT] = "short",
		[FG_SESSION_RECORDING] = "recording", [FG_SESSION_FINISHING] = "finishing",
		[FG_SESSION_STREAMING] = "streaming", [FG_SESSION_CLOSING] = "closing",
	};

	return (unsigned)state < ELEMENTSOF(names) ? names[state] : NULL;
}
