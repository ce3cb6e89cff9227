/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"
#include "hash.h"
#include "idxmap.h"
#include "macro.h"
#include "strpool.h"

struct stack_entry {
	size_t offset; /* into frames[] */
	uint32_t n;
	double count;
	double before;
};

struct fg_folded {
	struct fg_strpool *names; /* owned */
	uint32_t *frames;         /* owned arena of every stack's frame ids */
	size_t n_frames, cap_frames;
	struct stack_entry *stacks; /* owned */
	size_t n_stacks, cap_stacks;
	struct fg_idxmap index;
	double total, total_before;
	bool is_diff;
	bool sequence; /* merge only with the last stack; never reorder */
	size_t max_stacks;
	uint32_t *order; /* owned; sorted stack indices, valid while sorted */
	bool sorted;
	uint32_t *scratch; /* owned; frame ids of the line being parsed */
	size_t cap_scratch;
};

struct stack_key {
	const uint32_t *frames;
	size_t n;
};

struct fg_folded *fg_folded__new(void)
{
	struct fg_folded *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->max_stacks = SIZE_MAX;
	f->names = fg_strpool__new();
	if (!f->names)
		return fg_folded__free(f);
	return f;
}

struct fg_folded *fg_folded__free(struct fg_folded *f)
{
	if (!f)
		return NULL;
	fg_strpool__free(f->names);
	free(f->frames);
	free(f->stacks);
	fg_idxmap_done(&f->index);
	free(f->order);
	free(f->scratch);
	free(f);
	return NULL;
}

int fg_folded__intern(struct fg_folded *f, const char *name, size_t len, uint32_t *ret_id)
{
	int r = fg_strpool__intern(f->names, name, len, ret_id);

	return r < 0 ? r : 0;
}

const char *fg_folded__name(const struct fg_folded *f, uint32_t id)
{
	return fg_strpool__str(f->names, id);
}

size_t fg_folded__n_names(const struct fg_folded *f)
{
	return fg_strpool__count(f->names);
}

size_t fg_folded__name_len(const struct fg_folded *f, uint32_t id)
{
	return fg_strpool__len(f->names, id);
}

static bool stack_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct fg_folded *f = ctx;
	const struct stack_key *k = key;
	const struct stack_entry *e = &f->stacks[idx];

	return e->n == k->n && memcmp(f->frames + e->offset, k->frames, k->n * sizeof(uint32_t)) == 0;
}

static bool valid_count(double c)
{
	return isfinite(c) && c >= 0;
}

static int add_stack(struct fg_folded *f, const uint32_t *frames, size_t n, double before,
		     double count)
{
	struct stack_key k = { frames, n };
	uint64_t h;
	int64_t found;
	int r;

	if (n == 0 || n > UINT32_MAX || !valid_count(count) || !valid_count(before))
		return -EINVAL;
	if (f->sequence) {
		h = 0;
		found = f->n_stacks > 0 && stack_eq(f, (uint32_t)f->n_stacks - 1, &k)
				? (int64_t)f->n_stacks - 1
				: -1;
	} else {
		h = fg_hash_bytes(frames, n * sizeof(uint32_t), 0);
		found = fg_idxmap_find(&f->index, h, stack_eq, f, &k);
	}
	if (found >= 0) {
		f->stacks[found].count += count;
		f->stacks[found].before += before;
		f->total += count;
		f->total_before += before;
		return 0;
	}
	if (f->n_stacks >= MIN(f->max_stacks, (size_t)UINT32_MAX - 1))
		return -E2BIG;
	r = FG_GROW(f->stacks, f->cap_stacks, f->n_stacks + 1);
	if (r < 0)
		return r;
	r = FG_GROW(f->frames, f->cap_frames, f->n_frames + n);
	if (r < 0)
		return r;
	if (!f->sequence) {
		r = fg_idxmap_insert(&f->index, h, (uint32_t)f->n_stacks);
		if (r < 0)
			return r;
	}
	memcpy(f->frames + f->n_frames, frames, n * sizeof(uint32_t));
	f->stacks[f->n_stacks++] = (struct stack_entry){ f->n_frames, (uint32_t)n, count, before };
	f->n_frames += n;
	f->total += count;
	f->total_before += before;
	f->sorted = false;
	return 0;
}

int fg_folded__add(struct fg_folded *f, const uint32_t *frames, size_t n, double count)
{
	return add_stack(f, frames, n, count, count);
}

