/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Splitting one option string into words, for options whose value is itself
 * a list of options (fgctl diff --baseline '--since -1h --comm "^my app$"'),
 * with the quoting a shell user writes without thinking:
 *
 *   - blanks (space, tab, newline) separate words;
 *   - '...' keeps everything inside as it is;
 *   - "..." keeps everything inside as it is, except that \" and \\ stand
 *     for " and \;
 *   - outside quotes, a backslash keeps the next character as it is;
 *   - quoted and unquoted parts next to each other make one word, and ''
 *     or "" an empty one.
 *
 * Nothing else is special: no variables, globs, ~, comments or command
 * substitution ($, *, ~, #, ; and | are plain characters). An unterminated
 * quote or a backslash at the very end is an error.
 *
 * Pure.
 */

#include <stddef.h>

/*
 * Splits s into words. Stores a NULL-terminated array of them in *ret_argv
 * (one allocation, words included: the caller frees it with free()) and
 * their number in *ret_argc. Returns 0, -EINVAL with a static description in
 * *ret_error (if not NULL) and the byte offset of the culprit in
 * *ret_offset (if not NULL), or -ENOMEM. Outputs are untouched on failure.
 */
int fg_split_args(const char *s, char ***ret_argv, size_t *ret_argc, const char **ret_error,
		  size_t *ret_offset);
