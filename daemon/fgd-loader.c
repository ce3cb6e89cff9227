/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base/macro.h"
#include "fgd-clock.h"
#include "fgd-loader.h"
#include "proto/status-types.h"

/* A FIFO of jobs linked through job->next. */
struct queue {
	struct fg_loader_job *head, *tail;
};

struct fg_loader {
	pthread_t thread;
	bool started;
	int event_fd; /* owned: the worker's "finished jobs wait" signal to the loop */

	/* The loop's thread only. */
	uint64_t submitted, completed;
	bool held;        /* fg_loader__hold(): jobs queue, the worker is not woken yet */
	bool unsignalled; /* a job was queued while held */

	/* Shared with the worker: only under lock. */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop;
	struct queue todo, finished;
	struct fg_loader_stats stats;
};

static void push(struct queue *q, struct fg_loader_job *job)
{
	job->next = NULL;
	if (q->tail)
		q->tail->next = job;
	else
		q->head = job;
	q->tail = job;
}

static struct fg_loader_job *pop(struct queue *q)
{
	struct fg_loader_job *job = q->head;

	if (job) {
		q->head = job->next;
		if (!q->head)
			q->tail = NULL;
	}
	return job;
}

/*
 * The worker keeps the process's priority. Niced down, it would hold locks
 * the loop also takes (malloc's arenas, which malloc_trim() walks) while
 * the scheduler kept it off the CPU, and the loop would wait for it.
 */
