/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "fgctl-display.h"
#include "macro.h"
#include "proto.h"

static bool progress_shown;

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

	if (!obj || !json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string))
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

static double pct(int64_t part, int64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
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
		fprintf(f, "fgctl: note: %.0f%% of user stacks are deeper than the %" PRId64 "-byte stack "
			   "dump; record with --stack-dump %d for whole stacks\n",
			pct(fgctl_get_int(q, "truncated"), n), fgctl_get_int(meta, "stack_dump"),
			(int)MIN(fgctl_get_int(meta, "stack_dump") * 4, (int64_t)FG_PROTO_MAX_STACK_DUMP) & ~7);
	else if (!dwarf && pct(fgctl_get_int(q, "failed"), n) > 50.0)
		fprintf(f, "fgctl: note: most user stacks stop early: the code has no frame pointers; "
			   "record with --call-graph dwarf\n");
}

static void show_unwinding(FILE *f, struct json_object *st)
{
	struct json_object *unw = get_obj(st, "unwinding"), *quality = get_obj(st, "stack_quality");
	int64_t hits = fgctl_get_int(unw, "row_hits"), misses = fgctl_get_int(unw, "row_misses");

	fprintf(f, "  stacks:      %s by default", fgctl_get_str(st, "call_graph"));
	if (strcmp(fgctl_get_str(st, "call_graph"), "dwarf") == 0)
		fprintf(f, " (%" PRId64 "-byte stack dumps)", fgctl_get_int(st, "stack_dump"));
	fprintf(f, "\n");
	for (const char *const *m = (const char *const[]){ "dwarf", "fp", NULL }; *m; m++) {
		struct json_object *q = get_obj(quality, *m);

		if (fgctl_get_int(q, "user_stacks") == 0)
			continue;
		fprintf(f, "    %-5s      ", *m);
		show_stack_quality(f, q);
		fprintf(f, "\n");
	}
	fprintf(f, "  unwinding:   CFI of %" PRId64 " binaries held (%" PRId64 " read, %" PRId64
		   " without CFI, %" PRId64 " evicted), %.1f MiB; row cache %.1f%% hits\n",
		fgctl_get_int(unw, "binaries"), fgctl_get_int(unw, "binaries_loaded"),
		fgctl_get_int(unw, "binaries_without_cfi"), fgctl_get_int(unw, "binaries_evicted"),
		(double)fgctl_get_int(unw, "bytes") / (1 << 20), pct(hits, hits + misses));
}

/* The history on disk: what it holds, what compaction did, and every failure. */
static void show_history(FILE *f, struct json_object *h)
{
	if (!h) {
		fprintf(f, "  history:     none\n");
		return;
	}
	fprintf(f, "  history:     %s: %" PRId64 " files, %.1f of %.1f MiB; %" PRId64 " slices written, %"
		   PRId64 " write errors, %" PRId64 " damaged files skipped, %" PRId64 " pruned\n",
		fgctl_get_str(h, "directory"), fgctl_get_int(h, "files"),
		(double)fgctl_get_int(h, "bytes") / (1 << 20),
		(double)fgctl_get_int(h, "max_bytes") / (1 << 20), fgctl_get_int(h, "written"),
		fgctl_get_int(h, "write_errors"), fgctl_get_int(h, "corrupt"), fgctl_get_int(h, "pruned"));
	if (fgctl_get_int(h, "out_of_order"))
		fprintf(f, "               %" PRId64 " slices not written: the wall clock went back into "
			   "history already on disk\n", fgctl_get_int(h, "out_of_order"));
	fprintf(f, "               compaction: %" PRId64 " merged files from %" PRId64 " (%" PRId64
		   " damaged dropped), %" PRId64 " leftovers and %" PRId64 " expired deleted, %" PRId64
		   " errors%s%s\n",
		fgctl_get_int(h, "merged"), fgctl_get_int(h, "merged_sources"),
		fgctl_get_int(h, "corrupt_dropped"), fgctl_get_int(h, "leftovers"),
		fgctl_get_int(h, "expired"), fgctl_get_int(h, "compact_errors"),
		fgctl_get_int(h, "compact_errors") ? ", last: " : "",
		fgctl_get_int(h, "compact_errors") ? fgctl_get_str(h, "last_compact_error") : "");
}

