/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "perf/perfmap.h"

/* One well-formed line, kept in file order: its index is its age. */
struct entry {
	uint64_t start, end;
	uint32_t name; /* offset into names */
};

/* A disjoint piece of the address space and the latest entry covering it. */
struct seg {
	uint64_t start, end;
	uint32_t entry;
};

struct fg_perfmap {
	struct fg_perfmap_limits lim;
	struct entry *entries; /* owned */
	size_t n_entries, cap_entries;
	size_t n_indexed; /* entries[0, n_indexed) are folded into segs */
	struct seg *segs; /* owned; sorted by start, disjoint */
	size_t n_segs, cap_segs;
	char *names; /* owned arena of NUL-terminated names */
	size_t names_len, names_cap;
	char *line; /* owned, lim.max_line bytes: the incomplete last line */
	size_t line_len;
	bool skipping; /* inside an overlong line: discard up to its '\n' */
	struct fg_perfmap_stats stats;
};

struct fg_perfmap *fg_perfmap__free(struct fg_perfmap *m)
{
	if (!m)
		return NULL;
	free(m->entries);
	free(m->segs);
	free(m->names);
	free(m->line);
	free(m);
	return NULL;
}

int fg_perfmap__new(const struct fg_perfmap_limits *limits, struct fg_perfmap **ret)
{
	_cleanup_(fg_perfmap__freep) struct fg_perfmap *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->lim = limits ? *limits :
			  (struct fg_perfmap_limits){
				  .max_line = FG_PERFMAP_MAX_LINE,
				  .max_entries = FG_PERFMAP_MAX_ENTRIES,
				  .max_name_bytes = FG_PERFMAP_MAX_NAME_BYTES,
			  };
	/* Allocated once: a partial line never needs more, so buffering it cannot fail. */
	m->line = malloc(m->lim.max_line ? m->lim.max_line : 1);
	if (!m->line)
		return -ENOMEM;
	*ret = TAKE_PTR(m);
	return 0;
}

/* ---- parsing ---- */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/*
 * A hex number at s[*pos], with an optional 0x, followed by a blank. Leading
 * zeros are fine; more than 64 bits is not. Advances *pos past the digits.
 */
static bool parse_hex(const char *s, size_t n, size_t *pos, uint64_t *ret)
{
	size_t i = *pos, digits = 0;
	uint64_t v = 0;
	int d;

	if (i + 1 < n && s[i] == '0' && (s[i + 1] | 0x20) == 'x')
		i += 2;
	for (; i < n && (d = hex_digit(s[i])) >= 0; i++, digits++) {
		if (v >> 60)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	if (digits == 0 || i >= n || !is_blank(s[i]))
		return false;
	*pos = i;
	*ret = v;
	return true;
}

static size_t skip_blanks(const char *s, size_t n, size_t i)
{
	while (i < n && is_blank(s[i]))
		i++;
	return i;
}

/* Doubles the name arena, but never past the name limit: big maps would waste half of it. */
static int grow_names(struct fg_perfmap *m, size_t need)
{
	size_t ncap = MIN(MAX(m->names_cap * 2, need), (size_t)m->lim.max_name_bytes);
	char *p = realloc(m->names, MAX(ncap, need));

	if (!p)
		return -ENOMEM;
	m->names = p;
	m->names_cap = MAX(ncap, need);
	return 0;
}

static int add_entry(struct fg_perfmap *m, uint64_t start, uint64_t end, const char *name,
		     size_t len)
{
	int r;

	if (m->n_entries >= m->lim.max_entries || len + 1 > m->lim.max_name_bytes - m->names_len) {
		m->stats.dropped++;
		return 0;
	}
	r = FG_GROW(m->entries, m->cap_entries, m->n_entries + 1);
	if (r >= 0 && m->names_len + len + 1 > m->names_cap)
		r = grow_names(m, m->names_len + len + 1);
	if (r < 0) {
		m->stats.dropped++;
		return r;
	}
	memcpy(m->names + m->names_len, name, len);
	m->names[m->names_len + len] = '\0';
	m->entries[m->n_entries++] = (struct entry){ start, end, (uint32_t)m->names_len };
	m->names_len += len + 1;
	m->stats.entries++;
	return 0;
}

/* One complete line, without its '\n'. */
static int parse_line(struct fg_perfmap *m, const char *s, size_t n)
{
	uint64_t start, size;
	size_t i, name_end;

	m->stats.lines++;
	if (n > 0 && s[n - 1] == '\r')
		n--;
	i = skip_blanks(s, n, 0);
	if (i == n)
		return 0;
	if (memchr(s, '\0', n))
		goto malformed;
	if (!parse_hex(s, n, &i, &start))
		goto malformed;
	i = skip_blanks(s, n, i);
	if (!parse_hex(s, n, &i, &size))
		goto malformed;
	i = skip_blanks(s, n, i);
	for (name_end = n; name_end > i && is_blank(s[name_end - 1]); name_end--)
		;
	/* A range must cover something and end where an address can. */
	if (name_end == i || size == 0 || start + size < start)
		goto malformed;
	return add_entry(m, start, start + size, s + i, name_end - i);

malformed:
	m->stats.malformed++;
	return 0;
}

int fg_perfmap__feed(struct fg_perfmap *m, const void *data, size_t len)
{
	const char *p = data, *end = p + len;
	int r, ret = 0;

	m->stats.bytes += len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (nl ? nl : end) - p;

		if (m->skipping) {
			if (!nl)
				break;
			m->skipping = false;
			p = nl + 1;
			continue;
		}
		if (n > m->lim.max_line - m->line_len) {
			/* Counted now, skipped to its end whenever that comes. */
			m->stats.lines++;
			m->stats.malformed++;
			m->line_len = 0;
			m->skipping = !nl;
			p = nl ? nl + 1 : end;
			continue;
		}
		if (!nl) {
			memcpy(m->line + m->line_len, p, n);
			m->line_len += n;
			break;
		}
		if (m->line_len > 0) {
			memcpy(m->line + m->line_len, p, n);
			r = parse_line(m, m->line, m->line_len + n);
			m->line_len = 0;
		} else {
			r = parse_line(m, p, n);
		}
		if (r < 0 && ret == 0)
			ret = r;
		p = nl + 1;
	}
	return ret;
}

