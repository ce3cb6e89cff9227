/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "base/macro.h"
#include "proto/backoff.h"
#include "proto/when.h"

#define DAY_MS (24 * 3600 * 1000LL)

int64_t fg_backoff__next(struct fg_backoff *b, uint64_t (*random)(void *ctx), void *ctx)
{
	int64_t max = MAX(b->max_ms, (int64_t)1), delay = MIN(MAX(b->first_ms, (int64_t)1), max);

	/* Doubled while under the cap: never shifted past it, however long the row. */
	for (uint32_t i = 0; i < b->failures && delay < max; i++)
		delay = delay > max / 2 ? max : delay * 2;
	if (b->failures < UINT32_MAX)
		b->failures++;
	return delay - (int64_t)(random(ctx) % (uint64_t)(delay / 2 + 1));
}

void fg_backoff__reset(struct fg_backoff *b)
{
	b->failures = 0;
}

/* The value being read: s[pos..len). */
struct reader {
	const char *s;
	size_t len, pos;
};

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Exactly the text lit next. */
static bool lit(struct reader *r, const char *lit)
{
	size_t n = strlen(lit);

	if (r->len - r->pos < n || memcmp(r->s + r->pos, lit, n) != 0)
		return false;
	r->pos += n;
	return true;
}

/* Exactly n digits next, as a number. */
static bool digits(struct reader *r, unsigned n, unsigned *ret)
{
	unsigned v = 0;

	if (r->len - r->pos < n)
		return false;
	for (unsigned i = 0; i < n; i++) {
		if (!is_digit(r->s[r->pos + i]))
			return false;
		v = v * 10 + (unsigned)(r->s[r->pos + i] - '0');
	}
	r->pos += n;
	*ret = v;
	return true;
}

/* One of names next (case matters: HTTP-date's names are case-sensitive); its index. */
static bool one_of(struct reader *r, const char *const *names, unsigned n, unsigned *ret)
{
	for (unsigned i = 0; i < n; i++)
		if (lit(r, names[i])) {
			*ret = i;
			return true;
		}
	return false;
}

static const char *const days[] = { "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun" };
/* rfc850-date's whole names; each starts with its short one, which is read first. */
static const char *const day_tails[] = { "day", "sday", "nesday", "rsday", "day", "urday", "day" };
static const char *const months[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
				      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };

struct date {
	unsigned year, month, day, hour, min, sec; /* month 1-12 */
};

/* "HH:MM:SS". */
static bool time_of_day(struct reader *r, struct date *d)
{
	return digits(r, 2, &d->hour) && lit(r, ":") && digits(r, 2, &d->min) && lit(r, ":") &&
	       digits(r, 2, &d->sec);
}

static bool month(struct reader *r, struct date *d)
{
	if (!one_of(r, months, ELEMENTSOF(months), &d->month))
		return false;
	d->month++;
	return true;
}

/* The year holding Unix day z (Howard Hinnant's civil_from_days, its year alone). */
static int64_t year_of_day(int64_t z)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	return yoe + era * 400 + (mp >= 10);
}

/* An HTTP-date, after its day name (given: the short one). */
static bool http_date(struct reader *r, int64_t now_ms, unsigned day, struct date *d)
{
	unsigned yy;
	int64_t now_year, year;

	if (lit(r, ", "))
		/* IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT". */
		return digits(r, 2, &d->day) && lit(r, " ") && month(r, d) && lit(r, " ") &&
		       digits(r, 4, &d->year) && lit(r, " ") && time_of_day(r, d) && lit(r, " GMT");
	if (lit(r, " ")) {
		/* asctime: "Sun Nov  6 08:49:37 1994", a one-digit day after a blank. */
		if (!month(r, d) || !lit(r, " "))
			return false;
		if (!(lit(r, " ") ? digits(r, 1, &d->day) : digits(r, 2, &d->day)))
			return false;
		return lit(r, " ") && time_of_day(r, d) && lit(r, " ") && digits(r, 4, &d->year);
	}
	/* RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT". */
	if (!lit(r, day_tails[day]) || !lit(r, ", ") || !digits(r, 2, &d->day) || !lit(r, "-") ||
	    !month(r, d) || !lit(r, "-") || !digits(r, 2, &yy) || !lit(r, " ") ||
	    !time_of_day(r, d) || !lit(r, " GMT"))
		return false;
	/* "More than 50 years in the future": the most recent past year of those digits. */
	now_year = year_of_day(now_ms / DAY_MS - (now_ms % DAY_MS < 0));
	year = now_year - now_year % 100 + yy;
	if (year > now_year + 50)
		year -= 100;
	/* The years the other forms can write: a clock far off makes no date beyond them. */
	if (year < 0 || year > 9999)
		return false;
	d->year = (unsigned)year;
	return true;
}

static unsigned days_in_month(unsigned year, unsigned month)
{
	static const unsigned char n[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;

	return n[month - 1] + (month == 2 && leap);
}

/* The wait until t_ms from now_ms: 0 for a time past, max_ms at most. */
static int64_t wait_until(int64_t t_ms, int64_t now_ms, int64_t max_ms)
{
	int64_t wait;

	if (__builtin_sub_overflow(t_ms, now_ms, &wait))
		wait = t_ms > now_ms ? INT64_MAX : 0;
	return MIN(MAX(wait, (int64_t)0), max_ms);
}

int fg_retry_after_parse(const char *s, size_t len, int64_t now_ms, int64_t max_ms, int64_t *ret_ms)
{
	struct reader r = { .s = s, .len = len };
	struct date d = {};
	unsigned day;

	max_ms = MAX(max_ms, (int64_t)0);
	/* OWS both sides: what a header line keeps after its colon. */
	while (r.len > 0 && (s[r.len - 1] == ' ' || s[r.len - 1] == '\t'))
		r.len--;
	while (r.pos < r.len && (s[r.pos] == ' ' || s[r.pos] == '\t'))
		r.pos++;
	if (r.pos == r.len)
		return -EINVAL;
	if (is_digit(s[r.pos])) {
		int64_t cap_s = max_ms / 1000 + 1, sec = 0;

		/* delay-seconds: saturated past the cap, so that no length of digits overflows. */
		for (; r.pos < r.len; r.pos++) {
			if (!is_digit(s[r.pos]))
				return -EINVAL;
			if (sec < cap_s)
				sec = sec * 10 + (s[r.pos] - '0');
		}
		*ret_ms = sec >= cap_s ? max_ms : MIN(sec * 1000, max_ms);
		return 0;
	}
	if (!one_of(&r, days, ELEMENTSOF(days), &day) || !http_date(&r, now_ms, day, &d) ||
	    r.pos != r.len)
		return -EINVAL;
	if (d.month < 1 || d.month > 12 || d.day < 1 || d.day > days_in_month(d.year, d.month) ||
	    d.hour > 23 || d.min > 59 || d.sec > 60)
		return -EINVAL;
	*ret_ms = wait_until(fg_days_from_civil(d.year, d.month, d.day) * DAY_MS +
				     ((int64_t)d.hour * 3600 + d.min * 60 + d.sec) * 1000,
			     now_ms, max_ms);
	return 0;
}
