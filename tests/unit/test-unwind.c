/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dwarf.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/budget.h"
#include "base/macro.h"
#include "fgd-clock.h"
#include "resolver/fgd-proctab.h"
#include "resolver/fgd-unwind.h"
#include "symbols/fgd-symbols.h"
#include "test.h"
#include "unwind/unwind.h"

/* ---- the pure walk, on made-up stacks ---- */

/* A stack of words at a fixed address, and rows keyed by pc. */
#define STACK_BASE 0x7ffff000ULL

struct fake {
	uint64_t words[64];
	struct {
		uint64_t pc;
		struct fg_unwind_row row;
	} rows[8];
	size_t n_rows;
	uint64_t looked_up[16];
	size_t n_looked_up;
};

static int fake_row(void *ctx, uint64_t pc, struct fg_unwind_row *ret)
{
	struct fake *f = ctx;

	if (f->n_looked_up < ELEMENTSOF(f->looked_up))
		f->looked_up[f->n_looked_up++] = pc;
	for (size_t i = 0; i < f->n_rows; i++)
		if (f->rows[i].pc == pc) {
			*ret = f->rows[i].row;
			return 0;
		}
	return -ENOENT;
}

/* The row of a function after its prologue: CFA = rsp + cfa_off, return address at CFA - 8. */
static struct fg_unwind_row simple_row(int32_t cfa_off)
{
	struct fg_unwind_row row = {};

	row.cfa = (struct fg_unwind_rule){ .kind = FG_RULE_VAL_OFFSET,
					   .reg = FG_REG_RSP,
					   .offset = cfa_off };
	for (int i = 0; i < FG_UNWIND_NREGS; i++)
		row.regs[i].kind = FG_RULE_SAME;
	row.regs[FG_REG_RA] = (struct fg_unwind_rule){ .kind = FG_RULE_OFFSET, .offset = -8 };
	row.regs[FG_REG_RSP].kind = FG_RULE_UNDEFINED; /* the CFA, by the x86-64 convention */
	return row;
}

static void add_row(struct fake *f, uint64_t pc, struct fg_unwind_row row)
{
	f->rows[f->n_rows].pc = pc;
	f->rows[f->n_rows].row = row;
	f->n_rows++;
}

static struct fg_unwind_stack fake_stack(struct fake *f, size_t words)
{
	return (struct fg_unwind_stack){ STACK_BASE, (const uint8_t *)f->words, words * 8 };
}

static struct fg_unwind_regs regs_at(uint64_t pc, uint64_t sp)
{
	struct fg_unwind_regs r = { .valid = (1U << FG_REG_RA) | (1U << FG_REG_RSP) };

	r.v[FG_REG_RA] = pc;
	r.v[FG_REG_RSP] = sp;
	return r;
}

TEST(walks_three_frames_to_an_undefined_return_address)
{
	struct fake f = {};
	struct fg_unwind_row outer = simple_row(16);
	struct fg_unwind_regs regs = regs_at(0x1000, STACK_BASE);
	struct fg_unwind_stack st = fake_stack(&f, 64);
	struct fg_unwind_result res;
	uint64_t pcs[8];

	/* leaf at 0x1000: CFA = sp + 32; mid at 0x2000 (returns to 0x2005): CFA + 16; outer: RA undefined. */
	add_row(&f, 0x1000, simple_row(32));
	add_row(&f, 0x2004, simple_row(16));
	outer.regs[FG_REG_RA].kind = FG_RULE_UNDEFINED;
	add_row(&f, 0x3009, outer);
	f.words[3] = 0x2005; /* [CFA - 8] of the leaf: sp + 24 */
	f.words[5] = 0x300a; /* the mid frame's CFA is sp + 32 + 16 = word 6; RA at word 5 */

	fg_unwind(&regs, &st, fake_row, &f, pcs, ELEMENTSOF(pcs), &res);
	ASSERT_EQ(res.end, FG_UNWIND_OUTERMOST);
	ASSERT_EQ(res.n, 3);
	ASSERT_U64_EQ(pcs[0], 0x1000);
	ASSERT_U64_EQ(pcs[1], 0x2005);
	ASSERT_U64_EQ(pcs[2], 0x300a);
	/* The sampled pc is looked up as is, return addresses one byte back, inside the call. */
	ASSERT_U64_EQ(f.looked_up[0], 0x1000);
	ASSERT_U64_EQ(f.looked_up[1], 0x2004);
	ASSERT_U64_EQ(f.looked_up[2], 0x3009);
	ASSERT_EQ(res.fp_frames, 0);
}

