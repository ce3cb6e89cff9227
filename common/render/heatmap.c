/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "base/outbuf.h"
#include "render/heatmap.h"

#define DEFAULT_BUCKET_MS 20

/* floor(a / b) for b > 0, for times before the epoch too. */
static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b < 0);
}

/* Adds v to the cell of ms x (since <= x < until). */
static void add_at(struct fg_heatmap *h, int64_t x, double v)
{
	int64_t rel = x - h->start;
	size_t col = (size_t)(rel / 1000), row = (size_t)(rel % 1000) / h->bucket_ms;

	h->cells[col * h->rows + row] += v;
}

/* µs of a cell of row: the last row of a second ends with it, not a bucket later. */
static int64_t row_us(const struct fg_heatmap *h, uint32_t row)
{
	return (int64_t)MIN((row + 1) * h->bucket_ms, 1000U) * 1000 -
	       (int64_t)row * h->bucket_ms * 1000;
}

/* The cell of µs x after the first column's start (0 <= x), and where the cell starts. */
static size_t cell_of(const struct fg_heatmap *h, int64_t x, int64_t *ret_start)
{
	int64_t sec = x / 1000000;
	uint32_t row = MIN((uint32_t)(x % 1000000 / (h->bucket_ms * 1000)), h->rows - 1);

	*ret_start = sec * 1000000 + (int64_t)row * h->bucket_ms * 1000;
	return (size_t)sec * h->rows + row;
}

/*
 * Spreads µs [lo, hi) (after the first column's start, inside the map) over
 * the cells they cross: the first and last in part, and each between whole,
 * which the cells' order (a column's rows, then the next column's) makes a
 * run of cells: counted in full[] at its ends, added up by fill_runs().
 */
static void spread(struct fg_heatmap *h, int64_t *full, int64_t lo, int64_t hi)
{
	int64_t lo_start, hi_start;
	size_t i, j;

	if (lo >= hi)
		return;
	i = cell_of(h, lo, &lo_start);
	j = cell_of(h, hi - 1, &hi_start);
	if (i == j) {
		h->cells[i] += (double)(hi - lo);
		return;
	}
	h->cells[i] += (double)(lo_start + row_us(h, (uint32_t)(i % h->rows)) - lo);
	h->cells[j] += (double)(hi - hi_start);
	if (j > i + 1) {
		full[i + 1]++;
		full[j]--;
	}
}

/* Adds the whole cells spread() counted: each its row's µs, once per run over it. */
static void fill_runs(struct fg_heatmap *h, const int64_t *full)
{
	int64_t runs = 0;

	for (size_t i = 0; i < (size_t)h->columns * h->rows; i++) {
		runs += full[i];
		if (runs)
			h->cells[i] += (double)runs * (double)row_us(h, (uint32_t)(i % h->rows));
	}
}

struct fg_heatmap *fg_heatmap__free(struct fg_heatmap *h)
{
	if (!h)
		return NULL;
	free(h->cells);
	free(h);
	return NULL;
}

int fg_heatmap__new(const struct fg_timed *t, const struct fg_heatmap_opts *opts,
		    struct fg_heatmap **ret)
{
	const struct fg_timed_sample *v = fg_timed__samples(t);
	size_t n = fg_timed__n_samples(t);
	struct fg_heatmap_opts o = opts ? *opts : (struct fg_heatmap_opts){};
	_cleanup_(fg_heatmap__freep) struct fg_heatmap *h = NULL;
	_cleanup_free_ int64_t *full = NULL; /* FG_TIMED_US: spread()'s runs of whole cells */
	int64_t columns;

	if (o.bucket_ms == 0)
		o.bucket_ms = DEFAULT_BUCKET_MS;
	if (o.bucket_ms > 1000 || o.until < o.since)
		return -EINVAL;
	if (o.since == 0 && o.until == 0)
		fg_timed__period(t, &o.since, &o.until);
	if (o.since == 0 && o.until == 0 && n > 0) {
		o.since = v[0].time;
		o.until = v[n - 1].time + 1;
	}
	/* Periods within the times a profile holds: the arithmetic below cannot overflow. */
	if (o.since < -FG_TIMED_TIME_MAX || o.until > FG_TIMED_TIME_MAX + 1)
		return -ERANGE;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->unit = fg_timed__unit(t);
	h->clock = fg_timed__clock(t);
	h->since = o.since;
	h->until = o.until;
	h->bucket_ms = o.bucket_ms;
	h->rows = (1000 + o.bucket_ms - 1) / o.bucket_ms;
	h->start = floor_div(o.since, 1000) * 1000;
	columns = o.until > h->start ? (o.until - h->start + 999) / 1000 : 0;
	if (columns > FG_HEATMAP_MAX_COLUMNS || columns * h->rows > FG_HEATMAP_MAX_CELLS)
		return -E2BIG;
	h->columns = (uint32_t)columns;
	h->cells = calloc(MAX((size_t)h->columns * h->rows, (size_t)1), sizeof(*h->cells));
	if (!h->cells)
		return -ENOMEM;
	if (h->unit == FG_TIMED_US) {
		full = calloc((size_t)h->columns * h->rows + 1, sizeof(*full));
		if (!full)
			return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (h->unit == FG_TIMED_SAMPLES) {
			if (v[i].time >= o.since && v[i].time < o.until)
				add_at(h, v[i].time, v[i].weight);
		} else {
			/* As fg_timed_share(): the weight µs that ended with the sample's ms. */
			int64_t end = (v[i].time + 1) * 1000, begin = end - v[i].weight;

			spread(h, full, MAX(begin, o.since * 1000) - h->start * 1000,
			       MIN(end, o.until * 1000) - h->start * 1000);
		}
	}
	if (full)
		fill_runs(h, full);
	for (size_t i = 0; i < (size_t)h->columns * h->rows; i++) {
		h->total += h->cells[i];
		h->max = MAX(h->max, h->cells[i]);
	}
	*ret = TAKE_PTR(h);
	return 0;
}

