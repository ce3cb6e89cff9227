/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Query times, spans and selectors arrive from any local user through the
 * socket (and from the command line, with diff --baseline's option string):
 * split the input at NUL bytes and run each piece through every parser.
 */
#include <stdlib.h>
#include <string.h>

#include "base/argsplit.h"
#include "proto/selector.h"
#include "proto/when.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *p;
	int64_t t;
	uint64_t ms;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	for (p = buf; p <= buf + size; p += strlen(p) + 1) {
		struct fg_selector_spec spec = { .uid = -1, .comm = p, .cgroup = p, .exe = p };
		struct fg_selector *s;

		char **words;
		size_t n;

		if (fg_split_args(p, &words, &n, NULL, NULL) == 0) {
			/* Every word comes from the input: none is longer than it. */
			for (size_t i = 0; i < n; i++)
				if (strlen(words[i]) > strlen(p))
					abort();
			if (words[n])
				abort();
			free(words);
		}
		(void)fg_parse_span(p, &ms);
		(void)fg_parse_time(p, 1710074096000LL, 3600, &t);
		(void)fg_parse_time(p, 0, -12 * 3600, &t);
		/* The same checks as the daemon: regcomp sees only tame patterns. */
		if (fg_selector__new(&spec, &s, NULL) == 0) {
			(void)fg_selector__match(s, 1, 0, p, p, p);
			fg_selector__free(s);
		}
	}
	free(buf);
	return 0;
}
