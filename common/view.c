/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "view.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_folded *, fg_folded__free);

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

bool fg_view_shows_process(const struct fg_view *v, uid_t owner)
{
	return v->uid == 0 || owner == v->uid;
}

bool fg_frame_is_kernel(const char *name, size_t len)
{
	return len >= SUFFIX_LEN &&
	       memcmp(name + len - SUFFIX_LEN, FG_KERNEL_SUFFIX, SUFFIX_LEN) == 0;
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

int fg_view_model(const struct fg_view *v, struct fg_folded *in, struct fg_folded **ret)
{
	_cleanup_(fg_folded__freep) struct fg_folded *src = in, *out = NULL;
	_cleanup_free_ uint32_t *map = NULL, *stack = NULL;
	_cleanup_free_ bool *kernel = NULL;
	size_t n_names = fg_folded__n_names(src), cap_stack = 0;
	bool any = false;
	int r;

	if (!v->hide_kernel && v->kernel_suffix) {
		*ret = TAKE_PTR(src);
		return 0;
	}
	kernel = calloc(MAX(n_names, (size_t)1), sizeof(*kernel));
	map = malloc(MAX(n_names, (size_t)1) * sizeof(*map));
	if (!kernel || !map)
		return -ENOMEM;
	memset(map, 0xff, n_names * sizeof(*map));
	for (uint32_t id = 0; id < n_names; id++) {
		kernel[id] =
			fg_frame_is_kernel(fg_folded__name(src, id), fg_folded__name_len(src, id));
		any |= kernel[id];
	}
	if (!any) {
		*ret = TAKE_PTR(src);
		return 0;
	}
	out = fg_folded__new();
	if (!out)
		return -ENOMEM;
	if (fg_folded__is_sequence(src))
		fg_folded__set_sequence(out);
	if (fg_folded__is_diff(src))
		fg_folded__mark_diff(out);
	for (size_t i = 0; i < fg_folded__n_stacks(src); i++) {
		struct fg_stack s;
		bool in_run = false;
		size_t n = 0;

		fg_folded__stack(src, i, &s);
		r = FG_GROW(stack, cap_stack, s.n_frames);
		if (r < 0)
			return r;
		for (size_t k = 0; k < s.n_frames; k++) {
			uint32_t id = s.frames[k];

			/* One frame stands for a whole run of hidden kernel frames. */
			if (v->hide_kernel && kernel[id] && in_run)
				continue;
			in_run = kernel[id];
			r = out_name(v, src, out, map, id, &stack[n++]);
			if (r < 0)
				return r;
		}
		r = fg_folded__is_diff(src) ?
			    fg_folded__add_pair(out, stack, n, s.before, s.count) :
			    fg_folded__add(out, stack, n, s.count);
		if (r < 0)
			return r;
	}
	*ret = TAKE_PTR(out);
	return 0;
}
