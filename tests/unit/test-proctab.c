/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/budget.h"
#include "base/procfs.h"
#include "container-test.h"
#include "fgd-clock.h"
#include "resolver/fgd-proctab.h"
#include "symbols/fgd-symbols.h"
#include "test.h"

/* Pids far above any pid_max, so /proc never has them. */
#define P1 5000001
#define P2 5000002
#define P3 5000003

struct fixture {
	struct fg_symbolizer *sym;
	struct fg_proctab *t;
};

static void setup(struct fixture *f)
{
	ASSERT_OK(fg_symbolizer__new(&f->sym));
	ASSERT_OK(fg_proctab__new(f->sym, &f->t));
}

static void teardown(struct fixture *f)
{
	fg_proctab__free(f->t);
	fg_symbolizer__free(f->sym);
}

static void fork_rec(struct fixture *f, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid,
		     uint64_t time)
{
	struct fg_record r = { .type = PERF_RECORD_FORK };

	r.task = (struct fg_task){ pid, ppid, tid, ptid, time };
	r.sid.time = time;
	fg_proctab__handle(f->t, &r);
}

static void exit_rec(struct fixture *f, uint32_t pid, uint32_t tid, uint64_t time)
{
	struct fg_record r = { .type = PERF_RECORD_EXIT };

	r.task = (struct fg_task){ pid, pid, tid, tid, time };
	r.sid.time = time;
	fg_proctab__handle(f->t, &r);
}

static void comm_rec(struct fixture *f, uint32_t pid, uint32_t tid, const char *comm, bool exec,
		     uint64_t time)
{
	struct fg_record r = { .type = PERF_RECORD_COMM };

	r.comm = (struct fg_comm){ pid, tid, exec, comm };
	r.sid.time = time;
	fg_proctab__handle(f->t, &r);
}

static void mmap_rec(struct fixture *f, uint32_t pid, uint64_t start, uint64_t len, uint64_t ino,
		     const char *path, uint64_t time)
{
	struct fg_record r = { .type = PERF_RECORD_MMAP2 };

	r.mmap2 = (struct fg_mmap2){ .pid = pid,
				     .tid = pid,
				     .addr = start,
				     .len = len,
				     .maj = 254,
				     .min = 1,
				     .ino = ino,
				     .prot = PROT_READ | PROT_EXEC,
				     .filename = path };
	r.sid.time = time;
	fg_proctab__handle(f->t, &r);
}

static const char *map_path(struct fg_process *p, uint64_t addr)
{
	const struct fg_map *m = fg_process_find_map(p, addr);

	return m && m->dso ? fg_dso__path(m->dso) : NULL;
}

TEST(exec_fork_exit_and_pid_reuse_by_time)
{
	struct fixture f;
	struct fg_process *g1, *g2, *g3;

	setup(&f);
	comm_rec(&f, P1, P1, "parent", true, 100);
	mmap_rec(&f, P1, 0x1000, 0x1000, 11, "/nonexistent/a", 101);
	fork_rec(&f, P2, P1, P2, P1, 200); /* child: a copy of parent */
	exit_rec(&f, P2, P2, 300);
	fork_rec(&f, P2, P1, P2, P1, 400);         /* the pid is reused */
	comm_rec(&f, P2, P2, "newbie", true, 410); /* and it execs */
	mmap_rec(&f, P2, 0x1000, 0x2000, 22, "/nonexistent/b", 411);

	g1 = fg_proctab__find(f.t, P2, 250);
	ASSERT_TRUE(g1);
	ASSERT_STREQ(g1->comm, "parent");
	ASSERT_STREQ(map_path(g1, 0x1800), "/nonexistent/a");
	ASSERT_EQ(g1->end_time, 300);

	g2 = fg_proctab__find(f.t, P2, 405); /* after the fork, before the exec */
	ASSERT_TRUE(g2 && g2 != g1);
	ASSERT_STREQ(map_path(g2, 0x1800), "/nonexistent/a");

	g3 = fg_proctab__find(f.t, P2, 500);
	ASSERT_TRUE(g3 && g3 != g2);
	ASSERT_STREQ(g3->comm, "newbie");
	ASSERT_STREQ(map_path(g3, 0x2800), "/nonexistent/b");
	ASSERT_TRUE(fg_proctab__current(f.t, P2) == g3);

	/* An exec is the same process; a reused pid is not. */
	ASSERT_TRUE(fg_process_is(g3, g2->lineage));
	ASSERT_TRUE(!fg_process_is(g3, g1->lineage));
	ASSERT_TRUE(!fg_process_is(g2, g1->lineage));
	teardown(&f);
}

