/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "base/budget.h"
#include "base/macro.h"
#include "base/procfs.h"
#include "base/u32map.h"
#include "fgd-clock.h"
#include "resolver/fgd-jit.h"
#include "resolver/fgd-procfs.h"
#include "resolver/fgd-proctab.h"

/* Caps on what the machine can make us hold; what they refuse is counted. */
#define MAX_GENERATIONS 131072
#define MAX_THREADS 262144
#define MAX_MAPS_PER_PROCESS 65536
/* Longer cgroup paths are cut (a root frame is at most 1 KiB anyway). */
#define MAX_CGROUP_PATH 4096

struct thread {
	pid_t tid, pid;
	char comm[FG_COMM_LEN];
	uint64_t named_at;   /* time of the record that set comm */
	uint64_t dead_since; /* 0 while alive */
};

struct fg_proctab {
	struct fg_symbolizer *sym; /* borrowed */
	struct fg_roots *roots;    /* owned */
	struct fg_jit *jit;        /* owned */
	struct fg_u32map by_pid;   /* pid -> owned current (newest) struct fg_process */
	struct fg_u32map by_tid;   /* tid -> owned struct thread */
	uint64_t next_serial;
	/* when the machine booted, ns since the epoch (/proc/stat's btime); 0 unknown */
	uint64_t boot_ns;
	uint64_t tick_ns;         /* one clock tick, /proc's unit of process start times */
	struct fg_budget *budget; /* borrowed; NULL: none */
	uint64_t bytes;   /* generations, their maps and cgroups, threads (the indexes on top) */
	uint64_t charged; /* what the budget's processes part holds of ours */
	struct fg_status_processes stats;
};

/* One generation's heap: itself, its maps' array, its cgroup path. */
static uint64_t gen_bytes(const struct fg_process *p)
{
	return sizeof(*p) + p->cap_maps * sizeof(*p->maps) +
	       (p->cgroup ? strlen(p->cgroup) + 1 : 0);
}

/* What the table holds, with the pid and tid indexes. */
static uint64_t table_bytes(const struct fg_proctab *t)
{
	const struct fg_u32map *m[] = { &t->by_pid, &t->by_tid };
	uint64_t sum = t->bytes;

	for (size_t i = 0; i < ELEMENTSOF(m); i++)
		sum += m[i]->cap * (sizeof(uint32_t) * 2 + sizeof(void *)) +
		       fg_idxmap_bytes(&m[i]->index);
	return sum;
}

static void account(struct fg_proctab *t)
{
	fg_budget__account(t->budget, FG_BUDGET_PROCESSES, &t->charged, table_bytes(t));
}

/* "btime" of /proc/stat: the boot, in whole seconds since the epoch. 0 if unreadable. */
static uint64_t read_boot_ns(void)
{
	_cleanup_(fclosep) FILE *f = fopen("/proc/stat", "re");
	_cleanup_free_ char *line = NULL;
	unsigned long long btime;
	size_t cap = 0;

	while (f && getline(&line, &cap, f) > 0)
		if (sscanf(line, "btime %llu", &btime) == 1)
			return (uint64_t)btime * 1000000000ULL;
	return 0;
}

int fg_proctab__new(struct fg_symbolizer *sym, struct fg_proctab **ret)
{
	struct fg_proctab *t = calloc(1, sizeof(*t));
	int r;

	if (!t)
		return -ENOMEM;
	t->sym = sym;
	t->boot_ns = read_boot_ns();
	t->tick_ns = 1000000000ULL / (uint64_t)MAX(sysconf(_SC_CLK_TCK), 1L);
	r = fg_roots__new(&t->roots);
	if (r < 0) {
		free(t);
		return r;
	}
	if (fg_jit__new(&t->jit) < 0) {
		fg_roots__free(t->roots);
		free(t);
		return -ENOMEM;
	}
	*ret = t;
	return 0;
}

