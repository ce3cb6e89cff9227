/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "profile/timed.h"
#include "profile/view.h"

#define SUFFIX_LEN (sizeof(FG_KERNEL_SUFFIX) - 1)

void fg_view_init(struct fg_view *v, uid_t uid, int paranoid)
{
	/* What the kernel itself would refuse the user (perf_event_open's exclude_kernel). */
	*v = (struct fg_view){
		.uid = uid,
		.hide_kernel = uid != 0 && paranoid >= 2,
		.kernel_suffix = true,
	};
}

void fg_view_read_all(struct fg_view *v)
{
	v->all_processes = true;
}

bool fg_view_shows_all(const struct fg_view *v)
{
	return v->uid == 0 || v->all_processes;
}

bool fg_view_shows_process(const struct fg_view *v, uid_t owner)
{
	return fg_view_shows_all(v) || owner == v->uid;
}

bool fg_frame_is_kernel(const char *name, size_t len)
{
	return len >= SUFFIX_LEN &&
	       memcmp(name + len - SUFFIX_LEN, FG_KERNEL_SUFFIX, SUFFIX_LEN) == 0;
}

bool fg_frame_is_kernel_seen(const char *name, size_t len)
{
	return fg_frame_is_kernel(name, len) ||
	       (len == strlen(FG_VIEW_KERNEL) && memcmp(name, FG_VIEW_KERNEL, len) == 0);
}

const char *fg_view_frame(const struct fg_view *v, const char *name, size_t len, size_t *ret_len)
{
	*ret_len = len;
	if (!fg_frame_is_kernel(name, len))
		return name;
	if (v->hide_kernel) {
		*ret_len = strlen(FG_VIEW_KERNEL);
		return FG_VIEW_KERNEL;
	}
	if (!v->kernel_suffix)
		*ret_len = len - SUFFIX_LEN;
	return name;
}

/* The id in out of in's name id, interned on first use; UINT32_MAX in map means not yet. */
static int out_name(const struct fg_view *v, const struct fg_folded *in, struct fg_folded *out,
		    uint32_t *map, uint32_t id, uint32_t *ret)
{
	const char *name;
	size_t len;
	int r;

	if (map[id] == UINT32_MAX) {
		name = fg_view_frame(v, fg_folded__name(in, id), fg_folded__name_len(in, id), &len);
		r = fg_folded__intern(out, name, len, &map[id]);
		if (r < 0)
			return r;
	}
	*ret = map[id];
	return 0;
}

/* What a view's rewrite of a model's stacks needs: which names are kernel frames, and their new ids. */
struct rewrite {
	const struct fg_view *v;
	const struct fg_folded *src;
	struct fg_folded *out;
	bool *kernel;    /* owned, per name of src */
	uint32_t *map;   /* owned, per name of src: its id in out, or UINT32_MAX */
	uint32_t *stack; /* owned: one stack's frames in out */
	size_t cap_stack;
};

static void rewrite_done(struct rewrite *w)
{
	free(w->kernel);
	free(w->map);
	free(w->stack);
}

/*
 * Sets w up for src; 0 and *ret_changes false when the view changes none of
 * its names (root's view, or no kernel frame). 0 or -ENOMEM.
 */
static int rewrite_init(struct rewrite *w, const struct fg_view *v, const struct fg_folded *src,
			bool *ret_changes)
{
	size_t n_names = fg_folded__n_names(src);
	bool any = false;

	*w = (struct rewrite){ .v = v, .src = src };
	*ret_changes = false;
	if (!v->hide_kernel && v->kernel_suffix)
		return 0;
	w->kernel = calloc(MAX(n_names, (size_t)1), sizeof(*w->kernel));
	w->map = malloc(MAX(n_names, (size_t)1) * sizeof(*w->map));
	if (!w->kernel || !w->map)
		return -ENOMEM;
	memset(w->map, 0xff, n_names * sizeof(*w->map));
	for (uint32_t id = 0; id < n_names; id++) {
		w->kernel[id] =
			fg_frame_is_kernel(fg_folded__name(src, id), fg_folded__name_len(src, id));
		any |= w->kernel[id];
	}
	*ret_changes = any;
	return 0;
}

