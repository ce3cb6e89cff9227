/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bytes are an ELF file a user could make the daemon read. Loading must
 * fail cleanly or give a table that keeps its invariants: increasing
 * addresses, non-empty extents, every symbol found at its own start and by
 * its name, PLT entries (x86-64 ones are reached from the input's own
 * relocations and code) one entry long.
 */
#include <stdlib.h>
#include <string.h>

#include "symbols/fgd-elffile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fg_elf_syms *s = NULL;
	const uint8_t *id = NULL;
	size_t n, id_len;
	uint64_t v;

	if (size > 1 << 20)
		return 0;
	if (fg_elf_syms__load_mem(data, size, &s) < 0) {
		if (s)
			abort();
		return 0;
	}
	n = fg_elf_syms__count(s);
	for (size_t i = 0; i < n; i++) {
		uint64_t a = fg_elf_syms__addr(s, i), sz = fg_elf_syms__size(s, i);
		const char *name = fg_elf_syms__name(s, i);
		int64_t last;

		if (i > 0 && fg_elf_syms__addr(s, i - 1) >= a)
			abort();
		if (sz == 0 || a + sz < a || !name || !*name)
			abort();
		if (fg_elf_syms__lookup(s, a) != (int64_t)i)
			abort();
		/* Its last byte is its own, a nested symbol's, or nobody's (the nested tail). */
		last = fg_elf_syms__lookup(s, a + sz - 1);
		if (last < -1 || (last >= 0 && last < (int64_t)i))
			abort();
		if (fg_elf_syms__find(s, name) < 0)
			abort();
		if (strstr(name, "@plt") && sz != 8 && sz != 16)
			abort();
		(void)fg_elf_syms__lookup(s, a + sz);
	}
	id_len = fg_elf_syms__build_id(s, &id);
	if (id_len > 0 && (!id || id_len > 64))
		abort();
	for (size_t i = 0; i < id_len; i++)
		(void)__atomic_load_n(&id[i], __ATOMIC_RELAXED);
	/* Offsets from the input itself, so the fuzzer can steer them into segments. */
	for (size_t off = 0; off + 8 <= size && off < 512; off += 8) {
		uint64_t o;

		memcpy(&o, data + off, 8);
		if (fg_elf_syms__offset_to_vaddr(s, o, &v) == 0)
			(void)fg_elf_syms__lookup(s, v);
		if (fg_elf_syms__offset_to_vaddr(s, off, &v) == 0)
			(void)fg_elf_syms__lookup(s, v);
	}
	fg_elf_syms__free(s);
	return 0;
}
