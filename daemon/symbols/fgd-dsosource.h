/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Where a binary's file may be read: a copy of what the symbolizer knows
 * of a dso (fgd-symbols.h: fg_dso__source() takes it), so that the
 * loader's thread can open the file while the loop goes on changing the
 * dso, and the choice of where to open it: the sampled process's
 * /proc/PID/map_files entry, else where the binary was last seen mapped,
 * else its path under the mapping process's root (fgd-root.h). Files are
 * opened only if regular, never blocking, and an opened file is checked to
 * be the binary mapped (fgd-binid.h). Any thread.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "symbols/fgd-binid.h"
#include "symbols/fgd-elffile.h"

struct fg_root;

/*
 * Where a dso's file may be read, copied so that another thread can open it
 * while the loop goes on changing the dso (fg_symbolizer__get_dso() updates
 * where it was last seen mapped).
 */
struct fg_dso_source {
	struct fg_dso_key key;
	char *path;           /* owned: the mapped path, resolved under root */
	char *open_path;      /* owned; may be NULL: where it was last seen mapped */
	char *hint;           /* owned; may be NULL: see fg_symbolizer__name_user()'s open_hint */
	struct fg_root *root; /* owned reference; NULL: the daemon's own */
	struct fg_elf_trust trust; /* which files may be mapped (fgd-elffile.h): the symbolizer's */
};

/* On the loop's thread, as it drops a reference to the root. */
void fg_dso_source_done(struct fg_dso_source *src);

/*
 * Opens the file: through the hint if given, else where it was last seen
 * mapped, else its path. Only regular files, never blocking. Returns an fd
 * the caller closes, or a negative errno (-ENOENT for a dso that is not a
 * file). The caller checks that the file is the one mapped
 * (fg_binid_is_file() with the source's key). Any thread.
 */
int fg_dso_source_open(const struct fg_dso_source *src);