/* Stack s of src as the view shows it, in w->stack (names of out): *ret_n frames. */
static int rewrite_stack(struct rewrite *w, const struct fg_stack *s, size_t *ret_n)
{
	bool in_run = false;
	size_t n = 0;
	int r;

	r = FG_GROW(w->stack, w->cap_stack, s->n_frames);
	if (r < 0)
		return r;
	for (size_t k = 0; k < s->n_frames; k++) {
		uint32_t id = s->frames[k];

		/* One frame stands for a whole run of hidden kernel frames. */
		if (w->v->hide_kernel && w->kernel[id] && in_run)
			continue;
		in_run = w->kernel[id];
		r = out_name(w->v, w->src, w->out, w->map, id, &w->stack[n++]);
		if (r < 0)
			return r;
	}
	*ret_n = n;
	return 0;
}

int fg_view_model(const struct fg_view *v, struct fg_folded *in, struct fg_folded **ret)
{
	_cleanup_(fg_folded__freep) struct fg_folded *src = in, *out = NULL;
	_cleanup_(rewrite_done) struct rewrite w = {};
	bool changes;
	int r;

	r = rewrite_init(&w, v, src, &changes);
	if (r < 0)
		return r;
	if (!changes) {
		*ret = TAKE_PTR(src);
		return 0;
	}
	out = w.out = fg_folded__new();
	if (!out)
		return -ENOMEM;
	if (fg_folded__is_sequence(src))
		fg_folded__set_sequence(out);
	if (fg_folded__is_diff(src))
		fg_folded__mark_diff(out);
	for (size_t i = 0; i < fg_folded__n_stacks(src); i++) {
		struct fg_stack s;
		size_t n;

		fg_folded__stack(src, i, &s);
		r = rewrite_stack(&w, &s, &n);
		if (r < 0)
			return r;
		r = fg_folded__is_diff(src) ?
			    fg_folded__add_pair(out, w.stack, n, s.before, s.count) :
			    fg_folded__add(out, w.stack, n, s.count);
		if (r < 0)
			return r;
	}
	*ret = TAKE_PTR(out);
	return 0;
}

int fg_view_timed(const struct fg_view *v, struct fg_timed *in, struct fg_timed **ret)
{
	_cleanup_(fg_timed__freep) struct fg_timed *src = in, *out = NULL;
	_cleanup_(rewrite_done) struct rewrite w = {};
	_cleanup_free_ uint32_t *ids = NULL;
	const struct fg_folded *model = fg_timed__model_const(src);
	size_t n_stacks = fg_folded__n_stacks(model);
	const struct fg_timed_sample *samples;
	int64_t since, until;
	bool changes;
	int r;

	r = rewrite_init(&w, v, model, &changes);
	if (r < 0)
		return r;
	if (!changes) {
		*ret = TAKE_PTR(src);
		return 0;
	}
	r = fg_timed__sort(src);
	if (r < 0)
		return r;
	r = fg_timed__new(fg_timed__unit(src), fg_timed__clock(src), &out);
	if (r < 0)
		return r;
	fg_timed__period(src, &since, &until);
	fg_timed__set_period(out, since, until);
	w.out = fg_timed__model(out);
	ids = malloc(MAX(n_stacks, (size_t)1) * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	/* Each stack once; the samples then refer to what it became. */
	for (size_t i = 0; i < n_stacks; i++) {
		struct fg_stack s;
		size_t n;

		fg_folded__stack_by_id(model, (uint32_t)i, &s);
		r = rewrite_stack(&w, &s, &n);
		if (r >= 0)
			r = fg_folded__add_id(w.out, w.stack, n, 0, &ids[i]);
		if (r < 0)
			return r;
	}
	samples = fg_timed__samples(src);
	for (size_t i = 0; i < fg_timed__n_samples(src); i++) {
		r = fg_timed__add_id(out, samples[i].time, ids[samples[i].stack],
				     samples[i].weight);
		if (r < 0)
			return r;
	}
	*ret = TAKE_PTR(out);
	return 0;
}