static void *worker(void *arg)
{
	struct fg_loader *l = arg;
	uint64_t one = 1;

	pthread_mutex_lock(&l->lock);
	for (;;) {
		struct fg_loader_job *job;
		uint64_t t0, took;
		bool tell;

		while (!l->stop && !l->todo.head)
			pthread_cond_wait(&l->wake, &l->lock);
		if (l->stop)
			break;
		job = pop(&l->todo);
		pthread_mutex_unlock(&l->lock);

		t0 = fgd_now();
		job->work(job);
		took = fgd_now() - t0;

		pthread_mutex_lock(&l->lock);
		l->stats.busy_ns += took;
		l->stats.longest_job_ns = MAX(l->stats.longest_job_ns, took);
		/*
		 * Onto a queue already waiting, the loop has been told and takes this
		 * job with the others (fg_loader__complete() takes the whole queue):
		 * one wakeup for a run of short jobs, not one each.
		 */
		tell = !l->finished.head;
		push(&l->finished, job);
		pthread_mutex_unlock(&l->lock);
		/*
		 * Outside the lock: the write wakes the loop, which takes the lock at
		 * once, and must not find it held by a thread the scheduler just
		 * set aside. A full counter (never, in practice) still leaves the fd
		 * readable.
		 */
		if (tell)
			(void)!write(l->event_fd, &one, sizeof(one));
		pthread_mutex_lock(&l->lock);
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

int fg_loader__new(struct fg_loader **ret)
{
	struct fg_loader *l = calloc(1, sizeof(*l));
	sigset_t all, old;
	int r;

	if (!l)
		return -ENOMEM;
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->wake, NULL);
	l->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (l->event_fd < 0) {
		r = negative_errno();
		fg_loader__free(l);
		return r;
	}
	/* Signals are the loop's (signalfd): the worker must never be the thread that takes one. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = -pthread_create(&l->thread, NULL, worker, l);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		fg_loader__free(l);
		return r;
	}
	l->started = true;
	*ret = l;
	return 0;
}

struct fg_loader *fg_loader__free(struct fg_loader *l)
{
	struct fg_loader_job *job;

	if (!l)
		return NULL;
	if (l->started) {
		pthread_mutex_lock(&l->lock);
		l->stop = true;
		pthread_cond_signal(&l->wake);
		pthread_mutex_unlock(&l->lock);
		pthread_join(l->thread, NULL);
	}
	/* The worker is gone: the queues are ours alone now. */
	fg_loader__complete(l);
	while ((job = pop(&l->todo)))
		job->done(job, true);
	safe_close(l->event_fd);
	pthread_cond_destroy(&l->wake);
	pthread_mutex_destroy(&l->lock);
	free(l);
	return NULL;
}

void fg_loader__submit(struct fg_loader *l, struct fg_loader_job *job, fg_loader_work_fn work,
		       fg_loader_done_fn done)
{
	job->work = work;
	job->done = done;
	job->submitted = fgd_now();
	if (!l) {
		work(job);
		done(job, false);
		return;
	}
	l->submitted++;
	pthread_mutex_lock(&l->lock);
	push(&l->todo, job);
	l->stats.submitted++;
	l->stats.queued++;
	if (l->held) {
		l->unsignalled = true;
	} else {
		l->stats.signals++;
		pthread_cond_signal(&l->wake);
	}
	pthread_mutex_unlock(&l->lock);
}

void fg_loader__hold(struct fg_loader *l)
{
	if (l)
		l->held = true;
}

void fg_loader__release(struct fg_loader *l)
{
	if (!l || !l->held)
		return;
	l->held = false;
	if (!l->unsignalled)
		return;
	l->unsignalled = false;
	pthread_mutex_lock(&l->lock);
	l->stats.signals++;
	pthread_cond_signal(&l->wake);
	pthread_mutex_unlock(&l->lock);
}

int fg_loader__fd(const struct fg_loader *l)
{
	return l->event_fd;
}

unsigned fg_loader__complete(struct fg_loader *l)
{
	struct fg_loader_job *job;
	struct queue done;
	uint64_t count, now = fgd_now(), longest_wait = 0;
	unsigned n = 0;

	(void)!read(l->event_fd, &count, sizeof(count));
	pthread_mutex_lock(&l->lock);
	done = l->finished;
	l->finished = (struct queue){};
	pthread_mutex_unlock(&l->lock);

	/* done() may submit more: the lock is not held while it runs. */
	while ((job = pop(&done))) {
		longest_wait = MAX(longest_wait, now - job->submitted);
		job->done(job, false);
		l->completed++;
		n++;
	}
	if (n > 0) {
		pthread_mutex_lock(&l->lock);
		l->stats.jobs += n;
		l->stats.queued -= n;
		l->stats.longest_wait_ns = MAX(l->stats.longest_wait_ns, longest_wait);
		pthread_mutex_unlock(&l->lock);
	}
	return n;
}

struct dispose_job {
	struct fg_loader_job job;
	void (*fn)(void *);
	void *p;
};

static void dispose_work(struct fg_loader_job *j)
{
	struct dispose_job *job = (struct dispose_job *)j;

	job->fn(job->p);
}

static void dispose_done(struct fg_loader_job *j, bool cancelled)
{
	struct dispose_job *job = (struct dispose_job *)j;

	if (cancelled)
		job->fn(job->p);
	free(job);
}

void fg_loader__dispose(struct fg_loader *l, void (*fn)(void *), void *p)
{
	struct dispose_job *job;

	if (!p)
		return;
	job = calloc(1, sizeof(*job));
	if (!job) {
		/* Out of memory: freed here, at the cost of the wait it was to spare. */
		fn(p);
		return;
	}
	job->fn = fn;
	job->p = p;
	fg_loader__submit(l, &job->job, dispose_work, dispose_done);
}

struct trim_job {
	struct fg_loader_job job;
};

static void trim_work(struct fg_loader_job *job)
{
	malloc_trim(0);
}

static void trim_done(struct fg_loader_job *job, bool cancelled)
{
	free(job);
}

void fg_loader__trim_memory(struct fg_loader *l)
{
	struct trim_job *job = calloc(1, sizeof(*job));

	/* Out of memory, the memory stays with the heap: no harm but its size. */
	if (job)
		fg_loader__submit(l, &job->job, trim_work, trim_done);
}

uint64_t fg_loader__submitted(const struct fg_loader *l)
{
	return l ? l->submitted : 0;
}

uint64_t fg_loader__completed(const struct fg_loader *l)
{
	return l ? l->completed : 0;
}

void fg_loader__stats(const struct fg_loader *l, struct fg_loader_stats *ret)
{
	if (!l) {
		*ret = (struct fg_loader_stats){};
		return;
	}
	pthread_mutex_lock((pthread_mutex_t *)&l->lock);
	*ret = l->stats;
	pthread_mutex_unlock((pthread_mutex_t *)&l->lock);
}

void fg_loader__status(const struct fg_loader *l, struct fg_status_loader *ret)
{
	struct fg_loader_stats st;

	fg_loader__stats(l, &st);
	*ret = (struct fg_status_loader){
		.jobs = st.jobs,
		.queued = st.queued,
		.busy_ms = st.busy_ns / 1000000,
		.longest_job_ms = st.longest_job_ns / 1000000,
		.longest_wait_ms = st.longest_wait_ns / 1000000,
	};
}
