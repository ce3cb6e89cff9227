/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * fgctl's output files: written beside the target under a temporary name
 * and renamed over it at the end, so a failed or interrupted run never
 * leaves a half-written file. "-" is stdout.
 */

#include <stdbool.h>
#include <stddef.h>

struct fgctl_output {
	const char *path; /* borrowed from argv; "-" is stdout */
	char *tmp_path;   /* owned; written, then renamed over path */
	int fd;
};

bool fgctl_is_directory(const char *path);

/* Opens the temporary file (or stdout); prints why it cannot. 0 or a negative errno. */
int fgctl_output_open(struct fgctl_output *o);
/* Writes all of p. 0 or a negative errno. */
int fgctl_output_write(struct fgctl_output *o, const char *p, size_t len);
/* Commits (fsync and rename) or discards (unlink) the output. 0 or a negative errno. */
int fgctl_output_close(struct fgctl_output *o, bool commit);
