/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The engine: what the daemon samples with, and what the samples go to.
 *
 * It owns the components of the data path (docs/ARCHITECTURE.md): the
 * tracking events and the process table they keep current, the symbolizer,
 * the unwinder and the loader thread that reads their files; the sources
 * (each recording's per-CPU perf events, and always-on's); and the
 * consumers (the recordings' aggregates, the always-on window). It runs the
 * drain round that moves samples from sources to consumers in the right
 * order, and keeps the totals status reports.
 *
 * The server asks it to start, stop and finish recordings; fgd.c creates
 * it, runs its drain rounds and ticks from the loop, and tells it when the
 * configuration changed. It calls back into neither.
 */

#include <stdbool.h>
#include <stdint.h>

#include "base/budget.h"
#include "base/macro.h"
#include "consumers/fgd-recording.h"
#include "fgd-conf.h"
#include "fgd-loader.h"
#include "fgd-loop.h"
#include "resolver/fgd-jit.h"
#include "resolver/fgd-proctab.h"
#include "resolver/fgd-unwind.h"
#include "sources/fgd-evset.h"
#include "symbols/fgd-symbols.h"

struct fgd_alwayson;
struct fgd_engine;

/* Accumulated per-CPU figures of every recording, finished or not. */
struct fgd_cpu_totals {
	int cpu;
	struct fg_cpu_counters c;
};

/*
 * What fgd.c and the server ask of the engine outside status (which
 * fgd_engine__status() fills); pointers are borrowed until the next call
 * into the engine.
 */
struct fgd_engine_stats {
	struct fg_event_choice event;
	uint32_t max_frequency;                  /* kernel.perf_event_max_sample_rate */
	const struct fgd_cpu_totals *cpu_totals; /* of every recording, finished or not */
	size_t n_cpu_totals;
	bool offcpu_available;  /* fg_offcpu_probe() at start */
	const char *offcpu_why; /* static: why not, when not */
	size_t recordings;      /* sampling or finishing now */
};

/*
 * Probes the sampling event, opens the tracking events, reads /proc and
 * kallsyms, starts the loader and, when configured, always-on sampling.
 * conf is borrowed for the engine's life (fgd.c swaps its contents on
 * reload and then calls fgd_engine__reconfigure()); loop is borrowed, and
 * the engine registers its rings and the loader there. *ret_why names the
 * step that failed (a static string), for the caller's message. Caller
 * frees *ret with fgd_engine__free().
 */
int fgd_engine__new(const struct fgd_config *conf, struct fgd_loop *loop, struct fgd_engine **ret,
		    const char **ret_why);
struct fgd_engine *fgd_engine__free(struct fgd_engine *e);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fgd_engine *, fgd_engine__free);

/*
 * One drain round: every sampling source's rings are snapshotted, tracking
 * is read up to now, then every sampling source is drained up to its
 * snapshot into its consumer, and always-on rotates its slices. Off-CPU
 * sources come last, within a few ms for all of them; blocks left behind
 * wait for the round at fgd_engine__blocks_due().
 */
void fgd_engine__drain(struct fgd_engine *e);
/*
 * A tracking record (fork, comm, mmap, exit) from elsewhere than the
 * engine's own rings, applied to the process table as a drained one would
 * be: for tests, and for sources that see processes the rings do not.
 */
void fgd_engine__feed_tracking(struct fgd_engine *e, const struct fg_record *rec);

/* Whether a ring or the loader asked for a drain round since the last. */
bool fgd_engine__drain_wanted(const struct fgd_engine *e);
/*
 * When off-CPU blocks left behind by the last round are due
 * (CLOCK_MONOTONIC ns): the loop holds a round then. UINT64_MAX: none.
 */
uint64_t fgd_engine__blocks_due(const struct fgd_engine *e);
/* Whether any recording samples, or waits to finish: drain rounds come often then. */
bool fgd_engine__busy(const struct fgd_engine *e);

/* Once a second: reaps ended processes and CFI no sample needed for long; notes the RSS. */
void fgd_engine__tick(struct fgd_engine *e, uint64_t now);
/*
 * Each turn of the loop, between events: when more is charged to the
 * memory budget than it allows, the caches give back what it is over by
 * (fg_budget__relieve()).
 */
void fgd_engine__relieve(struct fgd_engine *e, uint64_t now);

/*
 * An off-CPU or wall-clock recording's source is ready (err 0: the
 * recording samples from now on), or could not be made (a negative errno,
 * and why, static, may say why: the caller aborts the recording).
 */
typedef void (*fgd_engine_started_fn)(void *ctx, struct fg_recording *rec, int err,
				      const char *why);

/* Why the engine will not record as a client asked: the client's message. */
struct fgd_engine_refusal {
	bool denied;    /* for want of permission: the server counts these */
	char why[1024]; /* the message, as the client gets it */
};

