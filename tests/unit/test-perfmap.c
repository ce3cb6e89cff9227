/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>

#include "base/macro.h"
#include "perf/perfmap.h"
#include "test.h"

/* As node --perf-basic-prof writes it (v20): no 0x, names with spaces and colons. */
static const char node_map[] = "3ef0a5a04040 1c0 Builtin:ArgumentsAdaptorTrampoline\n"
			       "3ef0a5a04200 78 BytecodeHandler:Star0\n"
			       "24a5e3c43e0 2d4 JS:*burnHotLoop /tmp/fgd-test/hot.js:3:24\n"
			       "24a5e3c4700 e8 JS:~ /tmp/fgd-test/hot.js:1:1\n"
			       "24a5e3c4800 40 RegExp:[a-z]+ foo\n";

/* As jcmd PID Compiler.perfmap writes it (JDK 17): 0x-prefixed, padded. */
static const char java_map[] =
	"0x00007f3a1c0f8b00 0x0000000000000218 Interpreter\n"
	"0x00007f3a24ee1a20 0x0000000000000390 void FgJitHot.burnHotMethod(int)\n"
	"0x00007f3a24ee1e20 0x00000000000001a8 int java.lang.String.hashCode()\n";

static struct fg_perfmap *parse(const char *text, size_t len)
{
	struct fg_perfmap *m = NULL;

	if (fg_perfmap__new(NULL, &m) < 0 || fg_perfmap__feed(m, text, len) < 0)
		fg_test_fail(__FILE__, __LINE__, "parse failed");
	return m;
}

static const char *name_at(struct fg_perfmap *m, uint64_t addr)
{
	int64_t i = fg_perfmap__lookup(m, addr);

	return i < 0 ? NULL : fg_perfmap__name(m, (uint32_t)i);
}

static struct fg_perfmap_stats stats(const struct fg_perfmap *m)
{
	struct fg_perfmap_stats s;

	fg_perfmap__stats(m, &s);
	return s;
}

TEST(node_format)
{
	_cleanup_(fg_perfmap__freep) struct fg_perfmap *m = parse(node_map, sizeof(node_map) - 1);

	ASSERT_EQ(stats(m).entries, 5);
	ASSERT_EQ(stats(m).malformed, 0);
	ASSERT_EQ(stats(m).lines, 5);
	ASSERT_STREQ(name_at(m, 0x24a5e3c43e0), "JS:*burnHotLoop /tmp/fgd-test/hot.js:3:24");
	ASSERT_STREQ(name_at(m, 0x24a5e3c43e0 + 0x2d3),
		     "JS:*burnHotLoop /tmp/fgd-test/hot.js:3:24");
	ASSERT_TRUE(name_at(m, 0x24a5e3c43e0 + 0x2d4) == NULL);
	ASSERT_TRUE(name_at(m, 0x24a5e3c43df) == NULL);
	ASSERT_STREQ(name_at(m, 0x24a5e3c4800), "RegExp:[a-z]+ foo");
	ASSERT_STREQ(name_at(m, 0x3ef0a5a04040), "Builtin:ArgumentsAdaptorTrampoline");
	ASSERT_TRUE(name_at(m, 0) == NULL);
	ASSERT_TRUE(name_at(m, UINT64_MAX) == NULL);
}

TEST(java_format)
{
	_cleanup_(fg_perfmap__freep) struct fg_perfmap *m = parse(java_map, sizeof(java_map) - 1);
	uint64_t start, end;
	int64_t i;

	ASSERT_EQ(stats(m).entries, 3);
	ASSERT_EQ(stats(m).malformed, 0);
	i = fg_perfmap__lookup(m, 0x7f3a24ee1a20 + 0x100);
	ASSERT_EQ(i, 1);
	ASSERT_STREQ(fg_perfmap__name(m, 1), "void FgJitHot.burnHotMethod(int)");
	fg_perfmap__range(m, 1, &start, &end);
	ASSERT_U64_EQ(start, 0x7f3a24ee1a20);
	ASSERT_U64_EQ(end, 0x7f3a24ee1a20 + 0x390);
	ASSERT_STREQ(name_at(m, 0x7f3a1c0f8b00), "Interpreter");
}

