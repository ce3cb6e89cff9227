/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Folded input comes from any tool and any user: parse, sort and re-emit it. */
#include <string.h>

#include "folded.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int discard(void *ctx, const void *buf, size_t len)
{
	*(size_t *)ctx += len;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fg_folded *f = fg_folded__new();
	const char *p = (const char *)data, *end = p + size;
	size_t cursor = 0, written = 0;

	if (!f)
		return 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		(void)fg_folded__add_line(f, p, len);
		p += len + 1;
	}
	if (fg_folded__sort(f) == 0)
		while (fg_folded__emit(f, &cursor, discard, &written, 4096) == 0)
			;
	fg_folded__free(f);
	return 0;
}