/*
 * The options of the recording req asks for, by a client of uid who sees
 * what view says (borrowed for the call; common/profile/view.h): the
 * daemon's defaults where req does not choose, the DWARF ring sized for
 * the rate, and what a non-root user may ask (the machine only as root,
 * only their own processes, a capped rate, a smaller share of memory,
 * OffCpuUserRate=). 0 with *ret set, or a negative errno (EPERM, ESRCH,
 * EINVAL) with why it was refused in *ret_why.
 */
int fgd_engine__recording_opts(struct fgd_engine *e, const struct fg_record_request *req, uid_t uid,
			       const struct fg_view *view, struct fg_recording_opts *ret,
			       struct fgd_engine_refusal *ret_why);
/*
 * Whether the engine can record with o now: its CPUs are online, and
 * off-CPU recording is available when it asks for it. 0, or a negative
 * errno (EINVAL, EOPNOTSUPP) with why not in *ret_why.
 */
int fgd_engine__can_record(const struct fgd_engine *e, const struct fg_recording_opts *o,
			   struct fgd_engine_refusal *ret_why);

/*
 * Starts a recording with o (fgd_engine__recording_opts(), or
 * fgd_engine__recording_defaults() filling what the engine knows and the
 * caller setting the request's part). For a pid list,
 * -ESRCH with the pid that does not exist in *ret_bad_pid. Returns 0 when
 * it samples; 1 when its off-CPU source (off-CPU, wall-clock) is being
 * made off the loop: started(ctx, ...) is called from the loop once it is
 * attached or failed, unless the recording was finished or aborted before.
 * Caller ends it with fgd_engine__finish_recording() or
 * fgd_engine__abort_recording().
 */
void fgd_engine__recording_defaults(const struct fgd_engine *e, struct fg_recording_opts *o);
int fgd_engine__start_recording(struct fgd_engine *e, const struct fg_recording_opts *o,
				struct fg_recording **ret, pid_t *ret_bad_pid,
				fgd_engine_started_fn started, void *ctx);
/* Stops sampling and drains what the rings hold: the recording may still wait for the loader. */
void fgd_engine__stop_recording(struct fgd_engine *e, struct fg_recording *rec);
/*
 * Takes a stopped recording out of the engine, its figures added to the
 * totals, and builds its result (fg_recording__finish()). The caller then
 * streams it and frees it. 0 or a negative errno.
 */
int fgd_engine__finish_recording(struct fgd_engine *e, struct fg_recording *rec);
/* Takes a recording out of the engine, its figures added to the totals, and frees it. */
void fgd_engine__abort_recording(struct fgd_engine *e, struct fg_recording *rec);

/* The process table, for the server's checks of who may record what. Borrowed. */
struct fg_proctab *fgd_engine__procs(struct fgd_engine *e);
/* Always-on sampling, for queries; NULL when off. Borrowed until the next reconfigure. */
struct fgd_alwayson *fgd_engine__alwayson(struct fgd_engine *e);
/* Always-on off-CPU (OffCpu=), likewise; NULL when off, or when it could not start. */
struct fgd_alwayson *fgd_engine__offcpu_alwayson(struct fgd_engine *e);
/* The loader, for giving memory back off the loop (fg_loader__trim_memory()). Borrowed. */
struct fg_loader *fgd_engine__loader(struct fgd_engine *e);
/* The daemon's memory budget, for what clients hold (results) to be charged. Borrowed. */
struct fg_budget *fgd_engine__budget(struct fgd_engine *e);
/* The host's name, for titles. Borrowed. */
const char *fgd_engine__hostname(const struct fgd_engine *e);

void fgd_engine__stats(const struct fgd_engine *e, struct fgd_engine_stats *ret);
struct fg_status;
/*
 * The engine's part of status: its own figures (the sampling event and
 * limits, uptime, the per-CPU and stack totals of every recording,
 * tracking, whether off-CPU can work) and each component's it owns, which
 * fills its own part (processes, symbols, unwinding, jit, loader, memory,
 * with the RSS as it answers). The rest of *st is left as it was. Strings
 * are borrowed until the next call into the engine; cpus is allocated,
 * freed with fg_status_done(). 0, or -ENOMEM.
 */
int fgd_engine__status(struct fgd_engine *e, struct fg_status *st);
/* Adds the counters of the recordings sampling now to *sum (the totals have the ended ones). */
void fgd_engine__live_counters(const struct fgd_engine *e, struct fg_cpu_counters *sum);

/*
 * Applies a configuration fgd.c swapped into the engine's conf. Recordings
 * keep the settings they started with; the memory budget takes the new
 * MemoryMax= at once. With restart_always_on (fgd.c saw always-on settings
 * change), a new always-on sampler starts with them, then the running one
 * writes its open slice to the history and stops: queries answer for its
 * time from disk. 0, or a negative errno when the new sampler could not
 * start (the running one goes on, and the budget keeps its total).
 */
int fgd_engine__reconfigure(struct fgd_engine *e, bool restart_always_on);
/* Whether always-on keeps a history on disk (a reload may replace it without losing its window). */
bool fgd_engine__has_history(const struct fgd_engine *e);

/* SIGTERM: always-on writes its open slice, cut short, to the history. */
void fgd_engine__stopping(struct fgd_engine *e);
