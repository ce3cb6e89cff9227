/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "base/macro.h"
#include "proto/session.h"
#include "test.h"

#define N_CMDS (FG_CMD_TOP + 1)

/* The table of docs/PROTOCOL.md ("One reply per request"), written out again. */
static const struct {
	enum fg_session_state state;
	enum fg_cmd cmd;
	enum fg_session_action action;
	int error;
} documented[] = {
	{ FG_SESSION_IDLE, FG_CMD_STATUS, FG_SESSION_RUN, 0 },
	{ FG_SESSION_IDLE, FG_CMD_TOP, FG_SESSION_RUN, 0 },
	{ FG_SESSION_IDLE, FG_CMD_SNAPSHOT, FG_SESSION_RUN, 0 },
	{ FG_SESSION_IDLE, FG_CMD_RECORD, FG_SESSION_RUN, 0 },
	{ FG_SESSION_IDLE, FG_CMD_STOP, FG_SESSION_REFUSE, ENOENT },
	{ FG_SESSION_SHORT, FG_CMD_STATUS, FG_SESSION_RUN, 0 },
	{ FG_SESSION_SHORT, FG_CMD_TOP, FG_SESSION_RUN, 0 },
	{ FG_SESSION_SHORT, FG_CMD_SNAPSHOT, FG_SESSION_REFUSE, EUSERS },
	{ FG_SESSION_SHORT, FG_CMD_RECORD, FG_SESSION_REFUSE, EUSERS },
	{ FG_SESSION_SHORT, FG_CMD_STOP, FG_SESSION_REFUSE, ENOENT },
	{ FG_SESSION_RECORDING, FG_CMD_STATUS, FG_SESSION_RUN, 0 },
	{ FG_SESSION_RECORDING, FG_CMD_TOP, FG_SESSION_RUN, 0 },
	{ FG_SESSION_RECORDING, FG_CMD_SNAPSHOT, FG_SESSION_REFUSE, EBUSY },
	{ FG_SESSION_RECORDING, FG_CMD_RECORD, FG_SESSION_REFUSE, EBUSY },
	{ FG_SESSION_RECORDING, FG_CMD_STOP, FG_SESSION_STOP, 0 },
	{ FG_SESSION_FINISHING, FG_CMD_STATUS, FG_SESSION_RUN, 0 },
	{ FG_SESSION_FINISHING, FG_CMD_TOP, FG_SESSION_RUN, 0 },
	{ FG_SESSION_FINISHING, FG_CMD_SNAPSHOT, FG_SESSION_REFUSE, EBUSY },
	{ FG_SESSION_FINISHING, FG_CMD_RECORD, FG_SESSION_REFUSE, EBUSY },
	{ FG_SESSION_FINISHING, FG_CMD_STOP, FG_SESSION_STOP, 0 },
	{ FG_SESSION_STREAMING, FG_CMD_STATUS, FG_SESSION_DEFER, 0 },
	{ FG_SESSION_STREAMING, FG_CMD_TOP, FG_SESSION_DEFER, 0 },
	{ FG_SESSION_STREAMING, FG_CMD_SNAPSHOT, FG_SESSION_DEFER, 0 },
	{ FG_SESSION_STREAMING, FG_CMD_RECORD, FG_SESSION_DEFER, 0 },
	{ FG_SESSION_STREAMING, FG_CMD_STOP, FG_SESSION_DEFER, 0 },
	{ FG_SESSION_CLOSING, FG_CMD_STATUS, FG_SESSION_IGNORE, 0 },
	{ FG_SESSION_CLOSING, FG_CMD_TOP, FG_SESSION_IGNORE, 0 },
	{ FG_SESSION_CLOSING, FG_CMD_SNAPSHOT, FG_SESSION_IGNORE, 0 },
	{ FG_SESSION_CLOSING, FG_CMD_RECORD, FG_SESSION_IGNORE, 0 },
	{ FG_SESSION_CLOSING, FG_CMD_STOP, FG_SESSION_IGNORE, 0 },
};

TEST(every_command_in_every_state_is_documented)
{
	bool seen[_FG_SESSION_STATE_MAX][N_CMDS] = {};

	for (size_t i = 0; i < ELEMENTSOF(documented); i++) {
		struct fg_session_rule r = fg_session_rule(documented[i].state, documented[i].cmd);

		ASSERT_EQ(r.action, documented[i].action);
		ASSERT_EQ(r.error, documented[i].error);
		seen[documented[i].state][documented[i].cmd] = true;
	}
	for (int s = 0; s < _FG_SESSION_STATE_MAX; s++)
		for (int c = 0; c < N_CMDS; c++)
			ASSERT_TRUE(seen[s][c]);
}

/* Where a request is decided, the decision is a reply; where not, it is not read at all. */
TEST(a_request_read_is_a_request_answered)
{
	for (int s = 0; s < _FG_SESSION_STATE_MAX; s++) {
		for (int c = 0; c < N_CMDS; c++) {
			struct fg_session_rule r = fg_session_rule(s, c);

			if (fg_session_reads(s)) {
				ASSERT_TRUE(r.action == FG_SESSION_RUN ||
					    r.action == FG_SESSION_STOP ||
					    r.action == FG_SESSION_REFUSE);
			} else {
				ASSERT_TRUE(r.action == FG_SESSION_DEFER ||
					    r.action == FG_SESSION_IGNORE);
			}
			/* An error reply names its errno, which clients read by name. */
			if (r.action == FG_SESSION_REFUSE)
				ASSERT_TRUE(r.error > 0 && fg_errno_name(r.error) != NULL);
			else
				ASSERT_EQ(r.error, 0);
			/* Only a recording not yet complete can be stopped. */
			ASSERT_EQ(r.action == FG_SESSION_STOP,
				  (s == FG_SESSION_RECORDING || s == FG_SESSION_FINISHING) &&
					  c == FG_CMD_STOP);
		}
	}
}

/* A short slot is held for one reply only; nothing else closes a connection by itself. */
TEST(only_a_short_connection_closes_after_its_reply)
{
	for (int s = 0; s < _FG_SESSION_STATE_MAX; s++)
		ASSERT_EQ(fg_session_one_request(s), s == FG_SESSION_SHORT);
}

TEST(only_idle_short_recording_and_finishing_connections_read)
{
	ASSERT_TRUE(fg_session_reads(FG_SESSION_IDLE));
	ASSERT_TRUE(fg_session_reads(FG_SESSION_SHORT));
	ASSERT_TRUE(fg_session_reads(FG_SESSION_FINISHING));
	ASSERT_TRUE(fg_session_reads(FG_SESSION_RECORDING));
	ASSERT_TRUE(!fg_session_reads(FG_SESSION_STREAMING));
	ASSERT_TRUE(!fg_session_reads(FG_SESSION_CLOSING));
}

TEST(out_of_range_is_refused)
{
	struct fg_session_rule r = fg_session_rule(_FG_SESSION_STATE_MAX, FG_CMD_STATUS);

	ASSERT_EQ(r.action, FG_SESSION_REFUSE);
	ASSERT_EQ(r.error, EINVAL);
	r = fg_session_rule(FG_SESSION_IDLE, (enum fg_cmd)(FG_CMD_TOP + 1));
	ASSERT_EQ(r.action, FG_SESSION_REFUSE);
	ASSERT_STREQ(fg_session_state_name(FG_SESSION_STREAMING), "streaming");
	ASSERT_TRUE(fg_session_state_name(_FG_SESSION_STATE_MAX) == NULL);
}
