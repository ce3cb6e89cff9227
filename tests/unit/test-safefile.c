/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/macro.h"
#include "base/safefile.h"
#include "test.h"

/* A directory of the test's own, its descriptor and path. */
struct dir {
	char path[64];
	int fd;
};

static void dir_new(struct dir *d)
{
	snprintf(d->path, sizeof(d->path), "/tmp/fgd-test-safefile.XXXXXX");
	ASSERT_TRUE(mkdtemp(d->path) != NULL);
	d->fd = open(d->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_TRUE(d->fd >= 0);
}

static void dir_free(struct dir *d)
{
	char cmd[128];

	close(d->fd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", d->path);
	ASSERT_EQ(system(cmd), 0);
}

static void put(int dir_fd, const char *name, const char *text)
{
	int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	ASSERT_TRUE(fd >= 0);
	ASSERT_OK(fg_write_all(fd, text, strlen(text)));
	close(fd);
}

/* The file's text, or "" when it cannot be read. */
static const char *text_of(int dir_fd, const char *name)
{
	static char buf[256];
	int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n = fd < 0 ? 0 : read(fd, buf, sizeof(buf) - 1);

	buf[n > 0 ? n : 0] = '\0';
	safe_close(fd);
	return buf;
}

/* How many entries the directory holds besides . and .. */
static int entries(const struct dir *d)
{
	DIR *dir = opendir(d->path);
	struct dirent *de;
	int n = 0;

	ASSERT_TRUE(dir != NULL);
	while ((de = readdir(dir)))
		n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
	closedir(dir);
	return n;
}

TEST(write_replaces_a_planted_link_without_following_it)
{
	struct dir d;
	struct stat st;

	dir_new(&d);
	put(d.fd, "victim", "secret");
	/* Links at the name and at every fixed temporary name a writer might have used. */
	ASSERT_OK(symlinkat("victim", d.fd, "cursor"));
	ASSERT_OK(symlinkat("victim", d.fd, "cursor.tmp"));
	ASSERT_OK(symlinkat("victim", d.fd, ".cursor"));
	ASSERT_OK(fg_safefile_write(d.fd, "cursor", "new", 3, 0640));
	ASSERT_STREQ(text_of(d.fd, "victim"), "secret");
	ASSERT_STREQ(text_of(d.fd, "cursor"), "new");
	ASSERT_OK(fstatat(d.fd, "cursor", &st, AT_SYMLINK_NOFOLLOW));
	ASSERT_TRUE(S_ISREG(st.st_mode));
	ASSERT_EQ(st.st_mode & 0777, 0640 & ~umask(umask(0)));
	/* No temporary file is left: victim, cursor and the two links. */
	ASSERT_EQ(entries(&d), 4);
	dir_free(&d);
}

TEST(create_never_opens_what_is_there)
{
	struct dir d;
	char tmp[FG_SAFEFILE_TMP_MAX];
	char long_name[NAME_MAX + 1];
	int fd;

	dir_new(&d);
	fd = fg_safefile_create(d.fd, "out.svg", 0600, tmp);
	ASSERT_TRUE(fd >= 0);
	ASSERT_TRUE(strncmp(tmp, ".out.svg.", 9) == 0 && strlen(tmp) == 15);
	ASSERT_OK(fg_write_all(fd, "x", 1));
	close(fd);
	/* Discarded: only the commit makes the name. */
	ASSERT_OK(unlinkat(d.fd, tmp, 0));
	ASSERT_EQ(entries(&d), 0);

	/* A name whose temporary name would pass NAME_MAX. */
	memset(long_name, 'a', NAME_MAX - 4);
	long_name[NAME_MAX - 4] = '\0';
	ASSERT_ERR(fg_safefile_create(d.fd, long_name, 0600, tmp), -ENAMETOOLONG);

	/* A commit whose rename fails leaves nothing behind. */
	fd = fg_safefile_create(d.fd, "x", 0600, tmp);
	ASSERT_TRUE(fd >= 0);
	close(fd);
	ASSERT_OK(mkdirat(d.fd, "adir", 0700));
	ASSERT_OK(mkdirat(d.fd, "adir/full", 0700));
	ASSERT_TRUE(fg_safefile_commit(d.fd, tmp, "adir") < 0);
	ASSERT_TRUE(faccessat(d.fd, tmp, F_OK, AT_SYMLINK_NOFOLLOW) < 0);
	dir_free(&d);
}

static struct stat mode_stat(mode_t mode, uid_t uid)
{
	return (struct stat){ .st_mode = mode, .st_uid = uid };
}

TEST(dir_trust)
{
	struct stat st;

	st = mode_stat(S_IFDIR | 0755, 1000);
	ASSERT_TRUE(fg_safefile_dir_unsafe(&st, 1000) == NULL);
	st = mode_stat(S_IFDIR | 0700, 0);
	ASSERT_TRUE(fg_safefile_dir_unsafe(&st, 1000) == NULL);
	/* /tmp: others write it, but cannot replace what is the caller's. */
	st = mode_stat(S_IFDIR | 01777, 0);
	ASSERT_TRUE(fg_safefile_dir_unsafe(&st, 1000) == NULL);
	/* Another user's directory, the issue's /var/lib/fgd-push under root's push. */
	st = mode_stat(S_IFDIR | 0755, 999);
	ASSERT_TRUE(strstr(fg_safefile_dir_unsafe(&st, 0), "owned by another user") != NULL);
	st = mode_stat(S_IFDIR | 0775, 0);
	ASSERT_TRUE(strstr(fg_safefile_dir_unsafe(&st, 0), "other users can write") != NULL);
	st = mode_stat(S_IFDIR | 0757, 1000);
	ASSERT_TRUE(fg_safefile_dir_unsafe(&st, 1000) != NULL);
	st = mode_stat(S_IFREG | 0700, 1000);
	ASSERT_TRUE(fg_safefile_dir_unsafe(&st, 1000) != NULL);

	st = mode_stat(S_IFLNK | 0777, 1000);
	ASSERT_TRUE(fg_safefile_owned(&st, 1000));
	ASSERT_TRUE(!fg_safefile_owned(&st, 1001));
	st = mode_stat(S_IFLNK | 0777, 0);
	ASSERT_TRUE(fg_safefile_owned(&st, 1001));
}

TEST(open_dir_splits_the_path)
{
	const char *name;
	int fd;

	ASSERT_OK(fg_safefile_open_dir(AT_FDCWD, "/tmp/x.svg", &fd, &name));
	ASSERT_STREQ(name, "x.svg");
	close(fd);
	ASSERT_OK(fg_safefile_open_dir(AT_FDCWD, "x.svg", &fd, &name));
	ASSERT_STREQ(name, "x.svg");
	close(fd);
	ASSERT_OK(fg_safefile_open_dir(AT_FDCWD, "/x", &fd, &name));
	ASSERT_STREQ(name, "x");
	close(fd);
	ASSERT_ERR(fg_safefile_open_dir(AT_FDCWD, "/tmp/", &fd, &name), -EISDIR);
	ASSERT_ERR(fg_safefile_open_dir(AT_FDCWD, "/tmp/..", &fd, &name), -EISDIR);
	ASSERT_ERR(fg_safefile_open_dir(AT_FDCWD, ".", &fd, &name), -EISDIR);
	ASSERT_ERR(fg_safefile_open_dir(AT_FDCWD, "", &fd, &name), -EISDIR);
	ASSERT_ERR(fg_safefile_open_dir(AT_FDCWD, "/no/such/dir/x", &fd, &name), -ENOENT);
}

TEST(resolve_follows_only_trusted_links)
{
	struct dir d;
	char path[128], name_of_dir[PATH_MAX];
	uid_t owner = 0;
	char *name;
	int fd;

	dir_new(&d);
	/* A chain of the caller's links, relative each to its own directory. */
	ASSERT_OK(mkdirat(d.fd, "sub", 0700));
	put(d.fd, "sub/real", "x");
	ASSERT_OK(symlinkat("sub/hop", d.fd, "link"));
	ASSERT_OK(symlinkat("real", d.fd, "sub/hop"));
	snprintf(path, sizeof(path), "%s/link", d.path);
	ASSERT_EQ(fg_safefile_resolve(path, geteuid(), &fd, &name, NULL), 0);
	ASSERT_STREQ(name, "real");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ASSERT_TRUE(readlink(path, name_of_dir, sizeof(name_of_dir) - 1) > 0);
	ASSERT_TRUE(strstr(name_of_dir, "/sub") != NULL);
	free(name);
	close(fd);

	/* Nothing there yet, and a link to nothing yet: the name to create. */
	snprintf(path, sizeof(path), "%s/new", d.path);
	ASSERT_EQ(fg_safefile_resolve(path, geteuid(), &fd, &name, NULL), 0);
	ASSERT_STREQ(name, "new");
	free(name);
	close(fd);
	ASSERT_OK(symlinkat("sub/later", d.fd, "dangling"));
	snprintf(path, sizeof(path), "%s/dangling", d.path);
	ASSERT_EQ(fg_safefile_resolve(path, geteuid(), &fd, &name, NULL), 0);
	ASSERT_STREQ(name, "later");
	free(name);
	close(fd);

	/* A loop. */
	ASSERT_OK(symlinkat("loop", d.fd, "loop"));
	snprintf(path, sizeof(path), "%s/loop", d.path);
	ASSERT_ERR(fg_safefile_resolve(path, geteuid(), &fd, &name, NULL), -ELOOP);

	/* /proc's links are the kernel's to follow. */
	ASSERT_EQ(fg_safefile_resolve("/dev/stdout", geteuid(), &fd, &name, NULL), 1);
	ASSERT_STREQ(name, "1");
	free(name);
	close(fd);

	/* Another user's link, anywhere in the chain: refused, its owner said. */
	if (geteuid() != 0) {
		dir_free(&d);
		SKIP("another user's link needs root to make");
	}
	ASSERT_OK(fchownat(d.fd, "sub/hop", 4242, 4242, AT_SYMLINK_NOFOLLOW));
	snprintf(path, sizeof(path), "%s/link", d.path);
	ASSERT_ERR(fg_safefile_resolve(path, 0, &fd, &name, &owner), -EPERM);
	ASSERT_EQ(owner, 4242);
	/* That user resolves it, root's first link and all. */
	ASSERT_EQ(fg_safefile_resolve(path, 4242, &fd, &name, NULL), 0);
	ASSERT_STREQ(name, "real");
	free(name);
	close(fd);
	dir_free(&d);
}
