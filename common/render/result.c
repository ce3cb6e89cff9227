/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "profile/timed.h"
#include "profile/transform.h"
#include "render/flame-html.h"
#include "render/flame.h"
#include "render/result.h"

/* Chunks smaller than this cost more in framing than they carry. */
#define EMIT_BUDGET_FLOOR 4096

struct fg_result {
	enum fg_format format;
	struct fg_folded *model;    /* owned: as the view shows it, sorted */
	struct fg_flame *flame;     /* owned, SVG */
	struct fg_flame_html *html; /* owned, HTML */
	struct fg_timed *timed;     /* owned, timed: as the view shows it, sorted */
	uint8_t *bytes;             /* owned, pprof and speedscope: the whole encoded profile */
	size_t n_bytes;
	size_t n_stacks;        /* the model's, which an HTML page does not keep */
	size_t cursor;          /* folded, timed, pprof, speedscope */
	char *title, *subtitle; /* owned; borrowed by the renderer */
	char **info;            /* owned, NULL-terminated; borrowed by the renderer */
};

struct fg_result *fg_result__free(struct fg_result *r)
{
	if (!r)
		return NULL;
	/* The renderers borrow the model and the strings: they go first. */
	fg_flame__free(r->flame);
	fg_flame_html__free(r->html);
	fg_folded__free(r->model);
	fg_timed__free(r->timed);
	free(r->bytes);
	free(r->title);
	free(r->subtitle);
	for (size_t i = 0; r->info && r->info[i]; i++)
		free(r->info[i]);
	free(r->info);
	free(r);
	return NULL;
}

/* *ret is a copy of s, or NULL for NULL. 0 or -ENOMEM. */
static int copy_str(const char *s, char **ret)
{
	*ret = s ? strdup(s) : NULL;
	return s && !*ret ? -ENOMEM : 0;
}

static int copy_opts(struct fg_result *r, const struct fg_result_opts *o)
{
	size_t n = 0;
	int err;

	err = copy_str(o->title, &r->title);
	if (err >= 0)
		err = copy_str(o->subtitle, &r->subtitle);
	if (err < 0 || !o->info)
		return err;
	while (o->info[n])
		n++;
	r->info = calloc(n + 1, sizeof(*r->info));
	if (!r->info)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		err = copy_str(o->info[i], &r->info[i]);
		if (err < 0)
			return err;
	}
	return 0;
}

/* *model with the frames of one side only (opts->frames), under its roots. */
static int one_side(const struct fg_result_opts *opts, struct fg_folded **model)
{
	struct fg_transform_opts t = {
		.user_only = opts->frames == FG_FRAMES_USER,
		.kernel_only = opts->frames == FG_FRAMES_KERNEL,
		.roots = opts->roots,
	};
	struct fg_folded *out = NULL;
	int err = fg_transform(*model, &t, &out, NULL, NULL, 0);

	if (err < 0)
		return err;
	fg_folded__free(*model);
	*model = out;
	return 0;
}

int fg_result__new(struct fg_folded *model, const struct fg_result_opts *opts,
		   struct fg_result **ret)
{
	_cleanup_(fg_result__freep) struct fg_result *r = calloc(1, sizeof(*r));
	struct fg_flame_opts fo;
	int err;