TEST(exec_read_before_its_fork_keeps_the_exec_current)
{
	struct fixture f;
	struct fg_process *p;

	setup(&f);
	comm_rec(&f, P1, P1, "shell", true, 10);
	mmap_rec(&f, P1, 0x1000, 0x1000, 11, "/nonexistent/sh", 11);
	/* The child's exec was on another CPU and got read first. */
	comm_rec(&f, P2, P2, "workload", true, 30);
	mmap_rec(&f, P2, 0x5000, 0x1000, 33, "/nonexistent/work", 31);
	fork_rec(&f, P2, P1, P2, P1, 20);

	p = fg_proctab__find(f.t, P2, 40);
	ASSERT_STREQ(p->comm, "workload");
	ASSERT_STREQ(map_path(p, 0x5000), "/nonexistent/work");
	ASSERT_STREQ(fg_proctab__comm(f.t, P2, p, 40), "workload");
	/* The exec's lineage was repaired to the fork's when the fork arrived. */
	ASSERT_TRUE(fg_process_is(p, fg_proctab__find(f.t, P2, 25)->lineage));
	ASSERT_TRUE(fg_proctab__current(f.t, P2) == p);
	p = fg_proctab__find(f.t, P2, 25); /* between fork and exec: the shell's copy */
	ASSERT_STREQ(map_path(p, 0x1000), "/nonexistent/sh");
	ASSERT_EQ(p->end_time, 30);
	teardown(&f);
}

TEST(exit_read_after_the_pid_was_reused)
{
	struct fixture f;

	setup(&f);
	comm_rec(&f, P1, P1, "first", true, 10);
	comm_rec(&f, P1, P1, "second", true, 50); /* stands in for the reuse's start */
	exit_rec(&f, P1, P1, 40);                 /* the first one's exit, read late */
	ASSERT_TRUE(fg_proctab__current(f.t, P1)->end_time == FG_TIME_ALIVE);
	ASSERT_STREQ(fg_proctab__current(f.t, P1)->comm, "second");
	teardown(&f);
}

TEST(threads_have_their_own_names)
{
	struct fixture f;
	struct fg_process *p;

	setup(&f);
	comm_rec(&f, P1, P1, "server", true, 10);
	fork_rec(&f, P1, P1, P3, P1, 20); /* a thread: pid == ppid */
	p = fg_proctab__find(f.t, P1, 30);
	ASSERT_STREQ(fg_proctab__comm(f.t, P3, p, 30), "server"); /* inherited */
	comm_rec(&f, P1, P3, "worker", false, 25);
	ASSERT_STREQ(fg_proctab__comm(f.t, P3, p, 30), "worker");
	ASSERT_STREQ(fg_proctab__comm(f.t, P1, p, 30), "server");
	/* A sample from before the rename keeps the old name. */
	ASSERT_STREQ(fg_proctab__comm(f.t, P3, p, 24), "server");
	ASSERT_STREQ(p->comm, "server");
	teardown(&f);
}