static void clear_maps(struct fg_process *p)
{
	for (size_t i = 0; i < p->n_maps; i++)
		fg_dso__unref(p->maps[i].dso);
	free(p->maps);
	p->maps = NULL;
	p->n_maps = p->cap_maps = 0;
}

/* Frees one generation; returns its older one, which the caller now owns. */
static struct fg_process *process_free(struct fg_proctab *t, struct fg_process *p)
{
	struct fg_process *older = p->older;

	t->bytes -= MIN(t->bytes, gen_bytes(p));
	t->stats.maps -= p->n_maps;
	clear_maps(p);
	fg_root__unref(p->root);
	free(p->cgroup);
	fg_jit__release(t->jit, p);
	free(p);
	t->stats.generations--;
	return older;
}

static void chain_free(struct fg_proctab *t, struct fg_process *p)
{
	while (p)
		p = process_free(t, p);
}

struct fg_proctab *fg_proctab__free(struct fg_proctab *t)
{
	if (!t)
		return NULL;
	for (size_t i = 0; i < t->by_pid.n; i++)
		chain_free(t, t->by_pid.vals[i]);
	for (size_t i = 0; i < t->by_tid.n; i++)
		free(t->by_tid.vals[i]);
	fg_u32map_done(&t->by_pid);
	fg_u32map_done(&t->by_tid);
	fg_roots__free(t->roots);
	fg_jit__free(t->jit);
	t->bytes = 0;
	fg_budget__account(t->budget, FG_BUDGET_PROCESSES, &t->charged, 0);
	free(t);
	return NULL;
}

void fg_proctab__set_budget(struct fg_proctab *t, struct fg_budget *budget)
{
	fg_budget__account(t->budget, FG_BUDGET_PROCESSES, &t->charged, 0);
	t->budget = budget;
	account(t);
	fg_jit__set_budget(t->jit, budget);
}

struct fg_jit *fg_proctab__jit(struct fg_proctab *t)
{
	return t->jit;
}

/* The generation of pid that had started by time, without consulting /proc. */
static struct fg_process *gen_at(struct fg_proctab *t, pid_t pid, uint64_t time)
{
	struct fg_process *p = fg_u32map_get(&t->by_pid, (uint32_t)pid);

	while (p && p->start_time > time && p->older)
		p = p->older;
	return p;
}

/*
 * A generation inserted below newer ones (its record arrived late) begins the
 * lineage of the exec generations directly above it. Walks the chain from
 * newest down to p, remembering where the run of exec generations just above
 * p began, then gives that run p's lineage.
 */
static void relineage_above(struct fg_process *newest, struct fg_process *p)
{
	struct fg_process *run = NULL;

	for (struct fg_process *g = newest; g && g != p; g = g->older)
		run = g->from_exec ? (run ? run : g) : NULL;
	for (struct fg_process *g = run; g && g != p; g = g->older) {
		g->lineage = p->lineage;
		g->born = p->born;
	}
}

/*
 * Starts a generation of pid at time, ending the one before it there. The
 * chain stays ordered by start time even when records arrive late (a fork
 * read after the exec that followed it), so the newest generation is always
 * the current one. The new generation has no maps; the caller fills them.
 */
