/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/framename.h"
#include "test.h"

#define R "\xef\xbf\xbd" /* U+FFFD */

/*
 * Strict UTF-8 (RFC 3629), written apart from common/base/utf8 so the two can
 * disagree: shortest forms only, no surrogates, nothing past U+10FFFF.
 */
static bool valid_utf8(const unsigned char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		uint32_t cp, min;
		size_t n;

		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if ((s[i] & 0xe0) == 0xc0)
			n = 2, cp = s[i] & 0x1f, min = 0x80;
		else if ((s[i] & 0xf0) == 0xe0)
			n = 3, cp = s[i] & 0x0f, min = 0x800;
		else if ((s[i] & 0xf8) == 0xf0)
			n = 4, cp = s[i] & 0x07, min = 0x10000;
		else
			return false;
		if (len - i < n)
			return false;
		for (size_t k = 1; k < n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += n;
	}
	return true;
}

/* What every output needs: valid UTF-8, no byte that splits a frame or a line, no control. */
static void check_output(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;

	ASSERT_TRUE(valid_utf8(p, len));
	for (size_t i = 0; i < len; i++) {
		ASSERT_TRUE(p[i] >= 0x20 && p[i] != 0x7f && p[i] != ';');
		/* C1 controls are U+0080..U+009F: 0xc2 0x80..0x9f. */
		ASSERT_TRUE(!(p[i] == 0xc2 && i + 1 < len && p[i + 1] < 0xa0));
	}
}

static void check(const char *in, size_t in_len, const char *want, size_t want_len)
{
	char *buf = NULL, *again = NULL;
	size_t cap = 0, cap_again = 0, len, len_again;

	ASSERT_OK(fg_framename_clean(in, in_len, &buf, &cap, &len));
	if (len != want_len || memcmp(buf, want, len) != 0) {
		fprintf(stderr, "cleaned %zu bytes into %zu, expected %zu:", in_len, len, want_len);
		for (size_t i = 0; i < len; i++)
			fprintf(stderr, " %02x", (unsigned char)buf[i]);
		fprintf(stderr, "\n");
		ASSERT_TRUE(false);
	}
	check_output(buf, len);
	ASSERT_TRUE(len <= in_len * 3);
	/* Clean means unchanged: the check agrees with the cleaning, and cleaning is idempotent. */
	ASSERT_EQ(fg_framename_is_clean(in, in_len), in_len == len && memcmp(in, buf, len) == 0);
	ASSERT_TRUE(fg_framename_is_clean(buf, len));
	ASSERT_OK(fg_framename_clean(buf, len, &again, &cap_again, &len_again));
	ASSERT_TRUE(len_again == len && memcmp(again, buf, len) == 0);
	free(buf);
	free(again);
}

#define CHECK(in, want) check(in, sizeof(in) - 1, want, sizeof(want) - 1)

TEST(clean_names_pass_unchanged)
{
	CHECK("", "");
	CHECK("main", "main");
	CHECK("std::vector<int>::push_back", "std::vector<int>::push_back");
	CHECK("operator new (unsigned long)", "operator new (unsigned long)");
	/* Two-, three- and four-byte characters, at the edges of their ranges. */
	CHECK("caf\xc3\xa9 \xc2\xa0 \xdf\xbf", "caf\xc3\xa9 \xc2\xa0 \xdf\xbf");
	CHECK("\xe0\xa0\x80 \xe2\x86\x92 \xed\x9f\xbf \xee\x80\x80 \xef\xbf\xbc",
	      "\xe0\xa0\x80 \xe2\x86\x92 \xed\x9f\xbf \xee\x80\x80 \xef\xbf\xbc");
	CHECK("\xf0\x90\x80\x80 \xf0\x9f\x94\xa5 \xf4\x8f\xbf\xbf",
	      "\xf0\x90\x80\x80 \xf0\x9f\x94\xa5 \xf4\x8f\xbf\xbf");
	/* A U+FFFD already there is a character like any other. */
	CHECK("a" R "b", "a" R "b");
}

