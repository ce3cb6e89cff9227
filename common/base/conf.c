/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/conf.h"
#include "base/macro.h"

#define MAX_SECTION 64

static void report(struct fg_conf_error *err, fg_conf_error_fn on_error, void *ctx, const char *fmt,
		   ...) _printf_(4, 5);
static void report(struct fg_conf_error *err, fg_conf_error_fn on_error, void *ctx, const char *fmt,
		   ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	on_error(ctx, err);
}

static char *strip(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

static bool valid_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.')
			return false;
	return true;
}

/* One line, NUL-terminated and without its newline. 0 or a negative errno (reported). */
static int parse_line(char *line, char *section, bool *have_section, fg_conf_assign_fn assign,
		      struct fg_conf_error *err, fg_conf_error_fn on_error, void *ctx)
{
	char *s = strip(line), *eq, *key, *value;
	int r;

	if (!*s || *s == '#' || *s == ';')
		return 0;
	if (*s == '[') {
		char *end = strchr(s, ']');

		if (!end || end[1]) {
			report(err, on_error, ctx, "expected a section header like [fgd]");
			return -EINVAL;
		}
		*end = '\0';
		s = strip(s + 1);
		if (!valid_name(s) || strlen(s) >= MAX_SECTION) {
			report(err, on_error, ctx, "invalid section name");
			return -EINVAL;
		}
		strcpy(section, s);
		*have_section = true;
		return 0;
	}
	eq = strchr(s, '=');
	if (!eq) {
		report(err, on_error, ctx, "expected Key=Value");
		return -EINVAL;
	}
	*eq = '\0';
	key = strip(s);
	value = strip(eq + 1);
	if (!valid_name(key)) {
		report(err, on_error, ctx, "invalid key name");
		return -EINVAL;
	}
	err->message[0] = '\0';
	r = assign(ctx, *have_section ? section : NULL, key, value, err);
	if (r < 0) {
		if (!err->message[0])
			snprintf(err->message, sizeof(err->message), "%s=: %s", key, strerror(-r));
		on_error(ctx, err);
	}
	return r;
}

int fg_conf_parse(const char *text, size_t len, fg_conf_assign_fn assign, fg_conf_error_fn on_error,
		  void *ctx)
{
	char line[FG_CONF_MAX_LINE + 1], section[MAX_SECTION] = "";
	struct fg_conf_error err = { 0 };
	bool have_section = false;
	int ret = 0;

	for (size_t pos = 0; pos < len;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = (nl ? (size_t)(nl - text) : len) - pos;
		int r;

		err.line++;
		if (memchr(text + pos, '\0', n)) {
			report(&err, on_error, ctx, "contains a NUL byte");
			ret = ret ?: -EINVAL;
		} else if (n > FG_CONF_MAX_LINE) {
			report(&err, on_error, ctx, "line longer than %d bytes", FG_CONF_MAX_LINE);
			ret = ret ?: -EINVAL;
		} else {
			memcpy(line, text + pos, n);
			line[n] = '\0';
			r = parse_line(line, section, &have_section, assign, &err, on_error, ctx);
			if (r < 0 && (ret == 0 || r == -ENOMEM))
				ret = r == -ENOMEM ? r : -EINVAL;
		}
		pos += n + 1;
	}
	return ret;
}

int fg_conf_parse_bool(const char *s, bool *ret)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; i < ELEMENTSOF(yes); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*ret = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*ret = false;
			return 0;
		}
	}
	return -EINVAL;
}

/* Leading decimal digits of s into *ret; *end after them. -EINVAL (none) or -ERANGE. */
static int parse_digits(const char *s, const char **end, uint64_t *ret)
{
	uint64_t v = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*end = s;
	*ret = v;
	return 0;
}

struct unit {
	const char *name;
	uint64_t factor;
};

/* The factor of the unit spelled exactly s, or 0. */
static uint64_t unit_factor(const struct unit *units, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(s, units[i].name) == 0)
			return units[i].factor;
	return 0;
}

static int parse_with_unit(const char *s, const struct unit *units, size_t n, uint64_t min,
			   uint64_t max, uint64_t *ret)
{
	const char *end;
	uint64_t v, f;
	int r;

	r = parse_digits(s, &end, &v);
	if (r < 0)
		return r;
	f = unit_factor(units, n, end);
	if (!f)
		return -EINVAL;
	if (v > UINT64_MAX / f)
		return -ERANGE;
	v *= f;
	if (v < min || v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

int fg_conf_parse_bytes(const char *s, uint64_t min, uint64_t max, uint64_t *ret)
{
	static const struct unit units[] = {
		{ "", 1 },
		{ "K", 1ULL << 10 },
		{ "KiB", 1ULL << 10 },
		{ "M", 1ULL << 20 },
		{ "MiB", 1ULL << 20 },
		{ "G", 1ULL << 30 },
		{ "GiB", 1ULL << 30 },
		{ "T", 1ULL << 40 },
		{ "TiB", 1ULL << 40 },
	};

	return parse_with_unit(s, units, ELEMENTSOF(units), min, max, ret);
}

int fg_conf_parse_seconds(const char *s, uint32_t min, uint32_t max, uint32_t *ret)
{
	static const struct unit units[] = {
		{ "", 1 },     { "s", 1 },     { "sec", 1 },       { "min", 60 },
		{ "h", 3600 }, { "d", 86400 }, { "w", 7 * 86400 },
	};
	uint64_t v;
	int r;

	r = parse_with_unit(s, units, ELEMENTSOF(units), min, max, &v);
	if (r < 0)
		return r;
	*ret = (uint32_t)v;
	return 0;
}