/* ---- the index ---- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* New entries sorted by start; idx breaks ties so the order is total. */
struct pending {
	uint64_t start;
	uint32_t idx;
};

static int cmp_pending(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* A max-heap of entry indices: the newest entry is on top. */
static void heap_push(uint32_t *h, size_t *n, uint32_t v)
{
	size_t i = (*n)++;

	while (i > 0 && h[(i - 1) / 2] < v) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

static void heap_pop(uint32_t *h, size_t *n)
{
	uint32_t v = h[--(*n)];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] > h[c])
			c++;
		if (h[c] <= v)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n > 0)
		h[i] = v;
}

static void emit(struct seg *out, size_t *n, uint64_t start, uint64_t end, uint32_t entry)
{
	if (*n > 0 && out[*n - 1].entry == entry && out[*n - 1].end == start)
		out[*n - 1].end = end;
	else
		out[(*n)++] = (struct seg){ start, end, entry };
}

/*
 * Flattens entries [first, n_entries) into disjoint segments where the
 * newest entry wins: a sweep over their sorted boundaries, keeping the
 * entries open at each point in a heap ordered by age. *ret is caller-freed.
 */
static int flatten_new(struct fg_perfmap *m, struct seg **ret, size_t *ret_n)
{
	size_t first = m->n_indexed, k = m->n_entries - first, np = 0, nh = 0, n = 0, o = 0;
	_cleanup_free_ struct pending *byst = calloc(k, sizeof(*byst));
	_cleanup_free_ uint64_t *points = calloc(2 * k, sizeof(*points));
	_cleanup_free_ uint32_t *heap = calloc(k, sizeof(*heap));
	_cleanup_free_ struct seg *out = calloc(2 * k, sizeof(*out));

	if (!byst || !points || !heap || !out)
		return -ENOMEM;
	for (size_t i = 0; i < k; i++) {
		const struct entry *e = &m->entries[first + i];

		byst[i] = (struct pending){ e->start, (uint32_t)(first + i) };
		points[2 * i] = e->start;
		points[2 * i + 1] = e->end;
	}
	qsort(byst, k, sizeof(*byst), cmp_pending);
	qsort(points, 2 * k, sizeof(*points), cmp_u64);
	for (size_t i = 0; i < 2 * k; i++)
		if (np == 0 || points[np - 1] != points[i])
			points[np++] = points[i];
	for (size_t j = 0; j < np; j++) {
		uint64_t p = points[j];

		while (o < k && byst[o].start == p)
			heap_push(heap, &nh, byst[o++].idx);
		/* Entries that ended are dropped only when they surface: the top is all we read. */
		while (nh > 0 && m->entries[heap[0]].end <= p)
			heap_pop(heap, &nh);
		if (nh > 0 && j + 1 < np)
			emit(out, &n, p, points[j + 1], heap[0]);
	}
	*ret = TAKE_PTR(out);
	*ret_n = n;
	return 0;
}

