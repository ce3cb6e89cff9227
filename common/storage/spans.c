/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>

#include "base/macro.h"
#include "storage/spans.h"

static int cmp_span(const void *a, const void *b)
{
	const struct fg_span *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->end > y->end) - (x->end < y->end);
}

size_t fg_spans_unite(struct fg_span *v, size_t n)
{
	size_t k = 0;

	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_span);
	for (size_t i = 0; i < n; i++) {
		if (v[i].end <= v[i].start)
			continue;
		if (k > 0 && v[i].start <= v[k - 1].end)
			v[k - 1].end = MAX(v[k - 1].end, v[i].end);
		else
			v[k++] = v[i];
	}
	return k;
}

/* Counts [start, end) as a gap if it is long enough. */
static void gap(int64_t start, int64_t end, int64_t min_ms, struct fg_span *ret, size_t max,
		size_t *n, int64_t *total)
{
	if (end - start < MAX(min_ms, (int64_t)1))
		return;
	if (*n < max)
		ret[*n] = (struct fg_span){ start, end };
	(*n)++;
	*total += end - start;
}

size_t fg_spans_gaps(const struct fg_span *v, size_t n, int64_t since, int64_t until,
		     int64_t min_ms, struct fg_span *ret, size_t max, int64_t *ret_total_ms)
{
	int64_t at = since, total = 0;
	size_t found = 0;

	for (size_t i = 0; i < n && at < until; i++) {
		if (v[i].end <= at)
			continue;
		if (v[i].start > at)
			gap(at, MIN(v[i].start, until), min_ms, ret, max, &found, &total);
		at = MAX(at, v[i].end);
	}
	if (at < until)
		gap(at, until, min_ms, ret, max, &found, &total);
	*ret_total_ms = total;
	return found;
}
