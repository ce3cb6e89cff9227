/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Where a process sees the filesystem: its mount namespace and its root
 * directory. A path in a process's mappings means something only there: a
 * process in a container (another mount namespace, or a chroot) names files
 * that on the host are missing, or are other files with the same name.
 *
 * A root is captured when a process is first seen, as an O_PATH descriptor
 * of /proc/PID/root, and shared by every process with the same namespace and
 * root directory. Paths are resolved under it with openat2(RESOLVE_IN_ROOT),
 * so absolute symlinks and ".." stay inside the container, and it keeps
 * working after the process, or every process of the container, has exited
 * (files on submounts of a namespace that died are out of reach then).
 *
 * The daemon's own root is NULL: its paths are opened as they are. A root
 * that could not be captured (the process was gone, the table was full) has
 * no descriptor: it resolves nothing, rather than fall back to the host.
 */

#include "base/macro.h"
#include <stdint.h>
#include <sys/types.h>

struct fg_root;
struct fg_roots;

struct fg_roots_stats {
	uint64_t roots;         /* distinct foreign roots held now */
	uint64_t roots_dropped; /* refused at the cap */
	uint64_t roots_unknown; /* processes whose root could not be read */
};

/* Caller frees *ret with fg_roots__free(). Reads the daemon's own root to compare with. */
int fg_roots__new(struct fg_roots **ret);
/* Drops the table's references; roots still referenced elsewhere live on. */
struct fg_roots *fg_roots__free(struct fg_roots *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_roots *, fg_roots__free);

/*
 * The root of process pid. Stores in *ret a new reference (caller drops it
 * with fg_root__unref()), or NULL for the daemon's own root. like (may be
 * NULL, borrowed) is the root the process most likely shares (its parent's,
 * or its previous generation's): when it matches, nothing is opened.
 * Returns 0, or a negative errno (-ESRCH: the process is gone) and leaves
 * *ret untouched.
 */
int fg_roots__get(struct fg_roots *t, pid_t pid, struct fg_root *like, struct fg_root **ret);

/* A new reference to the root that resolves nothing, for a process never read; counted. */
struct fg_root *fg_roots__unknown(struct fg_roots *t);

/* Closes roots nobody but the table references any more. */
void fg_roots__prune(struct fg_roots *t);

void fg_roots__stats(const struct fg_roots *t, struct fg_roots_stats *ret);

/*
 * Where the paths the daemon reads in /proc/PID/maps are to be resolved, for
 * a process whose root is r. The kernel writes them as the reader sees them:
 * a chroot in the daemon's own mount namespace shows host paths there (NULL),
 * a process in another namespace paths from that namespace's top, which is
 * its root when the container pivoted into it (r). Perf's MMAP2 records name
 * files as the process itself sees them: always r.
 */
struct fg_root *fg_root__of_proc_maps(struct fg_root *r);

struct fg_root *fg_root__ref(struct fg_root *r);
struct fg_root *fg_root__unref(struct fg_root *r);

/*
 * Opens path (absolute, as the process named it) as the process would see
 * it, with open(2) flags; magic links (/proc/PID/fd/...) are refused. root
 * NULL opens path on the daemon's own root. Returns an fd, or a negative
 * errno: -ESRCH when root resolves nothing.
 */
int fg_root__open(const struct fg_root *root, const char *path, int flags);

/*
 * Opens path, as seen from root (NULL: ours), for reading if it is a
 * regular file: a binary or a debug file to read. Never blocks: paths come
 * from other users' processes, and a FIFO or a device there must not stall
 * the daemon. Returns an fd the caller closes, or fg_root__open()'s
 * negative errno, or -EINVAL: not a regular file.
 */
int fg_root__open_regular(const struct fg_root *root, const char *path);