static struct fg_process *new_generation(struct fg_proctab *t, pid_t pid, uint64_t time,
					 bool from_exec)
{
	struct fg_process *newest = fg_u32map_get(&t->by_pid, (uint32_t)pid), *p, *after = NULL;
	struct fg_process *before = newest;

	/* The budget's share for the table is a cap like the count's, counted alike. */
	if (t->stats.generations >= MAX_GENERATIONS ||
	    !fg_budget__fits(t->budget, FG_BUDGET_PROCESSES, sizeof(*p))) {
		if (t->stats.generations < MAX_GENERATIONS)
			fg_budget__refused(t->budget, FG_BUDGET_PROCESSES);
		t->stats.dropped_processes++;
		return NULL;
	}
	/* after: the oldest generation that started later than time. */
	while (before && before->start_time > time) {
		after = before;
		before = before->older;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->serial = ++t->next_serial;
	p->lineage = from_exec && before ? before->lineage : p->serial;
	p->ppid = from_exec && before ? before->ppid : 0;
	p->born = from_exec && before ? before->born : 0;
	p->start_time = time;
	p->end_time = after ? after->start_time : FG_TIME_ALIVE;
	p->from_exec = from_exec;
	p->older = before;
	if (after) {
		after->older = p;
		relineage_above(newest, p);
	} else if (fg_u32map_set(&t->by_pid, (uint32_t)pid, p) < 0) {
		free(p);
		return NULL;
	}
	if (before && before->end_time > time) {
		if (before->end_time == FG_TIME_ALIVE && !after)
			t->stats.alive--; /* it stops being current */
		before->end_time = time;
	}
	if (!after)
		t->stats.alive++;
	t->stats.generations++;
	t->bytes += sizeof(*p);
	account(t);
	return p;
}

int fg_process_add_map(struct fg_process *p, uint64_t start, uint64_t end, uint64_t pgoff,
		       struct fg_dso *dso)
{
	size_t i, first, n_keep_after;
	struct fg_map split = {};
	bool have_split = false;
	int r;

	if (end <= start) {
		fg_dso__unref(dso);
		return -EINVAL;
	}
	/* Make room first: failing half-way would leave a hole where the old map was. */
	r = p->n_maps + 2 > MAX_MAPS_PER_PROCESS ? -E2BIG :
						   FG_GROW(p->maps, p->cap_maps, p->n_maps + 2);
	if (r < 0) {
		fg_dso__unref(dso);
		return r;
	}
	/* first: the first map that ends after start. */
	for (first = 0; first < p->n_maps && p->maps[first].end <= start; first++)
		;
	/* Trim or drop every map overlapping [start, end). */
	for (i = first; i < p->n_maps && p->maps[i].start < end;) {
		struct fg_map *m = &p->maps[i];

		if (m->start < start && m->end > end) {
			/* The new map punches a hole: keep the tail as a split-off piece. */
			split = (struct fg_map){ end, m->end, m->pgoff + (end - m->start),
						 fg_dso__ref(m->dso) };
			have_split = true;
			m->end = start;
			i++;
		} else if (m->start < start) {
			m->end = start;
			i++;
		} else if (m->end > end) {
			m->pgoff += end - m->start;
			m->start = end;
			break;
		} else {
			fg_dso__unref(m->dso);
			memmove(m, m + 1, (p->n_maps - i - 1) * sizeof(*m));
			p->n_maps--;
		}
	}
	/* Position: after every map starting before start. */
	for (i = first; i < p->n_maps && p->maps[i].start < start; i++)
		;
	n_keep_after = p->n_maps - i;
	memmove(&p->maps[i + 1 + have_split], &p->maps[i], n_keep_after * sizeof(struct fg_map));
	p->maps[i] = (struct fg_map){ start, end, pgoff, dso };
	if (have_split)
		p->maps[i + 1] = split;
	p->n_maps += 1 + have_split;
	return 0;
}

static int copy_maps(struct fg_process *dst, const struct fg_process *src)
{
	int r = FG_GROW(dst->maps, dst->cap_maps, src->n_maps);

	if (r < 0)
		return r;
	for (size_t i = 0; i < src->n_maps; i++) {
		dst->maps[i] = src->maps[i];
		fg_dso__ref(dst->maps[i].dso);
	}
	dst->n_maps = src->n_maps;
	return 0;
}

/* Names a thread as of time; a record older than the current name is ignored. */
static struct thread *set_thread(struct fg_proctab *t, pid_t tid, pid_t pid, const char *comm,
				 uint64_t time)
{
	struct thread *th = fg_u32map_get(&t->by_tid, (uint32_t)tid);

	if (th && th->pid == pid && th->named_at > time)
		return th;
	if (!th) {
		if (fg_u32map_count(&t->by_tid) >= MAX_THREADS) {
			t->stats.dropped_threads++;
			return NULL;
		}
		th = calloc(1, sizeof(*th));
		if (!th || fg_u32map_set(&t->by_tid, (uint32_t)tid, th) < 0) {
			free(th);
			return NULL;
		}
		t->stats.threads++;
		t->bytes += sizeof(*th);
		account(t);
	}
	th->tid = tid;
	th->pid = pid;
	th->named_at = time;
	th->dead_since = 0;
	snprintf(th->comm, sizeof(th->comm), "%s", comm);
	return th;
}

/* Makes a dso key and a reference for a mapping, from a record or a maps line. */
static struct fg_dso *map_dso(struct fg_proctab *t, const struct fg_process *p, uint64_t start,
			      uint64_t end, const char *path, const struct fg_dso_key *file_key,
			      struct fg_root *root)
{
	struct fg_dso_key key = *file_key;
	char open_path[FG_PROC_MAP_FILES_MAX];

	if (strcmp(path, "[vdso]") == 0)
		key.kind = FG_DSO_VDSO;
	else if (path[0] != '/' || (key.build_id_len == 0 && key.ino == 0))
		key.kind = FG_DSO_ANON;
	else
		key.kind = FG_DSO_FILE;
	/* map_files reaches the very file mapped, even if it was replaced or unlinked. */
	return fg_symbolizer__get_dso(t->sym, &key, path,
				      key.kind == FG_DSO_FILE ?
					      fg_proc_map_files_path(open_path, p->pid, start,
								     end) :
					      NULL,
				      root);
}

/* root: where path is to be resolved (fg_root__of_proc_maps() for paths from /proc). */
static void add_map(struct fg_proctab *t, struct fg_process *p, uint64_t start, uint64_t end,
		    uint64_t pgoff, const char *path, const struct fg_dso_key *key,
		    struct fg_root *root)
{
	struct fg_dso *dso = map_dso(t, p, start, end, path, key, root);
	size_t before = p->n_maps, cap = p->cap_maps;

	/* A NULL dso (cache full) still records the range: its frames say [unknown]. */
	if (fg_process_add_map(p, start, end, pgoff, dso) < 0)
		t->stats.dropped_maps++;
	t->stats.maps += p->n_maps - before;
	t->bytes += (p->cap_maps - cap) * sizeof(*p->maps);
	account(t);
}

/* ---- /proc ---- */

/* The cgroup v2 path in /proc/PID/cgroup ("0::/path"); caller frees *ret. */
static int read_cgroup(pid_t pid, char **ret)
{
	_cleanup_close_ int fd = -1;
	char path[64], buf[MAX_CGROUP_PATH + 512], *line, *end;
	size_t len = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : negative_errno();
	while (len < sizeof(buf) - 1 && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == ESRCH ? -ESRCH : negative_errno();
		}
		len += (size_t)n;
	}
	buf[len] = '\0';
	/* The unified hierarchy is printed last; v1 hierarchies (hybrid setups) come before it. */
	for (line = buf; line && strncmp(line, "0::", 3) != 0;)
		line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL;
	if (!line || line[3] != '/')
		return -ENOENT;
	/* A cgroup's name may itself hold a newline: the path runs to the end. */
	line += 3;
	end = buf + len;
	if (end > line && end[-1] == '\n')
		end--;
	*ret = strndup(line, (size_t)(end - line));
	return *ret ? 0 : -ENOMEM;
}

