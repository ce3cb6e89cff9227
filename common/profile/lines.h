/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Line splitting for the text importers (folded stacks, perf script): reads
 * a file descriptor in large blocks and hands each line to a callback in
 * place, so a 100 MB input costs one buffer, not one copy per line.
 */

#include <stddef.h>
#include <stdint.h>

/*
 * Called once per line, without its '\n' (a '\r' before it is kept; the
 * parsers ignore it). line is borrowed for the call only. lineno counts from
 * 1. A negative return stops reading and is returned by fg_lines_read_fd().
 */
typedef int (*fg_line_fn)(void *ctx, const char *line, size_t len, uint64_t lineno);

/*
 * Reads fd to its end, calling fn for every line, the last one too when it
 * has no final newline. Lines longer than max_line bytes are an error
 * (-E2BIG) rather than an unbounded allocation. Returns 0, fn's error, or a
 * negative errno from read() or allocation.
 */
int fg_lines_read_fd(int fd, size_t max_line, fg_line_fn fn, void *ctx);

/* As fg_lines_read_fd() for a buffer in memory (the fuzz targets and tests use it). */
int fg_lines_split(const char *data, size_t len, fg_line_fn fn, void *ctx);

/*
 * The same for text that arrives in pieces (a socket's chunks): complete
 * lines are handed over where they lie, and only an unfinished line's start
 * is kept until its end arrives.
 */
struct fg_lines {
	char *buf; /* owned: the unfinished line */
	size_t cap, have;
	uint64_t lineno;
	size_t max_line;
	fg_line_fn fn;
	void *ctx; /* borrowed */
};

void fg_lines_init(struct fg_lines *l, size_t max_line, fg_line_fn fn, void *ctx);
/* 0, fn's error, -E2BIG for a line longer than max_line, or -ENOMEM. */
int fg_lines_feed(struct fg_lines *l, const char *data, size_t len);
/* At the end: hands over the last line if it had no final newline. 0 or fn's error. */
int fg_lines_finish(struct fg_lines *l);
void fg_lines_done(struct fg_lines *l);
