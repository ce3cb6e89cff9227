/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the renderer unit tests share: a sink that collects output in
 * memory, a model from folded lines, and an emit loop that checks the
 * resumable-emit contract of emit.h on the way.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/emit.h"
#include "base/macro.h"
#include "profile/folded.h"
#include "test.h"

struct membuf {
	char *data; /* owned; NUL-terminated once anything was written */
	size_t len, cap;
	size_t calls;
	int fail; /* negative errno to return instead of storing */
};

static inline void membuf_done(struct membuf *m)
{
	free(m->data);
	*m = (struct membuf){};
}

static inline int membuf_write(void *ctx, const void *buf, size_t len)
{
	struct membuf *m = ctx;
	int r;

	if (m->fail < 0)
		return m->fail;
	if (len == 0)
		return -EINVAL; /* the renderers never write empty chunks */
	r = FG_GROW(m->data, m->cap, m->len + len + 1);
	if (r < 0)
		return r;
	memcpy(m->data + m->len, buf, len);
	m->len += len;
	m->data[m->len] = '\0';
	m->calls++;
	return 0;
}

/* A model from NULL-terminated folded lines, sorted if asked. */
static inline struct fg_folded *model_new(const char *const *lines, bool sort)
{
	struct fg_folded *f = fg_folded__new();

	ASSERT_TRUE(f);
	for (; *lines; lines++)
		ASSERT_EQ(fg_folded__add_line(f, *lines, strlen(*lines)), 1);
	if (sort)
		ASSERT_OK(fg_folded__sort(f));
	return f;
}

typedef int (*emit_fn)(void *renderer, fg_write_fn fn, void *ctx, size_t budget);

/*
 * Emits everything into m with the given budget and returns the number of
 * calls: every call but the last writes at least budget bytes, and once
 * done the renderer stays done.
 */
static inline size_t emit_all(emit_fn emit, void *renderer, size_t budget, struct membuf *m)
{
	size_t calls = 0;
	int r;

	do {
		size_t before = m->len;

		r = emit(renderer, membuf_write, m, budget);
		ASSERT_OK(r);
		calls++;
		if (r == 0)
			ASSERT_TRUE(m->len - before >= MAX(budget, (size_t)1));
	} while (r == 0);
	ASSERT_EQ(r, 1);
	ASSERT_EQ(emit(renderer, membuf_write, m, budget), 1);
	ASSERT_TRUE(m->data);
	return calls;
}

static inline size_t count_str(const char *hay, const char *needle)
{
	size_t n = 0, l = strlen(needle);

	for (const char *p = strstr(hay, needle); p; p = strstr(p + l, needle))
		n++;
	return n;
}

/* True if s[0..len) is valid UTF-8 without XML-forbidden control characters. */
static inline bool valid_utf8_xml(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < len;) {
		unsigned char c = p[i];
		size_t n;
		uint32_t cp;

		if (c < 0x80) {
			if (c < 0x20 && c != '\n' && c != '\t')
				return false;
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			n = 2, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			n = 3, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			n = 4, cp = c & 0x07;
		else
			return false;
		if (i + n > len)
			return false;
		for (size_t k = 1; k < n; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (p[i + k] & 0x3f);
		}
		if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
			return false;
		i += n;
	}
	return true;
}

#define ASSERT_CONTAINS(hay, needle)                                                       \
	do {                                                                               \
		if (!strstr((hay), (needle)))                                              \
			fg_test_fail(__FILE__, __LINE__, "output lacks \"%s\"", (needle)); \
	} while (0)
