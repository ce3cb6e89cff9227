/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Interactive flame-graph SVG renderer, in the look and feel of Brendan
 * Gregg's flamegraph.pl: one self-contained SVG with embedded JavaScript for
 * click-to-zoom, reset zoom, regex search with the matched percentage, and a
 * tooltip per frame. Output is deterministic: the same model and options
 * give the same bytes.
 */

#include <stddef.h>

#include "emit.h"
#include "folded.h"

struct fg_flame_opts {
	const char *title;      /* borrowed; default "Flame Graph" */
	const char *subtitle;   /* borrowed; NULL for none */
	const char *const *info; /* borrowed; NULL-terminated recording details, or NULL */
	unsigned width;         /* image width in px; default 1200 */
	unsigned frame_height;  /* px; default 16 */
	double font_size;       /* default 12 */
	const char *font_type;  /* borrowed; default "Verdana" */
	double min_width;       /* px; narrower frames are elided; default 0.1 */
	const char *count_name; /* borrowed; default "samples" */
	const char *name_type;  /* borrowed; default "Function:" */
};

/* Fills o with the defaults above. */
void fg_flame_opts_init(struct fg_flame_opts *o);

struct fg_flame;

/*
 * Lays out the graph for a sorted model (see fg_folded__sort()). The model
 * and every string in opts are borrowed until fg_flame__free(). Stores a new
 * renderer in *ret_flame (caller frees with fg_flame__free()). Returns 0,
 * -EINVAL for bad options or an unsorted model, or -ENOMEM.
 */
int fg_flame__new(const struct fg_folded *model, const struct fg_flame_opts *opts,
		  struct fg_flame **ret_flame);
struct fg_flame *fg_flame__free(struct fg_flame *fl);

/*
 * Writes the next part of the SVG (see emit.h): at least budget bytes, or
 * the rest. Returns 0 while more remains, 1 when done, or the sink's error.
 */
int fg_flame__emit(struct fg_flame *fl, fg_write_fn fn, void *ctx, size_t budget);