TEST(separators_and_controls_never_survive)
{
	CHECK("Foo<[u8; 4]>::bar", "Foo<[u8: 4]>::bar");
	CHECK(";;", "::");
	CHECK("a\nb", "a" R "b");
	CHECK("a\rb\r", "a" R "b" R);
	CHECK("tab\there", "tab" R "here");
	CHECK("\x1b[31mred", R "[31mred");
	CHECK("del\x7f", "del" R);
	/* NUL inside a counted name: the result holds none. */
	check("a\0b", 3, "a" R "b", 5);
	/* C1 controls are valid UTF-8, but a terminal takes them for commands. */
	CHECK("c1\xc2\x80\xc2\x9b", "c1" R R);
	/* Noncharacters U+FFFE and U+FFFF, which XML forbids. */
	CHECK("\xef\xbf\xbe\xef\xbf\xbf", R R);
}

TEST(invalid_sequences_give_one_replacement_per_byte)
{
	/* Stray continuation bytes, and bytes that never start a character. */
	CHECK("\x80", R);
	CHECK("a\xbf"
	      "b",
	      "a" R "b");
	CHECK("\xff\xfe", R R);
	CHECK("\xf5\x80\x80\x80", R R R R);
	/* Overlong forms: of '/', of NUL, of U+07FF in three bytes, of U+FFFF in four. */
	CHECK("\xc0\xaf", R R);
	CHECK("\xc1\xbf", R R);
	CHECK("\xc0\x80", R R);
	CHECK("\xe0\x9f\xbf", R R R);
	CHECK("\xf0\x8f\xbf\xbf", R R R R);
	/* UTF-16 surrogates, alone and as a pair. */
	CHECK("\xed\xa0\x80", R R R);
	CHECK("\xed\xbf\xbf", R R R);
	CHECK("\xed\xa0\xbd\xed\xb2\xa9", R R R R R R);
	/* Past U+10FFFF. */
	CHECK("\xf4\x90\x80\x80", R R R R);
	/* Sequences cut short: by the end, or by a byte that does not continue them. */
	CHECK("\xc3", R);
	CHECK("\xe2\x82", R R);
	CHECK("\xf0\x9f\x94", R R R);
	CHECK("\xe2\x82z", R R "z");
	CHECK("\xc3;", R ":");
	CHECK("\xf0\x9f\x94\n", R R R R);
}

TEST(random_bytes_always_come_out_clean)
{
	unsigned seed = 7;
	char in[64];

	for (int round = 0; round < 200000; round++) {
		size_t len = (size_t)(rand_r(&seed) % (int)sizeof(in));
		char *buf = NULL;
		size_t cap = 0, out;

		/* Mostly bytes that make or break UTF-8, some ASCII and separators. */
		for (size_t i = 0; i < len; i++) {
			int k = rand_r(&seed) % 8;

			in[i] = (char)(k < 5 ? 0x80 + rand_r(&seed) % 0x80 :
				       k < 7 ? rand_r(&seed) % 0x80 :
					       ';');
		}
		ASSERT_OK(fg_framename_clean(in, len, &buf, &cap, &out));
		check_output(buf, out);
		ASSERT_TRUE(fg_framename_is_clean(buf, out));
		ASSERT_EQ(fg_framename_is_clean(in, len), out == len && memcmp(in, buf, len) == 0);
		free(buf);
	}
}

TEST(the_buffer_is_reused_and_grown)
{
	char *buf = NULL, big[4096];
	size_t cap = 0, len;

	ASSERT_OK(fg_framename_clean("\xff", 1, &buf, &cap, &len));
	ASSERT_EQ(len, 3);
	memset(big, 0xff, sizeof(big));
	ASSERT_OK(fg_framename_clean(big, sizeof(big), &buf, &cap, &len));
	ASSERT_EQ(len, 3 * sizeof(big));
	ASSERT_TRUE(cap >= len);
	for (size_t i = 0; i < len; i += 3)
		ASSERT_TRUE(memcmp(buf + i, R, 3) == 0);
	free(buf);
}
