/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Rewrites of a folded-stack model before it is rendered: the filters of
 * `fgctl render`, and the differential merge of two profiles that
 * difffolded.pl performs on text. Each call builds a new model and leaves
 * its inputs unchanged, so one recording can be rendered several ways. A
 * differential model stays differential, and a sequence (a flame chart)
 * stays a sequence.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/folded.h"

/* NULL pointers and false flags leave that step out. */
struct fg_transform_opts {
	/*
	 * Drop the kernel idle loop. A stack is idle when either
	 *  - its root frame is the idle task: "swapper" or "swapper/N", optionally
	 *    followed by "-0" or "-0/0" (the stackcollapse-perf.pl --pid and --tid
	 *    forms; the idle task is pid 0, so "swapper-1234" is a process that
	 *    named itself swapper and is kept), or
	 *  - any frame is one of the kernel's idle functions. A frame's name is
	 *    compared after removing a "_[k]" suffix and then a compiler clone
	 *    suffix (from the first '.', as in ".isra.0", ".constprop.0"):
	 *    exactly do_idle, cpu_idle_poll, cpu_startup_entry, native_safe_halt,
	 *    pv_native_safe_halt, arch_cpu_idle, cpu_do_idle, mwait_idle,
	 *    poll_idle, cpu_idle, cpu_idle_loop; or beginning with cpuidle_enter,
	 *    default_idle, acpi_idle or intel_idle.
	 * Interrupts taken while idle are part of the idle stack and go with it.
	 */
	bool no_idle;
	/*
	 * POSIX extended regex, borrowed for the call: keep only stacks where a
	 * frame matches. A frame matches by its name or its plain name, without
	 * the "_[k]", "_[j]", "_[i]" or "_[w]" annotation.
	 */
	const char *include;
	/* POSIX extended regex, borrowed for the call: drop stacks where a frame matches. */
	const char *exclude;
	/* For include and exclude. */
	bool ignore_case;
	/*
	 * Frame name, borrowed for the call, matched exactly, or as the plain
	 * name of annotated frames (do_syscall_64 for do_syscall_64_[k]): keep
	 * only stacks that pass through it and re-root each at its outermost
	 * occurrence; NULL: none.
	 */
	const char *focus;
	/*
	 * Only user frames (user_only) or only kernel frames, "name_[k]"
	 * (kernel_only), below the first roots frames of each stack (the
	 * process frame, kept whatever it is); a stack left with nothing is
	 * dropped. Not both.
	 */
	bool user_only, kernel_only;
	size_t roots;
	/*
	 * Names below the first roots frames as stackcollapse-perf.pl writes
	 * them (fg_framename_tidy(): "double Hot.middle(int)" becomes "double
	 * Hot.middle"), annotations kept; stacks whose process frame starts
	 * with "java" get the script's Java rule too. For comparing with
	 * profiles the script made: frames that differ only in their
	 * arguments merge.
	 */
	bool stackcollapse_names;
	/* Runs of one frame (direct recursion) become one, as stackcollapse-recursive.pl does. */
	bool collapse_recursion;
	/* Each stack leaf first: the "who calls this leaf" view of flamegraph.pl --reverse. */
	bool reverse;
};

/*
 * Samples and stacks of the input that were kept and dropped. Samples are
 * the count of each stack ("after" in a differential model); stacks are
 * input stacks, several of which may merge into one output stack.
 */
struct fg_transform_stats {
	double kept, dropped;
	uint64_t stacks_kept, stacks_dropped;
};

/*
 * Applies opts (NULL: none) to in, in the order no_idle, include, exclude
 * (both test the original frames), focus, user_only or kernel_only,
 * stackcollapse_names, collapse_recursion, reverse. Stores
 * a new model in *ret_out, which the caller frees with fg_folded__free().
 * A differential input gives a differential output, before and count both
 * carried. Regular expressions are compiled once and each distinct name is
 * matched once.
 *
 * Returns 0, -EINVAL for a regex that does not compile (regerror()'s message
 * in err[0..err_size) if err is non-NULL), -ENOMEM, or the model's -E2BIG.
 * *ret_out and *ret_stats (if ret_stats is non-NULL) are set only on success.
 */
int fg_transform(const struct fg_folded *in, const struct fg_transform_opts *opts,
		 struct fg_folded **ret_out, struct fg_transform_stats *ret_stats, char *err,
		 size_t err_size);

/*
 * Differential merge, as difffolded.pl does on text: a model whose stacks are
 * the union of both, with before = the before profile's count and count = the
 * after profile's (0 where a stack is absent). With normalize and both totals
 * > 0, before counts are scaled by total(after) / total(before) so that both
 * profiles have equal totals (difffolded.pl -n), keeping fractions. Stores a
 * new differential model (fg_folded__is_diff() true, even when empty) in
 * *ret_out, which the caller frees with fg_folded__free(). The inputs are
 * borrowed for the call and not changed.
 *
 * Returns 0, -EINVAL if an input is itself differential, -ERANGE when
 * normalising a profile whose total is infinite, -ENOMEM, or the model's
 * -E2BIG.
 */
int fg_folded_diff(const struct fg_folded *before, const struct fg_folded *after, bool normalize,
		   struct fg_folded **ret_out);
