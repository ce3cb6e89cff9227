/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The heat map: samples in the cells of their second and offset, µs spread
 * over the cells they cross, the period and its limits, and the JSON, SVG
 * and HTML made from the cells.
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <string.h>

#include "base/json.h"
#include "profile/timed.h"
#include "render-test.h"
#include "render/heatmap-html.h"
#include "render/heatmap.h"

static void add(struct fg_timed *t, int64_t time, const char *stack, uint64_t weight)
{
	const uint32_t *frames;
	uint32_t copy[16];
	size_t n;

	ASSERT_OK(fg_folded__intern_stack(fg_timed__model(t), stack, strlen(stack), &frames, &n));
	memcpy(copy, frames, n * sizeof(*frames));
	ASSERT_OK(fg_timed__add(t, time, copy, n, weight));
}

static struct fg_timed *profile(enum fg_timed_unit unit)
{
	struct fg_timed *t = NULL;

	ASSERT_OK(fg_timed__new(unit, FG_TIMED_CLOCK_UNIX, &t));
	return t;
}

TEST(a_sample_is_in_the_cell_of_its_second_and_offset)
{
	_cleanup_(fg_timed__freep) struct fg_timed *t = profile(FG_TIMED_SAMPLES);
	_cleanup_(fg_heatmap__freep) struct fg_heatmap *h = NULL;
	struct fg_heatmap_opts o = { .bucket_ms = 20 };

	add(t, 1700000000250, "a;x", 1); /* second 0, offset 250: bucket 12 */
	add(t, 1700000000259, "a;x", 2);
	add(t, 1700000002999, "a;y", 1); /* second 2, offset 999: bucket 49 */
	ASSERT_OK(fg_timed__sort(t));
	ASSERT_OK(fg_heatmap__new(t, &o, &h));
	/* Columns start on the whole second of the first sample. */
	ASSERT_EQ(h->start, 1700000000000);
	ASSERT_EQ(h->columns, 3);
	ASSERT_EQ(h->rows, 50);
	ASSERT_TRUE(fg_heatmap__cell(h, 0, 12) == 3);
	ASSERT_TRUE(fg_heatmap__cell(h, 2, 49) == 1);
	ASSERT_TRUE(h->total == 4 && h->max == 3);
	h = fg_heatmap__free(h);

	/* A bucket that does not divide a second leaves a shorter last row. */
	o.bucket_ms = 300;
	ASSERT_OK(fg_heatmap__new(t, &o, &h));
	ASSERT_EQ(h->rows, 4);
	ASSERT_TRUE(fg_heatmap__cell(h, 0, 0) == 3);
	ASSERT_TRUE(fg_heatmap__cell(h, 2, 3) == 1);
	h = fg_heatmap__free(h);

	/* A period: what lies outside is not drawn; the columns cover it. */
	o = (struct fg_heatmap_opts){ .bucket_ms = 20,
				      .since = 1699999999500,
				      .until = 1700000002000 };
	ASSERT_OK(fg_heatmap__new(t, &o, &h));
	ASSERT_EQ(h->start, 1699999999000);
	ASSERT_EQ(h->columns, 3);
	ASSERT_TRUE(fg_heatmap__cell(h, 1, 12) == 3 && h->total == 3);
	h = fg_heatmap__free(h);

	o.bucket_ms = 1001;
	ASSERT_ERR(fg_heatmap__new(t, &o, &h), -EINVAL);
	o = (struct fg_heatmap_opts){ .since = 0, .until = 1000LL * (FG_HEATMAP_MAX_COLUMNS + 1) };
	ASSERT_ERR(fg_heatmap__new(t, &o, &h), -E2BIG);
}

TEST(blocked_time_is_spread_over_the_cells_it_crosses)
{
	_cleanup_(fg_timed__freep) struct fg_timed *t = profile(FG_TIMED_US);
	_cleanup_(fg_heatmap__freep) struct fg_heatmap *h = NULL;
	struct fg_heatmap_opts o = { .bucket_ms = 20, .since = 10000, .until = 12000 };

	/* 50 ms ending with ms 10,049: [10,000, 10,050) ms, 20 + 20 + 10 ms. */
	add(t, 10049, "db;fsync", 50000);
	/* 1.5 s ending with ms 11,999, from 10,500: across the second's edge. */
	add(t, 11999, "db;sleep", 1500000);
	ASSERT_OK(fg_timed__sort(t));
	ASSERT_OK(fg_heatmap__new(t, &o, &h));
	ASSERT_TRUE(fabs(fg_heatmap__cell(h, 0, 0) - 20000) < 1e-6);
	ASSERT_TRUE(fabs(fg_heatmap__cell(h, 0, 1) - 20000) < 1e-6);
	ASSERT_TRUE(fabs(fg_heatmap__cell(h, 0, 2) - 10000) < 1e-6);
	ASSERT_TRUE(fabs(fg_heatmap__cell(h, 0, 25) - 20000) < 1e-6);
	ASSERT_TRUE(fabs(fg_heatmap__cell(h, 0, 24)) < 1e-6);
	ASSERT_TRUE(fabs(fg_heatmap__cell(h, 1, 49) - 20000) < 1e-6);
	ASSERT_TRUE(fabs(h->total - 1550000) < 1e-3);
	h = fg_heatmap__free(h);

	/* Cut to the period. */
	o.since = 11000;
	ASSERT_OK(fg_heatmap__new(t, &o, &h));
	ASSERT_TRUE(fabs(h->total - 1000000) < 1e-3);
}

