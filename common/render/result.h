/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What a client gets of a profile: the model as the client's view shows it
 * (common/profile/view.h), rendered in the format it asked for and streamed in
 * chunks. Every profile fgd sends, a recording's or a snapshot's, is one, so
 * the view is applied here once for every format of stacks: folded text, SVG,
 * HTML, pprof, speedscope, and any format added later as a case of this
 * object.
 *
 * Pure.
 */

#include <stddef.h>

#include "base/emit.h"
#include "base/macro.h"
#include "profile/folded.h"
#include "profile/pprof-model.h"
#include "profile/speedscope.h"
#include "profile/view.h"
#include "proto/proto-types.h"
#include "render/palette.h"

struct fg_result_opts {
	enum fg_format format;
	struct fg_view view;     /* what the client may see: required, there is no default */
	const char *title;       /* SVG and HTML, copied; NULL: the renderer's default */
	const char *subtitle;    /* copied; NULL for none */
	const char *const *info; /* NULL-terminated lines under the title, copied; NULL for none */
	const char *count_name;  /* static: what counts are ("us"); NULL: samples */
	enum fg_palette palette; /* the graph's colours; FG_PALETTE_HOT by default */
	/*
	 * User or kernel frames only, below the first roots frames (the
	 * [cgroup,] process frames): common/profile/transform's user_only and
	 * kernel_only, after the view.
	 */
	enum fg_frames_side frames;
	size_t roots;
	/* FG_FORMAT_PPROF: what the counts are, the times, the comments; borrowed for the call */
	const struct fg_pprof_meta *pprof;
	/* FG_FORMAT_SPEEDSCOPE: what the counts and root frames are, its name; borrowed for the call */
	const struct fg_speedscope_meta *speedscope;
};

struct fg_result;

/*
 * Builds the result of model, which it takes over (freed with the result,
 * or at once on failure): the view applied, the stacks sorted, the
 * renderer laid out (a pprof profile or a speedscope file encoded whole).
 * Caller frees *ret with fg_result__free(). 0, -EINVAL for a format it does
 * not know (or pprof without opts->pprof, speedscope without
 * opts->speedscope), -E2BIG (HTML: a model too large), -ENOMEM.
 */
int fg_result__new(struct fg_folded *model, const struct fg_result_opts *opts,
		   struct fg_result **ret);
struct fg_result *fg_result__free(struct fg_result *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_result *, fg_result__free);

struct fg_timed;

/*
 * The same for a timed profile (common/profile/timed.h), in FG_FORMAT_TIMED (the
 * format in opts is not read): the view applied to its stacks, its samples
 * kept with their times. Takes t over.
 */
int fg_result__new_timed(struct fg_timed *t, const struct fg_result_opts *opts,
			 struct fg_result **ret);

/* Distinct stacks the client gets, after the view merged what it made identical. */
size_t fg_result__n_stacks(const struct fg_result *r);
/*
 * Heap bytes the result holds while it streams: the model (folded text and
 * SVG stream from it; an HTML page keeps what it shows and lets it go once
 * laid out) and the renderer. For memory budgets.
 */
size_t fg_result__bytes(const struct fg_result *r);

/*
 * Writes the next part of the output (see emit.h): at least budget bytes
 * (4096 at least), or the rest. 0 while more remains, 1 when done, or the
 * sink's error.
 */
int fg_result__emit(struct fg_result *r, fg_write_fn fn, void *ctx, size_t budget);
