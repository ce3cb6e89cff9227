/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A timed profile: every sample with the time it was taken and the stack it
 * hit. A folded model sums samples away; this keeps when each happened, so
 * that a heat map can show how they spread over each second (common/render/heatmap)
 * and any range of time can be drawn as its own flame graph
 * (fg_timed__range()).
 *
 * Stacks live in a folded model (common/profile/folded) owned by the profile, which
 * interns them (fg_folded__add_id()): its counts are always the whole
 * profile's, and a sample refers to its stack by id. A sample is its time
 * in ms on the profile's clock, its stack and its weight in the profile's
 * unit:
 *   - FG_TIMED_SAMPLES: each sample counts its weight (1, or more for
 *     samples merged at one time), at one instant;
 *   - FG_TIMED_US: microseconds of time that ended at the sample's time: an
 *     off-CPU block, or an on-CPU sample of a wall-clock profile (1/F s). A
 *     range of time gets the part of each that lies inside it.
 * A weight is below 2^32: a longer block is split into samples that end
 * where each part does.
 *
 * A profile may say the period it covers (fg_timed__set_period()): a
 * recording's, from its start to its stop, which samples need not reach.
 *
 * The text form, which fgd sends and fgctl reads and writes
 * (docs/PROTOCOL.md, "Timed profiles"):
 *   fgd-timed 1 clock=unix unit=samples start=1764205200123 since=... until=...
 *   s comm;main;work
 *   0 0
 *   3 0 2
 * The header line first; then "s STACK" lines, each the next stack id from
 * 0, folded frames root first; then one line per sample, "DELTA STACK
 * [WEIGHT]", DELTA the ms after the previous sample (the first: after
 * start), in time order. A stack line may come anywhere before its first
 * use. '#' lines are comments.
 *
 * Pure; not thread-safe.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/emit.h"
#include "base/macro.h"
#include "profile/folded.h"

enum fg_timed_clock {
	FG_TIMED_CLOCK_UNIX, /* ms since the Unix epoch */
	FG_TIMED_CLOCK_PERF, /* ms on perf's clock (perf script's times: since boot, by default) */
};

enum fg_timed_unit {
	FG_TIMED_SAMPLES,
	FG_TIMED_US,
};

/*
 * Times, periods and ranges lie within FG_TIMED_TIME_MAX ms either side of
 * 0 (278 years of Unix ms): their µs are exact in a double, and a time plus
 * a span cannot overflow. Samples and text past it are refused (-ERANGE);
 * periods and ranges are clamped to it, so INT64_MAX says "no end".
 */
#define FG_TIMED_TIME_MAX (INT64_C(1) << 43)

/* The most samples a profile holds: past it fg_timed__add() fails with -E2BIG. */
#define FG_TIMED_MAX_SAMPLES (UINT32_MAX - 1)

struct fg_timed_sample {
	int64_t time; /* ms on the profile's clock */
	uint32_t stack;
	uint32_t weight;
};

struct fg_timed;

/* Caller frees *ret with fg_timed__free(). 0 or -ENOMEM. */
int fg_timed__new(enum fg_timed_unit unit, enum fg_timed_clock clock, struct fg_timed **ret);
struct fg_timed *fg_timed__free(struct fg_timed *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_timed *, fg_timed__free);

/* The stacks: names are interned here for fg_timed__add(). Borrowed until the profile is freed. */
struct fg_folded *fg_timed__model(struct fg_timed *t);
const struct fg_folded *fg_timed__model_const(const struct fg_timed *t);

enum fg_timed_unit fg_timed__unit(const struct fg_timed *t);
enum fg_timed_clock fg_timed__clock(const struct fg_timed *t);
/* The unit's name in outputs: "samples" or "us". */
const char *fg_timed_unit_name(enum fg_timed_unit unit);
const char *fg_timed_clock_name(enum fg_timed_clock clock);

/*
 * Adds a sample of weight (>= 1) at time (ms) on the stack frames[0..n)
 * (root first, ids from the model), splitting a weight of 2^32 or more
 * (FG_TIMED_US: each part ending where it does). 0, -EINVAL (no frames, a
 * weight of 0), -E2BIG (too many samples, or a new stack past the model's
 * cap), -ERANGE, -ENOMEM.
 */
