/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/budget.h"
#include "base/macro.h"
#include "base/safefile.h"
#include "fgd-clock.h"
#include "resolver/fgd-jit.h"
#include "resolver/fgd-process.h"
#include "resolver/fgd-procfs.h"

/* A miss re-reads a map at most this often; an absent map is looked for less often. */
#define JIT_RETRY_READ_NS (200ULL * 1000000)
#define JIT_RETRY_OPEN_NS (1000ULL * 1000000)
/* A map whose read waits for the budget: about when a refresh's worth has been earned. */
#define JIT_RETRY_DEFERRED_NS (JIT_READ_MAX * NS_PER_SEC / JIT_READ_RATE)
#define NS_PER_SEC 1000000000ULL
/*
 * Reading maps is the sampling loop's time, and their contents are a user's
 * to choose: all maps together are read at most JIT_READ_RATE bytes a second,
 * in bursts of at most JIT_READ_BURST (a token bucket), and one refresh of
 * one map reads at most JIT_READ_MAX. Parsing runs at several hundred MB/s,
 * so a burst costs the loop a few milliseconds, and a map being caught up
 * with (a node process met after an hour) takes a few seconds in steps.
 */
#define JIT_READ_RATE (32ULL << 20)
#define JIT_READ_BURST (2ULL << 20)
#define JIT_READ_MAX (1U << 20)
#define JIT_BUF_SIZE (64U << 10)
/* All parsed maps together; past it, maps stop growing. */
#define JIT_MEMORY_BUDGET (512ULL << 20)
/* The last bytes consumed, compared on each refresh to notice a rewrite in place. */
#define JIT_WINDOW 64

struct fg_jitmap {
	unsigned refs;
	pid_t pid;
	char path[64]; /* empty until the process's namespace pid is known */
	enum fg_jit_state state;
	enum fg_jit_refusal refusal;
	int error;
	uid_t file_uid;
	uint64_t file_size; /* for FG_JIT_TOO_LARGE and size_limited */
	bool budget_limited;
	bool size_limited; /* grew past the size limit while read: the rest is not read */
	bool released;     /* the generation is gone: nothing more is read */

	bool ids_known;
	pid_t nspid;
	bool uid_uniform; /* real, effective, saved and fs uids agree */
	uid_t uid;
	uint64_t next_try;  /* CLOCK_MONOTONIC ns */
	uint64_t looked_at; /* CLOCK_MONOTONIC ns of the last refresh; 0: never */

	/* The file being read, once trusted. */
	struct fg_perfmap *pm; /* owned; NULL before the first read and after release */
	uint32_t serial;       /* of pm: entry ids are serial << 32 | index */
	dev_t dev;
	ino_t ino;
	uint64_t offset;  /* bytes fed to pm */
	size_t accounted; /* pm's bytes, as counted in the budget */
	uint8_t window[JIT_WINDOW];
	size_t window_len;
	struct fg_perfmap_stats final_stats; /* pm's, when it was dropped at release */
};

struct fg_jit {
	uint32_t next_serial;
	uint8_t *buf;             /* owned: JIT_BUF_SIZE bytes */
	uint64_t max_map_bytes;   /* a bigger map is refused (0: no limit) */
	uint64_t tokens;          /* bytes that may be read now */
	uint64_t refilled;        /* CLOCK_MONOTONIC ns of the last refill */
	struct fg_budget *budget; /* borrowed; NULL: none */
	uint64_t charged;         /* what the budget's JIT part holds of ours */
	struct fg_status_jit stats;
};

int fg_jit__new(struct fg_jit **ret)
{
	struct fg_jit *j = calloc(1, sizeof(*j));

	if (!j)
		return -ENOMEM;
	j->buf = malloc(JIT_BUF_SIZE);
	if (!j->buf) {
		free(j);
		return -ENOMEM;
	}
	j->max_map_bytes = FG_JIT_DEFAULT_MAX_MAP;
	j->tokens = JIT_READ_BURST;
	j->refilled = fgd_now();
	*ret = j;
	return 0;
}

void fg_jit__set_budget(struct fg_jit *j, struct fg_budget *budget)
{
	fg_budget__account(j->budget, FG_BUDGET_JIT, &j->charged, 0);
	j->budget = budget;
	fg_budget__account(budget, FG_BUDGET_JIT, &j->charged, j->stats.bytes);
}

void fg_jit__set_max_map(struct fg_jit *j, uint64_t bytes)
{
	j->max_map_bytes = bytes;
}

struct fg_jit *fg_jit__free(struct fg_jit *j)
{
	if (!j)
		return NULL;
	fg_budget__account(j->budget, FG_BUDGET_JIT, &j->charged, 0);
	free(j->buf);
	free(j);
	return NULL;
}

