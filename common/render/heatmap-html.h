/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The interactive heat map: one self-contained HTML page (no network
 * references) holding a timed profile whole, its stacks and every sample's
 * time, drawn by heatmap-html.js:
 *   - the subsecond-offset heat map on a canvas (common/render/heatmap.h's
 *     cells), linear or rank colours with a toggle;
 *   - hover: a cell's time, count and top processes;
 *   - isolate: one process (a stack's root frame) alone;
 *   - a range selected with a click on its first cell and one on its last,
 *     or a drag, drawn below as a flame graph of exactly that range, with
 *     the flame graph page's zoom, search and details (flame-view.js), and
 *     as a differential graph of the range against the rest of the period;
 *   - the URL keeps the selection and the view.
 *
 * The data, in <script type="application/json" id="fg-data">:
 *   meta     title, subtitle, clock, unit, bucketMs, start (ms of the first
 *            column), since, until (the period), columns, rows, scale, and
 *            flame: how the range's graph is drawn (width, frameHeight,
 *            fontSize, fontType, fontWidth, bgTop, bgBottom, countName,
 *            nameType)
 *   names    every frame name, annotations ("_[k]") included
 *   color    per name, its colour in the palette (0xrrggbb)
 *   stacks   per stack id, its name ids, root first
 *   t, s, w  the samples in time order: ms after the previous one (the
 *            first: after meta.base), stack id, and weight (w only when a
 *            weight is not 1)
 *
 * Element ids the script and the tests rely on: #heatmap (the canvas),
 * #cell (the hover line), #scale (the colour toggle), #isolate (the
 * process select), #diff (the differential toggle), #clear, #range (the
 * selection's description), and the flame graph's #flame, #details,
 * #matched, #unzoom, #search, #ignorecase. The URL keeps
 * ?r=SINCE-UNTIL (ms on the profile's clock)&p=PROCESS&c=rank&d=1 and the
 * graph's n, s, i. Test hooks on window.fgHeatmap (see heatmap-html.js).
 *
 * Pure.
 */

#include "base/emit.h"
#include "profile/timed.h"
#include "render/flame.h"
#include "render/heatmap.h"

struct fg_heatmap_html_opts {
	struct fg_heatmap_opts heatmap; /* bucket, period, scale, title, subtitle */
	/* The range's flame graph: width, frame height, fonts, palette, count name. */
	struct fg_flame_opts flame;
};

/*
 * Writes the page for t (sorted) to fn, whole. 0, -EINVAL for bad options,
 * -E2BIG (the period is too long for a heat map), -ENOMEM, or the sink's
 * error.
 */
int fg_heatmap_html(const struct fg_timed *t, const struct fg_heatmap_html_opts *opts,
		    fg_write_fn fn, void *ctx);