int fg_timed__add(struct fg_timed *t, int64_t time, const uint32_t *frames, size_t n,
		  uint64_t weight);

/*
 * Adds a sample of weight (1 to UINT32_MAX) at time on stack id, which the
 * model holds (fg_folded__add_id() on fg_timed__model()). 0, -EINVAL, -E2BIG,
 * -ERANGE, -ENOMEM.
 */
int fg_timed__add_id(struct fg_timed *t, int64_t time, uint32_t stack, uint32_t weight);

/*
 * The period the profile covers, ms [since, until), clamped to
 * FG_TIMED_TIME_MAX; both 0: none said (the samples' span).
 */
void fg_timed__set_period(struct fg_timed *t, int64_t since, int64_t until);
void fg_timed__period(const struct fg_timed *t, int64_t *ret_since, int64_t *ret_until);

/*
 * Orders the samples by time (stable: samples of one time keep their order).
 * Must be called after the last add and before fg_timed__samples(),
 * fg_timed__range() and fg_timed__emit(). 0 or -ENOMEM.
 */
int fg_timed__sort(struct fg_timed *t);

size_t fg_timed__n_samples(const struct fg_timed *t);
/* The samples in time order (after fg_timed__sort()); borrowed until the profile changes. */
const struct fg_timed_sample *fg_timed__samples(const struct fg_timed *t);
/* The sum of the weights. */
uint64_t fg_timed__total(const struct fg_timed *t);
/* Heap bytes held, the model's included. */
size_t fg_timed__bytes(const struct fg_timed *t);

/*
 * The part of a sample s that falls in [since, until) (ms): its weight if
 * its time is in it (FG_TIMED_SAMPLES), or the share of the µs it stands
 * for that lie in it (FG_TIMED_US).
 */
double fg_timed_share(enum fg_timed_unit unit, const struct fg_timed_sample *s, int64_t since,
		      int64_t until);

/* Returns true for the stacks a range keeps; frames[0] is the root (the process). */
typedef bool (*fg_timed_match_fn)(void *ctx, const struct fg_folded *model, const uint32_t *frames,
				  size_t n);

/*
 * Adds to out the stacks of the samples in [since, until) (ms), each with
 * its share of the range (fg_timed_share()), the names interned in out.
 * match may be NULL: every stack. 0 or a negative errno from out.
 */
int fg_timed__range(const struct fg_timed *t, int64_t since, int64_t until, fg_timed_match_fn match,
		    void *ctx, struct fg_folded *out);

/*
 * The part of t (sorted) in [since, until) (ms): its samples there, µs ones
 * cut to their part inside, over that period. Caller frees *ret with
 * fg_timed__free(). 0 or a negative errno.
 */
int fg_timed__between(const struct fg_timed *t, int64_t since, int64_t until,
		      struct fg_timed **ret);

/*
 * The samples of t whose stacks match, as a new profile with t's unit and
 * clock (names interned anew). Caller frees *ret with fg_timed__free().
 * 0 or a negative errno.
 */
int fg_timed__filter(const struct fg_timed *t, fg_timed_match_fn match, void *ctx,
		     struct fg_timed **ret);

/*
 * Parses one line of the text form (without its newline; a trailing CR is
 * ignored). Returns 1 for a sample, 0 for any other line, -EINVAL for a
 * malformed line (a sample before the header, of a stack not defined, or
 * whose time would overflow; a header of another version, or with a clock
 * or unit that disagrees with the profile's, is -EPROTONOSUPPORT), or an
 * errno from the model. A profile read this way takes the header's start.
 */
int fg_timed__add_line(struct fg_timed *t, const char *line, size_t len);
/* Whether the header line was read (fg_timed__add_line()). */
bool fg_timed__has_header(const struct fg_timed *t);

/*
 * Writes the profile (sorted) in the text form, resuming from *cursor (start
 * at 0): at least budget bytes, or the rest. 1 when all is written, 0 while
 * more remains, or the sink's error.
 */
int fg_timed__emit(const struct fg_timed *t, size_t *cursor, fg_write_fn fn, void *ctx,
		   size_t budget);