TEST(a_read_above_the_dump_is_truncation_below_it_failure)
{
	struct fake f = {};
	struct fg_unwind_regs regs = regs_at(0x1000, STACK_BASE);
	struct fg_unwind_stack st =
		fake_stack(&f, 2); /* the return address at word 3 is not in it */
	struct fg_unwind_result res;
	uint64_t pcs[8], v;

	add_row(&f, 0x1000, simple_row(32));
	fg_unwind(&regs, &st, fake_row, &f, pcs, ELEMENTSOF(pcs), &res);
	ASSERT_EQ(res.end, FG_UNWIND_TRUNCATED);
	ASSERT_EQ(res.n, 1);

	ASSERT_EQ(fg_unwind_read(&st, STACK_BASE - 8, &v), -EFAULT);
	ASSERT_EQ(fg_unwind_read(&st, STACK_BASE + 9, &v), -ERANGE);
	ASSERT_EQ(fg_unwind_read(&st, UINT64_MAX - 3, &v), -ERANGE);
	ASSERT_OK(fg_unwind_read(&st, STACK_BASE + 8, &v));
}

TEST(an_epilogue_after_pop_rbp_keeps_the_restored_rbp)
{
	struct fake f = {};
	struct fg_unwind_row epilogue = simple_row(8), caller = simple_row(16);
	struct fg_unwind_regs regs = regs_at(0x1000, STACK_BASE);
	struct fg_unwind_stack st = fake_stack(&f, 64);
	struct fg_unwind_result res;
	uint64_t pcs[8];

	/*
	 * `pop %rbp` has run, `ret` has not: CFA = rsp + 8, and the CFI still
	 * says rbp is saved at CFA - 16, below the stack pointer and the dump.
	 * rbp already holds the caller's value, which the caller's CFA needs.
	 */
	epilogue.regs[FG_REG_RBP] =
		(struct fg_unwind_rule){ .kind = FG_RULE_OFFSET, .offset = -16 };
	add_row(&f, 0x1000, epilogue);
	caller.cfa = (struct fg_unwind_rule){ .kind = FG_RULE_VAL_OFFSET,
					      .reg = FG_REG_RBP,
					      .offset = 16 };
	caller.regs[FG_REG_RA].kind = FG_RULE_UNDEFINED;
	add_row(&f, 0x2004, caller);
	regs.v[FG_REG_RBP] = STACK_BASE + 32;
	regs.valid |= 1U << FG_REG_RBP;
	f.words[0] = 0x2005;
	fg_unwind(&regs, &st, fake_row, &f, pcs, ELEMENTSOF(pcs), &res);
	ASSERT_EQ(res.end, FG_UNWIND_OUTERMOST);
	ASSERT_EQ(res.n, 2);
	ASSERT_U64_EQ(pcs[1], 0x2005);
}

TEST(a_return_address_popped_into_a_register)
{
	struct fake f = {};
	struct fg_unwind_row vfork = simple_row(0), caller = simple_row(16);
	struct fg_unwind_regs regs = regs_at(0x1000, STACK_BASE);
	struct fg_unwind_stack st = fake_stack(&f, 64);
	struct fg_unwind_result res;
	uint64_t pcs[8];

	/* __vfork: `pop %rdi` took the return address; CFA = rsp, the return address is rdi. */
	vfork.regs[FG_REG_RA] =
		(struct fg_unwind_rule){ .kind = FG_RULE_REGISTER, .reg = FG_REG_RDI };
	add_row(&f, 0x1000, vfork);
	caller.regs[FG_REG_RA].kind = FG_RULE_UNDEFINED;
	add_row(&f, 0x2004, caller);
	regs.v[FG_REG_RDI] = 0x2005;
	regs.valid |= 1U << FG_REG_RDI;
	fg_unwind(&regs, &st, fake_row, &f, pcs, ELEMENTSOF(pcs), &res);
	ASSERT_EQ(res.end, FG_UNWIND_OUTERMOST);
	ASSERT_EQ(res.n, 2);
	ASSERT_U64_EQ(pcs[1], 0x2005);

	/* The same frame returning to itself is a loop, not a caller. */
	regs.v[FG_REG_RDI] = 0x1000;
	fg_unwind(&regs, &st, fake_row, &f, pcs, ELEMENTSOF(pcs), &res);
	ASSERT_EQ(res.end, FG_UNWIND_FAILED);
}

TEST(a_frame_that_does_not_move_up_the_stack_fails)
{
	struct fake f = {};
	struct fg_unwind_regs regs = regs_at(0x1000, STACK_BASE + 64);
	struct fg_unwind_stack st = fake_stack(&f, 64);
	struct fg_unwind_result res;
	uint64_t pcs[8];

	/* CFA = rsp - 64: the caller would sit below its callee. */
	add_row(&f, 0x1000, simple_row(-64));
	f.words[7] = 0x1001;
	fg_unwind(&regs, &st, fake_row, &f, pcs, ELEMENTSOF(pcs), &res);
	ASSERT_EQ(res.end, FG_UNWIND_FAILED);
}

