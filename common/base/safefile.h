/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Files written without following links. Every file fgd and fgctl create
 * is created here: in a directory the caller opened, under a fresh name
 * (O_CREAT | O_EXCL | O_NOFOLLOW, a random suffix), written, then renamed
 * over its real name with renameat(). A link planted at either name is
 * never written through: O_EXCL refuses the temporary name whatever is
 * there, and renameat() replaces the real name's directory entry rather
 * than following it. A crash leaves the old file or the new one.
 *
 * The trust rules for paths a user names (which symlinks may be followed,
 * which directories may hold state) are here too, so that both programs
 * apply one rule.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Room for a temporary name: ".NAME.XXXXXX" for a NAME of up to NAME_MAX - 8 bytes. */
#define FG_SAFEFILE_TMP_MAX 256

/*
 * Creates a new temporary file in dir_fd beside name (".name.XXXXXX", a
 * random suffix), with mode (before the umask): its descriptor, its name
 * in tmp (FG_SAFEFILE_TMP_MAX bytes). Nothing there is followed or
 * reused; a name taken is drawn again. -ENAMETOOLONG for a name that
 * leaves no room, or the errno of openat().
 */
int fg_safefile_create(int dir_fd, const char *name, mode_t mode, char tmp[FG_SAFEFILE_TMP_MAX]);

/*
 * Renames tmp over name, both in dir_fd, and syncs the directory so that
 * the rename is on disk (the file's own data must have been synced by the
 * caller). On failure tmp is removed. 0 or a negative errno.
 */
int fg_safefile_commit(int dir_fd, const char *tmp, const char *name);

/*
 * Writes a whole file: fg_safefile_create(), all of data, fsync(), then
 * fg_safefile_commit(). On failure nothing is left but the old file.
 * 0 or a negative errno.
 */
int fg_safefile_write(int dir_fd, const char *name, const void *data, size_t len, mode_t mode);

/*
 * Whether a symlink may be followed, or a file's content believed, on
 * behalf of uid: only one owned by uid or by root. Anyone else's link
 * (planted in a directory they can write) could point the caller's write
 * anywhere; this is the rule the kernel's fs.protected_symlinks applies in
 * sticky directories, applied everywhere.
 */
bool fg_safefile_owned(const struct stat *st, uid_t uid);

/*
 * Whether a directory may hold uid's state (a cursor whose content decides
 * what is sent): only if no other user can replace what is in it. It must
 * be owned by uid or root, and writable by no group or other users, unless
 * sticky (as /tmp: others cannot then rename or remove uid's files). NULL
 * when it may; else why not, a static string for a message ("it is owned
 * by another user", ...).
 */
const char *fg_safefile_dir_unsafe(const struct stat *dir, uid_t uid);

/*
 * Opens the directory of path, relative to at_fd (AT_FDCWD, or a
 * directory), following links in it as the kernel does, into *ret_dir_fd
 * (O_RDONLY | O_DIRECTORY: fsync() works on it; caller closes), and points
 * *ret_name into path at its last component (borrowed from path). A path
 * that ends in "/" or names "." or ".." has no file name: -EISDIR. 0 or a
 * negative errno.
 */
int fg_safefile_open_dir(int at_fd, const char *path, int *ret_dir_fd, const char **ret_name);

/*
 * Resolves the links at the end of a path a user named for writing, one
 * at a time and only those fg_safefile_owned() allows for uid: into
 * *ret_dir_fd (O_PATH, caller closes) and *ret_name (caller frees), the
 * directory and name of the file to create or replace, which is a regular
 * file, something else that exists (a device, a FIFO: the caller tells by
 * fstatat()), or nothing yet. A link is read through a descriptor of its
 * own, so the link checked is the link followed. -EPERM for a link of
 * another user's (its uid in *ret_owner when not NULL), -ELOOP after 40
 * links, or a negative errno.
 */
int fg_safefile_resolve(const char *path, uid_t uid, int *ret_dir_fd, char **ret_name,
			uid_t *ret_owner);
