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

/* Groups a later format version keeps from merging, remembered so as not to retry them. */
#define MAX_BLOCKED 16

struct fg_history {
	int dir_fd; /* owned: dir/slices */
	struct fg_history_stats stats;
	uint64_t cursor; /* compaction goes on from the group after this time */
	/* the latest end of a file: a slice starting before it is out of order */
	uint64_t newest_end;
	uint64_t blocked[MAX_BLOCKED]; /* starts of groups not to merge (a ring) */
	size_t n_blocked;
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
		    fstatat(h->dir_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
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

/* The spans of v[0..n) for the plan, each file's fate KEEP or LEFTOVER. Caller frees *ret. */
static int spans(const struct entry *v, size_t n, struct fg_compaction_file **ret)
{
	struct fg_compaction_file *f = calloc(n ? n : 1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		f[i] = (struct fg_compaction_file){ .start = v[i].start, .end = v[i].end };
	fg_compaction_leftovers(f, n);
	*ret = f;
	return 0;
}

/* Deletes one slice file; a file already gone is fine. 0 or a negative errno. */
static int remove_file(struct fg_history *h, const struct entry *e)
{
	char name[NAME_LEN + 1];

	format_name(name, e->start, e->end);
	if (unlinkat(h->dir_fd, name, 0) < 0 && errno != ENOENT)
		return negative_errno();
	return 0;
}

/* Deletes the leftovers of a crashed merge; v[0..*n) keeps the other files. */
static int remove_leftovers(struct fg_history *h, struct entry *v, size_t *n)
{
	_cleanup_free_ struct fg_compaction_file *f = NULL;
	size_t kept = 0;
	int r = spans(v, *n, &f);

	if (r < 0)
		return r;
	for (size_t i = 0; i < *n; i++) {
		if (f[i].fate != FG_COMPACTION_LEFTOVER) {
			v[kept++] = v[i];
			continue;
		}
		r = remove_file(h, &v[i]);
		if (r < 0)
			return r;
		h->stats.leftovers++;
	}
	*n = kept;
	return 0;
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
	if (r >= 0)
		r = remove_leftovers(h, v, &n);
	if (r < 0) {
		fg_history__free(h);
		return r;
	}
	recount(h, v, n);
	for (size_t i = 0; i < n; i++)
		h->newest_end = MAX(h->newest_end, v[i].end);
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
	_cleanup_close_ int fd =
		openat(h->dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
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

/* Stores the slice file for [start_ns, end_ns). 0 or a negative errno. */
static int store_span(struct fg_history *h, uint64_t start_ns, uint64_t end_ns, const uint8_t *data,
		      size_t len)
{
	char name[NAME_LEN + 1], tmp[NAME_LEN + sizeof(TMP_SUFFIX)];

	format_name(name, start_ns, end_ns);
	snprintf(tmp, sizeof(tmp), "%s" TMP_SUFFIX, name);
	return start_ns <= end_ns && len <= MAX_FILE ? store(h, name, tmp, data, len) : -EINVAL;
}

/*
 * True if [start, end) nests with a file already stored (either within the
 * other, or the same span): the two would read as a crashed merge's
 * leftover and its merged file. Slices of one clock never nest; a wall clock
 * set back can make them.
 */
static int nests(struct fg_history *h, uint64_t start, uint64_t end, bool *ret)
{
	_cleanup_free_ struct entry *v = NULL;
	size_t n;
	int r;

	*ret = false;
	if (start >= h->newest_end)
		return 0; /* in order: the directory need not be read */
	r = list(h, false, &v, &n);
	for (size_t i = 0; r >= 0 && i < n && !*ret; i++)
		*ret = (v[i].start <= start && end <= v[i].end) ||
		       (start <= v[i].start && v[i].end <= end);
	return r;
}

int fg_history__store(struct fg_history *h, uint64_t start_ns, uint64_t end_ns, const uint8_t *data,
		      size_t len)
{
	bool nested;
	int r = nests(h, start_ns, end_ns, &nested);

	if (r >= 0 && nested) {
		h->stats.out_of_order++;
		r = -ERANGE;
	}
	if (r >= 0)
		r = store_span(h, start_ns, end_ns, data, len);
	if (r < 0) {
		h->stats.write_errors++;
		h->stats.last_write_error = r;
		return r;
	}
	h->newest_end = MAX(h->newest_end, end_ns);
	h->stats.written++;
	h->stats.files++;
	h->stats.bytes += len;
	return 0;
}

/* Reads a whole slice file; -EFBIG past MAX_FILE. */
static int read_file(struct fg_history *h, const char *name, uint8_t **ret, size_t *ret_len)
{
	_cleanup_close_ int fd =
		openat(h->dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	char *data;
	int r;

	if (fd < 0)
		return negative_errno();
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((uint64_t)st.st_size > MAX_FILE)
		return -EFBIG;
	/* One that shrank under us is short: the parser says so. */
	r = fg_read_fd(fd, MAX_FILE, &data, ret_len);
	if (r >= 0)
		*ret = (uint8_t *)data;
	return r;
}

/*
 * Reads and parses one slice file. 0; -ENOENT (gone meanwhile); -EBADMSG
 * for a damaged file (unreadable or failing its checks: counted as corrupt);
 * -EPROTONOSUPPORT for a later version (counted); -ENOMEM.
 */
static int load(struct fg_history *h, const struct entry *e, struct fg_slicefile **ret)
{
	char name[NAME_LEN + 1];
	_cleanup_free_ uint8_t *data = NULL;
	size_t len;
	int r;

	format_name(name, e->start, e->end);
	r = read_file(h, name, &data, &len);
	if (r == -ENOENT || r == -ENOMEM)
		return r;
	if (r >= 0)
		r = fg_slicefile__parse(data, len, ret);
	if (r == -EPROTONOSUPPORT)
		h->stats.future++;
	else if (r < 0 && r != -ENOMEM) {
		h->stats.corrupt++;
		r = -EBADMSG;
	}
	return r;
}

int fg_history__read(struct fg_history *h, uint64_t from_ns, uint64_t to_ns, fg_history_fn fn,
		     void *ctx)
{
	_cleanup_free_ struct entry *v = NULL;
	_cleanup_free_ struct fg_compaction_file *f = NULL;
	size_t n;
	int r = list(h, false, &v, &n);

	if (r >= 0)
		r = spans(v, n, &f);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		struct fg_slicefile *s;

		/* A leftover's samples are in the merged file that holds its span. */
		if (v[i].end <= from_ns || v[i].start >= to_ns ||
		    f[i].fate == FG_COMPACTION_LEFTOVER)
			continue;
		r = load(h, &v[i], &s);
		if (r == -ENOMEM)
			return r;
		/* deleted meanwhile, damaged or later: skipped (and counted) */
		if (r < 0)
			continue;
		r = fn(ctx, s);
		fg_slicefile__free(s);
		if (r < 0)
			return r;
	}
	return 0;
}

static void compact_failed(struct fg_history *h, int r)
{
	h->stats.compact_errors++;
	h->stats.last_compact_error = r;
}

static bool blocked(const struct fg_history *h, uint64_t start)
{
	for (size_t i = 0; i < MIN(h->n_blocked, (size_t)MAX_BLOCKED); i++)
		if (h->blocked[i] == start)
			return true;
	return false;
}

/*
 * Merges group gi of the plan f over v[0..n): the merged file is stored
 * before any source is deleted. 0 or a negative errno.
 */
static int merge_group(struct fg_history *h, const struct entry *v,
		       const struct fg_compaction_file *f, size_t n, uint32_t gi,
		       const struct fg_compaction_group *g)
{
	struct fg_slicefile **slices = calloc(g->n_files, sizeof(*slices));
	struct fg_slicefile_writer *w = NULL;
	uint64_t damaged = 0;
	const uint8_t *data;
	size_t k = 0, len = 0;
	int r = slices ? 0 : -ENOMEM;

	for (size_t i = 0; i < n && r >= 0; i++) {
		if (f[i].fate != FG_COMPACTION_MERGE || f[i].group != gi)
			continue;
		r = load(h, &v[i], &slices[k]);
		if (r == -EBADMSG)
			damaged++;
		if (r >= 0)
			k++;
		else if (r == -EBADMSG || r == -ENOENT)
			r = 0;
	}
	if (r == -EPROTONOSUPPORT) {
		/* A later fgd's file: this fgd cannot merge it, now or later. */
		h->blocked[h->n_blocked++ % MAX_BLOCKED] = g->start;
	}
	/* With no readable source there is nothing to write; the damaged ones still go. */
	if (r >= 0 && k > 0)
		r = fg_slicefile_merge((const struct fg_slicefile *const *)slices, k, g->start,
				       g->end, &w);
	if (r >= 0 && w)
		r = fg_slicefile_writer__finish(w, &data, &len);
	if (r >= 0 && w)
		r = store_span(h, g->start, g->end, data, len);
	for (size_t i = 0; i < k; i++)
		fg_slicefile__free(slices[i]);
	free(slices);
	fg_slicefile_writer__free(w);
	if (r < 0)
		return r;
	if (k > 0) {
		h->stats.merged++;
		h->stats.files++;
		h->stats.bytes += len;
	}
	h->stats.merged_sources += g->n_files;
	h->stats.corrupt_dropped += damaged;
	/* Stored and synced: from here a crash leaves leftovers, which readers skip. */
	for (size_t i = 0; i < n; i++) {
		if (f[i].fate != FG_COMPACTION_MERGE || f[i].group != gi)
			continue;
		r = remove_file(h, &v[i]);
		if (r < 0) {
			compact_failed(h, r); /* a leftover now: the next step deletes it */
			continue;
		}
		h->stats.files--;
		h->stats.bytes -= v[i].bytes;
	}
	return 0;
}

int fg_history__compact(struct fg_history *h, uint64_t now_ns, uint64_t horizon_ns,
			const struct fg_compaction_policy *p, unsigned max_merges)
{
	_cleanup_free_ struct entry *v = NULL;
	_cleanup_free_ struct fg_compaction_file *f = NULL;
	_cleanup_free_ struct fg_compaction_group *g = NULL;
	size_t n, first = 0;
	int r, ng, merged = 0, err = 0;

	r = list(h, false, &v, &n);
	if (r < 0) {
		compact_failed(h, r);
		return r;
	}
	recount(h, v, n);
	f = calloc(n ? n : 1, sizeof(*f));
	g = calloc(n / 2 + 1, sizeof(*g));
	if (!f || !g)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		f[i] = (struct fg_compaction_file){ .start = v[i].start, .end = v[i].end };
	ng = fg_compaction_plan(f, n, now_ns, horizon_ns, p, g);
	if (ng < 0)
		return ng;
	for (size_t i = 0; i < n; i++) {
		if (f[i].fate != FG_COMPACTION_LEFTOVER && f[i].fate != FG_COMPACTION_EXPIRED)
			continue;
		r = remove_file(h, &v[i]);
		if (r < 0) {
			compact_failed(h, err = r);
			continue;
		}
		if (f[i].fate == FG_COMPACTION_LEFTOVER)
			h->stats.leftovers++;
		else
			h->stats.expired++;
		h->stats.files--;
		h->stats.bytes -= v[i].bytes;
	}
	/* In turn from the cursor, so that a group that keeps failing holds up no other. */
	while ((int)first < ng && g[first].start < h->cursor)
		first++;
	for (int k = 0; k < ng && merged < (int)max_merges; k++) {
		int gi = (int)((first + (size_t)k) % (size_t)ng);

		if (blocked(h, g[gi].start))
			continue;
		h->cursor = g[gi].end;
		r = merge_group(h, v, f, n, (uint32_t)gi, &g[gi]);
		if (r < 0) {
			compact_failed(h, err = r);
			break;
		}
		merged++;
	}
	return err < 0 ? err : merged;
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
