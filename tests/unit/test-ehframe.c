/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/macro.h"
#include "resolver/fgd-cfi.h"
#include "symbols/fgd-elffile.h"
#include "test.h"
#include "unwind/ehframe.h"

/* ---- sections written by hand ---- */

#define TEXT 0x1000ULL
#define HDR_ADDR 0x2000ULL
#define FRAME_ADDR 0x3000ULL

struct buf {
	uint8_t b[1024];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	ASSERT_TRUE(b->n + n <= sizeof(b->b));
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put_u8(struct buf *b, uint8_t v)
{
	put(b, &v, 1);
}

static void put_u32(struct buf *b, uint32_t v)
{
	put(b, &v, 4);
}

/* Bytes as a CFI program spells them: opcodes and small ULEB128 operands alike. */
#define PUT(b, ...) \
	put(b, (const uint8_t[]){ __VA_ARGS__ }, sizeof((const uint8_t[]){ __VA_ARGS__ }))

/* Patches the length of the entry that starts at off, now that it ends at b->n (padded to 4). */
static void end_entry(struct buf *b, size_t off)
{
	uint32_t len;

	while ((b->n - off) % 4)
		put_u8(b, DW_CFA_nop);
	len = (uint32_t)(b->n - off - 4);
	memcpy(b->b + off, &len, 4);
}

/* A CIE as gcc writes it ("zR", pc-relative sdata4 pointers), augmented with extra. */
static size_t put_cie(struct buf *b, const char *aug)
{
	size_t off = b->n;

	put_u32(b, 0); /* length, patched */
	put_u32(b, 0); /* CIE id */
	put_u8(b, 1);  /* version */
	put(b, aug, strlen(aug) + 1);
	PUT(b, 1, 0x78, FG_REG_RA); /* code alignment 1, data alignment -8, return address column */
	PUT(b, 1, DW_EH_PE_pcrel | DW_EH_PE_sdata4);
	PUT(b, DW_CFA_def_cfa, FG_REG_RSP, 8, DW_CFA_offset | FG_REG_RA, 1);
	end_entry(b, off);
	return off;
}

/* Starts an FDE of the CIE at cie for [start, start + len): its instructions follow. */
static size_t put_fde(struct buf *b, size_t cie, uint64_t start, uint32_t len)
{
	size_t off = b->n;

	put_u32(b, 0);
	put_u32(b, (uint32_t)(b->n - cie));
	put_u32(b, (uint32_t)(start - (FRAME_ADDR + b->n)));
	put_u32(b, len);
	put_u8(b, 0); /* augmentation data length */
	return off;
}

struct sections {
	struct buf hdr, frame;
	uint64_t starts[8];
	size_t fdes[8], n;
};

static void add_fde_entry(struct sections *s, uint64_t start, size_t fde)
{
	s->starts[s->n] = start;
	s->fdes[s->n++] = fde;
}

static void put_hdr(struct sections *s)
{
	struct buf *h = &s->hdr;

	PUT(h, 1, DW_EH_PE_pcrel | DW_EH_PE_sdata4, DW_EH_PE_udata4,
	    DW_EH_PE_datarel | DW_EH_PE_sdata4);
	put_u32(h, (uint32_t)(FRAME_ADDR - (HDR_ADDR + h->n)));
	put_u32(h, (uint32_t)s->n);
	for (size_t i = 0; i < s->n; i++) {
		put_u32(h, (uint32_t)(s->starts[i] - HDR_ADDR));
		put_u32(h, (uint32_t)(FRAME_ADDR + s->fdes[i] - HDR_ADDR));
	}
}

/*
 * Four functions:
 *   TEXT + 0x000, 0x20 long: push rbp; mov rbp, rsp; ...; leave; ret
 *   TEXT + 0x100, 0x30 long: an epilogue in the middle (remember/restore_state)
 *   TEXT + 0x200, 0x10 long: a signal trampoline's CIE ("zRS")
 *   TEXT + 0x300, 0x10 long: a CFA expression (a PLT's), left to libdw
 *   TEXT + 0x400, 0x10 long: a second row said to start past the function's end
 */
static void build(struct sections *s)
{
	struct buf *f = &s->frame;
	size_t cie, sig, fde;

	*s = (struct sections){};
	cie = put_cie(f, "zR");
	sig = put_cie(f, "zRS");

	fde = put_fde(f, cie, TEXT, 0x20);
	PUT(f, DW_CFA_advance_loc | 1, DW_CFA_def_cfa_offset, 16, DW_CFA_offset | FG_REG_RBP, 2,
	    DW_CFA_advance_loc | 3, DW_CFA_def_cfa_register, FG_REG_RBP, DW_CFA_advance_loc | 10,
	    DW_CFA_def_cfa, FG_REG_RSP, 8);
	end_entry(f, fde);
	add_fde_entry(s, TEXT, fde);

	fde = put_fde(f, cie, TEXT + 0x100, 0x30);
	PUT(f, DW_CFA_advance_loc | 1, DW_CFA_def_cfa_offset, 16, DW_CFA_offset | FG_REG_RBX, 2,
	    DW_CFA_advance_loc | 4, DW_CFA_remember_state, DW_CFA_def_cfa_offset, 8,
	    DW_CFA_restore | FG_REG_RBX, DW_CFA_advance_loc | 1, DW_CFA_restore_state,
	    DW_CFA_advance_loc1, 0x20, DW_CFA_val_offset, FG_REG_RSI, 3, DW_CFA_register,
	    FG_REG_RDI, FG_REG_RAX);
	end_entry(f, fde);
	add_fde_entry(s, TEXT + 0x100, fde);

	fde = put_fde(f, sig, TEXT + 0x200, 0x10);
	end_entry(f, fde);
	add_fde_entry(s, TEXT + 0x200, fde);

	fde = put_fde(f, cie, TEXT + 0x300, 0x10);
	PUT(f, DW_CFA_def_cfa_expression, 3, DW_OP_breg7, 8, DW_OP_nop);
	end_entry(f, fde);
	add_fde_entry(s, TEXT + 0x300, fde);

	fde = put_fde(f, cie, TEXT + 0x400, 0x10);
	PUT(f, DW_CFA_advance_loc1, 0x30, DW_CFA_def_cfa_offset, 16);
	end_entry(f, fde);
	add_fde_entry(s, TEXT + 0x400, fde);

	put_hdr(s);
}

static int init(const struct sections *s, struct fg_ehframe *ef)
{
	return fg_ehframe_init(ef, s->hdr.b, s->hdr.n, HDR_ADDR, s->frame.b, s->frame.n,
			       FRAME_ADDR);
}

/* The sections built, and ef over them. */
static void built(struct sections *s, struct fg_ehframe *ef)
{
	build(s);
	ASSERT_OK(init(s, ef));
}

struct found {
	struct fg_unwind_row row;
	uint64_t start, end;
};

static int row_at(const struct fg_ehframe *ef, uint64_t pc, struct found *ret)
{
	return fg_ehframe_row(ef, pc, &ret->row, &ret->start, &ret->end);
}

TEST(rows_of_a_frame_pointer_prologue_and_their_ranges)
{
	struct sections s;
	struct fg_ehframe ef;
	struct found f;

	built(&s, &ef);
	ASSERT_EQ(ef.fde_count, 5);

	ASSERT_OK(row_at(&ef, TEXT, &f));
	ASSERT_EQ(f.row.cfa.kind, FG_RULE_VAL_OFFSET);
	ASSERT_EQ(f.row.cfa.reg, FG_REG_RSP);
	ASSERT_EQ(f.row.cfa.offset, 8);
	ASSERT_EQ(f.row.regs[FG_REG_RA].kind, FG_RULE_OFFSET);
	ASSERT_EQ(f.row.regs[FG_REG_RA].offset, -8);
	ASSERT_EQ(f.row.regs[FG_REG_RBP].kind, FG_RULE_SAME);
	ASSERT_EQ(f.row.regs[FG_REG_RSP].kind, FG_RULE_VAL_OFFSET);
	ASSERT_EQ(f.row.regs[FG_REG_RAX].kind, FG_RULE_UNDEFINED);
	ASSERT_EQ(f.row.signal_frame, false);
	ASSERT_U64_EQ(f.start, TEXT);
	ASSERT_U64_EQ(f.end, TEXT + 1);

	for (uint64_t pc = TEXT + 1; pc < TEXT + 4; pc++) {
		ASSERT_OK(row_at(&ef, pc, &f));
		ASSERT_EQ(f.row.cfa.offset, 16);
		ASSERT_EQ(f.row.regs[FG_REG_RBP].kind, FG_RULE_OFFSET);
		ASSERT_EQ(f.row.regs[FG_REG_RBP].offset, -16);
		ASSERT_U64_EQ(f.start, TEXT + 1);
		ASSERT_U64_EQ(f.end, TEXT + 4);
	}
	ASSERT_OK(row_at(&ef, TEXT + 0xd, &f));
	ASSERT_EQ(f.row.cfa.reg, FG_REG_RBP);
	ASSERT_EQ(f.row.cfa.offset, 16);
	ASSERT_U64_EQ(f.start, TEXT + 4);
	ASSERT_U64_EQ(f.end, TEXT + 0xe);
	/* The last row holds to the end of the function. */
	ASSERT_OK(row_at(&ef, TEXT + 0x1f, &f));
	ASSERT_EQ(f.row.cfa.reg, FG_REG_RSP);
	ASSERT_EQ(f.row.cfa.offset, 8);
	ASSERT_U64_EQ(f.start, TEXT + 0xe);
	ASSERT_U64_EQ(f.end, TEXT + 0x20);
}

TEST(addresses_no_fde_covers_are_enoent)
{
	struct sections s;
	struct fg_ehframe ef;
	struct found f;

	built(&s, &ef);
	ASSERT_ERR(row_at(&ef, TEXT - 1, &f), -ENOENT);
	ASSERT_ERR(row_at(&ef, 0, &f), -ENOENT);
	ASSERT_ERR(row_at(&ef, TEXT + 0x20, &f), -ENOENT); /* between two functions */
	ASSERT_ERR(row_at(&ef, TEXT + 0x310, &f), -ENOENT);
	ASSERT_ERR(row_at(&ef, UINT64_MAX, &f), -ENOENT);
}

TEST(remember_and_restore_state_around_an_epilogue)
{
	const uint64_t fn = TEXT + 0x100;
	struct sections s;
	struct fg_ehframe ef;
	struct found f;

	built(&s, &ef);
	/* After the epilogue: rbx restored to the CIE's rule, the CFA back to rsp + 8. */
	ASSERT_OK(row_at(&ef, fn + 5, &f));
	ASSERT_EQ(f.row.cfa.offset, 8);
	ASSERT_EQ(f.row.regs[FG_REG_RBX].kind, FG_RULE_SAME);
	ASSERT_U64_EQ(f.start, fn + 5);
	ASSERT_U64_EQ(f.end, fn + 6);
	/* Past it, the body's rules again. */
	ASSERT_OK(row_at(&ef, fn + 6, &f));
	ASSERT_EQ(f.row.cfa.offset, 16);
	ASSERT_EQ(f.row.regs[FG_REG_RBX].kind, FG_RULE_OFFSET);
	ASSERT_EQ(f.row.regs[FG_REG_RBX].offset, -16);
	ASSERT_U64_EQ(f.end, fn + 0x26);
	/* Then a register held in another, and one that is CFA + 3 * -8. */
	ASSERT_OK(row_at(&ef, fn + 0x26, &f));
	ASSERT_EQ(f.row.regs[FG_REG_RSI].kind, FG_RULE_VAL_OFFSET);
	ASSERT_EQ(f.row.regs[FG_REG_RSI].offset, -24);
	ASSERT_EQ(f.row.regs[FG_REG_RDI].kind, FG_RULE_REGISTER);
	ASSERT_EQ(f.row.regs[FG_REG_RDI].reg, FG_REG_RAX);
	ASSERT_U64_EQ(f.end, fn + 0x30);
}

TEST(a_signal_frame_cie_and_an_expression_left_to_libdw)
{
	struct sections s;
	struct fg_ehframe ef;
	struct found f;

	built(&s, &ef);
	ASSERT_OK(row_at(&ef, TEXT + 0x205, &f));
	ASSERT_EQ(f.row.signal_frame, true);
	ASSERT_ERR(row_at(&ef, TEXT + 0x300, &f), -EOPNOTSUPP);
}

TEST(a_row_ends_with_its_fde)
{
	struct sections s;
	struct fg_ehframe ef;
	struct found f;

	built(&s, &ef);
	ASSERT_OK(row_at(&ef, TEXT + 0x40f, &f));
	ASSERT_EQ(f.row.cfa.offset, 8);
	ASSERT_U64_EQ(f.start, TEXT + 0x400);
	ASSERT_U64_EQ(f.end, TEXT + 0x410);
	ASSERT_ERR(row_at(&ef, TEXT + 0x410, &f), -ENOENT);
}

/* Each FDE's own range, whatever its instructions hold (an expression included). */
TEST(fde_ranges_are_what_each_fde_says)
{
	static const uint64_t want[][2] = { { TEXT, TEXT + 0x20 },
					    { TEXT + 0x100, TEXT + 0x130 },
					    { TEXT + 0x200, TEXT + 0x210 },
					    { TEXT + 0x300, TEXT + 0x310 },
					    { TEXT + 0x400, TEXT + 0x410 } };
	struct sections s;
	struct fg_ehframe ef;
	uint64_t start, end;

	built(&s, &ef);
	for (size_t i = 0; i < ELEMENTSOF(want); i++) {
		ASSERT_OK(fg_ehframe_fde_range(&ef, i, &start, &end));
		ASSERT_U64_EQ(start, want[i][0]);
		ASSERT_U64_EQ(end, want[i][1]);
	}
	ASSERT_ERR(fg_ehframe_fde_range(&ef, ELEMENTSOF(want), &start, &end), -ENOENT);

	/* The table is only where to look: a start it misstates is the FDE's. */
	build(&s);
	s.starts[1] += 8;
	s.hdr.n = 0;
	put_hdr(&s);
	ASSERT_OK(init(&s, &ef));
	ASSERT_OK(fg_ehframe_fde_range(&ef, 1, &start, &end));
	ASSERT_U64_EQ(start, TEXT + 0x100);
	ASSERT_U64_EQ(end, TEXT + 0x130);
}

TEST(headers_it_does_not_read_are_refused)
{
	struct sections s;
	struct fg_ehframe ef;

	build(&s);
	s.hdr.b[0] = 2; /* version */
	ASSERT_ERR(init(&s, &ef), -EINVAL);
	build(&s);
	s.hdr.b[3] = DW_EH_PE_absptr; /* a table of absolute pointers */
	ASSERT_ERR(init(&s, &ef), -EOPNOTSUPP);
	build(&s);
	s.hdr.b[2] = DW_EH_PE_omit; /* no table */
	ASSERT_ERR(init(&s, &ef), -EOPNOTSUPP);
	build(&s);
	s.hdr.b[8] = 200; /* more entries than the section holds */
	ASSERT_ERR(init(&s, &ef), -EINVAL);
	build(&s);
	ASSERT_ERR(fg_ehframe_init(&ef, s.hdr.b, s.hdr.n, HDR_ADDR, s.frame.b, s.frame.n,
				   FRAME_ADDR + 4),
		   -EINVAL); /* the header points elsewhere */
	/* A section libelf gave without bytes (an empty one). */
	ASSERT_ERR(fg_ehframe_init(&ef, NULL, 0, HDR_ADDR, s.frame.b, s.frame.n, FRAME_ADDR),
		   -EINVAL);
	ASSERT_ERR(fg_ehframe_init(&ef, s.hdr.b, s.hdr.n, HDR_ADDR, NULL, 0, FRAME_ADDR), -EINVAL);
	/* Cut short in its pointer to .eh_frame. */
	ASSERT_ERR(fg_ehframe_init(&ef, s.hdr.b, 6, HDR_ADDR, s.frame.b, s.frame.n, FRAME_ADDR),
		   -EINVAL);
}

/* Every cut and every byte changed gives an answer, never a read outside the sections. */
TEST(cut_and_corrupted_sections_give_errors_not_crashes)
{
	struct sections s, good;
	struct fg_ehframe ef;
	struct found f;
	size_t answers = 0;

	build(&good);
	for (size_t cut = 0; cut <= good.frame.n; cut++) {
		/* A heap copy of the exact size, for ASan to see a read past it. */
		uint8_t *frame = malloc(cut ? cut : 1);

		ASSERT_TRUE(frame);
		memcpy(frame, good.frame.b, cut);
		if (fg_ehframe_init(&ef, good.hdr.b, good.hdr.n, HDR_ADDR, frame, cut,
				    FRAME_ADDR) == 0)
			for (uint64_t pc = TEXT; pc < TEXT + 0x410; pc += 3) {
				int r = row_at(&ef, pc, &f);

				ASSERT_TRUE(r == 0 || r == -ENOENT || r == -EINVAL ||
					    r == -EOPNOTSUPP);
				answers++;
			}
		free(frame);
	}
	for (size_t i = 0; i < good.frame.n; i++) {
		for (unsigned v = 0; v < 256; v += 17) {
			s = good;
			s.frame.b[i] = (uint8_t)v;
			ASSERT_OK(init(&s, &ef));
			for (uint64_t pc = TEXT; pc < TEXT + 0x410; pc += 7) {
				int r = row_at(&ef, pc, &f);

				ASSERT_TRUE(r == 0 || r == -ENOENT || r == -EINVAL ||
					    r == -EOPNOTSUPP);
				answers++;
			}
			for (size_t k = 0; k < ef.fde_count; k++) {
				uint64_t start, end;
				int r = fg_ehframe_fde_range(&ef, k, &start, &end);

				ASSERT_TRUE(r == 0 || r == -EINVAL || r == -EOPNOTSUPP);
				ASSERT_TRUE(r != 0 || start <= end);
				answers++;
			}
		}
	}
	ASSERT_TRUE(answers > 10000);
}

/* ---- against libdw, on real binaries ---- */

/* At most this many FDEs of a binary, spread over its table. */
#define MAX_FDES_COMPARED 4000

struct compared {
	size_t fdes, rows, left_to_libdw, mismatched;
};

static bool same_rule(const struct fg_unwind_rule *a, const struct fg_unwind_rule *b)
{
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case FG_RULE_OFFSET:
	case FG_RULE_VAL_OFFSET:
		return a->offset == b->offset;
	case FG_RULE_REGISTER:
		return a->reg == b->reg;
	default:
		return true;
	}
}

