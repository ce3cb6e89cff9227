/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A binary's identity: the GNU build-id when known, else the device and
 * inode of its file. The key is what the symbolizer caches a binary by
 * (fgd-symbols.h); the index finds a cached binary by either half of it,
 * so a mapping found by inode meets its build-id-keyed twin from an MMAP2
 * record; and an opened file is checked to be the one keyed, never a
 * replacement at the same path. No logging, no I/O.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "base/idxmap.h"

#define FG_BUILD_ID_MAX 20

enum fg_dso_kind {
	FG_DSO_FILE, /* an ELF file on disk */
	FG_DSO_VDSO, /* the kernel's vDSO, read from our own address space */
	FG_DSO_ANON, /* executable memory with no file: JIT code and the like */
};

struct fg_dso_key {
	enum fg_dso_kind kind;
	uint8_t build_id_len; /* 0: unknown */
	uint8_t build_id[FG_BUILD_ID_MAX];
	uint64_t dev, ino; /* ino 0: unknown */
};

/* The binaries by build-id and by inode, as slots of their owner's table. Zeroed: empty. */
struct fg_binid_index {
	struct fg_idxmap by_build_id, by_inode;
};

/* Which halves of the index hold one binary: kept with the binary. */
struct fg_binid_indexed {
	bool build_id, inode;
};

void fg_binid_index_done(struct fg_binid_index *x);

/*
 * The slot of the binary keyed k, by build-id first, then by inode; -1 if
 * none. key_of(ctx, slot) gives the key of the binary in a slot.
 */
int64_t fg_binid_index_find(const struct fg_binid_index *x, const struct fg_dso_key *k,
			    const struct fg_dso_key *(*key_of)(const void *ctx, uint32_t slot),
			    const void *ctx);
/*
 * Indexes the binary in slot under what its key k holds and *in does not
 * yet say is indexed; updates *in. 0 or -ENOMEM (then *in says what was).
 */
int fg_binid_index_add(struct fg_binid_index *x, const struct fg_dso_key *k, uint32_t slot,
		       struct fg_binid_indexed *in);
/* Takes the binary in slot out of the index, as *in says it is there; clears *in. */
void fg_binid_index_remove(struct fg_binid_index *x, const struct fg_dso_key *k, uint32_t slot,
			   struct fg_binid_indexed *in);

/*
 * True if an opened file (its build-id, which may be empty, and its stat)
 * is the binary keyed k: the build-id when k has one, else the device and
 * inode, else (nothing known) any.
 */
bool fg_binid_is_file(const struct fg_dso_key *k, const uint8_t *id, size_t id_len,
		      const struct stat *st);
