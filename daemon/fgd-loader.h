/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Work that reads files a user controls, done off the sampling loop.
 *
 * Loading a binary's symbol table, its debug file and DWARF, or its CFI,
 * takes as long as the file makes it: milliseconds for libc, seconds for a
 * crafted ELF with millions of symbols. Done in the loop, that time is taken
 * from draining the rings (records are lost) and from every client waiting
 * for an answer. The loader is one worker thread that runs such jobs one at
 * a time, in submission order; the loop goes on, and whatever needed the
 * result waits for it (a recording parks the sample, see fgd-recording.h).
 *
 * A job is two functions over the caller's own struct, which embeds a
 * struct fg_loader_job:
 *   - work() runs on the worker thread. It may read files and build
 *     objects, but must touch nothing the loop's thread uses: it works on
 *     inputs copied into the job at submission and writes its results into
 *     the job.
 *   - done() runs on the loop's thread, from fg_loader__complete(), and
 *     installs the results where the rest of the daemon sees them, then
 *     frees the job. cancelled is true when the loader is being freed and
 *     work() never ran: done() then only frees.
 * So the only data the two threads share is the queue, under one mutex,
 * and every job's fields are handed over through it (which orders them).
 *
 * The loop watches fg_loader__fd(), readable when finished jobs wait, and
 * calls fg_loader__complete() then.
 *
 * Without a loader (NULL), fg_loader__submit() runs work() and done() at
 * once on the caller's thread: what unit tests and tools want.
 */

#include <stdbool.h>
#include <stdint.h>

struct fg_loader_job;
typedef void (*fg_loader_work_fn)(struct fg_loader_job *job);
typedef void (*fg_loader_done_fn)(struct fg_loader_job *job, bool cancelled);

struct fg_loader_job {
	fg_loader_work_fn work;
	fg_loader_done_fn done;
	/* The loader's own. */
	struct fg_loader_job *next;
	uint64_t submitted; /* CLOCK_MONOTONIC ns */
};

struct fg_loader_stats {
	uint64_t submitted, jobs;
	uint64_t queued;          /* waiting or running now */
	uint64_t busy_ns;         /* time spent in work(), summed */
	uint64_t longest_job_ns;  /* the longest work() so far */
	uint64_t longest_wait_ns; /* the longest from submission to done(), so far */
	uint64_t signals;         /* times the caller signalled the worker that jobs wait */
};

struct fg_loader;

/* Starts the worker. Caller frees *ret with fg_loader__free(). 0 or a negative errno. */
int fg_loader__new(struct fg_loader **ret);

/*
 * Stops the worker once its current job is done (it is not interrupted),
 * completes the jobs that finished and cancels those that never ran: every
 * submitted job's done() has been called when this returns.
 */
struct fg_loader *fg_loader__free(struct fg_loader *l);

/* Queues job (borrowed until its done() runs), or with l NULL runs it now. */
void fg_loader__submit(struct fg_loader *l, struct fg_loader_job *job, fg_loader_work_fn work,
		       fg_loader_done_fn done);

/*
 * Between hold and release, jobs submitted queue without waking the worker;
 * release wakes it once for them all. For a round that may submit a job per
 * sample: one thread switch for the round, not one per job. Jobs submitted
 * unheld wake the worker at once.
 */
void fg_loader__hold(struct fg_loader *l);
void fg_loader__release(struct fg_loader *l);

/* An eventfd, readable while finished jobs wait for fg_loader__complete(). */
int fg_loader__fd(const struct fg_loader *l);

/* Calls done() of every finished job, in order. Returns how many. */
unsigned fg_loader__complete(struct fg_loader *l);

/*
 * Jobs submitted, and jobs whose done() has run, since the start. Jobs
 * complete in the order they were submitted (one worker, one queue), so a
 * job is done once fg_loader__completed() reaches the value
 * fg_loader__submitted() had just after it was submitted: what waits for
 * jobs can tell cheaply whether it may go on. 0 for a NULL loader.
 */
uint64_t fg_loader__submitted(const struct fg_loader *l);
uint64_t fg_loader__completed(const struct fg_loader *l);

void fg_loader__stats(const struct fg_loader *l, struct fg_loader_stats *ret);
struct fg_status_loader;
/* The loader's part of status ("loader"): its figures in the reply's units (ms). */
void fg_loader__status(const struct fg_loader *l, struct fg_status_loader *ret);

/*
 * Destroys p with fn(p) on the worker (at once without a loader; and at
 * once, on the caller's thread, if the loader is freed before it ran).
 * Whatever the worker built is freed there too: its memory comes from the
 * malloc arena the worker allocates from, and a free() from the loop takes
 * that arena's lock, which the worker may hold while the scheduler has set
 * it aside, for as long as it takes to run again (hundreds of milliseconds
 * on a busy machine: measured).
 */
void fg_loader__dispose(struct fg_loader *l, void (*fn)(void *), void *p);

/*
 * Gives the heap's free memory back to the system (malloc_trim()), on the
 * worker: trimming locks every malloc arena in turn, the worker's too, and
 * the loop must not wait while the worker holds it. At once without a loader.
 */
void fg_loader__trim_memory(struct fg_loader *l);
