/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The canvas flame graph's part of an HTML page: its style rules, its
 * markup and its script (flame-view.js, the FgFlameView object), written
 * once here for both pages that show one (flame-html.c, the flame graph
 * page; heatmap-html.c, the range's graph under a heat map).
 *
 * The markup is the graph's controls bar (#unzoom "Reset Zoom", hidden
 * until zoomed; #search; #ignorecase "ic"), its canvas (#flame) and its
 * status line (#status: #details, the hover line; #matched, what a search
 * matched). The script finds them by these ids (FgFlameView.elements()),
 * and the tests rely on them. The page wraps them in its own #graph box,
 * opts.width px wide, and may put its own markup between the bar and the
 * canvas.
 */

#include "base/outbuf.h"

/* The view's rules, inside the page's <style>, after the page's own (no selector is shared). */
void fg_flame_view_put_style(struct fg_outbuf *o);
/* The controls bar: #controls with #unzoom, #search and #ignorecase. */
void fg_flame_view_put_controls(struct fg_outbuf *o);
/* The canvas (#flame) and the status line under it (#status: #details, #matched). */
void fg_flame_view_put_canvas(struct fg_outbuf *o);
/* The view's script, inside the page's <script>, before the page's own that uses it. */
void fg_flame_view_put_script(struct fg_outbuf *o);
