/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Spans of time (ms), and what a set of them leaves out of a period: how a
 * query of the always-on history tells time no slice covers (fgd was not
 * sampling: stopped, or its loop stalled) from time that was covered and
 * idle. Pure.
 */

#include <stddef.h>
#include <stdint.h>

struct fg_span {
	int64_t start, end; /* [start, end) */
};

/*
 * Sorts v[0..n) and unites the spans that overlap or abut, in place; empty
 * ones go. Returns how many are left.
 */
size_t fg_spans_unite(struct fg_span *v, size_t n);

/*
 * The parts of [since, until) that the united spans v[0..n) (as
 * fg_spans_unite() leaves them) leave out, each at least min_ms long
 * (shorter ones are not gaps: a scheduling delay, a rounding): the first
 * max into ret (may be NULL with max 0), oldest first. Returns how many
 * there are in all, their ms in *ret_total_ms.
 */
size_t fg_spans_gaps(const struct fg_span *v, size_t n, int64_t since, int64_t until,
		     int64_t min_ms, struct fg_span *ret, size_t max, int64_t *ret_total_ms);
