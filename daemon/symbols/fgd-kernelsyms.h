/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The running kernel's symbols, for the symbolizer (fgd-symbols.h names
 * kernel addresses through it): /proc/kallsyms, read and parsed on the
 * loader's thread (fgd-loader.h) while the old table names what it can,
 * and read again when the module list changes, or when asked to after a
 * few seconds (new BPF programs and trampolines show up without module
 * changes); and the kernel's build-id. The table is charged to the memory
 * budget's symbols part. Loop's thread only.
 */

#include <stdbool.h>
#include <stdint.h>

struct fg_budget;
struct fg_kernel_syms;
struct fg_loader;
struct fg_status_symbols;

/* Caller frees with fg_kernel_syms__free(), after the loader. 0 or -ENOMEM. */
int fg_kernel_syms__new(struct fg_kernel_syms **ret);
struct fg_kernel_syms *fg_kernel_syms__free(struct fg_kernel_syms *k);

/* Reads go to loader (borrowed until k is freed); NULL: in the caller. */
void fg_kernel_syms__set_loader(struct fg_kernel_syms *k, struct fg_loader *loader);
/*
 * Charges the table to budget's symbols part (common/base/budget.h;
 * borrowed until k is freed or another is set; NULL: none), giving what it
 * held back to the one before.
 */
void fg_kernel_syms__set_budget(struct fg_kernel_syms *k, struct fg_budget *budget);

/* Names a kernel address, or returns NULL. Borrowed until the next fg_kernel_syms__refresh(). */
const char *fg_kernel_syms__name(const struct fg_kernel_syms *k, uint64_t addr);
/*
 * The running kernel's build-id in hex, from /sys/kernel/notes, read the
 * first time; "" if it cannot be read. Borrowed until k is freed.
 */
const char *fg_kernel_syms__build_id(struct fg_kernel_syms *k);
/*
 * (Re)loads /proc/kallsyms as fg_symbolizer__refresh_kernel() says: 1 if
 * reloaded (without a loader), 0 if no reload was due, -EINPROGRESS while
 * one runs, or a negative errno.
 */
int fg_kernel_syms__refresh(struct fg_kernel_syms *k, bool force);

/*
 * Fills the kernel's part of the symbols' status: kernel_symbols,
 * kernel_reloads, kernel_restricted; adds the table's bytes, as charged, to
 * symbols_bytes.
 */
void fg_kernel_syms__stats(const struct fg_kernel_syms *k, struct fg_status_symbols *ret);