/*
 * Captures what p's paths and samples need once it is gone: its root and
 * cgroup, read from /proc; like (may be NULL) is the generation to take them
 * from when p cannot be read any more (its parent, or its image before exec).
 */
static void read_context(struct fg_proctab *t, struct fg_process *p, const struct fg_process *like)
{
	struct fg_root *root;

	if (fg_roots__get(t->roots, p->pid, like ? like->root : NULL, &root) == 0)
		p->root = root;
	else if (like)
		p->root = fg_root__ref(like->root);
	else
		p->root = fg_roots__unknown(t->roots);
	if (read_cgroup(p->pid, &p->cgroup) < 0 && like && like->cgroup)
		p->cgroup = strdup(like->cgroup);
	if (p->cgroup)
		t->bytes += strlen(p->cgroup) + 1;
	account(t);
}

/* /proc/PID/stat's comm and start time (clock ticks after boot); either may be NULL. */
static int read_stat(pid_t pid, char comm[FG_COMM_LEN], uint64_t *ret_starttime)
{
	char path[64], buf[1024];
	_cleanup_(fclosep) FILE *f = NULL;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return negative_errno();
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	return fg_parse_proc_stat(buf, comm, comm ? FG_COMM_LEN : 0, ret_starttime);
}

static int read_maps(struct fg_proctab *t, struct fg_process *p)
{
	_cleanup_(fclosep) FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/maps", p->pid);
	f = fopen(path, "re");
	if (!f)
		return negative_errno();
	while (getline(&line, &cap, f) > 0) {
		uint64_t start, end, pgoff, ino;
		unsigned maj, min;
		char perms[8];
		int name_at = 0;
		struct fg_dso_key key = {};
		size_t len;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n",
			   &start, &end, perms, &pgoff, &maj, &min, &ino, &name_at) < 7)
			continue;
		if (perms[2] != 'x')
			continue;
		len = strlen(line);
		if (len > 0 && line[len - 1] == '\n')
			line[len - 1] = '\0';
		key.dev = makedev(maj, min);
		key.ino = ino;
		add_map(t, p, start, end, pgoff, name_at > 0 ? line + name_at : "", &key,
			fg_root__of_proc_maps(p->root));
	}
	return 0;
}

