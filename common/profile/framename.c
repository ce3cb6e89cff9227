/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "base/macro.h"
#include "base/utf8.h"
#include "profile/framename.h"

/* Bytes that stand for themselves: printable ASCII but ';'. */
static bool plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != ';';
}

bool fg_framename_is_clean(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t n;

		if (plain(p[i])) {
			i++;
			continue;
		}
		if (p[i] < 0x80)
			return false; /* a control character or ';' */
		n = fg_utf8_next(p + i, len - i, &cp);
		/* U+FFFD decoded from its own three bytes is a name's business. */
		if (cp == 0xfffd && !(n == 3 && memcmp(p + i, "\xef\xbf\xbd", 3) == 0))
			return false;
		i += n;
	}
	return true;
}

int fg_framename_clean(const char *s, size_t len, char **buf, size_t *cap, size_t *ret_len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t used = 0;
	int r;

	/* Every input byte gives at most three output bytes. */
	if (len > SIZE_MAX / 3)
		return -ENOMEM;
	r = FG_GROW(*buf, *cap, MAX(len * 3, (size_t)1));
	if (r < 0)
		return r;
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t n;

		if (plain(p[i])) {
			(*buf)[used++] = (char)p[i++];
			continue;
		}
		if (p[i] == ';') {
			(*buf)[used++] = ':';
			i++;
			continue;
		}
		n = fg_utf8_next(p + i, len - i, &cp);
		if (cp == 0xfffd) {
			/* A bad byte, or a character no output may hold: one U+FFFD each. */
			memcpy(*buf + used, "\xef\xbf\xbd", 3);
			used += 3;
		} else {
			memcpy(*buf + used, p + i, n);
			used += n;
		}
		i += n;
	}
	*ret_len = used;
	return 0;
}

/* "pkg.(*T).M": a '(' right after a '.', and a ')' right before a later '.'. */
static bool looks_like_go(const char *s, size_t len)
{
	const char *open = memmem(s, len, ".(", 2);
	size_t from;

	if (!open)
		return false;
	from = (size_t)(open - s) + 2;
	return memmem(s + from, len - from, ").", 2) != NULL;
}

size_t fg_framename_tidy(char *s, size_t len, bool java)
{
	static const char anon[] = "anonymous namespace)";
	size_t w = 0;

	for (size_t i = 0; i < len; i++)
		if (s[i] == ';')
			s[i] = ':';
	if (!looks_like_go(s, len))
		for (size_t cut = 0; cut < len; cut++) {
			if (s[cut] != '(')
				continue;
			if (len - cut - 1 >= sizeof(anon) - 1 &&
			    memcmp(s + cut + 1, anon, sizeof(anon) - 1) == 0)
				continue;
			len = cut;
			break;
		}
	for (size_t i = 0; i < len; i++)
		if (s[i] != '"' && s[i] != '\'')
			s[w++] = s[i];
	len = w;
	if (java && len > 0 && s[0] == 'L' && memchr(s, '/', len)) {
		memmove(s, s + 1, len - 1);
		len--;
	}
	return len;
}

char fg_framename_annotation(const char *name, size_t len)
{
	if (len >= 4 && memcmp(name + len - 4, "_[", 2) == 0 && name[len - 1] == ']' &&
	    name[len - 2] != '\0' && strchr("kjiw", name[len - 2]))
		return name[len - 2];
	return 0;
}

size_t fg_name_display_len(const char *name, size_t len)
{
	return fg_framename_annotation(name, len) ? len - 4 : len;
}