TEST(self_recursion_stops_at_the_depth_limit)
{
	struct fake f = {};
	struct fg_unwind_regs regs = regs_at(0x1000, STACK_BASE);
	struct fg_unwind_stack st = fake_stack(&f, 64);
	struct fg_unwind_result res;
	uint64_t pcs[4];

	/* Every frame is 16 bytes and returns into the same function. */
	add_row(&f, 0x1000, simple_row(16));
	add_row(&f, 0x1004, simple_row(16));
	for (size_t i = 1; i < 64; i += 2)
		f.words[i] = 0x1005;
	fg_unwind(&regs, &st, fake_row, &f, pcs, ELEMENTSOF(pcs), &res);
	ASSERT_EQ(res.end, FG_UNWIND_MAX_DEPTH);
	ASSERT_EQ(res.n, 4);
}

TEST(code_without_cfi_unwinds_by_frame_pointer)
{
	struct fake f = {};
	struct fg_unwind_regs regs = regs_at(0x9000, STACK_BASE);
	struct fg_unwind_row outer = simple_row(16);
	struct fg_unwind_stack st = fake_stack(&f, 64);
	struct fg_unwind_result res;
	uint64_t pcs[8];

	/* JIT code at 0x9000 with rbp = sp + 16: [rbp] = caller's rbp, [rbp + 8] = 0x3005. */
	regs.v[FG_REG_RBP] = STACK_BASE + 16;
	regs.valid |= 1U << FG_REG_RBP;
	f.words[2] = STACK_BASE + 48;
	f.words[3] = 0x3005;
	outer.regs[FG_REG_RA].kind = FG_RULE_UNDEFINED;
	add_row(&f, 0x3004, outer);
	fg_unwind(&regs, &st, fake_row, &f, pcs, ELEMENTSOF(pcs), &res);
	ASSERT_EQ(res.end, FG_UNWIND_OUTERMOST);
	ASSERT_EQ(res.n, 2);
	ASSERT_U64_EQ(pcs[1], 0x3005);
	ASSERT_EQ(res.fp_frames, 1);

	/* A zero return address found by frame pointer is a zero on the stack, not the end. */
	f.words[3] = 0;
	fg_unwind(&regs, &st, fake_row, &f, pcs, ELEMENTSOF(pcs), &res);
	ASSERT_EQ(res.end, FG_UNWIND_FAILED);
	f.words[3] = 0x3005;

	/* A frame pointer below the stack pointer is garbage, not a frame. */
	regs.v[FG_REG_RBP] = STACK_BASE - 16;
	fg_unwind(&regs, &st, fake_row, &f, pcs, ELEMENTSOF(pcs), &res);
	ASSERT_EQ(res.end, FG_UNWIND_FAILED);
	ASSERT_EQ(res.n, 1);
}

TEST(evaluates_the_plt_cfa_expression)
{
	/* What binutils writes for .plt: CFA = rsp + 8 + ((rip & 15) >= 11) * 8. */
	const struct fg_unwind_op ops[] = {
		{ DW_OP_breg7, 0, 8 }, { DW_OP_breg16, 0, 0 }, { DW_OP_lit15, 0, 0 },
		{ DW_OP_and, 0, 0 },   { DW_OP_lit11, 0, 0 },  { DW_OP_ge, 0, 0 },
		{ DW_OP_lit3, 0, 0 },  { DW_OP_shl, 0, 0 },    { DW_OP_plus, 0, 0 },
	};
	struct fake f = {};
	struct fg_unwind_stack st = fake_stack(&f, 8);
	struct fg_unwind_regs regs = regs_at(0x1020, STACK_BASE);
	uint64_t v;

	ASSERT_OK(fg_unwind_eval(ops, ELEMENTSOF(ops), &regs, &st, false, 0, &v));
	ASSERT_U64_EQ(v, STACK_BASE + 8);
	regs.v[FG_REG_RA] = 0x102b;
	ASSERT_OK(fg_unwind_eval(ops, ELEMENTSOF(ops), &regs, &st, false, 0, &v));
	ASSERT_U64_EQ(v, STACK_BASE + 16);
}