static void read_threads(struct fg_proctab *t, pid_t pid, uint64_t now)
{
	_cleanup_(closedirp) DIR *d = NULL;
	struct dirent *de;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char comm[FG_COMM_LEN + 1], file[96];
		_cleanup_(fclosep) FILE *f = NULL;
		pid_t tid = (pid_t)atoi(de->d_name);
		size_t n;

		if (tid <= 0)
			continue;
		snprintf(file, sizeof(file), "/proc/%d/task/%d/comm", pid, tid);
		f = fopen(file, "re");
		if (!f)
			continue;
		/*
		 * The name and the newline the kernel adds: a name may hold newlines of its
		 * own (prctl(PR_SET_NAME) takes any bytes), so only the last one goes.
		 */
		n = fread(comm, 1, FG_COMM_LEN, f);
		if (n == 0)
			continue;
		if (comm[n - 1] == '\n')
			n--;
		comm[MIN(n, (size_t)FG_COMM_LEN - 1)] = '\0';
		set_thread(t, tid, pid, comm, now);
	}
}

/* Reads one process from /proc as a new current generation. */
/* The process a task id belongs to (its own id for a process), or -errno. */
static int read_tgid(pid_t tid, pid_t *ret)
{
	struct fg_proc_status ps;
	int r = fg_procfs_status(tid, &ps, NULL);

	if (r < 0)
		return r == -ENOENT ? -ESRCH : r;
	if (!ps.tgid)
		return -EIO;
	*ret = ps.tgid;
	return 0;
}

static struct fg_process *scan_pid(struct fg_proctab *t, pid_t pid)
{
	struct fg_process *p, *newest = fg_u32map_get(&t->by_pid, (uint32_t)pid);
	char comm[FG_COMM_LEN];
	uint64_t now, start, ticks;
	pid_t tgid;

