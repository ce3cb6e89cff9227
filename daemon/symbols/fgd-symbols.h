/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Symbol resolution for the whole machine.
 *
 * Binaries ("dsos") are cached by identity: the GNU build-id when known,
 * else device and inode. The kernel hands us build-ids in MMAP2 records;
 * mappings found by scanning /proc are keyed by inode and aliased to the
 * build-id entry once the file's note is read, so one libc is parsed once
 * however many processes map it and however we learned of them.
 *
 * Symbols load lazily, on the first lookup of an address in the binary (a
 * recording names each code location the first time it sees it). Loading
 * reads the ELF symbol table, then looks for separate debug information
 * (fgd-debuginfo.h: build-id and .gnu_debuglink files, MiniDebugInfo) for
 * the names a stripped binary lacks, and keeps the binary's DWARF, if any,
 * for inline frames.
 *
 * Loads run on the loader's thread (fgd-loader.h), because how long they
 * take is up to whoever made the file: fg_symbolizer__prepare() starts one
 * and says whether the dso is ready; the names come once it is. The dso
 * changes only on the loop's thread, when the loader hands the results
 * back. Without a loader, loads happen at once in the caller.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "proto/status-types.h"
#include "symbols/fgd-binid.h"
#include "symbols/fgd-elffile.h"

enum fg_dso_state {
	FG_DSO_UNLOADED,
	FG_DSO_LOADING, /* on the loader's thread */
	FG_DSO_LOADED,
	FG_DSO_FAILED, /* see fg_dso__error() */
};

struct fg_dso;
struct fg_loader;
struct fg_root;
struct fg_symbolizer;

int fg_symbolizer__new(struct fg_symbolizer **ret);
/* Free the loader first: its jobs hold references to dsos. */
struct fg_symbolizer *fg_symbolizer__free(struct fg_symbolizer *s);

/* Loads go to loader (borrowed until the symbolizer is freed); NULL: in the caller. */
void fg_symbolizer__set_loader(struct fg_symbolizer *s, struct fg_loader *loader);

struct fg_budget;
/*
 * Charges symbol tables (and kallsyms), DWARF and the kept names to budget
 * (common/base/budget.h; borrowed until the symbolizer is freed, or set to NULL
 * before), and gives them up under its pressure, least recently used
 * binary first: its DWARF (names lose their inline frames until it is read
 * again, which happens once the budget has room for it), then its symbol
 * table (names are module+offset until it is read again, at the next
 * address that needs it); the kept names start again. What recordings and
 * the always-on window have named stays named. Call before the first load.
 */
void fg_symbolizer__set_budget(struct fg_symbolizer *s, struct fg_budget *budget);

/*
 * Starts loading d's symbols unless they are loaded, being loaded, or failed
 * for good (a failure that may pass is retried every few seconds). hint is
 * as for fg_symbolizer__name_user(). Returns 0 when d can be named now
 * (loaded, or its failure stands: names are module+offset), -EINPROGRESS
 * while a load runs (the loader's completion will say when to ask again),
 * or -ENOMEM. A NULL or anonymous d is always ready.
 */
int fg_symbolizer__prepare(struct fg_symbolizer *s, struct fg_dso *d, const char *hint);

/*
 * Where separate debug files are looked for (fgd-debuginfo.h); default
 * /usr/lib/debug. Binaries loaded before the change keep what they found.
 * dir is copied. 0 or -ENOMEM.
 */
int fg_symbolizer__set_debug_dir(struct fg_symbolizer *s, const char *dir);

/*
 * Which files DWARF and CFI may be mapped from rather than read
 * (fg_elf_may_map()): by default the filesystems of /, /usr, /opt and
 * /usr/lib/debug. For tests; t is copied, and applies to loads started
 * after the call.
 */
void fg_symbolizer__set_trust(struct fg_symbolizer *s, const struct fg_elf_trust *t);