TEST(expression_errors_are_reported_not_followed)
{
	const struct fg_unwind_op deref_low[] = { { DW_OP_breg7, 0, -8 }, { DW_OP_deref, 0, 0 } };
	const struct fg_unwind_op deref_high[] = { { DW_OP_breg7, 0, 4096 },
						   { DW_OP_deref, 0, 0 } };
	const struct fg_unwind_op underflow[] = { { DW_OP_plus, 0, 0 } };
	const struct fg_unwind_op unknown_reg[] = { { DW_OP_breg0 + 3, 0, 0 } };
	const struct fg_unwind_op cfa_outside_rule[] = { { DW_OP_call_frame_cfa, 0, 0 } };
	const struct fg_unwind_op div0[] = { { DW_OP_lit1, 0, 0 },
					     { DW_OP_lit0, 0, 0 },
					     { DW_OP_div, 0, 0 } };
	const struct fg_unwind_op unsupported[] = { { DW_OP_GNU_entry_value, 0, 0 } };
	struct fake f = {};
	struct fg_unwind_stack st = fake_stack(&f, 8);
	struct fg_unwind_regs regs = regs_at(0x1000, STACK_BASE);
	uint64_t v;

	ASSERT_EQ(fg_unwind_eval(deref_low, 2, &regs, &st, false, 0, &v), -EFAULT);
	ASSERT_EQ(fg_unwind_eval(deref_high, 2, &regs, &st, false, 0, &v), -ERANGE);
	ASSERT_EQ(fg_unwind_eval(underflow, 1, &regs, &st, false, 0, &v), -EINVAL);
	ASSERT_EQ(fg_unwind_eval(unknown_reg, 1, &regs, &st, false, 0, &v), -EINVAL);
	ASSERT_EQ(fg_unwind_eval(cfa_outside_rule, 1, &regs, &st, false, 0, &v), -EINVAL);
	ASSERT_OK(fg_unwind_eval(cfa_outside_rule, 1, &regs, &st, true, 1234, &v));
	ASSERT_U64_EQ(v, 1234);
	ASSERT_EQ(fg_unwind_eval(div0, 3, &regs, &st, false, 0, &v), -EINVAL);
	ASSERT_EQ(fg_unwind_eval(unsupported, 1, &regs, &st, false, 0, &v), -EINVAL);
	ASSERT_EQ(fg_unwind_eval(NULL, 0, &regs, &st, false, 0, &v), -EINVAL);
}

static bool same_rule(const struct fg_unwind_rule *a, const struct fg_unwind_rule *b)
{
	return a->kind == b->kind && a->reg == b->reg && a->expr_off == b->expr_off &&
	       a->expr_len == b->expr_len && a->offset == b->offset;
}

/* Packs row, unpacks it over a row full of garbage: true if every field came back. */
static bool packs_back(const struct fg_unwind_row *row)
{
	struct fg_unwind_packed_row p;
	struct fg_unwind_row back;
	bool same;

	if (!fg_unwind_row_pack(row, &p))
		return false;
	memset(&back, 0xa5, sizeof(back));
	fg_unwind_row_unpack(&p, &back);
	same = same_rule(&row->cfa, &back.cfa) && row->signal_frame == back.signal_frame &&
	       back.n_ops == 0;
	for (size_t i = 0; i < FG_UNWIND_NREGS; i++)
		same = same && same_rule(&row->regs[i], &back.regs[i]);
	return same;
}

TEST(ordinary_rows_pack_into_40_bytes_and_come_back_whole)
{
	struct fg_unwind_row row = {
		.cfa = { .kind = FG_RULE_VAL_OFFSET, .reg = FG_REG_RSP, .offset = 16 },
	};
	struct fg_unwind_packed_row p;

	/* What a function body past its prologue says: a caller's rbp and pc saved. */
	for (size_t i = 0; i < FG_UNWIND_NREGS; i++)
		row.regs[i].kind = FG_RULE_SAME;
	row.regs[FG_REG_RAX].kind = FG_RULE_UNDEFINED;
	row.regs[FG_REG_RBP] = (struct fg_unwind_rule){ .kind = FG_RULE_OFFSET, .offset = -16 };
	row.regs[FG_REG_RA] = (struct fg_unwind_rule){ .kind = FG_RULE_OFFSET, .offset = -8 };
	row.regs[FG_REG_RSP] = (struct fg_unwind_rule){ .kind = FG_RULE_VAL_OFFSET };
	ASSERT_EQ(sizeof(p), 40);
	ASSERT_TRUE(packs_back(&row));
	/* The bounds of a packed offset: 127 and -128 times 8. */
	row.regs[FG_REG_RBX] = (struct fg_unwind_rule){ .kind = FG_RULE_OFFSET, .offset = 1016 };
	row.regs[12] = (struct fg_unwind_rule){ .kind = FG_RULE_VAL_OFFSET, .offset = -1024 };
	row.regs[13] = (struct fg_unwind_rule){ .kind = FG_RULE_REGISTER, .reg = FG_REG_R15 };
	row.cfa = (struct fg_unwind_rule){ .kind = FG_RULE_VAL_OFFSET,
					   .reg = FG_REG_RBP,
					   .offset = -2000000000 };
	row.signal_frame = true;
	ASSERT_TRUE(packs_back(&row));

	/* What does not fit is refused, not packed into something else. */
	row.regs[FG_REG_RBX].offset = 1024;
	ASSERT_TRUE(!fg_unwind_row_pack(&row, &p));
	row.regs[FG_REG_RBX].offset = -1032;
	ASSERT_TRUE(!fg_unwind_row_pack(&row, &p));
	row.regs[FG_REG_RBX].offset = 12;
	ASSERT_TRUE(!fg_unwind_row_pack(&row, &p));
	row.regs[FG_REG_RBX].offset = 8;
	ASSERT_TRUE(packs_back(&row));
	row.regs[FG_REG_RBX].reg = 3; /* an offset rule has no register */
	ASSERT_TRUE(!fg_unwind_row_pack(&row, &p));
	row.regs[FG_REG_RBX].reg = 0;
	row.regs[FG_REG_RBX] = (struct fg_unwind_rule){ .kind = FG_RULE_EXPR, .expr_len = 2 };
	row.n_ops = 2;
	ASSERT_TRUE(!fg_unwind_row_pack(&row, &p));
	row.regs[FG_REG_RBX] = (struct fg_unwind_rule){ .kind = FG_RULE_SAME };
	row.n_ops = 0;
	ASSERT_TRUE(packs_back(&row));
	/* The PLT's CFA is an expression. */
	row.cfa = (struct fg_unwind_rule){ .kind = FG_RULE_VAL_EXPR, .expr_len = 1 };
	row.n_ops = 1;
	ASSERT_TRUE(!fg_unwind_row_pack(&row, &p));
}

