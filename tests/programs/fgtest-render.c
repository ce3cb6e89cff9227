/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * fgtest-render: folded stacks in, flame graph out, as SVG or (-f html) as
 * the canvas HTML page. A test helper for the renderers until `fgctl render`
 * exists.
 *
 *   fgtest-render [-f svg|html] [-t TITLE] [-s SUBTITLE] [-i INFO]... [-w WIDTH]
 *                 [-m MINWIDTH] [-c COUNTNAME] [FILE]
 *
 * Reads FILE or stdin. Malformed lines are reported with their line number
 * and skipped, as flamegraph.pl skips them; the exit status is then still 0
 * unless -S (strict) was given, which makes them fatal.
 */

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/macro.h"
#include "profile/folded.h"
#include "render/flame-html.h"
#include "render/flame.h"

#define MAX_INFO 16

/* Like fclosep() from macro.h, but leaves stdin open. */
static void close_inputp(FILE **f)
{
	if (*f && *f != stdin)
		fclose(*f);
}

static int write_all(void *ctx, const void *buf, size_t len)
{
	int fd = *(int *)ctx;
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int parse_double(const char *s, double *ret)
{
	char *end;

	errno = 0;
	*ret = strtod(s, &end);
	return errno == 0 && end != s && *end == '\0' ? 0 : -EINVAL;
}

static int parse_unsigned(const char *s, unsigned *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v > UINT_MAX)
		return -EINVAL;
	*ret = (unsigned)v;
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out, "Usage: fgtest-render [-f svg|html] [-t TITLE] [-s SUBTITLE] [-i INFO]...\n"
		     "                     [-w WIDTH] [-m MINWIDTH] [-c COUNTNAME] [-S] [FILE]\n");
}

int main(int argc, char **argv)
{
	_cleanup_(fg_folded__freep) struct fg_folded *model = NULL;
	_cleanup_(fg_flame__freep) struct fg_flame *flame = NULL;
	_cleanup_(fg_flame_html__freep) struct fg_flame_html *html = NULL;
	_cleanup_(close_inputp) FILE *in = NULL;
	_cleanup_free_ char *line = NULL;
	const char *info[MAX_INFO + 1] = {};
	const char *path = "-";
	struct fg_flame_opts opts;
	size_t cap = 0, n_info = 0, lineno = 0, bad = 0;
	bool strict = false, as_html = false;
	ssize_t len;
	int fd = STDOUT_FILENO, c, r;

	fg_flame_opts_init(&opts);
	while ((c = getopt(argc, argv, "f:t:s:i:w:m:c:Sh")) >= 0) {
		switch (c) {
		case 'f':
			if (strcmp(optarg, "html") == 0) {
				as_html = true;
			} else if (strcmp(optarg, "svg") == 0) {
				as_html = false;
			} else {
				fprintf(stderr, "fgtest-render: unknown format '%s'\n", optarg);
				return 2;
			}
			break;
		case 't':
			opts.title = optarg;
			break;
		case 's':
			opts.subtitle = optarg;
			break;
		case 'i':
			if (n_info == MAX_INFO) {
				fprintf(stderr, "fgtest-render: at most %d info lines\n", MAX_INFO);
				return 2;
			}
			info[n_info++] = optarg;
			opts.info = info;
			break;
		case 'w':
			if (parse_unsigned(optarg, &opts.width) < 0) {
				fprintf(stderr, "fgtest-render: bad width '%s'\n", optarg);
				return 2;
			}
			break;
		case 'm':
			if (parse_double(optarg, &opts.min_width) < 0) {
				fprintf(stderr, "fgtest-render: bad minimum width '%s'\n", optarg);
				return 2;
			}
			break;
		case 'c':
			opts.count_name = optarg;
			break;
		case 'S':
			strict = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind > 1) {
		usage(stderr);
		return 2;
	}
	if (optind < argc)
		path = argv[optind];

	in = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
	if (!in) {
		fprintf(stderr, "fgtest-render: failed to open %s: %m\n", path);
		return 1;
	}
	model = fg_folded__new();
	if (!model) {
		fprintf(stderr, "fgtest-render: out of memory\n");
		return 1;
	}
	while ((len = getline(&line, &cap, in)) >= 0) {
		lineno++;
		if (len > 0 && line[len - 1] == '\n')
			len--;
		r = fg_folded__add_line(model, line, (size_t)len);
		if (r == -EINVAL || r == -ERANGE) {
			fprintf(stderr, "fgtest-render: %s:%zu: malformed line, %s\n", path, lineno,
				strict ? "giving up" : "ignoring");
			if (strict)
				return 1;
			bad++;
		} else if (r < 0) {
			fprintf(stderr, "fgtest-render: %s:%zu: %s\n", path, lineno, strerror(-r));
			return 1;
		}
	}
	if (ferror(in)) {
		fprintf(stderr, "fgtest-render: failed to read %s\n", path);
		return 1;
	}
	if (bad > 0)
		fprintf(stderr, "fgtest-render: ignored %zu malformed line(s)\n", bad);

	r = fg_folded__sort(model);
	if (r < 0) {
		fprintf(stderr, "fgtest-render: failed to sort stacks: %s\n", strerror(-r));
		return 1;
	}
	if (as_html)
		r = fg_flame_html__new(model, &opts, &html);
	else
		r = fg_flame__new(model, &opts, &flame);
	if (r < 0) {
		fprintf(stderr, "fgtest-render: failed to lay out the graph: %s\n", strerror(-r));
		return r == -EINVAL ? 2 : 1;
	}
	do
		r = html ? fg_flame_html__emit(html, write_all, &fd, 64 * 1024) :
			   fg_flame__emit(flame, write_all, &fd, 64 * 1024);
	while (r == 0);
	if (r < 0) {
		fprintf(stderr, "fgtest-render: failed to write the graph: %s\n", strerror(-r));
		return 1;
	}
	return 0;
}
