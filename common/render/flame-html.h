/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Interactive flame graph as one self-contained HTML page: the graph drawn
 * on a <canvas>, so it stays fast on profiles far too big for an SVG, and
 * beside it a searchable, sortable table of the top functions by self and
 * total samples. The page loads nothing from anywhere (its Content Security
 * Policy forbids it). It takes the same options as the SVG renderer
 * (flame.h) and offers the same interactions: click to zoom, reset zoom,
 * regex search with a case toggle and the matched percentage, hover
 * details, and the view kept in the URL. Output is deterministic.
 *
 * The page is documented, element ids, URL parameters and test hooks, at
 * the top of flame-html.c.
 */

#include <stddef.h>

#include "base/emit.h"
#include "base/macro.h"
#include "profile/folded.h"
#include "render/flame.h"

struct fg_flame_html;

/*
 * Builds the page's data for a sorted model (see fg_folded__sort()), or a
 * sequence with opts->flamechart. The model is borrowed for this call only
 * (the page keeps the names it shows), so a caller may free it before
 * streaming the page; everything opts points to is borrowed until
 * fg_flame_html__free(); opts may be NULL for the defaults. Stores a new renderer in *ret (caller frees with
 * fg_flame_html__free()). Returns 0, -EINVAL for bad options or an unsorted
 * model, -E2BIG for a model too large, or -ENOMEM.
 */
int fg_flame_html__new(const struct fg_folded *model, const struct fg_flame_opts *opts,
		       struct fg_flame_html **ret);
struct fg_flame_html *fg_flame_html__free(struct fg_flame_html *h);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_flame_html *, fg_flame_html__free);

/* Frames left out of the page as too narrow to ever show (see flame-html.c). */
size_t fg_flame_html__n_elided(const struct fg_flame_html *h);
/* Frames in the page, the root included; 0 for a model without samples. */
size_t fg_flame_html__n_frames(const struct fg_flame_html *h);
/* Heap bytes the renderer holds (the model not included), for memory accounting. */
size_t fg_flame_html__bytes(const struct fg_flame_html *h);

/*
 * Writes the next part of the page (see emit.h): at least budget bytes, or
 * the rest. Returns 0 while more remains, 1 when done, or the sink's error.
 */
int fg_flame_html__emit(struct fg_flame_html *h, fg_write_fn fn, void *ctx, size_t budget);
