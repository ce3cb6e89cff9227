/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dwarf.h>
#include <errno.h>
#include <libelf.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "fgd-dwarf.h"
#include "macro.h"

/* Deeper inline nesting than this is not real code; it bounds the walk. */
#define MAX_SCOPES 256

struct fg_dwarf {
	Elf *elf;   /* owned; its bytes are in memory, no fd behind it */
	Dwarf *dbg; /* owned */
	uint64_t bytes;
};

struct fg_dwarf *fg_dwarf__free(struct fg_dwarf *d)
{
	if (!d)
		return NULL;
	if (d->dbg)
		dwarf_end(d->dbg);
	if (d->elf)
		elf_end(d->elf);
	free(d);
	return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_dwarf *, fg_dwarf__free);

int fg_dwarf__new(int fd, struct fg_dwarf **ret)
{
	_cleanup_(fg_dwarf__freep) struct fg_dwarf *d = NULL;
	struct stat st;

	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((uint64_t)st.st_size > FG_DWARF_MAX_FILE)
		return -EFBIG;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->bytes = (uint64_t)st.st_size;
	d->elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!d->elf || elf_kind(d->elf) != ELF_K_ELF)
		return -EINVAL;
	/* Everything in memory now: later reads never touch the fd, which the caller closes. */
	if (elf_cntl(d->elf, ELF_C_FDREAD) != 0)
		return -EIO;
	d->dbg = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL);
	if (!d->dbg)
		return (void)dwarf_errno(), -ENODATA;
	*ret = TAKE_PTR(d);
	return 0;
}

uint64_t fg_dwarf__bytes(const struct fg_dwarf *d)
{
	return d->bytes;
}

/* What addr2line prints: the linkage name, else the plain name; both through abstract origins. */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name;

	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (!name)
		name = dwarf_diename(die);
	return name && name[0] ? name : NULL;
}

size_t fg_dwarf__inlines(struct fg_dwarf *d, uint64_t vaddr, const char **ret_names, size_t max)
{
	_cleanup_free_ Dwarf_Die *scopes = NULL;
	Dwarf_Die cudie, innermost;
	size_t k = 0, n_inlined = 0;
	int n, fn;

	if (max == 0 || !dwarf_addrdie(d->dbg, vaddr, &cudie))
		return 0;
	n = dwarf_getscopes(&cudie, vaddr, &scopes);
	if (n <= 0)
		return 0;
	/*
	 * getscopes continues past an inlined instance into its abstract
	 * definition's scopes; the inlined-into chain is the innermost DIE's
	 * own nesting in the tree, as eu-addr2line -i takes it.
	 */
	innermost = scopes[0];
	free(TAKE_PTR(scopes));
	n = dwarf_getscopes_die(&innermost, &scopes);
	if (n <= 0)
		return 0;
	n = MIN(n, MAX_SCOPES);
	/* Innermost first: inlined instances (and blocks) up to the real function. */
	for (fn = 0; fn < n && dwarf_tag(&scopes[fn]) != DW_TAG_subprogram; fn++)
		n_inlined += dwarf_tag(&scopes[fn]) == DW_TAG_inlined_subroutine;
	if (fn == n || n_inlined == 0)
		return 0;
	for (int i = fn - 1; i >= 0 && k < max; i--) {
		const char *name;

		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		name = die_name(&scopes[i]);
		ret_names[k++] = name ? name : "[inlined]";
	}
	return k;
}

Dwarf *fg_dwarf__handle(struct fg_dwarf *d)
{
	return d->dbg;
}
