/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "base/strpool.h"
#include "perf/kallsyms.h"

/* KSYM_NAME_LEN is 512 and MODULE_NAME_LEN 56; anything longer is not kallsyms. */
#define MAX_NAME 1024
#define MAX_MODULE 256

/* One function as stored: start addresses live in their own array for the search. */
struct ksym {
	uint32_t name;   /* offset into names */
	uint32_t size;   /* extent, <= FG_KALLSYMS_MAX_EXTENT */
	uint32_t module; /* 0 = core kernel, else module id + 1 */
};

struct fg_kallsyms {
	uint64_t *start;   /* owned; sorted, distinct */
	struct ksym *syms; /* owned; parallel to start */
	size_t n;
	char *names; /* owned arena of NUL-terminated names */
	size_t names_len;
	struct fg_strpool *modules; /* owned; module names */
	size_t n_malformed;
	bool restricted;
};

/* A function while parsing. */
struct pending {
	uint64_t addr;
	uint32_t name; /* offset into the parse arena */
	uint32_t name_len;
	uint32_t module; /* as in struct ksym */
	uint8_t rank;    /* T t W w: lower wins among aliases */
	uint8_t underscores;
};

struct parser {
	struct pending *fns; /* owned */
	size_t n_fns, cap_fns;
	uint64_t *bounds; /* owned; boundary addresses */
	size_t n_bounds, cap_bounds;
	char *arena; /* owned; names of fns */
	size_t arena_len, arena_cap;
	struct fg_strpool *modules; /* owned until handed to the table */
	size_t n_malformed;
	size_t n_parsed;
	bool any_nonzero;
};

static void parser_done(struct parser *p)
{
	free(p->fns);
	free(p->bounds);
	free(p->arena);
	fg_strpool__free(p->modules);
}

