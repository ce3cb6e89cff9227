/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dwarf.h>
#include <errno.h>
#include <string.h>

#include "base/macro.h"
#include "unwind/unwind.h"

/* Deep enough for any expression a compiler writes into CFI. */
#define EVAL_STACK 32

int fg_unwind_regs_from_perf(const uint64_t *perf_regs, uint32_t n, struct fg_unwind_regs *ret)
{
	/* perf order under FG_PERF_REGS_MASK_X86_64: ax bx cx dx si di bp sp ip r8..r15. */
	static const uint8_t dwarf_of[] = { FG_REG_RAX, FG_REG_RBX, FG_REG_RCX, FG_REG_RDX,
					    FG_REG_RSI, FG_REG_RDI, FG_REG_RBP, FG_REG_RSP,
					    FG_REG_RA,  8,          9,          10,
					    11,         12,         13,         14,
					    15 };

	if (n != ELEMENTSOF(dwarf_of))
		return -EINVAL;
	*ret = (struct fg_unwind_regs){ .valid = (1U << FG_UNWIND_NREGS) - 1 };
	for (size_t i = 0; i < n; i++)
		ret->v[dwarf_of[i]] = perf_regs[i];
	return 0;
}

int fg_unwind_read(const struct fg_unwind_stack *stack, uint64_t addr, uint64_t *ret)
{
	uint64_t off;

	if (addr < stack->sp)
		return -EFAULT;
	off = addr - stack->sp;
	if (off > stack->size || stack->size - off < sizeof(*ret))
		return -ERANGE;
	memcpy(ret, stack->data + off, sizeof(*ret));
	return 0;
}

/* One register's rule in two bytes, if it has no expression and its operand fits. */
static bool pack_rule(const struct fg_unwind_rule *r, struct fg_unwind_packed_rule *ret)
{
	int32_t arg;

	if (r->expr_off || r->expr_len)
		return false;
	switch (r->kind) {
	case FG_RULE_UNDEFINED:
	case FG_RULE_SAME:
		if (r->reg || r->offset)
			return false;
		arg = 0;
		break;
	case FG_RULE_OFFSET:
	case FG_RULE_VAL_OFFSET:
		if (r->reg || r->offset % 8 != 0)
			return false;
		arg = r->offset / 8;
		break;
	case FG_RULE_REGISTER:
		if (r->offset)
			return false;
		arg = r->reg;
		break;
	default:
		return false;
	}
	if (arg < INT8_MIN || arg > INT8_MAX)
		return false;
	*ret = (struct fg_unwind_packed_rule){ r->kind, (int8_t)arg };
	return true;
}

bool fg_unwind_row_pack(const struct fg_unwind_row *row, struct fg_unwind_packed_row *ret)
{
	const struct fg_unwind_rule *cfa = &row->cfa;

	if (row->n_ops || cfa->kind != FG_RULE_VAL_OFFSET || cfa->expr_off || cfa->expr_len)
		return false;
	*ret = (struct fg_unwind_packed_row){
		.cfa_offset = cfa->offset,
		.cfa_reg = cfa->reg,
		.signal_frame = row->signal_frame,
	};
	for (size_t i = 0; i < FG_UNWIND_NREGS; i++)
		if (!pack_rule(&row->regs[i], &ret->regs[i]))
			return false;
	return true;
}

void fg_unwind_row_unpack(const struct fg_unwind_packed_row *p, struct fg_unwind_row *ret)
{
	ret->cfa = (struct fg_unwind_rule){
		.kind = FG_RULE_VAL_OFFSET,
		.reg = p->cfa_reg,
		.offset = p->cfa_offset,
	};
	for (size_t i = 0; i < FG_UNWIND_NREGS; i++) {
		const struct fg_unwind_packed_rule *r = &p->regs[i];
		bool offset = r->kind == FG_RULE_OFFSET || r->kind == FG_RULE_VAL_OFFSET;

		ret->regs[i] = (struct fg_unwind_rule){
			.kind = r->kind,
			.reg = r->kind == FG_RULE_REGISTER ? (uint8_t)r->arg : 0,
			.offset = offset ? r->arg * 8 : 0,
		};
	}
	ret->signal_frame = p->signal_frame;
	ret->n_ops = 0;
}

static int reg_value(const struct fg_unwind_regs *regs, unsigned reg, uint64_t *ret)
{
	if (reg >= FG_UNWIND_NREGS || !(regs->valid & (1U << reg)))
		return -EINVAL;
	*ret = regs->v[reg];
	return 0;
}

