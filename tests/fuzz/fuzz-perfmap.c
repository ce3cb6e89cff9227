/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bytes are a perf map (/tmp/perf-PID.map), written by a process we do
 * not trust. The first byte picks how the rest is cut into appended chunks,
 * as the daemon reads a growing file. Beyond not crashing, every lookup must
 * agree with a brute-force search for the latest entry covering the address,
 * and every entry found must cover it.
 */
#include <stdlib.h>
#include <string.h>

#include "perf/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_lookup(struct fg_perfmap *m, uint64_t addr)
{
	struct fg_perfmap_stats st;
	int64_t i = fg_perfmap__lookup(m, addr), want = -1;
	uint64_t start, end;

	fg_perfmap__stats(m, &st);
	/* Brute force, bounded so the fuzzer stays fast. */
	if (st.entries <= 512) {
		for (uint64_t j = st.entries; j-- > 0;) {
			fg_perfmap__range(m, (uint32_t)j, &start, &end);
			if (start <= addr && addr < end) {
				want = (int64_t)j;
				break;
			}
		}
		if ((i < 0 ? -1 : i) != want)
			abort();
	}
	if (i < 0)
		return;
	fg_perfmap__range(m, (uint32_t)i, &start, &end);
	if ((uint64_t)i >= st.entries || addr < start || addr >= end || start >= end)
		abort();
	if (!fg_perfmap__name(m, (uint32_t)i) || !fg_perfmap__name(m, (uint32_t)i)[0])
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fg_perfmap_limits lim = { .max_line = 256,
					 .max_entries = 4096,
					 .max_name_bytes = 65536 };
	struct fg_perfmap_stats st;
	struct fg_perfmap *m = NULL;
	size_t chunk, off;

	if (size < 1 || size > 1 << 20)
		return 0;
	chunk = (size_t)data[0] + 1;
	data++, size--;
	if (fg_perfmap__new(&lim, &m) < 0)
		return 0;
	for (off = 0; off < size; off += chunk) {
		size_t n = size - off < chunk ? size - off : chunk;

		if (fg_perfmap__feed(m, data + off, n) < 0)
			break;
		/* Interleave lookups with appends: the index is folded many times. */
		if (off + n >= 8) {
			uint64_t a;

			memcpy(&a, data + off + n - 8, 8);
			check_lookup(m, a);
		}
	}
	fg_perfmap__stats(m, &st);
	if (st.entries + st.malformed > st.lines || st.bytes != size)
		abort();
	/* Addresses around every entry's edges, where off-by-ones live. */
	for (uint32_t i = 0; i < st.entries && i < 64; i++) {
		uint64_t start, end;

		fg_perfmap__range(m, i, &start, &end);
		check_lookup(m, start);
		check_lookup(m, start - 1);
		check_lookup(m, end - 1);
		check_lookup(m, end);
	}
	fg_perfmap__free(m);
	return 0;
}
