/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The daemon's shared state and its one epoll loop. Components register
 * file descriptors with a struct fgd_watch; the loop calls the watch's
 * handler with the epoll events.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "compaction.h"
#include "fgd-clock.h"
#include "fgd-loader.h"
#include "fgd-proc.h"
#include "fgd-sampler.h"
#include "fgd-recording.h"
#include "fgd-symbols.h"
#include "fgd-unwind.h"

struct fgd;
struct fgd_watch;
typedef void (*fgd_watch_fn)(struct fgd_watch *w, uint32_t events);

struct fgd_watch {
	int fd;
	fgd_watch_fn fn;
};

/*
 * Perf ring fds wake the loop when past their watermark. They all share the
 * daemon's one ring watch, so an event still pending for a ring whose
 * recording was just freed cannot point at freed memory.
 */
int fgd_watch_rings(struct fgd *d, const struct fg_evset *events);
void fgd_unwatch_rings(struct fgd *d, const struct fg_evset *events);

/* Accumulated per-CPU figures of every recording, finished or not. */
struct fgd_cpu_totals {
	int cpu;
	struct fg_cpu_counters c;
};

/*
 * What fgd.conf(5) and the command line set; defaults in fgd-conf.c. SIGHUP
 * builds a new one and swaps it in (see fgd_config_changed()), so nothing
 * may keep a pointer into it across loop iterations.
 */
struct fgd_config {
	const char *socket_path;  /* owned: fgd_config_done() frees it */
	const char *socket_group; /* owned; NULL: none */
	uint32_t default_frequency;
	enum fg_call_graph call_graph; /* for requests that do not choose: FP or DWARF */
	uint32_t stack_dump;     /* DWARF mode's default dump size */
	size_t ring_pages;       /* per CPU, for sampling */
	size_t track_ring_pages; /* per CPU, for tracking */

	/* Always-on sampling (docs/ARCHITECTURE.md, "Always-on"). */
	bool always_on;               /* AlwaysOn= */
	uint32_t always_on_frequency; /* AlwaysOnFrequency=, Hz */
	uint32_t slice_seconds;       /* SliceSec= */
	uint32_t window_seconds;      /* WindowSec= */
	uint64_t memory_max;          /* MemoryMax=, bytes: the whole daemon's memory budget */
	const char *state_directory;  /* owned; StateDirectory=: the on-disk history */
	uint64_t history_max;         /* HistoryMax=: bytes of history kept on disk */
	uint64_t jit_map_max;         /* JitMapMax=: a bigger /tmp/perf-PID.map is refused; 0: none */
	struct fg_compaction_policy history_policy; /* HistoryTiers=, HistoryKeepSec= */
};

struct fgd_server;
struct fgd_alwayson;
struct fg_budget;

/*
 * One turn of the loop that takes longer than this is slow: a status
 * request waits that long, and so do the rings.
 */
#define FGD_SLOW_ITERATION_NS (50ULL * 1000000ULL)

/* How long the loop is away from the rings and the clients (status "loop"). */
struct fgd_loop_stats {
	uint64_t iterations;
	uint64_t slow;       /* iterations longer than FGD_SLOW_ITERATION_NS */
	uint64_t longest_ns; /* the longest iteration, wall clock */
};

struct fgd {
	struct fgd_config conf;
	int epoll_fd;
	bool quit;
	bool reload_requested; /* SIGHUP */
	bool drain_requested;
	uint64_t started; /* CLOCK_MONOTONIC ns */
	char hostname[256];

	struct fg_event_choice event;
	uint32_t max_stack;
	uint32_t max_rate;

	struct fg_loader *loader;    /* owned: reads binaries, CFI and kallsyms off the loop */
	struct fgd_watch loader_watch;
	struct fg_symbolizer *sym;   /* owned */
	struct fg_unwinder *unwinder; /* owned */
	struct fg_proctab *procs;    /* owned */
	struct fg_evset *tracker;    /* owned */
	struct fgd_watch ring_watch; /* shared by every perf ring fd */
	struct fgd_watch signal_watch;
	struct fgd_server *server;   /* owned */
	struct fgd_alwayson *alwayson; /* owned; NULL when always-on sampling is off */
	struct fg_budget *budget;    /* owned: MemoryMax=, the whole daemon's (common/budget.h) */

	struct fgd_loop_stats loop;
	struct fgd_cpu_totals *cpu_totals; /* owned; indexed like the tracker's CPUs */
	size_t n_cpu_totals;
	struct fg_stack_quality stack_totals[3]; /* of every recording, by enum fg_call_graph */
};

/* Adds/changes/removes w->fd in the loop. 0 or a negative errno. */
int fgd_watch_add(struct fgd *d, struct fgd_watch *w, uint32_t events);
int fgd_watch_mod(struct fgd *d, struct fgd_watch *w, uint32_t events);
void fgd_watch_del(struct fgd *d, struct fgd_watch *w);

/* Runs one drain round now: tracking first, then every recording. */
void fgd_drain_round(struct fgd *d);

/* Adds an ending recording's per-CPU counters and stack figures to the daemon totals. */
void fgd_account_recording(struct fgd *d, struct fg_recording *rec);

/*
 * Called after SIGHUP swapped a new configuration into d->conf; old is the
 * one it replaced, borrowed until the call returns. Whatever caches a
 * setting re-reads it here (the always-on sampler: its rate, slices, window
 * and ceiling). The socket path and group never change here.
 */
void fgd_config_changed(struct fgd *d, const struct fgd_config *old);
