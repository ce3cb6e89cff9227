/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Times and spans as people type them for queries of the always-on window
 * (`fgctl snapshot --since 03:10 --until -5m`). Pure: the caller passes the
 * current time and its local UTC offset, so results do not depend on the
 * process's time zone or clock and tests are exact.
 */

#include <stdint.h>

/*
 * A span: a positive number with an optional unit s, m, h or d, or several
 * ("1h30m"); a bare number is seconds. Stores milliseconds in *ret_ms.
 * 0 or -EINVAL (also for zero, and for more than 10 years).
 */
int fg_parse_span(const char *s, uint64_t *ret_ms);

/*
 * A point in time, as Unix milliseconds in *ret_ms:
 *   "now";
 *   relative: "-10m", "-1h30m", "-90" (seconds), a span before now_ms;
 *   "HH:MM" or "HH:MM:SS": the latest such local time not after now_ms
 *     (today, or yesterday if that is still to come);
 *   ISO 8601: "YYYY-MM-DD", "YYYY-MM-DDTHH:MM[:SS[.fff]]" (also with a
 *     space for the T), local time unless followed by "Z" or "+HH:MM",
 *     "-HH:MM", "+HHMM", "+HH";
 *   "@SECONDS[.fff]", or bare "SECONDS.fff" (or 9 digits or more): Unix
 *     time, to the ms.
 * utc_offset_s is local time minus UTC (3600 for CET). 0 or -EINVAL.
 */
int fg_parse_time(const char *s, int64_t now_ms, int32_t utc_offset_s, int64_t *ret_ms);

/* Days since 1970-01-01 of a proleptic Gregorian date (month 1-12). */
int64_t fg_days_from_civil(int64_t y, unsigned m, unsigned d);
