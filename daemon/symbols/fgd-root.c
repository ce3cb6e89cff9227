/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/macro.h"
#include "symbols/fgd-root.h"

/* Containers on one host, with room to spare; past this, roots resolve nothing (counted). */
#define MAX_ROOTS 1024

struct root_key {
	uint64_t ns_dev, ns_ino;     /* the mount namespace (nsfs inode) */
	uint64_t root_dev, root_ino; /* the root directory within it */
};

struct fg_root {
	unsigned refs;
	int fd;      /* owned O_PATH descriptor of the root directory; -1: resolves nothing */
	bool own_ns; /* a chroot in the daemon's own mount namespace */
	struct root_key key;
};

struct fg_roots {
	struct root_key self;   /* the daemon's own */
	struct fg_root **roots; /* owned references */
	size_t n, cap;
	struct fg_root *unknown; /* owned reference */
	struct fg_roots_stats stats;
};

static struct fg_root *root_new(int fd, const struct root_key *key)
{
	struct fg_root *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->refs = 1;
	r->fd = fd;
	if (key)
		r->key = *key;
	return r;
}

struct fg_root *fg_root__ref(struct fg_root *r)
{
	if (r)
		r->refs++;
	return r;
}

struct fg_root *fg_root__unref(struct fg_root *r)
{
	if (!r || --r->refs > 0)
		return NULL;
	safe_close(r->fd);
	free(r);
	return NULL;
}

/* The identity of pid's root ("self" for ours); -ESRCH once it is gone. */
static int read_key(const char *pid, struct root_key *ret)
{
	char path[64];
	struct stat ns, root;

	snprintf(path, sizeof(path), "/proc/%s/ns/mnt", pid);
	if (stat(path, &ns) < 0)
		return errno == ENOENT ? -ESRCH : negative_errno();
	snprintf(path, sizeof(path), "/proc/%s/root", pid);
	if (stat(path, &root) < 0)
		return errno == ENOENT ? -ESRCH : negative_errno();
	*ret = (struct root_key){ ns.st_dev, ns.st_ino, root.st_dev, root.st_ino };
	return 0;
}

static bool key_eq(const struct root_key *a, const struct root_key *b)
{
	return a->ns_dev == b->ns_dev && a->ns_ino == b->ns_ino && a->root_dev == b->root_dev &&
	       a->root_ino == b->root_ino;
}

int fg_roots__new(struct fg_roots **ret)
{
	_cleanup_(fg_roots__freep) struct fg_roots *t = calloc(1, sizeof(*t));
	int r;

	if (!t)
		return -ENOMEM;
	r = read_key("self", &t->self);
	if (r < 0)
		return r;
	t->unknown = root_new(-1, NULL);
	if (!t->unknown)
		return -ENOMEM;
	*ret = TAKE_PTR(t);
	return 0;
}

struct fg_roots *fg_roots__free(struct fg_roots *t)
{
	if (!t)
		return NULL;
	for (size_t i = 0; i < t->n; i++)
		fg_root__unref(t->roots[i]);
	free(t->roots);
	fg_root__unref(t->unknown);
	free(t);
	return NULL;
}

struct fg_root *fg_roots__unknown(struct fg_roots *t)
{
	t->stats.roots_unknown++;
	return fg_root__ref(t->unknown);
}

int fg_roots__get(struct fg_roots *t, pid_t pid, struct fg_root *like, struct fg_root **ret)
{
	_cleanup_close_ int fd = -1;
	struct root_key key;
	struct fg_root *root;
	char name[16], path[64];
	struct stat st;
	int r;

	snprintf(name, sizeof(name), "%d", pid);
	r = read_key(name, &key);
	if (r < 0)
		return r;
	if (key_eq(&key, &t->self)) {
		*ret = NULL;
		return 0;
	}
	if (like && like->fd >= 0 && key_eq(&key, &like->key)) {
		*ret = fg_root__ref(like);
		return 0;
	}
	for (size_t i = 0; i < t->n; i++)
		if (key_eq(&key, &t->roots[i]->key)) {
			*ret = fg_root__ref(t->roots[i]);
			return 0;
		}
	if (t->n >= MAX_ROOTS) {
		t->stats.roots_dropped++;
		*ret = fg_roots__unknown(t);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/%d/root", pid);
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : negative_errno();
	/* The pid may have been reused between the stat and the open. */
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if ((uint64_t)st.st_dev != key.root_dev || (uint64_t)st.st_ino != key.root_ino)
		return -ESRCH;
	r = FG_GROW(t->roots, t->cap, t->n + 1);
	if (r < 0)
		return r;
	root = root_new(fd, &key);
	if (!root)
		return -ENOMEM;
	root->own_ns = key.ns_dev == t->self.ns_dev && key.ns_ino == t->self.ns_ino;
	TAKE_FD(fd);
	t->roots[t->n++] = root;
	t->stats.roots = t->n;
	*ret = fg_root__ref(root);
	return 0;
}

void fg_roots__prune(struct fg_roots *t)
{
	size_t kept = 0;

	for (size_t i = 0; i < t->n; i++) {
		if (t->roots[i]->refs == 1)
			fg_root__unref(t->roots[i]);
		else
			t->roots[kept++] = t->roots[i];
	}
	t->n = kept;
	t->stats.roots = t->n;
}

void fg_roots__stats(const struct fg_roots *t, struct fg_roots_stats *ret)
{
	*ret = t->stats;
}

struct fg_root *fg_root__of_proc_maps(struct fg_root *r)
{
	return r && r->own_ns ? NULL : r;
}

int fg_root__open(const struct fg_root *root, const char *path, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)flags,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	if (!root) {
		fd = open(path, flags);
		return fd < 0 ? negative_errno() : (int)fd;
	}
	if (root->fd < 0)
		return -ESRCH;
	fd = syscall(SYS_openat2, root->fd, path, &how, sizeof(how));
	return fd < 0 ? negative_errno() : (int)fd;
}

int fg_root__open_regular(const struct fg_root *root, const char *path)
{
	_cleanup_close_ int fd =
		fg_root__open(root, path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	return TAKE_FD(fd);
}