TEST(mappings_overlap_split_and_replace)
{
	struct fixture f;
	struct fg_process *p;
	const struct fg_map *m;

	setup(&f);
	comm_rec(&f, P1, P1, "x", true, 1);
	mmap_rec(&f, P1, 0x1000, 0x4000, 1, "/nonexistent/big", 2);
	mmap_rec(&f, P1, 0x2000, 0x1000, 2, "/nonexistent/hole", 3);
	p = fg_proctab__find(f.t, P1, 10);
	ASSERT_EQ(p->n_maps, 3);
	ASSERT_STREQ(map_path(p, 0x1fff), "/nonexistent/big");
	ASSERT_STREQ(map_path(p, 0x2000), "/nonexistent/hole");
	m = fg_process_find_map(p, 0x3000);
	ASSERT_STREQ(fg_dso__path(m->dso), "/nonexistent/big");
	ASSERT_EQ(m->start, 0x3000);
	ASSERT_EQ(m->pgoff, 0x2000); /* the tail keeps its file offset */
	ASSERT_TRUE(fg_process_find_map(p, 0x5000) == NULL);
	ASSERT_TRUE(fg_process_find_map(p, 0xfff) == NULL);

	/* Covering everything replaces everything. */
	mmap_rec(&f, P1, 0x800, 0x8000, 3, "/nonexistent/all", 4);
	ASSERT_EQ(p->n_maps, 1);
	ASSERT_STREQ(map_path(p, 0x4000), "/nonexistent/all");
	/* Overlapping the start of an existing map trims it. */
	mmap_rec(&f, P1, 0x0, 0x1000, 4, "/nonexistent/low", 5);
	ASSERT_EQ(p->n_maps, 2);
	m = fg_process_find_map(p, 0x1000);
	ASSERT_EQ(m->start, 0x1000);
	ASSERT_EQ(m->pgoff, 0x800);
	teardown(&f);
}

TEST(reap_frees_ended_generations_after_grace)
{
	struct fixture f;
	struct fg_status_processes st;

	setup(&f);
	comm_rec(&f, P1, P1, "short", true, 100);
	exit_rec(&f, P1, P1, 200);
	fg_proctab__reap(f.t, 1000, 500); /* ended at 200 < 1000 - 500 */
	fg_proctab__stats(f.t, &st);
	ASSERT_EQ(st.generations, 0);
	ASSERT_EQ(st.alive, 0);
	ASSERT_TRUE(fg_proctab__current(f.t, P1) == NULL);
	teardown(&f);
}

TEST(unknown_pid_becomes_a_tombstone)
{
	struct fixture f;
	struct fg_process *p;
	struct fg_status_processes st;

	setup(&f);
	p = fg_proctab__find(f.t, P3, 5);
	ASSERT_TRUE(p);
	ASSERT_EQ(p->n_maps, 0);
	ASSERT_TRUE(p->end_time != FG_TIME_ALIVE);
	ASSERT_TRUE(fg_proctab__find(f.t, P3, 6) == p); /* no second /proc read */
	fg_proctab__stats(f.t, &st);
	ASSERT_EQ(st.alive, 0);
	teardown(&f);
}

__attribute__((noinline)) static int marker(void)
{
	return 42;
}

TEST(scan_finds_this_process)
{
	struct fixture f;
	struct fg_process *p;
	const struct fg_map *m;
	char exe[4096];
	ssize_t n;
	uid_t uid;

	setup(&f);
	ASSERT_OK(fg_proctab__scan(f.t));
	p = fg_proctab__current(f.t, getpid());
	ASSERT_TRUE(p);
	ASSERT_STREQ(p->comm, "test-proctab");
	m = fg_process_find_map(p, (uint64_t)(uintptr_t)&marker);
	ASSERT_TRUE(m && m->dso);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_TRUE(n > 0);
	exe[n] = '\0';
	ASSERT_STREQ(fg_dso__path(m->dso), exe);
	ASSERT_OK(fg_process_owner(p, &uid));
	ASSERT_EQ(uid, getuid());
	ASSERT_EQ(marker(), 42);
	teardown(&f);
}

TEST(lineage_outlives_the_generation_it_came_from)
{
	struct fixture f;
	struct fg_process *before, *after;
	uint64_t lineage;

	setup(&f);
	comm_rec(&f, P1, P1, "shell", true, 100);
	before = fg_proctab__find(f.t, P1, 150);
	lineage = before->lineage;
	comm_rec(&f, P1, P1, "python3", true, 200); /* exec */
	fg_proctab__reap(f.t, 100000, 1000);        /* the pre-exec generation is gone */
	after = fg_proctab__current(f.t, P1);
	ASSERT_STREQ(after->comm, "python3");
	ASSERT_TRUE(after->older == NULL);
	ASSERT_TRUE(fg_process_is(after, lineage));
	teardown(&f);
}

