/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The merged call tree the flame-graph renderers draw (SVG and HTML): the
 * model's stacks merged frame by frame into a tree, laid out in pre-order
 * (a parent before its children, children in the model's order), with the
 * frames too narrow to draw already dropped.
 *
 * In a differential model each node carries both profiles: value is the
 * profile that gives the widths (the "after" one, or "before" with
 * use_before), other is the other one.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/folded.h"

#define FG_FLAME_ROOT UINT32_MAX /* the name of the root node, "all" */

struct fg_flame_node {
	double start;      /* width units left of this frame */
	double value;      /* width units in this frame and below */
	double other;      /* the other profile's count; == value unless differential */
	double self;       /* value in this frame itself, not below it */
	double self_other; /* the same for the other profile */
	uint32_t name;     /* model name id, or FG_FLAME_ROOT */
	uint32_t depth;    /* 0 for the root */
};

struct fg_flametree_opts {
	/* Frames with value below this are dropped, with their subtrees; 0 keeps all but empty ones. */
	double min_value;
	bool use_before; /* widths from the before counts (differential --negate) */
	bool sequence;   /* stacks in model order, unsorted: a flame chart */
};

struct fg_flametree {
	struct fg_flame_node *nodes; /* owned; pre-order, nodes[0] the root when n > 0 */
	size_t n;
	double total;       /* sum of the width profile */
	double total_other; /* sum of the other profile */
	uint32_t max_depth;
	bool other_is_after; /* built with use_before */
	size_t n_dropped;    /* frames with samples dropped as narrower than min_value */
};

/*
 * Builds the tree for model m, which must be sorted (fg_folded__sort())
 * unless opts->sequence. The tree does not borrow the model; its name ids
 * refer to it. Returns 0, -EINVAL for an unsorted model, -E2BIG for one
 * too deep or too large, or -ENOMEM. A model without samples gives n == 0.
 */
int fg_flametree_build(const struct fg_folded *m, const struct fg_flametree_opts *opts,
		       struct fg_flametree *ret);
void fg_flametree_done(struct fg_flametree *t);
/* Heap bytes a built tree holds, for memory accounting. */
size_t fg_flametree_bytes(const struct fg_flametree *t);
