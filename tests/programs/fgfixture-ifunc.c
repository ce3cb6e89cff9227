/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A library calling an IFUNC of its own, as glibc calls its string
 * functions: the PLT entry's GOT slot has an R_X86_64_IRELATIVE relocation
 * (no symbol; the resolver's address as addend), which the ELF symbol
 * tests name after the IFUNC, fgfixture_pick@plt.
 */
#include <stddef.h>

static size_t pick_plain(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

static void *fgfixture_pick_resolve(void)
{
	return (void *)pick_plain;
}

static size_t fgfixture_pick(const char *s) __attribute__((ifunc("fgfixture_pick_resolve")));

size_t fgfixture_ifunc_call(const char *s);
size_t fgfixture_ifunc_call(const char *s)
{
	return fgfixture_pick(s) + 1;
}