/* What fg_proctab__born() should say for pid: /proc/stat's btime plus its starttime ticks. */
static uint64_t proc_born(pid_t pid)
{
	char path[64], line[1024];
	unsigned long long btime = 0;
	uint64_t ticks;
	FILE *f;
	size_t n;

	f = fopen("/proc/stat", "re");
	ASSERT_TRUE(f);
	while (fgets(line, sizeof(line), f) && sscanf(line, "btime %llu", &btime) != 1)
		;
	fclose(f);
	ASSERT_TRUE(btime > 0);
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	ASSERT_TRUE(f);
	n = fread(line, 1, sizeof(line) - 1, f);
	line[n] = '\0';
	fclose(f);
	ASSERT_OK(fg_parse_proc_stat(line, NULL, 0, &ticks));
	return btime * 1000000000ULL + ticks * (1000000000ULL / (uint64_t)sysconf(_SC_CLK_TCK));
}

TEST(born_is_the_start_proc_gives_kept_through_exec_and_after_exit)
{
	uint64_t tick = 1000000000ULL / (uint64_t)sysconf(_SC_CLK_TCK), want, born = 0, forked;
	struct fixture f;
	struct fg_process *p;
	int go[2], status;
	pid_t child;

	/* A process found by the scan. */
	setup(&f);
	ASSERT_OK(fg_proctab__scan(f.t));
	p = fg_proctab__current(f.t, getpid());
	ASSERT_TRUE(p);
	ASSERT_OK(fg_proctab__born(f.t, p, &born));
	ASSERT_U64_EQ(born, proc_born(getpid()));

	/* A child seen forking, then exec'ing: /proc, while it lives. */
	ASSERT_OK(pipe(go));
	child = fork();
	ASSERT_TRUE(child >= 0);
	if (child == 0) {
		char c;

		close(go[1]);
		_exit(read(go[0], &c, 1) == 0 ? 0 : 1);
	}
	forked = fgd_now(); /* after the fork, as the kernel's record is */
	close(go[0]);
	want = proc_born(child);
	fork_rec(&f, (uint32_t)child, (uint32_t)getpid(), (uint32_t)child, (uint32_t)getpid(),
		 forked);
	comm_rec(&f, (uint32_t)child, (uint32_t)child, "execd", true, forked + 1);
	p = fg_proctab__current(f.t, child);
	ASSERT_TRUE(p && p->from_exec);
	ASSERT_OK(fg_proctab__born(f.t, p, &born));
	ASSERT_U64_EQ(born, want);
	teardown(&f);

	/* Gone before anyone asked: worked out from the fork record's time, to a tick. */
	close(go[1]);
	ASSERT_EQ(waitpid(child, &status, 0), child);
	setup(&f);
	fork_rec(&f, (uint32_t)child, (uint32_t)getpid(), (uint32_t)child, (uint32_t)getpid(),
		 forked);
	exit_rec(&f, (uint32_t)child, (uint32_t)child, forked + 2);
	p = fg_proctab__find(f.t, child, forked + 1);
	ASSERT_TRUE(p && p->end_time != FG_TIME_ALIVE);
	ASSERT_OK(fg_proctab__born(f.t, p, &born));
	ASSERT_TRUE(born >= want && born <= want + tick);

	/* Never seen starting and not in /proc (a tombstone): unknown. */
	p = fg_proctab__find(f.t, P1, 50);
	ASSERT_TRUE(p && p->end_time != FG_TIME_ALIVE);
	ASSERT_ERR(fg_proctab__born(f.t, p, &born), -ESRCH);
	teardown(&f);
}

static int pipe_fds[2];
static volatile pid_t thread_tid;

static void *blocked_thread(void *arg)
{
	char c;

	thread_tid = (pid_t)syscall(SYS_gettid);
	(void)!read(pipe_fds[0], &c, 1);
	return arg;
}

TEST(get_live_refuses_threads_and_leaves_nothing_for_bogus_pids)
{
	struct fixture f;
	struct fg_status_processes st;
	struct fg_process *p = NULL;
	pthread_t th;
	pid_t tgid = 0;

	setup(&f);
	ASSERT_TRUE(pipe(pipe_fds) == 0);
	ASSERT_TRUE(pthread_create(&th, NULL, blocked_thread, NULL) == 0);
	while (!thread_tid)
		sched_yield();
	ASSERT_ERR(fg_proctab__get_live(f.t, thread_tid, &p, &tgid), -ESRCH);
	ASSERT_EQ(tgid, getpid());
	ASSERT_ERR(fg_proctab__get_live(f.t, P3, &p, &tgid), -ESRCH);
	fg_proctab__stats(f.t, &st);
	ASSERT_EQ(st.generations, 0); /* no tombstones, no fake process for the thread */
	ASSERT_OK(fg_proctab__get_live(f.t, getpid(), &p, &tgid));
	ASSERT_EQ(p->pid, getpid());
	ASSERT_TRUE(write(pipe_fds[1], "x", 1) == 1);
	pthread_join(th, NULL);
	close(pipe_fds[0]);
	close(pipe_fds[1]);
	teardown(&f);
}

