/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dwarf.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "base/macro.h"
#include "unwind/ehframe.h"

/* DW_CFA_remember_state nesting a row may use: compilers write one or two. */
#define MAX_STATES 8

/* The only table encoding read: what GNU ld, gold, lld and mold all write. */
#define TABLE_ENCODING (DW_EH_PE_datarel | DW_EH_PE_sdata4)

#define CFA_UNSET UINT8_MAX

/*
 * Bytes [p, end) of a section whose first byte, base, is at address
 * base_addr: pc-relative pointers need the address of the field. Every
 * read checks end. Sections are little-endian, as x86-64 is.
 */
struct cursor {
	const uint8_t *p, *end;
	const uint8_t *base;
	uint64_t base_addr;
};

static int read_bytes(struct cursor *c, void *ret, size_t n)
{
	if ((size_t)(c->end - c->p) < n)
		return -EINVAL;
	memcpy(ret, c->p, n);
	c->p += n;
	return 0;
}

static int read_u8(struct cursor *c, uint8_t *ret)
{
	return read_bytes(c, ret, sizeof(*ret));
}

/* An n-byte (2, 4 or 8) integer, sign-extended if is_signed. */
static int read_fixed(struct cursor *c, size_t n, bool is_signed, uint64_t *ret)
{
	uint64_t v = 0;

	if (read_bytes(c, &v, n) < 0)
		return -EINVAL;
	if (is_signed && n < 8 && (v >> (8 * n - 1)) & 1)
		v |= ~0ULL << (8 * n);
	*ret = v;
	return 0;
}

static int read_uleb(struct cursor *c, uint64_t *ret)
{
	uint64_t v = 0;

	for (unsigned shift = 0; c->p < c->end; shift += 7) {
		uint8_t b = *c->p++;

		/* Bits past the 64th are a malformed (or hostile) number. */
		if (shift >= 64 || (shift == 63 && (b & 0x7e)))
			return -EINVAL;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*ret = v;
			return 0;
		}
	}
	return -EINVAL;
}

static int read_sleb(struct cursor *c, int64_t *ret)
{
	uint64_t v = 0;

	for (unsigned shift = 0; c->p < c->end; shift += 7) {
		uint8_t b = *c->p++;

		if (shift >= 64)
			return -EINVAL;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			if (shift + 7 < 64 && (b & 0x40))
				v |= ~0ULL << (shift + 7);
			*ret = (int64_t)v;
			return 0;
		}
	}
	return -EINVAL;
}

/* A block of bytes after its ULEB128 length: its bytes in *ret, if ret, and c past it. */
static int read_block(struct cursor *c, struct cursor *ret)
{
	uint64_t len;

	if (read_uleb(c, &len) < 0 || len > (uint64_t)(c->end - c->p))
		return -EINVAL;
	if (ret)
		*ret = (struct cursor){ c->p, c->p + len, c->base, c->base_addr };
	c->p += len;
	return 0;
}

/*
 * A pointer encoded as enc says (DW_EH_PE_*). With skip, only its size
 * matters (a personality routine's address): any application goes then.
 */
static int read_encoded(struct cursor *c, uint8_t enc, bool skip, uint64_t *ret)
{
	uint64_t field = c->base_addr + (uint64_t)(c->p - c->base), v;
	int64_t s;
	int r;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		r = read_fixed(c, 8, false, &v);
		break;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		r = read_fixed(c, 4, (enc & 0x0f) == DW_EH_PE_sdata4, &v);
		break;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		r = read_fixed(c, 2, (enc & 0x0f) == DW_EH_PE_sdata2, &v);
		break;
	case DW_EH_PE_uleb128:
		r = read_uleb(c, &v);
		break;
	case DW_EH_PE_sleb128:
		r = read_sleb(c, &s);
		v = (uint64_t)s;
		break;
	default:
		return -EINVAL;
	}
	if (r < 0 || skip)
		return r;
	if (enc & DW_EH_PE_indirect)
		return -EOPNOTSUPP;
	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
		break;
	case DW_EH_PE_pcrel:
		v += field;
		break;
	default:
		return -EOPNOTSUPP;
	}
	*ret = v;
	return 0;
}

