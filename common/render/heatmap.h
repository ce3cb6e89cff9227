/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The subsecond-offset heat map of a timed profile (common/profile/timed.h): one
 * column per second, one row per bucket of the offset within that second
 * (bucket 0 at offset 0), each cell the samples taken then (or the µs of
 * the profile's unit that fell in it). Bursts, gaps and work on a timer
 * stand out; a range of cells is drawn as a flame graph with
 * fg_timed__range().
 *
 * Columns start on whole seconds of the profile's clock, so a cell is the
 * same offset of every second: with the Unix clock, of every wall-clock
 * second. They span the period asked for, or the profile's own, or without
 * one its first to its last sample.
 *
 * Outputs, each from the same cells:
 *   - JSON for scripts (fg_heatmap__json(), documented in fgctl(1)):
 *     {"start": unix (or perf clock) seconds of the first column,
 *      "clock", "unit", "bucket_ms", "rows", "columns": [[count per
 *      bucket, bucket 0 first], one array per second], "total", "max"};
 *   - a static SVG, for embedding (fg_heatmap__svg());
 *   - the interactive HTML page (common/render/heatmap-html.h).
 *
 * Pure.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/emit.h"
#include "base/macro.h"
#include "profile/timed.h"

/* The most columns (seconds) a heat map has: a day and more. */
#define FG_HEATMAP_MAX_COLUMNS 100000
/* The most cells (columns times rows): 64 MiB of them; 100,000 columns of 20 ms buckets fit. */
#define FG_HEATMAP_MAX_CELLS (8U << 20)

enum fg_heatmap_scale {
	FG_HEATMAP_LINEAR, /* colour by count over the largest */
	FG_HEATMAP_RANK,   /* colour by rank among the non-empty cells: a few hot cells do not
			      wash out the rest */
};

struct fg_heatmap_opts {
	uint32_t bucket_ms; /* 1 to 1000; 0: 20 */
	/*
	 * The period drawn, ms on the profile's clock, [since, until); both 0:
	 * the profile's own (fg_timed__period()), or else its samples'.
	 */
	int64_t since, until;
	/* The SVG's: */
	enum fg_heatmap_scale scale;
	const char *title;    /* NULL: "Subsecond offset heat map" */
	const char *subtitle; /* NULL: none */
};

struct fg_heatmap {
	enum fg_timed_unit unit;
	enum fg_timed_clock clock;
	int64_t start;        /* ms of the first column's start: a whole second */
	int64_t since, until; /* the period drawn */
	uint32_t bucket_ms;
	uint32_t rows; /* buckets a second: 1000 / bucket_ms, rounded up */
	uint32_t columns;
	double *cells; /* owned: columns * rows, a column's rows together, bucket 0 first */
	double total, max;
};

/*
 * The heat map of t (sorted) with opts (NULL: the defaults). Caller frees
 * *ret with fg_heatmap__free(). 0, -EINVAL (a bucket out of range, a
 * period that ends before it starts), -ERANGE (a period past
 * FG_TIMED_TIME_MAX), -E2BIG (more than FG_HEATMAP_MAX_COLUMNS seconds, or
 * FG_HEATMAP_MAX_CELLS cells), -ENOMEM.
 */
int fg_heatmap__new(const struct fg_timed *t, const struct fg_heatmap_opts *opts,
		    struct fg_heatmap **ret);
struct fg_heatmap *fg_heatmap__free(struct fg_heatmap *h);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_heatmap *, fg_heatmap__free);

static inline double fg_heatmap__cell(const struct fg_heatmap *h, uint32_t column, uint32_t row)
{
	return h->cells[(size_t)column * h->rows + row];
}

/* The JSON form (above), whole. 0 or the sink's error. */
int fg_heatmap__json(const struct fg_heatmap *h, fg_write_fn fn, void *ctx);

/*
 * The SVG: a cell a <rect> with its time and count in a <title>, the
 * seconds along the bottom, the offsets down the side. 0 or the sink's
 * error.
 */
int fg_heatmap__svg(const struct fg_heatmap *h, const struct fg_heatmap_opts *opts, fg_write_fn fn,
		    void *ctx);

/*
 * A cell's colour, 0xrrggbb, for v in [0, 1] (its share of the largest, or
 * its rank): a light yellow for the least, through orange, to dark red.
 * Empty cells are not coloured (the background shows).
 */
uint32_t fg_heatmap_color(double v);
