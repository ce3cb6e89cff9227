/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The DWARF of one binary (its own .debug_info, or its separate debug
 * file's), read with libdw. fgd uses it for inlined functions: for a code
 * address, the functions the compiler inlined there, as `addr2line -i` and
 * `perf report --inline` show them. One per binary; the unwinder reads
 * CFI on its own (fgd-unwind.h), since .debug_frame is not read here.
 *
 * Reading. Only what inline frames need is read: .debug_info, _abbrev,
 * _str, _line_str, _str_offsets, _addr, _aranges, _ranges, _rnglists and
 * _types. The others (line tables, location lists, macros, .debug_frame:
 * most of a debug file after .debug_info) are hidden from libdw, which
 * would otherwise read and inflate every .debug_* section when it opens a
 * file (fg_elf_file_keep_sections()). Then, as fgd-elffile.h explains:
 *   - a file no unprivileged user can truncate is mapped: libdw reads its
 *     sections in place, the kernel's page cache holds them, and the
 *     pages a lookup touches are given back with fg_dwarf__drop_pages().
 *     Only compressed sections (SHF_COMPRESSED, as Debian's debug files
 *     have them) are inflated onto the heap;
 *   - any other file is read with pread, those sections only, onto the
 *     heap, and the fd is let go: truncating it later changes nothing.
 * What stays on the heap, the sections copied or inflated and what libdw
 * and the CU table build as lookups go (an estimate, see fg_dwarf__bytes()),
 * is bounded by the caller: fg_dwarf__new() refuses a file whose sections
 * would take more than it allows. libdw checks the bounds of what it
 * decodes (it is fuzzed upstream); a damaged DWARF costs inline frames,
 * never the names from the symbol table.
 *
 * Threads. A lookup runs on one thread at a time (the loader's); page
 * dropping may run on any.
 *
 * No logging, no global state.
 */

#include "base/macro.h"
#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The sections read with pread onto the heap: no more than this, whatever the budget says. */
#define FG_DWARF_MAX_READ (UINT64_C(512) << 20)
/* A mapped file costs address space, not memory: but not without end. */
#define FG_DWARF_MAX_MAPPED (UINT64_C(4) << 30)

struct fg_dwarf;

/*
 * Reads the DWARF of the ELF file fd (borrowed; not kept), mapped if map
 * is set (see fg_elf_may_map()). max_heap bounds what may be copied or
 * inflated onto the heap: -EFBIG when the sections would take more (or a
 * mapped file is larger than FG_DWARF_MAX_MAPPED). -ENODATA when the file
 * has no DWARF, -EINVAL when it is not a regular ELF file. Caller frees
 * *ret with fg_dwarf__free() (on the thread that built it, see
 * fg_loader__dispose()).
 */
int fg_dwarf__new(int fd, bool map, uint64_t max_heap, struct fg_dwarf **ret);
struct fg_dwarf *fg_dwarf__free(struct fg_dwarf *d);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_dwarf *, fg_dwarf__free);
/*
 * The heap it holds: sections copied or inflated, the CU table, the inline
 * indexes of the units looked into (see fg_dwarf__inlines()), and an
 * estimate of libdw's own tables (its abbreviations and units, which grow
 * as lookups reach new compilation units: the estimate counts them all,
 * which is about what libdw keeps once every unit has been looked into).
 * The CU table and each unit's index are built on the first lookup they
 * are needed for: then the figure grows by them. Any thread.
 */
uint64_t fg_dwarf__bytes(const struct fg_dwarf *d);
/* Bytes of debug sections read in place from the mapping (0 when read with pread). */
uint64_t fg_dwarf__mapped(const struct fg_dwarf *d);
/*
 * Gives the mapping's pages the lookups touched back to the page cache
 * (fg_elf_file_drop_pages()). Any thread, even while a lookup runs on
 * another (the pages fault in again).
 */
void fg_dwarf__drop_pages(const struct fg_dwarf *d);

/* Where fg_dwarf__inlines() puts its answer. */
struct fg_dwarf_names {
	const char **names; /* the caller's array of max entries */
	size_t max;
	char *buf;         /* the caller's; names built here (qualified ones) */
	size_t size, used; /* used grows by what was built */
};

/*
 * The functions inlined at ELF virtual address vaddr, outermost first: the
 * first was inlined into the function that contains vaddr (the one the
 * symbol table names, not included), each next one into the one before.
 * Each name is the linkage name where DWARF has one (so C++ and Rust come
 * mangled, as symbols do), else the plain name, qualified with its
 * namespaces and classes for C++ and Rust ("ns::Class::f"). Names point
 * into the DWARF (borrowed until d is freed) or into out->buf. Stores up
 * to out->max of them and returns how many: 0 when nothing is inlined there
 * or DWARF does not cover vaddr. A chain deeper than max keeps its
 * outermost frames.
 *
 * Cost. The first lookup into a compile unit walks its DIEs once and
 * builds the unit's inline index: its code cut into segments, each with
 * its innermost function or inlined instance, and the tree of what is
 * inlined into what (about 24 bytes a segment and 16 a node; figures in
 * docs/PERFORMANCE.md). Every lookup is then a binary search for the unit
 * (in .debug_aranges, as libdw keeps them), one for the segment, and a walk
 * up that tree, however big the unit; the file is read again only to name
 * the inlined functions found. The indexes of a binary are held with
 * it (fg_dwarf__bytes()), up to 256 MiB; past that, lookups into units not
 * indexed yet walk as fg_dwarf__inlines_walk() does. A unit whose DIEs are
 * damaged is indexed as far as they can be read; one whose index finds no
 * memory has no inline frames.
 */
size_t fg_dwarf__inlines(struct fg_dwarf *d, uint64_t vaddr, struct fg_dwarf_names *out);

/*
 * The same answer found without the index: libdw's dwarf_getscopes(),
 * which walks the unit's DIEs from its top for every address (what
 * addr2line -i does). Kept as the fallback, and as the reference the
 * index is tested and measured against.
 */
size_t fg_dwarf__inlines_walk(struct fg_dwarf *d, uint64_t vaddr, struct fg_dwarf_names *out);

/* The libdw handle, for other DWARF users (what is read, above); borrowed until d is freed. */
Dwarf *fg_dwarf__handle(struct fg_dwarf *d);
