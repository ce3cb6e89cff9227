/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The kernel's vDSO, read from the daemon's own address space: every
 * process on the machine maps the same image, so its symbols (and its CFI,
 * fgd-unwind.c) are read once, from ours.
 */

#include <stddef.h>

struct fg_elf_syms;

/*
 * The vDSO as mapped in the daemon itself (borrowed for the daemon's
 * life): 0, or -ENOENT, or the negative errno of reading /proc/self/maps.
 */
int fg_vdso_image(const void **ret, size_t *ret_size);

/* The vDSO's symbols (a copy of the image is read). Caller frees *ret with fg_elf_syms__free(). */
int fg_vdso_load_syms(struct fg_elf_syms **ret);
