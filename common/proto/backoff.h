/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * How long a client waits before it tries a server again: its own
 * schedule, which grows with each failure in a row, is capped, and is
 * drawn with jitter so that clients that failed together do not come back
 * together; and what the server asks for with Retry-After, which comes
 * from the network and is parsed as hostile input.
 *
 * Pure: the random draws come from the caller's source, and the time a
 * Retry-After date is taken against is the caller's, so tests know every
 * delay.
 */

#include <stddef.h>
#include <stdint.h>

struct fg_backoff {
	int64_t first_ms;  /* the first failure's delay, before jitter (> 0) */
	int64_t max_ms;    /* no delay is longer (>= first_ms) */
	uint32_t failures; /* in a row, since the last success */
};

/*
 * One more failure: its delay, first_ms doubled for each failure before it
 * in the row, capped at max_ms, then drawn at random in its upper half
 * ("equal jitter": spread, yet never shorter than half the schedule, so
 * the waits still grow). random returns 64 random bits from ctx each call
 * (borrowed for the call).
 */
int64_t fg_backoff__next(struct fg_backoff *b, uint64_t (*random)(void *ctx), void *ctx);

/* A success: the next failure's delay is first_ms again. */
void fg_backoff__reset(struct fg_backoff *b);

/*
 * A Retry-After header's value (RFC 9110, 10.2.3), s[0..len) without its
 * name, blanks around it allowed: delay-seconds (digits), or an HTTP-date
 * in any of the three forms a recipient must accept:
 *
 *   Sun, 06 Nov 1994 08:49:37 GMT     IMF-fixdate
 *   Sunday, 06-Nov-94 08:49:37 GMT    RFC 850 (a two-digit year more than
 *                                     50 years ahead is the century before)
 *   Sun Nov  6 08:49:37 1994          asctime
 *
 * The wait it asks for at now_ms (Unix ms) goes in *ret_ms: 0 for a date
 * past, never more than max_ms (a larger one, however large, is capped,
 * not refused). 0, or -EINVAL for anything else (a day that the month does
 * not have, a time past 23:59:60, a sign, a fraction, a zone other than
 * GMT), leaving *ret_ms untouched.
 */
int fg_retry_after_parse(const char *s, size_t len, int64_t now_ms, int64_t max_ms,
			 int64_t *ret_ms);