static bool same_row(const struct fg_unwind_row *ours, const struct fg_unwind_row *libdw)
{
	if (!same_rule(&ours->cfa, &libdw->cfa) || ours->cfa.reg != libdw->cfa.reg ||
	    ours->signal_frame != libdw->signal_frame)
		return false;
	/*
	 * Not rax: libdw's x86-64 defaults make it "same value" where they mean
	 * rbx (fgd-cfi.c mends rbx). No unwinder reads a caller's rax.
	 */
	for (int i = FG_REG_RAX + 1; i < FG_UNWIND_NREGS; i++)
		if (!same_rule(&ours->regs[i], &libdw->regs[i]))
			return false;
	return true;
}

static void print_row(const char *who, const struct fg_unwind_row *r, uint64_t start, uint64_t end)
{
	printf("  %s [%#" PRIx64 ", %#" PRIx64 "): cfa %u:%u%+d", who, start, end, r->cfa.kind,
	       r->cfa.reg, r->cfa.offset);
	for (int i = 0; i < FG_UNWIND_NREGS; i++)
		printf(" r%d=%u/%d", i, r->regs[i].kind,
		       r->regs[i].kind == FG_RULE_REGISTER ? r->regs[i].reg : r->regs[i].offset);
	printf("%s\n", r->signal_frame ? " signal" : "");
}