TEST(perf_register_order_maps_to_dwarf_numbers)
{
	uint64_t perf[17];
	struct fg_unwind_regs r;

	for (size_t i = 0; i < 17; i++)
		perf[i] = 100 + i;
	ASSERT_OK(fg_unwind_regs_from_perf(perf, 17, &r));
	ASSERT_U64_EQ(r.v[FG_REG_RAX], 100);
	ASSERT_U64_EQ(r.v[FG_REG_RBX], 101);
	ASSERT_U64_EQ(r.v[FG_REG_RCX], 102);
	ASSERT_U64_EQ(r.v[FG_REG_RDX], 103);
	ASSERT_U64_EQ(r.v[FG_REG_RBP], 106);
	ASSERT_U64_EQ(r.v[FG_REG_RSP], 107);
	ASSERT_U64_EQ(r.v[FG_REG_RA], 108);
	ASSERT_U64_EQ(r.v[FG_REG_R8], 109);
	ASSERT_U64_EQ(r.v[FG_REG_R15], 116);
	ASSERT_EQ(fg_unwind_regs_from_perf(perf, 16, &r), -EINVAL);
}

/* ---- real binaries: a process's own registers and stack, unwound by the daemon's code ---- */

struct child {
	pid_t pid;
	int in_fd; /* its stdin: closing it lets it exit */
	uint64_t regs[17];
	uint8_t *stack; /* owned */
	uint64_t stack_size;
};

/* Starts program, which captures a dump into a temp file and waits. */
static void child_start(const char *program, struct child *c)
{
	char path[4096], dump[] = "/tmp/fgtest-unwind-XXXXXX", ready[8] = "";
	int to_child[2], from_child[2], fd;
	uint32_t nregs;
	FILE *f;

	/* meson builds the programs before the tests: a missing one is a failure. */
	snprintf(path, sizeof(path), "%s/programs/%s", fg_test_build_dir(), program);
	ASSERT_OK(access(path, X_OK));
	fd = mkstemp(dump);
	ASSERT_TRUE(fd >= 0);
	close(fd);
	ASSERT_OK(pipe2(to_child, O_CLOEXEC));
	ASSERT_OK(pipe2(from_child, O_CLOEXEC));
	c->pid = fork();
	ASSERT_TRUE(c->pid >= 0);
	if (c->pid == 0) {
		dup2(to_child[0], 0);
		dup2(from_child[1], 1);
		execl(path, path, dump, (char *)NULL);
		_exit(127);
	}
	close(to_child[0]);
	close(from_child[1]);
	c->in_fd = to_child[1];
	ASSERT_TRUE(read(from_child[0], ready, sizeof(ready) - 1) > 0);
	close(from_child[0]);
	ASSERT_TRUE(strncmp(ready, "ready", 5) == 0);

	f = fopen(dump, "re");
	ASSERT_TRUE(f);
	ASSERT_TRUE(fread(ready, 1, 4, f) == 4 && memcmp(ready, "FGUW", 4) == 0);
	ASSERT_TRUE(fread(&nregs, sizeof(nregs), 1, f) == 1 && nregs == 17);
	ASSERT_TRUE(fread(c->regs, sizeof(c->regs), 1, f) == 1);
	ASSERT_TRUE(fread(&c->stack_size, sizeof(c->stack_size), 1, f) == 1);
	ASSERT_TRUE(c->stack_size > 0 && c->stack_size <= 65536);
	c->stack = malloc(c->stack_size);
	ASSERT_TRUE(c->stack);
	ASSERT_TRUE(fread(c->stack, 1, c->stack_size, f) == c->stack_size);
	fclose(f);
	unlink(dump);
}

