/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The daemon's one event loop: epoll over watches, each a file descriptor
 * with a handler. It knows nothing of profiling: the engine, the server and
 * fgd.c register what they wait for, and fgd.c runs it.
 *
 * A watch is embedded in its owner's struct; the owner finds itself from
 * the watch pointer the handler gets (container_of), and must delete the
 * watch before it frees it.
 */

#include <stdint.h>

struct fgd_watch;
typedef void (*fgd_watch_fn)(struct fgd_watch *w, uint32_t events);

struct fgd_watch {
	int fd;
	fgd_watch_fn fn;
};

/* How long the loop is away from its file descriptors (status "loop"). */
struct fgd_loop_stats {
	uint64_t iterations;
	uint64_t slow;       /* iterations longer than FGD_SLOW_ITERATION_NS */
	uint64_t longest_ns; /* the longest iteration, wall clock */
};

/*
 * One turn of the loop that takes longer than this is slow: a status
 * request waits that long, and so do the rings.
 */
#define FGD_SLOW_ITERATION_NS (50ULL * 1000000ULL)

struct fgd_loop;

/* Caller frees *ret with fgd_loop__free(). 0 or a negative errno. */
int fgd_loop__new(struct fgd_loop **ret);
struct fgd_loop *fgd_loop__free(struct fgd_loop *l);

/* Adds, changes or removes w->fd with the epoll events. 0 or a negative errno. */
int fgd_loop__add(struct fgd_loop *l, struct fgd_watch *w, uint32_t events);
int fgd_loop__mod(struct fgd_loop *l, struct fgd_watch *w, uint32_t events);
void fgd_loop__del(struct fgd_loop *l, struct fgd_watch *w);

/*
 * Several fds on one watch (the perf rings of an event set share their
 * owner's): add each with fgd_loop__add_fd(), remove with fgd_loop__del_fd().
 */
int fgd_loop__add_fd(struct fgd_loop *l, int fd, struct fgd_watch *w, uint32_t events);
void fgd_loop__del_fd(struct fgd_loop *l, int fd);

/*
 * Waits up to timeout_ms (-1: for ever) and calls the handlers of the
 * watches that are ready. Returns how many were, 0 on a timeout or a
 * signal, or a negative errno.
 */
int fgd_loop__wait(struct fgd_loop *l, int timeout_ms);

/*
 * Marks the end of one turn of the caller's loop, begun when the last
 * fgd_loop__wait() returned: what status reports as the loop's turns.
 */
void fgd_loop__turn_done(struct fgd_loop *l);

void fgd_loop__stats(const struct fgd_loop *l, struct fgd_loop_stats *ret);
