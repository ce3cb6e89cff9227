/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/macro.h"
#include "config.h"
#include "consumers/fgd-alwayson.h"
#include "fgd-clock.h"
#include "server/fgd-status.h"

static struct fg_status_memory_part memory_part(const struct fg_status_memory *b,
						enum fg_budget_part p)
{
	const struct fg_status_memory_part *s = &b->parts[p];

	return (struct fg_status_memory_part){
		.bytes = s->bytes,
		.peak = s->peak,
		.share = s->share,
		.evicted = s->evicted,
		.evicted_bytes = s->evicted_bytes,
		.refused = s->refused,
	};
}

static struct fg_status_memory memory(const struct fgd_engine_stats *es)
{
	const struct fg_status_memory *b = &es->memory;

	return (struct fg_status_memory){
		.budget = b->total,
		.base = b->base,
		.charged = b->charged,
		.charged_peak = b->peak,
		.rss = b->rss,
		.rss_peak = b->rss_peak,
		.pressure = es->memory_pressure,
		.relieved = b->relieved,
		.unrelieved = b->unrelieved,
		.parts = {
			.window = memory_part(b, FG_BUDGET_WINDOW),
			.recordings = memory_part(b, FG_BUDGET_RECORDINGS),
			.waiting = memory_part(b, FG_BUDGET_WAITING),
			.results = memory_part(b, FG_BUDGET_RESULTS),
			.processes = memory_part(b, FG_BUDGET_PROCESSES),
			.jit = memory_part(b, FG_BUDGET_JIT),
			.rings = memory_part(b, FG_BUDGET_RINGS),
			.dwarf = memory_part(b, FG_BUDGET_DWARF),
			.cfi = memory_part(b, FG_BUDGET_CFI),
			.symbols = memory_part(b, FG_BUDGET_SYMBOLS),
			.names = memory_part(b, FG_BUDGET_NAMES),
		},
	};
}

