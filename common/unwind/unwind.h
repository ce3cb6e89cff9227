/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * x86-64 user-stack unwinding from what a perf sample carries: the user
 * registers (PERF_SAMPLE_REGS_USER) and a copy of the top of the user stack
 * (PERF_SAMPLE_STACK_USER).
 *
 * The unwinder walks frames with DWARF CFI rows: for each frame's pc, a row
 * says how to compute the Canonical Frame Address and where the caller's
 * registers were saved. Rows come from a callback (the daemon reads them from
 * .eh_frame/.debug_frame with libdw and caches them; tests make them up), so
 * this module reads no files and keeps no state: it evaluates rows, including
 * DWARF expressions, against the registers and the dump.
 *
 * Where no CFI covers a pc (JIT code), the frame is unwound with the frame
 * pointer, as the x86-64 ABI lays it out: [rbp] is the caller's rbp and
 * [rbp + 8] the return address.
 *
 * Every memory read is checked against the dump. A read above it means the
 * dump was too small for the stack (FG_UNWIND_TRUNCATED), a read below the
 * sampled stack pointer or any other inconsistency ends the walk as
 * FG_UNWIND_FAILED. A frame must move the stack pointer up, so a corrupt
 * stack cannot loop.
 *
 * Register numbers are DWARF's for x86-64.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	FG_REG_RAX,
	FG_REG_RDX,
	FG_REG_RCX,
	FG_REG_RBX,
	FG_REG_RSI,
	FG_REG_RDI,
	FG_REG_RBP,
	FG_REG_RSP,
	FG_REG_R8,
	FG_REG_R15 = 15,
	FG_REG_RA = 16, /* the return address column; the pc of the frame */
	FG_UNWIND_NREGS,
};

struct fg_unwind_regs {
	uint64_t v[FG_UNWIND_NREGS];
	uint32_t valid; /* bit n: v[n] is known */
};

/*
 * perf's x86 register order (enum perf_event_x86_regs) for the general
 * registers, and the sample_regs_user mask that asks for all of them.
 */
#define FG_PERF_REGS_MASK_X86_64 0xff01ffULL

/*
 * Fills ret from a PERF_SAMPLE_REGS_USER block taken with
 * FG_PERF_REGS_MASK_X86_64 (n values in mask bit order). -EINVAL if n does
 * not match the mask.
 */
int fg_unwind_regs_from_perf(const uint64_t *perf_regs, uint32_t n, struct fg_unwind_regs *ret);

/* One DWARF expression operation, compacted: DW_OP_bregx's register goes in reg. */
struct fg_unwind_op {
	uint8_t atom; /* DW_OP_* */
	uint8_t reg;
	int64_t n; /* the operand (a constant, an offset); unsigned ones are stored as is */
};

#define FG_UNWIND_MAX_OPS 16

enum fg_unwind_rule_kind {
	FG_RULE_UNDEFINED,  /* the caller's value cannot be recovered */
	FG_RULE_SAME,       /* unchanged by this frame */
	FG_RULE_OFFSET,     /* saved at CFA + offset */
	FG_RULE_VAL_OFFSET, /* is CFA + offset */
	FG_RULE_REGISTER,   /* is the value of register reg */
	FG_RULE_EXPR,       /* saved at the address the expression yields */
	FG_RULE_VAL_EXPR,   /* is the value the expression yields */
};

struct fg_unwind_rule {
	uint8_t kind;     /* enum fg_unwind_rule_kind */
	uint8_t reg;      /* FG_RULE_REGISTER; for the CFA, the base register */
	uint8_t expr_off; /* FG_RULE_*EXPR: the expression is ops[expr_off..+expr_len) of the row */
	uint8_t expr_len;
	int32_t offset; /* FG_RULE_*OFFSET; for the CFA, added to reg */
};

/*
 * What the CFI says at one pc. The CFA rule is FG_RULE_VAL_OFFSET (reg +
 * offset) or FG_RULE_VAL_EXPR. The expressions of all rules share ops[].
 */
struct fg_unwind_row {
	struct fg_unwind_rule cfa;
	struct fg_unwind_rule regs[FG_UNWIND_NREGS];
	bool signal_frame; /* this frame was interrupted by a signal: its caller's pc is exact */
	uint8_t n_ops;
	struct fg_unwind_op ops[FG_UNWIND_MAX_OPS];
};

