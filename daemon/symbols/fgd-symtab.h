/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The function symbols of one ELF object as a sorted table, and the
 * lookups on it: which function holds an address, what it is called, and
 * where the functions no symbol names start. The ELF file (fgd-elffile.h)
 * reads the symbols and hands them to a builder here; PLT naming
 * (fgd-plt.h) adds the names it synthesizes. Nothing here reads a file.
 *
 * Extents. A sized symbol covers exactly [value, value + size); a zero-size
 * one (hand-written assembly) extends to the next symbol's start. Neither
 * reaches past the end of its section (the builder's caller gives that
 * end). A lookup returns the symbol with the greatest start <= vaddr, and
 * -1 when vaddr is outside that symbol's extent (a gap, or the tail of a
 * symbol that another one nested inside), so a missing name is preferred
 * to a wrong one.
 *
 * Aliases. Several names at one address keep one entry, chosen whatever the
 * symbol table order: a sized symbol over a zero-size one, then global over
 * weak over local, then fewer leading underscores, then the shorter name,
 * then byte order. glibc's getpid therefore resolves to "__getpid" (global)
 * rather than "getpid" (weak); fg_symtab_find() still finds the dropped
 * names and returns the entry they alias. A synthesized entry (a PLT
 * entry's) loses to any symbol of the object's own at its address.
 *
 * The structs are declared here so that their owners can embed them; only
 * fgd-symtab.c looks inside a built table. No logging, no global state.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A large C++ binary has about a million functions. */
#define FG_ELF_MAX_SYMS (UINT32_C(1) << 23)

/* A function symbol while the table is built. */
struct fg_symtab_pending {
	uint64_t addr, end;
	uint32_t name; /* offset into the builder's arena */
	uint32_t name_len;
	bool sized;
	bool plt; /* synthesized for a PLT entry: a symbol of the object's own at its address wins */
	bool ifunc; /* STT_GNU_IFUNC: names the PLT entries that reach it through R_X86_64_IRELATIVE */
	uint8_t bind_rank; /* global 0, weak 1, local 2: lower wins among aliases */
	uint8_t underscores;
};

/* The symbols of one object (or of its MiniDebugInfo image) as they are read. */
struct fg_symtab_builder {
	struct fg_symtab_pending *syms; /* owned */
	size_t n_syms, cap_syms;
	size_t n_plt; /* of syms, how many are synthesized for PLT entries */
	char *arena;  /* owned: the names, NUL-terminated */
	size_t arena_len, arena_cap;
};

/* [start, end) of ELF addresses */
struct fg_symtab_span {
	uint64_t start, end;
};

/* A built table. Zeroed: empty. Released with fg_symtab_done(). */
struct fg_symtab {
	uint64_t *start; /* owned; sorted, distinct */
	uint64_t *end;   /* owned; parallel to start, exclusive */
	uint32_t *name;  /* owned; parallel to start, offsets into names */
	size_t n;
	/*
	 * owned; NULL: none. bucket[b] is how many symbols start below
	 * start[0] + (b << bucket_shift), so the symbols starting in bucket b
	 * are [bucket[b], bucket[b + 1]): see build_buckets().
	 */
	uint32_t *bucket;
	size_t n_buckets;
	unsigned bucket_shift;
	uint32_t *alias_name; /* owned; names dropped as aliases, for find() */
	uint32_t *alias_sym;  /* owned; the entry each one aliases */
	size_t n_aliases;
	char *names; /* owned arena of NUL-terminated names */
	size_t names_len;
	/* owned: the entries synthesized for PLT entries, which an adopted debug file's table keeps */
	uint32_t *plt;
	size_t n_plt;
	/* owned; sorted, disjoint: functions of .eh_frame whose start no symbol covers */
	struct fg_symtab_span *unnamed;
	size_t n_unnamed;
};

/* Frees what b holds; b may be zeroed or partly built. */
void fg_symtab_builder_done(struct fg_symtab_builder *b);

/* The global-weak-local rank of an ELF symbol binding (STB_*), for aliases. */
uint8_t fg_symtab_bind_rank(unsigned char bind);

/*
 * Adds the function symbol *p (its name and name_len fields are ignored)
 * named name[0, len), not NUL-terminated. 0, -E2BIG past FG_ELF_MAX_SYMS
 * or 4 GiB of names, or -ENOMEM.
 */
int fg_symtab_builder_add(struct fg_symtab_builder *b, const struct fg_symtab_pending *p,
			  const char *name, size_t len);

/*
 * Adds an entry synthesized for the PLT, [addr, end), named name[0, len)
 * with suffix after it when suffix is not NULL. name may point into b's
 * arena. Returns the new entry's name offset in the arena, or -E2BIG or
 * -ENOMEM.
 */
int64_t fg_symtab_builder_add_plt(struct fg_symtab_builder *b, uint64_t addr, uint64_t end,
				  const char *name, size_t len, const char *suffix);

/* Drops the synthesized entries, and the names past arena_len (what the arena held before them). */
void fg_symtab_builder_drop_plt(struct fg_symtab_builder *b, size_t arena_len);

/* Adds the synthesized entries of a built table (whose debug file's table b holds). */
int fg_symtab_builder_keep_plt(struct fg_symtab_builder *b, const struct fg_symtab *from);

/* Appends m's symbols to b's. 0, -E2BIG or -ENOMEM. */
int fg_symtab_builder_merge(struct fg_symtab_builder *b, const struct fg_symtab_builder *m);

/* Sorts b's symbols as the table will be (address, then alias preference). */
void fg_symtab_builder_sort(struct fg_symtab_builder *b);

/*
 * The name of an IFUNC among the first n_sorted symbols of b, sorted with
 * fg_symtab_builder_sort(), starting at addr: the alias a lookup there
 * returns, or NULL. Borrowed until b changes.
 */
const char *fg_symtab_builder_ifunc_at(const struct fg_symtab_builder *b, size_t n_sorted,
				       uint64_t addr);

/*
 * Sorts, collapses aliases and fixes the extents of zero-size symbols into
 * t (zeroed), taking b's arena. 0 or -ENOMEM; on failure the caller still
 * releases both.
 */
int fg_symtab_build(struct fg_symtab_builder *b, struct fg_symtab *t);

/* Frees what t holds and zeroes it. */
void fg_symtab_done(struct fg_symtab *t);

/*
 * Exchanges the named part of a and b (symbols, aliases, names, PLT
 * entries), leaving each its unnamed functions.
 */
void fg_symtab_swap_named(struct fg_symtab *a, struct fg_symtab *b);

/*
 * Adds the function [start, end) to t's unnamed ones unless a symbol covers
 * start; spans come in ascending order. *cap is the room in t->unnamed
 * (0 at first). 0 or -ENOMEM.
 */
int fg_symtab_add_unnamed(struct fg_symtab *t, uint64_t start, uint64_t end, size_t *cap);
/* Gives back the room fg_symtab_add_unnamed() grew past what it holds. */
void fg_symtab_shrink_unnamed(struct fg_symtab *t);
/* Keeps of the unnamed functions only those whose start no symbol covers now. */
void fg_symtab_keep_unnamed(struct fg_symtab *t);

/* Index of the function symbol containing vaddr, or -1. */
int64_t fg_symtab_lookup(const struct fg_symtab *t, uint64_t vaddr);
/* Borrowed until t is released. */
const char *fg_symtab_name(const struct fg_symtab *t, size_t idx);
/* Whether the entry is one synthesized for the PLT. */
bool fg_symtab_is_plt(const struct fg_symtab *t, size_t idx);
uint64_t fg_symtab_addr(const struct fg_symtab *t, size_t idx);
/* The extent lookups use: st_size, or for a zero-size symbol the distance to the next. */
uint64_t fg_symtab_size(const struct fg_symtab *t, size_t idx);
/* Index of the first symbol with this name, aliases included, or -1. */
int64_t fg_symtab_find(const struct fg_symtab *t, const char *name);
/* The unnamed function holding vaddr: its index and *ret_start, or -ENOENT. */
int64_t fg_symtab_unnamed_function(const struct fg_symtab *t, uint64_t vaddr, uint64_t *ret_start);
/* Heap bytes t holds. */
uint64_t fg_symtab_bytes(const struct fg_symtab *t);
