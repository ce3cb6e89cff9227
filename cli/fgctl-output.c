/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/macro.h"
#include "base/safefile.h"
#include "fgctl-client.h"
#include "fgctl-output.h"

bool fgctl_is_directory(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Prints why path cannot be written and returns r. */
static int open_failed(const struct fgctl_output *o, int r)
{
	fprintf(stderr, "fgctl: cannot write %s: %s\n", o->path, strerror(-r));
	return r;
}

static void forget_target(struct fgctl_output *o)
{
	o->dir_fd = safe_close(o->dir_fd);
	free(o->name);
	o->name = NULL;
}

/*
 * Something that is not a regular file (/dev/null, a FIFO) is written as it
 * is: never created, and never through a link, so that one swapped in after
 * the look cannot send the write elsewhere. Only /proc's links are followed
 * (/dev/stdout), which is the kernel's to do: the file the shell opened is
 * then written from its start.
 */
static int open_direct(struct fgctl_output *o, bool kernel_link)
{
	struct stat st;
	int r = 0;

	o->direct = true;
	o->fd = openat(o->dir_fd, o->name,
		       O_WRONLY | O_NOCTTY | O_CLOEXEC | (kernel_link ? 0 : O_NOFOLLOW));
	if (o->fd < 0 || fstat(o->fd, &st) < 0)
		r = negative_errno();
	else if (S_ISREG(st.st_mode) && !kernel_link)
		r = -EAGAIN; /* a regular file now: it changed between the look and the open */
	else if (S_ISREG(st.st_mode) && ftruncate(o->fd, 0) < 0)
		r = negative_errno();
	forget_target(o);
	if (r < 0) {
		o->fd = safe_close(o->fd);
		if (r == -EAGAIN)
			fprintf(stderr, "fgctl: cannot write %s: it was replaced while opened\n",
				o->path);
		else
			open_failed(o, r);
	}
	return r;
}

int fgctl_output_open(struct fgctl_output *o)
{
	struct stat st;
	uid_t owner = 0;
	bool exists;
	int r;

	o->fd = -1;
	o->dir_fd = -1;
	if (strcmp(o->path, "-") == 0) {
		o->fd = STDOUT_FILENO;
		return 0;
	}
	/*
	 * Links at the path's end are followed one by one, only the user's own
	 * or root's: a link someone else planted where the user writes (-o
	 * /tmp/x.svg) would otherwise have the file it points to replaced.
	 */
	r = fg_safefile_resolve(o->path, geteuid(), &o->dir_fd, &o->name, &owner);
	if (r == -EPERM) {
		fprintf(stderr,
			"fgctl: cannot write %s: it is a symlink of another user's (uid %u), which "
			"fgctl does not follow\n",
			o->path, (unsigned)owner);
		return r;
	}
	if (r < 0)
		return open_failed(o, r);
	if (r > 0)
		return open_direct(o, true);
	exists = fstatat(o->dir_fd, o->name, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (exists && !S_ISREG(st.st_mode))
		return open_direct(o, false);
	/*
	 * A regular file, or none yet: written beside it and renamed over it at
	 * the end, so a failure never leaves half a file. An existing file keeps
	 * its mode.
	 */
	o->fd = fg_safefile_create(o->dir_fd, o->name, 0666, o->tmp);
	r = o->fd;
	if (o->fd >= 0 && exists && fchmod(o->fd, st.st_mode & 07777) < 0) {
		r = negative_errno();
		(void)unlinkat(o->dir_fd, o->tmp, 0);
		o->fd = safe_close(o->fd);
	}
	if (o->fd < 0) {
		forget_target(o);
		return open_failed(o, r);
	}
	return 0;
}

int fgctl_output_write(struct fgctl_output *o, const char *p, size_t len)
{
	return fg_write_all(o->fd, p, len);
}

int fgctl_output_close(struct fgctl_output *o, bool commit)
{
	int r = 0;

	if (o->fd < 0 || o->fd == STDOUT_FILENO)
		return 0;
	if (commit && !o->direct && fsync(o->fd) < 0)
		r = negative_errno();
	if (close(o->fd) < 0 && commit && r == 0 && errno != EINTR)
		r = negative_errno();
	o->fd = -1;
	if (o->direct)
		return r;
	if (commit && r == 0)
		r = fg_safefile_commit(o->dir_fd, o->tmp, o->name);
	else
		(void)unlinkat(o->dir_fd, o->tmp, 0);
	forget_target(o);
	return r;
}

int fgctl_input_open(const char *path, const char **ret_name)
{
	int fd;

	if (strcmp(path, "-") == 0) {
		*ret_name = "<stdin>";
		fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
	} else {
		*ret_name = path;
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0) {
		fprintf(stderr, "fgctl: cannot read %s: %s\n", *ret_name, strerror(errno));
		return -errno;
	}
	return fd;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

int fgctl_format_for_path(const char *path, enum fg_format *ret)
{
	const char *dot = strrchr(path, '.');

	/* Before any plain extension: the name's last dot is not the whole of it. */
	if (ends_with(path, ".pb.gz") || ends_with(path, ".pprof"))
		*ret = FG_FORMAT_PPROF;
	else if (ends_with(path, ".speedscope.json"))
		*ret = FG_FORMAT_SPEEDSCOPE;
	else if (dot && strcmp(dot, ".svg") == 0)
		*ret = FG_FORMAT_SVG;
	else if (dot && strcmp(dot, ".html") == 0)
		*ret = FG_FORMAT_HTML;
	else if (dot && (strcmp(dot, ".folded") == 0 || strcmp(dot, ".txt") == 0))
		*ret = FG_FORMAT_FOLDED;
	else if (dot && strcmp(dot, ".timed") == 0)
		*ret = FG_FORMAT_TIMED;
	else
		return -EINVAL;
	return 0;
}

int fgctl_format_arg(const char *arg, enum fg_format *ret, FILE *err)
{
	if (fg_format_from_name(arg, ret) >= 0)
		return FGCTL_EXIT_OK;
	fprintf(err,
		"fgctl: unknown format '%s': expected svg, html, folded, timed, pprof or "
		"speedscope\n",
		arg);
	return FGCTL_EXIT_USAGE;
}

int fgctl_group_by_arg(const char *arg, enum fg_group_by *ret, FILE *err)
{
	if (fg_group_by_from_name(arg, ret) >= 0)
		return FGCTL_EXIT_OK;
	fprintf(err, "fgctl: unknown grouping '%s': expected cgroup, cgroup-name or process\n",
		arg);
	return FGCTL_EXIT_USAGE;
}

int fgctl_frames_arg(int c, enum fg_frames_side *ret, FILE *err)
{
	enum fg_frames_side side = c == 'u' ? FG_FRAMES_USER : FG_FRAMES_KERNEL;

	if (*ret != FG_FRAMES_ALL && *ret != side) {
		fprintf(err, "fgctl: -u (--user-only) and -k (--kernel-only) exclude each other\n");
		return FGCTL_EXIT_USAGE;
	}
	*ret = side;
	return FGCTL_EXIT_OK;
}

int fgctl_title_arg(const char *arg, char title[FG_PROTO_MAX_TITLE], FILE *err)
{
	size_t len = strlen(arg);

	if (len >= FG_PROTO_MAX_TITLE) {
		fprintf(err, "fgctl: title too long (at most %d bytes)\n", FG_PROTO_MAX_TITLE - 1);
		return FGCTL_EXIT_USAGE;
	}
	memcpy(title, arg, len + 1);
	return FGCTL_EXIT_OK;
}

static const char *extension(enum fg_format f)
{
	switch (f) {
	case FG_FORMAT_FOLDED:
		return "folded";
	case FG_FORMAT_HTML:
		return "html";
	case FG_FORMAT_TIMED:
		return "timed";
	case FG_FORMAT_PPROF:
		return "pb.gz";
	case FG_FORMAT_SPEEDSCOPE:
		return "speedscope.json";
	case FG_FORMAT_SVG:
		break;
	}
	return "svg";
}

void fgctl_default_output(const char *what, enum fg_format format, char *buf)
{
	time_t now = time(NULL);
	struct tm tm;
	char stamp[32] = "now";
	struct stat st;

	if (localtime_r(&now, &tm))
		strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	snprintf(buf, FGCTL_DEFAULT_OUTPUT_MAX, "fgd-%s-%s.%s", what, stamp, extension(format));
	/* Two in one second: the second does not replace the first. */
	for (int n = 2; n < 100 && lstat(buf, &st) == 0; n++)
		snprintf(buf, FGCTL_DEFAULT_OUTPUT_MAX, "fgd-%s-%s-%d.%s", what, stamp, n,
			 extension(format));
	fprintf(stderr, "fgctl: writing %s\n", buf);
}

int fgctl_output_target(struct fgctl_output *o, const char *what, bool format_given,
			enum fg_format *format, FILE *err)
{
	if (!o->path && isatty(STDOUT_FILENO)) {
		fgctl_default_output(what, format_given ? *format : FG_FORMAT_SVG, o->default_path);
		o->path = o->default_path;
		if (!format_given)
			*format = FG_FORMAT_SVG;
		return FGCTL_EXIT_OK;
	}
	if (!o->path)
		o->path = "-";
	if (strcmp(o->path, "-") != 0 && fgctl_is_directory(o->path)) {
		fprintf(err, "fgctl: cannot write %s: it is a directory\n", o->path);
		return FGCTL_EXIT_OUTPUT;
	}
	if (!format_given && strcmp(o->path, "-") != 0 &&
	    fgctl_format_for_path(o->path, format) < 0) {
		fprintf(err,
			"fgctl: cannot tell the format from '%s': name it .svg, .html, .folded, "
			".txt, .pb.gz or .speedscope.json, or give --format\n",
			o->path);
		return FGCTL_EXIT_USAGE;
	}
	return FGCTL_EXIT_OK;
}
