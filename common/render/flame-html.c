/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Flame graph as one self-contained HTML page, drawn on a canvas.
 *
 * fg_flame_html__new() builds the merged call tree (flametree.c), colours
 * every frame (the SVG renderer's colorer) and adds up each function's self
 * and total samples straight from the model's stacks, so the table is exact
 * whatever the tree left out. fg_flame_html__emit() then writes the page a
 * piece at a time: the markup, the data as JSON in a
 * <script type="application/json" id="fg-data"> element, and the script
 * (flame-html.js, embedded at build time).
 *
 * Detail kept. The canvas can zoom far into the graph, so the page keeps
 * frames down to 1/HTML_DETAIL of the SVG's min_width: by default 0.001 px
 * at 1200 px, i.e. any frame holding at least 1/1,180,000 of the samples,
 * which becomes 0.1 px wide (the SVG's limit) when zoomed 100 times. To
 * bound the page on huge profiles, at most HTML_MAX_FRAMES frames are kept:
 * past that the threshold rises to the narrowest frame that fits. A frame is
 * never narrower than its descendants, so this only ever drops the
 * narrowest frames, with their subtrees. The page draws only frames at
 * least 0.1 px wide in the current view, and skips a narrower frame's
 * subtree at once, so drawing costs what is visible, not what is embedded.
 *
 * The data ("fg-data"), parallel arrays indexed by frame in pre-order:
 *   meta        options, totals and counts (see emit_meta())
 *   names       display names, each once; "all" for the root
 *   name        name index per frame
 *   depth       depth per frame, 0 for the root
 *   gap         start minus where the frame would start if packed: its
 *               parent's start for a first child, else the previous
 *               sibling's end; 0 for most frames, so starts cost little
 *   value       samples per frame, in the profile that gives the widths
 *   other       differential only: the other profile's samples
 *   color       index into colors per frame
 *   colors      the distinct colours, as 0xrrggbb integers, ascending
 *   fn, fself, ftotal
 *               the table: name index, self and total samples per function;
 *               a function's total counts each sample once, however often
 *               it recurs in the stack. Functions are grouped by display
 *               name; the HTML_MAX_FUNCTIONS top ones by self and by total
 *               are kept, ordered by total, then self, descending
 *   fselfOther, ftotalOther
 *               differential only: the same in the other profile
 * Strings are JSON with '<', '>', '&', U+2028 and U+2029 escaped as \uXXXX,
 * so no name can end the element or open a comment in it, and with invalid
 * UTF-8 and control characters replaced by U+FFFD.
 *
 * Element ids that the script and the tests rely on:
 *   #title, #subtitle, .info    the headings; #notes (hidden) for opts.notes
 *   #unzoom     "Reset Zoom" button, hidden until zoomed
 *   #search     "Search" / "Reset Search" button; Ctrl-F and F3 open it too
 *   #ignorecase "ic" button, class "show" and aria-pressed when search
 *               ignores case; Ctrl-I toggles it
 *   #flame      the canvas, opts.width CSS px wide, or as wide as #graph
 *               where the window makes that narrower; refitted on resize
 *   #details    the hover line: "Function: name (1,234 samples, 5.67%)",
 *               with "; before: .., ..%; change +..%" in a differential
 *               graph and ", ..% of zoomed frame" within a zoomed subtree
 *   #matched    "Matched: 12.3%" after a search (each sample counted once)
 *   #nosamples  only in the page of an empty model
 *   #filter     the table's filter box (case-insensitive substring)
 *   #table      the function table; <th data-key="name|self|selfpct|total|
 *               totalpct|selfother|totalother"> sort it when clicked, and
 *               each <tbody> row carries data-name, data-self, data-total;
 *               clicking a row searches for that function (an anchored,
 *               escaped regex) and marks the row "selected"
 *   #tablenote  "Showing n of m functions"
 * The URL keeps the view as ?n=..&s=..&i=1: n the zoomed frame's index in
 * the pre-order above (absent when not zoomed), s the search, i=1 to ignore
 * case; a page loaded with them restores that view. A graph taller than the
 * window opens scrolled to its base (the zoomed frame's row when zoomed),
 * as the SVG does; an icicle graph opens at its top.
 *
 * Test hooks, on window.fgFlame (see flame-html.js): frames() lists the
 * frames drawn, frameRect(name) gives a drawn frame's box in viewport
 * coordinates for clicking, state() the zoom and search, and loadMs and
 * drawMs the time to set up and to draw.
 */

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "base/outbuf.h"
#include "base/strpool.h"
#include "profile/framename.h"
#include "render/flame-html-js.h"
#include "render/flame-html.h"
#include "render/flame-view.h"
#include "render/flametree.h"

#define HTML_DETAIL 100.0
#define HTML_MAX_FRAMES 200000u
#define HTML_MAX_FUNCTIONS 2000u
#define XPAD 10.0 /* as the SVG */

/* The output is this sequence of sections; the arrays are written an element at a time. */
enum {
	SEC_HEAD,
	SEC_NAMES,
	SEC_NAME,
	SEC_DEPTH,
	SEC_GAP,
	SEC_VALUE,
	SEC_OTHER,
	SEC_COLOR,
	SEC_COLORS,
	SEC_FN,
	SEC_FSELF,
	SEC_FTOTAL,
	SEC_FSELF_OTHER,
	SEC_FTOTAL_OTHER,
	SEC_TAIL,
	_SEC_MAX,
};

static const char *const section_key[_SEC_MAX] = {
	[SEC_NAMES] = "names",
	[SEC_NAME] = "name",
	[SEC_DEPTH] = "depth",
	[SEC_GAP] = "gap",
	[SEC_VALUE] = "value",
	[SEC_OTHER] = "other",
	[SEC_COLOR] = "color",
	[SEC_COLORS] = "colors",
	[SEC_FN] = "fn",
	[SEC_FSELF] = "fself",
	[SEC_FTOTAL] = "ftotal",
	[SEC_FSELF_OTHER] = "fselfOther",
	[SEC_FTOTAL_OTHER] = "ftotalOther",
};

/* One function of the table: a group of names with the same display name. */
struct func {
	uint32_t group;
	double self, total, self_other, total_other;
};

struct fg_flame_html {
	const struct fg_folded *model; /* borrowed while fg_flame_html__new() builds, then NULL */
	struct fg_flame_opts opts;     /* pointers borrowed until fg_flame_html__free() */
	bool diff;
	double total; /* the 100% figure: the tree's, or opts.total if larger */
	char bg_top[8], bg_bottom[8];
	size_t n_elided;

	struct fg_flametree tree; /* owned */
	struct fg_strpool *pool;  /* owned; display names, id = group; "all" is 0 */
	uint32_t *node_name;      /* owned; names index per frame */
	double *node_gap;         /* owned */
	uint32_t *node_color;     /* owned; colors index per frame */
	uint32_t *colors;         /* owned; 0xrrggbb, ascending */
	size_t n_colors;
	uint32_t *names; /* owned; group per names index */
	size_t n_names;
	struct func *funcs; /* owned; the table's rows */
	size_t n_funcs, n_funcs_all;

	size_t section, index; /* the next element to write */
	struct fg_outbuf out;  /* the chunk being assembled */
};

struct fg_flame_html *fg_flame_html__free(struct fg_flame_html *h)
{
	if (!h)
		return NULL;
	fg_flametree_done(&h->tree);
	fg_strpool__free(h->pool);
	free(h->node_name);
	free(h->node_gap);
	free(h->node_color);
	free(h->colors);
	free(h->names);
	free(h->funcs);
	fg_outbuf_done(&h->out);
	free(h);
	return NULL;
}

size_t fg_flame_html__n_elided(const struct fg_flame_html *h)
{
	return h->n_elided;
}

size_t fg_flame_html__n_frames(const struct fg_flame_html *h)
{
	return h->tree.n;
}

size_t fg_flame_html__bytes(const struct fg_flame_html *h)
{
	size_t frames = h->tree.n;

	/* The per-frame arrays are allocated for tree.n frames (at least one), colors included. */
	return sizeof(*h) + fg_flametree_bytes(&h->tree) +
	       (h->pool ? fg_strpool__bytes(h->pool) : 0) +
	       (h->node_name ? MAX(frames, (size_t)1) * sizeof(*h->node_name) : 0) +
	       (h->node_gap ? frames * sizeof(*h->node_gap) : 0) +
	       (h->node_color ? frames * sizeof(*h->node_color) : 0) +
	       (h->colors ? frames * sizeof(*h->colors) : 0) +
	       (h->names ? MAX(fg_strpool__count(h->pool), (size_t)1) * sizeof(*h->names) : 0) +
	       (h->funcs ? MAX(h->n_funcs, (size_t)1) * sizeof(*h->funcs) : 0) + h->out.cap;
}

static int cmp_double_desc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * Builds the tree with the page's threshold, and again with a higher one if
 * it holds more than HTML_MAX_FRAMES frames. The first build's frames with
 * value >= T are exactly the second build's, so T can be read off it.
 */
static int build_tree(struct fg_flame_html *h, struct fg_flametree_opts *topts)
{
	_cleanup_free_ double *values = NULL;
	size_t dropped;
	double cut;
	int r;

	r = fg_flametree_build(h->model, topts, &h->tree);
	if (r < 0 || h->tree.n <= HTML_MAX_FRAMES)
		return r;
	values = malloc(h->tree.n * sizeof(*values));
	if (!values)
		return -ENOMEM;
	for (size_t i = 0; i < h->tree.n; i++)
		values[i] = h->tree.nodes[i].value;
	qsort(values, h->tree.n, sizeof(*values), cmp_double_desc);
	/*
	 * Keep the frames wider than the first one that does not fit; ties go
	 * together. When dropping the ties would leave less than half the cap
	 * (one very deep stack has every frame tied with the root), keep them
	 * instead: a graph over the cap beats an empty one.
	 */
	cut = values[HTML_MAX_FRAMES];
	dropped = h->tree.n_dropped;
	fg_flametree_done(&h->tree);
	{
		size_t wider = 0;

		while (wider < HTML_MAX_FRAMES && values[wider] > cut)
			wider++;
		topts->min_value = wider < HTML_MAX_FRAMES / 2 ? cut : nextafter(cut, INFINITY);
	}
	r = fg_flametree_build(h->model, topts, &h->tree);
	if (r < 0)
		return r;
	/* What the first build dropped, and what the second dropped of what the first kept. */
	h->tree.n_dropped = MAX(h->tree.n_dropped, dropped);
	return 0;
}

/* Where each frame starts relative to where it would if frames were packed. */
static int compute_gaps(struct fg_flame_html *h)
{
	const struct fg_flametree *t = &h->tree;
	_cleanup_free_ double *next = NULL;

	if (t->n == 0)
		return 0;
	h->node_gap = malloc(t->n * sizeof(*h->node_gap));
	next = calloc((size_t)t->max_depth + 2, sizeof(*next));
	if (!h->node_gap || !next)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		const struct fg_flame_node *n = &t->nodes[i];

		h->node_gap[i] = n->start - next[n->depth];
		next[n->depth] = n->start + n->value;
		next[n->depth + 1] = n->start;
	}
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Colours every frame in pre-order, as the SVG does, then indexes them into a table. */
static int compute_colors(struct fg_flame_html *h)
{
	const struct fg_flametree *t = &h->tree;
	struct fg_flame_colorer colorer;
	size_t n = 0;
	int r;

	if (t->n == 0)
		return 0;
	h->node_color = malloc(t->n * sizeof(*h->node_color));
	h->colors = malloc(t->n * sizeof(*h->colors));
	if (!h->node_color || !h->colors)
		return -ENOMEM;
	fg_flame_colorer_init(&colorer, &h->opts, h->model, t);
	for (size_t i = 0; i < t->n; i++) {
		struct fg_rgb c;

		r = fg_flame_colorer_color(&colorer, t, &t->nodes[i], &c);
		if (r < 0)
			return r;
		h->node_color[i] = (uint32_t)c.r << 16 | (uint32_t)c.g << 8 | c.b;
	}
	memcpy(h->colors, h->node_color, t->n * sizeof(*h->colors));
	qsort(h->colors, t->n, sizeof(*h->colors), cmp_u32);
	for (size_t i = 0; i < t->n; i++)
		if (n == 0 || h->colors[n - 1] != h->colors[i])
			h->colors[n++] = h->colors[i];
	h->n_colors = n;
	for (size_t i = 0; i < t->n; i++) {
		const uint32_t *p =
			bsearch(&h->node_color[i], h->colors, n, sizeof(*h->colors), cmp_u32);

		h->node_color[i] = (uint32_t)(p - h->colors);
	}
	return 0;
}

static int cmp_func_self(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	return x->group < y->group ? -1 : x->group > y->group;
}

static int cmp_func_total(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return cmp_func_self(a, b);
}

/*
 * Adds up every function's samples over all the model's stacks, and keeps
 * the top ones by self and by total. Group ids (the pool's) number display
 * names in the order of the model's name ids, so they are deterministic.
 */
static int compute_functions(struct fg_flame_html *h, uint32_t *group, bool use_before)
{
	const struct fg_folded *m = h->model;
	size_t n_names = fg_folded__n_names(m), n_groups, n_stacks = fg_folded__n_stacks(m), n = 0;
	_cleanup_free_ struct func *all = NULL;
	_cleanup_free_ size_t *stamp = NULL;
	_cleanup_free_ bool *keep = NULL;

	n_groups = fg_strpool__count(h->pool);
	all = calloc(n_groups, sizeof(*all));
	stamp = calloc(n_groups, sizeof(*stamp));
	keep = calloc(n_groups, sizeof(*keep));
	if (!all || !stamp || !keep)
		return -ENOMEM;
	for (size_t g = 0; g < n_groups; g++)
		all[g].group = (uint32_t)g;
	for (size_t i = 0; i < n_stacks; i++) {
		struct fg_stack s;
		double v, o;

		fg_folded__stack(m, i, &s);
		v = use_before ? s.before : s.count;
		o = use_before ? s.count : s.before;
		for (size_t d = 0; d < s.n_frames; d++) {
			uint32_t g = s.frames[d] < n_names ? group[s.frames[d]] : 0;

			/* recursion: each sample counts once */
			if (stamp[g] == i + 1)
				continue;
			stamp[g] = i + 1;
			all[g].total += v;
			all[g].total_other += o;
		}
		if (s.n_frames > 0) {
			uint32_t g = group[s.frames[s.n_frames - 1]];

			all[g].self += v;
			all[g].self_other += o;
		}
	}

	/* Keep the top ones by self, then by total; each sort leaves the last order. */
	qsort(all, n_groups, sizeof(*all), cmp_func_self);
	for (size_t i = 0; i < n_groups && i < HTML_MAX_FUNCTIONS && all[i].self > 0; i++)
		keep[all[i].group] = true;
	qsort(all, n_groups, sizeof(*all), cmp_func_total);
	for (size_t i = 0; i < n_groups && i < HTML_MAX_FUNCTIONS && all[i].total > 0; i++)
		keep[all[i].group] = true;
	for (size_t i = 0; i < n_groups; i++) {
		if (all[i].total > 0 || all[i].total_other > 0)
			h->n_funcs_all++;
		if (keep[all[i].group])
			all[n++] = all[i];
	}
	h->funcs = malloc(MAX(n, (size_t)1) * sizeof(*h->funcs));
	if (!h->funcs)
		return -ENOMEM;
	memcpy(h->funcs, all, n * sizeof(*all));
	h->n_funcs = n;
	return 0;
}

/* Numbers the display names the page uses: the frames' first, in pre-order, then the table's. */
static int compute_names(struct fg_flame_html *h, const uint32_t *group)
{
	size_t n_groups = fg_strpool__count(h->pool), n_names = fg_folded__n_names(h->model);
	_cleanup_free_ uint32_t *index = NULL;
	const struct fg_flametree *t = &h->tree;

	index = malloc(MAX(n_groups, (size_t)1) * sizeof(*index));
	h->names = malloc(MAX(n_groups, (size_t)1) * sizeof(*h->names));
	h->node_name = malloc(MAX(t->n, (size_t)1) * sizeof(*h->node_name));
	if (!index || !h->names || !h->node_name)
		return -ENOMEM;
	memset(index, 0xff, n_groups * sizeof(*index));
	for (size_t i = 0; i < t->n + h->n_funcs; i++) {
		uint32_t g, *id;

		if (i < t->n) {
			uint32_t name = t->nodes[i].name;

			g = name == FG_FLAME_ROOT || name >= n_names ? 0 : group[name];
			id = &h->node_name[i];
		} else {
			g = h->funcs[i - t->n].group;
			id = &h->funcs[i - t->n].group; /* from here on a names index */
		}
		if (index[g] == UINT32_MAX) {
			index[g] = (uint32_t)h->n_names;
			h->names[h->n_names++] = g;
		}
		*id = index[g];
	}
	return 0;
}

int fg_flame_html__new(const struct fg_folded *model, const struct fg_flame_opts *opts,
		       struct fg_flame_html **ret)
{
	_cleanup_(fg_flame_html__freep) struct fg_flame_html *h = NULL;
	_cleanup_free_ uint32_t *group = NULL;
	struct fg_flametree_opts topts = {};
	size_t n_names;
	double model_total, scale;
	uint32_t id;
	int r;

	if (!model || !ret)
		return -EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->model = model;
	h->diff = fg_folded__is_diff(model);
	r = fg_flame_opts_normalize(opts, h->diff, &h->opts);
	if (r < 0)
		return r;
	if (h->opts.flamechart != fg_folded__is_sequence(model))
		return -EINVAL;
	if (h->opts.bgcolors)
		(void)fg_bgcolors_parse(h->opts.bgcolors, h->bg_top, h->bg_bottom);
	else
		fg_bgcolors_default(h->opts.palette, h->bg_top, h->bg_bottom);

	topts.use_before = h->diff && h->opts.negate;
	topts.sequence = h->opts.flamechart;
	model_total = topts.use_before ? fg_folded__total_before(model) : fg_folded__total(model);
	h->total = MAX(model_total, h->opts.total);
	scale = h->total > 0 ? (h->opts.width - 2 * XPAD) / h->total : 0;
	if (h->opts.min_width_pct)
		topts.min_value = h->total * h->opts.min_width / 100 / HTML_DETAIL;
	else
		topts.min_value = scale > 0 ? h->opts.min_width / scale / HTML_DETAIL : 0;
	r = build_tree(h, &topts);
	if (r < 0)
		return r;
	h->n_elided = h->tree.n_dropped;
	r = compute_gaps(h);
	if (r < 0)
		return r;
	r = compute_colors(h);
	if (r < 0)
		return r;

	/* Display names, so "f" and "f_[k]" are one function in the table. */
	h->pool = fg_strpool__new();
	n_names = fg_folded__n_names(model);
	group = malloc(MAX(n_names, (size_t)1) * sizeof(*group));
	if (!h->pool || !group)
		return -ENOMEM;
	r = fg_strpool__intern(h->pool, "all", 3, &id);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n_names; i++) {
		const char *name = fg_folded__name(model, (uint32_t)i);

		r = fg_strpool__intern(h->pool, name, fg_name_display_len(name, strlen(name)),
				       &group[i]);
		if (r < 0)
			return r;
	}
	r = compute_functions(h, group, topts.use_before);
	if (r < 0)
		return r;
	r = compute_names(h, group);
	if (r < 0)
		return r;

	/* Everything the page shows is copied: the caller may free the model now. */
	h->model = NULL;
	*ret = TAKE_PTR(h);
	return 0;
}

/* The shortest "%.Ng" that reads back as v. */
static void put_shortest(struct fg_flame_html *h, double v)
{
	char s[40];

	for (int prec = 15; prec < 17; prec++) {
		snprintf(s, sizeof(s), "%.*g", prec, v);
		if (strtod(s, NULL) == v) {
			fg_outbuf_puts(&h->out, s);
			return;
		}
	}
	fg_outbuf_printf(&h->out, "%.17g", v);
}

/* A number as JSON: integers in full, anything else so that it reads back exactly. */
static void put_num(struct fg_flame_html *h, double v)
{
	if (v == 0)
		fg_outbuf_puts(&h->out, "0"); /* not "-0" */
	else if (v == floor(v) && fabs(v) < 9007199254740992.0)
		fg_outbuf_printf(&h->out, "%.0f", v);
	else
		put_shortest(h, v);
}

static void put_html_str(struct fg_flame_html *h, const char *s)
{
	fg_outbuf_put_markup(&h->out, s, strlen(s), SIZE_MAX);
}

static void put_json(struct fg_flame_html *h, const char *s, size_t len)
{
	fg_outbuf_put_json_str(&h->out, s, len);
}

static void put_json_str(struct fg_flame_html *h, const char *s)
{
	put_json(h, s, strlen(s));
}

/*
 * Output.
 */

static const char style[] =
	"body { margin: 8px; background: #fff; color: #000; font-size: 12px; }\n"
	"#title { font-size: 17px; font-weight: normal; text-align: center; margin: 4px 0; }\n"
	/* Line breaks kept, and long lines wrapped: a narrow window does not scroll sideways. */
	"#subtitle, .info { text-align: center; color: rgb(110,110,110); white-space: pre-wrap;"
	" margin: 2px 0; }\n"
	/* The table beside the graph when the window has room for both, else below it. */
	"#layout { display: flex; flex-wrap: wrap; align-items: flex-start; gap: 12px; }\n"
	/* opts.width wide (its inline style), or the window's width where narrower. */
	"#graph { flex: none; max-width: 100%; }\n"
	"#nosamples { text-align: center; }\n"
	"#functions { flex: 1 1 420px; min-width: 420px; max-height: 95vh; overflow: auto; }\n"
	"#filter { width: 100%; box-sizing: border-box; font: inherit; margin-bottom: 4px; }\n"
	"#table { border-collapse: collapse; width: 100%; }\n"
	"#table th { position: sticky; top: 0; background: #eee; cursor: pointer; text-align: left;"
	" padding: 2px 4px; white-space: nowrap; }\n"
	"#table th.asc::after { content: \" \\25b2\"; }\n"
	"#table th.desc::after { content: \" \\25bc\"; }\n"
	"#table td { padding: 1px 4px; border-top: 1px solid #eee; }\n"
	"#table td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }\n"
	/*
	 * Names on one line, never broken mid-identifier. The name column takes
	 * the width the figures leave (max-width 0 with width 100%), and a name
	 * longer than that ends in an ellipsis, whole in its tooltip: the figures
	 * stay in view whatever the names.
	 */
	"#table td.name { white-space: nowrap; max-width: 0; width: 100%; overflow: hidden;"
	" text-overflow: ellipsis; }\n"
	"#table tbody tr { cursor: pointer; }\n"
	"#table tbody tr:hover { background: #f4f4ff; }\n"
	"#table tbody tr.selected { background: rgba(230,0,230,0.25); }\n"
	"#tablenote { color: rgb(110,110,110); margin-top: 4px; }\n";

static void emit_head(struct fg_flame_html *h)
{
	const struct fg_flame_opts *o = &h->opts;

	fg_outbuf_puts(&h->out,
		       "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		       /* Self-contained: nothing may be fetched, whatever a name holds. */
		       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';"
		       " script-src 'unsafe-inline'; style-src 'unsafe-inline'\">\n"
		       "<meta name=\"generator\" content=\"fgd\">\n<title>");
	put_html_str(h, o->title);
	fg_outbuf_puts(&h->out, "</title>\n<style>\n");
	fg_outbuf_put(&h->out, style, sizeof(style) - 1);
	fg_flame_view_put_style(&h->out);
	fg_outbuf_puts(
		&h->out,
		"</style>\n</head>\n<body>\n"
		"<!-- Flame graph rendered by fgd. Click a frame to zoom, Ctrl-F to search. -->\n"
		"<h1 id=\"title\">");
	put_html_str(h, o->title);
	fg_outbuf_puts(&h->out, "</h1>\n");
	if (o->subtitle) {
		fg_outbuf_puts(&h->out, "<p id=\"subtitle\">");
		put_html_str(h, o->subtitle);
		fg_outbuf_puts(&h->out, "</p>\n");
	}
	for (const char *const *l = o->info; l && *l; l++) {
		fg_outbuf_puts(&h->out, "<p class=\"info\">");
		put_html_str(h, *l);
		fg_outbuf_puts(&h->out, "</p>\n");
	}
	if (o->notes) {
		fg_outbuf_puts(&h->out, "<div id=\"notes\" hidden>NOTES: ");
		put_html_str(h, o->notes);
		fg_outbuf_puts(&h->out, "</div>\n");
	}
	fg_outbuf_printf(&h->out, "<div id=\"layout\">\n<div id=\"graph\" style=\"width: %upx\">\n",
			 o->width);
	fg_flame_view_put_controls(&h->out);
	if (h->tree.n == 0)
		fg_outbuf_puts(&h->out, "<p id=\"nosamples\">No samples</p>\n");
	fg_flame_view_put_canvas(&h->out);
	fg_outbuf_puts(&h->out,
		       "</div>\n"
		       "<div id=\"functions\">\n"
		       "<input id=\"filter\" type=\"search\" placeholder=\"Filter functions\""
		       " aria-label=\"Filter functions\" autocomplete=\"off\">\n"
		       "<table id=\"table\"><thead><tr></tr></thead><tbody></tbody></table>\n"
		       "<div id=\"tablenote\"></div>\n"
		       "</div>\n</div>\n"
		       "<script type=\"application/json\" id=\"fg-data\">\n");
	fg_outbuf_puts(&h->out, "{\"meta\":{\"title\":");
	put_json_str(h, o->title);
	fg_outbuf_puts(&h->out, ",\"countName\":");
	put_json_str(h, o->count_name);
	fg_outbuf_puts(&h->out, ",\"nameType\":");
	put_json_str(h, o->name_type);
	fg_outbuf_puts(&h->out, ",\"fontType\":");
	put_json_str(h, o->font_type);
	fg_outbuf_puts(&h->out, ",\"fontSize\":");
	put_num(h, o->font_size);
	fg_outbuf_puts(&h->out, ",\"fontWidth\":");
	put_num(h, o->font_width);
	fg_outbuf_printf(&h->out, ",\"width\":%u,\"frameHeight\":%u", o->width, o->frame_height);
	fg_outbuf_printf(&h->out,
			 ",\"inverted\":%s,\"flamechart\":%s,\"diff\":%s,\"otherIsAfter\":%s",
			 o->inverted ? "true" : "false", o->flamechart ? "true" : "false",
			 h->diff ? "true" : "false", h->tree.other_is_after ? "true" : "false");
	fg_outbuf_puts(&h->out, ",\"total\":");
	put_num(h, h->total);
	fg_outbuf_puts(&h->out, ",\"treeTotal\":");
	put_num(h, h->tree.total);
	fg_outbuf_puts(&h->out, ",\"totalOther\":");
	put_num(h, h->tree.total_other);
	fg_outbuf_printf(&h->out, ",\"maxDepth\":%u", h->tree.max_depth);
	fg_outbuf_puts(&h->out, ",\"bgTop\":");
	put_json_str(h, h->bg_top);
	fg_outbuf_puts(&h->out, ",\"bgBottom\":");
	put_json_str(h, h->bg_bottom);
	fg_outbuf_printf(&h->out, ",\"elided\":%zu,\"functions\":%zu}", h->n_elided,
			 h->n_funcs_all);
}

static bool section_present(const struct fg_flame_html *h, size_t sec)
{
	if (sec == SEC_OTHER || sec == SEC_FSELF_OTHER || sec == SEC_FTOTAL_OTHER)
		return h->diff;
	return true;
}

static size_t section_len(const struct fg_flame_html *h, size_t sec)
{
	switch (sec) {
	case SEC_NAMES:
		return h->n_names;
	case SEC_COLORS:
		return h->n_colors;
	case SEC_FN:
	case SEC_FSELF:
	case SEC_FTOTAL:
	case SEC_FSELF_OTHER:
	case SEC_FTOTAL_OTHER:
		return h->n_funcs;
	default:
		return h->tree.n;
	}
}

static void emit_element(struct fg_flame_html *h, size_t sec, size_t i)
{
	const struct fg_flame_node *n = i < h->tree.n ? &h->tree.nodes[i] : NULL;
	const struct func *f = i < h->n_funcs ? &h->funcs[i] : NULL;

	switch (sec) {
	case SEC_NAMES:
		put_json(h, fg_strpool__str(h->pool, h->names[i]),
			 fg_strpool__len(h->pool, h->names[i]));
		break;
	case SEC_NAME:
		fg_outbuf_printf(&h->out, "%u", h->node_name[i]);
		break;
	case SEC_DEPTH:
		fg_outbuf_printf(&h->out, "%u", n->depth);
		break;
	case SEC_GAP:
		put_num(h, h->node_gap[i]);
		break;
	case SEC_VALUE:
		put_num(h, n->value);
		break;
	case SEC_OTHER:
		put_num(h, n->other);
		break;
	case SEC_COLOR:
		fg_outbuf_printf(&h->out, "%u", h->node_color[i]);
		break;
	case SEC_COLORS:
		fg_outbuf_printf(&h->out, "%u", h->colors[i]);
		break;
	case SEC_FN:
		fg_outbuf_printf(&h->out, "%u", f->group);
		break;
	case SEC_FSELF:
		put_num(h, f->self);
		break;
	case SEC_FTOTAL:
		put_num(h, f->total);
		break;
	case SEC_FSELF_OTHER:
		put_num(h, f->self_other);
		break;
	case SEC_FTOTAL_OTHER:
		put_num(h, f->total_other);
		break;
	}
}

static void emit_tail(struct fg_flame_html *h)
{
	fg_outbuf_puts(&h->out, "}\n</script>\n<script>\n");
	/* The graph's object, then the page that uses it: one element. */
	fg_flame_view_put_script(&h->out);
	fg_outbuf_put(&h->out, flame_html_js, sizeof(flame_html_js) - 1);
	fg_outbuf_puts(&h->out, "</script>\n</body>\n</html>\n");
}

/*
 * Writes the next piece and moves the cursor past it: the head, then per
 * array its key, its elements one by one and its closing bracket, then the
 * tail.
 */
static void emit_piece(struct fg_flame_html *h)
{
	size_t sec = h->section, len;

	if (sec == SEC_HEAD || sec == SEC_TAIL) {
		if (sec == SEC_HEAD)
			emit_head(h);
		else
			emit_tail(h);
		h->section++;
		return;
	}
	if (!section_present(h, sec)) {
		h->section++;
		return;
	}
	len = section_len(h, sec);
	if (h->index == 0) {
		fg_outbuf_printf(&h->out, ",\n\"%s\":[", section_key[sec]);
	} else if (h->index <= len) {
		if (h->index > 1)
			fg_outbuf_puts(&h->out, ",");
		emit_element(h, sec, h->index - 1);
	} else {
		fg_outbuf_puts(&h->out, "]");
		h->section++;
		h->index = 0;
		return;
	}
	h->index++;
}

int fg_flame_html__emit(struct fg_flame_html *h, fg_write_fn fn, void *ctx, size_t budget)
{
	size_t section = h->section, index = h->index;

	if (h->section >= _SEC_MAX)
		return 1;
	fg_outbuf_reset(&h->out);
	/* Always make progress, even with a budget of 0. */
	do
		emit_piece(h);
	while (h->section < _SEC_MAX && (h->out.used < budget || h->out.used == 0) &&
	       h->out.err >= 0);
	if (h->out.err >= 0 && h->out.used > 0)
		h->out.err = fn(ctx, h->out.data, h->out.used);
	if (h->out.err < 0) {
		/* Only a chunk the sink took moves the cursor, so a failed write can be retried. */
		h->section = section;
		h->index = index;
		return h->out.err;
	}
	return h->section >= _SEC_MAX ? 1 : 0;
}