int fg_ehframe_init(struct fg_ehframe *ret, const uint8_t *hdr, size_t hdr_size, uint64_t hdr_addr,
		    const uint8_t *frame, size_t frame_size, uint64_t frame_addr)
{
	struct cursor c;
	uint8_t version, ptr_enc, count_enc, table_enc;
	uint64_t eh_frame, count;
	int r;

	*ret = (struct fg_ehframe){ .hdr_addr = hdr_addr,
				    .frame = frame,
				    .frame_size = frame_size,
				    .frame_addr = frame_addr };
	/* An empty section may come without bytes at all (libelf's d_buf for size 0). */
	if (!hdr || !frame)
		return -EINVAL;
	c = (struct cursor){ hdr, hdr + hdr_size, hdr, hdr_addr };
	if (read_u8(&c, &version) < 0 || read_u8(&c, &ptr_enc) < 0 || read_u8(&c, &count_enc) < 0 ||
	    read_u8(&c, &table_enc) < 0 || version != 1)
		return -EINVAL;
	if (ptr_enc == DW_EH_PE_omit || count_enc == DW_EH_PE_omit || table_enc != TABLE_ENCODING)
		return -EOPNOTSUPP;
	r = read_encoded(&c, ptr_enc, false, &eh_frame);
	if (r < 0)
		return r;
	/* The table's FDE addresses are only as good as the header's idea of .eh_frame. */
	if (eh_frame != frame_addr)
		return -EINVAL;
	r = read_encoded(&c, count_enc, false, &count);
	if (r < 0)
		return r;
	if (count > (size_t)(c.end - c.p) / 8)
		return -EINVAL;
	ret->table = c.p;
	ret->fde_count = count;
	return 0;
}

/* Field k of entry i of the table (0: the first address its FDE covers, 1: the FDE's address). */
static uint64_t table_field(const struct fg_ehframe *ef, size_t i, size_t k)
{
	int32_t v;

	memcpy(&v, ef->table + i * 8 + k * 4, sizeof(v));
	return ef->hdr_addr + (uint64_t)(int64_t)v;
}

uint64_t fg_ehframe_entry(const struct fg_ehframe *ef, size_t i)
{
	return table_field(ef, i, 0);
}

/* The index of the last entry starting at or before pc: 0, -ENOENT or -EOPNOTSUPP. */
static int find_entry(const struct fg_ehframe *ef, uint64_t pc, size_t *ret)
{
	size_t lo = 0, hi = ef->fde_count;

	if (!ef->table)
		return -EOPNOTSUPP;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (fg_ehframe_entry(ef, mid) <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -ENOENT;
	*ret = lo - 1;
	return 0;
}

int fg_ehframe_fde_start(const struct fg_ehframe *ef, uint64_t pc, uint64_t *ret)
{
	size_t i;
	int r = find_entry(ef, pc, &i);

	if (r == 0)
		*ret = fg_ehframe_entry(ef, i);
	return r;
}

/*
 * One .eh_frame entry (a CIE or an FDE) at offset off: its contents past
 * the length in *ret, ending where the entry ends; id_off is the section
 * offset of its id field (a CIE's 0, an FDE's way back to its CIE).
 */
static int entry_at(const struct fg_ehframe *ef, uint64_t off, struct cursor *ret, uint64_t *id_off,
		    uint32_t *id)
{
	struct cursor c = { ef->frame + off, ef->frame + ef->frame_size, ef->frame,
			    ef->frame_addr };
	uint32_t len32;
	uint64_t len;

	if (off >= ef->frame_size || read_bytes(&c, &len32, 4) < 0)
		return -EINVAL;
	len = len32;
	/* 64-bit DWARF's length; no toolchain writes it into .eh_frame, and its id is wider. */
	if (len32 == UINT32_MAX)
		return -EOPNOTSUPP;
	/* 0 is the terminator: no entry. */
	if (len < 4 || len > (uint64_t)(c.end - c.p))
		return -EINVAL;
	c.end = c.p + len;
	*id_off = (uint64_t)(c.p - ef->frame);
	(void)read_bytes(&c, id, 4);
	*ret = c;
	return 0;
}

/* What a CIE says that its FDEs use. */
struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint8_t fde_enc;
	bool augmented; /* 'z': FDEs have an augmentation data length */
	bool signal;    /* 'S': a signal handler's frame */
	struct cursor insns;
};

