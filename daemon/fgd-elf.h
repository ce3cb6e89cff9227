/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The function symbols of one ELF object, read with libelf: .symtab, or
 * .dynsym when the object is stripped. Also the build-id and the PT_LOAD
 * layout, so a file offset taken from a mapping (ip - start + pgoff) turns
 * into the ELF virtual address the symbols use. This one translation gives
 * the right load bias for PIE executables, shared libraries and fixed-address
 * executables alike.
 *
 * No logging and no global state beyond libelf's version handshake.
 */

#include <stddef.h>
#include <stdint.h>

struct fg_elf_syms;

/* Reads from fd (borrowed; not closed). Caller frees *ret with fg_elf_syms__free(). */
int fg_elf_syms__load_fd(int fd, struct fg_elf_syms **ret);
/* Reads an image in memory (copied; e.g. the vDSO). Same contract. */
int fg_elf_syms__load_mem(const void *image, size_t size, struct fg_elf_syms **ret);
struct fg_elf_syms *fg_elf_syms__free(struct fg_elf_syms *s);

/* Length of the GNU build-id and a pointer to it (borrowed until free), or 0. */
size_t fg_elf_syms__build_id(const struct fg_elf_syms *s, const uint8_t **ret);

/* File offset -> virtual address through the PT_LOAD segments; -ENOENT if none covers it. */
int fg_elf_syms__offset_to_vaddr(const struct fg_elf_syms *s, uint64_t offset, uint64_t *ret_vaddr);

/* Index of the function symbol containing vaddr, or -1. */
int64_t fg_elf_syms__lookup(const struct fg_elf_syms *s, uint64_t vaddr);
/* Borrowed until free. */
const char *fg_elf_syms__name(const struct fg_elf_syms *s, size_t idx);
uint64_t fg_elf_syms__addr(const struct fg_elf_syms *s, size_t idx);
uint64_t fg_elf_syms__size(const struct fg_elf_syms *s, size_t idx);
size_t fg_elf_syms__count(const struct fg_elf_syms *s);
/* Index of the first symbol with this name, or -1 (tests and diagnostics). */
int64_t fg_elf_syms__find(const struct fg_elf_syms *s, const char *name);
