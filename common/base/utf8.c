/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "base/utf8.h"

size_t fg_utf8_next(const unsigned char *s, size_t len, uint32_t *ret_cp)
{
	uint32_t cp;
	size_t n;
	unsigned char lo = 0x80, hi = 0xbf;

	*ret_cp = 0xfffd;
	if (s[0] < 0x80) {
		if (s[0] >= 0x20 && s[0] != 0x7f)
			*ret_cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0f;
		if (s[0] == 0xe0)
			lo = 0xa0; /* overlong */
		else if (s[0] == 0xed)
			hi = 0x9f; /* surrogates */
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
		if (s[0] == 0xf0)
			lo = 0x90; /* overlong */
		else if (s[0] == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	} else {
		return 1;
	}
	if (len < n || s[1] < lo || s[1] > hi)
		return 1;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 1;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((cp >= 0x80 && cp <= 0x9f) || cp == 0xfffe || cp == 0xffff)
		return n;
	*ret_cp = cp;
	return n;
}

size_t fg_utf8_count(const char *s, size_t len)
{
	size_t n = 0;
	uint32_t cp;

	for (size_t i = 0; i < len; n++) {
		if ((unsigned char)s[i] < 0x80)
			i++; /* ASCII, controls too, is one code point a byte */
		else
			i += fg_utf8_next((const unsigned char *)s + i, len - i, &cp);
	}
	return n;
}
