/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "symbols/fgd-symtab.h"

void fg_symtab_builder_done(struct fg_symtab_builder *b)
{
	free(b->syms);
	free(b->arena);
	*b = (struct fg_symtab_builder){};
}

uint8_t fg_symtab_bind_rank(unsigned char bind)
{
	switch (bind) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		return 0;
	case STB_WEAK:
		return 1;
	default:
		return 2;
	}
}

/*
 * Room for one more symbol and name_bytes more of names in the arena
 * (which may move): 0, -E2BIG past the caps, or -ENOMEM.
 */
static int reserve_symbol(struct fg_symtab_builder *l, size_t name_bytes)
{
	int r;

	if (l->n_syms >= FG_ELF_MAX_SYMS || l->arena_len + name_bytes > UINT32_MAX)
		return -E2BIG;
	r = FG_GROW(l->arena, l->arena_cap, l->arena_len + name_bytes);
	if (r < 0)
		return r;
	return FG_GROW(l->syms, l->cap_syms, l->n_syms + 1);
}

int fg_symtab_builder_add(struct fg_symtab_builder *b, const struct fg_symtab_pending *p,
			  const char *name, size_t len)
{
	struct fg_symtab_pending *q;
	uint8_t us = 0;
	int r;

	r = reserve_symbol(b, len + 1);
	if (r < 0)
		return r;
	memcpy(b->arena + b->arena_len, name, len);
	b->arena[b->arena_len + len] = '\0';
	while (us < len && us < UINT8_MAX && name[us] == '_')
		us++;
	q = &b->syms[b->n_syms++];
	*q = *p;
	q->name = (uint32_t)b->arena_len;
	q->name_len = (uint32_t)len;
	q->underscores = us;
	b->arena_len += len + 1;
	return 0;
}

int64_t fg_symtab_builder_add_plt(struct fg_symtab_builder *l, uint64_t addr, uint64_t end,
				  const char *name, size_t len, const char *suffix)
{
	size_t slen = suffix ? strlen(suffix) : 0, total = len + slen, from = SIZE_MAX;
	uint32_t off = (uint32_t)l->arena_len;
	int r;

	/* Growing the arena moves it: a name inside it is found again by its offset. */
	if (l->arena && (uintptr_t)name - (uintptr_t)l->arena < l->arena_len)
		from = (size_t)((uintptr_t)name - (uintptr_t)l->arena);
	r = reserve_symbol(l, total + 1);
	if (r < 0)
		return r;
	if (from != SIZE_MAX)
		name = l->arena + from;
	memmove(l->arena + off, name, len);
	if (suffix)
		memcpy(l->arena + off + len, suffix, slen);
	l->arena[off + total] = '\0';
	l->syms[l->n_syms++] = (struct fg_symtab_pending){
		.addr = addr,
		.end = end,
		.name = off,
		.name_len = (uint32_t)total,
		.sized = true,
		.plt = true,
	};
	l->n_plt++;
	l->arena_len += total + 1;
	return off;
}

void fg_symtab_builder_drop_plt(struct fg_symtab_builder *l, size_t arena_len)
{
	size_t n = 0;

	for (size_t i = 0; i < l->n_syms; i++)
		if (!l->syms[i].plt)
			l->syms[n++] = l->syms[i];
	l->n_syms = n;
	l->n_plt = 0;
	l->arena_len = arena_len;
}

int fg_symtab_builder_keep_plt(struct fg_symtab_builder *l, const struct fg_symtab *from)
{
	for (size_t i = 0; i < from->n_plt; i++) {
		size_t k = from->plt[i];
		const char *name = from->names + from->name[k];
		int64_t r = fg_symtab_builder_add_plt(l, from->start[k], from->end[k], name,
						      strlen(name), NULL);

		if (r < 0)
			return (int)r;
	}
	return 0;
}

