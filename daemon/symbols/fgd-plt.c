/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "symbols/fgd-plt.h"

/*
 * PLT entries named per object. Programs and libraries import a few
 * thousand functions, the biggest tens of thousands; the cap bounds what a
 * crafted PLT section costs to walk and sort.
 */
#define MAX_PLT_ENTRIES (1u << 20)

static const char *const plt_section_name[FG_PLT_N_SECTIONS] = { ".plt", ".plt.sec", ".plt.got",
								 ".iplt" };

/* One PLT entry while the relocation of the GOT slot it jumps through is looked for. */
struct fg_plt_entry {
	uint64_t addr, slot;
	uint32_t size;
	uint32_t name; /* offset into the builder's arena, valid once name_len > 0 */
	uint32_t name_len;
	uint8_t section; /* FG_PLT, FG_PLT_SEC, ... */
};

int fg_plt_section_kind(const char *name)
{
	for (size_t k = 0; k < FG_PLT_N_SECTIONS; k++)
		if (strcmp(name, plt_section_name[k]) == 0)
			return (int)k;
	return -1;
}

void fg_plt_init(struct fg_plt *p, struct fg_symtab_builder *b, bool class32)
{
	*p = (struct fg_plt){ .b = b, .class32 = class32, .arena_len = b->arena_len };
}

void fg_plt_done(struct fg_plt *p)
{
	free(p->e);
	p->e = NULL;
	p->n = p->cap = 0;
}

/*
 * The GOT slot the x86-64 PLT entry at addr jumps through: "jmp
 * *disp32(%rip)", after an endbr64 and a bnd prefix when present, as
 * binutils, lld and perf lay them out. False for anything else, such as
 * PLT0 and the lazy-binding stubs of an IBT .plt (which push and jump).
 */
static bool x86_64_plt_slot(const uint8_t *p, size_t len, uint64_t addr, uint64_t *ret_slot)
{
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	size_t n = 0;
	uint32_t disp;

	if (len >= sizeof(endbr64) && memcmp(p, endbr64, sizeof(endbr64)) == 0)
		n = sizeof(endbr64);
	if (n < len && p[n] == 0xf2)
		n++;
	if (len < n + 6 || p[n] != 0xff || p[n + 1] != 0x25)
		return false;
	/* Code is little-endian whatever the ELF header claims. */
	disp = (uint32_t)p[n + 2] | (uint32_t)p[n + 3] << 8 | (uint32_t)p[n + 4] << 16 |
	       (uint32_t)p[n + 5] << 24;
	/* From the end of the instruction, wrapping as the CPU does. */
	*ret_slot = addr + n + 6 + (uint64_t)(int64_t)(int32_t)disp;
	return true;
}

static int plt_slot_cmp(const void *a, const void *b)
{
	const struct fg_plt_entry *x = a, *y = b;

	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int fg_plt_add_section(struct fg_plt *p, enum fg_plt_section kind, const uint8_t *data,
		       uint64_t size, uint64_t addr, uint64_t sh_entsize, uint64_t addralign)
{
	/* As perf reads them: entries of sh_entsize bytes, or else as the alignment says. */
	uint64_t entsize = sh_entsize == 8 || sh_entsize == 16 ? sh_entsize :
			   addralign == 8                      ? 8 :
								 16;
	int r;

	for (uint64_t off = 0; size >= entsize && off <= size - entsize; off += entsize) {
		uint64_t slot;

		if (!x86_64_plt_slot(data + off, entsize, addr + off, &slot))
			continue;
		if (p->n == MAX_PLT_ENTRIES)
			return -E2BIG;
		r = FG_GROW(p->e, p->cap, p->n + 1);
		if (r < 0)
			return r;
		p->e[p->n++] = (struct fg_plt_entry){
			.addr = addr + off,
			.slot = p->class32 ? (uint32_t)slot : slot,
			.size = (uint32_t)entsize,
			.section = (uint8_t)kind,
		};
	}
	return 0;
}

void fg_plt_sort(struct fg_plt *p)
{
	if (p->n > 1)
		qsort(p->e, p->n, sizeof(*p->e), plt_slot_cmp);
	p->unnamed = p->n;
}

size_t fg_plt_unnamed(const struct fg_plt *p)
{
	return p->unnamed;
}

int64_t fg_plt_find_slot(const struct fg_plt *p, uint64_t type, uint64_t r_offset)
{
	size_t lo = 0, hi = p->n;

	if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT && type != R_X86_64_IRELATIVE)
		return -1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->e[mid].slot < r_offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == p->n || p->e[lo].slot != r_offset)
		return -1;
	return (int64_t)lo;
}

const char *fg_plt_ifunc(struct fg_plt *p, uint64_t addr)
{
	/*
	 * Sorted once, and only for objects that call their own IFUNCs
	 * (libc); the entries named after stay behind.
	 */
	if (!p->sorted) {
		fg_symtab_builder_sort(p->b);
		p->n_sorted = p->b->n_syms;
		p->sorted = true;
	}
	return fg_symtab_builder_ifunc_at(p->b, p->n_sorted, addr);
}

/*
 * Names the entries e[0, n) that jump through the slot of e[0], and are
 * still unnamed, "<name>@plt". Returns how many, or -E2BIG or -ENOMEM.
 */
static int name_slot(struct fg_symtab_builder *l, struct fg_plt_entry *e, size_t n,
		     const char *name, size_t len)
{
	const char *suffix = "@plt";
	int named = 0;

	for (size_t j = 0; j < n && e[j].slot == e[0].slot; j++) {
		int64_t off;

		if (e[j].name_len > 0)
			continue;
		off = fg_symtab_builder_add_plt(l, e[j].addr, e[j].addr + e[j].size, name, len,
						suffix);
		if (off < 0)
			return (int)off;
		e[j].name = (uint32_t)off;
		e[j].name_len = l->syms[l->n_syms - 1].name_len;
		named++;
		/* The next one takes the name just made, "@plt" and all, from where it is now. */
		name = l->arena + off;
		len = e[j].name_len;
		suffix = NULL;
	}
	return named;
}

int fg_plt_name(struct fg_plt *p, size_t idx, const char *name)
{
	int r;

	/* A version spelled into the name is not part of it, as for the symbol tables. */
	if (!name || name[0] == '@' || name[0] == '\0')
		return 0;
	r = name_slot(p->b, p->e + idx, p->n - idx, name, strcspn(name, "@"));
	if (r < 0)
		return r;
	p->unnamed -= MIN((size_t)r, p->unnamed);
	return 0;
}

int fg_plt_add_head(struct fg_plt *p, uint64_t addr, uint64_t size)
{
	uint64_t first = addr + size;
	int64_t r;

	for (size_t i = 0; i < p->n; i++)
		if (p->e[i].section == FG_PLT && p->e[i].name_len > 0)
			first = MIN(first, p->e[i].addr);
	if (first <= addr)
		return 0;
	r = fg_symtab_builder_add_plt(p->b, addr, first, ".plt", strlen(".plt"), NULL);
	return r < 0 ? (int)r : 0;
}

int fg_plt_finish(struct fg_plt *p, int r)
{
	if (r < 0) {
		fg_symtab_builder_drop_plt(p->b, p->arena_len);
		return r;
	}
	return (int)p->b->n_plt;
}
