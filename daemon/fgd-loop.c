/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>

#include "fgd-clock.h"
#include "fgd-loop.h"
#include "macro.h"

struct fgd_loop {
	int epoll_fd;  /* owned */
	uint64_t woke; /* CLOCK_MONOTONIC ns when the last wait returned */
	struct fgd_loop_stats stats;
};

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

	l->stats.iterations++;
	l->stats.longest_ns = MAX(l->stats.longest_ns, busy);
	l->stats.slow += busy > FGD_SLOW_ITERATION_NS;
}

void fgd_loop__stats(const struct fgd_loop *l, struct fgd_loop_stats *ret)
{
	*ret = l->stats;
}