/* A child that becomes nobody, optionally dumpable again, and waits to be examined. */
static pid_t nobody_child(bool dumpable, int *ready_fd)
{
	int fds[2];
	pid_t pid;

	ASSERT_TRUE(pipe(fds) == 0);
	pid = fork();
	ASSERT_TRUE(pid >= 0);
	if (pid == 0) {
		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(1);
		if (dumpable)
			prctl(PR_SET_DUMPABLE, 1);
		(void)!write(fds[1], "r", 1);
		pause();
		_exit(0);
	}
	close(fds[1]);
	*ready_fd = fds[0];
	return pid;
}

TEST(owner_as_ptrace_sees_it)
{
	/* Dropped root but still non-dumpable: not the new user's. Dumpable again: nobody's own. */
	static const struct {
		bool dumpable;
		uid_t owner;
	} cases[] = { { false, 0 }, { true, 65534 } };
	struct fixture f;

	if (geteuid() != 0)
		SKIP("needs root to make a child change users");
	setup(&f);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fg_process *p;
		pid_t tgid, kid;
		uid_t owner;
		int fd;
		char c;

		kid = nobody_child(cases[i].dumpable, &fd);
		ASSERT_EQ(read(fd, &c, 1), 1);
		ASSERT_OK(fg_proctab__get_live(f.t, kid, &p, &tgid));
		ASSERT_OK(fg_process_owner(p, &owner));
		ASSERT_EQ(owner, cases[i].owner);
		kill(kid, SIGKILL);
		waitpid(kid, NULL, 0);
		close(fd);
	}
	teardown(&f);
}

int fgtest_proc_marker(int x);
__attribute__((noinline)) int fgtest_proc_marker(int x)
{
	return x * 5 + 2;
}

/* The container's copy of this test binary, at a path the host does not have. */
#define CTR_BINARY "/fgd-ctr-test/bin"

/* A child in its own mount namespace, chrooted into a tmpfs holding a copy of this binary. */
/* The container's root: a copy of this very binary at CTR_BINARY. */
static int fill_ctr(void)
{
	char buf[65536];
	int in, out;
	ssize_t n;

	if (mkdir("fgd-ctr-test", 0755) < 0)
		return -1;
	in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	out = open("fgd-ctr-test/bin", O_WRONLY | O_CREAT | O_CLOEXEC, 0755);
	if (in < 0 || out < 0)
		return -1;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			return -1;
	return n < 0 || close(out) < 0 ? -1 : 0;
}

/* The file offset of addr in this process's own mapping of it. */
static uint64_t self_offset(uint64_t addr)
{
	char line[512];
	uint64_t off = UINT64_MAX;
	FILE *f = fopen("/proc/self/maps", "re");

	ASSERT_TRUE(f);
	while (fgets(line, sizeof(line), f)) {
		uint64_t s, e, o;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64, &s, &e, &o) == 3 &&
		    s <= addr && addr < e)
			off = addr - s + o;
	}
	fclose(f);
	ASSERT_TRUE(off != UINT64_MAX);
	return off;
}

