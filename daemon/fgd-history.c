/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fgd-history.h"
#include "macro.h"

#define SUFFIX ".fgdh"
#define TMP_SUFFIX ".tmp"
/* START-END.fgdh, both %020 */
#define NAME_LEN (20 + 1 + 20 + sizeof(SUFFIX) - 1)
/* A slice file larger than this is not one fgd wrote. */
#define MAX_FILE (256U << 20)

struct entry {
	uint64_t start, end, bytes;
};

struct fg_history {
	int dir_fd;                 /* owned: dir/slices */
	struct fg_history_stats stats;
};

/* Parses "START-END.fgdh"; false for any other name (temporary files included). */
static bool parse_name(const char *name, struct entry *ret)
{
	unsigned long long start, end;
	int used = 0;

	if (strlen(name) != NAME_LEN ||
	    sscanf(name, "%20llu-%20llu" SUFFIX "%n", &start, &end, &used) != 2 ||
	    (size_t)used != NAME_LEN)
		return false;
	ret->start = start;
	ret->end = end;
	return true;
}

static void format_name(char buf[static NAME_LEN + 1], uint64_t start, uint64_t end)
{
	snprintf(buf, NAME_LEN + 1, "%020" PRIu64 "-%020" PRIu64 SUFFIX, start, end);
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->end > y->end) - (x->end < y->end);
}

/*
 * The slices in the directory, sorted by time, in *ret (caller frees).
 * Torn temporary files are removed when clean_temp is set.
 */
