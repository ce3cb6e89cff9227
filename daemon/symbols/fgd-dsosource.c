/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "base/macro.h"
#include "symbols/fgd-dsosource.h"
#include "symbols/fgd-root.h"

void fg_dso_source_done(struct fg_dso_source *src)
{
	free(src->path);
	free(src->open_path);
	free(src->hint);
	fg_root__unref(src->root);
	*src = (struct fg_dso_source){};
}

int fg_dso_source_open(const struct fg_dso_source *src)
{
	const char *tries[] = { src->hint, src->open_path, src->path };
	int fd = -ENOENT;

	if (src->key.kind != FG_DSO_FILE)
		return -ENOENT;
	/* The /proc paths are the daemon's; the mapped path is the process's, under its root. */
	for (size_t i = 0; i < ELEMENTSOF(tries) && fd < 0; i++)
		if (tries[i])
			fd = fg_root__open_regular(tries[i] == src->path ? src->root : NULL,
						   tries[i]);
	return fd;
}
