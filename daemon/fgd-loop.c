/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/macro.h"
#include "fgd-clock.h"
#include "fgd-loop.h"
#include "proto/status-types.h"

struct fgd_loop {
	int epoll_fd;  /* owned */
	uint64_t woke; /* CLOCK_MONOTONIC ns when the last wait returned */
	struct fgd_loop_stats stats;
	/* The longest turn of the FGD_RECENT_NS period being counted, and of the one before. */
	uint64_t period, period_longest, previous_longest;
};

/*
 * The loop's thread, at real-time priority, for the SIGXCPU handler: the
 * kernel sends it to the process, and any thread may take it. Process
 * state, as the signal is: one loop a process.
 */
static volatile pid_t realtime_tid;
static volatile sig_atomic_t demoted;

/* RLIMIT_RTTIME's SIGXCPU: the loop ran FGD_REALTIME_MAX_US without sleeping. */
static void on_sigxcpu(int sig)
{
	const struct sched_param normal = { 0 };
	int saved = errno;

	if (realtime_tid > 0 &&
	    syscall(SYS_sched_setscheduler, realtime_tid, SCHED_OTHER, &normal) == 0) {
		realtime_tid = 0;
		demoted = 1;
	}
	errno = saved;
}

int fgd_loop__new(struct fgd_loop **ret)
{
	struct fgd_loop *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	l->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epoll_fd < 0) {
		int r = negative_errno();

		free(l);
		return r;
	}
	*ret = l;
	return 0;
}

struct fgd_loop *fgd_loop__free(struct fgd_loop *l)
{
	if (!l)
		return NULL;
	safe_close(l->epoll_fd);
	free(l);
	return NULL;
}

int fgd_loop__add_fd(struct fgd_loop *l, int fd, struct fgd_watch *w, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = w };

	return epoll_ctl(l->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0 ? negative_errno() : 0;
}

void fgd_loop__del_fd(struct fgd_loop *l, int fd)
{
	if (fd >= 0)
		(void)epoll_ctl(l->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
}

int fgd_loop__add(struct fgd_loop *l, struct fgd_watch *w, uint32_t events)
{
	return fgd_loop__add_fd(l, w->fd, w, events);
}

int fgd_loop__mod(struct fgd_loop *l, struct fgd_watch *w, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = w };

	return epoll_ctl(l->epoll_fd, EPOLL_CTL_MOD, w->fd, &ev) < 0 ? negative_errno() : 0;
}

void fgd_loop__del(struct fgd_loop *l, struct fgd_watch *w)
{
	fgd_loop__del_fd(l, w->fd);
}

int fgd_loop__wait(struct fgd_loop *l, int timeout_ms)
{
	struct epoll_event evs[64];
	int n = epoll_wait(l->epoll_fd, evs, ELEMENTSOF(evs), timeout_ms);

	l->woke = fgd_now();
	if (n < 0)
		return errno == EINTR ? 0 : negative_errno();
	for (int i = 0; i < n; i++) {
		struct fgd_watch *w = evs[i].data.ptr;

		w->fn(w, evs[i].events);
	}
	return n;
}

void fgd_loop__turn_done(struct fgd_loop *l)
{
	/* Time away from the rings and the clients, whatever the cause: what status shows. */
	uint64_t busy = fgd_now() - l->woke;

	uint64_t period = l->woke / FGD_RECENT_NS;

	l->stats.iterations++;
	l->stats.longest_ns = MAX(l->stats.longest_ns, busy);
	l->stats.slow += busy > FGD_SLOW_ITERATION_NS;
	if (period != l->period) {
		l->previous_longest = period == l->period + 1 ? l->period_longest : 0;
		l->period_longest = 0;
		l->period = period;
	}
	l->period_longest = MAX(l->period_longest, busy);
}

/* The calling thread's time runnable but not running, from its schedstat ("run wait slices"). */
static uint64_t cpu_wait_ns(void)
{
	_cleanup_(fclosep) FILE *f = fopen("/proc/thread-self/schedstat", "re");
	unsigned long long run, wait;

	if (!f || fscanf(f, "%llu %llu", &run, &wait) != 2)
		return 0;
	return wait;
}

void fgd_loop__stats(const struct fgd_loop *l, struct fgd_loop_stats *ret)
{
	uint64_t period = fgd_now() / FGD_RECENT_NS;

	*ret = l->stats;
	/* Periods that passed without a turn held none. */
	ret->recent_longest_ns = period == l->period ? MAX(l->period_longest, l->previous_longest) :
				 period == l->period + 1 ? l->period_longest :
							   0;
	ret->cpu_wait_ns = cpu_wait_ns();
	ret->realtime_priority = realtime_tid ? l->stats.realtime_priority : 0;
}

void fgd_loop__status(const struct fgd_loop *l, struct fg_status_loop *ret)
{
	struct fgd_loop_stats st;

	fgd_loop__stats(l, &st);
	*ret = (struct fg_status_loop){
		.iterations = st.iterations,
		.longest_ms = st.longest_ns / 1000000,
		.recent_longest_ms = st.recent_longest_ns / 1000000,
		.cpu_wait_ms = st.cpu_wait_ns / 1000000,
		.realtime_priority = st.realtime_priority,
		.realtime_demotions = st.realtime_demotions,
		.slow = st.slow,
		.slow_ms = FGD_SLOW_ITERATION_NS / 1000000,
	};
}

int fgd_loop__set_realtime(struct fgd_loop *l, uint32_t priority)
{
	struct sched_param param = { .sched_priority = (int)priority };
	struct sigaction sa = { .sa_handler = on_sigxcpu };
	struct rlimit rt;

	if (priority == 0) {
		realtime_tid = 0;
		l->stats.realtime_priority = 0;
		return sched_setscheduler(0, SCHED_OTHER, &param) < 0 ? negative_errno() : 0;
	}
	/* The limit first: the loop is never real-time without it. */
	if (getrlimit(RLIMIT_RTTIME, &rt) < 0)
		return negative_errno();
	if (rt.rlim_cur == RLIM_INFINITY || rt.rlim_cur > FGD_REALTIME_MAX_US) {
		/* Only the soft limit, which the handler answers: the hard one would kill. */
		rt.rlim_cur = MIN((rlim_t)FGD_REALTIME_MAX_US, rt.rlim_max);
		if (setrlimit(RLIMIT_RTTIME, &rt) < 0)
			return negative_errno();
	}
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGXCPU, &sa, NULL) < 0)
		return negative_errno();
	realtime_tid = (pid_t)syscall(SYS_gettid);
	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &param) < 0) {
		int r = negative_errno();

		realtime_tid = 0;
		return r;
	}
	l->stats.realtime_priority = priority;
	return 0;
}

bool fgd_loop__demoted(struct fgd_loop *l)
{
	if (!demoted)
		return false;
	demoted = 0;
	l->stats.realtime_demotions++;
	l->stats.realtime_priority = 0;
	return true;
}
