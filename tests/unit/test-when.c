/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "proto/selector.h"
#include "proto/when.h"
#include "test.h"

/* 2024-03-10 12:34:56.000 UTC */
#define NOW 1710074096000LL

TEST(spans)
{
	uint64_t ms;

	ASSERT_OK(fg_parse_span("90", &ms));
	ASSERT_EQ(ms, 90000);
	ASSERT_OK(fg_parse_span("5m", &ms));
	ASSERT_EQ(ms, 300000);
	ASSERT_OK(fg_parse_span("1h30m", &ms));
	ASSERT_EQ(ms, 5400000);
	ASSERT_OK(fg_parse_span("0.5s", &ms));
	ASSERT_EQ(ms, 500);
	ASSERT_OK(fg_parse_span("2d", &ms));
	ASSERT_EQ(ms, 172800000);
	ASSERT_EQ(fg_parse_span("", &ms), -EINVAL);
	ASSERT_EQ(fg_parse_span("0", &ms), -EINVAL);
	ASSERT_EQ(fg_parse_span("5x", &ms), -EINVAL);
	ASSERT_EQ(fg_parse_span("m", &ms), -EINVAL);
	ASSERT_EQ(fg_parse_span("-5m", &ms), -EINVAL);
	ASSERT_EQ(fg_parse_span("99999999999999999999d", &ms), -EINVAL);
}

TEST(relative_and_now)
{
	int64_t t;

	ASSERT_OK(fg_parse_time("now", NOW, 0, &t));
	ASSERT_EQ(t, NOW);
	ASSERT_OK(fg_parse_time("-10m", NOW, 3600, &t));
	ASSERT_EQ(t, NOW - 600000);
	ASSERT_OK(fg_parse_time("-90", NOW, 0, &t));
	ASSERT_EQ(t, NOW - 90000);
	ASSERT_OK(fg_parse_time("@1710074096", NOW, 0, &t));
	ASSERT_EQ(t, NOW);
	ASSERT_EQ(fg_parse_time("-", NOW, 0, &t), -EINVAL);
	ASSERT_EQ(fg_parse_time("@", NOW, 0, &t), -EINVAL);
}

TEST(clock_times_are_the_latest_past_one)
{
	int64_t t;

	/* UTC: 12:30 today, 13:00 is still to come so it is yesterday's. */
	ASSERT_OK(fg_parse_time("12:30", NOW, 0, &t));
	ASSERT_EQ(t, NOW - (4 * 60 + 56) * 1000);
	ASSERT_OK(fg_parse_time("13:00:00", NOW, 0, &t));
	ASSERT_EQ(t, NOW - (4 * 60 + 56) * 1000 + 30 * 60000 - 24LL * 3600000);
	/* CET (+1 h): local now is 13:34:56, so 13:30 local is 12:30 UTC. */
	ASSERT_OK(fg_parse_time("13:30", NOW, 3600, &t));
	ASSERT_EQ(t, NOW - (4 * 60 + 56) * 1000);
	ASSERT_EQ(fg_parse_time("24:00", NOW, 0, &t), -EINVAL);
	ASSERT_EQ(fg_parse_time("12:60", NOW, 0, &t), -EINVAL);
	ASSERT_EQ(fg_parse_time("12:30x", NOW, 0, &t), -EINVAL);
	ASSERT_EQ(fg_parse_time("1:30", NOW, 0, &t), -EINVAL);
}

TEST(iso8601)
{
	int64_t t;

	ASSERT_OK(fg_parse_time("2024-03-10T12:34:56Z", NOW, 7200, &t));
	ASSERT_EQ(t, NOW);
	ASSERT_OK(fg_parse_time("2024-03-10 13:34:56+01:00", NOW, 0, &t));
	ASSERT_EQ(t, NOW);
	ASSERT_OK(fg_parse_time("2024-03-10T07:34:56-0500", NOW, 0, &t));
	ASSERT_EQ(t, NOW);
	ASSERT_OK(fg_parse_time("2024-03-10T14:34:56", NOW, 7200, &t));
	ASSERT_EQ(t, NOW);
	ASSERT_OK(fg_parse_time("2024-03-10T12:34:56.250Z", NOW, 0, &t));
	ASSERT_EQ(t, NOW + 250);
	ASSERT_OK(fg_parse_time("1970-01-01", NOW, 0, &t));
	ASSERT_EQ(t, 0);
	ASSERT_OK(fg_parse_time("2024-02-29", NOW, 0, &t));
	ASSERT_EQ(fg_parse_time("2023-02-29", NOW, 0, &t), -EINVAL);
	ASSERT_EQ(fg_parse_time("2024-13-01", NOW, 0, &t), -EINVAL);
	ASSERT_EQ(fg_parse_time("2024-03-10T12", NOW, 0, &t), -EINVAL);
	ASSERT_EQ(fg_parse_time("2024-03-10T12:00+25:00", NOW, 0, &t), -EINVAL);
	ASSERT_EQ(fg_parse_time("2024-03-10X", NOW, 0, &t), -EINVAL);
	ASSERT_EQ(fg_parse_time("yesterday", NOW, 0, &t), -EINVAL);
	ASSERT_EQ(fg_days_from_civil(2000, 3, 1), 11017);
}