int fg_unwind_eval(const struct fg_unwind_op *ops, size_t n, const struct fg_unwind_regs *regs,
		   const struct fg_unwind_stack *stack, bool has_cfa, uint64_t cfa, uint64_t *ret)
{
	uint64_t st[EVAL_STACK];
	size_t sp = 0;
	int r;

#define NEED(k)                         \
	do {                            \
		if (sp < (k))           \
			return -EINVAL; \
	} while (0)
#define PUSH(x)                         \
	do {                            \
		if (sp >= EVAL_STACK)   \
			return -EINVAL; \
		st[sp++] = (x);         \
	} while (0)

	for (size_t i = 0; i < n; i++) {
		const struct fg_unwind_op *op = &ops[i];
		uint8_t a = op->atom;
		uint64_t x, y;

		if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
			PUSH((uint64_t)(a - DW_OP_lit0));
			continue;
		}
		if ((a >= DW_OP_breg0 && a <= DW_OP_breg31) || a == DW_OP_bregx) {
			unsigned reg = a == DW_OP_bregx ? op->reg : (unsigned)(a - DW_OP_breg0);

			r = reg_value(regs, reg, &x);
			if (r < 0)
				return r;
			PUSH(x + (uint64_t)op->n);
			continue;
		}
		if ((a >= DW_OP_reg0 && a <= DW_OP_reg31) || a == DW_OP_regx) {
			/* A register location: the rule's value is the register's. */
			r = reg_value(regs, a == DW_OP_regx ? op->reg : (unsigned)(a - DW_OP_reg0),
				      &x);
			if (r < 0)
				return r;
			PUSH(x);
			continue;
		}
		switch (a) {
		case DW_OP_addr:
		case DW_OP_const1u:
		case DW_OP_const1s:
		case DW_OP_const2u:
		case DW_OP_const2s:
		case DW_OP_const4u:
		case DW_OP_const4s:
		case DW_OP_const8u:
		case DW_OP_const8s:
		case DW_OP_constu:
		case DW_OP_consts:
			PUSH((uint64_t)op->n);
			break;
		case DW_OP_call_frame_cfa:
			if (!has_cfa)
				return -EINVAL;
			PUSH(cfa);
			break;
		case DW_OP_dup:
			NEED(1);
			x = st[sp - 1];
			PUSH(x);
			break;
		case DW_OP_drop:
			NEED(1);
			sp--;
			break;
		case DW_OP_over:
			NEED(2);
			x = st[sp - 2];
			PUSH(x);
			break;
		case DW_OP_pick:
			if (op->n < 0 || (uint64_t)op->n >= sp)
				return -EINVAL;
			x = st[sp - 1 - (size_t)op->n];
			PUSH(x);
			break;
		case DW_OP_swap:
			NEED(2);
			x = st[sp - 1];
			st[sp - 1] = st[sp - 2];
			st[sp - 2] = x;
			break;
		case DW_OP_rot:
			NEED(3);
			x = st[sp - 1];
			st[sp - 1] = st[sp - 2];
			st[sp - 2] = st[sp - 3];
			st[sp - 3] = x;
			break;
		case DW_OP_deref:
			NEED(1);
			r = fg_unwind_read(stack, st[sp - 1], &st[sp - 1]);
			if (r < 0)
				return r;
			break;
		case DW_OP_plus_uconst:
			NEED(1);
			st[sp - 1] += (uint64_t)op->n;
			break;
		case DW_OP_neg:
			NEED(1);
			st[sp - 1] = -st[sp - 1];
			break;
		case DW_OP_not:
			NEED(1);
			st[sp - 1] = ~st[sp - 1];
			break;
		case DW_OP_abs:
			NEED(1);
			if ((int64_t)st[sp - 1] < 0)
				st[sp - 1] = -st[sp - 1];
			break;
		case DW_OP_plus:
		case DW_OP_minus:
		case DW_OP_mul:
		case DW_OP_and:
		case DW_OP_or:
		case DW_OP_xor:
		case DW_OP_shl:
		case DW_OP_shr:
		case DW_OP_shra:
		case DW_OP_div:
		case DW_OP_mod:
		case DW_OP_lt:
		case DW_OP_le:
		case DW_OP_gt:
		case DW_OP_ge:
		case DW_OP_eq:
		case DW_OP_ne:
			NEED(2);
			y = st[--sp];
			x = st[sp - 1];
			switch (a) {
			case DW_OP_plus:
				x += y;
				break;
			case DW_OP_minus:
				x -= y;
				break;
			case DW_OP_mul:
				x *= y;
				break;
			case DW_OP_and:
				x &= y;
				break;
			case DW_OP_or:
				x |= y;
				break;
			case DW_OP_xor:
				x ^= y;
				break;
			case DW_OP_shl:
				x = y >= 64 ? 0 : x << y;
				break;
			case DW_OP_shr:
				x = y >= 64 ? 0 : x >> y;
				break;
			case DW_OP_shra:
				x = (uint64_t)((int64_t)x >> (y >= 64 ? 63 : y));
				break;
			case DW_OP_div:
				if (y == 0 || ((int64_t)x == INT64_MIN && (int64_t)y == -1))
					return -EINVAL;
				x = (uint64_t)((int64_t)x / (int64_t)y);
				break;
			case DW_OP_mod:
				if (y == 0)
					return -EINVAL;
				x %= y;
				break;
			case DW_OP_lt:
				x = (int64_t)x < (int64_t)y;
				break;
			case DW_OP_le:
				x = (int64_t)x <= (int64_t)y;
				break;
			case DW_OP_gt:
				x = (int64_t)x > (int64_t)y;
				break;
			case DW_OP_ge:
				x = (int64_t)x >= (int64_t)y;
				break;
			case DW_OP_eq:
				x = x == y;
				break;
			case DW_OP_ne:
				x = x != y;
				break;
			}
			st[sp - 1] = x;
			break;
		case DW_OP_nop:
			break;
		case DW_OP_stack_value:
			/* Marks the result as a value; only meaningful last, which the caller knows. */
			if (i + 1 != n)
				return -EINVAL;
			break;
		default:
			return -EINVAL;
		}
	}