/* Folds entries fed since the last fold into segs: new segments win over old ones. */
static int fold(struct fg_perfmap *m)
{
	_cleanup_free_ struct seg *f = NULL, *out = NULL;
	size_t nf, worst, n = 0, i = 0, j = 0;
	uint64_t bs = 0; /* where the current old segment starts, once trimmed */
	int r;

	r = flatten_new(m, &f, &nf);
	if (r < 0)
		return r;
	/* Each new segment splits at most one old one in two. */
	worst = m->n_segs + nf + nf + 1;
	out = calloc(worst, sizeof(*out));
	if (!out)
		return -ENOMEM;
	if (m->n_segs > 0)
		bs = m->segs[0].start;
	while (i < m->n_segs || j < nf) {
		const struct seg *b = i < m->n_segs ? &m->segs[i] : NULL;

		if (!b || (j < nf && f[j].end <= bs)) {
			emit(out, &n, f[j].start, f[j].end, f[j].entry);
			j++;
		} else if (j == nf || b->end <= f[j].start) {
			emit(out, &n, bs, b->end, b->entry);
			if (++i < m->n_segs)
				bs = m->segs[i].start;
		} else {
			/* Overlap: the old segment keeps only what lies outside the new one. */
			if (bs < f[j].start)
				emit(out, &n, bs, f[j].start, b->entry);
			if (b->end > f[j].end) {
				bs = f[j].end;
				emit(out, &n, f[j].start, f[j].end, f[j].entry);
				j++;
			} else if (++i < m->n_segs) {
				bs = m->segs[i].start;
			}
		}
	}
	free(m->segs);
	m->segs = NULL;
	m->n_segs = m->cap_segs = 0;
	if (n > 0) {
		/* Sized for the worst case: give back what overlaps made unnecessary. */
		struct seg *shrunk = realloc(out, n * sizeof(*out));

		m->cap_segs = shrunk ? n : worst;
		m->segs = shrunk ? shrunk : out;
		out = NULL;
		m->n_segs = n;
	}
	m->n_indexed = m->n_entries;
	m->stats.segments = n;
	return 0;
}

int64_t fg_perfmap__lookup(struct fg_perfmap *m, uint64_t addr)
{
	size_t lo = 0, hi;

	if (m->n_indexed < m->n_entries && fold(m) < 0) {
		/* No memory to index the new entries: they are the newest, so look there first. */
		for (size_t i = m->n_entries; i-- > m->n_indexed;)
			if (m->entries[i].start <= addr && addr < m->entries[i].end)
				return (int64_t)i;
	}
	hi = m->n_segs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->segs[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= m->segs[lo - 1].end)
		return -ENOENT;
	return m->segs[lo - 1].entry;
}

const char *fg_perfmap__name(const struct fg_perfmap *m, uint32_t idx)
{
	return idx < m->n_entries ? m->names + m->entries[idx].name : NULL;
}

void fg_perfmap__range(const struct fg_perfmap *m, uint32_t idx, uint64_t *ret_start,
		       uint64_t *ret_end)
{
	*ret_start = idx < m->n_entries ? m->entries[idx].start : 0;
	*ret_end = idx < m->n_entries ? m->entries[idx].end : 0;
}

void fg_perfmap__stats(const struct fg_perfmap *m, struct fg_perfmap_stats *ret)
{
	*ret = m->stats;
}

size_t fg_perfmap__bytes(const struct fg_perfmap *m)
{
	return sizeof(*m) + m->cap_entries * sizeof(struct entry) +
	       m->cap_segs * sizeof(struct seg) + m->names_cap + m->lim.max_line;
}
