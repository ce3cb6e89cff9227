/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/macro.h"
#include "fgctl-display.h"
#include "proto/meta.h"
#include "proto/proto.h"

static bool progress_shown;

void fgctl_format_time(char *buf, size_t size, int64_t ms, bool with_date)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	size_t n;

	if (!localtime_r(&t, &tm) ||
	    !(n = strftime(buf, size, with_date ? "%Y-%m-%d %H:%M:%S" : "%H:%M:%S", &tm))) {
		snprintf(buf, size, "?");
		return;
	}
	if (ms % 1000)
		snprintf(buf + n, size - n, ".%03d", (int)(ms % 1000));
}

int64_t fgctl_get_int(struct json_object *obj, const char *key)
{
	struct json_object *v;

	if (!obj || !json_object_object_get_ex(obj, key, &v))
		return 0;
	return json_object_get_int64(v);
}

const char *fgctl_get_str(struct json_object *obj, const char *key)
{
	struct json_object *v;

	if (!obj || !json_object_object_get_ex(obj, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return "";
	return json_object_get_string(v);
}

static void format_duration(char *buf, size_t size, uint64_t ms)
{
	uint64_t s = ms / 1000;

	if (s >= 86400)
		snprintf(buf, size, "%" PRIu64 "d %" PRIu64 "h", s / 86400, s % 86400 / 3600);
	else if (s >= 3600)
		snprintf(buf, size, "%" PRIu64 "h %" PRIu64 "m", s / 3600, s % 3600 / 60);
	else if (s >= 60)
		snprintf(buf, size, "%" PRIu64 "m %" PRIu64 "s", s / 60, s % 60);
	else
		snprintf(buf, size, "%.1f s", (double)ms / 1000);
}

/* part of whole, in percent; 0 of nothing. */
static double pct(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0.0;
}

/* "N user stacks: X% complete, Y% truncated, Z% failed". */
static void show_stack_quality(FILE *f, const struct fg_status_stack_quality *q)
{
	uint64_t n = q->user_stacks;

	fprintf(f, "%" PRIu64 " user stacks: %.1f%% complete, %.1f%% truncated, %.1f%% failed", n,
		pct(q->complete, n), pct(q->truncated, n), pct(q->failed, n));
}

/* What to do about stacks that did not reach their first frame, when they are many. */
static void show_stack_hint(FILE *f, const struct fg_recording_meta *m)
{
	const struct fg_status_stack_quality *q = &m->stack_quality;
	uint64_t n = q->user_stacks;
	bool dwarf = m->call_graph && strcmp(m->call_graph, "dwarf") == 0;

	if (n == 0)
		return;
	if (dwarf && pct(q->truncated, n) > 5.0 && m->stack_dump < FG_PROTO_MAX_STACK_DUMP)
		fprintf(f,
			"fgctl: note: %.0f%% of user stacks are deeper than the %" PRIu32
			"-byte stack "
			"dump; record with --stack-dump %d for whole stacks\n",
			pct(q->truncated, n), m->stack_dump,
			(int)MIN((uint64_t)m->stack_dump * 4, (uint64_t)FG_PROTO_MAX_STACK_DUMP) &
				~7);
	else if (!dwarf && pct(q->failed, n) > 50.0)
		fprintf(f,
			"fgctl: note: most user stacks stop early: the code has no frame pointers; "
			"record with --call-graph dwarf\n");
}

/* An absent string (an older fgd's status) shows as nothing. */
static const char *str(const char *s)
{
	return s ? s : "";
}

static void show_unwinding(FILE *f, const struct fg_status *st)
{
	const struct fg_status_unwinding *unw = &st->unwinding;
	const struct {
		const char *name;
		const struct fg_status_stack_quality *q;
	} modes[] = { { "dwarf", &st->stack_quality.dwarf }, { "fp", &st->stack_quality.fp } };

	fprintf(f, "  stacks:      %s by default", str(st->call_graph));
	if (strcmp(str(st->call_graph), "dwarf") == 0)
		fprintf(f, " (%" PRIu32 "-byte stack dumps)", st->stack_dump);
	fprintf(f, "\n");
	for (size_t i = 0; i < ELEMENTSOF(modes); i++) {
		if (modes[i].q->user_stacks == 0)
			continue;
		fprintf(f, "    %-5s      ", modes[i].name);
		show_stack_quality(f, modes[i].q);
		fprintf(f, "\n");
	}
	fprintf(f,
		"  unwinding:   CFI of %" PRIu64 " binaries held (%" PRIu64 " read, %" PRIu64
		" without CFI, %" PRIu64 " evicted), %.1f MiB; row cache %.1f%% hits\n",
		unw->binaries, unw->binaries_loaded, unw->binaries_without_cfi,
		unw->binaries_evicted, (double)unw->bytes / (1 << 20),
		pct(unw->row_hits, unw->row_hits + unw->row_misses));
}

/* The history on disk: what it holds, what compaction did, and every failure. */
static void show_history(FILE *f, const struct fg_status_always_on *ao)
{
	const struct fg_status_history *h = &ao->history;

	if (!ao->has_history) {
		fprintf(f, "  history:     none\n");
		return;
	}
	fprintf(f,
		"  history:     %s: %" PRIu64 " files, %.1f of %.1f MiB; %" PRIu64
		" slices written, %" PRIu64 " write errors, %" PRIu64
		" damaged files skipped, %" PRIu64 " pruned\n",
		str(h->directory), h->files, (double)h->bytes / (1 << 20),
		(double)h->max_bytes / (1 << 20), h->written, h->write_errors, h->corrupt,
		h->pruned);
	if (h->out_of_order)
		fprintf(f,
			"               %" PRIu64
			" slices not written: the wall clock went back into "
			"history already on disk\n",
			h->out_of_order);
	fprintf(f,
		"               compaction: %" PRIu64 " merged files from %" PRIu64 " (%" PRIu64
		" damaged dropped), %" PRIu64 " leftovers and %" PRIu64 " expired deleted, %" PRIu64
		" errors%s%s\n",
		h->merged, h->merged_sources, h->corrupt_dropped, h->leftovers, h->expired,
		h->compact_errors, h->compact_errors ? ", last: " : "",
		h->compact_errors ? str(h->last_compact_error) : "");
}

/* The always-on window: its rate, what it holds, and what its memory ceiling folded away. */
static void show_always_on(FILE *f, const struct fg_status_always_on *ao)
{
	if (!ao->enabled) {
		fprintf(f, "  always-on:   off\n");
		return;
	}
	fprintf(f,
		"  always-on:   %" PRIu32 " Hz, %" PRIu64 " slices of %" PRIu32
		" s (window %" PRIu32 " s); %.1f of %.1f MiB; %" PRIu64 " samples held, %" PRIu64
		" lost\n",
		ao->frequency, ao->slices, ao->slice_seconds, ao->window_seconds,
		(double)ao->bytes / (1 << 20), (double)ao->memory_max / (1 << 20), ao->samples,
		ao->lost);
	fprintf(f,
		"               folded away by the memory ceiling: %" PRIu64 " samples in %" PRIu64
		" stacks into [other], %" PRIu64
		" samples into [other processes] (since start; %" PRIu64 " and %" PRIu64
		" in the window now)\n",
		ao->total_folded_samples, ao->total_folded_stacks, ao->total_unattributed_samples,
		ao->folded_samples, ao->unattributed_samples);
	fprintf(f,
		"               samples' times: %.1f MiB of it; %" PRIu64
		" slices held without them (past their room: ranges take those whole)\n",
		(double)ao->times_bytes / (1 << 20), ao->untimed_slices);
	show_history(f, ao);
}

/* Whether off-CPU recording works, and always-on off-CPU's source and window when it runs. */
static void show_off_cpu(FILE *f, const struct fg_status *st)
{
	const struct fg_status_off_cpu *oc = &st->off_cpu;
	const struct fg_status_always_on *w = &oc->window;

	if (!st->has_off_cpu)
		return;
	fprintf(f, "  off-cpu:     %s%s\n", oc->available ? "available (BPF)" : "unavailable: ",
		oc->available ? "" : str(oc->why));
	if (!oc->always_on)
		return;
	fprintf(f,
		"               always-on: blocks of %" PRIu32 " us or more; %" PRIu64
		" blocks (%.1f s) since start, %" PRIu64 " lost; stacks not taken: %" PRIu64
		", stack maps renewed %" PRIu64 " times (%" PRIu64 " stacks lost)\n",
		oc->min_block_us, oc->blocks, (double)oc->blocked_us / 1e6, oc->lost,
		oc->stacks_not_taken, oc->stack_renewals, oc->stacks_lost);
	if (oc->user_dump_failed)
		fprintf(f, "               %" PRIu64 " blocks without their user stack copy\n",
			oc->user_dump_failed);
	fprintf(f,
		"               window: %" PRIu64 " slices of %" PRIu32 " s (window %" PRIu32
		" s); %.1f of %.1f MiB; %.1f s blocked held; folded into [other]: %.1f s\n",
		w->slices, w->slice_seconds, w->window_seconds, (double)w->bytes / (1 << 20),
		(double)w->memory_max / (1 << 20), (double)w->samples / 1e6,
		(double)w->total_folded_samples / 1e6);
	if (w->has_history)
		fprintf(f, "               history: %s, %" PRIu64 " files, %.1f MiB\n",
			str(w->history.directory), w->history.files,
			(double)w->history.bytes / (1 << 20));
}

/* How long fgd's loop was away from the rings and clients, and what its loader thread read. */
static void show_loop(FILE *f, const struct fg_status *st)
{
	const struct fg_status_loop *loop = &st->loop;
	const struct fg_status_loader *loader = &st->loader;

	if (!st->has_loop || !st->has_loader)
		return;
	fprintf(f,
		"  loop:        longest turn %" PRIu64 " ms (%" PRIu64
		" ms in the last seconds), %" PRIu64 " over %" PRIu64
		" ms; %.1f s waiting for a CPU; ",
		loop->longest_ms, loop->recent_longest_ms, loop->slow, loop->slow_ms,
		(double)loop->cpu_wait_ms / 1000);
	if (loop->realtime_priority)
		fprintf(f, "real-time priority %" PRIu32, loop->realtime_priority);
	else
		fprintf(f, "normal priority");
	if (loop->realtime_demotions)
		fprintf(f, " (put back %" PRIu64 " times: it ran too long without sleeping)",
			loop->realtime_demotions);
	fputc('\n', f);
	fprintf(f,
		"  loader:      %" PRIu64 " files and names read off the loop (%.1f s), %" PRIu64
		" queued; longest %" PRIu64 " ms, longest wait %" PRIu64 " ms\n",
		loader->jobs, (double)loader->busy_ms / 1000, loader->queued,
		loader->longest_job_ms, loader->longest_wait_ms);
}

static double mib(uint64_t bytes)
{
	return (double)bytes / (1 << 20);
}

/* The memory budget: the RSS beside it, then each part's bytes, and what pressure cost. */
static void show_memory(FILE *f, const struct fg_status *st)
{
	const struct fg_status_memory *m = &st->memory;
	const struct fg_status_memory_parts *p = &m->parts;
	uint64_t rest;
	const struct {
		const char *name;
		const struct fg_status_memory_part *part;
	} parts[] = {
		{ "window", &p->window },
		{ "recordings", &p->recordings },
		{ "waiting", &p->waiting },
		{ "results", &p->results },
		{ "processes", &p->processes },
		{ "jit", &p->jit },
		{ "rings", &p->rings },
		{ "dwarf", &p->dwarf },
		{ "cfi", &p->cfi },
		{ "symbols", &p->symbols },
		{ "names", &p->names },
	};

	if (!st->has_memory)
		return;
	/* Resident but charged nowhere: the allocator's free memory, or a part's miscount. */
	rest = m->rss > m->charged + m->base ? m->rss - m->charged - m->base : 0;
	fprintf(f,
		"  memory:      RSS %.1f MiB (peak %.1f) of a %.1f MiB budget (MemoryMax=): %.1f MiB "
		"charged to its parts, %.1f MiB fgd's own, %.1f MiB neither%s\n",
		mib(m->rss), mib(m->rss_peak), mib(m->budget), mib(m->charged), mib(m->base),
		mib(rest), m->pressure ? "; OVER: caches are being evicted" : "");
	if (m->relieved)
		fprintf(f,
			"               caches evicted %" PRIu64 " times under pressure, %" PRIu64
			" of them short of the budget\n",
			m->relieved, m->unrelieved);
	fprintf(f, "    %-11s %9s %9s %9s %9s %9s\n", "part", "MiB", "peak", "share", "evicted",
		"refused");
	for (size_t i = 0; i < ELEMENTSOF(parts); i++) {
		const struct fg_status_memory_part *q = parts[i].part;

		fprintf(f, "    %-11s %9.1f %9.1f %9.1f %9" PRIu64 " %9" PRIu64 "\n", parts[i].name,
			mib(q->bytes), mib(q->peak), mib(q->share), q->evicted, q->refused);
	}
}

void fgctl_show_status(FILE *f, const struct fg_status *st)
{
	const struct fg_status_server *server = &st->server;
	const struct fg_status_processes *procs = &st->processes;
	const struct fg_status_symbols *syms = &st->symbols;
	const struct fg_status_tracking *track = &st->tracking;
	const struct fg_status_jit *jit = &st->jit;
	char up[32];

	format_duration(up, sizeof(up), st->uptime_ms);
	fprintf(f, "fgd %s, pid %" PRIu32 ", up %s\n", str(st->version), st->pid, up);
	fprintf(f, "  socket:      %s\n", str(st->socket));
	fprintf(f, "  event:       %s%s\n", str(st->event),
		strcmp(str(st->event), "cpu-clock") == 0 ?
			" (software clock: no hardware PMU events here)" :
			" (hardware PMU)");
	fprintf(f,
		"  frequency:   %" PRIu32 " Hz default, %" PRIu32
		" Hz max; callchains up to %" PRIu32 " frames\n",
		st->default_frequency, st->max_frequency, st->max_stack);
	show_always_on(f, &st->always_on);
	fprintf(f,
		"  recordings:  %" PRIu64 " active (max %" PRIu64 "), %" PRIu64
		" completed, %" PRIu64 " aborted\n",
		server->recordings_active, server->max_recordings, server->recordings_completed,
		server->recordings_aborted);
	for (size_t i = 0; i < st->n_recordings; i++) {
		const struct fg_status_recording *a = &st->recordings[i];

		fprintf(f,
			"               uid %" PRIu32 ": %.1f s, %" PRIu64 " samples, %" PRIu64
			" lost",
			a->uid, (double)a->elapsed_ms / 1000, a->samples, a->lost);
		if (a->rate_limited)
			fprintf(f, ", %" PRIu64 " off-CPU blocks past the user rate",
				a->rate_limited);
		fputc('\n', f);
	}
	fprintf(f,
		"  clients:     %" PRIu64 " connected (max %" PRIu64 "), %" PRIu64
		" rejected, %" PRIu64 " idle ones closed to make room, %" PRIu64
		" short requests; %" PRIu64 " requests, %" PRIu64 " malformed, %" PRIu64
		" denied\n",
		server->clients, server->max_clients, server->clients_rejected,
		server->clients_evicted, server->short_requests, server->requests,
		server->bad_requests, server->denied);
	fprintf(f,
		"  results:     %.1f MiB held while streaming, %" PRIu64
		" refused over their budget "
		"(%" PRIu64 " MiB a client, %" PRIu64 " MiB for non-root users)\n",
		(double)server->result_bytes / (1 << 20), server->results_refused,
		server->result_max_bytes >> 20, server->user_result_max_bytes >> 20);
	fprintf(f,
		"  processes:   %" PRIu64 " alive, %" PRIu64 " threads, %" PRIu64
		" mappings; read from /proc: %" PRIu64 "; dropped at limits: %" PRIu64
		" processes, %" PRIu64 " threads, %" PRIu64 " mappings\n",
		procs->alive, procs->threads, procs->maps, procs->proc_reads,
		procs->dropped_processes, procs->dropped_threads, procs->dropped_maps);
	fprintf(f,
		"  roots:       %" PRIu64 " container or chroot roots held; %" PRIu64
		" dropped at the limit, %" PRIu64 " processes gone before theirs was read\n",
		procs->roots, procs->roots_dropped, procs->roots_unknown);
	fprintf(f,
		"  symbols:     %" PRIu64 " binaries known, %" PRIu64 " parsed, %" PRIu64
		" unreadable, %" PRIu64 " dropped; %" PRIu64 " kernel symbols%s\n",
		syms->binaries, syms->binaries_loaded, syms->binaries_unreadable,
		syms->binaries_dropped, syms->kernel_symbols,
		syms->kernel_restricted ? " (HIDDEN by kptr_restrict)" : "");
	fprintf(f,
		"  debug info:  %" PRIu64 " separate debug files, %" PRIu64
		" MiniDebugInfo, %" PRIu64
		" with DWARF (%.1f MiB held); DWARF dropped at limits: %" PRIu64 "\n",
		syms->binaries_debug_file, syms->binaries_minidebuginfo, syms->binaries_dwarf,
		(double)syms->dwarf_bytes / (1 << 20), syms->dwarf_dropped);
	show_unwinding(f, st);
	if (st->has_jit)
		fprintf(f,
			"  jit maps:    %" PRIu64 " processes looked at, %" PRIu64
			" maps read (%.1f MiB), %" PRIu64 " refused, %" PRIu64
			" read anew; %" PRIu64 " reads skipped at the budget, %" PRIu64
			" put off at the read rate, %" PRIu64 " stopped at the size limit; %" PRIu64
			" misses not looked up again (rate limit)\n",
			jit->maps, jit->maps_read, (double)jit->bytes / (1 << 20), jit->refused,
			jit->resets, jit->budget_skipped, jit->deferred, jit->size_limited,
			jit->held);
	fprintf(f, "  tracking:    %" PRIu64 " records, %" PRIu64 " lost, %" PRIu64 " malformed\n",
		track->records, track->lost, track->malformed);
	show_loop(f, st);
	show_memory(f, st);
	show_off_cpu(f, st);
	fprintf(f, "  sampling, all recordings so far:\n");
	fprintf(f, "    %5s %12s %10s %10s %10s\n", "cpu", "samples", "lost", "throttled",
		"malformed");
	for (size_t i = 0; i < st->n_cpus; i++) {
		const struct fg_status_cpu *c = &st->cpus[i];

		fprintf(f,
			"    %5" PRIu32 " %12" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64
			"\n",
			c->cpu, c->samples, c->lost, c->throttled, c->malformed);
	}
}

void fgctl_show_progress(FILE *f, const char *target, uint64_t duration_ms, uint64_t elapsed_ms,
			 uint64_t samples, uint64_t lost)
{
	char lost_text[48] = "";

	if (!isatty(fileno(f)))
		return;
	if (lost)
		snprintf(lost_text, sizeof(lost_text), ", %" PRIu64 " LOST", lost);
	if (duration_ms)
		fprintf(f,
			"\r\033[Kfgctl: recording %s: %.0f s left, %" PRIu64
			" samples%s (Ctrl-C stops early)",
			target,
			(double)(duration_ms > elapsed_ms ? duration_ms - elapsed_ms : 0) / 1000,
			samples, lost_text);
	else
		fprintf(f,
			"\r\033[Kfgctl: recording %s: %.0f s, %" PRIu64 " samples%s (Ctrl-C stops)",
			target, (double)elapsed_ms / 1000, samples, lost_text);
	fflush(f);
	progress_shown = true;
}

void fgctl_end_progress(FILE *f)
{
	if (progress_shown)
		fprintf(f, "\r\033[K");
	progress_shown = false;
}

/* A reply's metadata that does not decode: said, and nothing else shown of it. */
static void bad_meta(FILE *f, int r)
{
	fprintf(f, "fgctl: warning: fgd's metadata could not be read: %s\n", strerror(-r));
}

int fgctl_snapshot_meta(FILE *f, struct json_object *meta, struct fg_snapshot_meta *ret)
{
	int r;

	/* None, or none that decodes: all zero (the decoder leaves *ret as it was on failure). */
	*ret = (struct fg_snapshot_meta){};
	if (!meta)
		return 0;
	r = fg_snapshot_meta_from_json(meta, ret);
	if (r < 0)
		bad_meta(f, r);
	return r;
}

void fgctl_note_untimed(FILE *f, uint64_t untimed_slices)
{
	if (untimed_slices > 0)
		fprintf(f,
			"fgctl: note: the period cuts %" PRIu64
			" slices that kept no times of their samples (history written before fgd "
			"kept them, or past a slice's room for them): those count whole, so the "
			"answer spans more than asked\n",
			untimed_slices);
}

/* "FROM-UNTIL" of a span of the metadata. */
static void span_text(char *buf, size_t size, const struct fg_meta_span *span)
{
	char a[40], b[40];

	fgctl_format_time(a, sizeof(a), span->from_ms, false);
	fgctl_format_time(b, sizeof(b), span->until_ms, false);
	snprintf(buf, size, "%s-%s", a, b);
}

void fgctl_note_missing(FILE *f, const char *label, const struct fg_meta_missing *m)
{
	const char *l = label ? label : "", *sep = label ? ": " : "";
	char span[96];

	/* Warnings, which -q keeps: an answer that lacks part of its period must not pass for whole. */
	if (m->gap_count > 0) {
		fprintf(f, "fgctl: warning: %s%sno data for", l, sep);
		for (size_t i = 0; i < m->n_gaps; i++) {
			span_text(span, sizeof(span), &m->gaps[i]);
			fprintf(f, "%s %s", i ? "," : "", span);
		}
		if (m->gap_count > m->n_gaps)
			fprintf(f, " and more");
		fprintf(f, " (%.1f s): fgd was not sampling or lost samples\n",
			(double)m->gap_ms / 1000.0);
	}
	if (m->unreadable_slices > 0) {
		fprintf(f,
			"fgctl: warning: %s%s%" PRIu64 " slice%s of the history could not be read:",
			l, sep, m->unreadable_slices, m->unreadable_slices > 1 ? "s" : "");
		for (size_t i = 0; i < m->n_unreadable; i++) {
			span_text(span, sizeof(span), &m->unreadable[i]);
			fprintf(f, "%s %s (%s)", i ? "," : "", span, str(m->unreadable[i].reason));
		}
		if (m->unreadable_slices > m->n_unreadable)
			fprintf(f, " and more");
		fprintf(f, "\n");
	}
	if (m->lost_samples > 0)
		fprintf(f, "fgctl: warning: %s%sfgd lost %" PRIu64 " sample%s in the slices read\n",
			l, sep, m->lost_samples, m->lost_samples > 1 ? "s" : "");
}

void fgctl_note_kernel_hidden(FILE *f, bool kernel_hidden)
{
	/* A warning, which -q keeps: the graph is not what root would get. */
	if (kernel_hidden)
		fprintf(f,
			"fgctl: warning: kernel frames are collapsed into [kernel] for unprivileged "
			"users (kernel.perf_event_paranoid >= 2)\n");
}

/* The first line: what was written, how many samples or blocks, and lost. */
static void show_wrote(FILE *f, const char *output, const struct fg_recording_meta *m)
{
	const struct fg_meta_off_cpu *off = &m->off_cpu;
	double seconds = (double)m->duration_ms / 1000;

	if (m->has_off_cpu && m->frequency)
		fprintf(f,
			"fgctl: wrote %s: %.3f s of wall-clock time in %.1f s: %" PRId64
			" on-CPU samples (%s, %" PRIu32 " Hz) and %" PRIu64
			" blocks (%.3f s), %" PRIu64 " stacks; %" PRIu64 " lost\n",
			output,
			(double)(int64_t)(m->samples - off->blocks) / (double)m->frequency +
				(double)off->blocked_us / 1e6,
			seconds, (int64_t)(m->samples - off->blocks), str(m->event), m->frequency,
			off->blocks, (double)off->blocked_us / 1e6, m->stacks, m->lost);
	else if (m->has_off_cpu)
		fprintf(f,
			"fgctl: wrote %s: %" PRIu64 " blocks, %.3f s blocked, in %.1f s (%s, "
			"blocks of %" PRIu32 " us or more), %" PRIu64 " stacks; %" PRIu64 " lost\n",
			output, m->samples, (double)off->blocked_us / 1e6, seconds, str(m->event),
			off->min_block_us, m->stacks, m->lost);
	else
		fprintf(f,
			"fgctl: wrote %s: %" PRIu64 " samples in %.1f s (%s, %" PRIu32
			" Hz), %" PRIu64 " stacks; %" PRIu64 " lost, %" PRIu64 " throttled\n",
			output, m->samples, seconds, str(m->event), m->frequency, m->stacks,
			m->lost, m->throttled);
}

/* What the off-CPU source lost or left out, and the kernel's losses. */
static void show_losses(FILE *f, const struct fg_recording_meta *m)
{
	const struct fg_meta_off_cpu *off = &m->off_cpu;

	if (m->lost > 0 && m->has_off_cpu)
		fprintf(f,
			"fgctl: warning: %" PRIu64 " blocks were lost (%" PRIu64
			" with too many threads blocked at once, %" PRIu64
			" with fgd's ring full, %" PRIu64
			" left in it at the end: fgd takes blocks in bounded rounds, after "
			"everyone else): the profile is incomplete (a storm of short "
			"blocks: raise --min-block; with --call-graph dwarf each block carries "
			"its user stack, and fp fills the ring more slowly)\n",
			m->lost, off->lost_threads, off->lost_ring, off->lost_late);
	else if (m->lost > 0)
		fprintf(f,
			"fgctl: warning: the kernel lost %" PRIu64
			" records: the profile is incomplete "
			"(lower -F, or start fgd with a bigger --ring-pages)\n",
			m->lost);
	if (off->kernel_stack_failed + off->user_stack_failed > 0)
		fprintf(f,
			"fgctl: warning: %" PRIu64 " blocks have no kernel stack and %" PRIu64
			" no user stack: the stack could not be read, or the BPF stack maps were "
			"full (fgd renews them at once)\n",
			off->kernel_stack_failed, off->user_stack_failed);
	if (off->rate_limited > 0)
		fprintf(f,
			"fgctl: note: %" PRIu64 " blocks were not kept: past the %" PRIu64
			" a second fgd keeps of a non-root user's recording (OffCpuUserRate= in "
			"fgd.conf); the rest are a sample of them (raise --min-block to keep the "
			"longer ones)\n",
			off->rate_limited, off->rate_limit);
	if (off->user_dump_failed > 0)
		fprintf(f,
			"fgctl: note: %" PRIu64 " blocks have no user stack: they did not end by "
			"leaving a system call (page faults, or still blocked at the end), where "
			"their stack is copied for DWARF unwinding\n",
			off->user_dump_failed);
	if (m->dropped > 0)
		fprintf(f,
			"fgctl: warning: %" PRIu64
			" samples were dropped at fgd's limits (too many "
			"distinct stacks or locations)\n",
			m->dropped);
}

/* --since/--until: the range the output holds. */
static void show_range(FILE *f, const struct fg_recording_meta *m)
{
	if (!m->since_ms && !m->until_ms)
		return;
	fprintf(f, "fgctl: note: the output holds the samples taken from ");
	if (m->since_ms)
		fprintf(f, "%" PRId64 ".%03" PRId64, m->since_ms / 1000, m->since_ms % 1000);
	else
		fprintf(f, "the start");
	fprintf(f, " to ");
	if (m->until_ms)
		fprintf(f, "%" PRId64 ".%03" PRId64, m->until_ms / 1000, m->until_ms % 1000);
	else
		fprintf(f, "the end");
	fprintf(f, " (Unix seconds, --since/--until): %" PRIu64 " stacks\n", m->stacks);
	if (m->stacks == 0)
		fprintf(f, "fgctl: warning: no sample of the recording lies in that range: "
			   "the output is empty\n");
}

/* The binaries and JIT maps fgd could not read, by name. */
static void show_unread(FILE *f, const struct fg_meta_resolve *res)
{
	const struct fg_meta_jit_maps *jit = &res->jit_maps;

	if (res->unreadable_count > 0) {
		fprintf(f,
			"fgctl: warning: %" PRIu64
			" binaries could not be read; their frames show as "
			"module+offset:\n",
			res->unreadable_count);
		for (size_t i = 0; i < res->n_unreadable_binaries; i++)
			fprintf(f, "    %s: %s\n", str(res->unreadable_binaries[i].path),
				str(res->unreadable_binaries[i].error));
	}
	if (jit->refused_count > 0) {
		fprintf(f,
			"fgctl: warning: %" PRIu64 " JIT maps were not read; their frames show as "
			"[unknown]:\n",
			jit->refused_count);
		for (size_t i = 0; i < jit->n_refused; i++) {
			const struct fg_meta_jit_refusal *u = &jit->refused[i];

			fprintf(f, "    %s: %s", str(u->path), str(u->reason));
			if (u->error)
				fprintf(f, ": %s", u->error);
			if (u->has_size)
				fprintf(f, " (%.1f MiB, over fgd's JitMapMax=)",
					(double)u->size / (1 << 20));
			fprintf(f, "\n");
		}
	}
}

static void show_summary(FILE *f, const char *output, const struct fg_recording_meta *m, bool quiet)
{
	const struct fg_meta_resolve *res = &m->resolve;

	fgctl_end_progress(f);
	if (!quiet)
		show_wrote(f, output, m);
	if (!quiet)
		for (size_t i = 0; i < m->n_exited; i++)
			fprintf(f,
				"fgctl: note: process %" PRId64
				" exited during the recording; its samples "
				"until then are kept\n",
				m->exited[i]);
	show_losses(f, m);
	show_range(f, m);
	if (m->times_dropped > 0)
		fprintf(f,
			"fgctl: warning: the times of %" PRIu64
			" samples were not kept (the recording reached its memory limit): a heat map "
			"or a range of the recording leaves them out\n",
			m->times_dropped);
	if (m->malformed > 0)
		fprintf(f, "fgctl: warning: %" PRIu64 " malformed records were skipped\n",
			m->malformed);
	show_unread(f, res);
	fgctl_note_kernel_hidden(f, m->kernel_hidden);
	if (m->degraded > 0)
		fprintf(f,
			"fgctl: note: %" PRIu64
			" samples could not wait any longer for fgd to read the "
			"binaries they ran in; some of their frames are module+offset, lack inline frames "
			"or were unwound by frame pointer\n",
			m->degraded);
	if (m->samples == 0)
		fprintf(f,
			"fgctl: warning: no samples were collected: was the target using CPU?\n");
	else if (!quiet && res->has_frames) {
		fprintf(f,
			"fgctl: frames: %" PRIu64 " named, %" PRIu64 " module+offset, %" PRIu64
			" unknown\n",
			res->frames.named, res->frames.module_offset, res->frames.unknown);
		fprintf(f, "fgctl: stacks (%s): ", str(m->call_graph));
		show_stack_quality(f, &m->stack_quality);
		fprintf(f, "\n");
		show_stack_hint(f, m);
	}
	if (!quiet && m->samples > 0 && res->jit_maps.maps > 0)
		fprintf(f,
			"fgctl: JIT maps: %" PRIu64 " read, %" PRIu64 " entries, %" PRIu64
			" malformed lines; %" PRIu64 " frames named from them\n",
			res->jit_maps.maps, res->jit_maps.entries, res->jit_maps.malformed,
			res->jit_maps.frames);
}

void fgctl_show_summary(FILE *f, const char *output, struct json_object *meta, bool quiet)
{
	_cleanup_(fg_recording_meta_done) struct fg_recording_meta m = {};
	int r = meta ? fg_recording_meta_from_json(meta, &m) : 0; /* none: all zero */

	if (r < 0) {
		fgctl_end_progress(f);
		return bad_meta(f, r);
	}
	show_summary(f, output, &m, quiet);
}
