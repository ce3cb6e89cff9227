/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fgd-root.h"
#include "macro.h"
#include "test.h"

/* A path that exists only inside the child's root. */
#define INSIDE "/fgd-root-test/binary"

static int read_all(int fd, char *buf, size_t size)
{
	ssize_t n = read(fd, buf, size - 1);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return (int)n;
}

TEST(own_root_is_null)
{
	struct fg_roots *t;
	struct fg_root *r = (struct fg_root *)1;
	struct fg_roots_stats st;

	ASSERT_OK(fg_roots__new(&t));
	ASSERT_OK(fg_roots__get(t, getpid(), NULL, &r));
	ASSERT_TRUE(r == NULL);
	/* A pid far above any pid_max is gone, and *ret is left alone. */
	r = (struct fg_root *)1;
	ASSERT_ERR(fg_roots__get(t, 5000001, NULL, &r), -ESRCH);
	ASSERT_TRUE(r == (struct fg_root *)1);
	/* The unknown root resolves nothing, not even a path the host has. */
	r = fg_roots__unknown(t);
	ASSERT_ERR(fg_root__open(r, "/proc/self/stat", O_RDONLY | O_CLOEXEC), -ESRCH);
	fg_roots__stats(t, &st);
	ASSERT_EQ(st.roots, 0);
	ASSERT_EQ(st.roots_unknown, 1);
	fg_root__unref(r);
	fg_roots__free(t);
}

/* The child: a mount namespace of its own, a tmpfs root holding INSIDE, chrooted. */
static _Noreturn void container(const char *dir, int ready_fd, int exit_fd)
{
	char c = 0;
	int fd;

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("none", dir, "tmpfs", 0, "mode=0755") < 0 || chdir(dir) < 0 ||
	    mkdir("fgd-root-test", 0755) < 0)
		_exit(1);
	fd = open("fgd-root-test/binary", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, "inside", 6) != 6 || close(fd) < 0 ||
	    symlink(INSIDE, "link") < 0 || chroot(".") < 0)
		_exit(2);
	if (write(ready_fd, &c, 1) != 1)
		_exit(3);
	(void)read(exit_fd, &c, 1);
	_exit(0);
}

TEST(foreign_root_outlives_its_process)
{
	char dir[] = "/tmp/fgd-test-root.XXXXXX", buf[64], c;
	int ready[2], quit[2], status, fd;
	struct fg_roots *t;
	struct fg_root *r = NULL, *again = NULL;
	struct fg_roots_stats st;
	pid_t pid;

	if (geteuid() != 0)
		SKIP("mount namespaces need root");
	ASSERT_TRUE(mkdtemp(dir));
	ASSERT_OK(pipe2(ready, O_CLOEXEC));
	ASSERT_OK(pipe2(quit, O_CLOEXEC));
	pid = fork();
	ASSERT_TRUE(pid >= 0);
	if (pid == 0) {
		/* Only the parent may hold the ends that signal: EOF must reach the other side. */
		close(ready[0]);
		close(quit[1]);
		container(dir, ready[1], quit[0]);
	}
	close(ready[1]);
	close(quit[0]);
	if (read(ready[0], &c, 1) != 1) {
		waitpid(pid, &status, 0);
		rmdir(dir);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 1)
			SKIP("cannot make a mount namespace here");
		ASSERT_TRUE(!"the child failed to build its root");
	}

	ASSERT_OK(fg_roots__new(&t));
	ASSERT_OK(fg_roots__get(t, pid, NULL, &r));
	ASSERT_TRUE(r != NULL);
	ASSERT_OK(fg_roots__get(t, pid, r, &again));
	ASSERT_TRUE(again == r);
	fg_root__unref(again);

	/* Let the process and its namespace go: the root still resolves its paths. */
	close(quit[1]);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(ready[0]);

	/* The host has no such file: it is resolved in the child's root, and only there. */
	ASSERT_ERR(access(INSIDE, F_OK), -1);
	fd = fg_root__open(r, INSIDE, O_RDONLY | O_CLOEXEC);
	ASSERT_OK(fd);
	ASSERT_EQ(read_all(fd, buf, sizeof(buf)), 6);
	ASSERT_STREQ(buf, "inside");
	close(fd);
	/* An absolute symlink resolves in that root too, not on the host. */
	fd = fg_root__open(r, "/link", O_RDONLY | O_CLOEXEC);
	ASSERT_OK(fd);
	ASSERT_EQ(read_all(fd, buf, sizeof(buf)), 6);
	close(fd);
	/* Neither ".." nor a host path escapes it. */
	ASSERT_ERR(fg_root__open(r, "/../../../proc/self/stat", O_RDONLY | O_CLOEXEC), -ENOENT);
	ASSERT_ERR(fg_root__open(r, "/etc/passwd", O_RDONLY | O_CLOEXEC), -ENOENT);

	fg_roots__stats(t, &st);
	ASSERT_EQ(st.roots, 1);
	/* Pruning keeps a root someone still holds, and closes it once no one does. */
	fg_roots__prune(t);
	fg_roots__stats(t, &st);
	ASSERT_EQ(st.roots, 1);
	fg_root__unref(r);
	fg_roots__prune(t);
	fg_roots__stats(t, &st);
	ASSERT_EQ(st.roots, 0);
	fg_roots__free(t);
	ASSERT_OK(rmdir(dir));
}
