/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The registers and the stack dump come from the sampled process, which
 * controls both; the rows come from its binaries' CFI. The bytes are: the
 * 17 registers in perf's order, a row count (at most 4) and that many raw
 * rows (each applies to the pcs whose low bits select it, the others have
 * no CFI), then the stack dump. Beyond not crashing, the walk must respect
 * its limit and leave every stored pc reachable.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/unwind.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct rows {
	struct fg_unwind_row rows[4];
	size_t n;
};

static int row_of(void *ctx, uint64_t pc, struct fg_unwind_row *ret)
{
	const struct rows *r = ctx;
	size_t i = (size_t)(pc % 5);

	if (i >= r->n)
		return -ENOENT;
	*ret = r->rows[i];
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t perf[17], pcs[16];
	struct fg_unwind_regs regs;
	struct fg_unwind_result res;
	struct fg_unwind_stack stack;
	struct rows rows = {};

	if (size < sizeof(perf) + 1)
		return 0;
	memcpy(perf, data, sizeof(perf));
	data += sizeof(perf);
	size -= sizeof(perf);
	rows.n = *data % 5;
	data++;
	size--;
	for (size_t i = 0; i < rows.n; i++) {
		uint8_t flag;

		if (size < sizeof(rows.rows[i])) {
			rows.n = i;
			break;
		}
		memcpy(&rows.rows[i], data, sizeof(rows.rows[i]));
		/* Any byte but a bool's two values is not a row a parser can produce. */
		memcpy(&flag, &rows.rows[i].signal_frame, 1);
		rows.rows[i].signal_frame = flag & 1;
		data += sizeof(rows.rows[i]);
		size -= sizeof(rows.rows[i]);
	}
	if (fg_unwind_regs_from_perf(perf, 17, &regs) < 0)
		abort();
	stack = (struct fg_unwind_stack){ regs.v[FG_REG_RSP], data, size };
	fg_unwind(&regs, &stack, row_of, &rows, pcs, 16, &res);
	if (res.n > 16 || res.fp_frames > res.n)
		abort();
	if (res.n > 0 && pcs[0] != regs.v[FG_REG_RA])
		abort();
	return 0;
}
