/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * CFI rows as libdw reads them, in the unwinder's form (common/unwind/unwind.h).
 * The unwinder asks libdw for what common/unwind/ehframe.h leaves to it (DWARF
 * expressions, .debug_frame, .eh_frame without a search table); the tests
 * hold the two readers' rows side by side.
 */

#include <elfutils/libdw.h>
#include <stdint.h>

#include "unwind/unwind.h"

/*
 * The row cfi gives for vaddr (an address of the binary), and a range
 * [*ret_start, *ret_end) it holds for: from vaddr (see fgd-cfi.c) to where
 * the next row starts, or vaddr alone if libdw cannot say.
 * Returns 0, -ENOENT when no FDE covers vaddr, -E2BIG when its expressions
 * do not fit a row, or -EINVAL for one the unwinder cannot evaluate.
 */
int fg_cfi_libdw_row(Dwarf_CFI *cfi, uint64_t vaddr, struct fg_unwind_row *ret, uint64_t *ret_start,
		     uint64_t *ret_end);
