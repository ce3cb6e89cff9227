/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * .eh_frame and .eh_frame_hdr come from whatever binary a sampled process
 * maps. The bytes are: a pc, the two sections' addresses (8 bytes each,
 * little-endian), .eh_frame_hdr's size (4 bytes), .eh_frame_hdr, then
 * .eh_frame. Rows are looked up at that pc and around every start the
 * table lists, and each listed FDE's range is read. Beyond not crashing,
 * a row found must hold for a range that holds the pc, and a range must
 * not wrap.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/ehframe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Table entries looked up around, at most: a seed from a real binary has thousands. */
#define MAX_ENTRIES 256

static void lookup(const struct fg_ehframe *ef, uint64_t pc)
{
	struct fg_unwind_row row;
	uint64_t start, end;
	int r = fg_ehframe_row(ef, pc, &row, &start, &end);

	if (r != 0 && r != -ENOENT && r != -EINVAL && r != -EOPNOTSUPP)
		abort();
	if (r == 0 && (pc < start || pc >= end || row.cfa.reg >= FG_UNWIND_NREGS))
		abort();
}

static void range(const struct fg_ehframe *ef, size_t i)
{
	uint64_t start, end;
	int r = fg_ehframe_fde_range(ef, i, &start, &end);

	if (r != 0 && r != -EINVAL && r != -EOPNOTSUPP)
		abort();
	if (r == 0 && end < start)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t head[3];
	uint32_t hdr_size;
	struct fg_ehframe ef;

	if (size < sizeof(head) + sizeof(hdr_size))
		return 0;
	memcpy(head, data, sizeof(head));
	memcpy(&hdr_size, data + sizeof(head), sizeof(hdr_size));
	data += sizeof(head) + sizeof(hdr_size);
	size -= sizeof(head) + sizeof(hdr_size);
	if (hdr_size > size)
		return 0;
	if (fg_ehframe_init(&ef, data, hdr_size, head[1], data + hdr_size, size - hdr_size,
			    head[2]) < 0)
		return 0;
	lookup(&ef, head[0]);
	for (size_t i = 0; i < ef.fde_count && i < MAX_ENTRIES; i++) {
		range(&ef, i);
		for (uint64_t d = 0; d < 24; d += 5)
			lookup(&ef, fg_ehframe_entry(&ef, i) + d);
	}
	return 0;
}
