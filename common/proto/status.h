/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The status reply (docs/PROTOCOL.md, "Status") as a typed struct, with the
 * one encoder fgd uses and the one decoder fgctl uses: both walk the same
 * member tables (status.c), so a member cannot be written under one name
 * and read under another.
 *
 * Members are named as on the wire and hold the wire's units (ms, seconds,
 * bytes); sub-structs are the reply's nested objects, in the reply's order.
 *
 * Ownership: strings are borrowed. The daemon points them at its own state
 * (valid for the call that encodes them); fg_status_from_json() points them
 * into the JSON object it read, so they are valid until that object is put.
 * A NULL string is a member that is absent: it is not written, and an older
 * fgd that lacks it decodes to NULL. Arrays (cpus, recordings, history
 * tiers) are owned by the struct and freed with fg_status_done().
 */

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The longest array a decoded status may hold: far above any machine's CPUs
 * or fgd's recordings and tiers, and a bound on what a hostile reply costs
 * beyond its own JSON.
 */
#define FG_STATUS_MAX_ARRAY 65536

/* "cpus": per CPU, the totals of every recording (the always-on sampler's are in always_on). */
struct fg_status_cpu {
	uint32_t cpu;
	uint64_t samples;
	uint64_t lost; /* records the kernel could not write, and lost samples */
	uint64_t throttled;
	uint64_t malformed;
};

/* "tracking": the always-open dummy events (MMAP2, COMM, FORK, EXIT). */
struct fg_status_tracking {
	uint64_t records, lost, malformed;
};

/* "processes": the process table and the roots it holds, with what their caps dropped. */
struct fg_status_processes {
	uint64_t alive, generations, threads, maps, proc_reads;
	uint64_t dropped_processes, dropped_threads, dropped_maps;
	uint64_t roots, roots_dropped, roots_unknown;
	uint64_t bytes;
};

/* "symbols": binaries, debug information and the names found on the loader thread. */
struct fg_status_symbols {
	uint64_t binaries, binaries_loaded, binaries_unreadable, binaries_dropped;
	uint64_t binaries_debug_file, binaries_minidebuginfo, binaries_dwarf;
	uint64_t dwarf_dropped, dwarf_bytes, dwarf_mapped, dwarf_evicted, dwarf_reread;
	uint64_t inline_skipped, symbols_bytes, symbols_evicted, symbols_refused;
	uint64_t resolved, resolved_bytes, resolved_jobs, resolved_hits, resolved_waits;
	uint64_t resolved_resets;
	uint64_t kernel_symbols, kernel_reloads;
	bool kernel_restricted; /* kptr_restrict hides the kernel's addresses */
};

/* "unwinding": the CFI cache of DWARF mode. */
struct fg_status_unwinding {
	uint64_t binaries, binaries_loaded, binaries_without_cfi, binaries_evicted;
	uint64_t row_hits, row_misses, rows_libdw, rows_uncached, rows_none, bytes, mapped;
};

/*
 * How user stacks ended, summed over the recordings of one mode. The wire
 * also carries complete_pct, which the encoder derives from these (and the
 * decoder only checks to be a number).
 */
struct fg_status_stack_quality {
	uint64_t user_stacks, complete, truncated, failed, fp_frames;
};

/* "stack_quality": one set of figures per call-graph mode. */
struct fg_status_stack_modes {
	struct fg_status_stack_quality fp, dwarf;
};

/* "jit": the JIT maps (/tmp/perf-PID.map) held and read. */
struct fg_status_jit {
	uint64_t maps, maps_read, bytes, reads, refused, resets, budget_skipped;
	uint64_t size_limited, deferred;
	uint64_t max_map_bytes; /* JitMapMax=; 0: none */
	uint64_t held;          /* misses the rate limit answered with the last look at the map */
};

/* One part of the memory budget: what it holds, the most it may, and what it gave up or was refused. */
struct fg_status_memory_part {
	uint64_t bytes, peak, share, evicted, evicted_bytes, refused;
};

/* "memory.parts": each part of the budget, by its name in common/base/budget.h. */
struct fg_status_memory_parts {
	struct fg_status_memory_part window, recordings, waiting, results, processes, jit, rings;
	struct fg_status_memory_part dwarf, cfi, symbols, names;
};

/* "memory": MemoryMax=, the whole daemon's budget, and the RSS beside it (common/base/budget.h). */
struct fg_status_memory {
	uint64_t budget, base, charged, charged_peak, rss, rss_peak;
	bool pressure; /* more is charged than the budget allows now */
	uint64_t relieved, unrelieved;
	struct fg_status_memory_parts parts;
};

/* "loop": how long the event loop was away from the rings and the clients. */
struct fg_status_loop {
	uint64_t iterations, longest_ms, slow, slow_ms;
	uint64_t recent_longest_ms; /* the longest turn of the last 5 to 10 s */
	uint64_t cpu_wait_ms; /* the loop's thread ready to run, waiting for a CPU, since start */
	uint32_t realtime_priority;  /* SCHED_FIFO's now; 0: normal priority */
	uint64_t realtime_demotions; /* times it ran too long without sleeping, and lost it */
};

/* "loader": the thread that reads files off the loop. */
struct fg_status_loader {
	uint64_t jobs, queued, busy_ms, longest_job_ms, longest_wait_ms;
};

/* One tier of the history's compaction policy: files this old become files this long. */
struct fg_status_tier {
	uint64_t age_seconds, length_seconds;
};

