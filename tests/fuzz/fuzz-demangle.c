/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bytes are a symbol name from a binary a user made: demangling must
 * end, never overrun the buffer, and return a NUL-terminated string of the
 * length it says, whatever the buffer size.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/fgd-demangle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t sizes[] = { 1, 2, 7, 64, 4096 };
	char *name, *buf;

	if (size > FG_DEMANGLE_MAX_IN + 16)
		return 0;
	name = malloc(size + 1);
	if (!name)
		return 0;
	memcpy(name, data, size);
	name[size] = '\0';
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		int n;

		/* Exactly sized, so ASan sees any write past the end. */
		buf = malloc(sizes[i]);
		if (!buf)
			break;
		n = fg_demangle(name, buf, sizes[i]);
		if (n < 0 || (size_t)n >= sizes[i] || (n > 0 && strlen(buf) != (size_t)n))
			abort();
		free(buf);
	}
	free(name);
	return 0;
}
