/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outbuf.h"
#include "utf8.h"

void fg_outbuf_reset(struct fg_outbuf *b)
{
	b->used = 0;
	b->err = 0;
}

void fg_outbuf_done(struct fg_outbuf *b)
{
	free(b->data);
	*b = (struct fg_outbuf){};
}

void fg_outbuf_put(struct fg_outbuf *b, const void *s, size_t len)
{
	int r;

	if (b->err < 0)
		return;
	r = FG_GROW(b->data, b->cap, b->used + len);
	if (r < 0) {
		b->err = r;
		return;
	}
	memcpy(b->data + b->used, s, len);
	b->used += len;
}

void fg_outbuf_puts(struct fg_outbuf *b, const char *s)
{
	fg_outbuf_put(b, s, strlen(s));
}

void fg_outbuf_printf(struct fg_outbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n, r;

	if (b->err < 0)
		return;
	for (;;) {
		size_t room = b->cap - b->used;

		va_start(ap, fmt);
		n = vsnprintf(b->data ? b->data + b->used : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->err = -EINVAL;
			return;
		}
		if ((size_t)n < room) {
			b->used += (size_t)n;
			return;
		}
		r = FG_GROW(b->data, b->cap, b->used + (size_t)n + 1);
		if (r < 0) {
			b->err = r;
			return;
		}
	}
}

void fg_outbuf_put_markup(struct fg_outbuf *b, const char *s, size_t len, size_t max_cps)
{
	size_t limit = SIZE_MAX, done = 0, i = 0;

	if (max_cps != SIZE_MAX && fg_utf8_count(s, len) > max_cps)
		limit = max_cps - 2;
	while (i < len && done < limit) {
		const unsigned char *p = (const unsigned char *)s + i;
		uint32_t cp;
		size_t n = fg_utf8_next(p, len - i, &cp);

		switch (cp) {
		case '&':
			fg_outbuf_puts(b, "&amp;");
			break;
		case '<':
			fg_outbuf_puts(b, "&lt;");
			break;
		case '>':
			fg_outbuf_puts(b, "&gt;"); /* keeps "]]>" out of any context */
			break;
		case '"':
			fg_outbuf_puts(b, "&quot;");
			break;
		case '\'':
			fg_outbuf_puts(b, "&#39;");
			break;
		case 0x2028:
		case 0x2029:
			/* Line separators end a line in older JavaScript; never raw anywhere. */
			fg_outbuf_printf(b, "&#x%x;", (unsigned)cp);
			break;
		case 0xfffd:
			fg_outbuf_puts(b, "\xef\xbf\xbd");
			break;
		default:
			fg_outbuf_put(b, p, n);
			break;
		}
		i += n;
		done++;
	}
	if (limit != SIZE_MAX)
		fg_outbuf_puts(b, "..");
}
