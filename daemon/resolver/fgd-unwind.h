/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * DWARF unwinding of sampled user stacks (the `dwarf` call-graph mode).
 *
 * The walk itself is common/unwind/unwind.c. This module gives it CFI rows: for a
 * pc, the process's mapping names the binary (a struct fg_dso, shared by
 * every process that maps it), and the binary's .eh_frame, or its
 * .debug_frame, read with libdw, gives the row.
 *
 * Cost. A binary's CFI is loaded once, on the first sample that needs it,
 * through the sampled process's /proc/PID/map_files entry (on the loader's
 * thread: how long it takes is up to the file), and kept for every process
 * that maps it; rows are cached by binary and the range of addresses each
 * holds for, and addresses without CFI as such, so a warm sample parses
 * nothing: it binary-searches the process's maps, finds the row in the
 * cache (by its address, or its 64-byte block) and reads the dump. The per-process part of the
 * state is the process table's maps, which MMAP2, exec and exit records
 * already keep current.
 *
 * Bounds. At most FG_UNWIND_MAX_BINARIES binaries, with at most
 * FG_UNWIND_MAX_BYTES of CFI sections between them, hold CFI (the least
 * recently used go first), and the row cache has FG_UNWIND_ROW_SLOTS
 * slots of a cache line, which hold ordinary rows whole, and a ring of
 * FG_UNWIND_ROW_CACHE rows with expressions, so the memory is capped
 * whatever runs on the machine (the stats' bytes; libdw's own index of the
 * entries looked up comes on top).
 *
 * Time. A row is looked up in the loop (then cached); everything whose
 * cost is up to the file is done when the CFI is read, on the loader's
 * thread: a section without a search table is indexed whole there.
 */

#include <stdint.h>

#include "fgd-loader.h"
#include "perf/record.h"
#include "proto/status-types.h"
#include "resolver/fgd-proctab.h"
#include "unwind/unwind.h"

#define FG_UNWIND_MAX_BINARIES 1024
#define FG_UNWIND_MAX_BYTES (256ULL << 20) /* of CFI sections held */
#define FG_UNWIND_ROW_SLOTS 65536          /* a power of two */
#define FG_UNWIND_ROW_CACHE 1024
/*
 * A CFI section without a search table (.debug_frame, or .eh_frame with no
 * .eh_frame_hdr) is indexed whole when read; a bigger one is not used.
 * Real ones are a few MiB at most: linkers write .eh_frame_hdr.
 */
#define FG_UNWIND_MAX_SCANNED (16ULL << 20)

struct fg_unwinder;

int fg_unwinder__new(struct fg_unwinder **ret);
/* Free the loader first: its jobs hold references to the unwinder and to dsos. */
struct fg_unwinder *fg_unwinder__free(struct fg_unwinder *u);

/*
 * CFI loads go to loader (borrowed until the unwinder is freed); NULL: in
 * the caller. With a loader, a walk that reaches a binary whose CFI is not
 * read yet stops as FG_UNWIND_PENDING (see fg_unwinder__unwind()).
 */
void fg_unwinder__set_loader(struct fg_unwinder *u, struct fg_loader *loader);

struct fg_budget;
/*
 * Charges the CFI held (and the row cache) to budget's CFI part
 * (common/base/budget.h; borrowed until the unwinder is freed, or set to NULL
 * before), and gives up the least recently walked binaries' CFI under its
 * pressure; a CFI larger than the budget's room is not kept (its frames
 * are unwound by frame pointer, and it is tried again later).
 */
void fg_unwinder__set_budget(struct fg_unwinder *u, struct fg_budget *budget);

/* Options of fg_unwinder__unwind(). */
#define FG_UNWINDER_NOWAIT (1u << 0) /* CFI being read is not waited for: see below */

/*
 * Unwinds the user stack of sample s (taken with REGS_USER under
 * FG_PERF_REGS_MASK_X86_64 and STACK_USER) in proc (borrowed). pcs[0] is
 * the sampled user pc, the rest return addresses. Returns 0, or -EINVAL if
 * the sample carries no 64-bit user registers (a kernel thread, a 32-bit
 * process). A walk that reaches a binary whose CFI is being read on the
 * loader's thread stops as FG_UNWIND_PENDING; with FG_UNWINDER_NOWAIT it
 * takes that frame by frame pointer instead, and returns 1.
 */
int fg_unwinder__unwind(struct fg_unwinder *u, const struct fg_process *proc,
			const struct fg_sample *s, unsigned flags, uint64_t *pcs, size_t max,
			struct fg_unwind_result *ret);

/*
 * Once a period (a second): drops the CFI of binaries unused for more than
 * idle_periods, and gives back the pages of mapped CFI that lookups read
 * since the last call.
 */
void fg_unwinder__trim(struct fg_unwinder *u, uint64_t idle_periods);

/* The unwinder's part of status ("unwinding"). */
void fg_unwinder__stats(const struct fg_unwinder *u, struct fg_status_unwinding *ret);
