/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/argsplit.h"

struct scan {
	char **argv; /* NULL: only count */
	char *chars;
	size_t words, n_chars;
	const char *error;
	size_t offset;
};

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

static void put(struct scan *sc, char c)
{
	if (sc->chars)
		sc->chars[sc->n_chars] = c;
	sc->n_chars++;
}

/* One pass over s: counts the words and their bytes, and copies them when sc->argv is set. */
static int scan(const char *s, struct scan *sc)
{
	const char *p = s;

	for (;;) {
		while (blank(*p))
			p++;
		if (!*p)
			return 0;
		if (sc->argv)
			sc->argv[sc->words] = sc->chars + sc->n_chars;
		while (*p && !blank(*p)) {
			const char *q = p + 1;

			if (*p == '\'') {
				for (; *q && *q != '\''; q++)
					put(sc, *q);
			} else if (*p == '"') {
				for (; *q && *q != '"'; q++) {
					if (*q == '\\' && (q[1] == '"' || q[1] == '\\'))
						q++;
					put(sc, *q);
				}
			} else if (*p == '\\') {
				if (!p[1]) {
					sc->error = "a backslash at the end";
					sc->offset = (size_t)(p - s);
					return -EINVAL;
				}
				put(sc, p[1]);
				p += 2;
				continue;
			} else {
				put(sc, *p++);
				continue;
			}
			if (!*q) {
				sc->error = *p == '"' ? "a double quote without its closing one" :
							"a single quote without its closing one";
				sc->offset = (size_t)(p - s);
				return -EINVAL;
			}
			p = q + 1;
		}
		put(sc, '\0');
		sc->words++;
	}
}

int fg_split_args(const char *s, char ***ret_argv, size_t *ret_argc, const char **ret_error,
		  size_t *ret_offset)
{
	struct scan count = {}, fill = {};
	int r = scan(s, &count);

	if (r < 0) {
		if (ret_error)
			*ret_error = count.error;
		if (ret_offset)
			*ret_offset = count.offset;
		return r;
	}
	if (count.words >= SIZE_MAX / sizeof(char *) - 1)
		return -ENOMEM;
	fill.argv = malloc((count.words + 1) * sizeof(char *) + count.n_chars);
	if (!fill.argv)
		return -ENOMEM;
	fill.chars = (char *)(fill.argv + count.words + 1);
	(void)scan(s, &fill);
	fill.argv[fill.words] = NULL;
	*ret_argv = fill.argv;
	*ret_argc = fill.words;
	return 0;
}
