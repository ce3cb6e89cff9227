/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fgctl push reads its cursor file back, and takes labels and name
 * templates from its command line: each must refuse what is damaged, never
 * crash. The input runs through the cursor parser whole, and through the
 * label and template checks split at NUL bytes; what parses must survive a
 * round trip.
 */
#include <stdlib.h>
#include <string.h>

#include "proto/ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fg_ingest_cursor c = {}, again = {};
	struct fg_outbuf b = {};
	char *buf = malloc(size + 1);
	const char *why;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	if (fg_ingest_cursor_parse((const char *)data, size, &c) == 0) {
		fg_ingest_cursor_format(&c, &b);
		if (b.err == 0 && (fg_ingest_cursor_parse(b.data, b.used, &again) != 0 ||
				   again.until_ms != c.until_ms || again.n_sent != c.n_sent))
			abort();
	}
	for (char *p = buf; p <= buf + size; p += strlen(p) + 1) {
		struct fg_ingest_label l;
		struct fg_ingest_process proc = { .comm = p, .cgroup = p };

		(void)fg_ingest_label_parse(p, &l, &why);
		if (fg_ingest_template_check(p, &why) == 0) {
			fg_outbuf_reset(&b);
			fg_ingest_app_name(p, &proc, &b);
		}
	}
	fg_outbuf_done(&b);
	fg_ingest_cursor_done(&c);
	fg_ingest_cursor_done(&again);
	free(buf);
	return 0;
}
