/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Interactive flame-graph SVG renderer, in the look and feel of Brendan
 * Gregg's flamegraph.pl: one self-contained SVG with embedded JavaScript for
 * click-to-zoom, reset zoom, regex search (with a case toggle) and the
 * matched percentage, a tooltip per frame, and the zoom and search kept in
 * the URL. Differential models (fg_folded__is_diff()) are drawn red for
 * growth and blue for decline. Output is deterministic: the same model and
 * options give the same bytes.
 */

#include <stddef.h>

#include "base/emit.h"
#include "base/macro.h"
#include "profile/folded.h"
#include "render/flametree.h"
#include "render/palette.h"

struct fg_palette_map;

/*
 * Rendering options, named after flamegraph.pl's. Strings and the palette
 * map are borrowed until the renderer is freed. NULL strings take the
 * defaults, so a caller may set only what it needs.
 */
struct fg_flame_opts {
	const char *title;    /* default "Flame Graph", "Icicle Graph" (inverted), "Flame Chart" */
	const char *subtitle; /* NULL for none */
	const char *const *info; /* NULL-terminated recording details, or NULL */
	const char *notes;       /* --notes: kept in the output as a comment; NULL for none */
	unsigned width;          /* image width in px; default 1200 */
	unsigned frame_height;   /* --height, px; default 16 */
	double font_size;        /* default 12 */
	double font_width;       /* average glyph width per px of font size; default 0.59 */
	const char *font_type;   /* default "Verdana" */
	double min_width;        /* narrower frames are elided; default 0.1 px */
	bool min_width_pct;      /* min_width is a percentage of the total, not px */
	const char *count_name;  /* default "samples" */
	const char *name_type;   /* default "Function:" */
	enum fg_palette palette; /* --colors; default hot */
	/* --bgcolors: yellow, blue, green, grey or #rrggbb; NULL: the palette's */
	const char *bgcolors;
	bool random; /* --random: colours from a generator seeded with seed, not the name hash */
	uint64_t seed;
	/* --cp: colours by name, read and extended; NULL for none */
	struct fg_palette_map *palette_map;
	bool inverted;   /* --inverted: an icicle graph, drawn top-down */
	bool flamechart; /* --flamechart: the model is a sequence (fg_folded__set_sequence()) */
	bool negate;     /* --negate: in a differential model, widths from the before profile */
	double total; /* --total: the 100% figure, if larger than the model's total; 0 for none */
};

void fg_flame_opts_init(struct fg_flame_opts *o);

struct fg_flame;

/*
 * Lays out the graph for a sorted model (see fg_folded__sort()), or a
 * sequence with opts->flamechart. The model and everything opts points to
 * are borrowed until fg_flame__free(). Stores a new renderer in *ret_flame
 * (caller frees with fg_flame__free()). Returns 0, -EINVAL for bad options
 * or an unsorted model, or -ENOMEM.
 */
int fg_flame__new(const struct fg_folded *model, const struct fg_flame_opts *opts,
		  struct fg_flame **ret_flame);
struct fg_flame *fg_flame__free(struct fg_flame *fl);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_flame *, fg_flame__free);

/*
 * Checks opts and fills in the defaults for NULL strings, as fg_flame__new()
 * does; the HTML renderer shares it. 0 or -EINVAL.
 */
int fg_flame_opts_normalize(const struct fg_flame_opts *in, bool diff, struct fg_flame_opts *ret);

/*
 * Frame colours as the renderers draw them, shared by the SVG and HTML
 * renderers: the differential scale in a differential model, else the
 * palette map, the random generator or the name hash, in that order.
 */
struct fg_flame_colorer {
	const struct fg_flame_opts *opts; /* borrowed */
	const struct fg_folded *model;    /* borrowed */
	bool diff;
	double max_delta; /* the largest |fg_flame_self_delta()| */
	uint64_t rng;
};

void fg_flame_colorer_init(struct fg_flame_colorer *c, const struct fg_flame_opts *opts,
			   const struct fg_folded *model, const struct fg_flametree *t);
/*
 * The colour of node n of t. Adds new names to opts->palette_map. 0, or
 * -ENOMEM from the map (the colour is stored all the same).
 */
int fg_flame_colorer_color(struct fg_flame_colorer *c, const struct fg_flametree *t,
			   const struct fg_flame_node *n, struct fg_rgb *ret);

/*
 * How much n's own samples grew from before to after, as a share of the
 * drawn total: positive for growth, 0 outside differential trees. Counts are
 * compared as they are, as flamegraph.pl does; fg_folded_diff() scales the
 * before profile to the after total first unless told not to, which makes
 * this the change in share.
 */
double fg_flame_self_delta(const struct fg_flametree *t, const struct fg_flame_node *n);

/* The display name of a node: "all" for the root, annotations stripped. */
const char *fg_flame_node_name(const struct fg_folded *m, const struct fg_flame_node *n,
			       size_t *ret_len);

/* Frames elided as too narrow. */
size_t fg_flame__n_elided(const struct fg_flame *fl);
/* Heap bytes the renderer holds (not the model it borrows), for memory accounting. */
size_t fg_flame__bytes(const struct fg_flame *fl);

/*
 * Writes the next part of the SVG (see emit.h): at least budget bytes, or
 * the rest. Returns 0 while more remains, 1 when done, or the sink's error.
 */
int fg_flame__emit(struct fg_flame *fl, fg_write_fn fn, void *ctx, size_t budget);
