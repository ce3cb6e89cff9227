/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/macro.h"
#include "proto/proto.h"
#include "server/fgd-socket.h"

void fgd_socket_reject(int fd, const char *why)
{
	char line[256];
	int n = snprintf(
		line, sizeof(line),
		"{\"fgd\":%d,\"type\":\"error\",\"error\":\"EUSERS\",\"message\":\"%s\"}\n",
		FG_PROTO_VERSION, why);

	/* Best effort on a fresh socket: its buffer has room for one line. */
	(void)!send(fd, line, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	close(fd);
}

int fgd_socket_peer_in_group(int fd, const struct ucred *cred, gid_t gid)
{
	_cleanup_free_ gid_t *many = NULL;
	gid_t few[64], *groups = few;
	socklen_t len = sizeof(few);

	if (cred->gid == gid)
		return 1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0) {
		if (errno != ERANGE)
			return negative_errno();
		/* len is now what the list needs: NGROUPS_MAX gids at most. */
		many = malloc(len);
		if (!many)
			return -ENOMEM;
		groups = many;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
			return negative_errno();
	}
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == gid)
			return 1;
	return 0;
}

static int socket_in_use(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return negative_errno();
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	return connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
}

int fgd_socket_bind(const char *path, const char *group, int *ret_fd)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -1;
	size_t len = strlen(path);
	struct stat st;
	mode_t old;
	int r;

	if (len >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, len + 1);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return -EEXIST; /* never delete something that is not a socket */
		if (socket_in_use(path) > 0)
			return -EADDRINUSE;
		if (unlink(path) < 0)
			return negative_errno();
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return negative_errno();
	/* Born 0600: nobody can connect before the group is set. */
	old = umask(0177);
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (r < 0)
		return negative_errno();
	if (group) {
		struct group *g = getgrnam(group);

		if (!g) {
			unlink(path);
			return -ENOENT;
		}
		/* Never through a link: one swapped in after bind() would have its target changed. */
		if (fchownat(AT_FDCWD, path, (uid_t)-1, g->gr_gid, AT_SYMLINK_NOFOLLOW) < 0 ||
		    fchmodat(AT_FDCWD, path, 0660, AT_SYMLINK_NOFOLLOW) < 0) {
			r = negative_errno();
			unlink(path);
			return r;
		}
	}
	if (listen(fd, 64) < 0) {
		r = negative_errno();
		unlink(path);
		return r;
	}
	*ret_fd = TAKE_FD(fd);
	return 0;
}

int fgd_socket_adopt(int fd, char **ret_path)
{
	struct sockaddr_un sa = { 0 };
	socklen_t len = sizeof(sa);
	size_t n;
	char *p;

	if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
		return negative_errno();
	if (len <= offsetof(struct sockaddr_un, sun_path) || sa.sun_family != AF_UNIX)
		return -EINVAL;
	n = len - offsetof(struct sockaddr_un, sun_path);
	if (sa.sun_path[0] == '\0') { /* abstract: shown as @name, as ss(8) does */
		p = malloc(n + 1);
		if (!p)
			return -ENOMEM;
		p[0] = '@';
		memcpy(p + 1, sa.sun_path + 1, n - 1);
		p[n] = '\0';
	} else {
		p = strndup(sa.sun_path, n);
		if (!p)
			return -ENOMEM;
	}
	/* systemd hands sockets over blocking and inheritable. */
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
		free(p);
		return negative_errno();
	}
	*ret_path = p;
	return 0;
}
