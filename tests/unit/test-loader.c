/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The loader: jobs run on its own thread, one at a time and in order, while
 * the caller goes on; their done() runs on the caller's thread, from
 * fg_loader__complete(), when the eventfd says so; freeing it cancels what
 * never ran. Without a loader, a job runs at once.
 */
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "base/macro.h"
#include "fgd-loader.h"
#include "test.h"

struct job {
	struct fg_loader_job job;
	pthread_t worked_on;   /* set by work() */
	bool started;          /* set by work(), atomically, before it waits at the gate */
	pthread_mutex_t *gate; /* work() waits for it, when set */
	int order;             /* when done() ran, among all */
	bool done, cancelled;
	int *counter; /* borrowed */
};

static void work(struct fg_loader_job *j)
{
	struct job *job = (struct job *)j;

	job->worked_on = pthread_self();
	__atomic_store_n(&job->started, true, __ATOMIC_RELEASE);
	if (job->gate) {
		pthread_mutex_lock(job->gate);
		pthread_mutex_unlock(job->gate);
	}
}

static void done(struct fg_loader_job *j, bool cancelled)
{
	struct job *job = (struct job *)j;

	job->done = true;
	job->cancelled = cancelled;
	job->order = (*job->counter)++;
}

/* Waits for the loader's fd, then completes: how many jobs' done() ran. */
static unsigned wait_complete(struct fg_loader *l)
{
	struct pollfd p = { .fd = fg_loader__fd(l), .events = POLLIN };

	ASSERT_EQ(poll(&p, 1, 5000), 1);
	return fg_loader__complete(l);
}

TEST(jobs_run_elsewhere_in_order_and_complete_here)
{
	_cleanup_free_ struct job *jobs = calloc(8, sizeof(*jobs));
	struct fg_loader *l = NULL;
	struct fg_loader_stats st;
	int counter = 0;
	unsigned n = 0;

	ASSERT_TRUE(jobs);
	ASSERT_OK(fg_loader__new(&l));
	ASSERT_EQ(fg_loader__submitted(l), 0);
	for (int i = 0; i < 8; i++) {
		jobs[i].counter = &counter;
		fg_loader__submit(l, &jobs[i].job, work, done);
	}
	ASSERT_EQ(fg_loader__submitted(l), 8);
	while (n < 8)
		n += wait_complete(l);
	ASSERT_EQ(fg_loader__completed(l), 8);
	for (int i = 0; i < 8; i++) {
		ASSERT_TRUE(jobs[i].done && !jobs[i].cancelled);
		ASSERT_EQ(jobs[i].order, i);
		ASSERT_TRUE(!pthread_equal(jobs[i].worked_on, pthread_self()));
	}
	fg_loader__stats(l, &st);
	ASSERT_EQ(st.submitted, 8);
	ASSERT_EQ(st.jobs, 8);
	ASSERT_EQ(st.queued, 0);
	fg_loader__free(l);
}

TEST(a_slow_job_does_not_hold_the_caller)
{
	pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
	struct job slow = {}, next = {};
	struct fg_loader *l = NULL;
	struct pollfd p;
	int counter = 0;

	ASSERT_OK(fg_loader__new(&l));
	pthread_mutex_lock(&gate);
	slow = (struct job){ .gate = &gate, .counter = &counter };
	next.counter = &counter;
	fg_loader__submit(l, &slow.job, work, done);
	fg_loader__submit(l, &next.job, work, done);
	/* The worker is stuck in the first job: nothing is finished, and submitting did not wait. */
	p = (struct pollfd){ .fd = fg_loader__fd(l), .events = POLLIN };
	ASSERT_EQ(poll(&p, 1, 100), 0);
	ASSERT_EQ(fg_loader__complete(l), 0);
	ASSERT_TRUE(!slow.done && !next.done);
	pthread_mutex_unlock(&gate);
	while (!next.done)
		wait_complete(l);
	ASSERT_EQ(slow.order, 0);
	ASSERT_EQ(next.order, 1);
	fg_loader__free(l);
}

/* Waits up to 5 s for work() of job to have started. */
static void wait_started(struct job *job)
{
	for (int i = 0; i < 5000 && !__atomic_load_n(&job->started, __ATOMIC_ACQUIRE); i++)
		nanosleep(&(struct timespec){ .tv_nsec = 1000 * 1000 }, NULL);
	ASSERT_TRUE(__atomic_load_n(&job->started, __ATOMIC_ACQUIRE));
}

