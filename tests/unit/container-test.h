/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A hand-made container for unit tests: a child process in a mount namespace
 * of its own, chrooted into a tmpfs mounted on a temporary directory, which
 * it fills first. It waits until the test lets it go.
 */

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

/* Fills the container's root (the current directory); returns 0, or nonzero on failure. */
typedef int (*container_fill_fn)(void);

static _Noreturn void container_child(const char *dir, container_fill_fn fill, int ready_fd,
				      int quit_fd)
{
	char c = 0;

	/* Exit status 1: no mount namespace here, which the test skips on. */
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("none", dir, "tmpfs", 0, "mode=0755") < 0 || chdir(dir) < 0)
		_exit(1);
	if (fill() != 0 || chroot(".") < 0 || write(ready_fd, &c, 1) != 1)
		_exit(2);
	(void)read(quit_fd, &c, 1);
	_exit(0);
}

/*
 * Starts the container in dir (a template for mkdtemp) and waits until it
 * is ready. Skips the test when this machine cannot make one. Returns its
 * pid; closing *ret_quit_fd lets it exit.
 */
static pid_t container_start(char *dir, container_fill_fn fill, int *ret_quit_fd)
{
	int ready[2], quit[2], status;
	pid_t pid;
	char c;

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
		container_child(dir, fill, ready[1], quit[0]);
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
	close(ready[0]);
	*ret_quit_fd = quit[1];
	return pid;
}