static void child_stop(struct child *c)
{
	int status;

	close(c->in_fd);
	ASSERT_EQ(waitpid(c->pid, &status, 0), c->pid);
	free(c->stack);
}

struct unwound {
	char names[48][256]; /* leaf first, inlined functions included */
	size_t n;
	size_t inlined; /* names that are inlined functions, not unwound frames */
	struct fg_unwind_result res;
};

/*
 * Unwinds the child's dump as a sample of it, with dump_size bytes, and names
 * each frame as a recording would: inline frames expanded, names demangled.
 */
static void unwind_child(struct child *c, uint64_t dump_size, struct unwound *ret)
{
	struct fg_symbolizer *sym;
	struct fg_unwinder *u;
	struct fg_proctab *t;
	struct fg_process *p;
	struct fg_sample s = {
		.regs_abi = PERF_SAMPLE_REGS_ABI_64,
		.regs = c->regs,
		.n_regs = 17,
		.stack = c->stack,
		.stack_size = MIN(dump_size, c->stack_size),
	};
	uint64_t pcs[32];
	struct fg_budget *budget;

	ASSERT_OK(fg_symbolizer__new(&sym));
	ASSERT_OK(fg_proctab__new(sym, &t));
	ASSERT_OK(fg_unwinder__new(&u));
	ASSERT_OK(fg_budget__new(1ULL << 30, &budget));
	fg_unwinder__set_budget(u, budget);
	ASSERT_OK(fg_proctab__get_live(t, c->pid, &p, NULL));
	ASSERT_OK(fg_unwinder__unwind(u, p, &s, 0, pcs, ELEMENTSOF(pcs), &ret->res));
	ret->n = ret->inlined = 0;
	for (size_t i = 0; i < ret->res.n; i++) {
		/* Return addresses are named by their call instruction. */
		uint64_t pc = i ? pcs[i] - 1 : pcs[i];
		const struct fg_map *m = fg_process_find_map(p, pc);
		struct fg_sym_frames fr;

		ASSERT_TRUE(m && m->dso);
		fg_symbolizer__frames_user(sym, m->dso, pc - m->start + m->pgoff, NULL,
					   FG_SYM_INLINE | FG_SYM_DEMANGLE, &fr);
		/* Outermost first there; innermost first here, like the unwound frames. */
		for (size_t j = fr.n; j-- > 0;) {
			ASSERT_TRUE(ret->n < ELEMENTSOF(ret->names));
			snprintf(ret->names[ret->n++], sizeof(ret->names[0]), "%s", fr.names[j]);
		}
		ret->inlined += fr.inlined;
	}
	/* A warm second walk gives the same frames, from the row cache. */
	{
		struct fg_status_unwinding before, after;
		struct fg_unwind_result again;
		uint64_t pcs2[32];

		fg_unwinder__stats(u, &before);
		ASSERT_OK(fg_unwinder__unwind(u, p, &s, 0, pcs2, ELEMENTSOF(pcs2), &again));
		fg_unwinder__stats(u, &after);
		ASSERT_EQ(again.n, ret->res.n);
		ASSERT_TRUE(memcmp(pcs, pcs2, again.n * sizeof(pcs[0])) == 0);
		ASSERT_EQ(after.row_misses, before.row_misses);
		ASSERT_EQ(after.binaries_loaded, before.binaries_loaded);

		/*
		 * A pc not seen before in a row already read is a hit: two bytes
		 * before a return address is inside the same call instruction as
		 * the address the walk looked up (one byte before), so in its row,
		 * which is found under their 64-byte block, if no later frame's row
		 * took the block's slot (small functions share blocks).
		 */
		size_t tried = 0;

		for (size_t i = again.n; i-- > 1 && !tried;) {
			uint64_t regs[17], pc = pcs[i] - 2, one[1];
			struct fg_sample leaf = s;
			struct fg_unwind_result res;
			bool shared = false;

			for (size_t j = i + 1; j < again.n; j++)
				shared |= (pcs[j] - 1) >> 6 == (pcs[i] - 1) >> 6;
			if (shared || pc >> 6 != (pcs[i] - 1) >> 6)
				continue;
			memcpy(regs, c->regs, sizeof(regs));
			regs[8] = pc; /* perf's ip */
			leaf.regs = regs;
			fg_unwinder__stats(u, &before);
			/* One pc at most: the walk looks up that one row only. */
			ASSERT_OK(fg_unwinder__unwind(u, p, &leaf, 0, one, 1, &res));
			fg_unwinder__stats(u, &after);
			ASSERT_EQ(after.row_hits, before.row_hits + 1);
			ASSERT_EQ(after.row_misses, before.row_misses);
			tried++;
		}
		ASSERT_TRUE(tried == 1 || again.n < 3);

		/* Binaries used within the idle allowance stay; then they go, and come back on use. */
		fg_unwinder__trim(u, 1);
		fg_unwinder__stats(u, &after);
		ASSERT_EQ(after.binaries_evicted, 0);
		ASSERT_TRUE(after.binaries > 0);
		fg_unwinder__trim(u, 1);
		fg_unwinder__stats(u, &after);
		ASSERT_EQ(after.binaries, 0);
		ASSERT_EQ(after.binaries_evicted, before.binaries);
		ASSERT_OK(fg_unwinder__unwind(u, p, &s, 0, pcs2, ELEMENTSOF(pcs2), &again));
		ASSERT_EQ(again.n, ret->res.n);
		fg_unwinder__stats(u, &after);
		ASSERT_EQ(after.binaries_loaded, before.binaries_loaded + before.binaries);
	}
	/* The budget holds what the unwinder says; under pressure its CFI goes, and comes back. */
	{
		struct fg_status_unwinding before, after;
		struct fg_status_memory bs;
		struct fg_unwind_result again;
		uint64_t pcs2[32];

		fg_unwinder__stats(u, &before);
		fg_budget__stats(budget, &bs);
		ASSERT_U64_EQ(bs.by_part[FG_BUDGET_CFI].bytes, before.bytes);
		ASSERT_TRUE(before.binaries > 0);
		fg_budget__set_base(budget, 1ULL << 30);
		ASSERT_TRUE(fg_budget__relieve(budget, fgd_now() + 120ULL * 1000000000ULL) > 0);
		fg_unwinder__stats(u, &after);
		ASSERT_EQ(after.binaries, 0);
		ASSERT_EQ(after.binaries_evicted, before.binaries_evicted + before.binaries);
		fg_budget__stats(budget, &bs);
		ASSERT_U64_EQ(bs.by_part[FG_BUDGET_CFI].bytes, after.bytes);
		ASSERT_EQ(bs.by_part[FG_BUDGET_CFI].evicted, before.binaries);
		fg_budget__set_base(budget, 0);
		ASSERT_OK(fg_unwinder__unwind(u, p, &s, 0, pcs2, ELEMENTSOF(pcs2), &again));
		ASSERT_EQ(again.n, ret->res.n);
		ASSERT_TRUE(memcmp(pcs, pcs2, again.n * sizeof(pcs[0])) == 0);
	}
	fg_unwinder__free(u);
	{
		struct fg_status_memory bs;

		fg_budget__stats(budget, &bs);
		ASSERT_U64_EQ(bs.charged, 0);
	}
	fg_budget__free(budget);
	fg_proctab__free(t);
	fg_symbolizer__free(sym);
}

