/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bytes are a history slice file, as found on disk after a crash, a
 * full disk or someone's editor. Each input is parsed as is, then again with
 * its checksum made right, so the body parser is reached too. A slice that
 * parses must have every index in range, its coverage in order within its
 * span, and merge with itself into a readable slice; one that does not is
 * given a reason (fg_slicefile_diagnose()).
 */
#include <stdlib.h>
#include <string.h>

#include "storage/slicefile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const uint8_t *data, size_t size)
{
	struct fg_slicefile *s;

	if (fg_slicefile__parse(data, size, &s) < 0) {
		(void)fg_slicefile_damage_name(fg_slicefile_diagnose(data, size));
		return;
	}
	for (size_t i = 0; i < fg_slicefile__n_coverage(s); i++) {
		const struct fg_slicefile_span *c = fg_slicefile__coverage(s, i);

		if (c->start_ns >= c->end_ns || c->start_ns < fg_slicefile__start(s) ||
		    c->end_ns > fg_slicefile__end(s) ||
		    (i > 0 && c->start_ns < fg_slicefile__coverage(s, i - 1)->end_ns))
			abort();
	}
	for (size_t i = 0; i < fg_slicefile__n_stacks(s); i++) {
		struct fg_slicefile_stack st;

		fg_slicefile__stack(s, i, &st);
		if (st.proc >= fg_slicefile__n_processes(s) || st.n == 0)
			abort();
		for (size_t k = 0; k < st.n; k++)
			(void)strlen(fg_slicefile__string(s, st.frames[k]));
	}
	for (size_t i = 0; i < fg_slicefile__n_times(s); i++)
		if (fg_slicefile__time(s, i)->stack >= fg_slicefile__n_stacks(s) ||
		    !fg_slicefile__time(s, i)->count)
			abort();
	/* Compaction of anything readable gives a readable slice, no bigger in stacks. */
	{
		const struct fg_slicefile *twice[2] = { s, s };
		struct fg_slicefile_writer *w;
		struct fg_slicefile *m;
		const uint8_t *out;
		size_t len;

		if (fg_slicefile_merge(twice, 2, 0, 1, &w) == 0) {
			if (fg_slicefile_writer__finish(w, &out, &len) == 0) {
				if (fg_slicefile__parse(out, len, &m) < 0 ||
				    fg_slicefile__n_stacks(m) > fg_slicefile__n_stacks(s))
					abort();
				fg_slicefile__free(m);
			}
			fg_slicefile_writer__free(w);
		}
	}
	fg_slicefile__free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;
	uint32_t crc;

	if (size > 1 << 20)
		return 0;
	check(data, size);
	if (size < 36)
		return 0;
	copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	crc = fg_crc32c(0, copy, size - 4);
	for (int i = 0; i < 4; i++)
		copy[size - 4 + i] = (uint8_t)(crc >> (8 * i));
	check(copy, size);
	free(copy);
	return 0;
}
