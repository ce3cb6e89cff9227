/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "fgd-clock.h"
#include "fgd-loop.h"
#include "test.h"

/* Burns the CPU for ms without a system call that sleeps. */
static void spin_ms(uint64_t ms)
{
	uint64_t end = fgd_now() + ms * 1000000ULL;

	while (fgd_now() < end)
		;
}

TEST(turns_are_timed_and_the_recent_longest_kept_apart)
{
	struct fgd_loop *l;
	struct fgd_loop_stats st;

	ASSERT_OK(fgd_loop__new(&l));
	ASSERT_OK(fgd_loop__wait(l, 0));
	spin_ms(60);
	fgd_loop__turn_done(l);
	ASSERT_OK(fgd_loop__wait(l, 0));
	fgd_loop__turn_done(l);
	fgd_loop__stats(l, &st);
	ASSERT_EQ(st.iterations, 2);
	ASSERT_EQ(st.slow, 1);
	ASSERT_TRUE(st.longest_ns >= 60000000ULL);
	ASSERT_TRUE(st.recent_longest_ns >= 60000000ULL);
	ASSERT_EQ(st.realtime_priority, 0);
	fgd_loop__free(l);
}

/*
 * At real-time priority, a loop that does not sleep for RLIMIT_RTTIME is put
 * back to normal priority by SIGXCPU's handler and says so once. The test
 * lowers the limit to 100 ms (set_realtime keeps a lower one), so that
 * it spins that long rather than FGD_REALTIME_MAX_US.
 */
TEST(a_real_time_loop_that_spins_goes_back_to_normal_priority)
{
	struct rlimit rt = { .rlim_cur = 100000, .rlim_max = RLIM_INFINITY };
	struct fgd_loop *l;
	struct fgd_loop_stats st;
	uint64_t end;
	int r;

	ASSERT_OK(setrlimit(RLIMIT_RTTIME, &rt));
	ASSERT_OK(fgd_loop__new(&l));
	r = fgd_loop__set_realtime(l, 1);
	if (r == -EPERM) {
		fgd_loop__free(l);
		SKIP("real-time priority needs CAP_SYS_NICE or RLIMIT_RTPRIO");
	}
	ASSERT_OK(r);
	ASSERT_EQ(sched_getscheduler(0) & ~SCHED_RESET_ON_FORK, SCHED_FIFO);
	fgd_loop__stats(l, &st);
	ASSERT_EQ(st.realtime_priority, 1);
	ASSERT_TRUE(!fgd_loop__demoted(l));

	/* Past the limit the kernel sends SIGXCPU; the handler puts the thread back. */
	end = fgd_now() + 3000000000ULL;
	while (sched_getscheduler(0) != SCHED_OTHER && fgd_now() < end)
		spin_ms(10);
	ASSERT_EQ(sched_getscheduler(0), SCHED_OTHER);
	ASSERT_TRUE(fgd_loop__demoted(l));
	ASSERT_TRUE(!fgd_loop__demoted(l)); /* said once */
	fgd_loop__stats(l, &st);
	ASSERT_EQ(st.realtime_priority, 0);
	ASSERT_EQ(st.realtime_demotions, 1);

	/* Set again, and back to normal on request. */
	ASSERT_OK(fgd_loop__set_realtime(l, 2));
	fgd_loop__stats(l, &st);
	ASSERT_EQ(st.realtime_priority, 2);
	ASSERT_OK(fgd_loop__set_realtime(l, 0));
	ASSERT_EQ(sched_getscheduler(0), SCHED_OTHER);
	fgd_loop__free(l);
}
