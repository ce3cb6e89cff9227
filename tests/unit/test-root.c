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

#include "base/macro.h"
#include "container-test.h"
#include "symbols/fgd-root.h"
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
/* The container's root: a file only it has, and an absolute symlink to it. */
static int fill_root(void)
{
	int fd;

	if (mkdir("fgd-root-test", 0755) < 0)
		return -1;
	fd = open("fgd-root-test/binary", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, "inside", 6) != 6 || close(fd) < 0 || symlink(INSIDE, "link") < 0)
		return -1;
	return 0;
}

TEST(foreign_root_outlives_its_process)
{
	char dir[] = "/tmp/fgd-test-root.XXXXXX", buf[64];
	int quit_fd, status, fd;
	struct fg_roots *t;
	struct fg_root *r = NULL, *again = NULL;
	struct fg_roots_stats st;
	pid_t pid;

	pid = container_start(dir, fill_root, &quit_fd);

	ASSERT_OK(fg_roots__new(&t));
	ASSERT_OK(fg_roots__get(t, pid, NULL, &r));
	ASSERT_TRUE(r != NULL);
	ASSERT_OK(fg_roots__get(t, pid, r, &again));
	ASSERT_TRUE(again == r);
	fg_root__unref(again);

	/* Let the process and its namespace go: the root still resolves its paths. */
	close(quit_fd);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

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