TEST(separators_and_line_ends)
{
	static const char text[] = "1000\t10\tname with\ttab\r\n"
				   "\n"
				   "   \r\n"
				   "  2000   0X20   padded name   \n"
				   "3000 10 x\n"
				   "0x4000 0x10 \r\n"
				   "5000 10\n";
	_cleanup_(fg_perfmap__freep) struct fg_perfmap *m = parse(text, sizeof(text) - 1);

	ASSERT_STREQ(name_at(m, 0x1005), "name with\ttab");
	ASSERT_STREQ(name_at(m, 0x201f), "padded name");
	ASSERT_STREQ(name_at(m, 0x3000), "x");
	/* No name: malformed, as is a line missing its name altogether. */
	ASSERT_TRUE(name_at(m, 0x4000) == NULL);
	ASSERT_TRUE(name_at(m, 0x5000) == NULL);
	ASSERT_EQ(stats(m).entries, 3);
	ASSERT_EQ(stats(m).malformed, 2);
	ASSERT_EQ(stats(m).lines, 7);
}

TEST(hostile_lines)
{
	static const char text[] = "zzzz 10 not hex\n"
				   "10g0 10 bad digit\n"
				   "0x 10 no digits\n"
				   "1000 0x nope\n"
				   "-1000 10 negative\n"
				   "1000 0 zero size\n"
				   "1000 000 zero size too\n"
				   "ffffffffffffff00 100 wraps to zero\n"
				   "ffffffffffffff00 200 wraps past zero\n"
				   "10000000000000000 10 seventeen digits\n"
				   "1000 10000000000000000 size of seventeen digits\n"
				   "1000,10 comma\n"
				   "1000 10\n"
				   "1000\n"
				   "0000000000000000000000001000 10 leading zeros are fine\n"
				   "ffffffffffffff00 ff just below the top\n";
	_cleanup_(fg_perfmap__freep) struct fg_perfmap *m = parse(text, sizeof(text) - 1);

	ASSERT_EQ(stats(m).entries, 2);
	ASSERT_EQ(stats(m).malformed, 14);
	ASSERT_STREQ(name_at(m, 0x100f), "leading zeros are fine");
	ASSERT_STREQ(name_at(m, 0xfffffffffffffffe), "just below the top");
	ASSERT_TRUE(name_at(m, 0xffffffffffffffff) == NULL);
}

TEST(nul_bytes)
{
	static const char text[] = "1000 10 na\0me\n2000 10 ok\n\0\n3000\0 10 x\n";
	_cleanup_(fg_perfmap__freep) struct fg_perfmap *m = parse(text, sizeof(text) - 1);

	ASSERT_TRUE(name_at(m, 0x1000) == NULL);
	ASSERT_STREQ(name_at(m, 0x2000), "ok");
	ASSERT_TRUE(name_at(m, 0x3000) == NULL);
	ASSERT_EQ(stats(m).entries, 1);
	ASSERT_EQ(stats(m).malformed, 3);
}

TEST(overlong_line_is_skipped)
{
	struct fg_perfmap_limits lim = { .max_line = 64,
					 .max_entries = 100,
					 .max_name_bytes = 4096 };
	_cleanup_(fg_perfmap__freep) struct fg_perfmap *m = NULL;
	char big[1000];

	ASSERT_OK(fg_perfmap__new(&lim, &m));
	memset(big, 'a', sizeof(big));
	memcpy(big, "1000 10 ", 8);
	ASSERT_OK(fg_perfmap__feed(m, "500 10 before\n", 14));
	/* The long line arrives in pieces and its end in the same chunk as the next line. */
	ASSERT_OK(fg_perfmap__feed(m, big, 40));
	ASSERT_OK(fg_perfmap__feed(m, big + 40, sizeof(big) - 40));
	ASSERT_OK(fg_perfmap__feed(m, big, 500));
	ASSERT_OK(fg_perfmap__feed(m, "\n2000 10 after\n", 15));
	ASSERT_EQ(stats(m).malformed, 1);
	ASSERT_EQ(stats(m).entries, 2);
	ASSERT_TRUE(name_at(m, 0x1000) == NULL);
	ASSERT_STREQ(name_at(m, 0x500), "before");
	ASSERT_STREQ(name_at(m, 0x2000), "after");
	/* Exactly the limit is kept. */
	memset(big, 'b', 64);
	memcpy(big, "3000 10 ", 8);
	big[64] = '\n';
	ASSERT_OK(fg_perfmap__feed(m, big, 65));
	ASSERT_EQ(stats(m).entries, 3);
	ASSERT_EQ(strlen(name_at(m, 0x3000)), 56);
	/* A whole overlong line in one chunk. */
	memset(big, 'c', 66);
	memcpy(big, "4000 10 ", 8);
	big[65] = '\n';
	ASSERT_OK(fg_perfmap__feed(m, big, 66));
	ASSERT_EQ(stats(m).malformed, 2);
	ASSERT_TRUE(name_at(m, 0x4000) == NULL);
}