	if (!r) {
		fg_folded__free(model);
		return -ENOMEM;
	}
	if ((opts->format != FG_FORMAT_FOLDED && opts->format != FG_FORMAT_SVG &&
	     opts->format != FG_FORMAT_HTML && opts->format != FG_FORMAT_PPROF &&
	     opts->format != FG_FORMAT_SPEEDSCOPE) ||
	    (opts->format == FG_FORMAT_PPROF && !opts->pprof) ||
	    (opts->format == FG_FORMAT_SPEEDSCOPE && !opts->speedscope)) {
		fg_folded__free(model);
		return -EINVAL;
	}
	r->format = opts->format;
	/* What the client may not see goes before anything is made of the model. */
	err = fg_view_model(&opts->view, model, &r->model);
	if (err >= 0 && opts->frames != FG_FRAMES_ALL)
		err = one_side(opts, &r->model);
	if (err < 0)
		return err;
	err = fg_folded__sort(r->model);
	r->n_stacks = fg_folded__n_stacks(r->model);
	if (err >= 0 && r->format == FG_FORMAT_PPROF) {
		/* Encoded whole (gzip needs it all); the model goes once it is. */
		err = fg_pprof_from_model(r->model, opts->pprof, &r->bytes, &r->n_bytes);
		r->model = fg_folded__free(r->model);
	}
	if (err >= 0 && r->format == FG_FORMAT_SPEEDSCOPE) {
		/* Its frame table comes before the samples that use it: encoded whole as well. */
		char *text = NULL;

		err = fg_speedscope_from_model(r->model, opts->speedscope, &text, &r->n_bytes);
		r->bytes = (uint8_t *)text;
		r->model = fg_folded__free(r->model);
	}
	if (err < 0 || r->format == FG_FORMAT_FOLDED || r->format == FG_FORMAT_PPROF ||
	    r->format == FG_FORMAT_SPEEDSCOPE) {
		if (err >= 0)
			*ret = TAKE_PTR(r);
		return err;
	}
	err = copy_opts(r, opts);
	if (err < 0)
		return err;
	fg_flame_opts_init(&fo);
	fo.title = r->title;
	fo.subtitle = r->subtitle;
	fo.info = (const char *const *)r->info;
	if (opts->count_name)
		fo.count_name = opts->count_name;
	fo.palette = opts->palette;
	err = r->format == FG_FORMAT_HTML ? fg_flame_html__new(r->model, &fo, &r->html) :
					    fg_flame__new(r->model, &fo, &r->flame);
	if (err < 0)
		return err;
	/* The page holds the names it shows: the model would only take memory while it streams. */
	if (r->html)
		r->model = fg_folded__free(r->model);
	*ret = TAKE_PTR(r);
	return 0;
}

int fg_result__new_timed(struct fg_timed *t, const struct fg_result_opts *opts,
			 struct fg_result **ret)
{
	_cleanup_(fg_result__freep) struct fg_result *r = calloc(1, sizeof(*r));
	int err;

	if (!r) {
		fg_timed__free(t);
		return -ENOMEM;
	}
	r->format = FG_FORMAT_TIMED;
	err = fg_view_timed(&opts->view, t, &r->timed);
	if (err >= 0)
		err = fg_timed__sort(r->timed);
	if (err < 0)
		return err;
	r->n_stacks = fg_folded__n_stacks(fg_timed__model_const(r->timed));
	*ret = TAKE_PTR(r);
	return 0;
}

size_t fg_result__n_stacks(const struct fg_result *r)
{
	return r->n_stacks;
}

size_t fg_result__bytes(const struct fg_result *r)
{
	return sizeof(*r) + (r->model ? fg_folded__bytes(r->model) : 0) +
	       (r->timed ? fg_timed__bytes(r->timed) : 0) + r->n_bytes +
	       (r->flame ? fg_flame__bytes(r->flame) : 0) +
	       (r->html ? fg_flame_html__bytes(r->html) : 0);
}

/* The next part of an encoded profile: budget bytes, or the rest. */
static int emit_bytes(struct fg_result *r, fg_write_fn fn, void *ctx, size_t budget)
{
	size_t n = MIN(budget, r->n_bytes - r->cursor);
	int err = n ? fn(ctx, (const char *)r->bytes + r->cursor, n) : 0;

	if (err < 0)
		return err;
	r->cursor += n;
	return r->cursor == r->n_bytes;
}

int fg_result__emit(struct fg_result *r, fg_write_fn fn, void *ctx, size_t budget)
{
	budget = MAX(budget, (size_t)EMIT_BUDGET_FLOOR);
	switch (r->format) {
	case FG_FORMAT_SVG:
		return fg_flame__emit(r->flame, fn, ctx, budget);
	case FG_FORMAT_HTML:
		return fg_flame_html__emit(r->html, fn, ctx, budget);
	case FG_FORMAT_TIMED:
		return fg_timed__emit(r->timed, &r->cursor, fn, ctx, budget);
	case FG_FORMAT_PPROF:
	case FG_FORMAT_SPEEDSCOPE:
		return emit_bytes(r, fn, ctx, budget);
	case FG_FORMAT_FOLDED:
		break;
	}
	return fg_folded__emit(r->model, &r->cursor, fn, ctx, budget);
}
