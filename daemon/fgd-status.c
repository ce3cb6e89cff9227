/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "config.h"
#include "fgd-alwayson.h"
#include "fgd-jit.h"
#include "fgd-server.h"
#include "fgd-status.h"
#include "macro.h"

/* Every recording's stack figures in mode g, finished or not yet. */
static struct fg_status_stack_quality stack_quality(const struct fgd *d, enum fg_call_graph g)
{
	struct fg_stack_quality q = d->stack_totals[g];

	fgd_server__add_stack_quality(d->server, g, &q);
	return (struct fg_status_stack_quality){
		.user_stacks = q.user_stacks,
		.complete = q.complete,
		.truncated = q.truncated,
		.failed = q.failed,
		.fp_frames = q.fp_frames,
	};
}

int fgd_status_fill(struct fgd *d, struct fg_status *ret)
{
	_cleanup_(fg_status_done) struct fg_status st = {};
	struct fg_symbolizer_stats ss;
	struct fg_unwinder_stats us;
	struct fg_proctab_stats ps;
	struct fg_jit_stats js;
	struct fg_loader_stats ls;
	struct fg_cpu_counters tc;
	int r;

	fg_evset__totals(d->tracker, &tc);
	fg_proctab__stats(d->procs, &ps);
	fg_symbolizer__stats(d->sym, &ss);
	fg_unwinder__stats(d->unwinder, &us);
	fg_jit__stats(fg_proctab__jit(d->procs), &js);
	fg_loader__stats(d->loader, &ls);
	st = (struct fg_status){
		.version = FG_VERSION,
		.pid = (uint32_t)getpid(),
		.uptime_ms = (fgd_now() - d->started) / 1000000,
		.event = d->event.name,
		.default_frequency = d->conf.default_frequency,
		.max_frequency = d->max_rate,
		.max_stack = d->max_stack,
		.ring_pages = d->conf.ring_pages,
		.call_graph = fg_call_graph_name(d->conf.call_graph),
		.stack_dump = d->conf.stack_dump,
		.socket = fgd_server__path(d->server),
		.tracking = {
			.records = tc.records,
			.lost = tc.lost + tc.lost_samples,
			.malformed = tc.malformed,
		},
		.processes = {
			.alive = ps.processes,
			.generations = ps.generations,
			.threads = ps.threads,
			.maps = ps.maps,
			.proc_reads = ps.proc_reads,
			.dropped_processes = ps.dropped_processes,
			.dropped_threads = ps.dropped_threads,
			.dropped_maps = ps.dropped_maps,
			.roots = ps.roots,
			.roots_dropped = ps.roots_dropped,
			.roots_unknown = ps.roots_unknown,
		},
		.symbols = {
			.binaries = ss.dsos,
			.binaries_loaded = ss.dsos_loaded,
			.binaries_unreadable = ss.dsos_failed,
			.binaries_dropped = ss.dsos_dropped,
			.binaries_debug_file = ss.dsos_debug_file,
			.binaries_minidebuginfo = ss.dsos_minidebuginfo,
			.binaries_dwarf = ss.dsos_dwarf,
			.dwarf_dropped = ss.dwarf_dropped,
			.dwarf_bytes = ss.dwarf_bytes,
			.resolved = ss.resolved,
			.resolved_bytes = ss.resolved_bytes,
			.resolved_jobs = ss.resolved_jobs,
			.resolved_hits = ss.resolved_hits,
			.resolved_waits = ss.resolved_waits,
			.resolved_resets = ss.resolved_resets,
			.kernel_symbols = ss.kallsyms,
			.kernel_reloads = ss.kallsyms_loads,
			.kernel_restricted = ss.kernel_restricted,
		},
		.unwinding = {
			.binaries = us.binaries,
			.binaries_loaded = us.binaries_loaded,
			.binaries_without_cfi = us.binaries_failed,
			.binaries_evicted = us.binaries_evicted,
			.row_hits = us.row_hits,
			.row_misses = us.row_misses,
			.rows_uncached = us.rows_uncached,
			.bytes = us.bytes,
		},
		.stack_quality = {
			.fp = stack_quality(d, FG_CALL_GRAPH_FP),
			.dwarf = stack_quality(d, FG_CALL_GRAPH_DWARF),
		},
		.has_jit = true,
		.jit = {
			.maps = js.maps,
			.maps_read = js.reading,
			.bytes = js.bytes,
			.reads = js.reads,
			.refused = js.refused,
			.resets = js.resets,
			.budget_skipped = js.budget_skipped,
			.size_limited = js.size_limited,
			.deferred = js.deferred,
			.max_map_bytes = d->conf.jit_map_max,
		},
		.has_loop = true,
		.loop = {
			.iterations = d->loop.iterations,
			.longest_ms = d->loop.longest_ns / 1000000,
			.slow = d->loop.slow,
			.slow_ms = FGD_SLOW_ITERATION_NS / 1000000,
		},
		.has_loader = true,
		.loader = {
			.jobs = ls.completed,
			.queued = ls.queued,
			.busy_ms = ls.busy_ns / 1000000,
			.longest_job_ms = ls.longest_ns / 1000000,
			.longest_wait_ms = ls.longest_wait_ns / 1000000,
		},
	};

	st.cpus = calloc(MAX(d->n_cpu_totals, (size_t)1), sizeof(*st.cpus));
	if (!st.cpus)
		return -ENOMEM;
	st.n_cpus = d->n_cpu_totals;
	for (size_t i = 0; i < d->n_cpu_totals; i++) {
		const struct fg_cpu_counters *c = &d->cpu_totals[i].c;

		st.cpus[i] = (struct fg_status_cpu){
			.cpu = (uint32_t)d->cpu_totals[i].cpu,
			.samples = c->samples,
			.lost = c->lost + c->lost_samples,
			.throttled = c->throttled,
			.malformed = c->malformed,
		};
	}
	/* Off, always_on says only that (enabled is false). */
	if (d->alwayson) {
		r = fgd_alwayson__status(d->alwayson, &st.always_on);
		if (r < 0)
			return r;
	}
	r = fgd_server__status(d->server, &st);
	if (r < 0)
		return r;
	*ret = st;
	st = (struct fg_status){};
	return 0;
}