/* A count as JSON: integers in full, else to the µs's thousandth. */
static void put_count(struct fg_outbuf *o, double v)
{
	if (v == floor(v) && fabs(v) < 9007199254740992.0)
		fg_outbuf_printf(o, "%.0f", v);
	else
		fg_outbuf_printf(o, "%.3f", v);
}

int fg_heatmap__json(const struct fg_heatmap *h, fg_write_fn fn, void *ctx)
{
	struct fg_outbuf o = {};
	int r = 0;

	fg_outbuf_printf(&o,
			 "{\"start\":%" PRId64
			 ",\"clock\":\"%s\",\"unit\":\"%s\",\"bucket_ms\":%" PRIu32
			 ",\"rows\":%" PRIu32 ",\"columns\":[",
			 h->start / 1000, fg_timed_clock_name(h->clock),
			 fg_timed_unit_name(h->unit), h->bucket_ms, h->rows);
	for (uint32_t c = 0; c < h->columns && r >= 0; c++) {
		fg_outbuf_puts(&o, c ? ",[" : "[");
		for (uint32_t row = 0; row < h->rows; row++) {
			if (row)
				fg_outbuf_puts(&o, ",");
			put_count(&o, fg_heatmap__cell(h, c, row));
		}
		fg_outbuf_puts(&o, "]");
		r = fg_outbuf_drain(&o, fn, ctx, 65536);
	}
	if (r >= 0) {
		fg_outbuf_puts(&o, "],\"total\":");
		put_count(&o, h->total);
		fg_outbuf_puts(&o, ",\"max\":");
		put_count(&o, h->max);
		fg_outbuf_puts(&o, "}\n");
		r = fg_outbuf_drain(&o, fn, ctx, 1);
	}
	fg_outbuf_done(&o);
	return r;
}