/* Walks every row of the FDE whose table entry is i, comparing the two readers. */
static void compare_fde(const struct fg_ehframe *ef, Dwarf_CFI *cfi, size_t i, uint64_t next,
			struct compared *c)
{
	uint64_t pc = fg_ehframe_entry(ef, i), start, end, last_end = 0;
	int range = fg_ehframe_fde_range(ef, i, &start, &end);

	c->fdes++;
	/* What the FDE covers starts where the table says, and ends with its last row (below). */
	if (range == 0)
		ASSERT_U64_EQ(start, pc);
	while (pc < next) {
		struct fg_unwind_row ours, theirs;
		uint64_t s1, e1, s2, e2;
		int r1 = fg_ehframe_row(ef, pc, &ours, &s1, &e1),
		    r2 = fg_cfi_libdw_row(cfi, pc, &theirs, &s2, &e2);

		if (r1 == -EOPNOTSUPP) {
			c->left_to_libdw++;
			return;
		}
		if (r1 == -ENOENT && r2 == -ENOENT)
			break;
		if (r1 != 0 || r2 != 0 || s1 != s2 || e1 != e2 || !same_row(&ours, &theirs)) {
			if (c->mismatched++ < 5) {
				printf("  mismatch at %#" PRIx64 ": ours %d, libdw %d\n", pc, r1,
				       r2);
				if (r1 == 0)
					print_row("ours ", &ours, s1, e1);
				if (r2 == 0)
					print_row("libdw", &theirs, s2, e2);
			}
			return;
		}
		/*
		 * Mid-row, the same row and range from ours; libdw's range may
		 * start later (fgd-cfi.c), never earlier, and its row must hold
		 * where it says the range starts.
		 */
		if (e1 - s1 > 1) {
			uint64_t mid = s1 + (e1 - s1) / 2, s3, e3, s4, e4;
			struct fg_unwind_row at_mid, at_start;

			ASSERT_OK(fg_ehframe_row(ef, mid, &at_mid, &s3, &e3));
			ASSERT_TRUE(s3 == s1 && e3 == e1 && same_row(&at_mid, &ours));
			ASSERT_OK(fg_cfi_libdw_row(cfi, mid, &at_mid, &s3, &e3));
			ASSERT_TRUE(s3 >= s1 && s3 <= mid && e3 == e1);
			ASSERT_OK(fg_cfi_libdw_row(cfi, s3, &at_start, &s4, &e4));
			ASSERT_TRUE(same_row(&at_start, &at_mid));
		}
		c->rows++;
		last_end = e1;
		pc = e1;
	}
	/* An empty FDE (hand-written code may have one) has no row. */
	ASSERT_OK(range);
	ASSERT_U64_EQ(end, last_end ? last_end : start);
}