TEST(a_long_block_fills_whole_cells_and_short_last_rows)
{
	_cleanup_(fg_timed__freep) struct fg_timed *t = profile(FG_TIMED_US);
	_cleanup_(fg_heatmap__freep) struct fg_heatmap *h = NULL;
	/* Rows of 300, 300, 300 and 100 ms. */
	struct fg_heatmap_opts o = { .bucket_ms = 300, .since = 10000, .until = 13000 };
	static const double want[3][4] = { { 150000, 300000, 300000, 100000 },
					   { 300000, 300000, 300000, 100000 },
					   { 150000, 0, 0, 0 } };

	/* 2 s ending with ms 12,149: [10,150, 12,150) ms. */
	add(t, 12149, "db;sleep", 2000000);
	ASSERT_OK(fg_timed__sort(t));
	ASSERT_OK(fg_heatmap__new(t, &o, &h));
	for (uint32_t col = 0; col < 3; col++)
		for (uint32_t row = 0; row < 4; row++)
			ASSERT_TRUE(fg_heatmap__cell(h, col, row) == want[col][row]);
	ASSERT_TRUE(h->total == 2000000);
	h = fg_heatmap__free(h);
	fg_timed__free(t);

	/* 4,000 s in buckets of 1 ms: 4 million cells, each drawn once. */
	t = profile(FG_TIMED_US);
	add(t, 4000000, "db;sleep", 4000000000); /* from 1 ms to 4,000,001 ms */
	ASSERT_OK(fg_timed__sort(t));
	o = (struct fg_heatmap_opts){ .bucket_ms = 1, .since = 0, .until = 4000001 };
	ASSERT_OK(fg_heatmap__new(t, &o, &h));
	ASSERT_TRUE(fg_heatmap__cell(h, 0, 0) == 0);
	ASSERT_TRUE(fg_heatmap__cell(h, 0, 1) == 1000);
	ASSERT_TRUE(fg_heatmap__cell(h, 2000, 500) == 1000);
	ASSERT_TRUE(fg_heatmap__cell(h, 4000, 0) == 1000);
	ASSERT_TRUE(h->total == 4000000000.0);
	h = fg_heatmap__free(h);

	/* A period past the times a profile holds. */
	o = (struct fg_heatmap_opts){ .since = -FG_TIMED_TIME_MAX - 1, .until = 0 };
	ASSERT_ERR(fg_heatmap__new(t, &o, &h), -ERANGE);
}

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;

	ASSERT_TRUE(json_object_object_get_ex(o, key, &v));
	return v;
}

TEST(the_json_has_a_column_per_second_and_a_count_per_bucket)
{
	_cleanup_(fg_timed__freep) struct fg_timed *t = profile(FG_TIMED_SAMPLES);
	_cleanup_(fg_heatmap__freep) struct fg_heatmap *h = NULL;
	_cleanup_(membuf_done) struct membuf m = {};
	_cleanup_(json_object_putp) json_object *j = NULL;
	struct fg_heatmap_opts o = { .bucket_ms = 250 };
	json_object *cols;

	add(t, 5000, "a;x", 1);
	add(t, 6750, "a;x", 4);
	ASSERT_OK(fg_timed__sort(t));
	ASSERT_OK(fg_heatmap__new(t, &o, &h));
	ASSERT_OK(fg_heatmap__json(h, membuf_write, &m));
	j = json_tokener_parse(m.data);
	ASSERT_TRUE(j);
	ASSERT_EQ(json_object_get_int64(get(j, "start")), 5);
	ASSERT_EQ(json_object_get_int(get(j, "bucket_ms")), 250);
	ASSERT_EQ(json_object_get_int(get(j, "rows")), 4);
	ASSERT_STREQ(json_object_get_string(get(j, "clock")), "unix");
	ASSERT_STREQ(json_object_get_string(get(j, "unit")), "samples");
	ASSERT_EQ(json_object_get_int(get(j, "total")), 5);
	cols = get(j, "columns");
	ASSERT_EQ(json_object_array_length(cols), 2);
	ASSERT_EQ(json_object_get_int(
			  json_object_array_get_idx(json_object_array_get_idx(cols, 0), 0)),
		  1);
	ASSERT_EQ(json_object_get_int(
			  json_object_array_get_idx(json_object_array_get_idx(cols, 1), 3)),
		  4);
	ASSERT_EQ(json_object_get_int(
			  json_object_array_get_idx(json_object_array_get_idx(cols, 1), 2)),
		  0);
}