/* The always-on window: its rate, what it holds, and what its memory ceiling folded away. */
static void show_always_on(FILE *f, struct json_object *ao)
{
	if (!ao || !fgctl_get_int(ao, "enabled")) {
		fprintf(f, "  always-on:   off\n");
		return;
	}
	fprintf(f, "  always-on:   %" PRId64 " Hz, %" PRId64 " slices of %" PRId64 " s (window %" PRId64
		   " s); %.1f of %.1f MiB; %" PRId64 " samples held, %" PRId64 " lost\n",
		fgctl_get_int(ao, "frequency"), fgctl_get_int(ao, "slices"),
		fgctl_get_int(ao, "slice_seconds"), fgctl_get_int(ao, "window_seconds"),
		(double)fgctl_get_int(ao, "bytes") / (1 << 20),
		(double)fgctl_get_int(ao, "memory_max") / (1 << 20), fgctl_get_int(ao, "samples"),
		fgctl_get_int(ao, "lost"));
	fprintf(f, "               folded away by the memory ceiling: %" PRId64 " samples in %" PRId64
		   " stacks into [other], %" PRId64 " samples into [other processes] (since start; %"
		   PRId64 " and %" PRId64 " in the window now)\n",
		fgctl_get_int(ao, "total_folded_samples"), fgctl_get_int(ao, "total_folded_stacks"),
		fgctl_get_int(ao, "total_unattributed_samples"), fgctl_get_int(ao, "folded_samples"),
		fgctl_get_int(ao, "unattributed_samples"));
	show_history(f, get_obj(ao, "history"));
}

/* How long fgd's loop was away from the rings and clients, and what its loader thread read. */
static void show_loop(FILE *f, struct json_object *loop, struct json_object *loader)
{
	if (!loop || !loader)
		return;
	fprintf(f, "  loop:        longest turn %" PRId64 " ms, %" PRId64 " over %" PRId64 " ms\n",
		fgctl_get_int(loop, "longest_ms"), fgctl_get_int(loop, "slow"),
		fgctl_get_int(loop, "slow_ms"));
	fprintf(f, "  loader:      %" PRId64 " files and names read off the loop (%.1f s), %" PRId64
		   " queued; longest %" PRId64 " ms, longest wait %" PRId64 " ms\n",
		fgctl_get_int(loader, "jobs"), (double)fgctl_get_int(loader, "busy_ms") / 1000,
		fgctl_get_int(loader, "queued"), fgctl_get_int(loader, "longest_job_ms"),
		fgctl_get_int(loader, "longest_wait_ms"));
}

