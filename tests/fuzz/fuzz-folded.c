/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Folded input comes from any tool and any user: parse, sort and re-emit it.
 * Names in it are cleaned as they enter the model (framename.h), so beyond
 * not crashing, what comes out must be valid UTF-8 with no control byte but
 * the newline ending each line; and the cleaning itself, given the raw bytes
 * as one name, must give a clean name that cleaning leaves as it is.
 */
#include <stdlib.h>
#include <string.h>

#include "profile/folded.h"
#include "profile/framename.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct out {
	char *buf; /* owned */
	size_t len;
};

static int collect(void *ctx, const void *buf, size_t len)
{
	struct out *o = ctx;
	char *p = realloc(o->buf, o->len + len);

	if (!p)
		return -1;
	memcpy(p + o->len, buf, len);
	o->buf = p;
	o->len += len;
	return 0;
}

/* Strict UTF-8 (RFC 3629), independent of common/base/utf8; newline is the only control allowed. */
static void check_text(const unsigned char *s, size_t len, bool newlines)
{
	for (size_t i = 0; i < len;) {
		uint32_t cp, min;
		size_t n;

		if (s[i] < 0x80) {
			if ((s[i] < 0x20 && !(newlines && s[i] == '\n')) || s[i] == 0x7f)
				abort();
			i++;
			continue;
		}
		if ((s[i] & 0xe0) == 0xc0)
			n = 2, cp = s[i] & 0x1f, min = 0x80;
		else if ((s[i] & 0xf0) == 0xe0)
			n = 3, cp = s[i] & 0x0f, min = 0x800;
		else if ((s[i] & 0xf8) == 0xf0)
			n = 4, cp = s[i] & 0x07, min = 0x10000;
		else
			abort();
		if (len - i < n)
			abort();
		for (size_t k = 1; k < n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				abort();
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ||
		    (cp >= 0x80 && cp < 0xa0))
			abort();
		i += n;
	}
}

static void check_clean(const uint8_t *data, size_t size)
{
	char *buf = NULL, *again = NULL;
	size_t cap = 0, cap_again = 0, len, len_again;

	if (fg_framename_clean((const char *)data, size, &buf, &cap, &len) < 0)
		return;
	check_text((const unsigned char *)buf, len, false);
	if (memchr(buf, ';', len) || !fg_framename_is_clean(buf, len) || len > 3 * size)
		abort();
	if (fg_framename_is_clean((const char *)data, size) !=
	    (len == size && memcmp(buf, data, size) == 0))
		abort();
	if (fg_framename_clean(buf, len, &again, &cap_again, &len_again) == 0 &&
	    (len_again != len || memcmp(again, buf, len) != 0))
		abort();
	free(buf);
	free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fg_folded *f = fg_folded__new();
	const char *p = (const char *)data, *end = p + size;
	struct out o = {};
	size_t cursor = 0;
	int r = 0;

	if (!f)
		return 0;
	check_clean(data, size);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		(void)fg_folded__add_line(f, p, len);
		p += len + 1;
	}
	if (fg_folded__sort(f) == 0)
		while ((r = fg_folded__emit(f, &cursor, collect, &o, 4096)) == 0)
			;
	if (r == 1)
		check_text((const unsigned char *)o.buf, o.len, true);
	free(o.buf);
	fg_folded__free(f);
	return 0;
}