/* "always_on.history": the slices on disk, their policy and compaction's counters. */
struct fg_status_history {
	const char *directory; /* borrowed (see the top of this file) */
	uint64_t files, bytes, written, write_errors, out_of_order, corrupt, future, pruned;
	uint64_t max_bytes;
	struct fg_status_tier *tiers; /* owned: freed by fg_status_done() */
	size_t n_tiers;
	uint64_t keep_seconds; /* 0: no age limit */
	uint64_t merged, merged_sources, corrupt_dropped, leftovers, expired, compact_errors;
	const char *last_compact_error; /* borrowed; NULL: no compaction failed */
};

/* "always_on": the always-on sampler and its window. Only enabled is written when it is off. */
struct fg_status_always_on {
	bool enabled;
	uint32_t frequency;
	const char *call_graph; /* borrowed */
	uint32_t slice_seconds, window_seconds;
	uint64_t memory_max, slice_budget, bytes, slices;
	uint64_t times_bytes;    /* of bytes, the samples' times */
	uint64_t untimed_slices; /* slices held that kept no times (past their room) */
	int64_t oldest_ms;       /* Unix ms */
	uint64_t samples, folded_samples, unattributed_samples;
	uint64_t total_samples, total_folded_samples, total_folded_stacks;
	uint64_t total_unattributed_samples;
	uint64_t compactions, expired_slices, idle_samples, unknown_process_samples, errors;
	uint64_t memo_bytes, memo_resets, waiting, waited, degraded, lost, throttled;
	bool has_history; /* a usable state directory: history below is written */
	struct fg_status_history history;
};

/*
 * "off_cpu": whether off-CPU recording (BPF on sched_switch) can work in
 * this fgd, and always-on off-CPU (OffCpu=, fgd.conf(5)) when it runs: its
 * source's figures since it started, and its window and history in
 * always_on's form (counts in µs).
 */
struct fg_status_off_cpu {
	bool available;
	const char *why; /* borrowed; why not, when not available; NULL otherwise */
	bool always_on;  /* always-on off-CPU runs: what follows is set */
	uint32_t min_block_us;
	uint64_t blocks, blocked_us;          /* emitted by the source */
	uint64_t lost;                        /* lost blocks: too many threads away, or ring full */
	uint64_t stacks_not_taken;            /* kernel or user stacks the program could not take */
	uint64_t user_dump_failed;            /* DWARF mode: blocks without their user stack copy */
	uint64_t switch_ins_unseen;           /* blocks measured from run time */
	uint64_t stack_renewals, stacks_lost; /* of the stack maps (fgd-offcpu.h) */
	struct fg_status_always_on window;
};

/* "server": the clients, their limits and the recordings. */
struct fg_status_server {
	uint64_t clients, max_clients, clients_rejected, clients_evicted;
	uint64_t short_clients, max_short_clients, short_requests;
	uint64_t requests, bad_requests, denied;
	uint64_t result_bytes, result_max_bytes, user_result_max_bytes, results_refused;
	uint64_t recordings_active, max_recordings, recordings_started, recordings_completed;
	uint64_t recordings_aborted;
};

/* "recordings": one recording sampling now. */
struct fg_status_recording {
	uint32_t uid;
	uint64_t elapsed_ms, samples, lost;
	uint64_t rate_limited; /* off-CPU blocks not kept: past a non-root user's rate */
};

struct fg_status {
	const char *version; /* borrowed */
	uint32_t pid;
	uint64_t uptime_ms;
	const char *event; /* borrowed: the sampling event, e.g. "cycles" or "cpu-clock" */
	uint32_t default_frequency, max_frequency, max_stack;
	uint64_t ring_pages;
	const char *call_graph; /* borrowed: the default mode, "fp" or "dwarf" */
	uint32_t stack_dump;
	const char *socket;         /* borrowed */
	struct fg_status_cpu *cpus; /* owned: freed by fg_status_done() */
	size_t n_cpus;
	struct fg_status_tracking tracking;
	struct fg_status_processes processes;
	struct fg_status_symbols symbols;
	struct fg_status_unwinding unwinding;
	struct fg_status_stack_modes stack_quality;
	/*
	 * Members an older fgd lacks, which fgctl then leaves out rather than
	 * showing zeros: the encoder writes each only when its flag is set, the
	 * decoder sets the flag when the member is there.
	 */
	bool has_jit, has_loop, has_loader, has_memory, has_off_cpu;
	struct fg_status_jit jit;
	struct fg_status_loop loop;
	struct fg_status_loader loader;
	struct fg_status_memory memory;
	struct fg_status_off_cpu off_cpu;
	struct fg_status_always_on always_on;
	struct fg_status_server server;
	struct fg_status_recording *recordings; /* owned: freed by fg_status_done() */
	size_t n_recordings;
};

/* Frees the arrays s owns and zeroes it. Accepts a zeroed or half-filled struct. */
void fg_status_done(struct fg_status *s);

/*
 * The status reply: a protocol message ("fgd", "type": "status") with every
 * member of s, in the order of the struct (and of status.c's tables; docs/
 * PROTOCOL.md says what each means). s is borrowed for the call. Returns a new object the caller puts with json_object_put(), or
 * NULL on ENOMEM.
 */
struct json_object *fg_status_to_json(const struct fg_status *s);

/*
 * Reads a status reply into *ret, which the caller releases with
 * fg_status_done() and whose strings point into obj (borrowed until obj is
 * put). A member that is absent reads as zero, false or NULL (an older fgd);
 * members it does not know are ignored (a newer one); "fgd" and "type" are
 * the caller's to check. Returns 0, -EBADMSG for obj not an object, a member
 * of the wrong JSON type (null included), an integer out of its member's
 * range (a negative count), or an array longer than FG_STATUS_MAX_ARRAY, or
 * -ENOMEM. *ret is untouched on failure.
 */
int fg_status_from_json(struct json_object *obj, struct fg_status *ret);