	/* /proc/TID exists for threads too: only a process may become one. */
	if (read_tgid(pid, &tgid) < 0 || tgid != pid || read_stat(pid, comm, &ticks) < 0)
		return NULL;
	now = fgd_now();
	/*
	 * Unknown pid: it has been running since before anything we will see
	 * (start 0). After an ended generation, it began no earlier than that.
	 */
	start = !newest ? 0 : newest->end_time != FG_TIME_ALIVE ? newest->end_time : now;
	p = new_generation(t, pid, start, false);
	if (!p)
		return NULL;
	memcpy(p->comm, comm, sizeof(comm));
	p->scanned_at = now;
	p->born = t->boot_ns ? t->boot_ns + ticks * t->tick_ns : 0;
	read_context(t, p, NULL); /* before the maps: their paths mean something in its root */
	(void)read_maps(t, p);    /* a kernel thread or a process that just exited has none */
	read_threads(t, pid, now);
	t->stats.proc_reads++;
	return p;
}

int fg_proctab__scan(struct fg_proctab *t)
{
	_cleanup_(closedirp) DIR *d = opendir("/proc");
	struct dirent *de;

	if (!d)
		return negative_errno();
	while ((de = readdir(d))) {
		pid_t pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = (pid_t)atoi(de->d_name);
		if (pid > 0 && !fg_u32map_get(&t->by_pid, (uint32_t)pid))
			(void)scan_pid(t, pid);
	}
	return 0;
}

/* ---- records ---- */

/* A scanned generation already reflects everything that happened before its scan. */
static bool scan_is_newer(const struct fg_process *p, uint64_t time)
{
	return p && p->end_time == FG_TIME_ALIVE && p->scanned_at && time <= p->scanned_at;
}

static void handle_fork(struct fg_proctab *t, const struct fg_task *task)
{
	struct fg_process *parent, *child, *cur;
	const char *comm;

	parent = fg_proctab__find(t, (pid_t)task->ppid, task->time);
	comm = parent ? fg_proctab__comm(t, (pid_t)task->ptid, parent, task->time) : "";
	if (task->pid == task->ppid) {
		/* A new thread: it starts with its creator's name. */
		set_thread(t, (pid_t)task->tid, (pid_t)task->pid, comm, task->time);
		return;
	}
	cur = fg_u32map_get(&t->by_pid, task->pid);
	if (scan_is_newer(cur, task->time))
		return;
	child = new_generation(t, (pid_t)task->pid, task->time, false);
	if (!child)
		return;
	read_context(t, child, parent);
	child->ppid = (pid_t)task->ppid;
	if (parent) {
		memcpy(child->comm, parent->comm, sizeof(child->comm));
		if (copy_maps(child, parent) == 0)
			t->stats.maps += child->n_maps;
		t->bytes += child->cap_maps * sizeof(*child->maps);
		account(t);
	}
	set_thread(t, (pid_t)task->tid, (pid_t)task->pid, comm, task->time);
}

static void handle_comm(struct fg_proctab *t, const struct fg_comm *c, uint64_t time)
{
	struct fg_process *p = gen_at(t, (pid_t)c->pid, time);

	if (c->exec && !scan_is_newer(p, time)) {
		/* The image is replaced: the MMAP2 records that follow rebuild the maps. */
		p = new_generation(t, (pid_t)c->pid, time, true);
		if (!p)
			return;
		/* setns, unshare or chroot may have changed the root, a write the cgroup. */
		read_context(t, p, p->older);
	}
	if (p && c->pid == c->tid)
		snprintf(p->comm, sizeof(p->comm), "%s", c->comm);
	set_thread(t, (pid_t)c->tid, (pid_t)c->pid, c->comm, time);
}

static void handle_mmap2(struct fg_proctab *t, const struct fg_mmap2 *m, uint64_t time)
{
	struct fg_process *p = fg_proctab__find(t, (pid_t)m->pid, time);
	struct fg_dso_key key = {};

	/* Tracking asks for executable mappings only; be sure. A scan already has older ones. */
	if (!p || scan_is_newer(p, time) || !(m->prot & 0x4 /* PROT_EXEC */) || m->len == 0 ||
	    m->addr + m->len < m->addr)
		return;
	if (m->has_build_id) {
		key.build_id_len = m->build_id_size;
		memcpy(key.build_id, m->build_id, m->build_id_size);
	} else {
		key.dev = makedev(m->maj, m->min);
		key.ino = m->ino;
	}
	add_map(t, p, m->addr, m->addr + m->len, m->pgoff, m->filename, &key, p->root);
}

