/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Kernel symbol table from the text of /proc/kallsyms ("addr type name
 * [module]" lines): function symbols only, sorted by address, looked up by
 * binary search.
 *
 * What is kept. Symbols of type t, T, w and W are functions. Every other
 * symbol with an address (data, rodata, bss; not absolute 'a'/'A' or
 * undefined 'U') is kept only as a boundary: it names nothing but ends the
 * function below it. The core kernel's region-end markers "_etext",
 * "_einittext" and "__*text_end" are boundaries too, so the last function of
 * the core text ends at _etext. Address 0 is never a function.
 *
 * Aliases. Several functions at one address collapse to one entry, chosen
 * deterministically whatever the input order: T over t over W over w, then
 * the name with fewer leading underscores (the function rather than a linker
 * marker: srso_alias_untrain_ret over _stext), then the shorter name, then
 * byte order of name and module.
 *
 * Extents. /proc/kallsyms has no sizes, so a function covers [start, end)
 * where end is the first of: the next function or boundary above start, and
 * start + 1 MiB (FG_KALLSYMS_MAX_EXTENT). The cap keeps the last function of
 * a module, or of any region without a trailing boundary, from claiming
 * unrelated memory such as a JIT area. A lookup outside every extent, below
 * the first function, or in a restricted table returns -1: a missing name is
 * better than a wrong one.
 *
 * Malformed lines (bad or missing address, type or name, an unbracketed
 * fourth field, more fields, a NUL byte, overlong names) are skipped and
 * counted, as are lines past FG_KALLSYMS_MAX_SYMBOLS. A trailing CR is
 * accepted and empty lines are ignored.
 */

#include "base/macro.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FG_KALLSYMS_MAX_EXTENT (UINT32_C(1) << 20)
/* A kernel has about 150k functions and 4k modules add maybe as many again. */
#define FG_KALLSYMS_MAX_SYMBOLS (UINT32_C(1) << 23)

struct fg_kallsyms;

/*
 * Parses text[0..len). Stores a new table in *ret (caller frees with
 * fg_kallsyms__free()). Malformed lines are skipped and counted. Returns 0
 * or -ENOMEM.
 */
int fg_kallsyms__parse(const char *text, size_t len, struct fg_kallsyms **ret);
struct fg_kallsyms *fg_kallsyms__free(struct fg_kallsyms *k);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_kallsyms *, fg_kallsyms__free);

/* Index of the function containing addr, or -1 if none does. */
int64_t fg_kallsyms__lookup(const struct fg_kallsyms *k, uint64_t addr);

/* Borrowed until the table is freed. */
const char *fg_kallsyms__name(const struct fg_kallsyms *k, size_t idx);
/* Module name, or NULL for the core kernel. Borrowed until the table is freed. */
const char *fg_kallsyms__module(const struct fg_kallsyms *k, size_t idx);
uint64_t fg_kallsyms__addr(const struct fg_kallsyms *k, size_t idx);

size_t fg_kallsyms__count(const struct fg_kallsyms *k);
/* Lines that did not parse. */
size_t fg_kallsyms__n_malformed(const struct fg_kallsyms *k);
/* Heap bytes the table holds, for memory accounting. */
size_t fg_kallsyms__bytes(const struct fg_kallsyms *k);
/* True when every address was zero: kptr_restrict hides them from us. */
bool fg_kallsyms__restricted(const struct fg_kallsyms *k);

/*
 * The kernel's build-id from the ELF notes of /sys/kernel/notes
 * (notes[0..len): each a namesz, descsz and type, then its name and
 * descriptor, each padded to 4 bytes): the descriptor of the first GNU
 * NT_GNU_BUILD_ID note, borrowed from notes, in *ret (*ret_len bytes, 1 to
 * 64). 0, or -ENOENT when no note is one (a note running past the end
 * ends the search).
 */
int fg_kernel_build_id(const uint8_t *notes, size_t len, const uint8_t **ret, size_t *ret_len);