#undef NEED
#undef PUSH
	if (sp == 0)
		return -EINVAL;
	*ret = st[sp - 1];
	return 0;
}

/* Maps an eval/read error to how the walk ends. */
static enum fg_unwind_end end_of(int err)
{
	return err == -ERANGE      ? FG_UNWIND_TRUNCATED :
	       err == -EINPROGRESS ? FG_UNWIND_PENDING :
				     FG_UNWIND_FAILED;
}

/* Computes the caller's registers from row; 0 or a negative errno. */
static int apply_row(const struct fg_unwind_row *row, const struct fg_unwind_regs *regs,
		     const struct fg_unwind_stack *stack, struct fg_unwind_regs *caller)
{
	uint64_t cfa;
	int r;

	/* Rows come from parsed files: trust none of their counts. */
	if (row->n_ops > FG_UNWIND_MAX_OPS)
		return -EINVAL;
	if (row->cfa.kind == FG_RULE_VAL_OFFSET) {
		r = reg_value(regs, row->cfa.reg, &cfa);
		if (r < 0)
			return r;
		cfa += (uint64_t)(int64_t)row->cfa.offset;
	} else if (row->cfa.kind == FG_RULE_VAL_EXPR) {
		if ((size_t)row->cfa.expr_off + row->cfa.expr_len > row->n_ops)
			return -EINVAL;
		r = fg_unwind_eval(row->ops + row->cfa.expr_off, row->cfa.expr_len, regs, stack,
				   false, 0, &cfa);
		if (r < 0)
			return r;
	} else {
		return -EINVAL;
	}

	*caller = (struct fg_unwind_regs){};
	for (unsigned i = 0; i < FG_UNWIND_NREGS; i++) {
		const struct fg_unwind_rule *rule = &row->regs[i];
		uint64_t v;

		switch (rule->kind) {
		case FG_RULE_UNDEFINED:
			continue;
		case FG_RULE_SAME:
			if (reg_value(regs, i, &v) < 0)
				continue;
			break;
		case FG_RULE_OFFSET:
			r = fg_unwind_read(stack, cfa + (uint64_t)(int64_t)rule->offset, &v);
			/*
			 * A slot below the stack pointer was popped already: in an
			 * epilogue, after `pop %rbp` and before `ret`, the CFI still
			 * says where rbp was saved, and rbp holds the caller's value.
			 */
			if (r == -EFAULT && i != FG_REG_RA && reg_value(regs, i, &v) == 0)
				break;
			if (r < 0) {
				/* Only the return address is essential; others may stay unknown. */
				if (i == FG_REG_RA)
					return r;
				continue;
			}
			break;
		case FG_RULE_VAL_OFFSET:
			v = cfa + (uint64_t)(int64_t)rule->offset;
			break;
		case FG_RULE_REGISTER:
			if (reg_value(regs, rule->reg, &v) < 0)
				continue;
			break;
		case FG_RULE_EXPR:
		case FG_RULE_VAL_EXPR:
			if ((size_t)rule->expr_off + rule->expr_len > row->n_ops)
				return -EINVAL;
			r = fg_unwind_eval(row->ops + rule->expr_off, rule->expr_len, regs, stack,
					   true, cfa, &v);
			if (r >= 0 && rule->kind == FG_RULE_EXPR)
				r = fg_unwind_read(stack, v, &v);
			if (r < 0) {
				if (i == FG_REG_RA)
					return r;
				continue;
			}
			break;
		default:
			return -EINVAL;
		}
		caller->v[i] = v;
		caller->valid |= 1U << i;
	}
	/* On x86-64 the CFA is, by definition, the caller's stack pointer. */
	if (row->regs[FG_REG_RSP].kind == FG_RULE_UNDEFINED ||
	    row->regs[FG_REG_RSP].kind == FG_RULE_SAME) {
		caller->v[FG_REG_RSP] = cfa;
		caller->valid |= 1U << FG_REG_RSP;
	}
	return 0;
}

