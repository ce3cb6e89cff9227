/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * CFI rows read straight from a binary's .eh_frame, found through the
 * sorted table of .eh_frame_hdr, as the program's own unwinder finds them:
 * a binary search, then one pass over one FDE's instructions up to the pc.
 * Nothing is kept between lookups, so a lookup costs the same the first
 * time as the thousandth, and the reader holds no memory of its own.
 *
 * It reads what x86-64 toolchains write. What it leaves to a fuller reader
 * (libdw in the daemon) it answers with -EOPNOTSUPP: DWARF expressions
 * (PLT entries, signal trampolines, stack realignment), pointer encodings
 * other than absolute, pc-relative and data-relative ones, and CIE
 * augmentations other than z, R, P, L and S.
 *
 * The bytes are untrusted (any binary a process maps): every read is
 * checked against its section, and malformed data is -EINVAL.
 */

#include <stddef.h>
#include <stdint.h>

#include "unwind/unwind.h"

/* The two sections, as they sit in the binary. */
struct fg_ehframe {
	uint64_t hdr_addr;    /* .eh_frame_hdr's address in the binary (sh_addr) */
	const uint8_t *frame; /* borrowed: .eh_frame */
	size_t frame_size;
	uint64_t frame_addr;
	/* Borrowed, in .eh_frame_hdr: fde_count pairs of int32 (start, FDE), hdr-relative. */
	const uint8_t *table;
	size_t fde_count;
};

/*
 * Sets up ret over the two sections; it borrows them, and they must outlive
 * it. Returns 0, -EOPNOTSUPP when the table is missing or encoded other
 * than as pairs of data-relative sdata4 (what every linker writes), or
 * -EINVAL for a malformed header or a section without bytes (NULL).
 */
int fg_ehframe_init(struct fg_ehframe *ret, const uint8_t *hdr, size_t hdr_size, uint64_t hdr_addr,
		    const uint8_t *frame, size_t frame_size, uint64_t frame_addr);

/*
 * The row for pc (an address of the binary, as the sections' addresses
 * are), and the range [*ret_start, *ret_end) of addresses it holds for.
 * Registers the CFI does not mention follow the x86-64 psABI: rbx, rbp
 * and r12 to r15 keep their values, rsp is the CFA, the rest are undefined.
 * Returns 0, -ENOENT when no FDE covers pc, -EOPNOTSUPP (see above), or
 * -EINVAL for malformed CFI.
 */
int fg_ehframe_row(const struct fg_ehframe *ef, uint64_t pc, struct fg_unwind_row *ret,
		   uint64_t *ret_start, uint64_t *ret_end);

/* The first address entry i (< fde_count) of the table says its FDE covers. */
uint64_t fg_ehframe_entry(const struct fg_ehframe *ef, size_t i);

/*
 * The addresses [*ret_start, *ret_end) that the FDE of table entry i covers,
 * as the FDE itself says (the table's address is only where to look): for
 * what a compiler writes, one function, or one part of a function split in
 * two (gcc's .cold parts). 0, -ENOENT when i is past the table, -EOPNOTSUPP
 * (a CIE it does not read, see above), or -EINVAL when malformed.
 */
int fg_ehframe_fde_range(const struct fg_ehframe *ef, size_t i, uint64_t *ret_start,
			 uint64_t *ret_end);

/*
 * Where the FDE the table lists for pc starts (its entry's address: the
 * last at or before pc), in *ret: 0, -ENOENT when none is, or -EOPNOTSUPP
 * without a table. An FDE's identity, for what another reader parsed.
 */
int fg_ehframe_fde_start(const struct fg_ehframe *ef, uint64_t pc, uint64_t *ret);
