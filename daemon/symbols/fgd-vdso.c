/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>

#include "base/macro.h"
#include "symbols/fgd-elffile.h"
#include "symbols/fgd-vdso.h"

int fg_vdso_image(const void **ret, size_t *ret_size)
{
	_cleanup_(fclosep) FILE *f = NULL;
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	char line[512];

	if (!base)
		return -ENOENT;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return negative_errno();
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;

		if (sscanf(line, "%lx-%lx", &start, &end) == 2 && start == base &&
		    strstr(line, "[vdso]")) {
			*ret = (const void *)start;
			*ret_size = end - start;
			return 0;
		}
	}
	return -ENOENT;
}

int fg_vdso_load_syms(struct fg_elf_syms **ret)
{
	const void *image;
	size_t size;
	int r = fg_vdso_image(&image, &size);

	return r < 0 ? r : fg_elf_syms__load_mem(image, size, ret);
}