static void handle_exit(struct fg_proctab *t, const struct fg_task *task)
{
	struct thread *th = fg_u32map_get(&t->by_tid, task->tid);
	struct fg_process *p;

	if (th && th->pid == (pid_t)task->pid && !th->dead_since)
		th->dead_since = task->time ? task->time : 1;
	if (task->pid != task->tid)
		return;
	p = gen_at(t, (pid_t)task->pid, task->time);
	if (p && p->end_time == FG_TIME_ALIVE) {
		p->end_time = task->time;
		t->stats.alive--;
	}
}

void fg_proctab__handle(struct fg_proctab *t, const struct fg_record *rec)
{
	switch (rec->type) {
	case PERF_RECORD_FORK:
		handle_fork(t, &rec->task);
		break;
	case PERF_RECORD_COMM:
		handle_comm(t, &rec->comm, rec->sid.time);
		break;
	case PERF_RECORD_MMAP2:
		handle_mmap2(t, &rec->mmap2, rec->sid.time);
		break;
	case PERF_RECORD_EXIT:
		handle_exit(t, &rec->task);
		break;
	default:
		break;
	}
}

/* ---- queries ---- */

struct fg_process *fg_proctab__current(struct fg_proctab *t, pid_t pid)
{
	return fg_u32map_get(&t->by_pid, (uint32_t)pid);
}

struct fg_process *fg_proctab__find(struct fg_proctab *t, pid_t pid, uint64_t time)
{
	struct fg_process *p = fg_u32map_get(&t->by_pid, (uint32_t)pid);

	if (!p) {
		if (pid <= 0)
			return NULL;
		/*
		 * We never saw this pid: tracking records were lost or it raced
		 * our scan. Read it now; if it is already gone, leave a
		 * tombstone so we do not retry until the tombstone is reaped.
		 */
		p = scan_pid(t, pid);
		if (!p) {
			p = new_generation(t, pid, 0, false);
			if (p) {
				snprintf(p->comm, sizeof(p->comm), ":%d", pid);
				p->root = fg_roots__unknown(t->roots);
				p->end_time = fgd_now();
				t->stats.alive--;
			}
		}
		return p;
	}
	return gen_at(t, pid, time);
}

int fg_proctab__get_live(struct fg_proctab *t, pid_t pid, struct fg_process **ret, pid_t *ret_tgid)
{
	struct fg_process *p = fg_u32map_get(&t->by_pid, (uint32_t)pid);
	pid_t tgid;

	if (p && p->end_time == FG_TIME_ALIVE) {
		*ret = p;
		return 0;
	}
	if (pid <= 0 || read_tgid(pid, &tgid) < 0)
		return -ESRCH;
	if (tgid != pid) {
		*ret_tgid = tgid;
		return -ESRCH;
	}
	p = scan_pid(t, pid);
	if (!p)
		return -ESRCH;
	*ret = p;
	return 0;
}

const char *fg_proctab__comm(struct fg_proctab *t, pid_t tid, const struct fg_process *proc,
			     uint64_t time)
{
	const struct thread *th = fg_u32map_get(&t->by_tid, (uint32_t)tid);

	if (th && th->pid == proc->pid && th->comm[0] && th->named_at <= time)
		return th->comm;
	return proc->comm;
}

int fg_process_owner(struct fg_process *p, uid_t *ret)
{
	struct fg_proc_status ps;
	uid_t file_uid;
	int r;

	if (p->owner_known) {
		*ret = p->owner;
		return 0;
	}
	if (p->end_time != FG_TIME_ALIVE)
		return -ESRCH;
	r = fg_procfs_status(p->pid, &ps, &file_uid);
	if (r < 0)
		return r == -ENOENT ? -ESRCH : r;
	/*
	 * A non-dumpable process (it changed credentials, or asked) has its
	 * /proc files owned by root; the /proc/PID directory itself is not.
	 */
	if (!ps.have_uid || !ps.have_gid || !ps.have_cap_eff)
		return -ESRCH;
	p->owner = ps.uid[0];
	for (int i = 1; i < 4; i++)
		if (ps.uid[i] != ps.uid[0] || ps.gid[i] != ps.gid[0])
			p->owner = 0;
	if (ps.cap_eff != 0 || file_uid != ps.uid[0])
		p->owner = 0;
	p->owner_known = true;
	*ret = p->owner;
	return 0;
}