struct fg_jitmap *fg_jitmap__ref(struct fg_jitmap *m)
{
	if (m)
		m->refs++;
	return m;
}

struct fg_jitmap *fg_jitmap__unref(struct fg_jitmap *m)
{
	if (!m || --m->refs > 0)
		return NULL;
	fg_perfmap__free(m->pm);
	free(m);
	return NULL;
}

struct fg_jitmap *fg_jit__map(struct fg_jit *j, struct fg_process *p)
{
	struct fg_jitmap *m;

	if (p->jit)
		return p->jit;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->refs = 1;
	m->pid = p->pid;
	p->jit = m;
	j->stats.maps++;
	return m;
}

/* Brings the budget up to date with what the parsed map holds now (feeds and lookups grow it). */
static void account(struct fg_jit *j, struct fg_jitmap *m)
{
	size_t now = m->pm ? fg_perfmap__bytes(m->pm) : 0;

	j->stats.bytes = j->stats.bytes - m->accounted + now;
	m->accounted = now;
	fg_budget__account(j->budget, FG_BUDGET_JIT, &j->charged, j->stats.bytes);
}

/* Drops the parsed map, returning its memory to the budget. */
static void drop_parsed(struct fg_jit *j, struct fg_jitmap *m)
{
	if (!m->pm)
		return;
	fg_perfmap__stats(m->pm, &m->final_stats);
	m->pm = fg_perfmap__free(m->pm);
	account(j, m);
	m->offset = 0;
	m->window_len = 0;
}

void fg_jit__release(struct fg_jit *j, struct fg_process *p)
{
	struct fg_jitmap *m = p->jit;

	if (!m)
		return;
	drop_parsed(j, m);
	if (m->state == FG_JIT_READING)
		j->stats.maps_read--;
	m->released = true;
	j->stats.maps--;
	p->jit = fg_jitmap__unref(m);
}

/* The process's pid in its own namespace and its uid, from /proc/PID/status. */
static int read_ids(struct fg_jitmap *m)
{
	struct fg_proc_status ps;
	int r;

	r = fg_procfs_status(m->pid, &ps, NULL);
	if (r < 0)
		return r;
	if (!ps.have_uid)
		return -EIO;
	/* Kernels before 4.1 have no NSpid line: no pid namespaces to see through. */
	m->nspid = ps.nspid ? ps.nspid : m->pid;
	m->uid = ps.uid[0];
	m->uid_uniform = ps.uid[1] == ps.uid[0] && ps.uid[2] == ps.uid[0] && ps.uid[3] == ps.uid[0];
	snprintf(m->path, sizeof(m->path), "/proc/%d/root/tmp/perf-%d.map", m->pid, m->nspid);
	m->ids_known = true;
	return 0;
}

static void refuse(struct fg_jit *j, struct fg_jitmap *m, enum fg_jit_refusal why)
{
	drop_parsed(j, m);
	if (m->state == FG_JIT_READING)
		j->stats.maps_read--;
	m->state = FG_JIT_REFUSED;
	m->refusal = why;
	j->stats.refused++;
}

/* Classifies a path that would not open as a directory or without following links. */
static enum fg_jit_refusal classify(int dirfd, const char *name)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
		return FG_JIT_SYMLINK;
	return FG_JIT_NOT_REGULAR;
}

/*
 * Opens the map if every trust rule holds. Returns the fd, or -ENOENT (no
 * map yet), another negative errno, or -EPERM after refusing it.
 */
static int open_trusted(struct fg_jit *j, struct fg_jitmap *m, struct stat *ret_st)
{
	_cleanup_close_ int tmp = -1, fd = -1;
	char dir[64], name[32];
	struct stat st;

	snprintf(dir, sizeof(dir), "/proc/%d/root", m->pid);
	snprintf(name, sizeof(name), "perf-%d.map", m->nspid);
	tmp = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (tmp < 0)
		return negative_errno();
	/* Neither /tmp nor the map may be a link: it could point into another user's files. */
	fd = openat(tmp, "tmp", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOTDIR && errno != ELOOP)
			return negative_errno();
		refuse(j, m, classify(tmp, "tmp"));
		return -EPERM;
	}
	tmp = safe_close(tmp);
	tmp = TAKE_FD(fd);
	/* Looked at before it is opened, so a device is never opened; checked again after. */
	if (fstatat(tmp, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return negative_errno();
	if (!S_ISREG(st.st_mode)) {
		refuse(j, m, S_ISLNK(st.st_mode) ? FG_JIT_SYMLINK : FG_JIT_NOT_REGULAR);
		return -EPERM;
	}
	fd = openat(tmp, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ELOOP)
			return negative_errno();
		refuse(j, m, FG_JIT_SYMLINK);
		return -EPERM;
	}
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (!S_ISREG(st.st_mode)) {
		refuse(j, m, FG_JIT_NOT_REGULAR);
		return -EPERM;
	}
	/* Root's, or the process's own when all its uids agree (common/base/safefile.h). */
	if (!fg_safefile_owned(&st, m->uid_uniform ? m->uid : 0)) {
		m->file_uid = st.st_uid;
		refuse(j, m, FG_JIT_OWNER);
		return -EPERM;
	}
	*ret_st = st;
	return TAKE_FD(fd);
}

