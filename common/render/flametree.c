/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The tree is built in one pass over the stacks. Consecutive stacks share a
 * prefix, so only the frames past the common prefix are new nodes; a node is
 * complete when a stack no longer passes through it, and a complete node
 * that is too narrow is dropped at once with its subtree, which sits right
 * after it in pre-order. Memory therefore stays near the size of the drawn
 * graph plus one stack, however many stacks there are.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "render/flametree.h"

struct builder {
	struct fg_flametree *t;
	size_t cap;
	const struct fg_flametree_opts *o;
	uint32_t *path; /* owned; node index per depth of the current stack */
	size_t cap_path, n_path;
};

static int add_node(struct builder *b, uint32_t name, uint32_t depth, double start)
{
	struct fg_flametree *t = b->t;
	int r;

	if (t->n >= UINT32_MAX - 1)
		return -E2BIG;
	r = FG_GROW(t->nodes, b->cap, t->n + 1);
	if (r < 0)
		return r;
	t->nodes[t->n] = (struct fg_flame_node){ .start = start, .name = name, .depth = depth };
	b->path[b->n_path++] = (uint32_t)t->n++;
	return 0;
}

/* Completes the nodes of the path deeper than keep; drops those too narrow. */
static void close_path(struct builder *b, size_t keep)
{
	struct fg_flametree *t = b->t;

	for (; b->n_path > keep; b->n_path--) {
		uint32_t idx = b->path[b->n_path - 1];
		const struct fg_flame_node *n = &t->nodes[idx];

		if (idx > 0 && (!(n->value > 0) || n->value < b->o->min_value)) {
			/* Frames with no samples in the drawn profile are not "too narrow". */
			if (n->value > 0)
				t->n_dropped += t->n - idx;
			t->n = idx;
		}
	}
}

/*
 * Sorted order means every subtree's stacks are contiguous: a prefix comes
 * before its extensions, and at the first differing frame the names ascend
 * in byte order. The model keeps no flag we can trust across calls, so check
 * it. Stores the length of the common prefix.
 */
static int common_prefix(const struct fg_folded *m, const struct fg_stack *prev,
			 const struct fg_stack *cur, bool check, size_t *ret)
{
	size_t n = MIN(prev->n_frames, cur->n_frames), k = 0;

	while (k < n && prev->frames[k] == cur->frames[k])
		k++;
	if (check) {
		/* Names with an embedded NUL can tie; their ranks are arbitrary, so let them pass. */
		if (k < n && strcmp(fg_folded__name(m, prev->frames[k]),
				    fg_folded__name(m, cur->frames[k])) > 0)
			return -EINVAL;
		if (k == n && prev->n_frames > cur->n_frames)
			return -EINVAL;
	}
	*ret = k;
	return 0;
}

int fg_flametree_build(const struct fg_folded *m, const struct fg_flametree_opts *opts,
		       struct fg_flametree *ret)
{
	struct fg_flametree t = { .other_is_after = opts->use_before };
	struct builder b = { .t = &t, .o = opts };
	struct fg_stack prev = {}, cur;
	size_t n_stacks = fg_folded__n_stacks(m);
	double offset = 0;
	int r;

	r = FG_GROW(b.path, b.cap_path, 1);
	if (r < 0)
		goto fail;
	r = add_node(&b, FG_FLAME_ROOT, 0, 0);
	if (r < 0)
		goto fail;

	for (size_t i = 0; i < n_stacks; i++) {
		double v, o;
		size_t common = 0;

		fg_folded__stack(m, i, &cur);
		if (cur.n_frames >= UINT32_MAX - 1) {
			r = -E2BIG;
			goto fail;
		}
		v = opts->use_before ? cur.before : cur.count;
		o = opts->use_before ? cur.count : cur.before;
		if (i > 0) {
			r = common_prefix(m, &prev, &cur, !opts->sequence, &common);
			if (r < 0)
				goto fail;
		}
		close_path(&b, common + 1);
		r = FG_GROW(b.path, b.cap_path, cur.n_frames + 1);
		if (r < 0)
			goto fail;
		for (size_t d = common; d < cur.n_frames; d++) {
			r = add_node(&b, cur.frames[d], (uint32_t)d + 1, offset);
			if (r < 0)
				goto fail;
		}
		for (size_t d = 0; d < b.n_path; d++) {
			t.nodes[b.path[d]].value += v;
			t.nodes[b.path[d]].other += o;
		}
		t.nodes[b.path[b.n_path - 1]].self += v;
		t.nodes[b.path[b.n_path - 1]].self_other += o;
		offset += v;
		t.total_other += o;
		prev = cur;
	}
	close_path(&b, 1);
	t.total = offset;
	if (!(t.total > 0))
		t.n = 0;
	for (size_t i = 0; i < t.n; i++)
		t.max_depth = MAX(t.max_depth, t.nodes[i].depth);
	if (t.n < b.cap) {
		/* The tree lives as long as the output stream; give back what dropping freed. */
		struct fg_flame_node *p = realloc(t.nodes, MAX(t.n, (size_t)1) * sizeof(*p));

		if (p)
			t.nodes = p;
	}
	free(b.path);
	*ret = t;
	return 0;
fail:
	free(b.path);
	free(t.nodes);
	return r;
}

void fg_flametree_done(struct fg_flametree *t)
{
	free(t->nodes);
	*t = (struct fg_flametree){};
}

size_t fg_flametree_bytes(const struct fg_flametree *t)
{
	/* A built tree's array is exactly its nodes (or one, for an empty tree). */
	return t->nodes ? MAX(t->n, (size_t)1) * sizeof(*t->nodes) : 0;
}
