/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The status reply's types without its codec: one struct per object of the
 * reply (docs/PROTOCOL.md, "Status"). The daemon's components fill their
 * part directly (the symbolizer struct fg_status_symbols, the process table
 * struct fg_status_processes, ...) and keep their counters in it, so that
 * a counter has one name from the component to the JSON to fgctl's
 * display; they include this header, not json-c. The codec that writes
 * and reads the reply is proto/status.h.
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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/*
 * "processes": the process table and the roots it holds, with what their
 * caps dropped (resolver/fgd-proctab.h keeps its counters in it).
 */
struct fg_status_processes {
	uint64_t alive;       /* current generations */
	uint64_t generations; /* current and ended, not yet reaped */
	uint64_t threads;
	uint64_t maps;
	uint64_t proc_reads;        /* processes read from /proc */
	uint64_t dropped_processes; /* refused at the cap */
	uint64_t dropped_threads;
	uint64_t dropped_maps;
	uint64_t roots;         /* foreign roots (containers, chroots) held */
	uint64_t roots_dropped; /* refused at their cap: those processes resolve nothing by path */
	uint64_t roots_unknown; /* processes gone before their root could be read */
	uint64_t bytes;         /* the table's heap: generations, maps, cgroups, threads, indexes */
};

/*
 * "symbols": binaries, debug information and the names found on the loader
 * thread (symbols/fgd-symbols.h keeps its counters in it).
 */
struct fg_status_symbols {
	uint64_t binaries;               /* in the cache now */
	uint64_t binaries_loaded;        /* symbol tables parsed, ever */
	uint64_t binaries_unreadable;    /* binaries that could not be read, ever */
	uint64_t binaries_dropped;       /* refused because the cache was full */
	uint64_t binaries_debug_file;    /* with a separate debug file found, ever */
	uint64_t binaries_minidebuginfo; /* with symbols from .gnu_debugdata, ever */
	uint64_t binaries_dwarf;         /* with DWARF read (inline frames), ever */
	uint64_t dwarf_dropped;          /* DWARF not read: more than the budget had room for */
	/* DWARF held on the heap now: sections read or inflated, libdw's tables */
	uint64_t dwarf_bytes;
	uint64_t dwarf_mapped;  /* debug sections read in place from mapped files (fgd-dwarf.h) */
	uint64_t dwarf_evicted; /* binaries' DWARF given up under memory pressure, ever */
	uint64_t dwarf_reread;  /* evicted DWARF read again, ever */
	/* addresses named without inline frames: their DWARF was evicted */
	uint64_t inline_skipped;
	uint64_t symbols_bytes;   /* symbol tables held now, kallsyms included */
	uint64_t symbols_evicted; /* binaries' symbol tables given up under memory pressure, ever */
	uint64_t symbols_refused; /* symbol tables read but larger than the budget had room for */
	uint64_t resolved;        /* addresses named on the loader's thread, kept now */
	uint64_t resolved_bytes;  /* what they take */
	uint64_t resolved_jobs;   /* addresses sent to the loader's thread, ever */
	uint64_t resolved_hits;   /* names found kept, ever */
	uint64_t resolved_waits;  /* lookups that waited for room on the loader, ever */
	/* times the table was emptied at its limit, or under memory pressure */
	uint64_t resolved_resets;
	uint64_t kernel_symbols; /* in kallsyms */
	uint64_t kernel_reloads; /* kallsyms read, ever */
	bool kernel_restricted;  /* kptr_restrict hides the kernel's addresses */
};

/* "unwinding": the CFI cache of DWARF mode (resolver/fgd-unwind.h keeps its counters in it). */
struct fg_status_unwinding {
	uint64_t binaries;             /* holding CFI now */
	uint64_t binaries_loaded;      /* ever */
	uint64_t binaries_without_cfi; /* without usable CFI (unreadable, stripped of it), ever */
	uint64_t binaries_evicted;
	uint64_t row_hits, row_misses;
	uint64_t
		rows_libdw; /* misses our .eh_frame reader left to libdw (common/unwind/ehframe.h) */
	uint64_t rows_uncached; /* rows too complex for the cache, looked up each time */
	uint64_t rows_none;     /* misses at addresses without CFI (kept: later ones hit) */
	uint64_t bytes;         /* heap held: CFI sections read, libdw's FDEs, the row cache */
	uint64_t mapped; /* CFI sections read in place from mapped binaries (fgd-elffile.h) */
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

/* "jit": the JIT maps (/tmp/perf-PID.map) held and read (resolver/fgd-jit.h keeps its counters in it). */
struct fg_status_jit {
	uint64_t maps;      /* map states held now */
	uint64_t maps_read; /* of which trusted and read */
	uint64_t bytes;     /* memory of all parsed maps */
	uint64_t reads;     /* reads of new bytes, ever */
	uint64_t refused;   /* maps refused by the trust rules, ever */
	uint64_t resets;    /* maps read again from the start (shrunk, replaced, rewritten), ever */
	uint64_t budget_skipped; /* reads skipped at the memory budget, ever */
	uint64_t size_limited;   /* maps that grew past the per-map limit while read, ever */
	uint64_t deferred;       /* refreshes put off because the read budget was spent, ever */
	uint64_t max_map_bytes;  /* JitMapMax=; 0: none */
	/* misses answered by the last look, not a new one (the rate limit), ever */
	uint64_t held;
};

/*
 * One part of the memory budget: what it holds, the most it may, and what
 * it gave up or was refused (common/base/budget.h keeps its figures in it).
 */
struct fg_status_memory_part {
	uint64_t bytes;         /* charged now */
	uint64_t peak;          /* the most it held at once */
	uint64_t share;         /* the most it may hold */
	uint64_t evicted;       /* entries its evictor gave up under pressure, ever */
	uint64_t evicted_bytes; /* what they held */
	uint64_t refused;       /* growths refused, ever: fg_budget__refused() */
};

/*
 * "memory.parts": each part of the budget, by its name in
 * common/base/budget.h and in the order of its enum fg_budget_part, which
 * indexes them as by_part[] (budget.c checks that the two agree).
 */
struct fg_status_memory_parts {
	struct fg_status_memory_part window, recordings, waiting, results, processes, jit, rings;
	struct fg_status_memory_part dwarf, cfi, symbols, names;
};
#define FG_STATUS_MEMORY_PARTS 11

/*
 * "memory": MemoryMax=, the whole daemon's budget, and the RSS beside it
 * (common/base/budget.h keeps its figures in it).
 */
struct fg_status_memory {
	uint64_t budget;       /* MemoryMax= */
	uint64_t base;         /* what the daemon holds outside every part */
	uint64_t charged;      /* the parts' bytes together */
	uint64_t charged_peak; /* the most charged at once */
	uint64_t rss;          /* the process's resident memory, as last told */
	/*
	 * The most it ever was, as last told: the kernel's VmHWM, or an RSS
	 * seen higher (the kernel brings VmHWM up to date only as memory is
	 * unmapped, not as it is given back otherwise).
	 */
	uint64_t rss_peak;
	bool pressure;       /* more is charged than the budget allows now */
	uint64_t relieved;   /* fg_budget__relieve() calls that had to evict, ever */
	uint64_t unrelieved; /* of those, the ones that could not get back within the total */
	union {
		struct fg_status_memory_parts parts;
		struct fg_status_memory_part by_part[FG_STATUS_MEMORY_PARTS];
	};
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
