/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The folded-stack model: a multiset of stacks (root first), each a list of
 * interned frame names with a count. This is the FlameGraph "folded" format
 * (`frame;frame;frame count`) held in memory. The daemon builds one per
 * recording; the renderers read it.
 *
 * Counts are doubles so that fractional counts and normalised differential
 * profiles need no second model; integral counts below 2^53 are exact.
 *
 * A differential model carries a second count per stack, the "before"
 * profile, as flamegraph.pl reads it from `frame;frame before after` lines:
 * the count is the "after" profile and gives the widths. A stack added with
 * one count has before == count, no change.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/emit.h"
#include "base/macro.h"

struct fg_folded;

/* Counts below this (but above 0) are refused: their widths would not be finite. */
#define FG_FOLDED_MIN_COUNT 1e-9

struct fg_stack {
	const uint32_t *frames; /* borrowed until the model changes or is freed */
	size_t n_frames;
	double count;  /* the profile, or "after" in a differential one */
	double before; /* equal to count unless added as a pair */
};

/* Caller frees with fg_folded__free(). NULL on ENOMEM. */
struct fg_folded *fg_folded__new(void);
struct fg_folded *fg_folded__free(struct fg_folded *f);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_folded *, fg_folded__free);

/*
 * Interns a frame name, cleaned as common/profile/framename.h says: every name in a
 * model, from any source, is valid UTF-8 without control characters or ';',
 * so no output made from a model needs to check its names again. Names that
 * differ only in what cleaning replaced are one name. 0 or a negative errno.
 */
int fg_folded__intern(struct fg_folded *f, const char *name, size_t len, uint32_t *ret_id);
/* Borrowed until the model is freed. */
const char *fg_folded__name(const struct fg_folded *f, uint32_t id);
size_t fg_folded__n_names(const struct fg_folded *f);
/* Length of the name in bytes (names hold no NUL byte: cleaning replaced it). */
size_t fg_folded__name_len(const struct fg_folded *f, uint32_t id);

/*
 * Adds count to the stack frames[0..n) (root first, n >= 1), merging with an
 * identical stack. -EINVAL for an empty stack or a negative/non-finite count;
 * -ERANGE when the total would no longer be finite; -E2BIG when the stack is
 * new and the model holds its maximum already.
 */
int fg_folded__add(struct fg_folded *f, const uint32_t *frames, size_t n, double count);

/*
 * As fg_folded__add(), and the stack's id in *ret_id: its position in the
 * order stacks were first added, which neither later additions nor sorting
 * change (fg_folded__stack_by_id()). A sequence model (below) gives a stack
 * that recurs after another a new id.
 */
int fg_folded__add_id(struct fg_folded *f, const uint32_t *frames, size_t n, double count,
		      uint32_t *ret_id);

/*
 * As fg_folded__add(), with separate before and after counts; marks the
 * model differential. Both counts must be finite and >= 0.
 */
int fg_folded__add_pair(struct fg_folded *f, const uint32_t *frames, size_t n, double before,
			double count);

/*
 * Interns the frames of a stack written as folded text without its count,
 * "frame;frame;...", root first, each name cleaned as fg_folded__intern()
 * does. Their ids in *ret_frames (borrowed until the next call on the
 * model), *ret_n of them. 0, -EINVAL for an empty text, or -ENOMEM.
 */
int fg_folded__intern_stack(struct fg_folded *f, const char *text, size_t len,
			    const uint32_t **ret_frames, size_t *ret_n);

/*
 * Parses one line of folded text (without its newline; a trailing CR is
 * ignored) and adds it, its frame names cleaned as fg_folded__intern() does. A line ending in two counts is a differential pair,
 * "stack before after", as flamegraph.pl reads it. Returns 1 if a stack was
 * added, 0 for a blank or '#' comment line, -EINVAL if the line is
 * malformed (no count, or no frames), -ERANGE for a count too large for a
 * double or below FG_FOLDED_MIN_COUNT, or one that would make the total
 * infinite, or another negative errno.
 */
int fg_folded__add_line(struct fg_folded *f, const char *line, size_t len);

/*
 * Makes the model a sequence, for flame charts: a stack merges only with
 * the one added just before it, and fg_folded__sort() keeps the order of
 * addition. Call before the first add.
 */
void fg_folded__set_sequence(struct fg_folded *f);
bool fg_folded__is_sequence(const struct fg_folded *f);

/* Caps the number of distinct stacks (default: unlimited up to 2^32 - 2). */
void fg_folded__set_max_stacks(struct fg_folded *f, size_t max);

size_t fg_folded__n_stacks(const struct fg_folded *f);
/* Heap bytes held, for memory accounting. */
size_t fg_folded__bytes(const struct fg_folded *f);
double fg_folded__total(const struct fg_folded *f);
/* The sum of the before counts; equal to the total unless pairs were added. */
double fg_folded__total_before(const struct fg_folded *f);
/* True once a stack was added as a pair, or after fg_folded__mark_diff(). */
bool fg_folded__is_diff(const struct fg_folded *f);
/* Marks the model differential with no pair added, e.g. one built empty from a differential one. */
void fg_folded__mark_diff(struct fg_folded *f);

/*
 * Orders the stacks deterministically: frame by frame, by byte order of the
 * names, shorter stack first on a common prefix. Must be called after the
 * last add and before fg_folded__stack(). 0 or -ENOMEM.
 */
int fg_folded__sort(struct fg_folded *f);

/* The i-th stack in sorted order; i < fg_folded__n_stacks(). */
void fg_folded__stack(const struct fg_folded *f, size_t i, struct fg_stack *ret);
/*
 * Adds src's stack id (fg_folded__add_id()) to dst with count, as
 * fg_folded__add_id() does, its names interned in dst through map: one
 * entry per name of src, UINT32_MAX for a name not in dst yet, which this
 * fills in. 0 or a negative errno from dst.
 */
int fg_folded__add_from(struct fg_folded *dst, const struct fg_folded *src, uint32_t id,
			double count, uint32_t *map, uint32_t *ret_id);

/* The stack with id (fg_folded__add_id()); id < fg_folded__n_stacks(). Sorted or not. */
void fg_folded__stack_by_id(const struct fg_folded *f, uint32_t id, struct fg_stack *ret);

/*
 * Writes the sorted stacks as folded text, one "a;b;c count\n" line each
 * ("a;b;c before after\n" in a differential model),
 * resuming from *cursor (start at 0). Returns 1 when all lines are written,
 * 0 after at least budget bytes with more to come, or the sink's error.
 */
int fg_folded__emit(const struct fg_folded *f, size_t *cursor, fg_write_fn fn, void *ctx,
		    size_t budget);

/*
 * Formats a count as folded text does: all digits when integral, else with
 * six decimals or six significant digits, whichever is more, trailing
 * zeros dropped.
 */
size_t fg_format_count(double count, char *buf, size_t size);
