/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/conf.h"
#include "base/macro.h"
#include "fgctl-optfile.h"

struct optfile {
	const char *path;             /* borrowed */
	const struct option *options; /* borrowed: the verb's getopt table */
	const char *const *refused;   /* borrowed: keys the file may not give; NULL: none */
	char **words;                 /* owned, NULL-terminated once done */
	size_t n, cap;
};

#define FAIL(err, ...) (snprintf((err)->message, sizeof((err)->message), __VA_ARGS__), -EINVAL)

char **fgctl_optfile_free(char **argv)
{
	if (argv)
		for (char **w = argv; *w; w++)
			free(*w);
	free(argv);
	return NULL;
}

static bool is_refused(const struct optfile *f, const char *key)
{
	for (const char *const *r = f->refused; r && *r; r++)
		if (strcmp(*r, key) == 0)
			return true;
	return false;
}

static const struct option *find_option(const struct optfile *f, const char *key)
{
	if (is_refused(f, key))
		return NULL;
	for (const struct option *o = f->options; o->name; o++)
		if (strcmp(o->name, key) == 0)
			return o;
	return NULL;
}

/* Appends "--key" or "--key=value"; room for the NULL after it is kept. */
static int add_word(struct optfile *f, const char *key, const char *value)
{
	char *w;
	int r;

	r = FG_GROW(f->words, f->cap, f->n + 2);
	if (r < 0)
		return r;
	if (value ? asprintf(&w, "--%s=%s", key, value) < 0 : asprintf(&w, "--%s", key) < 0)
		return -ENOMEM;
	f->words[f->n++] = w;
	f->words[f->n] = NULL;
	return 0;
}

static int assign(void *userdata, const char *section, const char *key, const char *value,
		  struct fg_conf_error *err)
{
	struct optfile *f = userdata;
	const struct option *o;
	bool yes;

	if (section)
		return FAIL(err, "%s= is in section [%s]; this file has no sections", key, section);
	o = find_option(f, key);
	if (!o)
		return FAIL(err, "unknown key %s", key);
	if (o->has_arg == no_argument) {
		if (fg_conf_parse_bool(value, &yes) < 0)
			return FAIL(err, "%s=%s: expected yes or no", key, value);
		return yes ? add_word(f, key, NULL) : 0;
	}
	if (!value[0])
		return FAIL(err, "%s= has no value", key);
	return add_word(f, key, value);
}

static void say_error(void *userdata, const struct fg_conf_error *err)
{
	const struct optfile *f = userdata;

	if (err->line)
		fprintf(stderr, "fgctl: %s:%u: %s\n", f->path, err->line, err->message);
	else
		fprintf(stderr, "fgctl: %s: %s\n", f->path, err->message);
}

int fgctl_optfile_read(const char *path, const struct option *options, const char *const *refused,
		       char ***ret_argv, size_t *ret_argc)
{
	struct optfile f = { .path = path, .options = options, .refused = refused };
	_cleanup_free_ char *text = NULL;
	size_t len;
	int r;

	r = fg_read_file(path, FGCTL_OPTFILE_MAX, &text, &len);
	if (r < 0) {
		fprintf(stderr, "fgctl: cannot read %s: %s\n", path,
			r == -EFBIG ? "larger than 64 KiB" : strerror(-r));
		return r;
	}
	r = FG_GROW(f.words, f.cap, 1);
	if (r >= 0) {
		f.words[0] = NULL;
		r = fg_conf_parse(text, len, assign, say_error, &f);
	}
	if (r < 0) {
		if (r == -ENOMEM)
			fprintf(stderr, "fgctl: %s: %s\n", path, strerror(ENOMEM));
		fgctl_optfile_free(f.words);
		return r;
	}
	*ret_argv = f.words;
	*ret_argc = f.n;
	return 0;
}