int fg_symtab_builder_merge(struct fg_symtab_builder *l, const struct fg_symtab_builder *m)
{
	int r;

	if (l->n_syms + m->n_syms > FG_ELF_MAX_SYMS)
		return -E2BIG;
	if (l->arena_len + m->arena_len > UINT32_MAX)
		return -E2BIG;
	r = FG_GROW(l->arena, l->arena_cap, l->arena_len + m->arena_len);
	if (r < 0)
		return r;
	r = FG_GROW(l->syms, l->cap_syms, l->n_syms + m->n_syms);
	if (r < 0)
		return r;
	if (m->arena_len)
		memcpy(l->arena + l->arena_len, m->arena, m->arena_len);
	for (size_t i = 0; i < m->n_syms; i++) {
		l->syms[l->n_syms] = m->syms[i];
		l->syms[l->n_syms++].name += (uint32_t)l->arena_len;
	}
	l->arena_len += m->arena_len;
	return 0;
}

/* Total order: address, then the alias preference documented in fgd-symtab.h. */
static int pending_cmp(const void *a, const void *b, void *ctx)
{
	const struct fg_symtab_pending *x = a, *y = b;
	const char *arena = ctx;
	int c;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->plt != y->plt)
		return x->plt ? 1 : -1;
	if (x->sized != y->sized)
		return x->sized ? -1 : 1;
	if (x->bind_rank != y->bind_rank)
		return x->bind_rank < y->bind_rank ? -1 : 1;
	if (x->underscores != y->underscores)
		return x->underscores < y->underscores ? -1 : 1;
	if (x->name_len != y->name_len)
		return x->name_len < y->name_len ? -1 : 1;
	c = memcmp(arena + x->name, arena + y->name, x->name_len);
	if (c != 0)
		return c;
	/* The same name twice: the smaller extent, so the choice never depends on table order. */
	return x->end < y->end ? -1 : x->end > y->end;
}

void fg_symtab_builder_sort(struct fg_symtab_builder *b)
{
	if (b->n_syms > 1)
		qsort_r(b->syms, b->n_syms, sizeof(*b->syms), pending_cmp, b->arena);
}

const char *fg_symtab_builder_ifunc_at(const struct fg_symtab_builder *l, size_t n_sorted,
				       uint64_t addr)
{
	size_t lo = 0, hi = n_sorted;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->syms[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < n_sorted && l->syms[i].addr == addr; i++)
		if (l->syms[i].ifunc)
			return l->arena + l->syms[lo].name;
	return NULL;
}
/*
 * A lookup's binary search over a big program's table (cc1plus's has
 * 29,746 functions) is some 15 dependent reads, most of them cache misses.
 * Buckets of 2^shift bytes of the table's span, no more of them than
 * symbols, say which symbols start in each: a lookup searches its bucket,
 * a symbol or two. They cost 4 bytes a symbol at most; tables too small
 * to need them, or no memory for them, leave them out and lookups search
 * the whole table.
 */
static void build_buckets(struct fg_symtab *s)
{
	const uint64_t base = s->start[0], span = s->start[s->n - 1] - base;
	unsigned shift = 4;
	size_t nb, i = 0;

	if (s->n < 64 || s->n > UINT32_MAX)
		return;
	while ((span >> shift) >= s->n)
		shift++;
	/* Buckets 0 to span >> shift, each with a start within span, and the end of the last. */
	nb = (size_t)(span >> shift) + 2;
	s->bucket = malloc(nb * sizeof(*s->bucket));
	if (!s->bucket)
		return;
	for (size_t b = 0; b + 1 < nb; b++) {
		while (i < s->n && s->start[i] - base < (uint64_t)b << shift)
			i++;
		s->bucket[b] = (uint32_t)i;
	}
	s->bucket[nb - 1] = (uint32_t)s->n;
	s->n_buckets = nb;
	s->bucket_shift = shift;
}

