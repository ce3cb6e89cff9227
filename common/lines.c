/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lines.h"
#include "macro.h"

#define BLOCK (1u << 20)

/*
 * Calls fn for each complete line of data[0..len), leaving the
 * unterminated rest in the caller: stores the bytes consumed in *ret_used.
 */
static int split_complete(const char *data, size_t len, uint64_t *lineno, fg_line_fn fn,
			  void *ctx, size_t *ret_used)
{
	size_t pos = 0;
	int r;

	for (;;) {
		const char *nl = memchr(data + pos, '\n', len - pos);

		if (!nl)
			break;
		r = fn(ctx, data + pos, (size_t)(nl - (data + pos)), ++*lineno);
		if (r < 0)
			return r;
		pos = (size_t)(nl - data) + 1;
	}
	*ret_used = pos;
	return 0;
}

int fg_lines_split(const char *data, size_t len, fg_line_fn fn, void *ctx)
{
	uint64_t lineno = 0;
	size_t used;
	int r;

	r = split_complete(data, len, &lineno, fn, ctx, &used);
	if (r < 0)
		return r;
	if (used < len)
		return fn(ctx, data + used, len - used, lineno + 1);
	return 0;
}

int fg_lines_read_fd(int fd, size_t max_line, fg_line_fn fn, void *ctx)
{
	_cleanup_free_ char *buf = NULL;
	size_t cap = 0, have = 0, used;
	uint64_t lineno = 0;
	int r;

	for (;;) {
		ssize_t n;

		/* Room for a whole block after the carried-over partial line. */
		r = FG_GROW(buf, cap, have + BLOCK);
		if (r < 0)
			return r;
		n = read(fd, buf + have, cap - have);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		have += (size_t)n;
		r = split_complete(buf, have, &lineno, fn, ctx, &used);
		if (r < 0)
			return r;
		memmove(buf, buf + used, have - used);
		have -= used;
		if (have > max_line)
			return -E2BIG;
	}
	if (have > 0)
		return fn(ctx, buf, have, lineno + 1);
	return 0;
}
