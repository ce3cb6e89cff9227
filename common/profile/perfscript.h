/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The `perf script` text importer: folds the samples perf prints into a
 * folded-stack model, as Brendan Gregg's stackcollapse-perf.pl does, so that
 * `perf script | fgctl render --from perf` needs no stackcollapse step. It
 * takes one line at a time (fg_lines_read_fd() feeds it) and allocates
 * nothing per line once its buffers have grown to the longest sample.
 *
 * The reference is stackcollapse-perf.pl as of FlameGraph commit 778d6d4b
 * (the one with --addrs, --event-filter, --srcline, --no-aggregate-stacks).
 * On the text perf prints, the folded output is the same, byte for byte,
 * once both are sorted: the three patterns the script matches lines with
 * are implemented with the same backtracking results, not approximated.
 *
 * - A sample is a header line starting in column 0, its stack lines, and a
 *   blank line. The header's comm is everything up to the first blank
 *   followed by digits and a blank (so comms may hold spaces), the digits
 *   are the TID, or PID/TID. Spaces in the comm become '_'.
 * - The root frame is the comm; --pid makes it "comm-PID", --tid
 *   "comm-PID/TID". A header with only a TID has PID "?", as has a PID/TID
 *   whose TID is "0" (the script's truthiness test: "swapper 0/0" gives
 *   "swapper-?/0").
 * - A header ending in "[PERIOD] EVENT:" names the event; the first one seen
 *   is kept and samples of other events are skipped, unless
 *   opts->event_filter names one. A header with no such ending (e.g.
 *   `-F comm,pid,tid,ip,sym,dso`, or a tracepoint's fields) is never
 *   filtered.
 * - Each sample counts its period when the header shows one (the script
 *   sums periods: 2004008 per sample at 499 Hz cpu-clock), else 1; a
 *   period of "0" counts 1 too. opts->count_samples counts 1 regardless.
 * - Stack lines are "IP SYM[+OFF] (DSO)", leaf first; the folded stack is
 *   root first. "+0x<hex>" offsets are dropped. A symbol starting with '('
 *   is skipped. "[unknown]" becomes "[DSO basename]", or "[unknown]" when
 *   the DSO is unknown too; with --addrs "[NAME <IP>]".
 * - Names are tidied as the script does: ';' becomes ':', everything from
 *   the first '(' on is dropped (unless it opens "(anonymous namespace)",
 *   or the name looks like a Go method, "pkg.(*T).M"), quotes are removed,
 *   and for comms starting "java" a leading 'L' of a name with a '/'.
 * - A symbol holding "->" (perf-map-agent's unfolded Java inlining) is split
 *   into frames there, each after the first annotated "_[i]". This also
 *   splits C++'s "operator->", exactly as the script does.
 * - --kernel appends "_[k]" to frames whose DSO starts with '[' or ends in
 *   "vmlinux" and does not contain "unknown" (so "[vdso]" counts);
 *   --jit appends "_[j]" to frames from "/tmp/perf-PID.map".
 * - Inlined frames: perf 6.1 prints them (with --call-graph dwarf; not for
 *   frame-pointer callchains) as extra stack lines "IP FUNC+OFF (inlined)"
 *   sharing the IP of the function they were inlined into, innermost first.
 *   They are kept as frames in that order, as the script keeps them (its
 *   --inline option, which runs addr2line itself, is not implemented).
 *   opts->no_inline drops an "(inlined)" line when the next stack line has
 *   the same IP, so one frame per address remains, as `perf script
 *   --no-inline` would print; the last line of an address is kept even when
 *   perf marks it inlined, which it does when the DWARF name of the
 *   function differs from its ELF symbol (__libc_start_main_impl).
 * - Lines starting with '#' are skipped anywhere.
 *
 * Deliberate differences, all on text the script mishandles:
 * - Samples without a callchain (no -g): perf prints each on one line with
 *   the comm right-aligned, so it starts with a blank, and the script
 *   folds nothing at all. Here such a line, between samples, becomes the
 *   stack "comm;SYM" (annotated as a stack line would be), or just "comm"
 *   if nothing after the event parses as "IP SYM (DSO)".
 * - A trailing '\r' is ignored (CRLF text); the script would see no blank
 *   lines and merge every sample into one.
 * - A header after a stack line flushes the sample before it; the script
 *   appends the next sample's frames to it. The last sample is folded at
 *   fg_perfscript__finish() without a final blank line; the script drops it.
 * - Counts are doubles (exact below 2^53, see folded.h); perl keeps
 *   integers to 2^64 and prints larger sums in exponent form. A period too
 *   large for a double makes its header malformed.
 * - The order of the output is the model's (frame by frame), not the
 *   script's `sort` of whole lines; a ';' in a comm splits it into frames
 *   so that stacks merge exactly as the script's strings do.
 * - The script's --inline/--context/--srcline options (addr2line, source
 *   lines) and --no-aggregate-stacks are not provided.
 *
 * Malformed lines (the ones the script warns "Unrecognized line" about, and
 * headers with an unusable period) are counted and skipped, never fatal.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/macro.h"
#include "profile/folded.h"

struct fg_perfscript_opts {
	bool pid;             /* stackcollapse-perf.pl --pid: root frame "comm-PID" */
	bool tid;             /* --tid: "comm-PID/TID" */
	bool annotate_kernel; /* --kernel: kernel frames get "_[k]" */
	bool annotate_jit;    /* --jit: JIT frames (perf-PID.map) get "_[j]" */
	bool addrs;           /* --addrs: unknown symbols shown as their address */
	/* Drop the inline frames perf script prints; default: keep them as frames. */
	bool no_inline;
	bool count_samples; /* each sample counts 1; default: its period, as the script */
	/* Borrowed for the call of __new(); NULL: the first event type seen, as the script. */
	const char *event_filter;
	/*
	 * Only the samples of these CPUs, from each header's "[NNN]" (a sample
	 * without one matches none); borrowed until __free(). n_cpus 0: all.
	 */
	const int *cpus;
	size_t n_cpus;
};

struct fg_perfscript_stats {
	uint64_t samples;        /* samples added */
	uint64_t period_samples; /* of those, samples that counted their period, not 1 */
	uint64_t filtered;       /* samples of other events, skipped by the event filter */
	uint64_t other_cpus;     /* samples of other CPUs than opts.cpus, skipped */
	uint64_t malformed;      /* lines that could not be parsed, skipped */
	uint64_t first_bad_line; /* line number of the first malformed line, 0 if none */
	uint64_t untimed;        /* into a timed profile: samples without a time, skipped */
	bool multiple_events;    /* more than one event type seen */
	char event[64];          /* the event kept ("" if none), truncated */
};

struct fg_perfscript;

/*
 * out is borrowed until __free(); opts is copied. Caller frees *ret with
 * fg_perfscript__free(). 0 or -ENOMEM.
 */
int fg_perfscript__new(struct fg_folded *out, const struct fg_perfscript_opts *opts,
		       struct fg_perfscript **ret);
struct fg_perfscript *fg_perfscript__free(struct fg_perfscript *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_perfscript *, fg_perfscript__free);

struct fg_timed;

/*
 * The same into a timed profile (common/profile/timed.h): each sample, with the time
 * its header gives ("SECONDS.FRACTION:", on perf's clock, cut to ms), counts
 * 1 whatever its period (a heat map counts samples); a sample without a
 * time is skipped and counted (untimed). out is borrowed until __free().
 */
int fg_perfscript__new_timed(struct fg_timed *out, const struct fg_perfscript_opts *opts,
			     struct fg_perfscript **ret);

/*
 * What the counts of a model read with these stats are, for labels:
 * "samples" when every sample counted 1; when periods were summed, "ns"
 * for the cpu-clock and task-clock events (their period is nanoseconds),
 * else the event's name without its modifiers ("cycles", "instructions"),
 * into buf. Returns a static string or buf.
 */
const char *fg_perfscript_count_name(const struct fg_perfscript_stats *st, char *buf, size_t size);

/*
 * One line of perf script output, without its '\n' (a trailing '\r'
 * ignored). lineno for stats. 0, or a negative errno for allocation / model
 * errors (-E2BIG from the model cap); a malformed line is counted, not an
 * error.
 */
int fg_perfscript__feed(struct fg_perfscript *p, const char *line, size_t len, uint64_t lineno);

/* Flushes the last sample. The importer may be fed again afterwards. */
int fg_perfscript__finish(struct fg_perfscript *p);

void fg_perfscript__stats(const struct fg_perfscript *p, struct fg_perfscript_stats *ret);
