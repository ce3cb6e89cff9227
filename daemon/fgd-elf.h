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
 * Which symbols. STT_FUNC and STT_GNU_IFUNC symbols with a name, defined in
 * an executable (SHF_EXECINSTR) section and starting inside it. .dynsym is
 * read only when .symtab is absent or holds no such symbol.
 *
 * Extents. A sized symbol covers exactly [value, value + size); a zero-size
 * one (hand-written assembly) extends to the next symbol's start. Neither
 * reaches past the end of its section. A lookup returns the symbol with the
 * greatest start <= vaddr, and -1 when vaddr is outside that symbol's extent
 * (a gap, or the tail of a symbol that another one nested inside), so a
 * missing name is preferred to a wrong one.
 *
 * Aliases. Several names at one address keep one entry, chosen whatever the
 * symbol table order: a sized symbol over a zero-size one, then global over
 * weak over local, then fewer leading underscores, then the shorter name,
 * then byte order. glibc's getpid therefore resolves to "__getpid" (global)
 * rather than "getpid" (weak); fg_elf_syms__find() still finds the dropped
 * names and returns the entry they alias.
 *
 * Hostile input. A user can point the daemon at a crafted file, so every
 * offset, size and index read from it is checked, and the file is read with
 * pread rather than mmap (truncating a mapped file would raise SIGBUS). A
 * file that is not ELF, or an ELF file other than ET_EXEC or ET_DYN, gives
 * -ENOEXEC; a damaged one, or an fd that is not a regular file, -EINVAL;
 * more than FG_ELF_MAX_SYMS function symbols -E2BIG; a failed read or
 * allocation inside libelf -EIO or -ENOMEM. The loaded object keeps no fd
 * and no Elf handle.
 *
 * No logging and no global state beyond libelf's version handshake.
 */

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

/* A large C++ binary has about a million functions. */
#define FG_ELF_MAX_SYMS (UINT32_C(1) << 23)

struct fg_elf_syms;

/* Reads from fd (borrowed; not closed). Caller frees *ret with fg_elf_syms__free(). */
int fg_elf_syms__load_fd(int fd, struct fg_elf_syms **ret);
/* Reads an image in memory (copied; e.g. the vDSO). Same contract. */
int fg_elf_syms__load_mem(const void *image, size_t size, struct fg_elf_syms **ret);
/*
 * Only the layout (PT_LOAD segments and build-id), no symbols, from an Elf
 * handle the caller opened (borrowed). The unwinder reads CFI from the same
 * handle, so the layout and the CFI come from one file. Same errors.
 */
int fg_elf_syms__load_layout(Elf *elf, struct fg_elf_syms **ret);
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
/* The extent lookups use: st_size, or for a zero-size symbol the distance to the next. */
uint64_t fg_elf_syms__size(const struct fg_elf_syms *s, size_t idx);
size_t fg_elf_syms__count(const struct fg_elf_syms *s);
/* Index of the first symbol with this name, or -1 (tests and diagnostics). */
int64_t fg_elf_syms__find(const struct fg_elf_syms *s, const char *name);
