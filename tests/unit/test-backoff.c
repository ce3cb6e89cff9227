/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* When a client tries a server again: its schedule and the server's Retry-After (common/proto/backoff.h). */
#include <errno.h>
#include <string.h>

#include "proto/backoff.h"
#include "proto/when.h"
#include "test.h"

#define DAY_MS (24 * 3600 * 1000LL)

/* A random source that returns what the test says. */
static uint64_t fixed(void *ctx)
{
	return *(uint64_t *)ctx;
}

TEST(schedule_grows_is_capped_and_resets)
{
	struct fg_backoff b = { .first_ms = 1000, .max_ms = 8000 };
	static const int64_t want[] = { 1000, 2000, 4000, 8000, 8000, 8000 };
	uint64_t r = 0;

	/* A draw of 0 is the schedule itself: doubling to the cap, then staying there. */
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ASSERT_U64_EQ(fg_backoff__next(&b, fixed, &r), want[i]);
	fg_backoff__reset(&b);
	ASSERT_U64_EQ(fg_backoff__next(&b, fixed, &r), 1000);
	/* A row of any length: no shift past the cap, no overflow. */
	b.failures = UINT32_MAX;
	ASSERT_U64_EQ(fg_backoff__next(&b, fixed, &r), 8000);
	ASSERT_TRUE(b.failures == UINT32_MAX);
	b = (struct fg_backoff){ .first_ms = 1000, .max_ms = INT64_MAX, .failures = 200 };
	ASSERT_U64_EQ(fg_backoff__next(&b, fixed, &r), INT64_MAX);
}

TEST(jitter_stays_in_the_upper_half)
{
	struct fg_backoff b = { .first_ms = 1000, .max_ms = 60000 };
	uint64_t r;

	/* The largest draw takes half off (delay / 2 + 1 values: 0 to delay / 2). */
	r = 500;
	ASSERT_U64_EQ(fg_backoff__next(&b, fixed, &r), 500);
	r = 1001;
	ASSERT_U64_EQ(fg_backoff__next(&b, fixed, &r), 2000);
	r = 1000;
	ASSERT_U64_EQ(fg_backoff__next(&b, fixed, &r), 3000);
	/* Any draw at all: between half the schedule and the schedule. */
	for (uint64_t x = 1; x; x <<= 1) {
		struct fg_backoff c = { .first_ms = 1000, .max_ms = 60000, .failures = 3 };
		int64_t d;

		r = x * 0x9e3779b97f4a7c15ull;
		d = fg_backoff__next(&c, fixed, &r);
		ASSERT_TRUE(d >= 4000 && d <= 8000);
	}
	/* A first of 1 ms or less still waits: 1 ms. */
	b = (struct fg_backoff){ .first_ms = 0, .max_ms = 0 };
	r = 7;
	ASSERT_U64_EQ(fg_backoff__next(&b, fixed, &r), 1);
}

static void retry_after(const char *s, int64_t now, int64_t max, int64_t want)
{
	int64_t ms = -1;

	ASSERT_OK(fg_retry_after_parse(s, strlen(s), now, max, &ms));
	ASSERT_U64_EQ(ms, want);
}

static void bad_retry_after(const char *s, int64_t now)
{
	int64_t ms = -1;

	ASSERT_ERR(fg_retry_after_parse(s, strlen(s), now, 300000, &ms), -EINVAL);
	ASSERT_TRUE(ms == -1);
}

TEST(retry_after_seconds)
{
	retry_after("120", 0, 300000, 120000);
	retry_after(" \t5 ", 0, 300000, 5000);
	retry_after("0", 0, 300000, 0);
	retry_after("007", 0, 300000, 7000);
	/* Above the cap, however far: the cap. */
	retry_after("301", 0, 300000, 300000);
	retry_after("99999999999999999999999999999999999999999999", 0, 300000, 300000);
	retry_after("9223372036854775807", 0, INT64_MAX, INT64_MAX);
	bad_retry_after("", 0);
	bad_retry_after("  ", 0);
	bad_retry_after("-5", 0);
	bad_retry_after("+5", 0);
	bad_retry_after("5.5", 0);
	bad_retry_after("5s", 0);
	bad_retry_after("1e3", 0);
	bad_retry_after("5 5", 0);
	bad_retry_after("0x10", 0);
	/* The value is its length, not its NUL: "12" of "123". */
	{
		int64_t ms;

		ASSERT_OK(fg_retry_after_parse("123", 2, 0, 300000, &ms));
		ASSERT_U64_EQ(ms, 12000);
	}
}