void fgctl_show_status(FILE *f, struct json_object *st)
{
	struct json_object *server = get_obj(st, "server"), *procs = get_obj(st, "processes");
	struct json_object *syms = get_obj(st, "symbols"), *track = get_obj(st, "tracking");
	struct json_object *cpus = get_obj(st, "cpus"), *active = get_obj(st, "recordings");
	struct json_object *jit = get_obj(st, "jit");
	char up[32];

	format_duration(up, sizeof(up), (uint64_t)fgctl_get_int(st, "uptime_ms"));
	fprintf(f, "fgd %s, pid %" PRId64 ", up %s\n", fgctl_get_str(st, "version"),
		fgctl_get_int(st, "pid"), up);
	fprintf(f, "  socket:      %s\n", fgctl_get_str(st, "socket"));
	fprintf(f, "  event:       %s%s\n", fgctl_get_str(st, "event"),
		strcmp(fgctl_get_str(st, "event"), "cpu-clock") == 0 ?
			" (software clock: no hardware PMU events here)" : " (hardware PMU)");
	fprintf(f, "  frequency:   %" PRId64 " Hz default, %" PRId64 " Hz max; callchains up to %" PRId64
		   " frames\n", fgctl_get_int(st, "default_frequency"),
		fgctl_get_int(st, "max_frequency"), fgctl_get_int(st, "max_stack"));
	show_always_on(f, get_obj(st, "always_on"));
	fprintf(f, "  recordings:  %" PRId64 " active (max %" PRId64 "), %" PRId64 " completed, %" PRId64
		   " aborted\n", fgctl_get_int(server, "recordings_active"),
		fgctl_get_int(server, "max_recordings"), fgctl_get_int(server, "recordings_completed"),
		fgctl_get_int(server, "recordings_aborted"));
	for (size_t i = 0; active && i < json_object_array_length(active); i++) {
		struct json_object *a = json_object_array_get_idx(active, i);

		fprintf(f, "               uid %" PRId64 ": %.1f s, %" PRId64 " samples, %" PRId64 " lost\n",
			fgctl_get_int(a, "uid"), (double)fgctl_get_int(a, "elapsed_ms") / 1000,
			fgctl_get_int(a, "samples"), fgctl_get_int(a, "lost"));
	}
	fprintf(f, "  clients:     %" PRId64 " connected (max %" PRId64 "), %" PRId64 " rejected, %" PRId64
		   " idle ones closed to make room, %" PRId64 " short requests; %" PRId64
		   " requests, %" PRId64 " malformed, %" PRId64 " denied\n",
		fgctl_get_int(server, "clients"), fgctl_get_int(server, "max_clients"),
		fgctl_get_int(server, "clients_rejected"), fgctl_get_int(server, "clients_evicted"),
		fgctl_get_int(server, "short_requests"), fgctl_get_int(server, "requests"),
		fgctl_get_int(server, "bad_requests"), fgctl_get_int(server, "denied"));
	fprintf(f, "  results:     %.1f MiB held while streaming, %" PRId64 " refused over their budget "
		   "(%" PRId64 " MiB a client, %" PRId64 " MiB for non-root users)\n",
		(double)fgctl_get_int(server, "result_bytes") / (1 << 20),
		fgctl_get_int(server, "results_refused"), fgctl_get_int(server, "result_max_bytes") >> 20,
		fgctl_get_int(server, "user_result_max_bytes") >> 20);
	fprintf(f, "  processes:   %" PRId64 " alive, %" PRId64 " threads, %" PRId64 " mappings; read from /proc: %" PRId64
		   "; dropped at limits: %" PRId64 " processes, %" PRId64 " threads, %" PRId64 " mappings\n",
		fgctl_get_int(procs, "alive"), fgctl_get_int(procs, "threads"),
		fgctl_get_int(procs, "maps"), fgctl_get_int(procs, "proc_reads"),
		fgctl_get_int(procs, "dropped_processes"), fgctl_get_int(procs, "dropped_threads"),
		fgctl_get_int(procs, "dropped_maps"));
	fprintf(f, "  roots:       %" PRId64 " container or chroot roots held; %" PRId64
		   " dropped at the limit, %" PRId64 " processes gone before theirs was read\n",
		fgctl_get_int(procs, "roots"), fgctl_get_int(procs, "roots_dropped"),
		fgctl_get_int(procs, "roots_unknown"));
	fprintf(f, "  symbols:     %" PRId64 " binaries known, %" PRId64 " parsed, %" PRId64
		   " unreadable, %" PRId64 " dropped; %" PRId64 " kernel symbols%s\n",
		fgctl_get_int(syms, "binaries"), fgctl_get_int(syms, "binaries_loaded"),
		fgctl_get_int(syms, "binaries_unreadable"), fgctl_get_int(syms, "binaries_dropped"),
		fgctl_get_int(syms, "kernel_symbols"),
		fgctl_get_int(syms, "kernel_restricted") ? " (HIDDEN by kptr_restrict)" : "");
	fprintf(f, "  debug info:  %" PRId64 " separate debug files, %" PRId64 " MiniDebugInfo, %" PRId64
		   " with DWARF (%.1f MiB held); DWARF dropped at limits: %" PRId64 "\n",
		fgctl_get_int(syms, "binaries_debug_file"), fgctl_get_int(syms, "binaries_minidebuginfo"),
		fgctl_get_int(syms, "binaries_dwarf"),
		(double)fgctl_get_int(syms, "dwarf_bytes") / (1 << 20), fgctl_get_int(syms, "dwarf_dropped"));
	show_unwinding(f, st);
	if (jit)
		fprintf(f, "  jit maps:    %" PRId64 " processes looked at, %" PRId64 " maps read (%.1f MiB), %"
			   PRId64 " refused, %" PRId64 " read anew; %" PRId64 " reads skipped at the budget, %"
			   PRId64 " put off at the read rate, %" PRId64 " stopped at the size limit\n",
			fgctl_get_int(jit, "maps"), fgctl_get_int(jit, "maps_read"),
			(double)fgctl_get_int(jit, "bytes") / (1 << 20), fgctl_get_int(jit, "refused"),
			fgctl_get_int(jit, "resets"), fgctl_get_int(jit, "budget_skipped"),
			fgctl_get_int(jit, "deferred"), fgctl_get_int(jit, "size_limited"));
	fprintf(f, "  tracking:    %" PRId64 " records, %" PRId64 " lost, %" PRId64 " malformed\n",
		fgctl_get_int(track, "records"), fgctl_get_int(track, "lost"),
		fgctl_get_int(track, "malformed"));
	show_loop(f, get_obj(st, "loop"), get_obj(st, "loader"));
	fprintf(f, "  sampling, all recordings so far:\n");
	fprintf(f, "    %5s %12s %10s %10s %10s\n", "cpu", "samples", "lost", "throttled", "malformed");
	for (size_t i = 0; cpus && i < json_object_array_length(cpus); i++) {
		struct json_object *c = json_object_array_get_idx(cpus, i);

		fprintf(f, "    %5" PRId64 " %12" PRId64 " %10" PRId64 " %10" PRId64 " %10" PRId64 "\n",
			fgctl_get_int(c, "cpu"), fgctl_get_int(c, "samples"), fgctl_get_int(c, "lost"),
			fgctl_get_int(c, "throttled"), fgctl_get_int(c, "malformed"));
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
		fprintf(f, "\r\033[Kfgctl: recording %s: %.0f s left, %" PRIu64 " samples%s (Ctrl-C stops early)",
			target, (double)(duration_ms > elapsed_ms ? duration_ms - elapsed_ms : 0) / 1000,
			samples, lost_text);
	else
		fprintf(f, "\r\033[Kfgctl: recording %s: %.0f s, %" PRIu64 " samples%s (Ctrl-C stops)", target,
			(double)elapsed_ms / 1000, samples, lost_text);
	fflush(f);
	progress_shown = true;
}

void fgctl_end_progress(FILE *f)
{
	if (progress_shown)
		fprintf(f, "\r\033[K");
	progress_shown = false;
}

void fgctl_note_kernel_hidden(FILE *f, struct json_object *meta)
{
	if (fgctl_get_int(meta, "kernel_hidden"))
		fprintf(f, "fgctl: note: kernel frames are collapsed into [kernel] for unprivileged users "
			   "(kernel.perf_event_paranoid >= 2)\n");
}

void fgctl_show_summary(FILE *f, const char *output, const char *reason, struct json_object *meta,
			bool quiet)
{
	struct json_object *frames = get_obj(meta, "frames"), *unreadable = get_obj(meta, "unreadable_binaries");
	struct json_object *exited = get_obj(meta, "exited"), *jit = get_obj(meta, "jit_maps");
	struct json_object *refused = get_obj(jit, "refused");
	int64_t samples = fgctl_get_int(meta, "samples"), lost = fgctl_get_int(meta, "lost");
	int64_t dropped = fgctl_get_int(meta, "dropped"), n_unreadable = fgctl_get_int(meta, "unreadable_count");

	fgctl_end_progress(f);
	if (!quiet)
		fprintf(f, "fgctl: wrote %s: %" PRId64 " samples in %.1f s (%s, %" PRId64 " Hz), %" PRId64
			   " stacks; %" PRId64 " lost, %" PRId64 " throttled\n",
			output, samples, (double)fgctl_get_int(meta, "duration_ms") / 1000,
			fgctl_get_str(meta, "event"), fgctl_get_int(meta, "frequency"),
			fgctl_get_int(meta, "stacks"), lost, fgctl_get_int(meta, "throttled"));
	if (strcmp(reason, "exited") == 0 || (exited && json_object_array_length(exited) > 0)) {
		for (size_t i = 0; exited && i < json_object_array_length(exited); i++)
			fprintf(f, "fgctl: note: process %" PRId64 " exited during the recording; its samples "
				   "until then are kept\n",
				json_object_get_int64(json_object_array_get_idx(exited, i)));
	}
	if (lost > 0)
		fprintf(f, "fgctl: warning: the kernel lost %" PRId64 " records: the profile is incomplete "
			   "(lower -F, or start fgd with a bigger --ring-pages)\n", lost);
	if (dropped > 0)
		fprintf(f, "fgctl: warning: %" PRId64 " samples were dropped at fgd's limits (too many "
			   "distinct stacks or locations)\n", dropped);
	if (fgctl_get_int(meta, "malformed") > 0)
		fprintf(f, "fgctl: warning: %" PRId64 " malformed records were skipped\n",
			fgctl_get_int(meta, "malformed"));
	if (n_unreadable > 0) {
		fprintf(f, "fgctl: warning: %" PRId64 " binaries could not be read; their frames show as "
			   "module+offset:\n", n_unreadable);
		for (size_t i = 0; unreadable && i < json_object_array_length(unreadable); i++) {
			struct json_object *u = json_object_array_get_idx(unreadable, i);

			fprintf(f, "    %s: %s\n", fgctl_get_str(u, "path"), fgctl_get_str(u, "error"));
		}
	}
	if (fgctl_get_int(jit, "refused_count") > 0) {
		fprintf(f, "fgctl: warning: %" PRId64 " JIT maps were not read; their frames show as "
			   "[unknown]:\n", fgctl_get_int(jit, "refused_count"));
		for (size_t i = 0; refused && i < json_object_array_length(refused); i++) {
			struct json_object *u = json_object_array_get_idx(refused, i);

			fprintf(f, "    %s: %s", fgctl_get_str(u, "path"), fgctl_get_str(u, "reason"));
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
		fprintf(f, "fgctl: note: %" PRId64 " samples could not wait any longer for fgd to read the "
			   "binaries they ran in; some of their frames are module+offset, lack inline frames "
			   "or were unwound by frame pointer\n", fgctl_get_int(meta, "degraded"));
	if (samples == 0)
		fprintf(f, "fgctl: warning: no samples were collected: was the target using CPU?\n");
	else if (!quiet && frames) {
		fprintf(f, "fgctl: frames: %" PRId64 " named, %" PRId64 " module+offset, %" PRId64 " unknown\n",
			fgctl_get_int(frames, "named"), fgctl_get_int(frames, "module_offset"),
			fgctl_get_int(frames, "unknown"));
		fprintf(f, "fgctl: stacks (%s): ", fgctl_get_str(meta, "call_graph"));
		show_stack_quality(f, get_obj(meta, "stack_quality"));
		fprintf(f, "\n");
		show_stack_hint(f, meta);
	}
	if (!quiet && samples > 0 && fgctl_get_int(jit, "maps") > 0)
		fprintf(f, "fgctl: JIT maps: %" PRId64 " read, %" PRId64 " entries, %" PRId64
			   " malformed lines; %" PRId64 " frames named from them\n",
			fgctl_get_int(jit, "maps"), fgctl_get_int(jit, "entries"),
			fgctl_get_int(jit, "malformed"), fgctl_get_int(jit, "frames"));
}
