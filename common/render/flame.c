/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Flame-graph SVG renderer.
 *
 * fg_flame__new() merges the stacks into a call tree (flametree.c), which
 * drops frames narrower than min_width as it goes, and keeps the rest as a
 * flat array in pre-order. fg_flame__emit() then writes the SVG one "item"
 * at a time from that array, so the daemon can stream a graph of any size
 * through a small buffer.
 *
 * Markup that tests and the embedded script rely on:
 *   <svg>                      root; width/height in px, font on the root
 *   <g id="frames">            every frame, in pre-order, and nothing else
 *   <g class="func_g">         one frame: <title>, <rect>, <text>, in that order
 *   <title>                    "name (1,234 samples, 56.78%)", the count name
 *                              being opts.count_name; a differential graph
 *                              adds "; before: 1,000, 45.00%; change +1.23%"
 *                              inside the parentheses. The name is all before
 *                              the last " (", annotations ("_[k]") stripped.
 *   <text id="title">          opts.title; id="subtitle" for opts.subtitle,
 *                              class="info" for each opts.info line
 *   <text id="details">        hover line, bottom left; carries data-name-type
 *                              and data-count-name for the script
 *   <text id="unzoom">         "Reset Zoom", top left; class "hide" until zoomed
 *   <text id="search">         "Search" / "Reset Search", top right
 *   <text id="ignorecase">     "ic", left of it: toggles case-insensitive search
 *   <text id="matched">        "Matched: 12.3%", bottom right, after a search
 *   <text id="nosamples">      only in a graph of an empty model
 * Zoomed-out frames get class "hide", the zoomed frame's ancestors class
 * "parent"; a search paints matching rects rgb(230,0,230). The zoomed
 * frame (its rect's x and y) and the search are kept in the URL as
 * ?x=..&y=..&s=..&i=1, and restored from it on load.
 *
 * The script finds a frame's depth from its rect's y and rebuilds the tree
 * from the pre-order, so no per-frame structure is written beyond what
 * flamegraph.pl writes. No frame data goes into the script: strings reach
 * it only through escaped attributes and text nodes. Neither the script nor
 * the style needs a CDATA section (blog engines strip them): they hold no
 * '<' and no '&'.
 */

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/macro.h"
#include "base/outbuf.h"
#include "base/utf8.h"
#include "profile/framename.h"
#include "render/flame-svg-js.h"
#include "render/flame.h"
#include "render/flametree.h"

#define XPAD 10.0
#define FONT_WIDTH 0.59 /* average glyph width per px of font size, as flamegraph.pl */

/* Limits on options, so a request cannot ask for absurd allocations or coordinates. */
#define MAX_WIDTH 1000000u
#define MAX_FRAME_HEIGHT 1000u
#define MAX_FONT_SIZE 1000.0

/* The output is this sequence of items; frames fill the middle. */
enum {
	ITEM_HEAD,
	ITEM_SCRIPT,
	ITEM_LABELS,
	ITEM_FRAMES, /* first frame, or the "No samples" note */
};

struct fg_flame {
	const struct fg_folded *model; /* borrowed until fg_flame__free() */
	struct fg_flame_opts opts;     /* pointers borrowed until fg_flame__free() */
	size_t n_info;
	bool diff;

	struct fg_flametree tree; /* owned */
	struct fg_flame_colorer colorer;
	double total; /* the 100% figure: the tree's, or opts.total if larger */
	char bg_top[8], bg_bottom[8];

	/* Geometry, in px. */
	double scale; /* per sample */
	double height, ypad1, ypad2, frame_pad;
	double subtitle_y, info_y0, info_step;

	size_t cursor; /* next item */
	size_t n_items;
	struct fg_outbuf out; /* the chunk being assembled */
};

void fg_flame_opts_init(struct fg_flame_opts *o)
{
	*o = (struct fg_flame_opts){
		.width = 1200,
		.frame_height = 16,
		.font_size = 12,
		.font_width = FONT_WIDTH,
		.font_type = "Verdana",
		.min_width = 0.1,
		.count_name = "samples",
		.name_type = "Function:",
		.palette = FG_PALETTE_HOT,
	};
}

struct fg_flame *fg_flame__free(struct fg_flame *fl)
{
	if (!fl)
		return NULL;
	fg_flametree_done(&fl->tree);
	fg_outbuf_done(&fl->out);
	free(fl);
	return NULL;
}

int fg_flame_opts_normalize(const struct fg_flame_opts *in, bool diff, struct fg_flame_opts *ret)
{
	struct fg_flame_opts o, d;
	char top[8], bottom[8];

	fg_flame_opts_init(&d);
	o = in ? *in : d;
	if (!o.title)
		o.title = o.flamechart ? "Flame Chart" :
			  o.inverted   ? "Icicle Graph" :
			  diff         ? "Differential Flame Graph" :
					 "Flame Graph";
	if (!o.font_type)
		o.font_type = d.font_type;
	if (!o.count_name)
		o.count_name = d.count_name;
	if (!o.name_type)
		o.name_type = d.name_type;
	if (o.font_width == 0)
		o.font_width = d.font_width;

	if (o.width <= 2 * XPAD || o.width > MAX_WIDTH)
		return -EINVAL;
	if (o.frame_height < 1 || o.frame_height > MAX_FRAME_HEIGHT)
		return -EINVAL;
	if (!isfinite(o.font_size) || o.font_size <= 0 || o.font_size > MAX_FONT_SIZE)
		return -EINVAL;
	if (!isfinite(o.font_width) || o.font_width <= 0 || o.font_width > 10)
		return -EINVAL;
	if (!isfinite(o.min_width) || o.min_width < 0 || (o.min_width_pct && o.min_width > 100))
		return -EINVAL;
	if (!isfinite(o.total) || o.total < 0)
		return -EINVAL;
	if ((unsigned)o.palette >= _FG_PALETTE_MAX)
		return -EINVAL;
	if (o.bgcolors && fg_bgcolors_parse(o.bgcolors, top, bottom) < 0)
		return -EINVAL;
	*ret = o;
	return 0;
}

/*
 * Colours.
 */

const char *fg_flame_node_name(const struct fg_folded *m, const struct fg_flame_node *n,
			       size_t *ret_len)
{
	const char *name;

	if (n->name == FG_FLAME_ROOT) {
		*ret_len = 3;
		return "all";
	}
	name = fg_folded__name(m, n->name);
	*ret_len = fg_name_display_len(name, strlen(name));
	return name;
}

double fg_flame_self_delta(const struct fg_flametree *t, const struct fg_flame_node *n)
{
	double after = t->other_is_after ? n->self_other : n->self;
	double before = t->other_is_after ? n->self : n->self_other;

	return t->total > 0 ? (after - before) / t->total : 0;
}

void fg_flame_colorer_init(struct fg_flame_colorer *c, const struct fg_flame_opts *opts,
			   const struct fg_folded *model, const struct fg_flametree *t)
{
	*c = (struct fg_flame_colorer){
		.opts = opts,
		.model = model,
		.diff = fg_folded__is_diff(model),
		.rng = opts->seed ^ 0x9e3779b97f4a7c15ULL,
	};
	if (c->diff)
		for (size_t i = 0; i < t->n; i++)
			c->max_delta =
				MAX(c->max_delta, fabs(fg_flame_self_delta(t, &t->nodes[i])));
}

static double next_random(uint64_t *state)
{
	*state += 0x9e3779b97f4a7c15ULL;
	return (double)(fg_hash_mix(*state) >> 11) / (double)(1ULL << 53);
}

int fg_flame_colorer_color(struct fg_flame_colorer *c, const struct fg_flametree *t,
			   const struct fg_flame_node *n, struct fg_rgb *ret)
{
	const char *name = n->name == FG_FLAME_ROOT ? "all" : fg_folded__name(c->model, n->name);
	size_t len = strlen(name), shown = fg_name_display_len(name, len);
	double v[3];

	if (c->diff) {
		fg_diff_color(fg_flame_self_delta(t, n), c->max_delta, ret);
		return 0;
	}
	if (c->opts->palette_map && fg_palette_map__get(c->opts->palette_map, name, len, ret))
		return 0;
	if (c->opts->random) {
		for (int i = 0; i < 3; i++)
			v[i] = next_random(&c->rng);
	} else {
		/* The hash of the name as shown, so "f" and "f_[k]" vary alike within their hues. */
		fg_color_values_hash(name, shown, v);
	}
	fg_palette_color(c->opts->palette, name, len, v, ret);
	if (c->opts->palette_map)
		return fg_palette_map__set(c->opts->palette_map, name, len, ret);
	return 0;
}

/*
 * Layout.
 */

static void layout(struct fg_flame *fl)
{
	const struct fg_flame_opts *o = &fl->opts;
	double fs = o->font_size, y;

	/* As flamegraph.pl: title baseline at 2 font sizes, subtitle at 4. */
	y = fs * 2;
	if (o->subtitle) {
		y = fs * 4;
		fl->subtitle_y = y;
	}
	fl->info_step = fs * 1.25;
	fl->info_y0 = y + fl->info_step;
	y += (double)fl->n_info * fl->info_step;
	fl->ypad1 = y + fs;
	fl->ypad2 = fs * 2 + 10;
	fl->frame_pad = o->frame_height >= 4 ? 1 : 0;
	fl->height =
		ceil(fl->ypad1 + ((double)fl->tree.max_depth + 1) * o->frame_height + fl->ypad2);
}

/* The top and bottom of a frame at depth. */
static void frame_y(const struct fg_flame *fl, uint32_t depth, double *y1, double *y2)
{
	double fh = fl->opts.frame_height;

	if (fl->opts.inverted) {
		*y1 = fl->ypad1 + (double)depth * fh;
		*y2 = *y1 + fh - fl->frame_pad;
	} else {
		*y2 = fl->height - fl->ypad2 - (double)depth * fh;
		*y1 = *y2 - fh + fl->frame_pad;
	}
}

int fg_flame__new(const struct fg_folded *model, const struct fg_flame_opts *opts,
		  struct fg_flame **ret_flame)
{
	_cleanup_(fg_flame__freep) struct fg_flame *fl = NULL;
	struct fg_flametree_opts topts = {};
	struct fg_flame_opts o;
	double model_total;
	int r;

	if (!model || !ret_flame)
		return -EINVAL;
	r = fg_flame_opts_normalize(opts, fg_folded__is_diff(model), &o);
	if (r < 0)
		return r;
	if (o.flamechart != fg_folded__is_sequence(model))
		return -EINVAL;

	fl = calloc(1, sizeof(*fl));
	if (!fl)
		return -ENOMEM;
	fl->model = model;
	fl->opts = o;
	fl->diff = fg_folded__is_diff(model);
	for (const char *const *l = o.info; l && *l; l++)
		fl->n_info++;
	if (o.bgcolors)
		(void)fg_bgcolors_parse(o.bgcolors, fl->bg_top, fl->bg_bottom);
	else
		fg_bgcolors_default(o.palette, fl->bg_top, fl->bg_bottom);

	topts.use_before = fl->diff && o.negate;
	topts.sequence = o.flamechart;
	model_total = topts.use_before ? fg_folded__total_before(model) : fg_folded__total(model);
	fl->total = MAX(model_total, o.total);
	fl->scale = fl->total > 0 ? (o.width - 2 * XPAD) / fl->total : 0;
	if (o.min_width_pct)
		topts.min_value = fl->total * o.min_width / 100;
	else
		topts.min_value = fl->scale > 0 ? o.min_width / fl->scale : 0;
	r = fg_flametree_build(model, &topts, &fl->tree);
	if (r < 0)
		return r;
	fg_flame_colorer_init(&fl->colorer, &fl->opts, model, &fl->tree);
	layout(fl);
	fl->n_items = ITEM_FRAMES + MAX(fl->tree.n, (size_t)1) + 1;

	*ret_flame = TAKE_PTR(fl);
	return 0;
}

size_t fg_flame__n_elided(const struct fg_flame *fl)
{
	return fl->tree.n_dropped;
}

size_t fg_flame__bytes(const struct fg_flame *fl)
{
	return sizeof(*fl) + fg_flametree_bytes(&fl->tree) + fl->out.cap;
}

static void put_escaped(struct fg_flame *fl, const char *s)
{
	fg_outbuf_put_markup(&fl->out, s, strlen(s), SIZE_MAX);
}

/* A count as flamegraph.pl shows it: thousands separated by commas, "1,234" or "1,234.50". */
static void put_count(struct fg_outbuf *b, double count)
{
	char digits[400], out[600];
	size_t n_int = 0, len, o = 0;
	int n;

	if (count == floor(count) && count >= 0 && count < 9007199254740992.0) {
		/* The usual case, without printf. */
		uint64_t v = (uint64_t)count;
		char *p = digits + sizeof(digits);

		do
			*--p = (char)('0' + v % 10);
		while ((v /= 10) > 0);
		len = (size_t)(digits + sizeof(digits) - p);
		memmove(digits, p, len);
	} else {
		n = snprintf(digits, sizeof(digits), "%.*f", count == floor(count) ? 0 : 2, count);
		if (n < 0 || (size_t)n >= sizeof(digits)) {
			fg_outbuf_printf(b, "%g", count);
			return;
		}
		len = (size_t)n;
	}
	while (n_int < len && digits[n_int] >= '0' && digits[n_int] <= '9')
		n_int++;
	for (size_t i = 0; i < len; i++) {
		if (i > 0 && i < n_int && (n_int - i) % 3 == 0)
			out[o++] = ',';
		out[o++] = digits[i];
	}
	fg_outbuf_put(b, out, o);
}

/*
 * Output.
 */

static void emit_head(struct fg_flame *fl)
{
	const struct fg_flame_opts *o = &fl->opts;

	fg_outbuf_printf(
		&fl->out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%.0f\""
		" viewBox=\"0 0 %u %.0f\" onload=\"init(evt)\" font-family=\"",
		o->width, fl->height, o->width, fl->height);
	put_escaped(fl, o->font_type);
	fg_outbuf_printf(&fl->out, "\" font-size=\"%.2f\">\n", o->font_size);
	fg_outbuf_puts(
		&fl->out,
		"<!-- Flame graph rendered by fgd. Click a frame to zoom, Ctrl-F to search. -->\n");
	if (o->notes) {
		/* Escaped character data, so notes can hold anything, "--" and "]]>" too. */
		fg_outbuf_puts(&fl->out, "<desc id=\"notes\">NOTES: ");
		put_escaped(fl, o->notes);
		fg_outbuf_puts(&fl->out, "</desc>\n");
	}
	fg_outbuf_printf(&fl->out,
			 "<defs>\n"
			 "<linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">\n"
			 "<stop stop-color=\"%s\" offset=\"5%%\"/>\n"
			 "<stop stop-color=\"%s\" offset=\"95%%\"/>\n"
			 "</linearGradient>\n"
			 "</defs>\n",
			 fl->bg_top, fl->bg_bottom);
	fg_outbuf_puts(
		&fl->out,
		"<style type=\"text/css\">\n"
		"#search, #ignorecase, #unzoom { cursor: pointer; }\n"
		"#search, #ignorecase { opacity: 0.1; }\n"
		"#search:hover, #search.show, #ignorecase:hover, #ignorecase.show { opacity: 1; }\n"
		"#subtitle, .info { fill: rgb(110,110,110); white-space: pre; }\n"
		"#frames > g { cursor: pointer; }\n"
		"#frames > g:hover > rect { stroke: black; stroke-width: 0.5; }\n"
		".hide { display: none; }\n"
		".parent { opacity: 0.5; }\n"
		"</style>\n");
}

static void emit_script(struct fg_flame *fl)
{
	/*
	 * No CDATA section: blog engines strip them. The script holds no '<' or
	 * '&' (comparisons face the other way, conditions nest), so it is the
	 * same text to an XML parser and to an HTML one, inline in a page too.
	 * The script (flame-svg.js: zoom, reset, search, hover and the URL
	 * state) is written verbatim; the few parameters it needs are printed
	 * before it, and only as numbers, so nothing from the model or the
	 * options can reach it.
	 */
	fg_outbuf_puts(&fl->out, "<script type=\"text/ecmascript\">\n\"use strict\";\n");
	/* total is the 100 % figure (--total), fullwidth what a zoomed frame spans. */
	fg_outbuf_printf(&fl->out,
			 "var fontsize = %.2f, fontwidth = %.4f, frameheight = %u, inverted = %s,\n"
			 "    total = %.17g, xpad = %.2f, fullwidth = %.2f;\n",
			 fl->opts.font_size, fl->opts.font_width, fl->opts.frame_height,
			 fl->opts.inverted ? "true" : "false", fl->total, XPAD,
			 fl->opts.width - 2 * XPAD);
	fg_outbuf_put(&fl->out, flame_svg_js, sizeof(flame_svg_js) - 1);
	fg_outbuf_puts(&fl->out, "</script>\n");
}

static void emit_labels(struct fg_flame *fl)
{
	const struct fg_flame_opts *o = &fl->opts;
	double fs = o->font_size, bottom = fl->height - fl->ypad2 / 2;
	size_t i = 0;

	fg_outbuf_printf(
		&fl->out,
		"<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%.0f\" fill=\"url(#background)\"/>\n",
		o->width, fl->height);
	fg_outbuf_printf(
		&fl->out,
		"<text id=\"title\" x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"%.2f\">",
		o->width / 2.0, fs * 2, fs + 5);
	put_escaped(fl, o->title);
	fg_outbuf_puts(&fl->out, "</text>\n");
	if (o->subtitle) {
		fg_outbuf_printf(
			&fl->out,
			"<text id=\"subtitle\" x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\">",
			o->width / 2.0, fl->subtitle_y);
		put_escaped(fl, o->subtitle);
		fg_outbuf_puts(&fl->out, "</text>\n");
	}
	for (const char *const *l = o->info; l && *l; l++, i++) {
		fg_outbuf_printf(&fl->out,
				 "<text class=\"info\" x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\""
				 " font-size=\"%.2f\" xml:space=\"preserve\">",
				 o->width / 2.0, fl->info_y0 + (double)i * fl->info_step,
				 fs * 0.85);
		put_escaped(fl, *l);
		fg_outbuf_puts(&fl->out, "</text>\n");
	}
	fg_outbuf_printf(
		&fl->out,
		"<text id=\"unzoom\" class=\"hide\" x=\"%.2f\" y=\"%.1f\">Reset Zoom</text>\n",
		XPAD, fs * 2);
	fg_outbuf_printf(&fl->out, "<text id=\"search\" x=\"%.2f\" y=\"%.1f\">Search</text>\n",
			 o->width - XPAD - 100, fs * 2);
	fg_outbuf_printf(&fl->out, "<text id=\"ignorecase\" x=\"%.2f\" y=\"%.1f\">ic</text>\n",
			 o->width - XPAD - 16, fs * 2);
	fg_outbuf_printf(&fl->out, "<text id=\"details\" x=\"%.2f\" y=\"%.1f\" data-name-type=\"",
			 XPAD, bottom);
	put_escaped(fl, o->name_type);
	fg_outbuf_puts(&fl->out, "\" data-count-name=\"");
	put_escaped(fl, o->count_name);
	fg_outbuf_puts(&fl->out, "\"> </text>\n");
	fg_outbuf_printf(&fl->out, "<text id=\"matched\" x=\"%.2f\" y=\"%.1f\"> </text>\n",
			 o->width - XPAD - 100, bottom);
	fg_outbuf_puts(&fl->out, "<g id=\"frames\">\n");
}

static void emit_no_samples(struct fg_flame *fl)
{
	double y1, y2;

	frame_y(fl, 0, &y1, &y2);
	fg_outbuf_printf(
		&fl->out,
		"<text id=\"nosamples\" x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\">No samples</text>\n",
		fl->opts.width / 2.0, (y1 + y2) / 2 + fl->opts.font_size / 3);
}

/* " (1,234 samples, 12.34%" and, in a differential graph, the other profile and the change. */
static void put_figures(struct fg_flame *fl, const struct fg_flame_node *n)
{
	const struct fg_flametree *t = &fl->tree;
	struct fg_outbuf *b = &fl->out;

	fg_outbuf_puts(b, " (");
	put_count(b, n->value);
	fg_outbuf_puts(b, " ");
	put_escaped(fl, fl->opts.count_name);
	fg_outbuf_puts(b, ", ");
	fg_outbuf_put_fixed(b, fl->total > 0 ? 100 * n->value / fl->total : 0, 2);
	fg_outbuf_puts(b, "%");
	if (fl->diff) {
		double theirs = t->total_other > 0 ? n->other / t->total_other : 0;
		double change = t->total > 0 ? 100 *
						       (t->other_is_after ? n->other - n->value :
									    n->value - n->other) /
						       t->total :
					       0;

		fg_outbuf_printf(b, "; %s: ", t->other_is_after ? "after" : "before");
		put_count(b, n->other);
		fg_outbuf_printf(b, ", %.2f%%; change %+.2f%%", 100 * theirs, change);
	}
	fg_outbuf_puts(b, ")");
}

/*
 * One frame. This runs for every frame of a graph, so numbers go through
 * fg_outbuf_put_fixed(), which writes what printf would, without its cost.
 */
static void emit_frame(struct fg_flame *fl, const struct fg_flame_node *n)
{
	const struct fg_flame_opts *o = &fl->opts;
	struct fg_outbuf *b = &fl->out;
	size_t len, chars;
	const char *name = fg_flame_node_name(fl->model, n, &len);
	double x = XPAD + n->start * fl->scale, w = n->value * fl->scale, y1, y2;
	struct fg_rgb c;
	int r;

	frame_y(fl, n->depth, &y1, &y2);
	r = fg_flame_colorer_color(&fl->colorer, &fl->tree, n, &c);
	if (r < 0 && b->err >= 0)
		b->err = r;

	fg_outbuf_puts(b, "<g class=\"func_g\"><title>");
	fg_outbuf_put_markup(b, name, len, SIZE_MAX);
	put_figures(fl, n);
	fg_outbuf_puts(b, "</title><rect x=\"");
	fg_outbuf_put_fixed(b, x, 2);
	fg_outbuf_puts(b, "\" y=\"");
	fg_outbuf_put_fixed(b, y1, 1);
	fg_outbuf_puts(b, "\" width=\"");
	fg_outbuf_put_fixed(b, w, 2);
	fg_outbuf_puts(b, "\" height=\"");
	fg_outbuf_put_fixed(b, y2 - y1, 1);
	fg_outbuf_puts(b, "\" fill=\"rgb(");
	fg_outbuf_put_fixed(b, c.r, 0);
	fg_outbuf_puts(b, ",");
	fg_outbuf_put_fixed(b, c.g, 0);
	fg_outbuf_puts(b, ",");
	fg_outbuf_put_fixed(b, c.b, 0);
	fg_outbuf_puts(b, ")\" rx=\"2\" ry=\"2\"/><text x=\"");
	fg_outbuf_put_fixed(b, x + 3, 2);
	fg_outbuf_puts(b, "\" y=\"");
	fg_outbuf_put_fixed(b, (y1 + y2) / 2 + o->font_size / 4, 1);
	fg_outbuf_puts(b, "\">");
	/* The script's fit() must cut labels the same way. */
	chars = (size_t)floor(w / (o->font_size * o->font_width));
	if (chars >= 3)
		fg_outbuf_put_markup(b, name, len, chars);
	fg_outbuf_puts(b, "</text></g>\n");
}

static void emit_item(struct fg_flame *fl, size_t item)
{
	if (item == ITEM_HEAD)
		emit_head(fl);
	else if (item == ITEM_SCRIPT)
		emit_script(fl);
	else if (item == ITEM_LABELS)
		emit_labels(fl);
	else if (item == fl->n_items - 1)
		fg_outbuf_puts(&fl->out, "</g>\n</svg>\n");
	else if (fl->tree.n == 0)
		emit_no_samples(fl);
	else
		emit_frame(fl, &fl->tree.nodes[item - ITEM_FRAMES]);
}

int fg_flame__emit(struct fg_flame *fl, fg_write_fn fn, void *ctx, size_t budget)
{
	size_t item = fl->cursor;
	int r;

	if (item >= fl->n_items)
		return 1;
	fg_outbuf_reset(&fl->out);
	/* Always make progress, even with a budget of 0. */
	do
		emit_item(fl, item++);
	while (item < fl->n_items && fl->out.used < budget && fl->out.err >= 0);
	if (fl->out.err < 0)
		return fl->out.err;
	r = fn(ctx, fl->out.data, fl->out.used);
	if (r < 0)
		return r;
	/* Advance only once the sink took the chunk, so a failed write can be retried. */
	fl->cursor = item;
	return item >= fl->n_items ? 1 : 0;
}