/*
 * The augmentation string [aug, aug_end) and, at c, its data: what the
 * FDEs' pointers are encoded as, and whether this is a signal frame.
 */
static int read_augmentation(const uint8_t *aug, const uint8_t *aug_end, struct cursor *c,
			     struct cie *ret)
{
	struct cursor data;
	uint64_t ignored;
	uint8_t enc;
	int r;

	if (aug == aug_end)
		return 0;
	/* Without 'z' first, what follows the string is not known to be skippable. */
	if (aug[0] != 'z')
		return -EOPNOTSUPP;
	ret->augmented = true;
	if (read_block(c, &data) < 0)
		return -EINVAL;
	for (const uint8_t *a = aug + 1; a < aug_end; a++) {
		switch (*a) {
		case 'R':
			r = read_u8(&data, &ret->fde_enc);
			break;
		case 'P': /* a personality routine: only its size matters */
			r = read_u8(&data, &enc);
			if (r == 0)
				r = read_encoded(&data, enc, true, &ignored);
			break;
		case 'L': /* the LSDA's encoding, for the FDEs' augmentation data */
			r = read_u8(&data, &enc);
			break;
		case 'S':
			ret->signal = true;
			r = 0;
			break;
		default:
			return -EOPNOTSUPP;
		}
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_cie(const struct fg_ehframe *ef, uint64_t off, struct cie *ret)
{
	const uint8_t *aug, *aug_end;
	uint64_t id_off, ra;
	struct cursor c;
	uint8_t version;
	uint32_t id;
	int r;

	r = entry_at(ef, off, &c, &id_off, &id);
	if (r < 0)
		return r;
	if (id != 0 || read_u8(&c, &version) < 0)
		return -EINVAL;
	if (version != 1 && version != 3)
		return -EOPNOTSUPP;
	aug = c.p;
	aug_end = memchr(aug, '\0', (size_t)(c.end - c.p));
	if (!aug_end)
		return -EINVAL;
	c.p = aug_end + 1;
	*ret = (struct cie){ .fde_enc = DW_EH_PE_absptr };
	if (read_uleb(&c, &ret->code_align) < 0 || read_sleb(&c, &ret->data_align) < 0)
		return -EINVAL;
	if (version == 1) {
		uint8_t b = 0;

		r = read_u8(&c, &b);
		ra = b;
	} else {
		r = read_uleb(&c, &ra);
	}
	if (r < 0)
		return r;
	if (ra != FG_REG_RA)
		return -EOPNOTSUPP;
	r = read_augmentation(aug, aug_end, &c, ret);
	if (r < 0)
		return r;
	ret->insns = c;
	return 0;
}

/* The rules in force at one address; CFA_UNSET until the CIE defines the CFA. */
struct state {
	uint8_t cfa_reg;
	int32_t cfa_offset;
	struct fg_unwind_rule regs[FG_UNWIND_NREGS];
};

/* The psABI's: callee-saved registers keep their values, the stack pointer is the CFA. */
static void abi_state(struct state *s)
{
	static const uint8_t same[] = { FG_REG_RBX, FG_REG_RBP, 12, 13, 14, 15, FG_REG_RA };

	*s = (struct state){ .cfa_reg = CFA_UNSET };
	for (size_t i = 0; i < sizeof(same); i++)
		s->regs[same[i]].kind = FG_RULE_SAME;
	s->regs[FG_REG_RSP].kind = FG_RULE_VAL_OFFSET;
}

/* The whole instruction stream of a CIE or an FDE, run against one pc. */
struct program {
	const struct cie *cie;
	/* The CIE's rules, for DW_CFA_restore; NULL while running the CIE's own. */
	const struct state *initial;
	uint64_t pc;
	uint64_t loc; /* the address the rules in s hold from */
	uint64_t end; /* where the next row starts: set when a row past pc was met */
	bool stopped; /* the rules for pc are in s */
	struct state s;
	struct state saved[MAX_STATES];
	size_t n_saved;
};

/* offset * the data alignment factor, as an int32: -EOPNOTSUPP past that. */
static int scaled(const struct program *p, int64_t offset, bool is_unsigned, int32_t *ret)
{
	int64_t v;

	if (is_unsigned && (uint64_t)offset > INT64_MAX)
		return -EOPNOTSUPP;
	if (__builtin_mul_overflow(offset, p->cie->data_align, &v) || v < INT32_MIN ||
	    v > INT32_MAX)
		return -EOPNOTSUPP;
	*ret = (int32_t)v;
	return 0;
}

static int advance(struct program *p, uint64_t to)
{
	if (to < p->loc)
		return -EINVAL;
	if (to > p->pc) {
		p->end = to;
		p->stopped = true;
		return 0;
	}
	p->loc = to;
	return 0;
}

static int advance_by(struct program *p, uint64_t delta)
{
	uint64_t by, to;

	if (__builtin_mul_overflow(delta, p->cie->code_align, &by) ||
	    __builtin_add_overflow(p->loc, by, &to))
		return -EINVAL;
	return advance(p, to);
}

/* Sets register reg's rule; registers the row does not keep are read past. */
static void set_rule(struct program *p, uint64_t reg, uint8_t kind, int32_t offset)
{
	if (reg < FG_UNWIND_NREGS)
		p->s.regs[reg] = (struct fg_unwind_rule){ .kind = kind, .offset = offset };
}

static int restore(struct program *p, uint64_t reg)
{
	if (!p->initial)
		return -EINVAL;
	if (reg < FG_UNWIND_NREGS)
		p->s.regs[reg] = p->initial->regs[reg];
	return 0;
}

/* DW_CFA_offset and its kin: a register saved at (kind OFFSET) or being (VAL_OFFSET) CFA + n. */
static int offset_rule(struct program *p, struct cursor *c, uint64_t reg, uint8_t kind,
		       bool is_signed)
{
	uint64_t u;
	int64_t n;
	int32_t off;
	int r;

	r = is_signed ? read_sleb(c, &n) : read_uleb(c, &u);
	if (r < 0)
		return r;
	if (!is_signed)
		n = (int64_t)u;
	r = scaled(p, n, !is_signed, &off);
	if (r < 0)
		return r;
	set_rule(p, reg, kind, off);
	return 0;
}

static int def_cfa(struct program *p, uint64_t reg)
{
	if (reg >= FG_UNWIND_NREGS)
		return -EOPNOTSUPP;
	p->s.cfa_reg = (uint8_t)reg;
	return 0;
}

static int def_cfa_offset(struct program *p, int64_t off)
{
	if (off < INT32_MIN || off > INT32_MAX)
		return -EOPNOTSUPP;
	p->s.cfa_offset = (int32_t)off;
	return 0;
}

/* One extended (low six bits zero) instruction. */
static int step_extended(struct program *p, struct cursor *c, uint8_t op)
{
	uint64_t reg, u, u2;
	int64_t n;
	int32_t off;
	uint8_t u8;
	int r;

	switch (op) {
	case DW_CFA_nop:
		return 0;
	case DW_CFA_set_loc:
		r = read_encoded(c, p->cie->fde_enc, false, &u);
		return r < 0 ? r : advance(p, u);
	case DW_CFA_advance_loc1:
		return read_u8(c, &u8) < 0 ? -EINVAL : advance_by(p, u8);
	case DW_CFA_advance_loc2:
		return read_fixed(c, 2, false, &u) < 0 ? -EINVAL : advance_by(p, u);
	case DW_CFA_advance_loc4:
		return read_fixed(c, 4, false, &u) < 0 ? -EINVAL : advance_by(p, u);
	case DW_CFA_offset_extended:
	case DW_CFA_offset_extended_sf:
	case DW_CFA_val_offset:
	case DW_CFA_val_offset_sf:
		if (read_uleb(c, &reg) < 0)
			return -EINVAL;
		return offset_rule(p, c, reg,
				   op == DW_CFA_val_offset || op == DW_CFA_val_offset_sf ?
					   FG_RULE_VAL_OFFSET :
					   FG_RULE_OFFSET,
				   op == DW_CFA_offset_extended_sf || op == DW_CFA_val_offset_sf);
	case DW_CFA_GNU_negative_offset_extended:
		if (read_uleb(c, &reg) < 0 || read_uleb(c, &u) < 0)
			return -EINVAL;
		if (u > INT64_MAX)
			return -EOPNOTSUPP;
		r = scaled(p, -(int64_t)u, false, &off);
		if (r < 0)
			return r;
		set_rule(p, reg, FG_RULE_OFFSET, off);
		return 0;
	case DW_CFA_restore_extended:
		return read_uleb(c, &reg) < 0 ? -EINVAL : restore(p, reg);
	case DW_CFA_undefined:
	case DW_CFA_same_value:
		if (read_uleb(c, &reg) < 0)
			return -EINVAL;
		set_rule(p, reg, op == DW_CFA_undefined ? FG_RULE_UNDEFINED : FG_RULE_SAME, 0);
		return 0;
	case DW_CFA_register:
		if (read_uleb(c, &reg) < 0 || read_uleb(c, &u2) < 0)
			return -EINVAL;
		if (reg < FG_UNWIND_NREGS) {
			if (u2 >= FG_UNWIND_NREGS)
				return -EOPNOTSUPP;
			p->s.regs[reg] = (struct fg_unwind_rule){ .kind = FG_RULE_REGISTER,
								  .reg = (uint8_t)u2 };
		}
		return 0;
	case DW_CFA_remember_state:
		if (p->n_saved == MAX_STATES)
			return -EOPNOTSUPP;
		p->saved[p->n_saved++] = p->s;
		return 0;
	case DW_CFA_restore_state:
		if (p->n_saved == 0)
			return -EINVAL;
		p->s = p->saved[--p->n_saved];
		return 0;
	case DW_CFA_def_cfa:
		if (read_uleb(c, &reg) < 0 || read_uleb(c, &u) < 0)
			return -EINVAL;
		r = def_cfa(p, reg);
		return r < 0 ? r : def_cfa_offset(p, u > INT64_MAX ? INT64_MAX : (int64_t)u);
	case DW_CFA_def_cfa_sf:
		if (read_uleb(c, &reg) < 0 || read_sleb(c, &n) < 0)
			return -EINVAL;
		r = def_cfa(p, reg);
		if (r < 0)
			return r;
		r = scaled(p, n, false, &off);
		return r < 0 ? r : def_cfa_offset(p, off);
	case DW_CFA_def_cfa_register:
		if (read_uleb(c, &reg) < 0)
			return -EINVAL;
		if (p->s.cfa_reg == CFA_UNSET)
			return -EOPNOTSUPP;
		return def_cfa(p, reg);
	case DW_CFA_def_cfa_offset:
		if (read_uleb(c, &u) < 0)
			return -EINVAL;
		if (p->s.cfa_reg == CFA_UNSET)
			return -EOPNOTSUPP;
		return def_cfa_offset(p, u > INT64_MAX ? INT64_MAX : (int64_t)u);
	case DW_CFA_def_cfa_offset_sf:
		if (read_sleb(c, &n) < 0)
			return -EINVAL;
		if (p->s.cfa_reg == CFA_UNSET)
			return -EOPNOTSUPP;
		r = scaled(p, n, false, &off);
		return r < 0 ? r : def_cfa_offset(p, off);
	case DW_CFA_expression:
	case DW_CFA_val_expression:
		if (read_uleb(c, &reg) < 0 || read_block(c, NULL) < 0)
			return -EINVAL;
		/* An expression for a register the row does not keep is read past. */
		return reg < FG_UNWIND_NREGS ? -EOPNOTSUPP : 0;
	case DW_CFA_GNU_args_size:
		return read_uleb(c, &u);
	default:
		/* DW_CFA_def_cfa_expression, and what no x86-64 toolchain writes. */
		return -EOPNOTSUPP;
	}
}

/* Runs instructions until they end or a row past p->pc begins. */
static int run(struct program *p, struct cursor c)
{
	while (c.p < c.end && !p->stopped) {
		uint8_t op = *c.p++, low = op & 0x3f;
		int r;

		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
			r = advance_by(p, low);
			break;
		case DW_CFA_offset:
			r = offset_rule(p, &c, low, FG_RULE_OFFSET, false);
			break;
		case DW_CFA_restore:
			r = restore(p, low);
			break;
		default:
			r = step_extended(p, &c, op);
			break;
		}
		if (r < 0)
			return r;
	}
	return 0;
}

/* The row's kinds of rule, as struct fg_unwind_row has them. */
static void make_row(const struct program *p, struct fg_unwind_row *ret)
{
	*ret = (struct fg_unwind_row){
		.cfa = { .kind = FG_RULE_VAL_OFFSET,
			 .reg = p->s.cfa_reg,
			 .offset = p->s.cfa_offset },
		.signal_frame = p->cie->signal,
	};
	memcpy(ret->regs, p->s.regs, sizeof(ret->regs));
}

/*
 * The FDE of table entry i: its CIE in *cie, the addresses it covers
 * [*ret_begin, *ret_begin + *ret_range), and in *ret its instructions.
 */
static int fde_of(const struct fg_ehframe *ef, size_t i, struct cie *cie, uint64_t *ret_begin,
		  uint64_t *ret_range, struct cursor *ret)
{
	uint64_t fde = table_field(ef, i, 1), fde_off = fde - ef->frame_addr, id_off, begin, range;
	struct cursor c;
	uint32_t id;
	int r;

	if (fde < ef->frame_addr || fde_off >= ef->frame_size)
		return -EINVAL;
	r = entry_at(ef, fde_off, &c, &id_off, &id);
	if (r < 0)
		return r;
	/* An FDE's id is the distance back from itself to its CIE. */
	if (id == 0 || id > id_off)
		return -EINVAL;
	r = parse_cie(ef, id_off - id, cie);
	if (r < 0)
		return r;
	r = read_encoded(&c, cie->fde_enc, false, &begin);
	if (r < 0)
		return r;
	r = read_encoded(&c, cie->fde_enc & 0x0f, false, &range);
	if (r < 0)
		return r;
	/* The FDE's augmentation data (its LSDA): nothing a row needs. */
	if (cie->augmented && read_block(&c, NULL) < 0)
		return -EINVAL;
	if (range > UINT64_MAX - begin)
		return -EINVAL;
	*ret_begin = begin;
	*ret_range = range;
	*ret = c;
	return 0;
}

int fg_ehframe_fde_range(const struct fg_ehframe *ef, size_t i, uint64_t *ret_start,
			 uint64_t *ret_end)
{
	uint64_t begin, range;
	struct cursor insns;
	struct cie cie;
	int r;

	if (i >= ef->fde_count)
		return -ENOENT;
	r = fde_of(ef, i, &cie, &begin, &range, &insns);
	if (r < 0)
		return r;
	*ret_start = begin;
	*ret_end = begin + range;
	return 0;
}

int fg_ehframe_row(const struct fg_ehframe *ef, uint64_t pc, struct fg_unwind_row *ret,
		   uint64_t *ret_start, uint64_t *ret_end)
{
	uint64_t begin, range;
	struct state initial;
	struct program p;
	struct cursor c;
	struct cie cie;
	size_t i;
	int r;

	r = find_entry(ef, pc, &i);
	if (r < 0)
		return r;
	r = fde_of(ef, i, &cie, &begin, &range, &c);
	if (r < 0)
		return r;
	/* The table said this FDE starts at or before pc; the FDE says where it ends. */
	if (pc < begin || pc - begin >= range)
		return -ENOENT;

	p = (struct program){ .cie = &cie, .pc = pc, .loc = begin };
	abi_state(&p.s);
	r = run(&p, cie.insns);
	if (r < 0)
		return r;
	/* A CIE's own instructions hold from the FDE's start: none may end a row. */
	if (p.stopped || p.loc != begin || p.n_saved)
		return -EINVAL;
	initial = p.s;
	p.initial = &initial;
	p.end = begin + range;
	r = run(&p, c);
	if (r < 0)
		return r;
	if (p.s.cfa_reg == CFA_UNSET)
		return -EINVAL;
	make_row(&p, ret);
	*ret_start = p.loc;
	/* A row said to start past the FDE's end (malformed) still ends with it. */
	*ret_end = MIN(p.end, begin + range);
	return 0;
}
