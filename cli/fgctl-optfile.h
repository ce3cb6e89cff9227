/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A verb's options from a file (fgctl push --config, fgctl(1)): "key =
 * value" lines whose keys are the verb's long options without their "--",
 * with "#" and ";" comments and blank lines (common/base/conf.h reads it: no
 * sections, no quoting, no continuation). An option that takes no value is
 * given yes or no (no: as if absent). A repeatable option is repeated.
 *
 * The file becomes the words of a command line, "--key=value" in the
 * file's order, which the caller puts before its own: whatever the command
 * line says again is parsed later, and so wins.
 */

#include <getopt.h>
#include <stddef.h>

/* The largest file read: an option file is a few lines. */
#define FGCTL_OPTFILE_MAX (64 * 1024)

/*
 * Reads path against options (a getopt_long table, ended by a zeroed
 * entry); the names in refused (a NULL-terminated list: "config", "help")
 * are unknown keys in a file. Each problem is said on stderr as
 * "fgctl: PATH:LINE: ...", every one of them before the call returns.
 * Stores the words in *ret_argv (NULL-terminated; caller frees with
 * fgctl_optfile_free()) and their number in *ret_argc. 0, -EINVAL (a bad
 * line), -EFBIG, -ENOMEM, or the errno of opening or reading (said too).
 */
int fgctl_optfile_read(const char *path, const struct option *options, const char *const *refused,
		       char ***ret_argv, size_t *ret_argc);

/* Frees what fgctl_optfile_read() stored; accepts NULL. Returns NULL. */
char **fgctl_optfile_free(char **argv);