/* CLOCK_BOOTTIME minus CLOCK_MONOTONIC now: the time the machine spent suspended. */
static uint64_t suspended_ns(void)
{
	struct timespec b, m;

	clock_gettime(CLOCK_BOOTTIME, &b);
	clock_gettime(CLOCK_MONOTONIC, &m);
	return (uint64_t)((b.tv_sec - m.tv_sec) * 1000000000LL + (b.tv_nsec - m.tv_nsec));
}

int fg_proctab__born(struct fg_proctab *t, struct fg_process *p, uint64_t *ret)
{
	struct fg_process *first = p;
	uint64_t ticks, from_records = 0;

	if (!p->born) {
		/* The generation that began the lineage: exec generations inherit its birth. */
		while (first->older && first->older->lineage == p->lineage && !first->born)
			first = first->older;
		p->born = first->born;
	}
	if (p->born) {
		*ret = p->born;
		return 0;
	}
	if (!t->boot_ns)
		return -ENODATA;
	/* A fork seen in the records (not a scan's bound): its ticks after boot, as /proc counts them. */
	if (first->start_time && !first->scanned_at)
		from_records = (first->start_time + suspended_ns()) / t->tick_ns;
	/*
	 * /proc is exact, but only while the pid is still this process: a start
	 * well after the fork we saw is a later process that reuses the pid.
	 */
	if (p->end_time == FG_TIME_ALIVE && read_stat(p->pid, NULL, &ticks) >= 0 &&
	    (!from_records || ticks <= from_records + 100))
		p->born = t->boot_ns + ticks * t->tick_ns;
	else if (from_records)
		p->born = t->boot_ns + from_records * t->tick_ns;
	else
		return -ESRCH;
	first->born = p->born;
	*ret = p->born;
	return 0;
}

void fg_proctab__reap(struct fg_proctab *t, uint64_t now, uint64_t grace_ns)
{
	uint64_t horizon = now > grace_ns ? now - grace_ns : 0;

	for (size_t i = 0; i < t->by_pid.n; i++) {
		struct fg_process *p = t->by_pid.vals[i], *g;

		if (!p)
			continue;
		/* Older generations are needed only for samples taken before they ended. */
		for (g = p; g->older;) {
			if (g->older->end_time < horizon)
				g->older = process_free(t, g->older);
			else
				g = g->older;
		}
		if (p->end_time < horizon) {
			fg_u32map_del(&t->by_pid, (uint32_t)p->pid);
			chain_free(t, p);
		}
	}
	for (size_t i = 0; i < t->by_tid.n; i++) {
		struct thread *th = t->by_tid.vals[i];

		if (th && th->dead_since && th->dead_since < horizon) {
			free(fg_u32map_del(&t->by_tid, (uint32_t)th->tid));
			t->stats.threads--;
			t->bytes -= MIN(t->bytes, sizeof(*th));
		}
	}
	/* Dsos keep the roots they need: only roots no one uses close here. */
	fg_roots__prune(t->roots);
	account(t);
}

void fg_proctab__stats(const struct fg_proctab *t, struct fg_status_processes *ret)
{
	struct fg_roots_stats rs;

	fg_roots__stats(t->roots, &rs);
	*ret = t->stats;
	ret->bytes = table_bytes(t);
	ret->roots = rs.roots;
	ret->roots_dropped = rs.roots_dropped;
	ret->roots_unknown = rs.roots_unknown;
}