/* Runs program until it has captured its dump, unwinds dump_size bytes of it, and stops it. */
static void unwind_program(const char *program, uint64_t dump_size, struct unwound *ret)
{
	struct child c;

	child_start(program, &c);
	unwind_child(&c, dump_size, ret);
	child_stop(&c);
}

static size_t find_name(const struct unwound *w, size_t from, const char *name)
{
	for (size_t i = from; i < w->n; i++)
		if (strcmp(w->names[i], name) == 0)
			return i;
	return SIZE_MAX;
}

/* The chain leaf .. a, then main, in this order, and the walk reached the very first frame. */
static void assert_c_chain(const struct unwound *w)
{
	static const char *const chain[] = { "fgtest_unwind_leaf", "fgtest_unwind_c",
					     "fgtest_unwind_b", "fgtest_unwind_a", "main" };
	size_t at = 0;

	for (size_t i = 0; i < w->n; i++)
		fprintf(stderr, "    #%zu %s\n", i, w->names[i]);
	for (size_t i = 0; i < ELEMENTSOF(chain); i++) {
		size_t next = find_name(w, at, chain[i]);

		if (next == SIZE_MAX)
			fg_test_fail(__FILE__, __LINE__, "frame %s missing or out of order",
				     chain[i]);
		ASSERT_EQ(next, i); /* no frame skipped, none invented */
		at = next + 1;
	}
	ASSERT_EQ(w->res.end, FG_UNWIND_OUTERMOST);
	ASSERT_EQ(w->res.fp_frames, 0);
}

TEST(unwinds_a_gcc_O2_binary_without_frame_pointers_to_start)
{
	struct unwound w;

	unwind_program("fgtest-unwind", 65536, &w);
	assert_c_chain(&w);
	/* main is called from libc and the first frame is _start in the executable. */
	ASSERT_TRUE(w.n >= 7);
}

TEST(unwinds_code_that_has_only_debug_frame)
{
	struct unwound w;

	unwind_program("fgtest-unwind-debug-frame", 65536, &w);
	assert_c_chain(&w);
}

TEST(unwinds_a_stripped_binary_the_same_way)
{
	struct unwound w, w2;

	unwind_program("fgtest-unwind", 65536, &w);
	/* .eh_frame is allocated: strip keeps it, so only the names change. */
	unwind_program("fgtest-unwind-stripped", 65536, &w2);
	ASSERT_EQ(w2.res.end, FG_UNWIND_OUTERMOST);
	ASSERT_EQ(w2.n, w.n);
}

