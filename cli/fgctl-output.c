/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fgctl-output.h"
#include "macro.h"

bool fgctl_is_directory(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int fgctl_output_open(struct fgctl_output *o)
{
	o->fd = -1;
	if (strcmp(o->path, "-") == 0) {
		o->fd = STDOUT_FILENO;
		return 0;
	}
	/* Write beside the target and rename at the end: no half-written file on failure. */
	if (asprintf(&o->tmp_path, "%s.fgctl-%d.tmp", o->path, getpid()) < 0)
		return -ENOMEM;
	o->fd = open(o->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (o->fd < 0) {
		int r = negative_errno();

		fprintf(stderr, "fgctl: cannot write %s: %s\n", o->path, strerror(-r));
		free(o->tmp_path);
		o->tmp_path = NULL;
		return r;
	}
	return 0;
}

int fgctl_output_write(struct fgctl_output *o, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(o->fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int fgctl_output_close(struct fgctl_output *o, bool commit)
{
	int r = 0;

	if (o->fd < 0 || o->fd == STDOUT_FILENO)
		return 0;
	if (commit && (fsync(o->fd) < 0 || close(o->fd) < 0))
		r = negative_errno();
	else if (!commit)
		close(o->fd);
	o->fd = -1;
	if (commit && r == 0 && rename(o->tmp_path, o->path) < 0)
		r = negative_errno();
	if (!commit || r < 0)
		unlink(o->tmp_path);
	free(o->tmp_path);
	o->tmp_path = NULL;
	return r;
}