/*
 * Returns a new reference to the dso for key (caller drops it with
 * fg_dso__unref()), creating it from path if it is not cached. A key with
 * only dev/ino is completed with the file's build-id, read through
 * open_path (which may differ from path, e.g. /proc/PID/map_files/...).
 * root (may be NULL: the daemon's own; the dso takes a reference) is where
 * path means something: the mapping process's (fgd-root.h). When the file is
 * read by path, it is resolved there and never on the host.
 * NULL when the cache is full (counted) or on ENOMEM.
 */
struct fg_dso *fg_symbolizer__get_dso(struct fg_symbolizer *s, const struct fg_dso_key *key,
				      const char *path, const char *open_path,
				      struct fg_root *root);

struct fg_dso *fg_dso__ref(struct fg_dso *d);
struct fg_dso *fg_dso__unref(struct fg_dso *d);
/* Borrowed until the dso is freed. */
const char *fg_dso__path(const struct fg_dso *d);
enum fg_dso_state fg_dso__state(const struct fg_dso *d);
/* Negative errno of the failed load; 0 otherwise. */
int fg_dso__error(const struct fg_dso *d);
/*
 * Whether naming in d may open its file: it is not loaded, or its evicted
 * DWARF is wanted back. Only then is an open hint worth making.
 */
bool fg_dso__may_open(const struct fg_dso *d);
/*
 * The binary's DWARF (its own, or its separate debug file's), once its
 * symbols are loaded; NULL if it has none. Borrowed until the dso is freed.
 * For DWARF users beyond inline frames, e.g. CFI through fg_dwarf__handle().
 */
struct fg_dwarf *fg_dso__dwarf(struct fg_dso *d);
/* Borrowed until the dso is freed. */
const struct fg_dso_key *fg_dso__key(const struct fg_dso *d);

struct fg_dso_source;

/*
 * Takes d's source, with hint (may be NULL): where its file may be read
 * (fgd-dsosource.h). Caller releases it with fg_dso_source_done().
 */
int fg_dso__source(const struct fg_dso *d, const char *hint, struct fg_dso_source *ret);
enum fg_dso_kind fg_dso__kind(const struct fg_dso *d);

enum fg_sym_result {
	FG_SYM_NAMED,   /* a symbol name */
	FG_SYM_OFFSET,  /* module+0xoffset: the binary is known, the symbol is not */
	FG_SYM_UNKNOWN, /* "[unknown]" */
};

/*
 * Names the code at file offset `offset` of dso (loading its symbols on
 * first use; with a loader, a dso that is not ready yet, see
 * fg_symbolizer__prepare(), is named module+offset). open_hint (may be
 * NULL) is where the file is best read now: the sampled process's
 * /proc/PID/map_files/START-END, which reaches the mapped file even if it
 * was replaced, unlinked or is in another mount namespace. Returns the name, borrowed until the dso is freed or, for
 * FG_SYM_OFFSET, formatted into buf; stores which in *ret_result.
 *
 * Only regular files are read, opened without blocking: a FIFO or device
 * planted at a binary's path cannot stall the daemon. A failure that may be
 * transient (the file gone, the process gone, out of fds) is retried, at
 * most every few seconds, on later lookups.
 */
const char *fg_symbolizer__name_user(struct fg_symbolizer *s, struct fg_dso *d, uint64_t offset,
				     const char *open_hint, char *buf, size_t size,
				     enum fg_sym_result *ret_result);

/* Options of fg_symbolizer__frames_user(). */
#define FG_SYM_INLINE (1u << 0)   /* functions inlined at the address are frames too */
#define FG_SYM_DEMANGLE (1u << 1) /* C++ and Rust names demangled (fgd-demangle.h) */
#define FG_SYM_NOWAIT (1u << 2) /* fg_symbolizer__frames(): what is known now, never -EINPROGRESS */

/* Deepest inline chain kept, with the function it was inlined into; deeper keeps the outermost. */
#define FG_SYM_MAX_FRAMES 16