TEST(container_binary_resolves_in_its_root_after_the_container_is_gone)
{
	char dir[] = "/tmp/fgd-test-ctr.XXXXXX", path[128], buf[256];
	int quit_fd, status;
	struct fg_status_processes st;
	enum fg_sym_result res;
	struct fixture f;
	struct fg_record r = { .type = PERF_RECORD_MMAP2 };
	struct fg_process *p;
	const struct fg_map *m;
	struct stat sb;
	pid_t pid;

	pid = container_start(dir, fill_ctr, &quit_fd);
	snprintf(path, sizeof(path), "/proc/%d/root" CTR_BINARY, pid);
	ASSERT_OK(stat(path, &sb));

	/*
	 * The child maps its copy (a record from the future: the process is read
	 * from /proc first, and a scan hides older records). No build-id: the
	 * device and inode must match whatever file the path leads to.
	 */
	setup(&f);
	r.mmap2 = (struct fg_mmap2){ .pid = (uint32_t)pid,
				     .tid = (uint32_t)pid,
				     .addr = 0x7f0000000000,
				     .len = (uint64_t)sb.st_size,
				     .maj = major(sb.st_dev),
				     .min = minor(sb.st_dev),
				     .ino = sb.st_ino,
				     .prot = PROT_READ | PROT_EXEC,
				     .filename = CTR_BINARY };
	r.sid.time = UINT64_MAX / 2;
	fg_proctab__handle(f.t, &r);
	p = fg_proctab__current(f.t, pid);
	ASSERT_TRUE(p && p->root);
	fg_proctab__stats(f.t, &st);
	ASSERT_EQ(st.roots, 1);
	m = fg_process_find_map(p, 0x7f0000000000);
	ASSERT_TRUE(m && m->dso);

	/* The container goes away before the sample is named; the host never had the file. */
	close(quit_fd);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_TRUE(access(CTR_BINARY, F_OK) < 0);
	ASSERT_STREQ(fg_symbolizer__name_user(f.sym, m->dso,
					      self_offset((uintptr_t)&fgtest_proc_marker) + 4, NULL,
					      buf, sizeof(buf), &res),
		     "fgtest_proc_marker");
	ASSERT_EQ(res, FG_SYM_NAMED);
	ASSERT_EQ(fgtest_proc_marker(1), 7);
	teardown(&f);
	ASSERT_OK(rmdir(dir));
}

TEST(the_table_is_charged_to_the_budget_and_stops_at_its_share)
{
	struct fixture f;
	struct fg_status_processes st;
	struct fg_status_memory bs;
	struct fg_budget *b;
	uint64_t time = 100, gens;

	ASSERT_OK(fg_budget__new(32ULL << 20, &b));
	setup(&f);
	fg_proctab__set_budget(f.t, b);
	/* Processes with maps and threads: everything counted is charged. */
	for (uint32_t i = 0; i < 100; i++) {
		fork_rec(&f, P1 + i, 1, P1 + i, 1, time++);
		mmap_rec(&f, P1 + i, 0x400000, 0x1000, 42, "/bin/true", time++);
		fork_rec(&f, P1 + i, P1 + i, P1 + 1000 + i, P1 + i, time++);
	}
	fg_proctab__stats(f.t, &st);
	fg_budget__stats(b, &bs);
	/* Their parent, pid 1, is read from /proc too. */
	gens = st.generations;
	ASSERT_TRUE(gens >= 100);
	ASSERT_TRUE(st.bytes > 100 * sizeof(struct fg_process));
	ASSERT_U64_EQ(bs.by_part[FG_BUDGET_PROCESSES].bytes, st.bytes);
	/* Given back as they are reaped. */
	for (uint32_t i = 0; i < 50; i++)
		exit_rec(&f, P1 + i, P1 + i, time++);
	fg_proctab__reap(f.t, time + 1000, 500);
	fg_proctab__stats(f.t, &st);
	fg_budget__stats(b, &bs);
	ASSERT_EQ(st.generations, gens - 50);
	ASSERT_U64_EQ(bs.by_part[FG_BUDGET_PROCESSES].bytes, st.bytes);

	/* No room: the share is spent (a budget this small), so new processes are dropped, counted. */
	fg_budget__set_total(b, 8 * st.bytes);
	ASSERT_TRUE(fg_budget__room(b, FG_BUDGET_PROCESSES) == 0);
	fork_rec(&f, P3 + 100000, 1, P3 + 100000, 1, time++);
	fg_proctab__stats(f.t, &st);
	fg_budget__stats(b, &bs);
	ASSERT_EQ(st.generations, gens - 50);
	ASSERT_EQ(st.dropped_processes, 1);
	ASSERT_EQ(bs.by_part[FG_BUDGET_PROCESSES].refused, 1);
	teardown(&f);
	fg_budget__stats(b, &bs);
	ASSERT_U64_EQ(bs.by_part[FG_BUDGET_PROCESSES].bytes, 0);
	fg_budget__free(b);
}
