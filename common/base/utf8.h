/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The UTF-8 decoding the renderers share: frame names are arbitrary bytes,
 * and both the SVG (XML) and the HTML page must be valid UTF-8 without
 * control characters.
 */

#include <stddef.h>
#include <stdint.h>

/*
 * Decodes one code point of s[0..len) (len >= 1). Returns the bytes used and
 * stores the code point, or U+FFFD for a byte that is not valid UTF-8 or a
 * character XML 1.0 forbids or that only disturbs display (C0 and C1
 * controls, DEL, U+FFFE, U+FFFF). Each bad byte becomes one U+FFFD.
 */
size_t fg_utf8_next(const unsigned char *s, size_t len, uint32_t *ret_cp);

/* The code points in s[0..len), each bad byte counting as one, as fg_utf8_next() reads them. */
size_t fg_utf8_count(const char *s, size_t len);
