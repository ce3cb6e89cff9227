/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Frame colours for the flame-graph renderers, with flamegraph.pl's palette
 * names (--colors) and background gradients (--bgcolors), and its
 * consistent-palette file (--cp, "palette.map").
 *
 * A colour comes from three values in [0, 1]: by default a hash of the
 * frame's name, so a function has the same colour in every graph; with
 * --random, from a generator. The multi-hue palettes (java, js, perl, chain)
 * pick a hue from the name and its annotation suffix first:
 *   "_[k]" kernel, "_[j]" JIT, "_[i]" inlined, "_[w]" waker,
 * and the suffix is not shown (fg_name_display_len(), common/profile/framename.h).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/emit.h"
#include "base/macro.h"

enum fg_palette {
	FG_PALETTE_HOT, /* the default */
	FG_PALETTE_MEM,
	FG_PALETTE_IO,
	FG_PALETTE_WAKEUP,
	FG_PALETTE_CHAIN,
	FG_PALETTE_JAVA,
	FG_PALETTE_JS,
	FG_PALETTE_PERL,
	FG_PALETTE_RED,
	FG_PALETTE_GREEN,
	FG_PALETTE_BLUE,
	FG_PALETTE_AQUA,
	FG_PALETTE_YELLOW,
	FG_PALETTE_PURPLE,
	FG_PALETTE_ORANGE,
	_FG_PALETTE_MAX,
};

struct fg_rgb {
	uint8_t r, g, b;
};

/* 0, or -EINVAL for a name that is not a palette. */
int fg_palette_from_string(const char *s, enum fg_palette *ret);
/* Static string; "hot" for an out-of-range value. */
const char *fg_palette_to_string(enum fg_palette p);
/* The palette names, comma-separated, for help texts. */
extern const char fg_palette_names[];

/* The three colour values of a name, from its hash. */
void fg_color_values_hash(const char *name, size_t len, double ret_v[3]);

/*
 * The colour of a frame called name[0..len) (with its annotation) in
 * palette p, from the values v (each in [0, 1]). Frames named "-" and "--"
 * are the grey separators flamegraph.pl draws.
 */
void fg_palette_color(enum fg_palette p, const char *name, size_t len, const double v[3],
		      struct fg_rgb *ret);

/*
 * Differential colour: white for no change, red for growth, blue for a
 * decline, saturating at |delta| == max_delta (> 0).
 */
void fg_diff_color(double delta, double max_delta, struct fg_rgb *ret);

/*
 * Background gradient for --bgcolors: "yellow" (the default), "blue",
 * "green", "grey", or a flat "#rrggbb". Stores two "#rrggbb" strings (top,
 * bottom). 0 or -EINVAL.
 */
int fg_bgcolors_parse(const char *s, char ret_top[8], char ret_bottom[8]);
/* The gradient flamegraph.pl uses for a palette when --bgcolors is not given. */
void fg_bgcolors_default(enum fg_palette p, char ret_top[8], char ret_bottom[8]);

/*
 * A consistent palette (--cp): colours kept by name across runs, in
 * flamegraph.pl's palette.map text format, one "name->rgb(r,g,b)" per line.
 */
struct fg_palette_map;

/* Caller frees with fg_palette_map__free(). NULL on ENOMEM. */
struct fg_palette_map *fg_palette_map__new(void);
struct fg_palette_map *fg_palette_map__free(struct fg_palette_map *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_palette_map *, fg_palette_map__free);

/* True and the colour if name is in the map. */
bool fg_palette_map__get(const struct fg_palette_map *m, const char *name, size_t len,
			 struct fg_rgb *ret);
/* Adds or replaces. 0 or -ENOMEM. */
int fg_palette_map__set(struct fg_palette_map *m, const char *name, size_t len,
			const struct fg_rgb *c);
size_t fg_palette_map__size(const struct fg_palette_map *m);

/*
 * Parses one palette.map line (without its newline). Returns 1 if an entry
 * was added, 0 for a blank line, -EINVAL for a malformed one.
 */
int fg_palette_map__add_line(struct fg_palette_map *m, const char *line, size_t len);

/* Writes the map sorted by name, one line per entry. 0 or the sink's error. */
int fg_palette_map__write(const struct fg_palette_map *m, fg_write_fn fn, void *ctx);
