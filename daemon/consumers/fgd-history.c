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

#include "base/macro.h"
#include "consumers/fgd-history.h"
#include "fgd-log.h"

#define SUFFIX ".fgdh"
#define TMP_SUFFIX ".tmp"
/* START-END.fgdh, both %020 */
#define NAME_LEN (20 + 1 + 20 + sizeof(SUFFIX) - 1)
/* A slice file larger than this is not one fgd wrote. */
#define MAX_FILE (256U << 20)

/* A file of the directory: a slice to read, or one set aside (damage >= 0). */
struct entry {
	uint64_t start, end, bytes;
	int damage; /* -1, or an enum fg_history_damage */
	bool aside; /* renamed to its reason's name (else, damaged, it could not be) */
};

/* The files of the directory: slices first, then those set aside, each part in time order. */
struct listing {
	struct entry *v; /* owned */
	size_t n, n_slices;
};

static void listing_done(struct listing *l)
{
	free(l->v);
}

/* Groups a later format version keeps from merging, remembered so as not to retry them. */
#define MAX_BLOCKED 16
/*
 * Damaged files that could not be renamed (a read-only directory): remembered,
 * so as not to read them again.
 */
#define MAX_UNMOVED 256

/*
 * What a file set aside is renamed to, after its slice name and a dot: the
 * reason in the name outlives fgd, so a later query still says it.
 * Versions later than this fgd's and failed reads are not damage of the
 * file's: they are left where they are.
 */
static const char *const aside_suffix[] = {
	[FG_HISTORY_NOT_SLICE] = "not-slice",       [FG_HISTORY_TRUNCATED] = "truncated",
	[FG_HISTORY_BAD_CHECKSUM] = "bad-checksum", [FG_HISTORY_MALFORMED] = "malformed",
	[FG_HISTORY_NOT_FILE] = "not-file",         [FG_HISTORY_TOO_LARGE] = "too-large",
};

const char *fg_history_damage_name(enum fg_history_damage d)
{
	switch (d) {
	case FG_HISTORY_NOT_SLICE:
		return "not a slice file";
	case FG_HISTORY_TRUNCATED:
		return "truncated";
	case FG_HISTORY_BAD_CHECKSUM:
		return "bad checksum";
	case FG_HISTORY_MALFORMED:
		return "malformed";
	case FG_HISTORY_NOT_FILE:
		return "not a regular file";
	case FG_HISTORY_TOO_LARGE:
		return "too large";
	case FG_HISTORY_LATER_VERSION:
		return "written by a later fgd";
	case FG_HISTORY_READ_ERROR:
		break;
	}
	return "read error";
}