int fg_folded__add_pair(struct fg_folded *f, const uint32_t *frames, size_t n, double before,
			double count)
{
	int r = add_stack(f, frames, n, before, count);

	if (r >= 0)
		f->is_diff = true;
	return r;
}

/* Parses a count as flamegraph.pl accepts it: digits, optionally '.' digits. */
static int parse_count(const char *s, size_t len, double *ret)
{
	size_t i = 0, digits = 0;
	char buf[512]; /* DBL_MAX has 309 digits */

	while (i < len && s[i] >= '0' && s[i] <= '9')
		i++, digits++;
	if (i < len && s[i] == '.') {
		i++;
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	if (digits == 0 || i != len)
		return -EINVAL;
	if (len >= sizeof(buf))
		return -ERANGE;
	memcpy(buf, s, len);
	buf[len] = '\0';
	*ret = strtod(buf, NULL);
	return isfinite(*ret) ? 0 : -ERANGE;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * Splits the last blank-separated token off line[0..*len) (trailing blanks
 * already trimmed) as a count. On success *len is the length of what
 * precedes it, trailing blanks trimmed. -EINVAL when there is no such token
 * or it is not a count.
 */
static int split_count(const char *line, size_t *len, double *ret)
{
	size_t sep = *len;
	int r;

	while (sep > 0 && !is_blank(line[sep - 1]))
		sep--;
	if (sep == 0)
		return -EINVAL;
	r = parse_count(line + sep, *len - sep, ret);
	if (r < 0)
		return r;
	while (sep > 0 && is_blank(line[sep - 1]))
		sep--;
	*len = sep;
	return 0;
}

int fg_folded__add_line(struct fg_folded *f, const char *line, size_t len)
{
	size_t start, n = 0, rest;
	double count, before;
	bool pair;
	int r;

	if (len > 0 && line[len - 1] == '\r')
		len--;
	while (len > 0 && is_blank(line[len - 1]))
		len--;
	if (len == 0 || line[0] == '#')
		return 0;

	/* The count is the last blank-separated token; frames may hold spaces. */
	r = split_count(line, &len, &count);
	if (r < 0)
		return r;
	/* A second count before it makes a differential pair, as in flamegraph.pl. */
	rest = len;
	pair = split_count(line, &rest, &before) == 0 && rest > 0;
	if (pair)
		len = rest;
	if (len == 0)
		return -EINVAL; /* a count but no stack */

	for (start = 0;;) {
		const char *semi = memchr(line + start, ';', len - start);
		size_t end = semi ? (size_t)(semi - line) : len;
		uint32_t id;

		r = FG_GROW(f->scratch, f->cap_scratch, n + 1);
		if (r < 0)
			return r;
		r = fg_folded__intern(f, line + start, end - start, &id);
		if (r < 0)
			return r;
		f->scratch[n++] = id;
		if (!semi)
			break;
		start = end + 1;
	}
	if (pair)
		r = fg_folded__add_pair(f, f->scratch, n, before, count);
	else
		r = fg_folded__add(f, f->scratch, n, count);
	return r < 0 ? r : 1;
}

void fg_folded__set_sequence(struct fg_folded *f)
{
	f->sequence = true;
}

bool fg_folded__is_sequence(const struct fg_folded *f)
{
	return f->sequence;
}

void fg_folded__set_max_stacks(struct fg_folded *f, size_t max)
{
	f->max_stacks = max;
}

size_t fg_folded__bytes(const struct fg_folded *f)
{
	return sizeof(*f) + fg_strpool__bytes(f->names) + f->cap_frames * sizeof(uint32_t) +
	       f->cap_stacks * sizeof(struct stack_entry) + fg_idxmap_bytes(&f->index) +
	       (f->order ? f->n_stacks * sizeof(uint32_t) : 0) + f->cap_scratch * sizeof(uint32_t);
}

size_t fg_folded__n_stacks(const struct fg_folded *f)
{
	return f->n_stacks;
}

double fg_folded__total(const struct fg_folded *f)
{
	return f->total;
}

double fg_folded__total_before(const struct fg_folded *f)
{
	return f->total_before;
}

bool fg_folded__is_diff(const struct fg_folded *f)
{
	return f->is_diff;
}

void fg_folded__mark_diff(struct fg_folded *f)
{
	f->is_diff = true;
}

struct sort_ctx {
	const struct fg_folded *f;
	const uint32_t *rank; /* frame id -> position of its name in byte order */
};

static int cmp_name_ids(const void *a, const void *b, void *arg)
{
	const struct fg_strpool *names = arg;

	return strcmp(fg_strpool__str(names, *(const uint32_t *)a),
		      fg_strpool__str(names, *(const uint32_t *)b));
}

static int cmp_stacks(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *c = arg;
	const struct stack_entry *x = &c->f->stacks[*(const uint32_t *)a];
	const struct stack_entry *y = &c->f->stacks[*(const uint32_t *)b];
	const uint32_t *fx = c->f->frames + x->offset, *fy = c->f->frames + y->offset;
	uint32_t n = MIN(x->n, y->n);

	for (uint32_t i = 0; i < n; i++)
		if (fx[i] != fy[i])
			return c->rank[fx[i]] < c->rank[fy[i]] ? -1 : 1;
	return (x->n > y->n) - (x->n < y->n);
}

int fg_folded__sort(struct fg_folded *f)
{
	size_t n_names = fg_strpool__count(f->names);
	_cleanup_free_ uint32_t *by_name = NULL, *rank = NULL;
	uint32_t *order;

	if (f->sorted || f->sequence)
		return 0;
	/* Rank names once so stack comparison is integer-only. */
	by_name = malloc(MAX(n_names, (size_t)1) * sizeof(uint32_t));
	rank = malloc(MAX(n_names, (size_t)1) * sizeof(uint32_t));
	order = realloc(f->order, MAX(f->n_stacks, (size_t)1) * sizeof(uint32_t));
	if (!by_name || !rank || !order)
		return -ENOMEM;
	f->order = order;
	for (size_t i = 0; i < n_names; i++)
		by_name[i] = (uint32_t)i;
	qsort_r(by_name, n_names, sizeof(uint32_t), cmp_name_ids, f->names);
	for (size_t i = 0; i < n_names; i++)
		rank[by_name[i]] = (uint32_t)i;
	for (size_t i = 0; i < f->n_stacks; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, f->n_stacks, sizeof(uint32_t), cmp_stacks,
		&(struct sort_ctx){ .f = f, .rank = rank });
	f->sorted = true;
	return 0;
}

void fg_folded__stack(const struct fg_folded *f, size_t i, struct fg_stack *ret)
{
	const struct stack_entry *e = &f->stacks[f->sorted ? f->order[i] : i];

	*ret = (struct fg_stack){
		.frames = f->frames + e->offset,
		.n_frames = e->n,
		.count = e->count,
		.before = e->before,
	};
}

size_t fg_format_count(double count, char *buf, size_t size)
{
	int n;

	/* Always plain digits: folded readers accept \d+(\.\d*)?, never exponents. */
	if (count == floor(count)) {
		n = snprintf(buf, size, "%.0f", count);
	} else {
		n = snprintf(buf, size, "%.6f", count);
		while (n > 0 && (size_t)n < size && buf[n - 1] == '0')
			buf[--n] = '\0';
		if (n > 0 && (size_t)n < size && buf[n - 1] == '.')
			buf[--n] = '\0';
	}
	if (n < 0)
		return 0;
	return MIN((size_t)n, size - 1);
}

int fg_folded__emit(const struct fg_folded *f, size_t *cursor, fg_write_fn fn, void *ctx,
		    size_t budget)
{
	_cleanup_free_ char *buf = NULL;
	size_t cap = 0, used = 0;
	int r;

	while (*cursor < f->n_stacks) {
		struct fg_stack s;
		char num[400], num_before[400]; /* DBL_MAX has 309 digits */
		size_t need;

		fg_folded__stack(f, *cursor, &s);
		need = fg_format_count(s.count, num, sizeof(num)) + 2;
		if (f->is_diff)
			need += fg_format_count(s.before, num_before, sizeof(num_before)) + 1;
		for (size_t i = 0; i < s.n_frames; i++)
			need += fg_strpool__len(f->names, s.frames[i]) + 1;
		r = FG_GROW(buf, cap, used + need);
		if (r < 0)
			return r;
		for (size_t i = 0; i < s.n_frames; i++) {
			size_t l = fg_strpool__len(f->names, s.frames[i]);

			if (i > 0)
				buf[used++] = ';';
			memcpy(buf + used, fg_strpool__str(f->names, s.frames[i]), l);
			used += l;
		}
		if (f->is_diff)
			used += (size_t)sprintf(buf + used, " %s", num_before);
		used += (size_t)sprintf(buf + used, " %s\n", num);
		(*cursor)++;
		if (used >= budget)
			break;
	}
	if (used > 0) {
		r = fn(ctx, buf, used);
		if (r < 0)
			return r;
	}
	return *cursor >= f->n_stacks ? 1 : 0;
}
