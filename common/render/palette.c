/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/macro.h"
#include "base/strpool.h"
#include "profile/framename.h"
#include "render/palette.h"

static const char *const palette_names[_FG_PALETTE_MAX] = {
	[FG_PALETTE_HOT] = "hot",       [FG_PALETTE_MEM] = "mem",
	[FG_PALETTE_IO] = "io",         [FG_PALETTE_WAKEUP] = "wakeup",
	[FG_PALETTE_CHAIN] = "chain",   [FG_PALETTE_JAVA] = "java",
	[FG_PALETTE_JS] = "js",         [FG_PALETTE_PERL] = "perl",
	[FG_PALETTE_RED] = "red",       [FG_PALETTE_GREEN] = "green",
	[FG_PALETTE_BLUE] = "blue",     [FG_PALETTE_AQUA] = "aqua",
	[FG_PALETTE_YELLOW] = "yellow", [FG_PALETTE_PURPLE] = "purple",
	[FG_PALETTE_ORANGE] = "orange",
};

const char fg_palette_names[] =
	"hot, mem, io, wakeup, chain, java, js, perl, red, green, blue, aqua, yellow, purple, orange";

int fg_palette_from_string(const char *s, enum fg_palette *ret)
{
	for (int i = 0; i < _FG_PALETTE_MAX; i++)
		if (strcmp(s, palette_names[i]) == 0) {
			*ret = (enum fg_palette)i;
			return 0;
		}
	return -EINVAL;
}

const char *fg_palette_to_string(enum fg_palette p)
{
	return (unsigned)p < _FG_PALETTE_MAX ? palette_names[p] : palette_names[FG_PALETTE_HOT];
}

void fg_color_values_hash(const char *name, size_t len, double ret_v[3])
{
	uint64_t h = fg_hash_bytes(name, len, 0);

	ret_v[0] = (double)(h & 0xffff) / 65535.0;
	ret_v[1] = (double)((h >> 16) & 0xffff) / 65535.0;
	ret_v[2] = (double)((h >> 32) & 0xffff) / 65535.0;
}

static bool contains(const char *s, size_t len, const char *needle)
{
	return memmem(s, len, needle, strlen(needle)) != NULL;
}

/* Java's package roots, as flamegraph.pl's java palette tells Java from native code. */
static bool java_package(const char *s, size_t len)
{
	static const char *const roots[] = { "java/", "javax/", "jdk/", "net/",
					     "org/",  "com/",   "io/",  "sun/" };

	if (len > 0 && s[0] == 'L')
		s++, len--;
	for (size_t i = 0; i < ELEMENTSOF(roots); i++)
		if (len >= strlen(roots[i]) && memcmp(s, roots[i], strlen(roots[i])) == 0)
			return true;
	return false;
}

/* The single-hue palette a multi-hue one picks for a name. */
static enum fg_palette pick_hue(enum fg_palette p, const char *name, size_t len)
{
	char a = fg_framename_annotation(name, len);

	switch (p) {
	case FG_PALETTE_WAKEUP:
		return FG_PALETTE_AQUA;
	case FG_PALETTE_CHAIN:
		return a == 'w' ? FG_PALETTE_AQUA : FG_PALETTE_BLUE;
	case FG_PALETTE_JAVA:
		if (a == 'j')
			return FG_PALETTE_GREEN; /* JIT-compiled */
		if (a == 'i')
			return FG_PALETTE_AQUA; /* inlined */
		if (a == 'k')
			return FG_PALETTE_ORANGE; /* kernel */
		if (java_package(name, len))
			return FG_PALETTE_GREEN;
		if (contains(name, len, "::"))
			return FG_PALETTE_YELLOW; /* C++ in the JVM */
		return FG_PALETTE_RED;            /* native user code */
	case FG_PALETTE_JS:
		if (a == 'j')
			return contains(name, len, "/") ? FG_PALETTE_GREEN : FG_PALETTE_AQUA;
		if (a == 'k')
			return FG_PALETTE_ORANGE;
		if (contains(name, len, "::"))
			return FG_PALETTE_YELLOW; /* C++ in V8 or node */
		if (contains(name, len, ".js"))
			return FG_PALETTE_GREEN; /* script code, named with its file */
		if (contains(name, len, ":"))
			return FG_PALETTE_AQUA; /* builtins */
		if (len == 1 && name[0] == ' ')
			return FG_PALETTE_GREEN; /* a JS frame with no name */
		return FG_PALETTE_RED;
	case FG_PALETTE_PERL:
		if (a == 'k')
			return FG_PALETTE_ORANGE;
		if (contains(name, len, "::"))
			return FG_PALETTE_YELLOW;
		if (contains(name, len, "Perl") || contains(name, len, ".pl"))
			return FG_PALETTE_GREEN;
		return FG_PALETTE_RED;
	default:
		return p;
	}
}