struct fg_history {
	int dir_fd; /* owned: dir/slices */
	char *dir;  /* owned: dir/slices, for messages */
	struct fg_history_stats stats;
	uint64_t cursor; /* compaction goes on from the group after this time */
	/* the latest end of a file: a slice starting before it is out of order */
	uint64_t newest_end;
	uint64_t blocked[MAX_BLOCKED]; /* starts of groups not to merge (a ring) */
	size_t n_blocked;
	struct entry unmoved[MAX_UNMOVED]; /* damaged files left in place: not read again */
	size_t n_unmoved;
	bool said_future, said_read_error; /* logged once a run: they are not set aside */
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

/* "START-END.fgdh.REASON": a file set aside; its span and damage in *ret. */
static bool parse_aside_name(const char *name, struct entry *ret)
{
	char slice[NAME_LEN + 1];

	if (strlen(name) <= NAME_LEN + 1 || name[NAME_LEN] != '.')
		return false;
	memcpy(slice, name, NAME_LEN);
	slice[NAME_LEN] = '\0';
	if (!parse_name(slice, ret))
		return false;
	for (size_t i = 0; i < ELEMENTSOF(aside_suffix); i++)
		if (aside_suffix[i] && strcmp(name + NAME_LEN + 1, aside_suffix[i]) == 0) {
			ret->damage = (int)i;
			ret->aside = true;
			return true;
		}
	return false;
}

/* The damage fgd remembers of a slice file it could not rename; -1 if none. */
static int unmoved(const struct fg_history *h, const struct entry *e)
{
	for (size_t i = 0; i < h->n_unmoved; i++)
		if (h->unmoved[i].start == e->start && h->unmoved[i].end == e->end)
			return h->unmoved[i].damage;
	return -1;
}

/*
 * Sets the slice file of e aside as damaged (why): renamed to its name and
 * the reason, so that it is never read again, and said once, here. A
 * directory that refuses the rename keeps it in place, remembered instead.
 */
static void set_aside(struct fg_history *h, struct entry *e, enum fg_history_damage why)
{
	char name[NAME_LEN + 1], aside[NAME_LEN + 32];
	int err;

	format_name(name, e->start, e->end);
	snprintf(aside, sizeof(aside), "%s.%s", name, aside_suffix[why]);
	e->damage = (int)why;
	h->stats.corrupt++;
	if (renameat(h->dir_fd, name, h->dir_fd, aside) == 0) {
		e->aside = true;
		log_warning("History file %s/%s: %s; set aside as %s, and queries of its period "
			    "say so",
			    h->dir, name, fg_history_damage_name(why), aside);
		return;
	}
	err = errno;
	log_warning("History file %s/%s: %s, and it cannot be set aside: %s; not read again "
		    "while fgd runs",
		    h->dir, name, fg_history_damage_name(why), strerror(err));
	if (h->n_unmoved < MAX_UNMOVED)
		h->unmoved[h->n_unmoved++] = *e;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	/* Slices first, then the files set aside. */
	if ((x->damage >= 0) != (y->damage >= 0))
		return x->damage >= 0 ? 1 : -1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->end > y->end) - (x->end < y->end);
}

/*
 * The files of the directory into *ret: slices, then those set aside, each
 * in time order (caller frees with listing_done()). A file with a slice's
 * name that is not a regular file is set aside here, its type read without
 * following it and nothing opened. Torn temporary files are removed when
 * clean_temp is set.
 */
static int list(struct fg_history *h, bool clean_temp, struct listing *ret)
{
	_cleanup_free_ struct entry *v = NULL;
	size_t n = 0, cap = 0, n_slices = 0;
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
		e.damage = -1;
		e.aside = false;
		if ((!parse_name(de->d_name, &e) && !parse_aside_name(de->d_name, &e)) ||
		    fstatat(h->dir_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (e.damage < 0 && !S_ISREG(st.st_mode))
			set_aside(h, &e, FG_HISTORY_NOT_FILE);
		else if (e.damage < 0)
			e.damage = unmoved(h, &e);
		e.bytes = S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
		if (FG_GROW(v, cap, n + 1) < 0) {
			closedir(d);
			return -ENOMEM;
		}
		v[n++] = e;
		n_slices += e.damage < 0;
	}
	closedir(d);
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_entry);
	*ret = (struct listing){ TAKE_PTR(v), n, n_slices };
	return 0;
}