/* Compares the two readers over path's FDEs: false if it has no .eh_frame_hdr to read. */
static bool compare_binary(const char *path, struct compared *c)
{
	uint64_t hdr_addr = 0, frame_addr = 0;
	struct fg_ehframe ef;
	const void *hdr, *frame;
	size_t hdr_size = 0, frame_size = 0;
	Dwarf_CFI *cfi;
	size_t step;
	Elf *elf;
	int fd;

	*c = (struct compared){};
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	ASSERT_TRUE(elf);
	hdr = fg_elf_section(elf, ".eh_frame_hdr", &hdr_size, &hdr_addr);
	frame = fg_elf_section(elf, ".eh_frame", &frame_size, &frame_addr);
	cfi = dwarf_getcfi_elf(elf);
	if (!hdr || !frame || !cfi) {
		elf_end(elf);
		close(fd);
		return false;
	}
	ASSERT_OK(fg_ehframe_init(&ef, hdr, hdr_size, hdr_addr, frame, frame_size, frame_addr));
	step = MAX(ef.fde_count / MAX_FDES_COMPARED, 1);
	for (size_t i = 0; i < ef.fde_count; i += step)
		compare_fde(&ef, cfi, i,
			    i + 1 < ef.fde_count ? fg_ehframe_entry(&ef, i + 1) : UINT64_MAX, c);
	printf("  %s: %zu of %zu FDEs, %zu rows the same, %zu FDEs left to libdw, %zu "
	       "mismatched\n",
	       path, c->fdes, ef.fde_count, c->rows, c->left_to_libdw, c->mismatched);
	dwarf_cfi_end(cfi);
	elf_end(elf);
	close(fd);
	return true;
}

TEST(every_row_of_real_binaries_is_libdws_row)
{
	static const char *const paths[] = {
		"/proc/self/exe",
		"/lib/x86_64-linux-gnu/libc.so.6",
		"/lib/x86_64-linux-gnu/libstdc++.so.6",
		"/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus",
		"/usr/bin/node",
		"/usr/bin/python3",
	};
	size_t binaries = 0, rows = 0;
	struct compared c;
	glob_t g;

	for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
		if (!compare_binary(paths[i], &c))
			continue;
		ASSERT_EQ(c.mismatched, 0);
		/* Expressions are rare: PLT entries, signal trampolines. */
		ASSERT_TRUE(c.left_to_libdw * 20 <= c.fdes);
		binaries++;
		rows += c.rows;
	}
	/* A Python with full debug info, where one is installed (pyenv's, on the test machines). */
	if (glob("/root/.pyenv/versions/*/lib/libpython3*.so.1.0", 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			if (compare_binary(g.gl_pathv[i], &c)) {
				ASSERT_EQ(c.mismatched, 0);
				rows += c.rows;
			}
		globfree(&g);
	}
	/* This test's own binary and libc are on every machine. */
	ASSERT_TRUE(binaries >= 2);
	ASSERT_TRUE(rows > 1000);
}
