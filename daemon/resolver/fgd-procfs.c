/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "base/macro.h"
#include "resolver/fgd-procfs.h"

/*
 * A status file is a couple of KiB; its Groups line grows with the
 * supplementary groups, up to 65536 of them (some 720 KiB).
 */
#define MAX_STATUS_BYTES (1u << 20)

int fg_procfs_status(pid_t pid, struct fg_proc_status *ret, uid_t *ret_file_uid)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *text = NULL;
	struct stat st;
	char path[64];
	size_t len;
	int r;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return negative_errno();
	if (ret_file_uid) {
		if (fstat(fd, &st) < 0)
			return negative_errno();
		*ret_file_uid = st.st_uid;
	}
	r = fg_read_fd(fd, MAX_STATUS_BYTES, &text, &len);
	if (r < 0)
		return r;
	fg_proc_status_parse(text, ret);
	return 0;
}