TEST(incremental_feed_matches_whole)
{
	_cleanup_(fg_perfmap__freep) struct fg_perfmap *whole =
		parse(node_map, sizeof(node_map) - 1);
	_cleanup_(fg_perfmap__freep) struct fg_perfmap *bytes = NULL;

	ASSERT_OK(fg_perfmap__new(NULL, &bytes));
	for (size_t i = 0; i < sizeof(node_map) - 1; i++) {
		ASSERT_OK(fg_perfmap__feed(bytes, node_map + i, 1));
		/* Lookups while the file grows, as the daemon does. */
		(void)fg_perfmap__lookup(bytes, 0x24a5e3c43e0);
	}
	ASSERT_EQ(stats(bytes).entries, stats(whole).entries);
	ASSERT_EQ(stats(bytes).bytes, sizeof(node_map) - 1);
	for (uint64_t a = 0x24a5e3c4300; a < 0x24a5e3c4900; a += 8) {
		const char *x = name_at(whole, a), *y = name_at(bytes, a);

		ASSERT_TRUE((x == NULL) == (y == NULL));
		if (x)
			ASSERT_STREQ(x, y);
	}
}

TEST(partial_line_waits_for_newline)
{
	_cleanup_(fg_perfmap__freep) struct fg_perfmap *m = NULL;

	ASSERT_OK(fg_perfmap__new(NULL, &m));
	ASSERT_OK(fg_perfmap__feed(m, "1000 10 first\n2000 10 sec", 25));
	ASSERT_STREQ(name_at(m, 0x1000), "first");
	/* Cut mid-line (the file as seen while the runtime writes it): nothing yet. */
	ASSERT_TRUE(name_at(m, 0x2000) == NULL);
	ASSERT_EQ(stats(m).entries, 1);
	ASSERT_OK(fg_perfmap__feed(m, "ond", 3));
	ASSERT_TRUE(name_at(m, 0x2000) == NULL);
	ASSERT_OK(fg_perfmap__feed(m, "\n", 1));
	ASSERT_STREQ(name_at(m, 0x2000), "second");
	/* A name cut short must not have been taken: "sec" never appeared. */
	ASSERT_EQ(stats(m).entries, 2);
}

TEST(later_entries_win)
{
	static const char text[] = "1000 1000 old\n"      /* [1000, 2000) */
				   "1400 100 inner\n"     /* splits old */
				   "1800 1000 straddle\n" /* [1800, 2800): old's tail, and beyond */
				   "3000 100 a\n"
				   "3000 100 b\n"; /* the same range again: b */
	_cleanup_(fg_perfmap__freep) struct fg_perfmap *m = parse(text, sizeof(text) - 1);

	ASSERT_STREQ(name_at(m, 0x1000), "old");
	ASSERT_STREQ(name_at(m, 0x13ff), "old");
	ASSERT_STREQ(name_at(m, 0x1400), "inner");
	ASSERT_STREQ(name_at(m, 0x14ff), "inner");
	ASSERT_STREQ(name_at(m, 0x1500), "old");
	ASSERT_STREQ(name_at(m, 0x17ff), "old");
	ASSERT_STREQ(name_at(m, 0x1800), "straddle");
	ASSERT_STREQ(name_at(m, 0x27ff), "straddle");
	ASSERT_TRUE(name_at(m, 0x2800) == NULL);
	ASSERT_STREQ(name_at(m, 0x3050), "b");

	/* Across folds: an entry fed after lookups still wins over indexed ones. */
	ASSERT_OK(fg_perfmap__feed(m, "1000 2000 reused\n", 17));
	ASSERT_STREQ(name_at(m, 0x1400), "reused");
	ASSERT_STREQ(name_at(m, 0x2fff), "reused");
	ASSERT_STREQ(name_at(m, 0x3000), "b");
	ASSERT_OK(fg_perfmap__feed(m, "1450 10 tiny\n", 13));
	ASSERT_STREQ(name_at(m, 0x1450), "tiny");
	ASSERT_STREQ(name_at(m, 0x144f), "reused");
	ASSERT_STREQ(name_at(m, 0x1460), "reused");
	/* An older entry fed later is still later: file order decides, not size. */
	ASSERT_OK(fg_perfmap__feed(m, "1440 30 late\n", 13));
	ASSERT_STREQ(name_at(m, 0x1455), "late");
	ASSERT_STREQ(name_at(m, 0x1470), "reused");
}

