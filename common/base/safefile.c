/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "base/macro.h"
#include "base/safefile.h"

/* Names drawn before giving up: each is 62^6 to one to be taken by chance. */
#define CREATE_TRIES 100
/* As the kernel's limit on links followed in one lookup. */
#define MAX_HOPS 40

static void random_suffix(char s[7])
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	uint8_t bytes[6];

	/* Unpredictable only to spare a retry: O_EXCL, not the name, is what is safe. */
	if (getrandom(bytes, sizeof(bytes), GRND_NONBLOCK) != (ssize_t)sizeof(bytes)) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		for (size_t i = 0; i < sizeof(bytes); i++)
			bytes[i] = (uint8_t)(ts.tv_nsec >> (i * 5)) ^ (uint8_t)getpid();
	}
	for (size_t i = 0; i < sizeof(bytes); i++)
		s[i] = set[bytes[i] % (sizeof(set) - 1)];
	s[6] = '\0';
}

int fg_safefile_create(int dir_fd, const char *name, mode_t mode, char tmp[FG_SAFEFILE_TMP_MAX])
{
	for (int i = 0; i < CREATE_TRIES; i++) {
		char suffix[7];
		int fd, n;

		random_suffix(suffix);
		n = snprintf(tmp, FG_SAFEFILE_TMP_MAX, ".%s.%s", name, suffix);
		if (n < 0 || n >= FG_SAFEFILE_TMP_MAX || n > NAME_MAX)
			return -ENAMETOOLONG;
		fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    mode);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return negative_errno();
	}
	return -EEXIST;
}

int fg_safefile_commit(int dir_fd, const char *tmp, const char *name)
{
	if (renameat(dir_fd, tmp, dir_fd, name) < 0) {
		int r = negative_errno();

		(void)unlinkat(dir_fd, tmp, 0);
		return r;
	}
	/* The rename itself must reach the disk before the file counts as written. */
	return fsync(dir_fd) < 0 ? negative_errno() : 0;
}

int fg_safefile_write(int dir_fd, const char *name, const void *data, size_t len, mode_t mode)
{
	char tmp[FG_SAFEFILE_TMP_MAX];
	_cleanup_close_ int fd = fg_safefile_create(dir_fd, name, mode, tmp);
	int r;

	if (fd < 0)
		return fd;
	r = fg_write_all(fd, data, len);
	if (r >= 0 && fsync(fd) < 0)
		r = negative_errno();
	if (r >= 0 && close(TAKE_FD(fd)) < 0)
		r = negative_errno();
	if (r < 0) {
		(void)unlinkat(dir_fd, tmp, 0);
		return r;
	}
	return fg_safefile_commit(dir_fd, tmp, name);
}

bool fg_safefile_owned(const struct stat *st, uid_t uid)
{
	return st->st_uid == uid || st->st_uid == 0;
}

const char *fg_safefile_dir_unsafe(const struct stat *dir, uid_t uid)
{
	if (!S_ISDIR(dir->st_mode))
		return "it is not a directory";
	if (!fg_safefile_owned(dir, uid))
		return "it is owned by another user, who could replace the file in it";
	if ((dir->st_mode & S_ISVTX) == 0 && (dir->st_mode & (S_IWGRP | S_IWOTH)))
		return "other users can write it (and it is not sticky), so they could replace "
		       "the file in it";
	return NULL;
}

int fg_safefile_open_dir(int at_fd, const char *path, int *ret_dir_fd, const char **ret_name)
{
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	_cleanup_free_ char *dir = NULL;
	int fd;

	if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return -EISDIR;
	if (!slash)
		dir = strdup(".");
	else if (slash == path)
		dir = strdup("/");
	else
		dir = strndup(path, (size_t)(slash - path));
	if (!dir)
		return -ENOMEM;
	fd = openat(at_fd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return negative_errno();
	*ret_dir_fd = fd;
	*ret_name = name;
	return 0;
}

int fg_safefile_resolve(const char *path, uid_t uid, int *ret_dir_fd, char **ret_name,
			uid_t *ret_owner)
{
	_cleanup_free_ char *cur = strdup(path);
	_cleanup_close_ int dir_fd = -1;

	if (!cur)
		return -ENOMEM;
	for (int hops = 0;; hops++) {
		_cleanup_close_ int next = -1, link_fd = -1;
		const char *name;
		char target[PATH_MAX];
		struct statfs fs;
		struct stat st;
		bool absent;
		ssize_t n;
		int r;

		/* A link's target is relative to the directory that holds the link. */
		r = fg_safefile_open_dir(dir_fd >= 0 ? dir_fd : AT_FDCWD, cur, &next, &name);
		if (r < 0)
			return r;
		absent = fstatat(next, name, &st, AT_SYMLINK_NOFOLLOW) < 0;
		if (absent && errno != ENOENT)
			return negative_errno();
		if (absent || !S_ISLNK(st.st_mode)) {
			char *copy = strdup(name);

			if (!copy)
				return -ENOMEM;
			*ret_dir_fd = TAKE_FD(next);
			*ret_name = copy;
			return 0;
		}
		if (hops == MAX_HOPS)
			return -ELOOP;
		/* /proc's links name open files, pipes and sockets: only the kernel follows them. */
		if (fstatfs(next, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC) {
			char *copy = strdup(name);

			if (!copy)
				return -ENOMEM;
			*ret_dir_fd = TAKE_FD(next);
			*ret_name = copy;
			return 1;
		}
		/* The link itself, so that the one whose owner is checked is the one read. */
		link_fd = openat(next, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (link_fd < 0 || fstat(link_fd, &st) < 0)
			return negative_errno();
		if (!S_ISLNK(st.st_mode))
			return -EAGAIN; /* replaced while looked at */
		if (!fg_safefile_owned(&st, uid)) {
			if (ret_owner)
				*ret_owner = st.st_uid;
			return -EPERM;
		}
		n = readlinkat(link_fd, "", target, sizeof(target) - 1);
		if (n < 0)
			return negative_errno();
		target[n] = '\0';
		free(cur);
		cur = strdup(target);
		if (!cur)
			return -ENOMEM;
		safe_close(dir_fd);
		dir_fd = TAKE_FD(next);
	}
}