TEST(unwinds_a_stripped_binary_and_names_it_through_its_debuglink)
{
	struct unwound w;

	/*
	 * fgtest_unwind_b is inlined into fgtest_unwind_a: one frame fewer to
	 * unwind, and the debug file beside the binary names it as an inline frame.
	 */
	unwind_program("fgtest-unwind-inline-debuglink", 65536, &w);
	assert_c_chain(&w);
	ASSERT_EQ(w.inlined, 1);
	ASSERT_EQ(w.n, w.res.n + 1);
}

TEST(a_process_at_its_first_instruction_is_one_complete_frame)
{
	struct fg_symbolizer *sym;
	struct fg_unwinder *u;
	struct fg_proctab *t;
	struct fg_process *p;
	struct user_regs_struct ur;
	struct fg_unwind_result res;
	uint64_t regs[17], pcs[8];
	uint8_t stack[4096];
	char path[4096], mem[64];
	ssize_t got;
	int status, fd;
	pid_t pid;

	/*
	 * Stopped right after exec, the process sits at the dynamic loader's
	 * entry point, which has no CFI: still the stack's first frame, not a
	 * failure.
	 */
	snprintf(path, sizeof(path), "%s/programs/fgtest-unwind", fg_test_build_dir());
	pid = fork();
	ASSERT_TRUE(pid >= 0);
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execl(path, path, "/nonexistent/dump", (char *)NULL);
		_exit(127);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFSTOPPED(status));
	ASSERT_OK(ptrace(PTRACE_GETREGS, pid, NULL, &ur));
	snprintf(mem, sizeof(mem), "/proc/%d/mem", pid);
	fd = open(mem, O_RDONLY | O_CLOEXEC);
	ASSERT_TRUE(fd >= 0);
	got = pread(fd, stack, sizeof(stack), (off_t)ur.rsp);
	close(fd);
	ASSERT_TRUE(got > 0);
	/* perf's order: ax bx cx dx si di bp sp ip r8..r15. */
	uint64_t perf_order[17] = { ur.rax, ur.rbx, ur.rcx, ur.rdx, ur.rsi, ur.rdi,
				    ur.rbp, ur.rsp, ur.rip, ur.r8,  ur.r9,  ur.r10,
				    ur.r11, ur.r12, ur.r13, ur.r14, ur.r15 };
	memcpy(regs, perf_order, sizeof(regs));
	struct fg_sample s = {
		.regs_abi = PERF_SAMPLE_REGS_ABI_64,
		.regs = regs,
		.n_regs = 17,
		.stack = stack,
		.stack_size = (uint64_t)got,
	};

	ASSERT_OK(fg_symbolizer__new(&sym));
	ASSERT_OK(fg_proctab__new(sym, &t));
	ASSERT_OK(fg_unwinder__new(&u));
	ASSERT_OK(fg_proctab__get_live(t, pid, &p, NULL));
	ASSERT_OK(fg_unwinder__unwind(u, p, &s, 0, pcs, ELEMENTSOF(pcs), &res));
	kill(pid, SIGKILL);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_EQ(res.n, 1);
	ASSERT_U64_EQ(pcs[0], ur.rip);
	ASSERT_EQ(res.end, FG_UNWIND_OUTERMOST);
	fg_unwinder__free(u);
	fg_proctab__free(t);
	fg_symbolizer__free(sym);
}

TEST(a_small_dump_truncates)
{
	struct unwound w;

	/* The leaf's frame alone is larger than 64 bytes: its return address is not in the dump. */
	unwind_program("fgtest-unwind", 64, &w);
	ASSERT_EQ(w.res.end, FG_UNWIND_TRUNCATED);
	ASSERT_EQ(w.n, 1);
	ASSERT_TRUE(strcmp(w.names[0], "fgtest_unwind_leaf") == 0);
}

TEST(unwinds_cxx_templates_and_lambdas)
{
	struct unwound w;
	size_t main_at;

	unwind_program("fgtest-unwind-cxx", 65536, &w);
	for (size_t i = 0; i < w.n; i++)
		fprintf(stderr, "    #%zu %s\n", i, w.names[i]);
	ASSERT_EQ(w.res.end, FG_UNWIND_OUTERMOST);
	main_at = find_name(&w, 0, "main");
	/* leaf, step<0>, step<1>, step<2>, the lambda, run, main. */
	ASSERT_EQ(main_at, 6);
	ASSERT_TRUE(strcmp(w.names[0], "fgtest::Walker<int>::leaf") == 0);
	ASSERT_TRUE(strcmp(w.names[1], "fgtest::Walker<int>::step<0>") == 0);
	ASSERT_TRUE(strcmp(w.names[5], "fgtest::run") == 0);
}