TEST(the_svg_draws_the_cells_that_hold_samples)
{
	_cleanup_(fg_timed__freep) struct fg_timed *t = profile(FG_TIMED_SAMPLES);
	_cleanup_(fg_heatmap__freep) struct fg_heatmap *h = NULL;
	_cleanup_(membuf_done) struct membuf m = {};
	struct fg_heatmap_opts o = { .title = "Band <&>", .scale = FG_HEATMAP_RANK };

	add(t, 1000, "a;x", 1);
	add(t, 1500, "a;x", 9);
	add(t, 3020, "a;x", 3);
	ASSERT_OK(fg_timed__sort(t));
	ASSERT_OK(fg_heatmap__new(t, &o, &h));
	ASSERT_OK(fg_heatmap__svg(h, &o, membuf_write, &m));
	ASSERT_TRUE(strncmp(m.data, "<?xml", 5) == 0);
	ASSERT_TRUE(strstr(m.data, "Band &lt;&amp;&gt;"));
	/* The three cells with samples, plus the page and the grid. */
	ASSERT_EQ(count_str(m.data, "<rect"), 5);
	ASSERT_TRUE(strstr(m.data, "<title>0.500 s (+20 ms): 9 samples</title>"));
	ASSERT_TRUE(strstr(m.data, "<title>2.020 s (+20 ms): 3 samples</title>"));
	/* Rank colours: the least is the lightest, the most the darkest. */
	ASSERT_TRUE(strstr(m.data, "fill=\"#ffffb2\"><title>0.000 s"));
	ASSERT_TRUE(strstr(m.data, "fill=\"#bd0026\"><title>0.500 s"));
	ASSERT_TRUE(strstr(m.data, "</svg>\n"));
	ASSERT_EQ(fg_heatmap_color(0), 0xffffb2);
	ASSERT_EQ(fg_heatmap_color(1), 0xbd0026);
	ASSERT_EQ(fg_heatmap_color(0.5), 0xfd8d3c);
}

TEST(the_page_holds_every_sample_and_fetches_nothing)
{
	_cleanup_(fg_timed__freep) struct fg_timed *t = profile(FG_TIMED_SAMPLES);
	_cleanup_(membuf_done) struct membuf m = {};
	_cleanup_(json_object_putp) json_object *j = NULL;
	struct fg_heatmap_html_opts o = { .heatmap = { .title = "</script><!--" } };
	const char *data, *end;

	fg_flame_opts_init(&o.flame);
	add(t, 2000, "app;main;burst", 1);
	add(t, 2003, "app;main;idle_[k]", 1);
	add(t, 2500, "app;main;burst", 2);
	ASSERT_OK(fg_timed__sort(t));
	ASSERT_OK(fg_heatmap_html(t, &o, membuf_write, &m));
	ASSERT_TRUE(strstr(m.data, "Content-Security-Policy"));
	ASSERT_TRUE(!strstr(m.data, "src="));
	ASSERT_TRUE(!strstr(m.data, "http://") && !strstr(m.data, "https://"));
	ASSERT_EQ(count_str(m.data, "</script"), 2);
	ASSERT_TRUE(strstr(m.data, "id=\"heatmap\"") && strstr(m.data, "id=\"flame\""));
	data = strstr(m.data, "id=\"fg-data\">\n");
	ASSERT_TRUE(data);
	data += strlen("id=\"fg-data\">\n");
	end = strstr(data, "\n</script>");
	ASSERT_TRUE(end);
	j = json_tokener_parse(strndupa(data, (size_t)(end - data)));
	ASSERT_TRUE(j);
	ASSERT_STREQ(json_object_get_string(get(get(j, "meta"), "title")), "</script><!--");
	ASSERT_EQ(json_object_get_int64(get(get(j, "meta"), "base")), 2000);
	ASSERT_EQ(json_object_array_length(get(j, "t")), 3);
	ASSERT_EQ(json_object_get_int(json_object_array_get_idx(get(j, "t"), 2)), 497);
	ASSERT_EQ(json_object_array_length(get(j, "stacks")), 2);
	ASSERT_EQ(json_object_get_int(json_object_array_get_idx(get(j, "w"), 2)), 2);
	ASSERT_EQ(json_object_array_length(get(j, "names")),
		  json_object_array_length(get(j, "color")));
}