int fg_symtab_build(struct fg_symtab_builder *l, struct fg_symtab *s)
{
	size_t n = 0, n_aliases = 0, off = 0;

	if (l->n_syms == 0)
		return 0;
	fg_symtab_builder_sort(l);
	for (size_t i = 1; i < l->n_syms; i++)
		n_aliases += l->syms[i].addr == l->syms[i - 1].addr;
	n = l->n_syms - n_aliases;

	s->start = malloc(n * sizeof(*s->start));
	s->end = malloc(n * sizeof(*s->end));
	s->name = malloc(n * sizeof(*s->name));
	/*
	 * Every name is kept, aliases included, so the arena is handed over as
	 * is, cut to its length: no second copy of the names at the peak of the
	 * load (a big block shrinks in place, with mremap).
	 */
	s->names = realloc(l->arena, l->arena_len);
	if (s->names)
		l->arena = NULL, l->arena_cap = 0;
	if (n_aliases > 0) {
		s->alias_name = malloc(n_aliases * sizeof(*s->alias_name));
		s->alias_sym = malloc(n_aliases * sizeof(*s->alias_sym));
		if (!s->alias_name || !s->alias_sym)
			return -ENOMEM;
	}
	if (l->n_plt > 0) {
		s->plt = malloc(l->n_plt * sizeof(*s->plt));
		if (!s->plt)
			return -ENOMEM;
	}
	if (!s->start || !s->end || !s->name || !s->names)
		return -ENOMEM;
	s->names_len = l->arena_len;

	n = 0;
	for (size_t i = 0; i < l->n_syms; i++) {
		const struct fg_symtab_pending *p = &l->syms[i];

		if (n > 0 && s->start[n - 1] == p->addr) {
			s->alias_name[off] = p->name;
			s->alias_sym[off++] = (uint32_t)(n - 1);
			continue;
		}
		s->start[n] = p->addr;
		s->end[n] = p->end;
		s->name[n] = p->name;
		if (p->plt)
			s->plt[s->n_plt++] = (uint32_t)n;
		n++;
	}
	/* A zero-size symbol ends at the next one; its end is already its section's end. */
	for (size_t i = 0, j = 0; i < l->n_syms; i++) {
		const struct fg_symtab_pending *p = &l->syms[i];

		if (i > 0 && l->syms[i - 1].addr == p->addr)
			continue;
		if (!p->sized && j + 1 < n)
			s->end[j] = MIN(s->end[j], s->start[j + 1]);
		j++;
	}
	s->n = n;
	s->n_aliases = n_aliases;
	build_buckets(s);
	return 0;
}

void fg_symtab_done(struct fg_symtab *t)
{
	free(t->start);
	free(t->end);
	free(t->name);
	free(t->bucket);
	free(t->alias_name);
	free(t->alias_sym);
	free(t->names);
	free(t->plt);
	free(t->unnamed);
	*t = (struct fg_symtab){};
}

void fg_symtab_swap_named(struct fg_symtab *s, struct fg_symtab *d)
{
#define SWAP(f)                             \
	do {                                \
		__typeof__(s->f) _t = s->f; \
		s->f = d->f;                \
		d->f = _t;                  \
	} while (0)
	SWAP(start);
	SWAP(end);
	SWAP(name);
	SWAP(n);
	SWAP(bucket);
	SWAP(n_buckets);
	SWAP(bucket_shift);
	SWAP(alias_name);
	SWAP(alias_sym);
	SWAP(n_aliases);
	SWAP(names);
	SWAP(names_len);
	SWAP(plt);
	SWAP(n_plt);
#undef SWAP
}

void fg_symtab_shrink_unnamed(struct fg_symtab *s)
{
	struct fg_symtab_span *shrunk;

	if (s->n_unnamed == 0) {
		free(s->unnamed);
		s->unnamed = NULL;
		return;
	}
	shrunk = realloc(s->unnamed, s->n_unnamed * sizeof(*shrunk));
	if (shrunk)
		s->unnamed = shrunk;
}

