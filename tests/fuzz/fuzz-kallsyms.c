/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bytes are /proc/kallsyms text. Beyond not crashing, the table must keep
 * its invariants: strictly increasing addresses, and every function found at
 * its own start.
 */
#include <stdlib.h>
#include <string.h>

#include "perf/kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fg_kallsyms *k = NULL;
	size_t n;

	if (size > 1 << 20)
		return 0;
	if (fg_kallsyms__parse((const char *)data, size, &k) < 0)
		return 0;
	n = fg_kallsyms__count(k);
	if (fg_kallsyms__restricted(k) && n != 0)
		abort();
	for (size_t i = 0; i < n; i++) {
		uint64_t a = fg_kallsyms__addr(k, i);
		const char *m = fg_kallsyms__module(k, i);

		if (i > 0 && fg_kallsyms__addr(k, i - 1) >= a)
			abort();
		if (fg_kallsyms__lookup(k, a) != (int64_t)i)
			abort();
		if (!fg_kallsyms__name(k, i) || (m && !*m))
			abort();
		(void)fg_kallsyms__lookup(k, a - 1);
		(void)fg_kallsyms__lookup(k, a + FG_KALLSYMS_MAX_EXTENT);
	}
	/* Addresses taken from the input itself, so the fuzzer can steer them. */
	for (size_t off = 0; off + 8 <= size && off < 256; off += 8) {
		uint64_t a;
		int64_t i;

		memcpy(&a, data + off, 8);
		i = fg_kallsyms__lookup(k, a);
		if (i >= 0 && ((size_t)i >= n || fg_kallsyms__addr(k, (size_t)i) > a))
			abort();
	}
	fg_kallsyms__free(k);
	return 0;
}