/*
 * A row in 40 bytes, for caches that keep many: most rows have no
 * expression, and save registers at multiples of 8 within a KiB of the
 * CFA. Each register's rule is its kind and one byte: the offset in 8-byte
 * units (FG_RULE_OFFSET, FG_RULE_VAL_OFFSET) or the register
 * (FG_RULE_REGISTER).
 */
struct fg_unwind_packed_rule {
	uint8_t kind;
	int8_t arg;
};

struct fg_unwind_packed_row {
	int32_t cfa_offset; /* the CFA is cfa_reg + cfa_offset */
	uint8_t cfa_reg;
	bool signal_frame;
	struct fg_unwind_packed_rule regs[FG_UNWIND_NREGS];
};

/*
 * Packs row into *ret: true, or false when it does not fit (an
 * expression, an offset out of range or not a multiple of 8), and *ret is
 * unspecified. Unpacking gives the row back exactly.
 */
bool fg_unwind_row_pack(const struct fg_unwind_row *row, struct fg_unwind_packed_row *ret);
void fg_unwind_row_unpack(const struct fg_unwind_packed_row *p, struct fg_unwind_row *ret);

/*
 * The row for pc (an address already adjusted to lie inside the call
 * instruction for return addresses). Returns 0, -ENOENT when no CFI covers
 * pc (the unwinder then tries the frame pointer), -EINPROGRESS when the
 * CFI is not at hand yet (the walk stops as FG_UNWIND_PENDING, for the
 * caller to try again later), or another negative errno to stop the walk
 * as a failure.
 */
typedef int (*fg_unwind_row_fn)(void *ctx, uint64_t pc, struct fg_unwind_row *ret);

/* The stack dump: size bytes copied from address sp (the sampled rsp) upward. */
struct fg_unwind_stack {
	uint64_t sp;
	const uint8_t *data; /* borrowed */
	size_t size;
};

enum fg_unwind_end {
	FG_UNWIND_OUTERMOST, /* the CFI marks the caller's pc undefined (_start, thread start) */
	FG_UNWIND_TRUNCATED, /* the next frame's data lies above the dump */
	FG_UNWIND_FAILED,    /* no CFI and no usable frame pointer, or inconsistent data */
	FG_UNWIND_MAX_DEPTH, /* stopped at the caller's limit */
	FG_UNWIND_PENDING,   /* the row callback is still fetching some CFI */
};

struct fg_unwind_result {
	size_t n; /* pcs stored */
	enum fg_unwind_end end;
	size_t fp_frames; /* frames unwound by frame pointer for want of CFI */
};

/*
 * Walks the stack from regs. pcs[0] is the sampled pc; pcs[1..] are return
 * addresses (callers subtract one to name the call site). Stores at most max
 * pcs. Pure: only fn's side effects.
 */
void fg_unwind(const struct fg_unwind_regs *regs, const struct fg_unwind_stack *stack,
	       fg_unwind_row_fn fn, void *ctx, uint64_t *pcs, size_t max,
	       struct fg_unwind_result *ret);

/*
 * Evaluates a DWARF expression as CFI uses it: regs give DW_OP_breg*,
 * DW_OP_call_frame_cfa pushes cfa (only for register rules: has_cfa), memory
 * comes from the dump. Nothing is pushed implicitly: a register rule's
 * expression starts with DW_OP_call_frame_cfa, as libdw presents it.
 * Stores the value (or address) on top of the stack in *ret. Returns 0,
 * -ERANGE for a read above the dump, -EFAULT for one below it, -EINVAL for
 * an operation it does not support or a malformed expression.
 */
int fg_unwind_eval(const struct fg_unwind_op *ops, size_t n, const struct fg_unwind_regs *regs,
		   const struct fg_unwind_stack *stack, bool has_cfa, uint64_t cfa, uint64_t *ret);

/* Reads 8 bytes of the dump at addr: 0, -ERANGE (above the dump) or -EFAULT (below it). */
int fg_unwind_read(const struct fg_unwind_stack *stack, uint64_t addr, uint64_t *ret);