/* True if the bytes before the offset we reached are still the ones we read. */
static bool same_content(int fd, const struct fg_jitmap *m)
{
	uint8_t now[JIT_WINDOW];

	if (m->window_len == 0)
		return true;
	return pread(fd, now, m->window_len, (off_t)(m->offset - m->window_len)) ==
		       (ssize_t)m->window_len &&
	       memcmp(now, m->window, m->window_len) == 0;
}

static void remember_tail(struct fg_jitmap *m, const uint8_t *data, size_t n)
{
	if (n >= JIT_WINDOW) {
		memcpy(m->window, data + n - JIT_WINDOW, JIT_WINDOW);
		m->window_len = JIT_WINDOW;
		return;
	}
	if (m->window_len + n > JIT_WINDOW) {
		size_t keep = JIT_WINDOW - n;

		memmove(m->window, m->window + m->window_len - keep, keep);
		m->window_len = keep;
	}
	memcpy(m->window + m->window_len, data, n);
	m->window_len += n;
}

/* Adds the tokens earned since the last refill. */
static void refill(struct fg_jit *j, uint64_t now)
{
	uint64_t elapsed = MIN(now - j->refilled, NS_PER_SEC),
		 earned = elapsed * JIT_READ_RATE / NS_PER_SEC;

	if (earned == 0)
		return;
	j->tokens = MIN(j->tokens + earned, JIT_READ_BURST);
	j->refilled = now;
}

enum refresh_result {
	REFRESH_DONE,     /* read up to the end, or nothing to read */
	REFRESH_MORE,     /* one refresh's worth read; more remains */
	REFRESH_DEFERRED, /* more remains, but the read budget is spent for now */
};

/* Reads what the file gained, up to size, within the read budget. */
static enum refresh_result read_new(struct fg_jit *j, struct fg_jitmap *m, int fd, uint64_t size)
{
	uint64_t until;

	refill(j, fgd_now());
	/* A refresh that could read only a sliver of what waits is not worth its system calls. */
	if (m->offset < size && j->tokens < MIN(size - m->offset, (uint64_t)JIT_BUF_SIZE)) {
		j->stats.deferred++;
		return REFRESH_DEFERRED;
	}
	until = MIN(size, m->offset + MIN((uint64_t)JIT_READ_MAX, j->tokens));
	while (m->offset < until) {
		size_t want = (size_t)MIN(until - m->offset, JIT_BUF_SIZE);
		ssize_t n;

		/* All maps together: this cap, and the daemon's budget (its JIT part, and the total). */
		if (j->stats.bytes >= JIT_MEMORY_BUDGET ||
		    !fg_budget__fits(j->budget, FG_BUDGET_JIT, JIT_BUF_SIZE)) {
			if (j->stats.bytes < JIT_MEMORY_BUDGET)
				fg_budget__refused(j->budget, FG_BUDGET_JIT);
			m->budget_limited = true;
			j->stats.budget_skipped++;
			return REFRESH_DONE;
		}
		n = pread(fd, j->buf, want, (off_t)m->offset);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			m->error = n < 0 ? negative_errno() : 0;
			return REFRESH_DONE;
		}
		j->tokens -= MIN(j->tokens, (uint64_t)n);
		/* -ENOMEM costs the entries it could not keep, which the parser counts as dropped. */
		(void)fg_perfmap__feed(m->pm, j->buf, (size_t)n);
		account(j, m);
		remember_tail(m, j->buf, (size_t)n);
		m->offset += (uint64_t)n;
	}
	j->stats.reads++;
	return m->offset < size ? REFRESH_MORE : REFRESH_DONE;
}

/* Opens the map if need be, and reads what it gained. */
static enum refresh_result refresh(struct fg_jit *j, struct fg_jitmap *m)
{
	_cleanup_close_ int fd = -1;
	uint64_t size;
	struct stat st;
	int r;

