/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Kernel symbol table from the text of /proc/kallsyms ("addr type name
 * [module]" lines): function symbols only, sorted by address, looked up by
 * binary search.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fg_kallsyms;

/*
 * Parses text[0..len). Stores a new table in *ret (caller frees with
 * fg_kallsyms__free()). Malformed lines are skipped and counted. Returns 0
 * or -ENOMEM.
 */
int fg_kallsyms__parse(const char *text, size_t len, struct fg_kallsyms **ret);
struct fg_kallsyms *fg_kallsyms__free(struct fg_kallsyms *k);

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
/* True when every address was zero: kptr_restrict hides them from us. */
bool fg_kallsyms__restricted(const struct fg_kallsyms *k);
