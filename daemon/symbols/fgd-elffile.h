/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * An ELF file, the one object that reads ELF with libelf (no other file of
 * fgd includes <libelf.h> but the DWARF and CFI readers, libdw's users):
 * opened under the trust rule that decides whether it may be mapped, and
 * read into the function symbols of the object (a table of fgd-symtab.h,
 * with the PLT's names of fgd-plt.h), its build-id and its PT_LOAD layout,
 * so a file offset taken from a mapping (ip - start + pgoff) turns into the
 * ELF virtual address the symbols use. This one translation gives the
 * right load bias for PIE executables, shared libraries and fixed-address
 * executables alike.
 *
 * Which symbols. STT_FUNC and STT_GNU_IFUNC symbols with a name, defined in
 * an executable (SHF_EXECINSTR) section and starting inside it. .dynsym is
 * read only when .symtab is absent or holds no such symbol. How extents
 * and aliases are chosen is fgd-symtab.h's; how PLT entries are named,
 * fgd-plt.h's.
 *
 * Names. A symbol version spelled into a .symtab name ("f@@VER_1",
 * "f@VER_0") is dropped: it is "f", as in .dynsym.
 *
 * Hostile input. A user can point the daemon at a crafted file, so every
 * offset, size and index read from it is checked, and the file is read with
 * pread rather than mmap (truncating a mapped file would raise SIGBUS). A
 * file that is not ELF, or an ELF file other than ET_EXEC or ET_DYN, gives
 * -ENOEXEC; a damaged one, or an fd that is not a regular file, -EINVAL;
 * more than FG_ELF_MAX_SYMS (fgd-symtab.h) function symbols -E2BIG; a failed read or
 * allocation inside libelf -EIO or -ENOMEM. The loaded object keeps no fd
 * and no Elf handle.
 *
 * Separate debug information. A stripped object names only its exported
 * functions. Two things lead to the rest, and this module reads both but
 * finds no files itself (fgd-debuginfo does, and checks them):
 *   - .gnu_debuglink names a separate debug file and its CRC32;
 *     fg_elf_syms__adopt_debug_fd() takes that file's .symtab (its code
 *     sections are SHT_NOBITS, which is accepted there only).
 *   - .gnu_debugdata ("MiniDebugInfo", Fedora and others) is an
 *     xz-compressed ELF image whose .symtab holds the functions .dynsym
 *     lacks; it is read with .dynsym when .symtab is missing. The image is
 *     untrusted like the rest: its size is capped before and after
 *     inflating, and it goes through the same checked reader.
 *
 * No logging and no global state beyond libelf's version handshake
 * (fg_elf_ready()).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "base/macro.h"

/* libelf's handle (<libelf.h>), declared here so that includers need not see libelf. */
typedef struct Elf Elf;

/* Longest .gnu_debuglink file name kept, with its NUL. */
#define FG_ELF_MAX_DEBUGLINK 256

/* Where the function symbols came from. */
enum fg_elf_source {
	FG_ELF_NONE,          /* no function symbols */
	FG_ELF_SYMTAB,        /* the object's .symtab: every function */
	FG_ELF_DYNSYM,        /* .dynsym only: exported functions */
	FG_ELF_MINIDEBUGINFO, /* .dynsym and the .symtab inside .gnu_debugdata */
	FG_ELF_DEBUG_FILE,    /* a separate debug file's .symtab */
};

struct fg_elf_syms;

/*
 * libelf's version handshake, done once for the process whatever the thread:
 * every user of libelf calls it before elf_begin(). False if libelf refused.
 */
bool fg_elf_ready(void);

/*
 * Mapping a file instead of reading it (DWARF and CFI, fgd-dwarf.h and
 * fgd-unwind.c). A mapping lets the kernel keep the pages in its page
 * cache, shared with every process that maps the file and reclaimable,
 * where a pread copy is fgd's own heap. But when a mapped file is
 * truncated, the next access to a page past its new end raises SIGBUS,
 * and that would kill the daemon. So a file is mapped only if no
 * unprivileged user can truncate it, or change what a page reads:
 *   - a regular file owned by root, writable by neither its group nor
 *     others (a POSIX ACL granting a user write shows in the group bits,
 *     which are then the ACL's mask), so only root may open it for writing
 *     or truncate it; and
 *   - on one of the filesystems fg_elf_trust lists: those of the system's
 *     own directories (/, /usr, the debug directory), mounted by the
 *     administrator. A FUSE or network filesystem decides what its files
 *     read, owner and mode included, and a removable disk a user mounted
 *     can be pulled or crafted; neither is one of those.
 * That is distribution libraries and programs and /usr/lib/debug: most of
 * the DWARF and CFI on a machine. A user's own binaries, a container's
 * files (overlayfs: another device), /tmp on tmpfs, are read with pread as
 * before. Root can still truncate a mapped file, and kill fgd with it, as
 * it could kill fgd in other ways. fgd keeps no fd: the mapping holds the
 * file, whatever happens to its path.
 */
#define FG_ELF_MAX_TRUSTED_FS 8

struct fg_elf_trust {
	/* st_dev of the filesystems whose root-owned files may be mapped */
	uint64_t dev[FG_ELF_MAX_TRUSTED_FS];
	size_t n;
};

/*
 * Adds the filesystem holding path (as this process sees it) to t. 0,
 * -E2BIG when t is full, or the negative errno of stat(); a path that is
 * not there (-ENOENT) adds nothing, which callers may ignore.
 */
int fg_elf_trust_add(struct fg_elf_trust *t, const char *path);
/* Whether the file st describes may be mapped under the rule above. */
bool fg_elf_may_map(const struct fg_elf_trust *t, const struct stat *st);
/*
 * The rule applied to an opened binary, as every reader of one (symbols,
 * DWARF, CFI) asks it: fstat()s fd (borrowed) into *ret_st, then 1 if the
 * file may be mapped, 0 if it is to be read with pread, or the negative
 * errno of fstat().
 */
int fg_elf_may_map_fd(const struct fg_elf_trust *t, int fd, struct stat *ret_st);

/*
 * An ELF file opened for reading: mapped (private, never written back),
 * or read with pread as its sections are asked for. A mapped one never
 * needs the fd again; one read with pread needs it until the caller has
 * read what it wants, then fg_elf_file_forget_fd().
 */
struct fg_elf_file {
	Elf *elf;     /* owned */
	uint8_t *map; /* owned: the mapping, or NULL when read with pread */
	size_t map_size;
	uint64_t shdr_lo,
		shdr_hi; /* the section header table's pages: see fg_elf_file_drop_pages() */
};

/*
 * Opens fd (borrowed; a regular file) for reading: mapped when map is set
 * (see fg_elf_may_map()), else read with pread, the sections libelf is
 * asked for being copied to the heap. 0, -EINVAL (not a regular file),
 * -ENOEXEC (not ELF), -ENOSYS (no libelf), or another negative errno.
 * Caller closes *ret with fg_elf_file_close().
 */
int fg_elf_file_open(int fd, bool map, struct fg_elf_file *ret);
/* What was to be read is read: the fd may be closed (a no-op for a mapped file). */
void fg_elf_file_forget_fd(struct fg_elf_file *f);
/* Ends the Elf and unmaps; accepts a zeroed or closed struct. */
void fg_elf_file_close(struct fg_elf_file *f);
/* Whether p points into f's mapping (the page cache), not to a copy on the heap. */
bool fg_elf_file_mapped(const struct fg_elf_file *f, const void *p);
/*
 * Makes libdw, and anything else reading f by section name, skip every
 * section whose name keep() refuses, by marking it SHT_NOBITS in f's own
 * copy of the section headers: libdw reads (and inflates) every .debug_*
 * section when it opens a file, whether its callers need it or not. For
 * a mapped file the headers' pages become f's private copy (copy on
 * write). Returns how many sections were marked, or a negative errno.
 */
int fg_elf_file_keep_sections(struct fg_elf_file *f, bool (*keep)(const char *name));
/*
 * The contents of elf's section called name (libelf's: borrowed from elf),
 * or NULL if it has none with contents; its size goes in *ret_size, its
 * address (sh_addr) in *ret_addr if that is not NULL.
 */
const void *fg_elf_section(Elf *elf, const char *name, size_t *ret_size, uint64_t *ret_addr);
/*
 * Gives the pages of f's mapping this process touched back to the page
 * cache (madvise(MADV_DONTNEED)): its RSS drops, and the next access
 * faults a page in again from the cache, cheaply while it is there. The
 * section headers' pages, which fg_elf_file_keep_sections() may have
 * written, are kept. A no-op for a file read with pread. Any thread.
 */
void fg_elf_file_drop_pages(const struct fg_elf_file *f);

/*
 * The GNU build-id note of the ELF file fd (borrowed; a regular file), into
 * buf[0, size): its length, 0 if it has none, -ENOEXEC, or -ENOSYS. Only
 * that: no symbols. The file is read with pread (a mapping of a file its
 * owner truncates raises SIGBUS), and only note segments of a sane size (a
 * build-id note is 36 bytes), so it is cheap enough for the loop.
 */
int fg_elf_read_build_id(int fd, uint8_t *buf, size_t size);

/* Reads from fd (borrowed; not closed). Caller frees *ret with fg_elf_syms__free(). */
int fg_elf_syms__load_fd(int fd, struct fg_elf_syms **ret);
/*
 * The same, mapping fd when map is set (see fg_elf_may_map()): the symbol
 * table and its names are read in place, a part at a time, not copied.
 */
int fg_elf_syms__load_file(int fd, bool map, struct fg_elf_syms **ret);
/* Reads an image in memory (copied; e.g. the vDSO). Same contract. */
int fg_elf_syms__load_mem(const void *image, size_t size, struct fg_elf_syms **ret);
/*
 * Only the layout (PT_LOAD segments and build-id), no symbols, from an Elf
 * handle the caller opened (borrowed). The unwinder reads CFI from the same
 * handle, so the layout and the CFI come from one file. Same errors.
 */
int fg_elf_syms__load_layout(Elf *elf, struct fg_elf_syms **ret);
struct fg_elf_syms *fg_elf_syms__free(struct fg_elf_syms *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_elf_syms *, fg_elf_syms__free);

/*
 * Replaces s's symbols with the .symtab of the separate debug file fd
 * (borrowed; not closed), keeping those s made for its PLT entries. The
 * debug file's build-id must equal s's when need_build_id is set, and
 * whenever both have one: otherwise -ESTALE. A debug file without function
 * symbols gives -ENOENT. On any failure s is unchanged. Returns the number
 * of symbols now in s.
 */
int fg_elf_syms__adopt_debug_fd(struct fg_elf_syms *s, int fd, bool need_build_id);

/*
 * The symbol table of the ELF image an xz stream inflates to, as found in
 * .gnu_debugdata (no segments, no build-id). For tests and the fuzzer;
 * fg_elf_syms__load_*() read .gnu_debugdata themselves.
 */
int fg_elf_syms__load_debugdata_mem(const void *xz, size_t size, struct fg_elf_syms **ret);

/* The .gnu_debuglink file name (borrowed until free; never contains '/') and its CRC32, or NULL. */
const char *fg_elf_syms__debuglink(const struct fg_elf_syms *s, uint32_t *ret_crc);
/* Whether the object itself has DWARF (.debug_info). */
bool fg_elf_syms__has_dwarf(const struct fg_elf_syms *s);
enum fg_elf_source fg_elf_syms__source(const struct fg_elf_syms *s);

/* Length of the GNU build-id and a pointer to it (borrowed until free), or 0. */
size_t fg_elf_syms__build_id(const struct fg_elf_syms *s, const uint8_t **ret);

/* File offset -> virtual address through the PT_LOAD segments; -ENOENT if none covers it. */
int fg_elf_syms__offset_to_vaddr(const struct fg_elf_syms *s, uint64_t offset, uint64_t *ret_vaddr);

/* The entry point (e_entry) as a virtual address; 0 for an object without one. */
uint64_t fg_elf_syms__entry(const struct fg_elf_syms *s);

/* Index of the function symbol containing vaddr, or -1. */
int64_t fg_elf_syms__lookup(const struct fg_elf_syms *s, uint64_t vaddr);
/* Borrowed until free. */
const char *fg_elf_syms__name(const struct fg_elf_syms *s, size_t idx);
/* Whether the entry is one synthesized for the PLT ("memcmp@plt", ".plt"): no DWARF describes it. */
bool fg_elf_syms__is_plt(const struct fg_elf_syms *s, size_t idx);
uint64_t fg_elf_syms__addr(const struct fg_elf_syms *s, size_t idx);
/* The extent lookups use: st_size, or for a zero-size symbol the distance to the next. */
uint64_t fg_elf_syms__size(const struct fg_elf_syms *s, size_t idx);
size_t fg_elf_syms__count(const struct fg_elf_syms *s);

/*
 * Where the function holding vaddr starts, when no symbol names it: its
 * index among them (below fg_elf_syms__unnamed_count()) and *ret_start, or
 * -ENOENT. The object's .eh_frame (through .eh_frame_hdr's table) lists
 * every function the compiler wrote, named or not, so this holds a
 * stripped object's static functions: their addresses can then be told
 * apart by function, as symbols tell named ones apart, though no name is
 * known. An FDE is one function, or one part of a function split in
 * two (gcc's .cold parts, which a symbol table names apart too). Read with
 * the symbols of an object that has only .dynsym, or no symbols (one with
 * .symtab, its own or MiniDebugInfo's, names them all), and kept only for
 * functions whose start no symbol covers; a debug file's table adopted
 * later names them, and they go. Ask fg_elf_syms__lookup() first: this
 * does not.
 */
int64_t fg_elf_syms__unnamed_function(const struct fg_elf_syms *s, uint64_t vaddr,
				      uint64_t *ret_start);
/* How many such functions s holds. */
size_t fg_elf_syms__unnamed_count(const struct fg_elf_syms *s);
/* Heap bytes the table holds, for memory accounting. */
uint64_t fg_elf_syms__bytes(const struct fg_elf_syms *s);
/* Index of the first symbol with this name, or -1 (tests and diagnostics). */
int64_t fg_elf_syms__find(const struct fg_elf_syms *s, const char *name);