static uint8_t ch(double base, double span, double v)
{
	return (uint8_t)(base + (int)(span * v));
}

void fg_palette_color(enum fg_palette p, const char *name, size_t len, const double v[3],
		      struct fg_rgb *ret)
{
	char a = fg_framename_annotation(name, len);

	if (len == 2 && memcmp(name, "--", 2) == 0) {
		*ret = (struct fg_rgb){ 160, 160, 160 };
		return;
	}
	if (len == 1 && name[0] == '-') {
		*ret = (struct fg_rgb){ 200, 200, 200 };
		return;
	}
	switch (pick_hue(p, name, len)) {
	case FG_PALETTE_HOT:
		/*
		 * flamegraph.pl's red-to-yellow range for user code (b <= 55).
		 * Kernel frames get a pale apricot band no user frame can
		 * reach (b 95-125, r >= 245), so they read as their own layer
		 * beside the saturated user frames; JIT frames are green.
		 */
		if (a == 'k')
			*ret = (struct fg_rgb){ ch(245, 10, v[2]),
						ch(165, 10, v[1]) + ch(0, 30, v[0]),
						ch(95, 30, v[0]) };
		else if (a == 'j')
			*ret = (struct fg_rgb){ ch(50, 60, v[0]), ch(165, 55, v[1]),
						ch(50, 60, v[0]) };
		else
			*ret = (struct fg_rgb){ ch(205, 50, v[2]), ch(0, 230, v[0]),
						ch(0, 55, v[1]) };
		break;
	case FG_PALETTE_MEM:
		*ret = (struct fg_rgb){ 0, ch(190, 50, v[1]), ch(0, 210, v[0]) };
		break;
	case FG_PALETTE_IO:
		*ret = (struct fg_rgb){ ch(80, 60, v[0]), ch(80, 60, v[0]), ch(190, 55, v[1]) };
		break;
	case FG_PALETTE_RED:
		*ret = (struct fg_rgb){ ch(200, 55, v[0]), ch(50, 80, v[0]), ch(50, 80, v[0]) };
		break;
	case FG_PALETTE_GREEN:
		*ret = (struct fg_rgb){ ch(50, 60, v[0]), ch(200, 55, v[0]), ch(50, 60, v[0]) };
		break;
	case FG_PALETTE_BLUE:
		*ret = (struct fg_rgb){ ch(80, 60, v[0]), ch(80, 60, v[0]), ch(205, 50, v[0]) };
		break;
	case FG_PALETTE_AQUA:
		*ret = (struct fg_rgb){ ch(50, 60, v[0]), ch(165, 55, v[0]), ch(165, 55, v[0]) };
		break;
	case FG_PALETTE_YELLOW:
		*ret = (struct fg_rgb){ ch(175, 55, v[0]), ch(175, 55, v[0]), ch(50, 20, v[0]) };
		break;
	case FG_PALETTE_PURPLE:
		*ret = (struct fg_rgb){ ch(190, 65, v[0]), ch(80, 60, v[0]), ch(190, 65, v[0]) };
		break;
	case FG_PALETTE_ORANGE:
	default:
		*ret = (struct fg_rgb){ ch(190, 65, v[0]), ch(90, 65, v[0]), 0 };
		break;
	}
}

void fg_diff_color(double delta, double max_delta, struct fg_rgb *ret)
{
	double f;

	*ret = (struct fg_rgb){ 255, 255, 255 };
	if (!(max_delta > 0) || delta == 0)
		return;
	f = MIN(1.0, (delta < 0 ? -delta : delta) / max_delta);
	if (delta > 0)
		ret->g = ret->b = (uint8_t)(210 * (1 - f));
	else
		ret->r = ret->g = (uint8_t)(210 * (1 - f));
}

static bool is_hex_color(const char *s)
{
	if (s[0] != '#' || strlen(s) != 7)
		return false;
	for (int i = 1; i < 7; i++)
		if (!strchr("0123456789abcdefABCDEF", s[i]))
			return false;
	return true;
}

int fg_bgcolors_parse(const char *s, char ret_top[8], char ret_bottom[8])
{
	static const struct {
		const char *name, *top, *bottom;
	} gradients[] = {
		{ "yellow", "#eeeeee", "#eeeeb0" },
		{ "blue", "#eeeeee", "#e0e0ff" },
		{ "green", "#eef2ee", "#e0ffe0" },
		{ "grey", "#f8f8f8", "#e8e8e8" },
	};

	for (size_t i = 0; i < ELEMENTSOF(gradients); i++)
		if (strcmp(s, gradients[i].name) == 0) {
			memcpy(ret_top, gradients[i].top, 8);
			memcpy(ret_bottom, gradients[i].bottom, 8);
			return 0;
		}
	if (!is_hex_color(s))
		return -EINVAL;
	memcpy(ret_top, s, 8);
	memcpy(ret_bottom, s, 8);
	return 0;
}

