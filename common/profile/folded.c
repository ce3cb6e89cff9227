/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/idxmap.h"
#include "base/macro.h"
#include "base/strpool.h"
#include "profile/folded.h"
#include "profile/framename.h"

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
	size_t n_prev; /* leading ids in scratch that are the previous line's frames */
	char *clean;   /* owned: a name's clean form, while it is interned */
	size_t cap_clean;
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
	free(f->clean);
	free(f);
	return NULL;
}

/*
 * Every name enters the model here, and leaves it clean (framename.h). The
 * pool holds clean names only, so a name found as it is needs no look: only
 * a name seen for the first time is checked, and cleaned if it must be.
 */
static int intern(struct fg_folded *f, const char *name, size_t len, uint32_t *ret_id)
{
	int64_t id = fg_strpool__find(f->names, name, len);
	size_t clean_len;
	int r;

	if (id >= 0) {
		*ret_id = (uint32_t)id;
		return 0;
	}
	if (!fg_framename_is_clean(name, len)) {
		r = fg_framename_clean(name, len, &f->clean, &f->cap_clean, &clean_len);
		if (r < 0)
			return r;
		name = f->clean;
		len = clean_len;
	}
	r = fg_strpool__intern(f->names, name, len, ret_id);
	return r < 0 ? r : 0;
}

int fg_folded__intern(struct fg_folded *f, const char *name, size_t len, uint32_t *ret_id)
{
	return intern(f, name, len, ret_id);
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

	return e->n == k->n &&
	       memcmp(f->frames + e->offset, k->frames, k->n * sizeof(uint32_t)) == 0;
}

/*
 * Stacks are hashed by their frame ids, not their bytes: one multiply per
 * frame, then a full mix so the index's low bits are good.
 */
static uint64_t stack_hash(const uint32_t *frames, size_t n)
{
	uint64_t h = n;

	for (size_t i = 0; i < n; i++)
		h = (h ^ frames[i]) * 0x9e3779b97f4a7c15ULL;
	return fg_hash_mix(h);
}

static bool valid_count(double c)
{
	return isfinite(c) && c >= 0;
}

/* Adds a stack or to one; its id (position in the order of first addition) in *ret_id. */
static int add_stack(struct fg_folded *f, const uint32_t *frames, size_t n, double before,
		     double count, uint32_t *ret_id)
{
	struct stack_key k = { frames, n };
	uint64_t h;
	int64_t found;
	int r;

	if (n == 0 || n > UINT32_MAX || !valid_count(count) || !valid_count(before))
		return -EINVAL;
	/* Every stack's count is at most the total, so finite totals keep them all finite. */
	if (!isfinite(f->total + count) || !isfinite(f->total_before + before))
		return -ERANGE;
	if (f->sequence) {
		h = 0;
		found = f->n_stacks > 0 && stack_eq(f, (uint32_t)f->n_stacks - 1, &k) ?
				(int64_t)f->n_stacks - 1 :
				-1;
	} else {
		h = stack_hash(frames, n);
		found = fg_idxmap_find(&f->index, h, stack_eq, f, &k);
	}
	if (found >= 0) {
		f->stacks[found].count += count;
		f->stacks[found].before += before;
		f->total += count;
		f->total_before += before;
		*ret_id = (uint32_t)found;
		return 0;
	}
	if (f->n_stacks >= MIN(f->max_stacks, (size_t)UINT32_MAX - 1))
		return -E2BIG;
	if (f->n_stacks >= f->cap_stacks) {
		r = FG_GROW(f->stacks, f->cap_stacks, f->n_stacks + 1);
		if (r < 0)
			return r;
	}
	if (n > f->cap_frames - f->n_frames) {
		r = FG_GROW(f->frames, f->cap_frames, f->n_frames + n);
		if (r < 0)
			return r;
	}
	if (!f->sequence) {
		r = fg_idxmap_insert(&f->index, h, (uint32_t)f->n_stacks);
		if (r < 0)
			return r;
	}
	memcpy(f->frames + f->n_frames, frames, n * sizeof(uint32_t));
	*ret_id = (uint32_t)f->n_stacks;
	f->stacks[f->n_stacks++] = (struct stack_entry){ f->n_frames, (uint32_t)n, count, before };
	f->n_frames += n;
	f->total += count;
	f->total_before += before;
	f->sorted = false;
	return 0;
}

