/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "base/outbuf.h"
#include "render/flame-view.h"
#include "render/heatmap-html-js.h"
#include "render/heatmap-html.h"
#include "render/palette.h"

#define CHUNK 65536

static const char style[] =
	"body { margin: 8px; background: #fff; color: #000; font-size: 12px; }\n"
	"h1 { font-size: 17px; font-weight: normal; text-align: center; margin: 4px 0; }\n"
	"#subtitle, .info { text-align: center; color: rgb(110,110,110); white-space: pre; margin: 2px 0; }\n"
	".bar { display: flex; flex-wrap: wrap; gap: 12px; align-items: center; min-height: 24px; }\n"
	".bar button, .bar select { font: inherit; cursor: pointer; }\n"
	"#mapbox { overflow-x: auto; max-width: 100%; border: 1px solid #ddd; }\n"
	"#heatmap { display: block; cursor: crosshair; }\n"
	"#cell, #range { white-space: pre; min-height: 16px; }\n"
	"#range { font-weight: bold; }\n"
	"#hint { color: rgb(110,110,110); }\n";

static void put_str(struct fg_outbuf *o, const char *s)
{
	fg_outbuf_put_json_str(o, s, strlen(s));
}

static void put_markup(struct fg_outbuf *o, const char *s)
{
	fg_outbuf_put_markup(o, s, strlen(s), SIZE_MAX);
}

static void emit_head(struct fg_outbuf *o, const struct fg_heatmap_html_opts *opts,
		      const struct fg_flame_opts *f, const struct fg_heatmap *h, const char *title,
		      const char *bg_top, const char *bg_bottom, int64_t base)
{
	fg_outbuf_puts(o,
		       "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		       /* Self-contained: nothing may be fetched, whatever a name holds. */
		       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';"
		       " script-src 'unsafe-inline'; style-src 'unsafe-inline'\">\n"
		       "<meta name=\"generator\" content=\"fgd\">\n<title>");
	put_markup(o, title);
	fg_outbuf_puts(o, "</title>\n<style>\n");
	fg_outbuf_put(o, style, sizeof(style) - 1);
	fg_flame_view_put_style(o);
	fg_outbuf_puts(o, "</style>\n</head>\n<body>\n<h1 id=\"title\">");
	put_markup(o, title);
	fg_outbuf_puts(o, "</h1>\n");
	if (opts->heatmap.subtitle) {
		fg_outbuf_puts(o, "<p id=\"subtitle\">");
		put_markup(o, opts->heatmap.subtitle);
		fg_outbuf_puts(o, "</p>\n");
	}
	for (const char *const *l = f->info; l && *l; l++) {
		fg_outbuf_puts(o, "<p class=\"info\">");
		put_markup(o, *l);
		fg_outbuf_puts(o, "</p>\n");
	}
	fg_outbuf_puts(
		o, "<div class=\"bar\"><label>Colour <select id=\"scale\"><option value=\"linear\">"
		   "linear</option><option value=\"rank\">rank</option></select></label>"
		   "<label>Isolate <select id=\"isolate\"><option value=\"\">all processes</option>"
		   "</select></label><label><input id=\"diff\" type=\"checkbox\"> the range against"
		   " the rest</label><button id=\"clear\" type=\"button\" hidden>Clear selection"
		   "</button><span id=\"hint\">Click the first cell of a range, then its last (or"
		   " drag)</span></div>\n"
		   "<div id=\"mapbox\"><canvas id=\"heatmap\"></canvas></div>\n"
		   "<div id=\"cell\"> </div>\n<div id=\"range\"> </div>\n");
	fg_outbuf_printf(o, "<div id=\"graph\" style=\"width: %upx\">\n", f->width);
	fg_flame_view_put_controls(o);
	fg_flame_view_put_canvas(o);
	fg_outbuf_puts(o, "</div>\n<script type=\"application/json\" id=\"fg-data\">\n"
			  "{\"meta\":{\"title\":");
	put_str(o, title);
	fg_outbuf_puts(o, ",\"subtitle\":");
	put_str(o, opts->heatmap.subtitle ? opts->heatmap.subtitle : "");
	fg_outbuf_printf(o,
			 ",\"clock\":\"%s\",\"unit\":\"%s\",\"bucketMs\":%" PRIu32
			 ",\"start\":%" PRId64 ",\"since\":%" PRId64 ",\"until\":%" PRId64
			 ",\"base\":%" PRId64 ",\"columns\":%" PRIu32 ",\"rows\":%" PRIu32
			 ",\"scale\":\"%s\"",
			 fg_timed_clock_name(h->clock), fg_timed_unit_name(h->unit), h->bucket_ms,
			 h->start, h->since, h->until, base, h->columns, h->rows,
			 opts->heatmap.scale == FG_HEATMAP_RANK ? "rank" : "linear");
	fg_outbuf_printf(o,
			 ",\"flame\":{\"width\":%u,\"frameHeight\":%u,\"fontSize\":%g,"
			 "\"fontWidth\":%g,\"inverted\":%s,\"fontType\":",
			 f->width, f->frame_height, f->font_size, f->font_width,
			 f->inverted ? "true" : "false");
	put_str(o, f->font_type);
	fg_outbuf_puts(o, ",\"bgTop\":");
	put_str(o, bg_top);
	fg_outbuf_puts(o, ",\"bgBottom\":");
	put_str(o, bg_bottom);
	fg_outbuf_puts(o, ",\"countName\":");
	put_str(o, f->count_name);
	fg_outbuf_puts(o, ",\"nameType\":");
	put_str(o, f->name_type);
	fg_outbuf_puts(o, "}}");
}

