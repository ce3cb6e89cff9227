/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dwarf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "resolver/fgd-cfi.h"

/* Converts libdw's Dwarf_Ops into the row's shared op array. */
static int add_ops(struct fg_unwind_row *row, const Dwarf_Op *ops, size_t n,
		   struct fg_unwind_rule *rule)
{
	if (n > (size_t)(FG_UNWIND_MAX_OPS - row->n_ops))
		return -E2BIG;
	rule->expr_off = row->n_ops;
	rule->expr_len = (uint8_t)n;
	for (size_t i = 0; i < n; i++) {
		struct fg_unwind_op *o = &row->ops[row->n_ops++];

		o->atom = ops[i].atom;
		o->n = (int64_t)ops[i].number;
		if (ops[i].atom == DW_OP_bregx || ops[i].atom == DW_OP_regx) {
			if (ops[i].number >= FG_UNWIND_NREGS)
				return -EINVAL;
			o->reg = (uint8_t)ops[i].number;
			o->n = (int64_t)ops[i].number2;
		}
	}
	return 0;
}

static bool fits_i32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* Translates one register's rule; see dwarf_frame_register() for the forms libdw gives. */
static int convert_reg(Dwarf_Frame *frame, int regno, struct fg_unwind_row *row)
{
	struct fg_unwind_rule *rule = &row->regs[regno];
	Dwarf_Op mem[3], *ops;
	size_t n;
	bool value;

	if (dwarf_frame_register(frame, regno, mem, &ops, &n) < 0)
		return -EINVAL;
	if (n == 0) {
		rule->kind = ops ? FG_RULE_UNDEFINED : FG_RULE_SAME;
		/*
		 * The psABI makes rbx, rbp and r12-r15 callee-saved: a frame that
		 * does not save one leaves it unchanged. libdw's x86-64 defaults
		 * name register 0 where they mean rbx (3), so rbx would come out
		 * undefined after the first frame.
		 */
		if (rule->kind == FG_RULE_UNDEFINED &&
		    (regno == FG_REG_RBX || regno == FG_REG_RBP ||
		     (regno >= 12 && regno <= FG_REG_R15)))
			rule->kind = FG_RULE_SAME;
		return 0;
	}
	value = ops[n - 1].atom == DW_OP_stack_value;
	if (value)
		n--;
	if (n >= 1 && n <= 2 && ops[0].atom == DW_OP_call_frame_cfa &&
	    (n == 1 || ops[1].atom == DW_OP_plus_uconst) &&
	    (n == 1 || fits_i32((int64_t)ops[1].number))) {
		rule->kind = value ? FG_RULE_VAL_OFFSET : FG_RULE_OFFSET;
		rule->offset = n == 2 ? (int32_t)(int64_t)ops[1].number : 0;
		return 0;
	}
	if (n == 1 && !value && ops[0].atom == DW_OP_regx && ops[0].number < FG_UNWIND_NREGS) {
		rule->kind = FG_RULE_REGISTER;
		rule->reg = (uint8_t)ops[0].number;
		return 0;
	}
	rule->kind = value ? FG_RULE_VAL_EXPR : FG_RULE_EXPR;
	return add_ops(row, ops, n, rule);
}

static int convert(Dwarf_Frame *frame, struct fg_unwind_row *row)
{
	Dwarf_Op *ops;
	size_t n;
	bool signal = false;
	int r;

	*row = (struct fg_unwind_row){};
	if (dwarf_frame_cfa(frame, &ops, &n) < 0 || n == 0)
		return -EINVAL;
	if (n == 1 && ops[0].atom == DW_OP_bregx && ops[0].number < FG_UNWIND_NREGS &&
	    fits_i32((int64_t)ops[0].number2)) {
		row->cfa.kind = FG_RULE_VAL_OFFSET;
		row->cfa.reg = (uint8_t)ops[0].number;
		row->cfa.offset = (int32_t)(int64_t)ops[0].number2;
	} else {
		row->cfa.kind = FG_RULE_VAL_EXPR;
		r = add_ops(row, ops, n, &row->cfa);
		if (r < 0)
			return r;
	}
	for (int i = 0; i < (int)FG_UNWIND_NREGS; i++) {
		r = convert_reg(frame, i, row);
		if (r < 0)
			return r;
	}
	if (dwarf_frame_info(frame, NULL, NULL, &signal) >= 0)
		row->signal_frame = signal;
	return 0;
}

int fg_cfi_libdw_row(Dwarf_CFI *cfi, uint64_t vaddr, struct fg_unwind_row *ret, uint64_t *ret_start,
		     uint64_t *ret_end)
{
	Dwarf_Frame *frame = NULL;
	Dwarf_Addr end;
	int r;

	if (dwarf_cfi_addrframe(cfi, vaddr, &frame) < 0)
		return -ENOENT;
	r = convert(frame, ret);
	/*
	 * Where the row ends, but not where it starts: libdw's
	 * DW_CFA_restore_state brings back the start of the row that was
	 * remembered too, so after an epilogue in mid-function the body's row
	 * is said to start before the epilogue, and a cache would give it to
	 * the epilogue's addresses. (common/unwind/ehframe.c gets the start right.)
	 */
	if (dwarf_frame_info(frame, NULL, &end, NULL) < 0 || vaddr >= end)
		end = vaddr + 1;
	free(frame);
	*ret_start = vaddr;
	*ret_end = end;
	return r;
}