int fg_folded__add(struct fg_folded *f, const uint32_t *frames, size_t n, double count)
{
	uint32_t id;

	return add_stack(f, frames, n, count, count, &id);
}

int fg_folded__add_id(struct fg_folded *f, const uint32_t *frames, size_t n, double count,
		      uint32_t *ret_id)
{
	return add_stack(f, frames, n, count, count, ret_id);
}

int fg_folded__add_pair(struct fg_folded *f, const uint32_t *frames, size_t n, double before,
			double count)
{
	uint32_t id;
	int r = add_stack(f, frames, n, before, count, &id);

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
	if (digits == len && len <= 15) {
		/* Below 10^15 < 2^53 an integer is exact, as strtod() would give it. */
		uint64_t v = 0;

		for (i = 0; i < len; i++)
			v = v * 10 + (uint64_t)(s[i] - '0');
		*ret = (double)v;
		return 0;
	}
	if (len >= sizeof(buf))
		return -ERANGE;
	memcpy(buf, s, len);
	buf[len] = '\0';
	*ret = strtod(buf, NULL);
	if (!isfinite(*ret) || (*ret != 0 && *ret < FG_FOLDED_MIN_COUNT))
		return -ERANGE;
	return 0;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_count_char(char c)
{
	return (c >= '0' && c <= '9') || c == '.';
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

	/*
	 * Only digits and '.' can make a count, so stop at anything else: a
	 * token holding it would be refused anyway, and the pair check then
	 * costs a few bytes, not a scan back over a whole frame without blanks.
	 */
	while (sep > 0 && is_count_char(line[sep - 1]))
		sep--;
	if (sep == 0 || !is_blank(line[sep - 1]))
		return -EINVAL;
	r = parse_count(line + sep, *len - sep, ret);
	if (r < 0)
		return r;
	while (sep > 0 && is_blank(line[sep - 1]))
		sep--;
	*len = sep;
	return 0;
}

/*
 * Position of the first ';' in s[pos..len), or len. Frames are short (tens
 * of bytes), so a call of memchr() per frame costs more than its scan: look
 * at 8 bytes at a time inline instead.
 */
static size_t find_semi(const char *s, size_t pos, size_t len)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	for (; pos + 8 <= len; pos += 8) {
		uint64_t w, x;

		memcpy(&w, s + pos, 8);
		x = w ^ 0x3b3b3b3b3b3b3b3bULL; /* ';' bytes become 0 */
		/* The lowest flagged byte is the first zero; higher flags may be false. */
		x = (x - 0x0101010101010101ULL) & ~x & 0x8080808080808080ULL;
		if (x)
			return pos + (size_t)(__builtin_ctzll(x) / 8);
	}
#endif
	while (pos < len && s[pos] != ';')
		pos++;
	return pos;
}

/*
 * Splits line[0..len) at ';' and interns each frame into f->scratch; stores
 * the number of frames. Input is often sorted (stackcollapse and fgd write
 * it so), and then a line shares most of its frames with the one before: a
 * frame equal to the previous line's at the same depth takes its id after a
 * byte comparison, without hashing or a table lookup. Any ids in scratch are
 * valid, so this is correct whatever the previous line was.
 */
static int intern_frames(struct fg_folded *f, const char *line, size_t len, size_t *ret_n)
{
	size_t start = 0, n = 0;
	bool same = true;
	int r;

	for (;;) {
		size_t end = find_semi(line, start, len);

		if (_unlikely_(n >= f->cap_scratch)) {
			r = FG_GROW(f->scratch, f->cap_scratch, n + 1);
			if (r < 0)
				goto fail;
		}
		if (!same || n >= f->n_prev ||
		    !fg_strpool__is(f->names, f->scratch[n], line + start, end - start)) {
			same = false;
			r = intern(f, line + start, end - start, &f->scratch[n]);
			if (r < 0)
				goto fail;
		}
		n++;
		if (end == len)
			break;
		start = end + 1;
	}
	f->n_prev = n;
	*ret_n = n;
	return 0;
fail:
	f->n_prev = n;
	return r;
}

int fg_folded__intern_stack(struct fg_folded *f, const char *text, size_t len,
			    const uint32_t **ret_frames, size_t *ret_n)
{
	size_t n = 0;
	int r;

	if (len == 0)
		return -EINVAL;
	r = intern_frames(f, text, len, &n);
	if (r < 0)
		return r;
	*ret_frames = f->scratch;
	*ret_n = n;
	return 0;
}