int fg_heatmap_html(const struct fg_timed *t, const struct fg_heatmap_html_opts *opts,
		    fg_write_fn fn, void *ctx)
{
	const struct fg_folded *m = fg_timed__model_const(t);
	const struct fg_timed_sample *v = fg_timed__samples(t);
	size_t n = fg_timed__n_samples(t), n_names = fg_folded__n_names(m);
	size_t n_stacks = fg_folded__n_stacks(m);
	struct fg_heatmap_opts hopts = opts->heatmap;
	struct fg_heatmap *h = NULL;
	struct fg_flame_opts f;
	struct fg_outbuf o = {};
	char bg_top[8], bg_bottom[8];
	const char *title;
	bool weighted = false;
	int64_t base = n ? v[0].time : 0;
	int r;

	r = fg_flame_opts_normalize(&opts->flame, false, &f);
	if (r < 0)
		return r;
	if (f.bgcolors)
		(void)fg_bgcolors_parse(f.bgcolors, bg_top, bg_bottom);
	else
		fg_bgcolors_default(f.palette, bg_top, bg_bottom);
	/* The page draws its own cells; this checks the period and gives their layout. */
	r = fg_heatmap__new(t, &hopts, &h);
	if (r < 0)
		return r;
	title = opts->heatmap.title ? opts->heatmap.title : "Subsecond offset heat map";
	emit_head(&o, opts, &f, h, title, bg_top, bg_bottom, base);
	h = fg_heatmap__free(h);

	fg_outbuf_puts(&o, ",\n\"names\":[");
	for (size_t i = 0; i < n_names && r >= 0; i++) {
		if (i)
			fg_outbuf_puts(&o, ",");
		fg_outbuf_put_json_str(&o, fg_folded__name(m, (uint32_t)i),
				       fg_folded__name_len(m, (uint32_t)i));
		r = fg_outbuf_drain(&o, fn, ctx, CHUNK);
	}
	fg_outbuf_puts(&o, "],\n\"color\":[");
	for (size_t i = 0; i < n_names && r >= 0; i++) {
		const char *name = fg_folded__name(m, (uint32_t)i);
		size_t len = fg_folded__name_len(m, (uint32_t)i);
		struct fg_rgb c;
		double cv[3];

		fg_color_values_hash(name, len, cv);
		fg_palette_color(f.palette, name, len, cv, &c);
		fg_outbuf_printf(&o, "%s%u", i ? "," : "",
				 (unsigned)c.r << 16 | (unsigned)c.g << 8 | c.b);
		r = fg_outbuf_drain(&o, fn, ctx, CHUNK);
	}
	fg_outbuf_puts(&o, "],\n\"stacks\":[");
	for (size_t i = 0; i < n_stacks && r >= 0; i++) {
		struct fg_stack st;

		fg_folded__stack_by_id(m, (uint32_t)i, &st);
		fg_outbuf_puts(&o, i ? ",[" : "[");
		for (size_t k = 0; k < st.n_frames; k++)
			fg_outbuf_printf(&o, "%s%" PRIu32, k ? "," : "", st.frames[k]);
		fg_outbuf_puts(&o, "]");
		r = fg_outbuf_drain(&o, fn, ctx, CHUNK);
	}
	fg_outbuf_puts(&o, "],\n\"t\":[");
	for (size_t i = 0; i < n && r >= 0; i++) {
		fg_outbuf_printf(&o, "%s%" PRId64, i ? "," : "",
				 v[i].time - (i ? v[i - 1].time : base));
		weighted |= v[i].weight != 1;
		r = fg_outbuf_drain(&o, fn, ctx, CHUNK);
	}
	fg_outbuf_puts(&o, "],\n\"s\":[");
	for (size_t i = 0; i < n && r >= 0; i++) {
		fg_outbuf_printf(&o, "%s%" PRIu32, i ? "," : "", v[i].stack);
		r = fg_outbuf_drain(&o, fn, ctx, CHUNK);
	}
	fg_outbuf_puts(&o, "]");
	if (weighted) {
		fg_outbuf_puts(&o, ",\n\"w\":[");
		for (size_t i = 0; i < n && r >= 0; i++) {
			fg_outbuf_printf(&o, "%s%" PRIu32, i ? "," : "", v[i].weight);
			r = fg_outbuf_drain(&o, fn, ctx, CHUNK);
		}
		fg_outbuf_puts(&o, "]");
	}
	fg_outbuf_puts(&o, "}\n</script>\n<script>\n");
	/* The flame graph's object, then the page that uses it: one element. */
	fg_flame_view_put_script(&o);
	fg_outbuf_put(&o, heatmap_html_js, sizeof(heatmap_html_js) - 1);
	fg_outbuf_puts(&o, "</script>\n</body>\n</html>\n");
	if (r >= 0)
		r = fg_outbuf_drain(&o, fn, ctx, 1);
	fg_outbuf_done(&o);
	return r;
}