struct fg_kallsyms *fg_kallsyms__free(struct fg_kallsyms *k)
{
	if (!k)
		return NULL;
	free(k->start);
	free(k->syms);
	free(k->names);
	fg_strpool__free(k->modules);
	free(k);
	return NULL;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Splits line[0..len) at blanks into at most max fields; returns how many there were (may be > max). */
static size_t split(const char *line, size_t len, const char **f, size_t *flen, size_t max)
{
	size_t n = 0, i = 0;

	while (i < len) {
		size_t s;

		while (i < len && is_blank(line[i]))
			i++;
		if (i == len)
			break;
		s = i;
		while (i < len && !is_blank(line[i]))
			i++;
		if (n < max) {
			f[n] = line + s;
			flen[n] = i - s;
		}
		n++;
	}
	return n;
}

static bool is_function_type(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

/* Names the core kernel uses to mark where a text region ends; they are not functions. */
static bool is_end_marker(const char *s, size_t len)
{
	static const char suffix[] = "text_end";

	if ((len == 6 && memcmp(s, "_etext", 6) == 0) ||
	    (len == 10 && memcmp(s, "_einittext", 10) == 0))
		return true;
	return len > 2 + sizeof(suffix) - 1 && s[0] == '_' && s[1] == '_' &&
	       memcmp(s + len - (sizeof(suffix) - 1), suffix, sizeof(suffix) - 1) == 0;
}

static uint8_t type_rank(char t)
{
	switch (t) {
	case 'T':
		return 0;
	case 't':
		return 1;
	case 'W':
		return 2;
	default:
		return 3;
	}
}

/* Returns 1 if the line was used, 0 if it was malformed or dropped, or -ENOMEM. */
static int parse_line(struct parser *p, const char *line, size_t len)
{
	const char *f[4];
	size_t flen[4], nf;
	struct pending *e;
	uint64_t addr = 0;
	uint32_t module = 0;
	uint8_t us = 0;
	char type;
	int r;

	if (memchr(line, '\0', len))
		return 0;
	nf = split(line, len, f, flen, ELEMENTSOF(f));
	if (nf < 3 || nf > 4)
		return 0;
	if (flen[0] == 0 || flen[0] > 16)
		return 0;
	for (size_t i = 0; i < flen[0]; i++) {
		int v = hexval(f[0][i]);

		if (v < 0)
			return 0;
		addr = addr << 4 | (uint64_t)v;
	}
	if (flen[1] != 1)
		return 0;
	type = f[1][0];
	if (!((type >= 'a' && type <= 'z') || (type >= 'A' && type <= 'Z')))
		return 0;
	if (flen[2] > MAX_NAME)
		return 0;
	if (nf == 4) {
		const char *m = f[3] + 1;
		size_t mlen = flen[3] - 2;
		uint32_t id;

		if (flen[3] < 3 || f[3][0] != '[' || f[3][flen[3] - 1] != ']' ||
		    mlen > MAX_MODULE || memchr(m, '[', mlen) || memchr(m, ']', mlen))
			return 0;
		r = fg_strpool__intern(p->modules, m, mlen, &id);
		if (r < 0)
			return r == -ENOMEM ? r : 0;
		module = id + 1;
	}

	p->n_parsed++;
	if (addr == 0)
		return 1;
	p->any_nonzero = true;
	if (p->n_fns + p->n_bounds >= FG_KALLSYMS_MAX_SYMBOLS)
		return 0;

	/* Absolute and undefined symbols are not addresses in the kernel image. */
	if (type == 'a' || type == 'A' || type == 'U' || type == 'u')
		return 1;
	if (!is_function_type(type) || (module == 0 && is_end_marker(f[2], flen[2]))) {
		r = FG_GROW(p->bounds, p->cap_bounds, p->n_bounds + 1);
		if (r < 0)
			return r;
		p->bounds[p->n_bounds++] = addr;
		return 1;
	}

	if (p->arena_len + flen[2] + 1 > UINT32_MAX)
		return 0;
	r = FG_GROW(p->arena, p->arena_cap, p->arena_len + flen[2] + 1);
	if (r < 0)
		return r;
	r = FG_GROW(p->fns, p->cap_fns, p->n_fns + 1);
	if (r < 0)
		return r;
	memcpy(p->arena + p->arena_len, f[2], flen[2]);
	p->arena[p->arena_len + flen[2]] = '\0';

	while (us < flen[2] && us < UINT8_MAX && f[2][us] == '_')
		us++;
	e = &p->fns[p->n_fns++];
	*e = (struct pending){
		.addr = addr,
		.name = (uint32_t)p->arena_len,
		.name_len = (uint32_t)flen[2],
		.module = module,
		.rank = type_rank(type),
		.underscores = us,
	};
	p->arena_len += flen[2] + 1;
	return 1;
}

static const char *module_name(const struct fg_strpool *modules, uint32_t module)
{
	return module ? fg_strpool__str(modules, module - 1) : "";
}

/* Total order: address, then the alias preference documented in kallsyms.h. */
static int pending_cmp(const void *a, const void *b, void *ctx)
{
	const struct pending *x = a, *y = b;
	const struct parser *p = ctx;
	int c;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->underscores != y->underscores)
		return x->underscores < y->underscores ? -1 : 1;
	if (x->name_len != y->name_len)
		return x->name_len < y->name_len ? -1 : 1;
	c = memcmp(p->arena + x->name, p->arena + y->name, x->name_len);
	if (c != 0)
		return c;
	return strcmp(module_name(p->modules, x->module), module_name(p->modules, y->module));
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorts, collapses aliases and computes extents into k. */
static int build(struct parser *p, struct fg_kallsyms *k)
{
	size_t n = 0, names_len = 0, b = 0, off = 0;

	if (p->n_fns == 0)
		return 0;
	qsort_r(p->fns, p->n_fns, sizeof(*p->fns), pending_cmp, p);
	/* qsort may not be given NULL, even for zero elements. */
	if (p->n_bounds > 0)
		qsort(p->bounds, p->n_bounds, sizeof(*p->bounds), u64_cmp);

	/* The first of each address is the preferred alias; move it down in place. */
	for (size_t i = 0; i < p->n_fns; i++) {
		if (n > 0 && p->fns[n - 1].addr == p->fns[i].addr)
			continue;
		p->fns[n++] = p->fns[i];
		names_len += p->fns[i].name_len + 1;
	}

	k->start = malloc(n * sizeof(*k->start));
	k->syms = malloc(n * sizeof(*k->syms));
	k->names = malloc(names_len);
	k->names_len = names_len;
	if (!k->start || !k->syms || !k->names)
		return -ENOMEM;

	for (size_t i = 0; i < n; i++) {
		const struct pending *e = &p->fns[i];
		/* addr > 0, so this is the room to the top of the address space, without overflow. */
		uint64_t size = MIN((uint64_t)FG_KALLSYMS_MAX_EXTENT, UINT64_MAX - e->addr + 1);

		if (i + 1 < n)
			size = MIN(size, p->fns[i + 1].addr - e->addr);
		while (b < p->n_bounds && p->bounds[b] <= e->addr)
			b++;
		if (b < p->n_bounds)
			size = MIN(size, p->bounds[b] - e->addr);

		memcpy(k->names + off, p->arena + e->name, e->name_len + 1);
		k->start[i] = e->addr;
		k->syms[i] = (struct ksym){
			.name = (uint32_t)off,
			.size = (uint32_t)size,
			.module = e->module,
		};
		off += e->name_len + 1;
	}
	k->n = n;
	return 0;
}

int fg_kallsyms__parse(const char *text, size_t len, struct fg_kallsyms **ret)
{
	_cleanup_(parser_done) struct parser p = {};
	_cleanup_(fg_kallsyms__freep) struct fg_kallsyms *k = NULL;
	const char *pos = text, *end = text + len;
	int r;

	p.modules = fg_strpool__new();
	k = calloc(1, sizeof(*k));
	if (!p.modules || !k)
		return -ENOMEM;

	while (pos < end) {
		const char *nl = memchr(pos, '\n', (size_t)(end - pos));
		const char *eol = nl ? nl : end;
		size_t l = (size_t)(eol - pos);

		if (l > 0 && pos[l - 1] == '\r')
			l--;
		while (l > 0 && is_blank(pos[l - 1]))
			l--;
		if (l > 0) {
			r = parse_line(&p, pos, l);
			if (r < 0)
				return r;
			if (r == 0)
				p.n_malformed++;
		}
		pos = nl ? nl + 1 : end;
	}

	r = build(&p, k);
	if (r < 0)
		return r;
	k->modules = TAKE_PTR(p.modules);
	k->n_malformed = p.n_malformed;
	k->restricted = p.n_parsed > 0 && !p.any_nonzero;
	*ret = TAKE_PTR(k);
	return 0;
}

int64_t fg_kallsyms__lookup(const struct fg_kallsyms *k, uint64_t addr)
{
	const uint64_t *base = k->start;
	size_t n = k->n, i;

	if (n == 0 || addr < base[0])
		return -1;
	/* Branch-free lower bound: the compare becomes a cmov, so mispredicts do not dominate. */
	while (n > 1) {
		size_t half = n / 2;

		base = base[half] <= addr ? base + half : base;
		n -= half;
	}
	i = (size_t)(base - k->start);
	if (addr - k->start[i] >= k->syms[i].size)
		return -1;
	return (int64_t)i;
}

const char *fg_kallsyms__name(const struct fg_kallsyms *k, size_t idx)
{
	return k->names + k->syms[idx].name;
}

const char *fg_kallsyms__module(const struct fg_kallsyms *k, size_t idx)
{
	uint32_t m = k->syms[idx].module;

	return m ? fg_strpool__str(k->modules, m - 1) : NULL;
}

uint64_t fg_kallsyms__addr(const struct fg_kallsyms *k, size_t idx)
{
	return k->start[idx];
}

size_t fg_kallsyms__count(const struct fg_kallsyms *k)
{
	return k->n;
}

size_t fg_kallsyms__n_malformed(const struct fg_kallsyms *k)
{
	return k->n_malformed;
}

bool fg_kallsyms__restricted(const struct fg_kallsyms *k)
{
	return k->restricted;
}

size_t fg_kallsyms__bytes(const struct fg_kallsyms *k)
{
	return sizeof(*k) + k->n * (sizeof(*k->start) + sizeof(*k->syms)) + k->names_len +
	       (k->modules ? fg_strpool__bytes(k->modules) : 0);
}

int fg_kernel_build_id(const uint8_t *notes, size_t len, const uint8_t **ret, size_t *ret_len)
{
	size_t off = 0;

	while (len - off >= 12) {
		uint32_t namesz, descsz, type;
		size_t name_at = off + 12, desc_at, next;

		memcpy(&namesz, notes + off, 4);
		memcpy(&descsz, notes + off + 4, 4);
		memcpy(&type, notes + off + 8, 4);
		/* Sizes from the file: checked against what is left before any sum. */
		if (namesz > len - name_at || (size_t)((namesz + 3) & ~3u) > len - name_at)
			break;
		desc_at = name_at + ((namesz + 3) & ~3u);
		if (descsz > len - desc_at)
			break;
		next = desc_at + MIN((size_t)((descsz + 3) & ~3u), len - desc_at);
		if (type == NT_GNU_BUILD_ID && namesz == 4 &&
		    memcmp(notes + name_at, "GNU", 4) == 0 && descsz >= 1 && descsz <= 64) {
			*ret = notes + desc_at;
			*ret_len = descsz;
			return 0;
		}
		off = next;
	}
	return -ENOENT;
}