void fg_bgcolors_default(enum fg_palette p, char ret_top[8], char ret_bottom[8])
{
	const char *g = "yellow";

	if (p == FG_PALETTE_MEM)
		g = "green";
	else if (p == FG_PALETTE_IO || p == FG_PALETTE_WAKEUP || p == FG_PALETTE_CHAIN)
		g = "blue";
	else if (p >= FG_PALETTE_RED)
		g = "grey";
	(void)fg_bgcolors_parse(g, ret_top, ret_bottom);
}

struct fg_palette_map {
	struct fg_strpool *names; /* owned */
	struct fg_rgb *colors;    /* owned; by name id */
	size_t cap_colors;
};

struct fg_palette_map *fg_palette_map__new(void)
{
	struct fg_palette_map *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->names = fg_strpool__new();
	if (!m->names)
		return fg_palette_map__free(m);
	return m;
}

struct fg_palette_map *fg_palette_map__free(struct fg_palette_map *m)
{
	if (!m)
		return NULL;
	fg_strpool__free(m->names);
	free(m->colors);
	free(m);
	return NULL;
}

bool fg_palette_map__get(const struct fg_palette_map *m, const char *name, size_t len,
			 struct fg_rgb *ret)
{
	int64_t id = fg_strpool__find(m->names, name, len);

	if (id < 0)
		return false;
	*ret = m->colors[id];
	return true;
}

int fg_palette_map__set(struct fg_palette_map *m, const char *name, size_t len,
			const struct fg_rgb *c)
{
	uint32_t id;
	int r;

	r = fg_strpool__intern(m->names, name, len, &id);
	if (r < 0)
		return r;
	r = FG_GROW(m->colors, m->cap_colors, (size_t)id + 1);
	if (r < 0)
		return r;
	m->colors[id] = *c;
	return 0;
}

size_t fg_palette_map__size(const struct fg_palette_map *m)
{
	return fg_strpool__count(m->names);
}

/* Parses "rgb(R,G,B)" exactly, each component 0-255. */
static int parse_rgb(const char *s, size_t len, struct fg_rgb *ret)
{
	unsigned v[3];
	char buf[32];
	int n = 0;

	if (len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (sscanf(buf, "rgb(%3u,%3u,%3u)%n", &v[0], &v[1], &v[2], &n) != 3 || (size_t)n != len)
		return -EINVAL;
	if (v[0] > 255 || v[1] > 255 || v[2] > 255)
		return -EINVAL;
	*ret = (struct fg_rgb){ (uint8_t)v[0], (uint8_t)v[1], (uint8_t)v[2] };
	return 0;
}

int fg_palette_map__add_line(struct fg_palette_map *m, const char *line, size_t len)
{
	const char *arrow = NULL;
	struct fg_rgb c;
	int r;

	if (len > 0 && line[len - 1] == '\r')
		len--;
	if (len == 0)
		return 0;
	/* The name may hold "->" itself; the colour follows the last one. */
	for (const char *p = line; (p = memmem(p, len - (size_t)(p - line), "->", 2)); p += 2)
		arrow = p;
	if (!arrow)
		return -EINVAL;
	r = parse_rgb(arrow + 2, len - (size_t)(arrow + 2 - line), &c);
	if (r < 0)
		return r;
	r = fg_palette_map__set(m, line, (size_t)(arrow - line), &c);
	return r < 0 ? r : 1;
}

static int cmp_ids(const void *a, const void *b, void *arg)
{
	const struct fg_strpool *names = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	size_t lx = fg_strpool__len(names, x), ly = fg_strpool__len(names, y);
	int c = memcmp(fg_strpool__str(names, x), fg_strpool__str(names, y), MIN(lx, ly));

	return c ? c : (lx > ly) - (lx < ly);
}

int fg_palette_map__write(const struct fg_palette_map *m, fg_write_fn fn, void *ctx)
{
	size_t n = fg_strpool__count(m->names);
	_cleanup_free_ uint32_t *order = malloc(MAX(n, (size_t)1) * sizeof(uint32_t));
	int r;

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, n, sizeof(uint32_t), cmp_ids, m->names);
	for (size_t i = 0; i < n; i++) {
		const struct fg_rgb *c = &m->colors[order[i]];
		char tail[32];
		int t = snprintf(tail, sizeof(tail), "->rgb(%u,%u,%u)\n", c->r, c->g, c->b);

		r = fn(ctx, fg_strpool__str(m->names, order[i]),
		       fg_strpool__len(m->names, order[i]));
		if (r >= 0)
			r = fn(ctx, tail, (size_t)t);
		if (r < 0)
			return r;
	}
	return 0;
}
