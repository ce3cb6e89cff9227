/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/macro.h"
#include "fgctl-display.h"
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

static struct json_object *get_obj(struct json_object *obj, const char *key)
{
	struct json_object *v;

	return obj && json_object_object_get_ex(obj, key, &v) ? v : NULL;
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

/* Counts arrive as int64_t (metadata) or uint64_t (status): as doubles, the same share. */
static double pct(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0.0;
}

/* "N user stacks: X% complete, Y% truncated, Z% failed" of a stack_quality object. */
static void show_stack_quality(FILE *f, struct json_object *q)
{
	int64_t n = fgctl_get_int(q, "user_stacks");

	fprintf(f, "%" PRId64 " user stacks: %.1f%% complete, %.1f%% truncated, %.1f%% failed", n,
		pct(fgctl_get_int(q, "complete"), n), pct(fgctl_get_int(q, "truncated"), n),
		pct(fgctl_get_int(q, "failed"), n));
}

/* What to do about stacks that did not reach their first frame, when they are many. */
static void show_stack_hint(FILE *f, struct json_object *meta)
{
	struct json_object *q = get_obj(meta, "stack_quality");
	int64_t n = fgctl_get_int(q, "user_stacks");
	bool dwarf = strcmp(fgctl_get_str(meta, "call_graph"), "dwarf") == 0;

	if (n == 0)
		return;
	if (dwarf && pct(fgctl_get_int(q, "truncated"), n) > 5.0 &&
	    fgctl_get_int(meta, "stack_dump") < FG_PROTO_MAX_STACK_DUMP)
		fprintf(f,
			"fgctl: note: %.0f%% of user stacks are deeper than the %" PRId64
			"-byte stack "
			"dump; record with --stack-dump %d for whole stacks\n",
			pct(fgctl_get_int(q, "truncated"), n), fgctl_get_int(meta, "stack_dump"),
			(int)MIN(fgctl_get_int(meta, "stack_dump") * 4,
				 (int64_t)FG_PROTO_MAX_STACK_DUMP) &
				~7);
	else if (!dwarf && pct(fgctl_get_int(q, "failed"), n) > 50.0)
		fprintf(f,
			"fgctl: note: most user stacks stop early: the code has no frame pointers; "
			"record with --call-graph dwarf\n");
}

/* An absent string (an older fgd's status) shows as nothing. */
static const char *str(const char *s)
{
	return s ? s : "";
}

static void show_status_stack_quality(FILE *f, const struct fg_status_stack_quality *q)
{
	uint64_t n = q->user_stacks;

	fprintf(f, "%" PRIu64 " user stacks: %.1f%% complete, %.1f%% truncated, %.1f%% failed", n,
		pct(q->complete, n), pct(q->truncated, n), pct(q->failed, n));
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
		show_status_stack_quality(f, modes[i].q);
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

void fgctl_note_untimed(FILE *f, struct json_object *meta)
{
	int64_t n = fgctl_get_int(meta, "untimed_slices");

	if (n > 0)
		fprintf(f,
			"fgctl: note: the period cuts %" PRId64
			" slices that kept no times of their samples (history written before fgd "
			"kept them, or past a slice's room for them): those count whole, so the "
			"answer spans more than asked\n",
			n);
}

/* "FROM-UNTIL" of a span object of the metadata (from_ms, until_ms). */
static void span_text(char *buf, size_t size, struct json_object *span)
{
	char a[40], b[40];

	fgctl_format_time(a, sizeof(a), fgctl_get_int(span, "from_ms"), false);
	fgctl_format_time(b, sizeof(b), fgctl_get_int(span, "until_ms"), false);
	snprintf(buf, size, "%s-%s", a, b);
}

void fgctl_note_missing(FILE *f, const char *label, struct json_object *meta)
{
	struct json_object *gaps = get_obj(meta, "gaps"), *bad = get_obj(meta, "unreadable");
	int64_t n_gaps = fgctl_get_int(meta, "gap_count"),
		n_bad = fgctl_get_int(meta, "unreadable_slices"),
		lost = fgctl_get_int(meta, "lost_samples");
	const char *l = label ? label : "", *sep = label ? ": " : "";
	char span[96];

	/* Warnings, which -q keeps: an answer that lacks part of its period must not pass for whole. */
	if (n_gaps > 0) {
		fprintf(f, "fgctl: warning: %s%sno data for", l, sep);
		for (size_t i = 0; gaps && i < json_object_array_length(gaps); i++) {
			span_text(span, sizeof(span), json_object_array_get_idx(gaps, i));
			fprintf(f, "%s %s", i ? "," : "", span);
		}
		if (n_gaps > (int64_t)(gaps ? json_object_array_length(gaps) : 0))
			fprintf(f, " and more");
		fprintf(f, " (%.1f s): fgd was not sampling or lost samples\n",
			(double)fgctl_get_int(meta, "gap_ms") / 1000.0);
	}
	if (n_bad > 0) {
		fprintf(f,
			"fgctl: warning: %s%s%" PRId64 " slice%s of the history could not be read:",
			l, sep, n_bad, n_bad > 1 ? "s" : "");
		for (size_t i = 0; bad && i < json_object_array_length(bad); i++) {
			struct json_object *u = json_object_array_get_idx(bad, i);

			span_text(span, sizeof(span), u);
			fprintf(f, "%s %s (%s)", i ? "," : "", span, fgctl_get_str(u, "reason"));
		}
		if (n_bad > (int64_t)(bad ? json_object_array_length(bad) : 0))
			fprintf(f, " and more");
		fprintf(f, "\n");
	}
	if (lost > 0)
		fprintf(f, "fgctl: warning: %s%sfgd lost %" PRId64 " sample%s in the slices read\n",
			l, sep, lost, lost > 1 ? "s" : "");
}

void fgctl_note_kernel_hidden(FILE *f, struct json_object *meta)
{
	/* A warning, which -q keeps: the graph is not what root would get. */
	if (fgctl_get_int(meta, "kernel_hidden"))
		fprintf(f,
			"fgctl: warning: kernel frames are collapsed into [kernel] for unprivileged "
			"users (kernel.perf_event_paranoid >= 2)\n");
}

void fgctl_show_summary(FILE *f, const char *output, const char *reason, struct json_object *meta,
			bool quiet)
{
	struct json_object *frames = get_obj(meta, "frames"),
			   *unreadable = get_obj(meta, "unreadable_binaries");
	struct json_object *exited = get_obj(meta, "exited"), *jit = get_obj(meta, "jit_maps");
	struct json_object *refused = get_obj(jit, "refused");
	int64_t samples = fgctl_get_int(meta, "samples"), lost = fgctl_get_int(meta, "lost");
	int64_t dropped = fgctl_get_int(meta, "dropped"),
		n_unreadable = fgctl_get_int(meta, "unreadable_count");
	struct json_object *off = get_obj(meta, "off_cpu");

	fgctl_end_progress(f);
	if (!quiet && off && fgctl_get_int(meta, "frequency")) {
		int64_t blocks = fgctl_get_int(off, "blocks"),
			freq = fgctl_get_int(meta, "frequency");

		fprintf(f,
			"fgctl: wrote %s: %.3f s of wall-clock time in %.1f s: %" PRId64
			" on-CPU samples (%s, %" PRId64 " Hz) and %" PRId64
			" blocks (%.3f s), %" PRId64 " stacks; %" PRId64 " lost\n",
			output,
			(double)(samples - blocks) / (double)freq +
				(double)fgctl_get_int(off, "blocked_us") / 1e6,
			(double)fgctl_get_int(meta, "duration_ms") / 1000, samples - blocks,
			fgctl_get_str(meta, "event"), freq, blocks,
			(double)fgctl_get_int(off, "blocked_us") / 1e6,
			fgctl_get_int(meta, "stacks"), lost);
	} else if (!quiet && off)
		fprintf(f,
			"fgctl: wrote %s: %" PRId64 " blocks, %.3f s blocked, in %.1f s (%s, "
			"blocks of %" PRId64 " us or more), %" PRId64 " stacks; %" PRId64 " lost\n",
			output, samples, (double)fgctl_get_int(off, "blocked_us") / 1e6,
			(double)fgctl_get_int(meta, "duration_ms") / 1000,
			fgctl_get_str(meta, "event"), fgctl_get_int(off, "min_block_us"),
			fgctl_get_int(meta, "stacks"), lost);
	else if (!quiet)
		fprintf(f,
			"fgctl: wrote %s: %" PRId64 " samples in %.1f s (%s, %" PRId64
			" Hz), %" PRId64 " stacks; %" PRId64 " lost, %" PRId64 " throttled\n",
			output, samples, (double)fgctl_get_int(meta, "duration_ms") / 1000,
			fgctl_get_str(meta, "event"), fgctl_get_int(meta, "frequency"),
			fgctl_get_int(meta, "stacks"), lost, fgctl_get_int(meta, "throttled"));
	if (!quiet &&
	    (strcmp(reason, "exited") == 0 || (exited && json_object_array_length(exited) > 0))) {
		for (size_t i = 0; exited && i < json_object_array_length(exited); i++)
			fprintf(f,
				"fgctl: note: process %" PRId64
				" exited during the recording; its samples "
				"until then are kept\n",
				json_object_get_int64(json_object_array_get_idx(exited, i)));
	}
	if (lost > 0 && off)
		fprintf(f,
			"fgctl: warning: %" PRId64 " blocks were lost (%" PRId64
			" with too many threads blocked at once, %" PRId64
			" with fgd's ring full, %" PRId64
			" left in it at the end: fgd takes blocks in bounded rounds, after "
			"everyone else): the profile is incomplete (a storm of short "
			"blocks: raise --min-block; with --call-graph dwarf each block carries "
			"its user stack, and fp fills the ring more slowly)\n",
			lost, fgctl_get_int(off, "lost_threads"), fgctl_get_int(off, "lost_ring"),
			fgctl_get_int(off, "lost_late"));
	else if (lost > 0)
		fprintf(f,
			"fgctl: warning: the kernel lost %" PRId64
			" records: the profile is incomplete "
			"(lower -F, or start fgd with a bigger --ring-pages)\n",
			lost);
	if (off &&
	    fgctl_get_int(off, "kernel_stack_failed") + fgctl_get_int(off, "user_stack_failed") > 0)
		fprintf(f,
			"fgctl: warning: %" PRId64 " blocks have no kernel stack and %" PRId64
			" no user stack: the stack could not be read, or the BPF stack maps were "
			"full (fgd renews them at once)\n",
			fgctl_get_int(off, "kernel_stack_failed"),
			fgctl_get_int(off, "user_stack_failed"));
	if (off && fgctl_get_int(off, "rate_limited") > 0)
		fprintf(f,
			"fgctl: note: %" PRId64 " blocks were not kept: past the %" PRId64
			" a second fgd keeps of a non-root user's recording (OffCpuUserRate= in "
			"fgd.conf); the rest are a sample of them (raise --min-block to keep the "
			"longer ones)\n",
			fgctl_get_int(off, "rate_limited"), fgctl_get_int(off, "rate_limit"));
	if (off && fgctl_get_int(off, "user_dump_failed") > 0)
		fprintf(f,
			"fgctl: note: %" PRId64 " blocks have no user stack: they did not end by "
			"leaving a system call (page faults, or still blocked at the end), where "
			"their stack is copied for DWARF unwinding\n",
			fgctl_get_int(off, "user_dump_failed"));
	if (dropped > 0)
		fprintf(f,
			"fgctl: warning: %" PRId64
			" samples were dropped at fgd's limits (too many "
			"distinct stacks or locations)\n",
			dropped);
	if (fgctl_get_int(meta, "since_ms") || fgctl_get_int(meta, "until_ms")) {
		int64_t since = fgctl_get_int(meta, "since_ms"),
			until = fgctl_get_int(meta, "until_ms");

		fprintf(f, "fgctl: note: the output holds the samples taken from ");
		if (since)
			fprintf(f, "%" PRId64 ".%03" PRId64, since / 1000, since % 1000);
		else
			fprintf(f, "the start");
		fprintf(f, " to ");
		if (until)
			fprintf(f, "%" PRId64 ".%03" PRId64, until / 1000, until % 1000);
		else
			fprintf(f, "the end");
		fprintf(f, " (Unix seconds, --since/--until): %" PRId64 " stacks\n",
			fgctl_get_int(meta, "stacks"));
		if (fgctl_get_int(meta, "stacks") == 0)
			fprintf(f, "fgctl: warning: no sample of the recording lies in that range: "
				   "the output is empty\n");
	}
	if (fgctl_get_int(meta, "times_dropped") > 0)
		fprintf(f,
			"fgctl: warning: the times of %" PRId64
			" samples were not kept (the recording reached its memory limit): a heat map "
			"or a range of the recording leaves them out\n",
			fgctl_get_int(meta, "times_dropped"));
	if (fgctl_get_int(meta, "malformed") > 0)
		fprintf(f, "fgctl: warning: %" PRId64 " malformed records were skipped\n",
			fgctl_get_int(meta, "malformed"));
	if (n_unreadable > 0) {
		fprintf(f,
			"fgctl: warning: %" PRId64
			" binaries could not be read; their frames show as "
			"module+offset:\n",
			n_unreadable);
		for (size_t i = 0; unreadable && i < json_object_array_length(unreadable); i++) {
			struct json_object *u = json_object_array_get_idx(unreadable, i);

			fprintf(f, "    %s: %s\n", fgctl_get_str(u, "path"),
				fgctl_get_str(u, "error"));
		}
	}
	if (fgctl_get_int(jit, "refused_count") > 0) {
		fprintf(f,
			"fgctl: warning: %" PRId64 " JIT maps were not read; their frames show as "
			"[unknown]:\n",
			fgctl_get_int(jit, "refused_count"));
		for (size_t i = 0; refused && i < json_object_array_length(refused); i++) {
			struct json_object *u = json_object_array_get_idx(refused, i);

			fprintf(f, "    %s: %s", fgctl_get_str(u, "path"),
				fgctl_get_str(u, "reason"));
			if (get_obj(u, "error"))
				fprintf(f, ": %s", fgctl_get_str(u, "error"));
			if (get_obj(u, "size"))
				fprintf(f, " (%.1f MiB, over fgd's JitMapMax=)",
					(double)fgctl_get_int(u, "size") / (1 << 20));
			fprintf(f, "\n");
		}
	}
	fgctl_note_kernel_hidden(f, meta);
	if (fgctl_get_int(meta, "degraded") > 0)
		fprintf(f,
			"fgctl: note: %" PRId64
			" samples could not wait any longer for fgd to read the "
			"binaries they ran in; some of their frames are module+offset, lack inline frames "
			"or were unwound by frame pointer\n",
			fgctl_get_int(meta, "degraded"));
	if (samples == 0)
		fprintf(f,
			"fgctl: warning: no samples were collected: was the target using CPU?\n");
	else if (!quiet && frames) {
		fprintf(f,
			"fgctl: frames: %" PRId64 " named, %" PRId64 " module+offset, %" PRId64
			" unknown\n",
			fgctl_get_int(frames, "named"), fgctl_get_int(frames, "module_offset"),
			fgctl_get_int(frames, "unknown"));
		fprintf(f, "fgctl: stacks (%s): ", fgctl_get_str(meta, "call_graph"));
		show_stack_quality(f, get_obj(meta, "stack_quality"));
		fprintf(f, "\n");
		show_stack_hint(f, meta);
	}
	if (!quiet && samples > 0 && fgctl_get_int(jit, "maps") > 0)
		fprintf(f,
			"fgctl: JIT maps: %" PRId64 " read, %" PRId64 " entries, %" PRId64
			" malformed lines; %" PRId64 " frames named from them\n",
			fgctl_get_int(jit, "maps"), fgctl_get_int(jit, "entries"),
			fgctl_get_int(jit, "malformed"), fgctl_get_int(jit, "frames"));
}
