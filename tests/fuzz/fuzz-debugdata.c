/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bytes are a .gnu_debugdata section (MiniDebugInfo): an xz stream that
 * should inflate to an ELF image holding a symbol table. A user can put any
 * bytes there. Inflating is capped and the image goes through the checked
 * ELF reader: loading must fail cleanly or give a table that keeps its
 * invariants.
 */
#include <stdlib.h>

#include "symbols/fgd-elffile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fg_elf_syms *s = NULL;
	size_t n;

	if (size > 1 << 20)
		return 0;
	if (fg_elf_syms__load_debugdata_mem(data, size, &s) < 0) {
		if (s)
			abort();
		return 0;
	}
	n = fg_elf_syms__count(s);
	for (size_t i = 0; i < n; i++) {
		uint64_t a = fg_elf_syms__addr(s, i), sz = fg_elf_syms__size(s, i);
		const char *name = fg_elf_syms__name(s, i);

		if (i > 0 && fg_elf_syms__addr(s, i - 1) >= a)
			abort();
		if (sz == 0 || a + sz < a || !name || !*name)
			abort();
		if (fg_elf_syms__lookup(s, a) != (int64_t)i || fg_elf_syms__find(s, name) < 0)
			abort();
	}
	fg_elf_syms__free(s);
	return 0;
}