TEST(retry_after_dates)
{
	/* Sun, 06 Nov 1994 08:49:37 GMT, RFC 9110's example, 10 s from now. */
	int64_t at = fg_days_from_civil(1994, 11, 6) * DAY_MS + (8 * 3600 + 49 * 60 + 37) * 1000LL;
	int64_t now = at - 10000;

	retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now, 300000, 10000);
	retry_after("Sunday, 06-Nov-94 08:49:37 GMT", now, 300000, 10000);
	retry_after("Sun Nov  6 08:49:37 1994", now, 300000, 10000);
	retry_after("  Sun, 06 Nov 1994 08:49:37 GMT\t", now, 300000, 10000);
	/* The day's name is not checked against the date (RFC 9110 does not ask it). */
	retry_after("Mon, 06 Nov 1994 08:49:37 GMT", now, 300000, 10000);
	/* A date past: now. A date far ahead: the cap. */
	retry_after("Sun, 06 Nov 1994 08:49:37 GMT", at + 5000, 300000, 0);
	retry_after("Fri, 31 Dec 9999 23:59:59 GMT", now, 300000, 300000);
	retry_after("Thu, 01 Jan 1970 00:00:00 GMT", INT64_MAX, 300000, 0);
	retry_after("Fri, 31 Dec 9999 23:59:59 GMT", INT64_MIN, 300000, 300000);
	/* Leap days, and a leap second. */
	retry_after("Thu, 29 Feb 2024 00:00:00 GMT", 0, INT64_MAX,
		    fg_days_from_civil(2024, 2, 29) * DAY_MS);
	retry_after("Tue, 29 Feb 2000 00:00:00 GMT", 0, INT64_MAX,
		    fg_days_from_civil(2000, 2, 29) * DAY_MS);
	retry_after("Sat, 31 Dec 2016 23:59:60 GMT", 0, INT64_MAX,
		    fg_days_from_civil(2017, 1, 1) * DAY_MS);
	bad_retry_after("Wed, 29 Feb 2023 00:00:00 GMT", now);
	bad_retry_after("Thu, 29 Feb 1900 00:00:00 GMT", now);
	bad_retry_after("Sun, 31 Nov 1994 08:49:37 GMT", now);
	bad_retry_after("Sun, 00 Nov 1994 08:49:37 GMT", now);
	bad_retry_after("Sun, 06 Nov 1994 24:00:00 GMT", now);
	bad_retry_after("Sun, 06 Nov 1994 08:60:00 GMT", now);
	bad_retry_after("Sun, 06 Nov 1994 08:49:61 GMT", now);
	/* Names are case-sensitive; the zone is GMT; nothing after it. */
	bad_retry_after("sun, 06 Nov 1994 08:49:37 GMT", now);
	bad_retry_after("Sun, 06 nov 1994 08:49:37 GMT", now);
	bad_retry_after("Sun, 06 Nov 1994 08:49:37 UTC", now);
	bad_retry_after("Sun, 06 Nov 1994 08:49:37 +0000", now);
	bad_retry_after("Sun, 06 Nov 1994 08:49:37 GMT x", now);
	bad_retry_after("Sun, 6 Nov 1994 08:49:37 GMT", now);
	bad_retry_after("Sunday, 06 Nov 1994 08:49:37 GMT", now);
	bad_retry_after("Sonday, 06-Nov-94 08:49:37 GMT", now);
	bad_retry_after("Sun Nov 6 08:49:37 1994", now);
	bad_retry_after("Sun Nov 06 08:49:37 94", now);
	bad_retry_after("Xyz, 06 Nov 1994 08:49:37 GMT", now);
	/* Every cut of a good date is refused. */
	{
		static const char *const good[] = { "Sun, 06 Nov 1994 08:49:37 GMT",
						    "Sunday, 06-Nov-94 08:49:37 GMT",
						    "Sun Nov  6 08:49:37 1994" };

		for (size_t g = 0; g < 3; g++)
			for (size_t n = 1; n < strlen(good[g]); n++) {
				int64_t ms = -1;

				ASSERT_ERR(fg_retry_after_parse(good[g], n, now, 300000, &ms),
					   -EINVAL);
			}
	}
}

TEST(retry_after_rfc850_years)
{
	/* At 2025-06-01: "70" is 2070 (45 years ahead), "80" 1980 (55 would be too far). */
	int64_t now = fg_days_from_civil(2025, 6, 1) * DAY_MS;

	retry_after("Monday, 01-Jan-70 00:00:00 GMT", now, INT64_MAX,
		    fg_days_from_civil(2070, 1, 1) * DAY_MS - now);
	retry_after("Tuesday, 01-Jan-80 00:00:00 GMT", now, INT64_MAX, 0);
	retry_after("Wednesday, 01-Jan-25 00:00:00 GMT", now, INT64_MAX, 0);
	retry_after("Thursday, 01-Jun-25 00:00:10 GMT", now, INT64_MAX, 10000);
	retry_after("Friday, 01-Jan-75 00:00:00 GMT", now, INT64_MAX,
		    fg_days_from_civil(2075, 1, 1) * DAY_MS - now);
	retry_after("Saturday, 01-Jan-76 00:00:00 GMT", now, INT64_MAX, 0);
	/* A clock before 1970 still finds its year: 1940's "50" is 1950. */
	retry_after("Sunday, 01-Jan-50 00:00:00 GMT", fg_days_from_civil(1940, 1, 1) * DAY_MS,
		    INT64_MAX,
		    (fg_days_from_civil(1950, 1, 1) - fg_days_from_civil(1940, 1, 1)) * DAY_MS);
}

TEST(retry_after_clock_far_off)
{
	int64_t ms = -1;

	/* A clock at either end of time: its RFC 850 year is no four-digit year, refused. */
	ASSERT_ERR(fg_retry_after_parse("Sunday, 06-Nov-94 08:49:37 GMT", 30, INT64_MAX, 300000,
					&ms),
		   -EINVAL);
	ASSERT_ERR(fg_retry_after_parse("Sunday, 06-Nov-94 08:49:37 GMT", 30, INT64_MIN, 300000,
					&ms),
		   -EINVAL);
	ASSERT_TRUE(ms == -1);
}
