/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/outbuf.h"
#include "base/utf8.h"

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
	if (len > b->cap - b->used) {
		r = FG_GROW(b->data, b->cap, b->used + len);
		if (r < 0) {
			b->err = r;
			return;
		}
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

/*
 * The number of decimal units of 10^-decimals in v, rounded as printf
 * rounds: to nearest, ties to even, decided on v's exact binary value. fma()
 * computes v * scale - k with a single rounding, which keeps the sign of
 * the exact difference, so the comparisons below are exact.
 */
static int64_t round_fixed(double v, double scale)
{
	double p = v * scale, k = floor(p), d;

	/*
	 * Below 2^32 the rounded product is within 2^-21 of the exact one, so
	 * unless its fraction is that close to 0, 1/2 or 1 it decides alone.
	 */
	if (p < 4294967296.0) {
		double f = p - k;

		if (f > 1e-6 && f < 1 - 1e-6 && fabs(f - 0.5) > 1e-6)
			return (int64_t)k + (f > 0.5);
	}
	if (fma(v, scale, -k) < 0) /* the product rounded up onto an integer */
		k -= 1;
	else if (fma(v, scale, -(k + 1)) >= 0)
		k += 1;
	d = fma(v, scale, -(k + 0.5));
	if (d > 0 || (d == 0 && fmod(k, 2) != 0))
		k += 1;
	return (int64_t)k;
}

void fg_outbuf_put_fixed(struct fg_outbuf *b, double v, int decimals)
{
	static const double scales[] = { 1, 10, 100, 1000 };
	char buf[32], *p = buf + sizeof(buf);
	bool negative = signbit(v);
	uint64_t units;

	if (decimals < 0 || decimals > 3 || !(fabs(v) < 1099511627776.0)) {
		fg_outbuf_printf(b, "%.*f", decimals, v);
		return;
	}
	units = (uint64_t)round_fixed(fabs(v), scales[decimals]);
	for (int i = 0; i < decimals; i++) {
		*--p = (char)('0' + units % 10);
		units /= 10;
	}
	if (decimals > 0)
		*--p = '.';
	do {
		*--p = (char)('0' + units % 10);
		units /= 10;
	} while (units > 0);
	if (negative) /* printf keeps the sign of -0.001 as "-0.00" */
		*--p = '-';
	fg_outbuf_put(b, p, (size_t)(buf + sizeof(buf) - p));
}

/* Bytes that stand for themselves in markup: printable ASCII but & < > " '. */
static bool plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '&' && c != '<' && c != '>' && c != '"' && c != '\'';
}

void fg_outbuf_put_markup(struct fg_outbuf *b, const char *s, size_t len, size_t max_cps)
{
	size_t limit = SIZE_MAX, done = 0, i = 0;

	if (max_cps != SIZE_MAX && fg_utf8_count(s, len) > max_cps)
		limit = max_cps - 2;
	while (i < len && done < limit) {
		const unsigned char *p = (const unsigned char *)s + i;
		uint32_t cp;
		size_t n;

		/* Runs of plain ASCII, the usual name, go in one copy. */
		for (n = 0; i + n < len && done + n < limit && plain(p[n]); n++)
			;
		if (n > 0) {
			fg_outbuf_put(b, p, n);
			i += n;
			done += n;
			continue;
		}
		n = fg_utf8_next(p, len - i, &cp);

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

int fg_outbuf_drain(struct fg_outbuf *b, fg_write_fn fn, void *ctx, size_t budget)
{
	int r = 0;

	if (b->err < 0)
		return b->err;
	if (b->used >= budget && b->used > 0) {
		r = fn(ctx, b->data, b->used);
		fg_outbuf_reset(b);
	}
	return r;
}

void fg_outbuf_put_json_str(struct fg_outbuf *b, const char *s, size_t len)
{
	fg_outbuf_puts(b, "\"");
	for (size_t i = 0; i < len;) {
		const unsigned char *p = (const unsigned char *)s + i;
		uint32_t cp;
		size_t n = fg_utf8_next(p, len - i, &cp);

		switch (cp) {
		case '"':
			fg_outbuf_puts(b, "\\\"");
			break;
		case '\\':
			fg_outbuf_puts(b, "\\\\");
			break;
		case '<':
		case '>':
		case '&':
		case 0x2028:
		case 0x2029:
			fg_outbuf_printf(b, "\\u%04x", (unsigned)cp);
			break;
		case 0xfffd:
			fg_outbuf_puts(b, "\\ufffd");
			break;
		default:
			if (cp < 0x20)
				fg_outbuf_printf(b, "\\u%04x", (unsigned)cp);
			else
				fg_outbuf_put(b, (const char *)p, n);
			break;
		}
		i += n;
	}
	fg_outbuf_puts(b, "\"");
}
