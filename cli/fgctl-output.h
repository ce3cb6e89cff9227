/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * fgctl's output files: a regular file is written beside the target under a
 * temporary name and renamed over it at the end, so a failed or interrupted
 * run never leaves a half-written file (common/base/safefile.h: created through
 * the directory's descriptor, never through a link). Through a symlink of
 * the user's own or root's, the file it points to is replaced, keeping its
 * mode; another user's symlink is refused. Anything else (a device such as
 * /dev/null, a FIFO) is written as it is, never created. "-" is stdout.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/safefile.h"
#include "proto/proto.h"

/* Room for a default output name, "fgd-WHAT-YYYYmmdd-HHMMSS[-N].EXT". */
#define FGCTL_DEFAULT_OUTPUT_MAX 80

struct fgctl_output {
	const char *path; /* borrowed from argv, or default_path; "-" is stdout */
	char default_path[FGCTL_DEFAULT_OUTPUT_MAX]; /* without -o on a terminal */
	int dir_fd; /* owned: the directory of the file to replace, links resolved */
	char *name; /* owned: that file's name in dir_fd */
	char tmp[FG_SAFEFILE_TMP_MAX]; /* written, then renamed over name */
	bool direct;                   /* writing to path itself: not a regular file */
	int fd;
};

bool fgctl_is_directory(const char *path);

/* Opens the temporary file (or stdout); prints why it cannot. 0 or a negative errno. */
int fgctl_output_open(struct fgctl_output *o);
/* Writes all of p. 0 or a negative errno. */
int fgctl_output_write(struct fgctl_output *o, const char *p, size_t len);
/* Commits (fsync and rename) or discards (unlink) the output. 0 or a negative errno. */
int fgctl_output_close(struct fgctl_output *o, bool commit);

/*
 * Opens an input file to read ("-": stdin, a descriptor of its own), its
 * name for messages in *ret_name ("<stdin>" or path). The descriptor, or a
 * negative errno having said why on stderr.
 */
int fgctl_input_open(const char *path, const char **ret_name);

/*
 * The format an output file's extension names: .svg, .html, .folded or
 * .txt, .timed, .pb.gz or .pprof, .speedscope.json. 0 or -EINVAL.
 */
int fgctl_format_for_path(const char *path, enum fg_format *ret);

/*
 * The -f, --group-by and --title arguments of record and snapshot: say what is wrong
 * on err and return FGCTL_EXIT_USAGE, or FGCTL_EXIT_OK. title is
 * FG_PROTO_MAX_TITLE bytes.
 */
int fgctl_format_arg(const char *arg, enum fg_format *ret, FILE *err);
int fgctl_group_by_arg(const char *arg, enum fg_group_by *ret, FILE *err);
/* -u ('u') or -k ('k') into *ret: an error when the other was given already. */
int fgctl_frames_arg(int c, enum fg_frames_side *ret, FILE *err);
int fgctl_title_arg(const char *arg, char title[FG_PROTO_MAX_TITLE], FILE *err);

/*
 * A name for an output nobody named, in the current directory:
 * "fgd-WHAT-YYYYmmdd-HHMMSS.EXT", EXT the format's (.svg, .pb.gz, ...),
 * with "-2", "-3"... before it when the name is taken. Into buf, of
 * FGCTL_DEFAULT_OUTPUT_MAX bytes; says its name on stderr.
 */
void fgctl_default_output(const char *what, enum fg_format format, char *buf);

/*
 * Settles where a result goes, for record and snapshot (what, for the
 * default name): stdout ("-") when no -o was given and stdout is not a
 * terminal; on a terminal, a default name (fgctl_default_output(), SVG
 * unless format_given); the format from the file's extension unless
 * format_given. Says what is wrong on err and returns the fgctl exit
 * code for it, or FGCTL_EXIT_OK.
 */
int fgctl_output_target(struct fgctl_output *o, const char *what, bool format_given,
			enum fg_format *format, FILE *err);
