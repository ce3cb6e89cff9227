/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * perf_event sets: one event per online CPU (pid = -1, system-wide), each
 * with its own mmap'd ring, drained from the daemon's epoll loop.
 *
 * Two kinds: a TRACK set (a dummy software event that only reports MMAP2,
 * COMM, FORK and EXIT, keeping the process table current for the whole
 * daemon lifetime) and SAMPLE sets (one per recording, at its frequency,
 * with kernel and user callchains). All use CLOCK_MONOTONIC timestamps so
 * records from different rings order against each other and our clock.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf/record.h"
#include "proto/proto-types.h"

struct fg_event_choice {
	uint32_t type;
	uint64_t config;
	const char *name; /* static: "cycles" or "cpu-clock" */
};

/* Hardware cycles where the PMU has them, else the cpu-clock software event. */
int fg_sampler_probe_event(struct fg_event_choice *ret);

/* Reads /proc/sys/kernel/perf_event_max_stack (the kernel's callchain cap). */
uint32_t fg_sampler_max_stack(void);
/* Reads /proc/sys/kernel/perf_event_max_sample_rate. */
uint32_t fg_sampler_max_rate(void);

enum fg_evset_kind {
	FG_EVSET_TRACK,
	FG_EVSET_SAMPLE,
};

struct fg_evset_opts {
	enum fg_evset_kind kind;
	struct fg_event_choice event; /* SAMPLE only */
	uint32_t frequency;           /* SAMPLE only, Hz */
	uint32_t max_stack;           /* SAMPLE only */
	/*
	 * SAMPLE only: FG_CALL_GRAPH_FP takes the kernel's frame-pointer
	 * callchain for user code; FG_CALL_GRAPH_DWARF takes the user registers
	 * and stack_dump bytes of the user stack instead (a multiple of 8), for
	 * the daemon to unwind. Kernel frames always come from the callchain.
	 */
	enum fg_call_graph call_graph;
	uint32_t stack_dump;
	size_t ring_pages; /* data pages per CPU, a power of two */
	/* SAMPLE only: the CPUs to sample, borrowed for the call (NULL: every online one). */
	const int *cpus;
	size_t n_cpus;
};

/* The online CPUs, ascending, in *ret (caller frees). 0 or a negative errno. */
int fg_evset_online_cpus(int **ret, size_t *ret_n);

/* Per-CPU accounting. Nothing is lost without a count here. */
struct fg_cpu_counters {
	uint64_t records;
	uint64_t samples;
	uint64_t lost;         /* records the kernel could not write (PERF_RECORD_LOST) */
	uint64_t lost_samples; /* PERF_RECORD_LOST_SAMPLES */
	uint64_t throttled;    /* PERF_RECORD_THROTTLE */
	uint64_t malformed;    /* records that failed to decode, or ring resyncs */
};

static inline void fg_cpu_counters_add(struct fg_cpu_counters *dst,
				       const struct fg_cpu_counters *src)
{
	dst->records += src->records;
	dst->samples += src->samples;
	dst->lost += src->lost;
	dst->lost_samples += src->lost_samples;
	dst->throttled += src->throttled;
	dst->malformed += src->malformed;
}

struct fg_status_cpu;

/* One CPU's figures as status and a recording's metadata report them (proto/status.h). */
void fg_cpu_counters_status(int cpu, const struct fg_cpu_counters *c, struct fg_status_cpu *ret);

struct fg_evset;

/*
 * Opens one event per online CPU, disabled, and maps their rings. Offline
 * CPUs (ENODEV) are skipped. Caller frees *ret with fg_evset__free().
 * Returns 0 or a negative errno (EACCES/EPERM: not allowed; ENOENT or
 * EOPNOTSUPP: the event does not exist here).
 */
int fg_evset__open(const struct fg_evset_opts *opts, struct fg_evset **ret);
struct fg_evset *fg_evset__free(struct fg_evset *s);

int fg_evset__enable(struct fg_evset *s);
int fg_evset__disable(struct fg_evset *s);

size_t fg_evset__n(const struct fg_evset *s);
/*
 * What the set holds in fgd, for the memory budget's rings part: its rings
 * as mapped (the kernel allocates them whole; they become resident in fgd
 * as they are written and read) and the copies of records held for
 * ordered delivery.
 */
size_t fg_evset__bytes(const struct fg_evset *s);
int fg_evset__fd(const struct fg_evset *s, size_t i);
int fg_evset__cpu(const struct fg_evset *s, size_t i);

/* Snapshots every ring's head: drain then reads only what was there now. */
void fg_evset__snapshot(struct fg_evset *s);

/*
 * Decodes every record up to the snapshot, counts it, and passes samples
 * and tracking records to fn (which must not keep the pointer). Then frees
 * the space for the kernel.
 */
typedef void (*fg_record_fn)(void *ctx, const struct fg_record *rec);
void fg_evset__drain(struct fg_evset *s, fg_record_fn fn, void *ctx);

/*
 * The same, but hands records to fn in timestamp order across all CPUs.
 * Tracking needs it: a fork is written on the parent's CPU and the child's
 * exec on another, and the exec must not be applied first.
 */
void fg_evset__drain_ordered(struct fg_evset *s, fg_record_fn fn, void *ctx);

const struct fg_cpu_counters *fg_evset__counters(const struct fg_evset *s, size_t i);
void fg_evset__totals(const struct fg_evset *s, struct fg_cpu_counters *ret);