/* The frame-pointer rule: [rbp] is the caller's rbp, [rbp + 8] the return address. */
static int apply_frame_pointer(const struct fg_unwind_regs *regs,
			       const struct fg_unwind_stack *stack, struct fg_unwind_regs *caller)
{
	uint64_t rbp, saved_rbp, ra;
	int r;

	r = reg_value(regs, FG_REG_RBP, &rbp);
	if (r < 0)
		return r;
	/* The frame must lie above the current stack pointer. */
	if (rbp < regs->v[FG_REG_RSP] || rbp % 8)
		return -EINVAL;
	r = fg_unwind_read(stack, rbp, &saved_rbp);
	if (r >= 0)
		r = fg_unwind_read(stack, rbp + 8, &ra);
	if (r < 0)
		return r;
	*caller = (struct fg_unwind_regs){};
	caller->v[FG_REG_RBP] = saved_rbp;
	caller->v[FG_REG_RSP] = rbp + 16;
	caller->v[FG_REG_RA] = ra;
	caller->valid = (1U << FG_REG_RBP) | (1U << FG_REG_RSP) | (1U << FG_REG_RA);
	/* Callee-saved registers other than rbp are unknown from here on. */
	return 0;
}

void fg_unwind(const struct fg_unwind_regs *regs, const struct fg_unwind_stack *stack,
	       fg_unwind_row_fn fn, void *ctx, uint64_t *pcs, size_t max,
	       struct fg_unwind_result *ret)
{
	struct fg_unwind_regs cur = *regs, next;
	struct fg_unwind_row row;
	bool exact_pc = true; /* the sampled pc, or one interrupted by a signal */

	*ret = (struct fg_unwind_result){ .end = FG_UNWIND_FAILED };
	if (!(cur.valid & (1U << FG_REG_RA)) || !(cur.valid & (1U << FG_REG_RSP)))
		return;
	for (;;) {
		uint64_t pc = cur.v[FG_REG_RA];
		bool by_cfi = false;
		int r;

		if (ret->n >= max) {
			ret->end = FG_UNWIND_MAX_DEPTH;
			return;
		}
		pcs[ret->n++] = pc;
		/* A return address points after the call: look up the call itself. */
		r = fn(ctx, exact_pc ? pc : pc - 1, &row);
		if (r == 0) {
			r = apply_row(&row, &cur, stack, &next);
			if (r >= 0 && !(next.valid & (1U << FG_REG_RA))) {
				ret->end = FG_UNWIND_OUTERMOST;
				return;
			}
			exact_pc = row.signal_frame;
			by_cfi = true;
		} else if (r == -ENOENT) {
			r = apply_frame_pointer(&cur, stack, &next);
			ret->fp_frames += r >= 0;
			exact_pc = false;
		}
		if (r < 0) {
			ret->end = end_of(r);
			return;
		}
		/*
		 * A zero return address read where the CFI says it is ends the chain
		 * by convention (thread entry points); found by frame pointer, it is
		 * just a zero on the stack.
		 */
		if (next.v[FG_REG_RA] == 0) {
			ret->end = by_cfi ? FG_UNWIND_OUTERMOST : FG_UNWIND_FAILED;
			return;
		}
		/*
		 * Each caller's frame lies above its callee's, or the stack is
		 * corrupt. It may start where the callee's does when the callee
		 * popped its return address into a register (__vfork does), but
		 * then the pc must move on.
		 */
		if (!(next.valid & (1U << FG_REG_RSP)) || next.v[FG_REG_RSP] < cur.v[FG_REG_RSP] ||
		    (next.v[FG_REG_RSP] == cur.v[FG_REG_RSP] && next.v[FG_REG_RA] == pc)) {
			ret->end = FG_UNWIND_FAILED;
			return;
		}
		cur = next;
	}
}
