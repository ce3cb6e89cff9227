/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * PLT naming. A call into another object first runs a stub in the
 * caller's PLT; code there is named as perf and objdump name it,
 * "memcmp@plt", over one entry (x86-64 only). Each entry of .plt,
 * .plt.sec (IBT), .plt.got and .iplt that jumps through a GOT slot
 * ("jmp *slot(%rip)") is named after the dynamic relocation of that slot:
 * its symbol (JUMP_SLOT, GLOB_DAT), or for an IRELATIVE one the IFUNC of
 * this object's own that it resolves. What of .plt comes before its first
 * named entry is ".plt": PLT0, or all of .plt when calls go through
 * .plt.sec and .plt holds only the lazy-binding stubs. Reading the jump of
 * every entry, rather than counting entries in relocation order as perf
 * does, leaves an entry of an unexpected layout unnamed, never misnamed.
 * A symbol of the object at the same address wins (fgd-symtab.h). The
 * names survive fg_elf_syms__adopt_debug_fd(), whose debug file's PLT is
 * empty, and a damaged PLT costs only them.
 *
 * The ELF file (fgd-elffile.c) finds the sections and walks the
 * relocations; this object reads the entries' code and makes the names,
 * as symbols of the table being built. The bytes it is handed are
 * untrusted: every entry is bounds-checked. No logging, no global state.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/fgd-symtab.h"

/*
 * The sections holding PLT entries: those perf and objdump read, and
 * .iplt, where lld puts a static executable's calls to IFUNCs.
 */
enum fg_plt_section {
	FG_PLT,
	FG_PLT_SEC,
	FG_PLT_GOT,
	FG_IPLT,
	FG_PLT_N_SECTIONS,
};

struct fg_plt_entry;

/* The naming of one object's PLT entries. Zeroed, then fg_plt_init(). */
struct fg_plt {
	struct fg_symtab_builder *b; /* borrowed: where the names go */
	bool class32;                /* an ELFCLASS32 object: slots are 32-bit */
	struct fg_plt_entry *e;      /* owned; sorted by slot once fg_plt_sort() ran */
	size_t n, cap;
	size_t unnamed;
	size_t n_sorted; /* how many of b's symbols are sorted, for IFUNCs */
	bool sorted;
	size_t arena_len; /* b's names before the PLT's: what fg_plt_finish() keeps on failure */
};

/* The section kind called name, or -1. */
int fg_plt_section_kind(const char *name);

void fg_plt_init(struct fg_plt *p, struct fg_symtab_builder *b, bool class32);
/* Frees what p holds (the names made stay in the builder). */
void fg_plt_done(struct fg_plt *p);

/*
 * Reads the entries of one PLT section, its contents data[0, size) (borrowed
 * for the call) at address addr, with its header's sh_entsize and
 * sh_addralign. 0, -E2BIG past a million entries, or -ENOMEM.
 */
int fg_plt_add_section(struct fg_plt *p, enum fg_plt_section kind, const uint8_t *data,
		       uint64_t size, uint64_t addr, uint64_t entsize, uint64_t addralign);
/* Orders the entries by GOT slot: after the last section, before the relocations. */
void fg_plt_sort(struct fg_plt *p);

/* How many entries have no name yet: relocations are worth reading while some remain. */
size_t fg_plt_unnamed(const struct fg_plt *p);

/*
 * The first entry that jumps through the GOT slot at r_offset, for a
 * relocation of type (R_X86_64_*) that names PLT entries; -1 for any other.
 */
int64_t fg_plt_find_slot(const struct fg_plt *p, uint64_t type, uint64_t r_offset);

/*
 * The IFUNC of the object's own at addr (an R_X86_64_IRELATIVE addend), or
 * NULL. Borrowed until the builder changes.
 */
const char *fg_plt_ifunc(struct fg_plt *p, uint64_t addr);

/*
 * Names "<name>@plt" the still unnamed entries from idx on that jump
 * through idx's slot; a version spelled into name ("f@VER") is dropped.
 * name may be NULL or empty: nothing is named. 0, -E2BIG or -ENOMEM.
 */
int fg_plt_name(struct fg_plt *p, size_t idx, const char *name);

/*
 * Adds ".plt" for what of .plt, at [addr, addr + size), comes before its
 * first named entry. 0, -E2BIG or -ENOMEM.
 */
int fg_plt_add_head(struct fg_plt *p, uint64_t addr, uint64_t size);

/*
 * Ends the naming with r, the first failure or 0: on failure every name
 * made is dropped from the builder and r returned, else how many there are.
 */
int fg_plt_finish(struct fg_plt *p, int r);