static int list(struct fg_history *h, bool clean_temp, struct entry **ret, size_t *ret_n)
{
	_cleanup_free_ struct entry *v = NULL;
	size_t n = 0, cap = 0;
	DIR *d;
	int fd = dup(h->dir_fd);
	struct dirent *de;

	if (fd < 0)
		return negative_errno();
	d = fdopendir(fd);
	if (!d) {
		safe_close(fd);
		return negative_errno();
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		struct entry e;
		struct stat st;
		size_t len = strlen(de->d_name);

		if (clean_temp && len > strlen(TMP_SUFFIX) &&
		    strcmp(de->d_name + len - strlen(TMP_SUFFIX), TMP_SUFFIX) == 0) {
			if (unlinkat(h->dir_fd, de->d_name, 0) == 0)
				h->stats.temp_removed++;
			continue;
		}
		if (!parse_name(de->d_name, &e) ||
		    fstatat(h->dir_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		e.bytes = (uint64_t)st.st_size;
		if (FG_GROW(v, cap, n + 1) < 0) {
			closedir(d);
			return -ENOMEM;
		}
		v[n++] = e;
	}
	closedir(d);
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_entry);
	*ret = TAKE_PTR(v);
	*ret_n = n;
	return 0;
}

static void recount(struct fg_history *h, const struct entry *v, size_t n)
{
	h->stats.files = n;
	h->stats.bytes = 0;
	for (size_t i = 0; i < n; i++)
		h->stats.bytes += v[i].bytes;
}

int fg_history__open(const char *dir, struct fg_history **ret)
{
	_cleanup_free_ struct entry *v = NULL;
	_cleanup_close_ int base = -1;
	struct fg_history *h;
	size_t n;
	int r;

	if (mkdir(dir, 0750) < 0 && errno != EEXIST)
		return negative_errno();
	base = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (base < 0)
		return negative_errno();
	if (mkdirat(base, "slices", 0750) < 0 && errno != EEXIST)
		return negative_errno();
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->dir_fd = openat(base, "slices", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (h->dir_fd < 0) {
		r = negative_errno();
		free(h);
		return r;
	}
	r = list(h, true, &v, &n);
	if (r < 0) {
		fg_history__free(h);
		return r;
	}
	recount(h, v, n);
	*ret = h;
	return 0;
}

struct fg_history *fg_history__free(struct fg_history *h)
{
	if (!h)
		return NULL;
	safe_close(h->dir_fd);
	free(h);
	return NULL;
}

static int store(struct fg_history *h, const char *name, const char *tmp, const uint8_t *data,
		 size_t len)
{
	_cleanup_close_ int fd = openat(h->dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
	int r;

	if (fd < 0)
		return negative_errno();
	r = fg_write_all(fd, data, len);
	if (r >= 0 && fsync(fd) < 0)
		r = negative_errno();
	if (r >= 0 && renameat(h->dir_fd, tmp, h->dir_fd, name) < 0)
		r = negative_errno();
	/* The rename itself must reach the disk before the slice counts as stored. */
	if (r >= 0 && fsync(h->dir_fd) < 0)
		r = negative_errno();
	if (r < 0)
		(void)unlinkat(h->dir_fd, tmp, 0);
	return r;
}

int fg_history__store(struct fg_history *h, uint64_t start_ns, uint64_t end_ns, const uint8_t *data,
		      size_t len)
{
	char name[NAME_LEN + 1], tmp[NAME_LEN + sizeof(TMP_SUFFIX)];
	int r;

	format_name(name, start_ns, end_ns);
	snprintf(tmp, sizeof(tmp), "%s" TMP_SUFFIX, name);
	r = start_ns <= end_ns && len <= MAX_FILE ? store(h, name, tmp, data, len) : -EINVAL;
	if (r < 0) {
		h->stats.write_errors++;
		h->stats.last_write_error = r;
		return r;
	}
	h->stats.written++;
	h->stats.files++;
	h->stats.bytes += len;
	return 0;
}

/* Reads a whole slice file; -EFBIG past MAX_FILE. */
static int read_file(struct fg_history *h, const char *name, uint8_t **ret, size_t *ret_len)
{
	_cleanup_close_ int fd = openat(h->dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	_cleanup_free_ uint8_t *buf = NULL;
	struct stat st;
	size_t got = 0;

	if (fd < 0)
		return negative_errno();
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((uint64_t)st.st_size > MAX_FILE)
		return -EFBIG;
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf)
		return -ENOMEM;
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return negative_errno();
		if (n == 0)
			break; /* shrank under us: the parser sees a short file */
		got += (size_t)n;
	}
	*ret = TAKE_PTR(buf);
	*ret_len = got;
	return 0;
}

int fg_history__read(struct fg_history *h, uint64_t from_ns, uint64_t to_ns, fg_history_fn fn,
		     void *ctx)
{
	_cleanup_free_ struct entry *v = NULL;
	size_t n;
	int r = list(h, false, &v, &n);

	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		char name[NAME_LEN + 1];
		_cleanup_free_ uint8_t *data = NULL;
		struct fg_slicefile *s;
		size_t len;

		if (v[i].end <= from_ns || v[i].start >= to_ns)
			continue;
		format_name(name, v[i].start, v[i].end);
		r = read_file(h, name, &data, &len);
		if (r == -ENOENT)
			continue; /* pruned meanwhile */
		if (r == -ENOMEM)
			return r;
		if (r >= 0)
			r = fg_slicefile__parse(data, len, &s);
		if (r == -EPROTONOSUPPORT) {
			h->stats.future++;
			continue;
		}
		if (r == -ENOMEM)
			return r;
		if (r < 0) {
			h->stats.corrupt++;
			continue;
		}
		r = fn(ctx, s);
		fg_slicefile__free(s);
		if (r < 0)
			return r;
	}
	return 0;
}

int fg_history__prune(struct fg_history *h, uint64_t max_bytes)
{
	_cleanup_free_ struct entry *v = NULL;
	uint64_t total = 0;
	size_t n, i;
	int r = list(h, false, &v, &n);

	if (r < 0)
		return r;
	for (i = 0; i < n; i++)
		total += v[i].bytes;
	for (i = 0; i < n && total > max_bytes; i++) {
		char name[NAME_LEN + 1];

		format_name(name, v[i].start, v[i].end);
		if (unlinkat(h->dir_fd, name, 0) < 0 && errno != ENOENT)
			return negative_errno();
		total -= v[i].bytes;
		h->stats.pruned++;
	}
	recount(h, v + i, n - i);
	return 0;
}

void fg_history__stats(const struct fg_history *h, struct fg_history_stats *ret)
{
	*ret = h->stats;
}
