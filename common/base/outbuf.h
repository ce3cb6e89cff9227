/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The chunk buffer the renderers assemble their output in. The put
 * functions append and keep the first error in err, so a piece of output is
 * written straight through and checked once at its end.
 */

#include <stddef.h>

#include "base/emit.h"
#include "base/macro.h"

struct fg_outbuf {
	char *data; /* owned */
	size_t cap, used;
	int err; /* sticky: 0 or the first negative errno */
};

/* Empties the buffer for the next chunk and clears the error; keeps the memory. */
void fg_outbuf_reset(struct fg_outbuf *b);
void fg_outbuf_done(struct fg_outbuf *b);

void fg_outbuf_put(struct fg_outbuf *b, const void *s, size_t len);
void fg_outbuf_puts(struct fg_outbuf *b, const char *s);
_printf_(2, 3) void fg_outbuf_printf(struct fg_outbuf *b, const char *fmt, ...);

/*
 * Appends v with exactly `decimals` (0 to 3) digits after the point, the
 * same bytes as printf("%.*f") in the default rounding mode, without its
 * cost for the usual values (finite, |v| < 2^40); others go through printf.
 */
void fg_outbuf_put_fixed(struct fg_outbuf *b, double v, int decimals);

/*
 * Appends s[0..len) as markup character data, valid in XML and HTML text
 * and in quoted attribute values: & < > " ' escaped, U+2028 and U+2029 as
 * character references, bytes that are not UTF-8 and control characters as
 * U+FFFD (see utf8.h). Writes at most
 * max_cps code points: a longer s is cut to max_cps - 2 of them and "..",
 * as flamegraph.pl labels frames (max_cps >= 3, or SIZE_MAX for no limit).
 */
void fg_outbuf_put_markup(struct fg_outbuf *b, const char *s, size_t len, size_t max_cps);

/*
 * For writers that hand their output on as it grows, whole (not resumable
 * as emit.h's): once b holds budget bytes or more (1: anything), hands
 * them to fn and empties b. 0, b's error, or fn's.
 */
int fg_outbuf_drain(struct fg_outbuf *b, fg_write_fn fn, void *ctx, size_t budget);

/*
 * Appends s[0..len) as a JSON string that is safe inside an HTML <script>
 * element: no '<' (so no "</script" and no "<!--"), and no U+2028 or
 * U+2029, which end a line in older JavaScript; '>' and '&' are escaped as
 * well, for readers that look for markup anywhere. Bytes that are not UTF-8
 * become U+FFFD, control characters \u escapes.
 */
void fg_outbuf_put_json_str(struct fg_outbuf *b, const char *s, size_t len);