TEST(limits)
{
	static const char four[] = "1000 10 f0\n2000 10 f1\n3000 10 f2\n4000 10 g\n";
	struct fg_perfmap_limits lim = { .max_line = 128,
					 .max_entries = 3,
					 .max_name_bytes = 4096 };
	_cleanup_(fg_perfmap__freep) struct fg_perfmap *m = NULL;
	char line[64];

	ASSERT_OK(fg_perfmap__new(&lim, &m));
	for (int i = 0; i < 10; i++) {
		int n = snprintf(line, sizeof(line), "%x 10 f%d\n", 0x1000 * (i + 1), i);

		ASSERT_OK(fg_perfmap__feed(m, line, (size_t)n));
	}
	ASSERT_EQ(stats(m).entries, 3);
	ASSERT_EQ(stats(m).dropped, 7);
	ASSERT_STREQ(name_at(m, 0x3000), "f2");
	ASSERT_TRUE(name_at(m, 0x4000) == NULL);
	m = fg_perfmap__free(m);

	/* Name bytes: "f0" and "f1" with their NULs fill 6 bytes. */
	lim = (struct fg_perfmap_limits){ .max_line = 128,
					  .max_entries = 100,
					  .max_name_bytes = 7 };
	ASSERT_OK(fg_perfmap__new(&lim, &m));
	ASSERT_OK(fg_perfmap__feed(m, four, sizeof(four) - 1));
	ASSERT_EQ(stats(m).entries, 2);
	ASSERT_EQ(stats(m).dropped, 2);
	ASSERT_TRUE(fg_perfmap__bytes(m) > 0);
}

/* The latest entry covering addr, by brute force. */
static int64_t naive(const uint64_t (*e)[2], size_t n, uint64_t addr)
{
	for (size_t i = n; i-- > 0;)
		if (e[i][0] <= addr && addr < e[i][1])
			return (int64_t)i;
	return -ENOENT;
}

TEST(random_overlaps_match_brute_force)
{
	static uint64_t e[4000][2];
	char text[64];

	srand(1234);
	for (int round = 0; round < 20; round++) {
		_cleanup_(fg_perfmap__freep) struct fg_perfmap *m = NULL;
		size_t n = 0;

		ASSERT_OK(fg_perfmap__new(NULL, &m));
		while (n < 200 * (size_t)(round + 1) && n < ELEMENTSOF(e)) {
			uint64_t start = (uint64_t)(rand() % 4096),
				 size = (uint64_t)(rand() % 300) + 1;
			int len = snprintf(text, sizeof(text), "%" PRIx64 " %" PRIx64 " e%zu\n",
					   start, size, n);

			/* Fed in random cuts, with lookups at random moments. */
			for (int off = 0; off < len;) {
				int cut = 1 + rand() % (len - off);

				ASSERT_OK(fg_perfmap__feed(m, text + off, (size_t)cut));
				off += cut;
			}
			e[n][0] = start;
			e[n][1] = start + size;
			n++;
			if (rand() % 7 == 0) {
				uint64_t a = (uint64_t)(rand() % 4500);

				ASSERT_EQ(fg_perfmap__lookup(m, a), naive(e, n, a));
			}
		}
		for (uint64_t a = 0; a < 4500; a++)
			ASSERT_EQ(fg_perfmap__lookup(m, a), naive(e, n, a));
		ASSERT_EQ(stats(m).entries, n);
		/* Disjoint segments never outnumber the boundaries that could cut them. */
		ASSERT_TRUE(stats(m).segments <= 2 * n);
	}
}