TEST(selectors_combine)
{
	struct fg_selector_spec spec = { .uid = -1 };
	struct fg_selector *s;
	const char *why = NULL;

	ASSERT_OK(fg_selector__new(&spec, &s, NULL));
	ASSERT_TRUE(fg_selector__is_all(s));
	ASSERT_TRUE(fg_selector__match(s, 1, 0, NULL, NULL, NULL));
	fg_selector__free(s);

	spec = (struct fg_selector_spec){
		.uid = 1000, .comm = "^ngin", .cgroup = "system.slice/", .exe = "nginx"
	};
	ASSERT_OK(fg_selector__new(&spec, &s, NULL));
	ASSERT_TRUE(!fg_selector__is_all(s));
	ASSERT_TRUE(fg_selector__match(s, 7, 1000, "nginx", "/usr/sbin/nginx",
				       "/system.slice/nginx.service"));
	ASSERT_TRUE(fg_selector__match(s, 7, 1000, "nginx: worker", "/usr/sbin/nginx",
				       "/system.slice"));
	ASSERT_TRUE(!fg_selector__match(s, 7, 0, "nginx", "/usr/sbin/nginx", "/system.slice/x"));
	ASSERT_TRUE(
		!fg_selector__match(s, 7, 1000, "xnginx", "/usr/sbin/nginx", "/system.slice/x"));
	ASSERT_TRUE(
		!fg_selector__match(s, 7, 1000, "nginx", "/usr/sbin/nginx", "/system.slicex/x"));
	ASSERT_TRUE(
		!fg_selector__match(s, 7, 1000, "nginx", "/usr/sbin/nginx2", "/system.slice/x"));
	ASSERT_TRUE(!fg_selector__match(s, 7, 1000, "nginx", NULL, "/system.slice/x"));
	fg_selector__free(s);

	spec = (struct fg_selector_spec){ .pid = 42, .uid = -1, .exe = "/usr/bin/x" };
	ASSERT_OK(fg_selector__new(&spec, &s, NULL));
	ASSERT_TRUE(fg_selector__match(s, 42, 5, "x", "/usr/bin/x", ""));
	ASSERT_TRUE(!fg_selector__match(s, 43, 5, "x", "/usr/bin/x", ""));
	ASSERT_TRUE(!fg_selector__match(s, 42, 5, "x", "/opt/bin/x", ""));
	fg_selector__free(s);

	spec = (struct fg_selector_spec){ .uid = -1, .comm = "(" };
	ASSERT_EQ(fg_selector__new(&spec, &s, &why), -EINVAL);
	ASSERT_TRUE(why != NULL);
	/* Nested repetition explodes glibc's regex compiler: refused (found by fuzz-when). */
	spec = (struct fg_selector_spec){ .uid = -1, .comm = "202++++++++++++++++++++++4" };
	ASSERT_EQ(fg_selector__new(&spec, &s, &why), -EINVAL);
	spec = (struct fg_selector_spec){ .uid = -1, .comm = "(a{1,100}){3}" };
	ASSERT_EQ(fg_selector__new(&spec, &s, &why), -EINVAL);
	/* Stacked stars: "u$/" and 101 of them took glibc 2.6 s (found by fuzz-when). */
	spec = (struct fg_selector_spec){ .uid = -1, .comm = "u$/*************" };
	ASSERT_EQ(fg_selector__new(&spec, &s, &why), -EINVAL);
	ASSERT_TRUE(why && strstr(why, "too complex"));
	/* Twelve are allowed. */
	spec = (struct fg_selector_spec){ .uid = -1, .comm = "^(a*b?)*c?d*e*f?g*h*i?j*k?$" };
	ASSERT_OK(fg_selector__new(&spec, &s, &why));
	fg_selector__free(s);
	spec = (struct fg_selector_spec){ .uid = -1, .comm = "^(nginx|php-fpm)[0-9]+ ?\\+x{2}" };
	ASSERT_OK(fg_selector__new(&spec, &s, &why));
	fg_selector__free(s);
	spec = (struct fg_selector_spec){ .uid = 1LL << 33 };
	ASSERT_EQ(fg_selector__new(&spec, &s, &why), -EINVAL);
}

TEST(times_to_the_millisecond)
{
	int64_t t;

	ASSERT_OK(fg_parse_time("@1764205200.25", 0, 0, &t));
	ASSERT_EQ(t, 1764205200250LL);
	ASSERT_OK(fg_parse_time("1764205200.2509", 0, 0, &t));
	ASSERT_EQ(t, 1764205200250LL);
	ASSERT_OK(fg_parse_time("1764205200", 0, 0, &t));
	ASSERT_EQ(t, 1764205200000LL);
	ASSERT_OK(fg_parse_time("12:00:01.250", 1764252000000LL, 0, &t));
	ASSERT_EQ(t, 1764244801250LL);
	ASSERT_OK(fg_parse_time("2025-11-27T12:00:01.5Z", 0, 0, &t));
	ASSERT_EQ(t, 1764244801500LL);
	ASSERT_EQ(fg_parse_time("@1.2.3", 0, 0, &t), -EINVAL);
	ASSERT_EQ(fg_parse_time("1764205200.", 0, 0, &t), -EINVAL);
	ASSERT_EQ(fg_parse_time("@", 0, 0, &t), -EINVAL);
}
