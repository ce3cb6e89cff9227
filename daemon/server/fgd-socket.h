/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The server's listening socket (fgd-server.h): bound by fgd with the
 * permissions that keep it safe, or passed by systemd and adopted, and what
 * the kernel says of a peer that connects. The server accepts and serves
 * the connections; this file knows only the socket.
 */

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>

/*
 * Binds and listens on the Unix socket path, born 0600, then with group
 * 0660 and owned by that group (NULL: root only). An old socket nobody
 * listens on is replaced; anything else at path is left alone (-EEXIST,
 * -EADDRINUSE). -ENOENT for an unknown group, -ENAMETOOLONG, or another
 * negative errno; the file is removed on failure. *ret_fd is non-blocking
 * and close-on-exec; the caller closes it and unlinks path.
 */
int fgd_socket_bind(const char *path, const char *group, int *ret_fd);

/*
 * Takes over fd, a listening socket systemd passed: made non-blocking and
 * close-on-exec. The path it is bound to in *ret_path ("@name" for an
 * abstract one, as ss(8) shows it); caller frees *ret_path with free().
 */
int fgd_socket_adopt(int fd, char **ret_path);

/*
 * Whether the peer on fd is in group gid: its gid, or one of the
 * supplementary groups it had when it connected (SO_PEERGROUPS). These are
 * the kernel's, as SO_PEERCRED's uid is: no user database is asked from the
 * loop, and a process that dropped the group is not in it. 1, 0, or a
 * negative errno.
 */
int fgd_socket_peer_in_group(int fd, const struct ucred *cred, gid_t gid);

/*
 * Turns away a connection that gets no slot: an EUSERS error line with why
 * (static, no character JSON escapes), best effort, then closes fd.
 */
void fgd_socket_reject(int fd, const char *why);