int fg_folded__add_line(struct fg_folded *f, const char *line, size_t len)
{
	size_t n = 0, rest;
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

	r = intern_frames(f, line, len, &n);
	if (r < 0)
		return r;
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

static int cmp_name_ids(const void *a, const void *b, void *arg)
{
	const struct fg_strpool *names = arg;

	return strcmp(fg_strpool__str(names, *(const uint32_t *)a),
		      fg_strpool__str(names, *(const uint32_t *)b));
}

/* A stack and the ranks of some of its frames, packed so integer order is frame order. */
struct sort_item {
	uint64_t key;
	uint32_t idx;
};

#define RADIX_MIN 64
#define SWAP(a, b)                          \
	do {                                \
		__typeof__(a) _swap_ = (a); \
		(a) = (b);                  \
		(b) = _swap_;               \
	} while (0)

/*
 * Sorts a[0..n) by key: insertion sort when short, else a least-significant
 * digit radix sort through tmp (room for n items), skipping the bytes in
 * which all keys agree. Linear in n whatever the input, unlike a quicksort.
 */
static void sort_items(struct sort_item *a, struct sort_item *tmp, size_t n)
{
	size_t count[8][256];
	struct sort_item *src = a, *dst = tmp;

	if (n < RADIX_MIN) {
		for (size_t i = 1; i < n; i++) {
			struct sort_item x = a[i];
			size_t j = i;

			for (; j > 0 && a[j - 1].key > x.key; j--)
				a[j] = a[j - 1];
			a[j] = x;
		}
		return;
	}
	memset(count, 0, sizeof(count));
	for (size_t i = 0; i < n; i++)
		for (unsigned d = 0; d < 8; d++)
			count[d][(a[i].key >> (8 * d)) & 0xff]++;
	for (unsigned d = 0; d < 8; d++) {
		size_t sum = 0;

		if (count[d][(src[0].key >> (8 * d)) & 0xff] == n)
			continue;
		for (unsigned b = 0; b < 256; b++) {
			size_t c = count[d][b];

			count[d][b] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[d][(src[i].key >> (8 * d)) & 0xff]++] = src[i];
		SWAP(src, dst);
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
}

struct sort_range {
	size_t lo, hi; /* items[lo..hi) share their first depth frames */
	size_t depth;
};

/*
 * The key of stack idx at depth d: rank + 1 of each of its frames
 * d..d+per_key-1, bits bits each, first frame highest; 0 past its end, so a
 * stack sorts before its extensions.
 */
static uint64_t stack_key(const struct fg_folded *f, const uint32_t *rank, uint32_t idx, size_t d,
			  unsigned bits, unsigned per_key)
{
	const struct stack_entry *e = &f->stacks[idx];
	const uint32_t *fr = f->frames + e->offset;
	uint64_t key = 0;

	for (unsigned j = 0; j < per_key; j++, d++)
		key = key << bits | (d < e->n ? (uint64_t)rank[fr[d]] + 1 : 0);
	return key;
}

/*
 * Most-significant-digit sort of the stacks: sort all by the ranks of their
 * first few frames packed in one integer, then each run of equal keys by the
 * next few frames, and so on. Every comparison is of two integers in a
 * contiguous array, and a stack's frames are read once per few levels, not
 * once per comparison.
 */
static int sort_stacks(const struct fg_folded *f, const uint32_t *rank, size_t n_names,
		       uint32_t *order)
{
	_cleanup_free_ struct sort_item *items = NULL, *tmp = NULL;
	_cleanup_free_ struct sort_range *todo = NULL;
	size_t n_todo = 0, cap_todo = 0;
	unsigned bits = 1, per_key;
	uint64_t slot_mask;
	int r;

	while ((n_names >> bits) != 0)
		bits++; /* rank + 1 <= n_names < 2^32 fits */
	per_key = 64 / bits;
	slot_mask = ((uint64_t)1 << bits) - 1;

	items = malloc(MAX(f->n_stacks, (size_t)1) * sizeof(*items));
	tmp = malloc(MAX(f->n_stacks, (size_t)1) * sizeof(*tmp));
	if (!items || !tmp)
		return -ENOMEM;
	for (size_t i = 0; i < f->n_stacks; i++)
		items[i].idx = (uint32_t)i;
	r = FG_GROW(todo, cap_todo, 1);
	if (r < 0)
		return r;
	todo[n_todo++] = (struct sort_range){ 0, f->n_stacks, 0 };

	while (n_todo > 0) {
		struct sort_range g = todo[--n_todo];

		for (size_t i = g.lo; i < g.hi; i++)
			items[i].key = stack_key(f, rank, items[i].idx, g.depth, bits, per_key);
		sort_items(items + g.lo, tmp, g.hi - g.lo);
		for (size_t a = g.lo, b; a < g.hi; a = b) {
			for (b = a + 1; b < g.hi && items[b].key == items[a].key; b++)
				;
			/*
			 * Equal keys that reach past the end of a stack would be equal
			 * stacks, which were merged; only full keys continue.
			 */
			if (b - a < 2 || (items[a].key & slot_mask) == 0)
				continue;
			r = FG_GROW(todo, cap_todo, n_todo + 1);
			if (r < 0)
				return r;
			todo[n_todo++] = (struct sort_range){ a, b, g.depth + per_key };
		}
	}
	for (size_t i = 0; i < f->n_stacks; i++)
		order[i] = items[i].idx;
	return 0;
}

int fg_folded__sort(struct fg_folded *f)
{
	size_t n_names = fg_strpool__count(f->names);
	_cleanup_free_ uint32_t *by_name = NULL, *rank = NULL;
	uint32_t *order;
	int r;

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
	r = sort_stacks(f, rank, n_names, order);
	if (r < 0)
		return r;
	f->sorted = true;
	return 0;
}

#define AHEAD 8

void fg_folded__stack(const struct fg_folded *f, size_t i, struct fg_stack *ret)
{
	const struct stack_entry *e = &f->stacks[f->sorted ? f->order[i] : i];

	/*
	 * Renderers walk the sorted stacks in order, which the sort scattered
	 * over memory: fetch the entries and frames of the stacks a few calls
	 * ahead, so each call finds its own in cache. Only hints: a caller
	 * reading in another order pays a few loads for nothing.
	 */
	if (f->sorted && i + 2 * AHEAD < f->n_stacks) {
		const struct stack_entry *next = &f->stacks[f->order[i + AHEAD]];

		__builtin_prefetch(&f->stacks[f->order[i + 2 * AHEAD]]);
		__builtin_prefetch(f->frames + next->offset);
		__builtin_prefetch(f->frames + next->offset + next->n - 1);
	}

	*ret = (struct fg_stack){
		.frames = f->frames + e->offset,
		.n_frames = e->n,
		.count = e->count,
		.before = e->before,
	};
}

int fg_folded__add_from(struct fg_folded *dst, const struct fg_folded *src, uint32_t id,
			double count, uint32_t *map, uint32_t *ret_id)
{
	const struct stack_entry *e = &src->stacks[id];
	int r;

	if (e->n > dst->cap_scratch) {
		r = FG_GROW(dst->scratch, dst->cap_scratch, e->n);
		if (r < 0)
			return r;
	}
	for (size_t k = 0; k < e->n; k++) {
		uint32_t name = src->frames[e->offset + k];

		if (map[name] == UINT32_MAX) {
			r = intern(dst, fg_strpool__str(src->names, name),
				   fg_strpool__len(src->names, name), &map[name]);
			if (r < 0)
				return r;
		}
		dst->scratch[k] = map[name];
	}
	/* The line parser's hint about the previous line's frames no longer holds. */
	dst->n_prev = 0;
	return add_stack(dst, dst->scratch, e->n, count, count, ret_id);
}

void fg_folded__stack_by_id(const struct fg_folded *f, uint32_t id, struct fg_stack *ret)
{
	const struct stack_entry *e = &f->stacks[id];

	*ret = (struct fg_stack){
		.frames = f->frames + e->offset,
		.n_frames = e->n,
		.count = e->count,
		.before = e->before,
	};
}

size_t fg_format_count(double count, char *buf, size_t size)
{
	int n, decimals = 6;

	/* Always plain digits: folded readers accept \d+(\.\d*)?, never exponents. */
	if (count == floor(count)) {
		n = snprintf(buf, size, "%.0f", count);
	} else {
		/* Six significant digits at least, so small fractions do not print as 0. */
		if (count > 0 && count < 0.1)
			decimals = MIN(6 + (int)ceil(-log10(count)), 330);
		n = snprintf(buf, size, "%.*f", decimals, count);
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
