/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/macro.h"
#include "profile/lines.h"

#define BLOCK (1u << 20)

/*
 * Calls fn for each complete line of data[0..len), leaving the
 * unterminated rest in the caller: stores the bytes consumed in *ret_used.
 */
static int split_complete(const char *data, size_t len, uint64_t *lineno, fg_line_fn fn, void *ctx,
			  size_t *ret_used)
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

void fg_lines_init(struct fg_lines *l, size_t max_line, fg_line_fn fn, void *ctx)
{
	*l = (struct fg_lines){ .max_line = max_line, .fn = fn, .ctx = ctx };
}

void fg_lines_done(struct fg_lines *l)
{
	free(l->buf);
	l->buf = NULL;
	l->cap = l->have = 0;
}

int fg_lines_feed(struct fg_lines *l, const char *data, size_t len)
{
	const char *nl;
	size_t used;
	int r;

	/* Nothing carried over: the complete lines are handed over where they lie. */
	if (l->have == 0) {
		r = split_complete(data, len, &l->lineno, l->fn, l->ctx, &used);
		if (r < 0)
			return r;
		data += used;
		len -= used;
	}
	nl = memchr(data, '\n', len);
	used = nl ? (size_t)(nl - data) : len;
	/* The carried line grows, or ends here; only a line's start is ever copied. */
	if (l->have + used > l->max_line)
		return -E2BIG;
	if (used > 0) {
		r = FG_GROW(l->buf, l->cap, l->have + used);
		if (r < 0)
			return r;
		memcpy(l->buf + l->have, data, used);
		l->have += used;
	}
	if (!nl)
		return 0;
	r = fg_lines_finish(l);
	return r < 0 ? r : fg_lines_feed(l, nl + 1, len - used - 1);
}

int fg_lines_finish(struct fg_lines *l)
{
	size_t have = l->have;

	l->have = 0;
	return have > 0 ? l->fn(l->ctx, l->buf, have, ++l->lineno) : 0;
}

int fg_lines_read_fd(int fd, size_t max_line, fg_line_fn fn, void *ctx)
{
	_cleanup_free_ char *block = malloc(BLOCK);
	struct fg_lines l;
	int r = 0;

	if (!block)
		return -ENOMEM;
	fg_lines_init(&l, max_line, fn, ctx);
	for (;;) {
		ssize_t n = read(fd, block, BLOCK);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if (n == 0) {
			r = fg_lines_finish(&l);
			break;
		}
		r = fg_lines_feed(&l, block, (size_t)n);
		if (r < 0)
			break;
	}
	fg_lines_done(&l);
	return r;
}