int fgd_status_fill(const struct fgd_config *conf, struct fgd_engine *e,
		    const struct fgd_loop *loop, struct fg_status *ret)
{
	_cleanup_(fg_status_done) struct fg_status st = {};
	struct fgd_alwayson *alwayson = fgd_engine__alwayson(e);
	struct fgd_alwayson *offcpu_on = fgd_engine__offcpu_alwayson(e);
	struct fgd_engine_stats es;
	struct fgd_loop_stats lp;
	int r;

	fgd_engine__stats(e, &es);
	fgd_loop__stats(loop, &lp);
	st = (struct fg_status){
		.version = FG_VERSION,
		.pid = (uint32_t)getpid(),
		.uptime_ms = (fgd_now() - es.started) / 1000000,
		.event = es.event.name,
		.default_frequency = conf->default_frequency,
		.max_frequency = es.max_frequency,
		.max_stack = es.max_stack,
		.ring_pages = conf->ring_pages,
		.call_graph = fg_call_graph_name(conf->call_graph),
		.stack_dump = conf->stack_dump,
		.tracking = {
			.records = es.tracking.records,
			.lost = es.tracking.lost + es.tracking.lost_samples,
			.malformed = es.tracking.malformed,
		},
		.processes = {
			.alive = es.processes.processes,
			.generations = es.processes.generations,
			.threads = es.processes.threads,
			.maps = es.processes.maps,
			.proc_reads = es.processes.proc_reads,
			.dropped_processes = es.processes.dropped_processes,
			.dropped_threads = es.processes.dropped_threads,
			.dropped_maps = es.processes.dropped_maps,
			.roots = es.processes.roots,
			.roots_dropped = es.processes.roots_dropped,
			.roots_unknown = es.processes.roots_unknown,
			.bytes = es.processes.bytes,
		},
		.symbols = {
			.binaries = es.symbols.dsos,
			.binaries_loaded = es.symbols.binaries_loaded,
			.binaries_unreadable = es.symbols.binaries_unreadable,
			.binaries_dropped = es.symbols.binaries_dropped,
			.binaries_debug_file = es.symbols.binaries_debug_file,
			.binaries_minidebuginfo = es.symbols.binaries_minidebuginfo,
			.binaries_dwarf = es.symbols.binaries_dwarf,
			.dwarf_dropped = es.symbols.dwarf_dropped,
			.dwarf_bytes = es.symbols.dwarf_bytes,
			.dwarf_mapped = es.symbols.dwarf_mapped,
			.dwarf_evicted = es.symbols.dwarf_evicted,
			.dwarf_reread = es.symbols.dwarf_reread,
			.inline_skipped = es.symbols.inline_skipped,
			.symbols_bytes = es.symbols.symbols_bytes,
			.symbols_evicted = es.symbols.symbols_evicted,
			.symbols_refused = es.symbols.symbols_refused,
			.resolved = es.symbols.resolved,
			.resolved_bytes = es.symbols.resolved_bytes,
			.resolved_jobs = es.symbols.resolved_jobs,
			.resolved_hits = es.symbols.resolved_hits,
			.resolved_waits = es.symbols.resolved_waits,
			.resolved_resets = es.symbols.resolved_resets,
			.kernel_symbols = es.symbols.kallsyms,
			.kernel_reloads = es.symbols.kernel_reloads,
			.kernel_restricted = es.symbols.kernel_restricted,
		},
		.unwinding = {
			.binaries = es.unwinding.binaries,
			.binaries_loaded = es.unwinding.binaries_loaded,
			.binaries_without_cfi = es.unwinding.binaries_without_cfi,
			.binaries_evicted = es.unwinding.binaries_evicted,
			.row_hits = es.unwinding.row_hits,
			.row_misses = es.unwinding.row_misses,
			.rows_libdw = es.unwinding.rows_libdw,
			.rows_uncached = es.unwinding.rows_uncached,
			.rows_none = es.unwinding.rows_none,
			.bytes = es.unwinding.bytes,
			.mapped = es.unwinding.mapped,
		},
		.has_jit = true,
		.jit = {
			.maps = es.jit.maps,
			.maps_read = es.jit.reading,
			.bytes = es.jit.bytes,
			.reads = es.jit.reads,
			.refused = es.jit.refused,
			.resets = es.jit.resets,
			.budget_skipped = es.jit.budget_skipped,
			.size_limited = es.jit.size_limited,
			.deferred = es.jit.deferred,
			.max_map_bytes = conf->jit_map_max,
			.held = es.jit.held,
		},
		.has_loop = true,
		.loop = {
			.iterations = lp.iterations,
			.longest_ms = lp.longest_ns / 1000000,
			.recent_longest_ms = lp.recent_longest_ns / 1000000,
			.cpu_wait_ms = lp.cpu_wait_ns / 1000000,
			.realtime_priority = lp.realtime_priority,
			.realtime_demotions = lp.realtime_demotions,
			.slow = lp.slow,
			.slow_ms = FGD_SLOW_ITERATION_NS / 1000000,
		},
		.has_loader = true,
		.loader = {
			.jobs = es.loader.completed,
			.queued = es.loader.queued,
			.busy_ms = es.loader.busy_ns / 1000000,
			.longest_job_ms = es.loader.longest_ns / 1000000,
			.longest_wait_ms = es.loader.longest_wait_ns / 1000000,
		},
		.has_memory = true,
		.memory = memory(&es),
		.has_off_cpu = true,
		.off_cpu = { .available = es.offcpu_available, .why = es.offcpu_why },
	};

	st.cpus = calloc(MAX(es.n_cpu_totals, (size_t)1), sizeof(*st.cpus));
	if (!st.cpus)
		return -ENOMEM;
	st.n_cpus = es.n_cpu_totals;
	for (size_t i = 0; i < es.n_cpu_totals; i++)
		fg_cpu_counters_status(es.cpu_totals[i].cpu, &es.cpu_totals[i].c, &st.cpus[i]);
	fg_stack_quality_status(&es.stack_quality[FG_CALL_GRAPH_FP], &st.stack_quality.fp);
	fg_stack_quality_status(&es.stack_quality[FG_CALL_GRAPH_DWARF], &st.stack_quality.dwarf);
	/* Off, always_on says only that (enabled is false); so does off_cpu of its always-on part. */
	if (alwayson) {
		r = fgd_alwayson__status(alwayson, &st.always_on);
		if (r < 0)
			return r;
	}
	if (offcpu_on) {
		r = fgd_alwayson__status_off_cpu(offcpu_on, &st.off_cpu);
		if (r < 0)
			return r;
	}
	*ret = st;
	st = (struct fg_status){};
	return 0;
}
