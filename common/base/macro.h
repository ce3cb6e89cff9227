/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Cleanup attributes and small helpers shared by every fgd module, in the
 * spirit of systemd's cleanup-fundamental.h.
 */

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _likely_(x) __builtin_expect(!!(x), 1)
#define _unlikely_(x) __builtin_expect(!!(x), 0)
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _noreturn_ __attribute__((noreturn))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define ALIGN_TO(x, a) (((x) + (a)-1) & ~((__typeof__(x))(a)-1))

/* Hand a pointer or fd out of a _cleanup_ local so it is not released. */
#define TAKE_PTR(p)                       \
	({                                \
		__typeof__(p) _tp_ = (p); \
		(p) = NULL;               \
		_tp_;                     \
	})
#define TAKE_FD(fd)              \
	({                       \
		int _tf_ = (fd); \
		(fd) = -1;       \
		_tf_;            \
	})

/* Declare type##p, a cleanup function calling func on a non-NULL pointer. */
#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func) \
	static inline void func##p(type *p)     \
	{                                       \
		if (*p)                         \
			(void)func(*p);         \
	}

static inline void freep(void *p)
{
	free(*(void **)p);
}
#define _cleanup_free_ _cleanup_(freep)

/* close() that preserves errno and accepts -1; returns -1 for "fd = safe_close(fd)". */
static inline int safe_close(int fd)
{
	if (fd >= 0) {
		int saved = errno;
		close(fd);
		errno = saved;
	}
	return -1;
}

static inline void closep(int *fd)
{
	safe_close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

static inline void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

/* errno of the last failure as a negative value, never 0. */
static inline int negative_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

/*
 * Grow *array (of *cap elements of size elem) so it holds at least need
 * elements. Amortised doubling; refuses sizes whose byte count overflows.
 */
int fg_grow(void **array, size_t *cap, size_t need, size_t elem);
#define FG_GROW(arr, cap, need) fg_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))

/* Writes all len bytes to fd, through short writes and EINTR. 0 or a negative errno. */
int fg_write_all(int fd, const void *data, size_t len);
/*
 * Reads fd to its end, at most max bytes (below SIZE_MAX), into *ret_text
 * (NUL-terminated; caller frees) and *ret_len. 0, -EFBIG for more, or a
 * negative errno. fg_read_file() opens path first.
 */
int fg_read_fd(int fd, size_t max, char **ret_text, size_t *ret_len);
int fg_read_file(const char *path, size_t max, char **ret_text, size_t *ret_len);
