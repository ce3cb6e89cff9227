/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/outbuf.h"
#include "test.h"

/* fg_outbuf_put_fixed() must write exactly what printf writes. */
static void check_fixed(double v, int decimals)
{
	struct fg_outbuf b = {};
	char want[400];

	snprintf(want, sizeof(want), "%.*f", decimals, v);
	fg_outbuf_put_fixed(&b, v, decimals);
	fg_outbuf_puts(&b, "");
	ASSERT_OK(b.err);
	if (b.used != strlen(want) || memcmp(b.data, want, b.used) != 0) {
		fprintf(stderr, "%.17g with %d decimals: '%.*s', printf '%s'\n", v, decimals,
			(int)b.used, b.data, want);
		ASSERT_TRUE(false);
	}
	fg_outbuf_done(&b);
}

TEST(fixed_matches_printf_on_ties_and_edges)
{
	static const double values[] = {
		0,
		-0.0,
		0.125,
		0.375,
		0.005,
		0.015,
		0.025,
		1.005,
		2.675,
		1.5,
		2.5,
		0.05,
		0.45,
		0.55,
		10.0 / 3,
		1179.999,
		1179.995,
		1179.9949999,
		999.9999,
		0.0049999,
		1e-9,
		-0.001,
		-1.5,
		-2.675,
		123456789.125,
		1099511627775.5,
		1099511627776.5,
		1e300,
		INFINITY,
		-INFINITY,
		NAN,
	};

	for (size_t i = 0; i < ELEMENTSOF(values); i++)
		for (int d = 0; d <= 3; d++)
			check_fixed(values[i], d);
}

TEST(fixed_matches_printf_on_a_million_random_values)
{
	unsigned seed = 1;

	for (int i = 0; i < 1000000; i++) {
		double scale = (rand_r(&seed) % 7) == 0 ? 1e6 : 1300;
		/* Many exact binary fractions (ties), and arbitrary doubles. */
		double v = (rand_r(&seed) % 2) ? (double)(rand_r(&seed) % 1000000) / 1024 :
						 scale * rand_r(&seed) / RAND_MAX;

		check_fixed(v, i % 4);
	}
}

TEST(markup_escapes_and_cuts)
{
	struct fg_outbuf b = {};

	fg_outbuf_put_markup(&b, "a<b>&\"c'\x01\xff\xe2\x80\xa8z", 14, SIZE_MAX);
	fg_outbuf_puts(&b, "|");
	fg_outbuf_put_markup(&b, "abcdef", 6, 5);
	fg_outbuf_puts(&b, "|");
	fg_outbuf_put_markup(&b, "\xc3\xa9t\xc3\xa9s", 6, 4); /* "étés": 4 code points fit */
	fg_outbuf_put(&b, "", 1);
	ASSERT_OK(b.err);
	ASSERT_STREQ(b.data, "a&lt;b&gt;&amp;&quot;c&#39;\xef\xbf\xbd\xef\xbf\xbd&#x2028;z|abc..|"
			     "\xc3\xa9t\xc3\xa9s");
	fg_outbuf_done(&b);
}