TEST(a_run_of_finished_jobs_wakes_the_caller_once)
{
	pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
	struct job jobs[4] = {};
	struct fg_loader *l = NULL;
	uint64_t wakeups = 0;
	int counter = 0;

	ASSERT_OK(fg_loader__new(&l));
	pthread_mutex_lock(&gate);
	for (int i = 0; i < 4; i++) {
		jobs[i].counter = &counter;
		jobs[i].gate = i == 3 ? &gate : NULL;
		fg_loader__submit(l, &jobs[i].job, work, done);
	}
	/* In order: the fourth job running means the first three are finished. */
	wait_started(&jobs[3]);
	ASSERT_EQ(read(fg_loader__fd(l), &wakeups, sizeof(wakeups)), (ssize_t)sizeof(wakeups));
	ASSERT_EQ(wakeups, 1);
	ASSERT_EQ(fg_loader__complete(l), 3);
	pthread_mutex_unlock(&gate);
	ASSERT_EQ(wait_complete(l), 1);
	fg_loader__free(l);
}

TEST(jobs_submitted_while_held_wait_for_the_release)
{
	struct job jobs[3] = {};
	struct fg_loader *l = NULL;
	struct fg_loader_stats st;
	int counter = 0;
	unsigned n = 0;

	ASSERT_OK(fg_loader__new(&l));
	fg_loader__hold(l);
	for (int i = 0; i < 3; i++) {
		jobs[i].counter = &counter;
		fg_loader__submit(l, &jobs[i].job, work, done);
	}
	/* Queued, not signalled (a worker awake anyway may take them: they are queued). */
	fg_loader__stats(l, &st);
	ASSERT_EQ(st.signals, 0);
	fg_loader__release(l);
	fg_loader__stats(l, &st);
	ASSERT_EQ(st.signals, 1);
	while (n < 3)
		n += wait_complete(l);
	ASSERT_TRUE(jobs[0].done && jobs[2].done && jobs[2].order == 2);
	/* Nothing held: a release signals nothing; a job signals at once. */
	fg_loader__hold(l);
	fg_loader__release(l);
	jobs[0] = (struct job){ .counter = &counter };
	fg_loader__submit(l, &jobs[0].job, work, done);
	fg_loader__stats(l, &st);
	ASSERT_EQ(st.signals, 2);
	ASSERT_EQ(wait_complete(l), 1);
	/* Without a loader, both are nothing. */
	fg_loader__hold(NULL);
	fg_loader__release(NULL);
	fg_loader__free(l);
}

static void *open_gate_later(void *arg)
{
	nanosleep(&(struct timespec){ .tv_nsec = 200 * 1000 * 1000 }, NULL);
	pthread_mutex_unlock(arg);
	return NULL;
}

TEST(free_waits_for_the_running_job_and_cancels_the_rest)
{
	pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
	struct job first = {}, queued = {};
	struct fg_loader *l = NULL;
	pthread_t opener;
	int counter = 0;

	ASSERT_OK(fg_loader__new(&l));
	/* An error-checking-free mutex may be unlocked by another thread: the gate opens later. */
	pthread_mutex_lock(&gate);
	first = (struct job){ .gate = &gate, .counter = &counter };
	queued.counter = &counter;
	fg_loader__submit(l, &first.job, work, done);
	fg_loader__submit(l, &queued.job, work, done);
	while (!__atomic_load_n(&first.started, __ATOMIC_ACQUIRE))
		nanosleep(&(struct timespec){ .tv_nsec = 1000 * 1000 }, NULL);
	ASSERT_EQ(pthread_create(&opener, NULL, open_gate_later, &gate), 0);
	/* The worker is inside the first job: free waits for it, and never starts the second. */
	fg_loader__free(l);
	pthread_join(opener, NULL);
	ASSERT_TRUE(first.done && !first.cancelled);
	ASSERT_TRUE(queued.done && queued.cancelled);
	ASSERT_EQ(first.order, 0);
}

TEST(without_a_loader_a_job_runs_at_once)
{
	struct job j = {};
	int counter = 0;

	j.counter = &counter;
	fg_loader__submit(NULL, &j.job, work, done);
	ASSERT_TRUE(j.done && !j.cancelled);
	ASSERT_TRUE(pthread_equal(j.worked_on, pthread_self()));
	ASSERT_EQ(fg_loader__submitted(NULL), 0);
	ASSERT_EQ(fg_loader__completed(NULL), 0);
}
