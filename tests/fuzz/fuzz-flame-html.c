/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Frame names reach the HTML page from any folded input: render it, and
 * abort if a name could end a <script> element or open a comment.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/macro.h"
#include "profile/folded.h"
#include "render/flame-html.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct page {
	char *data;
	size_t len, cap;
};

static int collect(void *ctx, const void *buf, size_t len)
{
	struct page *p = ctx;
	int r = FG_GROW(p->data, p->cap, p->len + len + 1);

	if (r < 0)
		return r;
	memcpy(p->data + p->len, buf, len);
	p->len += len;
	p->data[p->len] = '\0';
	return 0;
}

static size_t count_nocase(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = strcasestr(hay, needle); p; p = strcasestr(p + 1, needle))
		n++;
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fg_folded *f = fg_folded__new();
	struct fg_flame_html *h = NULL;
	const char *p = (const char *)data, *end = p + size;
	struct page page = {};
	int r;

	if (!f)
		return 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		(void)fg_folded__add_line(f, p, len);
		p += len + 1;
	}
	if (fg_folded__sort(f) == 0 && fg_flame_html__new(f, NULL, &h) == 0) {
		do
			r = fg_flame_html__emit(h, collect, &page, 4096);
		while (r == 0);
		if (r == 1 &&
		    (strlen(page.data) != page.len || count_nocase(page.data, "<script") != 2 ||
		     count_nocase(page.data, "</script") != 2 ||
		     count_nocase(page.data, "<!--") != 1))
			abort();
	}
	free(page.data);
	fg_flame_html__free(h);
	fg_folded__free(f);
	return 0;
}
