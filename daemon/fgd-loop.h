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

#include <stdbool.h>
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
	/* The longest within the last FGD_RECENT_NS to 2 * FGD_RECENT_NS: now, not at start-up. */
	uint64_t recent_longest_ns;
	/*
	 * The loop's thread's time ready to run but waiting for a CPU, since
	 * start (/proc/thread-self/schedstat; 0 if unknown): what a turn took
	 * beyond its work, on a machine busier than it has CPUs.
	 */
	uint64_t cpu_wait_ns;
	uint32_t realtime_priority;  /* SCHED_FIFO's, now; 0: the loop runs at normal priority */
	uint64_t realtime_demotions; /* times it ran FGD_REALTIME_MAX_US without sleeping */
};

/* What "recent" is for recent_longest_ns: whole periods of this. */
#define FGD_RECENT_NS (5ULL * 1000000000ULL)

/*
 * At real-time priority, the loop may run this long without sleeping:
 * past it the kernel says so (RLIMIT_RTTIME's SIGXCPU) and the loop goes
 * back to normal priority, so that a loop that spins cannot keep a CPU
 * from everything else. Its turns are bounded far below this.
 */
#define FGD_REALTIME_MAX_US (1000ULL * 1000ULL)

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

/* Call it on the loop's thread: cpu_wait_ns is the calling thread's. */
void fgd_loop__stats(const struct fgd_loop *l, struct fgd_loop_stats *ret);
struct fg_status_loop;
/* The loop's part of status ("loop"): its figures in the reply's units (ms); on its thread too. */
void fgd_loop__status(const struct fgd_loop *l, struct fg_status_loop *ret);

/*
 * Runs the calling thread, the loop's, at real-time priority (SCHED_FIFO,
 * 1 to 99; reset on fork), or back at normal priority with 0. On a machine
 * saturated by runnable threads (a storm of them) a thread at normal
 * priority waits for a CPU for as long as its share among them comes; the
 * loop's turns are bounded (no source, recording or client holds it long),
 * so running it first keeps it serving without taking a CPU from anyone
 * for long. Past FGD_REALTIME_MAX_US without sleeping it is put back to
 * normal priority, counted (RLIMIT_RTTIME, lowered to that if higher).
 * Other threads of the process (the loader) keep theirs. 0, or a negative
 * errno (-EPERM without CAP_SYS_NICE or RLIMIT_RTPRIO).
 */
int fgd_loop__set_realtime(struct fgd_loop *l, uint32_t priority);
/*
 * Whether the loop was put back to normal priority since the last call,
 * having run FGD_REALTIME_MAX_US without sleeping (for the caller to log).
 */
bool fgd_loop__demoted(struct fgd_loop *l);