int fg_symtab_add_unnamed(struct fg_symtab *s, uint64_t start, uint64_t end, size_t *cap)
{
	if (fg_symtab_lookup(s, start) >= 0)
		return 0;
	if (FG_GROW(s->unnamed, *cap, s->n_unnamed + 1) < 0)
		return -ENOMEM;
	s->unnamed[s->n_unnamed++] = (struct fg_symtab_span){ start, end };
	return 0;
}

void fg_symtab_keep_unnamed(struct fg_symtab *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n_unnamed; i++)
		if (fg_symtab_lookup(s, s->unnamed[i].start) < 0)
			s->unnamed[n++] = s->unnamed[i];
	s->n_unnamed = n;
	fg_symtab_shrink_unnamed(s);
}

int64_t fg_symtab_lookup(const struct fg_symtab *s, uint64_t vaddr)
{
	const uint64_t *base = s->start;
	size_t n = s->n, i;

	if (n == 0 || vaddr < base[0])
		return -1;
	if (s->bucket) {
		uint64_t b = (vaddr - s->start[0]) >> s->bucket_shift;

		if (b + 1 < s->n_buckets) {
			/* The symbols starting in vaddr's bucket; none at or below it: the one before. */
			base = s->start + s->bucket[b];
			n = s->bucket[b + 1] - s->bucket[b];
			if (n == 0 || vaddr < base[0]) {
				i = s->bucket[b] - 1; /* b > 0: bucket 0 holds start[0] <= vaddr */
				return vaddr < s->end[i] ? (int64_t)i : -1;
			}
		} else {
			/* Past the last start: the last symbol. */
			base = s->start + s->n - 1;
			n = 1;
		}
	}
	/* Branch-free: the last start at or below vaddr, as in kallsyms.c. */
	while (n > 1) {
		size_t half = n / 2;

		base = base[half] <= vaddr ? base + half : base;
		n -= half;
	}
	i = (size_t)(base - s->start);
	return vaddr < s->end[i] ? (int64_t)i : -1;
}

const char *fg_symtab_name(const struct fg_symtab *s, size_t idx)
{
	return s->names + s->name[idx];
}

bool fg_symtab_is_plt(const struct fg_symtab *s, size_t idx)
{
	size_t lo = 0, hi = s->n_plt;

	/* plt[] holds table indexes in ascending order. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->plt[mid] < idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n_plt && s->plt[lo] == idx;
}

uint64_t fg_symtab_addr(const struct fg_symtab *s, size_t idx)
{
	return s->start[idx];
}

uint64_t fg_symtab_size(const struct fg_symtab *s, size_t idx)
{
	return s->end[idx] - s->start[idx];
}

uint64_t fg_symtab_bytes(const struct fg_symtab *s)
{
	return s->n * (sizeof(*s->start) + sizeof(*s->end) + sizeof(*s->name)) +
	       s->n_buckets * sizeof(*s->bucket) +
	       s->n_aliases * (sizeof(*s->alias_name) + sizeof(*s->alias_sym)) + s->names_len +
	       s->n_plt * sizeof(*s->plt) + s->n_unnamed * sizeof(*s->unnamed);
}

int64_t fg_symtab_unnamed_function(const struct fg_symtab *s, uint64_t vaddr, uint64_t *ret_start)
{
	size_t lo = 0, hi = s->n_unnamed;

	/* The last function starting at or before vaddr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->unnamed[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || vaddr >= s->unnamed[lo - 1].end)
		return -ENOENT;
	*ret_start = s->unnamed[lo - 1].start;
	return (int64_t)(lo - 1);
}

int64_t fg_symtab_find(const struct fg_symtab *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->names + s->name[i], name) == 0)
			return (int64_t)i;
	for (size_t i = 0; i < s->n_aliases; i++)
		if (strcmp(s->names + s->alias_name[i], name) == 0)
			return s->alias_sym[i];
	return -1;
}