uint32_t fg_heatmap_color(double v)
{
	/* Light yellow, orange, red, dark red (ColorBrewer's YlOrRd). */
	static const uint8_t stops[][3] = {
		{ 255, 255, 178 }, { 254, 204, 92 }, { 253, 141, 60 },
		{ 240, 59, 32 },   { 189, 0, 38 },
	};
	const size_t last = ELEMENTSOF(stops) - 1;
	double x = (isfinite(v) ? MIN(MAX(v, 0.0), 1.0) : 0) * (double)last, f;
	size_t i = MIN((size_t)x, last - 1);
	uint32_t c = 0;

	f = x - (double)i;
	for (size_t k = 0; k < 3; k++)
		c = c << 8 | (uint32_t)lround(stops[i][k] + f * (stops[i + 1][k] - stops[i][k]));
	return c;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The sorted values of the non-empty cells, for the rank scale; *ret_n of them. */
static int ranked(const struct fg_heatmap *h, double **ret, size_t *ret_n)
{
	size_t cells = (size_t)h->columns * h->rows, n = 0;
	double *v = malloc(MAX(cells, (size_t)1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < cells; i++)
		if (h->cells[i] > 0)
			v[n++] = h->cells[i];
	qsort(v, n, sizeof(*v), cmp_double);
	*ret = v;
	*ret_n = n;
	return 0;
}

/* Where value lies on the scale, in [0, 1]. */
static double scaled(const struct fg_heatmap *h, enum fg_heatmap_scale scale, const double *rank,
		     size_t n_rank, double value)
{
	size_t lo = 0, hi = n_rank;

	if (scale == FG_HEATMAP_LINEAR || n_rank < 2)
		return h->max > 0 ? value / h->max : 0;
	/* The first of equal values: equal cells get one colour. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rank[mid] < value)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (double)lo / (double)(n_rank - 1);
}

#define SVG_LEFT 64
#define SVG_TOP 56
#define SVG_BOTTOM 44
#define SVG_RIGHT 16

int fg_heatmap__svg(const struct fg_heatmap *h, const struct fg_heatmap_opts *opts, fg_write_fn fn,
		    void *ctx)
{
	const char *title = opts && opts->title ? opts->title : "Subsecond offset heat map";
	enum fg_heatmap_scale scale = opts ? opts->scale : FG_HEATMAP_LINEAR;
	double cw = MIN(20.0, MAX(1.0, 1100.0 / MAX(h->columns, 1u)));
	double ch = MIN(16.0, MAX(3.0, 400.0 / h->rows));
	double gw = cw * h->columns, gh = ch * h->rows;
	double width = SVG_LEFT + MAX(gw, 300.0) + SVG_RIGHT, height = SVG_TOP + gh + SVG_BOTTOM;
	static const uint32_t label_steps[] = {
		1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600
	};
	uint32_t label_every = 1;
	_cleanup_free_ double *rank = NULL;
	size_t n_rank = 0;
	struct fg_outbuf o = {};
	int r;

	if (scale == FG_HEATMAP_RANK) {
		r = ranked(h, &rank, &n_rank);
		if (r < 0)
			return r;
	}
	/* Second labels at least 40 px apart, on round numbers. */
	for (size_t i = 0; i + 1 < ELEMENTSOF(label_steps) && label_steps[i] * cw < 40; i++)
		label_every = label_steps[i + 1];
	fg_outbuf_printf(&o,
			 "<?xml version=\"1.0\" standalone=\"no\"?>\n"
			 "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
			 "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"Verdana\" "
			 "font-size=\"12\">\n",
			 width, height, width, height);
	fg_outbuf_puts(&o, "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
	fg_outbuf_printf(&o, "<text x=\"%.1f\" y=\"24\" text-anchor=\"middle\" font-size=\"17\">",
			 width / 2);
	fg_outbuf_put_markup(&o, title, strlen(title), SIZE_MAX);
	fg_outbuf_puts(&o, "</text>\n");
	fg_outbuf_printf(&o, "<text x=\"%.1f\" y=\"42\" text-anchor=\"middle\" fill=\"#6e6e6e\">",
			 width / 2);
	if (opts && opts->subtitle) {
		fg_outbuf_put_markup(&o, opts->subtitle, strlen(opts->subtitle), SIZE_MAX);
		fg_outbuf_puts(&o, " · ");
	}
	fg_outbuf_printf(&o,
			 "%" PRIu32 " s from %s second %" PRId64 ", %" PRIu32
			 " ms buckets, %s colour; ",
			 h->columns, h->clock == FG_TIMED_CLOCK_UNIX ? "Unix" : "perf clock",
			 h->start / 1000, h->bucket_ms,
			 scale == FG_HEATMAP_RANK ? "rank" : "linear");
	put_count(&o, h->total);
	fg_outbuf_printf(&o, " %s</text>\n", fg_timed_unit_name(h->unit));
	fg_outbuf_printf(
		&o, "<rect x=\"%d\" y=\"%d\" width=\"%.2f\" height=\"%.2f\" fill=\"#f4f4f4\"/>\n",
		SVG_LEFT, SVG_TOP, gw, gh);
	for (uint32_t c = 0; c < h->columns; c++) {
		for (uint32_t row = 0; row < h->rows; row++) {
			double v = fg_heatmap__cell(h, c, row);

			if (v <= 0)
				continue;
			fg_outbuf_printf(
				&o,
				"<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
				"fill=\"#%06" PRIx32 "\"><title>%" PRIu32 ".%03" PRIu32
				" s (+%" PRIu32 " ms): ",
				SVG_LEFT + c * cw, SVG_TOP + row * ch, cw, ch,
				fg_heatmap_color(scaled(h, scale, rank, n_rank, v)), c,
				row * h->bucket_ms, h->bucket_ms);
			put_count(&o, v);
			fg_outbuf_printf(&o, " %s</title></rect>\n", fg_timed_unit_name(h->unit));
			r = fg_outbuf_drain(&o, fn, ctx, 65536);
			if (r < 0)
				goto out;
		}
	}
	for (uint32_t c = 0; c < h->columns; c += label_every)
		fg_outbuf_printf(&o,
				 "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%" PRIu32
				 "</text>\n",
				 SVG_LEFT + (c + 0.5) * cw, SVG_TOP + gh + 16, c);
	fg_outbuf_printf(&o,
			 "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#6e6e6e\">"
			 "seconds</text>\n",
			 SVG_LEFT + gw / 2, SVG_TOP + gh + 34);
	for (uint32_t ms = 0; ms < 1000; ms += 200)
		fg_outbuf_printf(&o,
				 "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" "
				 "dominant-baseline=\"middle\">%" PRIu32 " ms</text>\n",
				 SVG_LEFT - 6, SVG_TOP + (double)ms / h->bucket_ms * ch, ms);
	fg_outbuf_puts(&o, "</svg>\n");
	r = fg_outbuf_drain(&o, fn, ctx, 1);
out:
	fg_outbuf_done(&o);
	return r;
}
