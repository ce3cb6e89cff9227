/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The process frame split back: "comm", "comm-pid", "comm-pid/tid" (common/profile/procframe.h). */
#include <string.h>

#include "profile/procframe.h"
#include "test.h"

static void split(const char *frame, bool pid, bool tid, const char *comm, const char *want_pid,
		  const char *want_tid)
{
	struct fg_procframe pf;

	fg_procframe_split(frame, strlen(frame), pid, tid, &pf);
	ASSERT_EQ((int)pf.comm_len, (int)strlen(comm));
	ASSERT_TRUE(strncmp(frame, comm, pf.comm_len) == 0);
	ASSERT_TRUE((pf.pid == NULL) == (want_pid == NULL));
	if (want_pid)
		ASSERT_TRUE(pf.pid_len == strlen(want_pid) &&
			    memcmp(pf.pid, want_pid, pf.pid_len) == 0);
	ASSERT_TRUE((pf.tid == NULL) == (want_tid == NULL));
	if (want_tid)
		ASSERT_TRUE(pf.tid_len == strlen(want_tid) &&
			    memcmp(pf.tid, want_tid, pf.tid_len) == 0);
}

TEST(forms)
{
	split("python3", false, false, "python3", NULL, NULL);
	/* Without a form asked for, a comm that looks like one stays whole. */
	split("app-12", false, false, "app-12", NULL, NULL);
	split("app-12", true, false, "app", "12", NULL);
	/* The last dash: comms hold dashes and digits of their own. */
	split("my-app-2-12", true, false, "my-app-2", "12", NULL);
	split("my-app-12/345", false, true, "my-app", "12", "345");
	split("swapper-0/0", false, true, "swapper", "0", "0");
}

TEST(not_in_the_form_is_all_comm)
{
	split("[other processes]", true, false, "[other processes]", NULL, NULL);
	split("app-", true, false, "app-", NULL, NULL);
	split("app-12x", true, false, "app-12x", NULL, NULL);
	split("app-12345678901", true, false, "app-12345678901", NULL, NULL);
	split("app-12", false, true, "app-12", NULL, NULL);
	split("app-12/", false, true, "app-12/", NULL, NULL);
	split("app-/3", false, true, "app-/3", NULL, NULL);
	split("app-1/2", true, false, "app-1/2", NULL, NULL);
	/* An empty comm is a comm. */
	split("-5", true, false, "", "5", NULL);
}