/* The frames one code address stands for. */
struct fg_sym_frames {
	size_t n; /* >= 1 */
	/* outermost first; see fg_symbolizer__frames_user() */
	const char *names[FG_SYM_MAX_FRAMES];
	size_t inlined;            /* how many of them are inlined functions: n - 1 */
	enum fg_sym_result result; /* of names[0]; inline frames are always named */
	char buf[8192];            /* demangled and module+0x names */
	size_t used;
};

/*
 * Like fg_symbolizer__name_user(), but the address may stand for several
 * frames: with FG_SYM_INLINE, the function the symbol table names, then
 * each function inlined there down to the innermost, as `addr2line -i` and
 * `perf report --inline` show them (needs DWARF: the binary's or its debug
 * file's). Names are borrowed until ret is reused or the dso is freed.
 */
void fg_symbolizer__frames_user(struct fg_symbolizer *s, struct fg_dso *d, uint64_t offset,
				const char *open_hint, unsigned flags, struct fg_sym_frames *ret);

/*
 * Names a kernel address, or returns NULL. Borrowed until the next
 * fg_symbolizer__refresh_kernel().
 */
const char *fg_symbolizer__name_kernel(struct fg_symbolizer *s, uint64_t addr);
/*
 * The running kernel's build-id in hex, from /sys/kernel/notes, read the
 * first time; "" if it cannot be read. Borrowed until s is freed.
 */
const char *fg_symbolizer__kernel_build_id(struct fg_symbolizer *s);

/*
 * What the loop names user code with: fg_symbolizer__frames_user(), except
 * that nothing whose cost is up to the file runs here. With a loader, an
 * address whose names need DWARF (inline frames) or demangling is named on
 * the loader's thread, once, and the answer kept for every caller (by the
 * binary and offset). Returns 0 with *ret filled (names borrowed until the
 * next call), -EINPROGRESS while d's symbols or this address's names are
 * being read (ask again once the loader completes something), or -ENOMEM.
 * With FG_SYM_NOWAIT, what waits is not waited for: 1 says *ret is what is
 * known now (module+offset for a binary not read yet, the symbol table's
 * name without inline frames or demangling), to be asked again later.
 */
int fg_symbolizer__frames(struct fg_symbolizer *s, struct fg_dso *d, uint64_t offset,
			  const char *open_hint, unsigned flags, struct fg_sym_frames *ret);

/*
 * Whether fg_symbolizer__frames() names offset in d by its function alone,
 * with flags: d is loaded, and either its symbol table has a function
 * there and no DWARF adds inline frames (flags without FG_SYM_INLINE, a
 * binary without DWARF, or a PLT entry, which DWARF does not describe), or
 * no symbol covers it but .eh_frame says which function it is in (named
 * "module+0xSTART"). Then *ret_function identifies the function: offsets
 * with the same one get the same frames for as long as d stays loaded, so
 * a caller that named one may name the others alike. (A symbol's index
 * into d's table, not its address: an alias at the same address may name
 * a part of the function. An unnamed function's is its index among them
 * past the symbols' count.)
 */
bool fg_symbolizer__function(const struct fg_dso *d, uint64_t offset, unsigned flags,
			     uint64_t *ret_function);

/*
 * (Re)loads /proc/kallsyms if it was never loaded, if the module list
 * changed, or if force is set and the last load is older than a few
 * seconds (new BPF programs and trampolines show up without module
 * changes). The file is read and parsed on the loader's thread: until then
 * the old table names what it can. Returns 1 if reloaded (without a
 * loader), 0 if no reload was due, -EINPROGRESS while one runs, or a
 * negative errno.
 */
int fg_symbolizer__refresh_kernel(struct fg_symbolizer *s, bool force);

/* The symbolizer's part of status ("symbols"): its counters, and what it holds now. */
void fg_symbolizer__stats(const struct fg_symbolizer *s, struct fg_status_symbols *ret);