	if (!m->ids_known) {
		r = read_ids(m);
		if (r < 0) {
			/* Gone meanwhile is no error: the map just cannot be read any more. */
			m->error = r == -ENOENT || r == -ESRCH ? 0 : r;
			return REFRESH_DONE;
		}
	}
	fd = open_trusted(j, m, &st);
	if (fd < 0) {
		/* A map that was read and then vanished keeps its names: the code is still there. */
		m->error = fd == -ENOENT || fd == -EPERM ? 0 : fd;
		return REFRESH_DONE;
	}
	m->error = 0;
	size = (uint64_t)st.st_size;
	if (m->pm && (st.st_dev != m->dev || st.st_ino != m->ino || size < m->offset ||
		      !same_content(fd, m))) {
		/* Replaced, shrunk or rewritten (jcmd rewrites the whole map): read it anew. */
		drop_parsed(j, m);
		j->stats.resets++;
	}
	if (j->max_map_bytes && size > j->max_map_bytes) {
		m->file_size = size;
		/* Met too big: refused. Grown too big while read: what was read stays. */
		if (!m->pm) {
			refuse(j, m, FG_JIT_TOO_LARGE);
			return REFRESH_DONE;
		}
		if (!m->size_limited)
			j->stats.size_limited++;
		m->size_limited = true;
		size = j->max_map_bytes;
	}
	if (!m->pm) {
		r = fg_perfmap__new(NULL, &m->pm);
		if (r < 0) {
			m->error = r;
			return REFRESH_DONE;
		}
		account(j, m);
		/* 0 is never a serial, so no id is 0. */
		if (++j->next_serial == 0)
			j->next_serial = 1;
		m->serial = j->next_serial;
		m->dev = st.st_dev;
		m->ino = st.st_ino;
	}
	if (m->state != FG_JIT_READING)
		j->stats.maps_read++;
	m->state = FG_JIT_READING;
	return read_new(j, m, fd, size);
}

/* A lookup may index entries fed since the last one, which takes memory. */
static int64_t pm_lookup(struct fg_jit *j, struct fg_jitmap *m, uint64_t addr)
{
	int64_t i;

	if (!m->pm)
		return -ENOENT;
	i = fg_perfmap__lookup(m->pm, addr);
	account(j, m);
	return i;
}

static int found(struct fg_jitmap *m, int64_t idx, struct fg_jit_frame *ret)
{
	ret->name = fg_perfmap__name(m->pm, (uint32_t)idx);
	ret->id = (uint64_t)m->serial << 32 | (uint64_t)idx;
	return 1;
}

int fg_jitmap__lookup(struct fg_jit *j, struct fg_jitmap *m, struct fg_process *p, uint64_t addr,
		      uint64_t since, struct fg_jit_frame *ret)
{
	enum refresh_result res;
	uint64_t now;
	int64_t i;

	if ((i = pm_lookup(j, m, addr)) >= 0)
		return found(m, i, ret);
	/* Only the live process owns /proc/PID now: an ended generation's pid may be anyone's. */
	if (m->released || m->state == FG_JIT_REFUSED || p->end_time != FG_TIME_ALIVE)
		return 0;
	now = fgd_now();
	/*
	 * The rate limit holds misses to what the last look found, but not a
	 * look from before since: a map written just before a recording began
	 * (jcmd PID Compiler.perfmap, then fgctl record) was looked for, absent,
	 * by another recording or the always-on sampler less than a second
	 * earlier, and the new recording's samples took that for an answer.
	 */
	if (now < m->next_try && m->looked_at >= since) {
		j->stats.held++;
		return 0;
	}
	m->looked_at = now;
	res = refresh(j, m);
	if (res == REFRESH_MORE)
		m->next_try = 0;
	else if (res == REFRESH_DEFERRED)
		m->next_try = now + JIT_RETRY_DEFERRED_NS;
	else
		m->next_try =
			now + (m->state == FG_JIT_READING ? JIT_RETRY_READ_NS : JIT_RETRY_OPEN_NS);
	if ((i = pm_lookup(j, m, addr)) >= 0)
		return found(m, i, ret);
	return 0;
}

void fg_jitmap__info(const struct fg_jitmap *m, struct fg_jitmap_info *ret)
{
	*ret = (struct fg_jitmap_info){
		.pid = m->pid,
		.path = m->path,
		.state = m->state,
		.refusal = m->refusal,
		.error = m->error,
		.file_uid = m->file_uid,
		.file_size = m->file_size,
		.budget_limited = m->budget_limited,
		.size_limited = m->size_limited,
	};
	if (m->pm)
		fg_perfmap__stats(m->pm, &ret->stats);
	else if (m->state == FG_JIT_READING)
		ret->stats = m->final_stats;
}

void fg_jit__stats(const struct fg_jit *j, struct fg_status_jit *ret)
{
	*ret = j->stats;
	ret->max_map_bytes = j->max_map_bytes;
}

const char *fg_jit_refusal_name(enum fg_jit_refusal r)
{
	switch (r) {
	case FG_JIT_SYMLINK:
		return "symlink";
	case FG_JIT_NOT_REGULAR:
		return "not_regular";
	case FG_JIT_OWNER:
		return "owner";
	case FG_JIT_TOO_LARGE:
		return "too_large";
	default:
		return NULL;
	}
}
