/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "proto/when.h"

#define MAX_SPAN_MS (10ULL * 366 * 24 * 3600 * 1000)
#define DAY_MS (24LL * 3600 * 1000)

int64_t fg_days_from_civil(int64_t y, unsigned m, unsigned d)
{
	/* Howard Hinnant's days_from_civil. */
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Exactly n digits at *p, advancing it. */
static int digits(const char **p, unsigned n, unsigned *ret)
{
	unsigned v = 0;

	for (unsigned i = 0; i < n; i++) {
		if (!is_digit((*p)[i]))
			return -EINVAL;
		v = v * 10 + (unsigned)((*p)[i] - '0');
	}
	*p += n;
	*ret = v;
	return 0;
}

int fg_parse_span(const char *s, uint64_t *ret_ms)
{
	uint64_t total = 0;
	bool any = false;

	while (*s) {
		uint64_t v = 0, mult = 1000, frac = 0, frac_div = 1;
		bool have = false;

		for (; is_digit(*s); s++, have = true) {
			v = v * 10 + (uint64_t)(*s - '0');
			if (v > MAX_SPAN_MS)
				return -EINVAL;
		}
		if (*s == '.') {
			for (s++; is_digit(*s); s++, have = true)
				if (frac_div < 1000000) {
					frac = frac * 10 + (uint64_t)(*s - '0');
					frac_div *= 10;
				}
		}
		if (!have)
			return -EINVAL;
		switch (*s) {
		case 's':
			mult = 1000;
			s++;
			break;
		case 'm':
			mult = 60 * 1000;
			s++;
			break;
		case 'h':
			mult = 3600 * 1000;
			s++;
			break;
		case 'd':
			mult = 24 * 3600 * 1000;
			s++;
			break;
		case '\0':
			break;
		default:
			return -EINVAL;
		}
		total += v * mult + frac * mult / frac_div;
		if (total > MAX_SPAN_MS)
			return -EINVAL;
		any = true;
	}
	if (!any || total == 0)
		return -EINVAL;
	*ret_ms = total;
	return 0;
}

/* "HH:MM[:SS[.fff]]" at *p: milliseconds since midnight. */
static int clock_time(const char **p, int64_t *ret_ms)
{
	unsigned h, m, sec = 0, ms = 0;

	if (digits(p, 2, &h) < 0 || **p != ':')
		return -EINVAL;
	(*p)++;
	if (digits(p, 2, &m) < 0)
		return -EINVAL;
	if (**p == ':') {
		(*p)++;
		if (digits(p, 2, &sec) < 0)
			return -EINVAL;
		if (**p == '.') {
			unsigned div = 1000;

			for ((*p)++; is_digit(**p); (*p)++)
				if (div > 1) {
					div /= 10;
					ms += (unsigned)(**p - '0') * div;
				}
		}
	}
	if (h > 23 || m > 59 || sec > 60)
		return -EINVAL;
	*ret_ms = (((int64_t)h * 60 + m) * 60 + sec) * 1000 + ms;
	return 0;
}

/* "Z", "+HH:MM", "-HHMM", "+HH", or nothing (local). */
static int zone(const char *p, int32_t local, int32_t *ret_s)
{
	unsigned h, m = 0;
	int sign;

	if (*p == '\0') {
		*ret_s = local;
		return 0;
	}
	if (strcmp(p, "Z") == 0 || strcmp(p, "z") == 0) {
		*ret_s = 0;
		return 0;
	}
	if (*p != '+' && *p != '-')
		return -EINVAL;
	sign = *p == '-' ? -1 : 1;
	p++;
	if (digits(&p, 2, &h) < 0)
		return -EINVAL;
	if (*p == ':')
		p++;
	if (*p && digits(&p, 2, &m) < 0)
		return -EINVAL;
	if (*p || h > 23 || m > 59)
		return -EINVAL;
	*ret_s = sign * (int32_t)(h * 3600 + m * 60);
	return 0;
}

static bool valid_date(unsigned y, unsigned m, unsigned d)
{
	static const unsigned mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	if (m < 1 || m > 12 || d < 1 || d > mdays[m - 1])
		return false;
	return m != 2 || d <= 28 || leap;
}

/* "SECONDS[.fff...]" since the epoch, the whole of p: milliseconds (a finer fraction is cut). */
static int epoch_seconds(const char *p, int64_t *ret_ms)
{
	uint64_t secs = 0, ms = 0, div = 1000;

	if (!is_digit(*p))
		return -EINVAL;
	for (; is_digit(*p); p++) {
		secs = secs * 10 + (uint64_t)(*p - '0');
		if (secs > (1ULL << 40))
			return -EINVAL;
	}
	if (*p == '.') {
		if (!is_digit(p[1]))
			return -EINVAL;
		for (p++; is_digit(*p); p++)
			if (div > 1) {
				div /= 10;
				ms += (uint64_t)(*p - '0') * div;
			}
	}
	if (*p)
		return -EINVAL;
	*ret_ms = (int64_t)(secs * 1000 + ms);
	return 0;
}

int fg_parse_time(const char *s, int64_t now_ms, int32_t utc_offset_s, int64_t *ret_ms)
{
	const char *p = s;
	int64_t t;

	if (utc_offset_s < -24 * 3600 || utc_offset_s > 24 * 3600)
		return -EINVAL;
	if (strcmp(s, "now") == 0) {
		*ret_ms = now_ms;
		return 0;
	}
	if (*s == '-') {
		uint64_t span;

		if (fg_parse_span(s + 1, &span) < 0)
			return -EINVAL;
		*ret_ms = now_ms - (int64_t)span;
		return 0;
	}
	if (*s == '@')
		return epoch_seconds(s + 1, ret_ms);
	/* Bare Unix seconds: with a fraction, or too long for anything else (no date is). */
	if (strspn(s, "0123456789") >= 9 || (is_digit(*s) && s[strspn(s, "0123456789")] == '.'))
		return epoch_seconds(s, ret_ms);
	if (is_digit(s[0]) && is_digit(s[1]) && s[2] == ':') {
		int64_t local_now = now_ms + (int64_t)utc_offset_s * 1000, tod;
		int64_t midnight = local_now - ((local_now % DAY_MS) + DAY_MS) % DAY_MS;

		if (clock_time(&p, &tod) < 0 || *p)
			return -EINVAL;
		t = midnight + tod;
		if (t > local_now)
			t -= DAY_MS;
		*ret_ms = t - (int64_t)utc_offset_s * 1000;
		return 0;
	}
	{
		unsigned y, mo, d;
		int64_t tod = 0;
		int32_t off = utc_offset_s;

		if (digits(&p, 4, &y) < 0 || *p++ != '-' || digits(&p, 2, &mo) < 0 || *p++ != '-' ||
		    digits(&p, 2, &d) < 0 || !valid_date(y, mo, d))
			return -EINVAL;
		if (*p == 'T' || *p == 't' || *p == ' ') {
			p++;
			if (clock_time(&p, &tod) < 0)
				return -EINVAL;
			if (zone(p, utc_offset_s, &off) < 0)
				return -EINVAL;
		} else if (*p) {
			return -EINVAL;
		}
		t = fg_days_from_civil(y, mo, d) * DAY_MS + tod - (int64_t)off * 1000;
		*ret_ms = t;
		return 0;
	}
}
