/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The DWARF of one binary (its own .debug_info, or its separate debug
 * file's), read with libdw. fgd uses it for inlined functions: for a code
 * address, the functions the compiler inlined there, as `addr2line -i` and
 * `perf report --inline` show them. A per-binary handle, so other users of
 * DWARF (CFI for unwinding) can share it through fg_dwarf__handle().
 *
 * Reading. The file is read whole into memory with pread (ELF_C_READ, then
 * ELF_C_FDREAD), never mapped: a file a user can truncate under a mapping
 * would raise SIGBUS in the daemon, and no fd is kept per binary. libdw
 * would hold the debug sections in memory anyway, which are most of a
 * debug file. Files larger than FG_DWARF_MAX_FILE are refused; the caller
 * bounds the total (fg_dwarf__bytes()). libdw checks the bounds of what it
 * decodes (it is fuzzed upstream); a damaged DWARF costs inline frames,
 * never the names from the symbol table.
 *
 * No logging, no global state.
 */

#include <elfutils/libdw.h>
#include <stddef.h>
#include <stdint.h>

#define FG_DWARF_MAX_FILE (UINT64_C(512) << 20)

struct fg_dwarf;

/*
 * Reads the DWARF of the ELF file fd (borrowed; not kept). -ENODATA when
 * the file has no DWARF, -EFBIG when it is larger than FG_DWARF_MAX_FILE,
 * -EINVAL when it is not a regular ELF file. Caller frees *ret with
 * fg_dwarf__free().
 */
int fg_dwarf__new(int fd, struct fg_dwarf **ret);
struct fg_dwarf *fg_dwarf__free(struct fg_dwarf *d);
/* The memory it holds: the file's size. */
uint64_t fg_dwarf__bytes(const struct fg_dwarf *d);

/* Where fg_dwarf__inlines() puts its answer. */
struct fg_dwarf_names {
	const char **names; /* the caller's array of max entries */
	size_t max;
	char *buf;          /* the caller's; names built here (qualified ones) */
	size_t size, used;  /* used grows by what was built */
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
 */
size_t fg_dwarf__inlines(struct fg_dwarf *d, uint64_t vaddr, struct fg_dwarf_names *out);

/* The libdw handle, for other DWARF users; borrowed until d is freed. */
Dwarf *fg_dwarf__handle(struct fg_dwarf *d);