static void recount(struct fg_history *h, const struct listing *l)
{
	h->stats.files = l->n;
	h->stats.bytes = 0;
	for (size_t i = 0; i < l->n; i++)
		h->stats.bytes += l->v[i].bytes;
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

/* The name e has in the directory: its slice name, with its reason once set aside. */
static void entry_name(const struct entry *e, char buf[static NAME_LEN + 32])
{
	char name[NAME_LEN + 1];

	format_name(name, e->start, e->end);
	if (e->aside)
		snprintf(buf, NAME_LEN + 32, "%s.%s", name, aside_suffix[e->damage]);
	else
		snprintf(buf, NAME_LEN + 32, "%s", name);
}

/* Deletes one file; a file already gone is fine. 0 or a negative errno. */
static int remove_file(struct fg_history *h, const struct entry *e)
{
	char name[NAME_LEN + 32];

	entry_name(e, name);
	if (unlinkat(h->dir_fd, name, 0) < 0 && errno != ENOENT)
		return negative_errno();
	return 0;
}

/* Deletes the leftovers of a crashed merge; the listing keeps the other files. */
static int remove_leftovers(struct fg_history *h, struct listing *l)
{
	_cleanup_free_ struct fg_compaction_file *f = NULL;
	size_t kept = 0;
	int r = spans(l->v, l->n_slices, &f);

	if (r < 0)
		return r;
	for (size_t i = 0; i < l->n; i++) {
		if (i >= l->n_slices || f[i].fate != FG_COMPACTION_LEFTOVER) {
			l->v[kept++] = l->v[i];
			continue;
		}
		r = remove_file(h, &l->v[i]);
		if (r < 0)
			return r;
		h->stats.leftovers++;
		l->n_slices--;
	}
	l->n = kept;
	return 0;
}

int fg_history__open(const char *dir, struct fg_history **ret)
{
	_cleanup_(listing_done) struct listing l = {};
	_cleanup_close_ int base = -1;
	struct fg_history *h;
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
	r = asprintf(&h->dir, "%s/slices", dir) < 0 ? -ENOMEM : 0;
	if (r >= 0)
		r = list(h, true, &l);
	if (r >= 0)
		r = remove_leftovers(h, &l);
	if (r < 0) {
		fg_history__free(h);
		return r;
	}
	recount(h, &l);
	for (size_t i = 0; i < l.n_slices; i++)
		h->newest_end = MAX(h->newest_end, l.v[i].end);
	*ret = h;
	return 0;
}

struct fg_history *fg_history__free(struct fg_history *h)
{
	if (!h)
		return NULL;
	safe_close(h->dir_fd);
	free(h->dir);
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
 * True if [start, end) nests with a slice already stored (either within the
 * other, or the same span): the two would read as a crashed merge's
 * leftover and its merged file. Slices of one clock never nest; a wall clock
 * set back can make them.
 */
static int nests(struct fg_history *h, uint64_t start, uint64_t end, bool *ret)
{
	_cleanup_(listing_done) struct listing l = {};
	int r;

	*ret = false;
	if (start >= h->newest_end)
		return 0; /* in order: the directory need not be read */
	r = list(h, false, &l);
	for (size_t i = 0; r >= 0 && i < l.n_slices && !*ret; i++)
		*ret = (l.v[i].start <= start && end <= l.v[i].end) ||
		       (start <= l.v[i].start && l.v[i].end <= end);
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

/*
 * Reads a whole slice file: opened without following a link and without
 * blocking (a FIFO put there meanwhile), and read only if it is a regular
 * file. -ELOOP or -EINVAL for one that is not, -EFBIG past MAX_FILE.
 */
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

static enum fg_history_damage damage_of(enum fg_slicefile_damage d)
{
	switch (d) {
	case FG_SLICEFILE_NOT_SLICE:
		return FG_HISTORY_NOT_SLICE;
	case FG_SLICEFILE_TRUNCATED:
		return FG_HISTORY_TRUNCATED;
	case FG_SLICEFILE_BAD_CHECKSUM:
		return FG_HISTORY_BAD_CHECKSUM;
	case FG_SLICEFILE_MALFORMED:
		break;
	}
	return FG_HISTORY_MALFORMED;
}

/*
 * Reads and parses the slice file of e. 0; -ENOENT (gone meanwhile);
 * -ENOMEM; -EBADMSG when it cannot be read, why in *ret_why: a damaged
 * file is set aside (set_aside()), a later version's (counted in future)
 * and a failed read are left where they are, and said once a run.
 */
static int load(struct fg_history *h, struct entry *e, struct fg_slicefile **ret,
		enum fg_history_damage *ret_why)
{
	char name[NAME_LEN + 1];
	_cleanup_free_ uint8_t *data = NULL;
	enum fg_history_damage why;
	size_t len;
	int r;

	format_name(name, e->start, e->end);
	r = read_file(h, name, &data, &len);
	if (r == -ENOENT || r == -ENOMEM)
		return r;
	if (r >= 0) {
		r = fg_slicefile__parse(data, len, ret);
		if (r >= 0 || r == -ENOMEM)
			return r;
		why = r == -EPROTONOSUPPORT ? FG_HISTORY_LATER_VERSION :
					      damage_of(fg_slicefile_diagnose(data, len));
	} else {
		/* Replaced by a link or a FIFO since it was listed. */
		why = r == -ELOOP || r == -EINVAL ? FG_HISTORY_NOT_FILE :
		      r == -EFBIG                 ? FG_HISTORY_TOO_LARGE :
						    FG_HISTORY_READ_ERROR;
	}
	if (why == FG_HISTORY_LATER_VERSION) {
		h->stats.future++;
		if (!h->said_future)
			log_warning("History file %s/%s was written by a later fgd: left as it is, "
				    "and left out of queries",
				    h->dir, name);
		h->said_future = true;
	} else if (why == FG_HISTORY_READ_ERROR) {
		if (!h->said_read_error)
			log_warning("Cannot read history file %s/%s: %s; left out of this query",
				    h->dir, name, strerror(-r));
		h->said_read_error = true;
	} else {
		set_aside(h, e, why);
	}
	*ret_why = why;
	return -EBADMSG;
}

int fg_history__read(struct fg_history *h, uint64_t from_ns, uint64_t to_ns, fg_history_fn fn,
		     fg_history_unreadable_fn bad, void *ctx)
{
	_cleanup_(listing_done) struct listing l = {};
	_cleanup_free_ struct fg_compaction_file *f = NULL;
	int r = list(h, false, &l);

	if (r >= 0)
		r = spans(l.v, l.n_slices, &f);
	if (r < 0)
		return r;
	for (size_t i = 0; i < l.n; i++) {
		struct entry *e = &l.v[i];
		struct fg_history_unreadable u = { e->start, e->end, (enum fg_history_damage)0 };
		struct fg_slicefile *s;

		/* A leftover's samples are in the merged file that holds its span. */
		if (e->end <= from_ns || e->start >= to_ns ||
		    (i < l.n_slices && f[i].fate == FG_COMPACTION_LEFTOVER))
			continue;
		if (e->damage >= 0) {
			u.why = (enum fg_history_damage)e->damage;
			r = bad ? bad(ctx, &u) : 0;
		} else {
			r = load(h, e, &s, &u.why);
			if (r == -ENOMEM)
				return r;
			if (r == -EBADMSG)
				r = bad ? bad(ctx, &u) : 0;
			else if (r == -ENOENT)
				r = 0; /* deleted meanwhile: merged, expired or pruned */
			else {
				r = fn(ctx, s);
				fg_slicefile__free(s);
			}
		}
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
 * before any source is deleted. A damaged source is set aside (load()) and
 * the group merged without it; a later version's blocks the group, and a
 * failed read fails it, to be tried again. 0 or a negative errno.
 */
static int merge_group(struct fg_history *h, struct entry *v, const struct fg_compaction_file *f,
		       size_t n, uint32_t gi, const struct fg_compaction_group *g)
{
	struct fg_slicefile **slices = calloc(g->n_files, sizeof(*slices));
	struct fg_slicefile_writer *w = NULL;
	uint64_t damaged = 0;
	const uint8_t *data;
	size_t k = 0, len = 0;
	int r = slices ? 0 : -ENOMEM;

	for (size_t i = 0; i < n && r >= 0; i++) {
		enum fg_history_damage why;

		if (f[i].fate != FG_COMPACTION_MERGE || f[i].group != gi)
			continue;
		r = load(h, &v[i], &slices[k], &why);
		if (r >= 0)
			k++;
		else if (r == -ENOENT)
			r = 0;
		else if (r == -EBADMSG && why == FG_HISTORY_LATER_VERSION)
			r = -EPROTONOSUPPORT;
		else if (r == -EBADMSG && why == FG_HISTORY_READ_ERROR)
			r = -EIO;
		else if (r == -EBADMSG) {
			damaged++;
			r = 0;
		}
	}
	if (r == -EPROTONOSUPPORT) {
		/* A later fgd's file: this fgd cannot merge it, now or later. */
		h->blocked[h->n_blocked++ % MAX_BLOCKED] = g->start;
	}
	/* With no readable source there is nothing to write. */
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
	h->stats.merged_sources += g->n_files - damaged;
	h->stats.corrupt_dropped += damaged;
	/* Stored and synced: from here a crash leaves leftovers, which readers skip. */
	for (size_t i = 0; i < n; i++) {
		/* One set aside stays, to say what its span is missing. */
		if (f[i].fate != FG_COMPACTION_MERGE || f[i].group != gi || v[i].damage >= 0)
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

/*
 * Deletes what the plan f of the slices l->v[0..n_slices) says to (leftovers
 * and expired files), and files set aside once they are as old as expired
 * slices: their span is then no query's. The last failure, or 0.
 */
static int remove_old(struct fg_history *h, const struct listing *l,
		      const struct fg_compaction_file *f, uint64_t now_ns,
		      const struct fg_compaction_policy *p)
{
	int err = 0;

	for (size_t i = 0; i < l->n; i++) {
		const struct entry *e = &l->v[i];
		bool slice = i < l->n_slices,
		     leftover = slice && f[i].fate == FG_COMPACTION_LEFTOVER;
		bool expired =
			slice ? f[i].fate == FG_COMPACTION_EXPIRED :
				p->keep_ns && now_ns >= p->keep_ns && e->end <= now_ns - p->keep_ns;
		int r;

		if (!leftover && !expired)
			continue;
		r = remove_file(h, e);
		if (r < 0) {
			compact_failed(h, err = r);
			continue;
		}
		if (leftover)
			h->stats.leftovers++;
		else
			h->stats.expired++;
		h->stats.files--;
		h->stats.bytes -= e->bytes;
	}
	return err;
}

int fg_history__compact(struct fg_history *h, uint64_t now_ns, uint64_t horizon_ns,
			const struct fg_compaction_policy *p, unsigned max_merges)
{
	_cleanup_(listing_done) struct listing l = {};
	_cleanup_free_ struct fg_compaction_file *f = NULL;
	_cleanup_free_ struct fg_compaction_group *g = NULL;
	size_t n, first = 0;
	int r, ng, merged = 0, err = 0;

	r = list(h, false, &l);
	if (r < 0) {
		compact_failed(h, r);
		return r;
	}
	recount(h, &l);
	/* The slices are planned; files set aside are neither merged nor make leftovers. */
	n = l.n_slices;
	f = calloc(n ? n : 1, sizeof(*f));
	g = calloc(n / 2 + 1, sizeof(*g));
	if (!f || !g)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		f[i] = (struct fg_compaction_file){ .start = l.v[i].start, .end = l.v[i].end };
	ng = fg_compaction_plan(f, n, now_ns, horizon_ns, p, g);
	if (ng < 0)
		return ng;
	err = remove_old(h, &l, f, now_ns, p);
	/* In turn from the cursor, so that a group that keeps failing holds up no other. */
	while ((int)first < ng && g[first].start < h->cursor)
		first++;
	for (int k = 0; k < ng && merged < (int)max_merges; k++) {
		int gi = (int)((first + (size_t)k) % (size_t)ng);

		if (blocked(h, g[gi].start))
			continue;
		h->cursor = g[gi].end;
		r = merge_group(h, l.v, f, n, (uint32_t)gi, &g[gi]);
		if (r < 0) {
			compact_failed(h, err = r);
			break;
		}
		merged++;
	}
	return err < 0 ? err : merged;
}

static int cmp_start(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

int fg_history__prune(struct fg_history *h, uint64_t max_bytes)
{
	_cleanup_(listing_done) struct listing l = {};
	uint64_t total = 0;
	size_t i;
	int r = list(h, false, &l);

	if (r < 0)
		return r;
	/* The oldest first, set aside or not. */
	if (l.n > 1)
		qsort(l.v, l.n, sizeof(*l.v), cmp_start);
	for (i = 0; i < l.n; i++)
		total += l.v[i].bytes;
	for (i = 0; i < l.n && total > max_bytes; i++) {
		r = remove_file(h, &l.v[i]);
		if (r < 0)
			return r;
		total -= l.v[i].bytes;
		h->stats.pruned++;
	}
	h->stats.files = l.n - i;
	h->stats.bytes = total;
	return 0;
}

void fg_history__stats(const struct fg_history *h, struct fg_history_stats *ret)
{
	*ret = h->stats;
}
