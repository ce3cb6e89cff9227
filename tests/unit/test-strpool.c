/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <string.h>

#include "base/strpool.h"
#include "test.h"

TEST(interns_once_with_dense_ids)
{
	struct fg_strpool *p = fg_strpool__new();
	uint32_t a, b, c;

	ASSERT_TRUE(p);
	ASSERT_EQ(fg_strpool__intern(p, "main", 4, &a), 1);
	ASSERT_EQ(fg_strpool__intern(p, "hot_a", 5, &b), 1);
	ASSERT_EQ(fg_strpool__intern(p, "main", 4, &c), 0);
	ASSERT_EQ(a, 0);
	ASSERT_EQ(b, 1);
	ASSERT_EQ(c, a);
	ASSERT_STREQ(fg_strpool__str(p, b), "hot_a");
	ASSERT_EQ(fg_strpool__len(p, b), 5);
	ASSERT_EQ(fg_strpool__find(p, "hot_a", 5), 1);
	ASSERT_EQ(fg_strpool__find(p, "hot_b", 5), -1);
	/* Lengths, not NULs, delimit: a prefix is another string. */
	ASSERT_EQ(fg_strpool__intern(p, "mai", 3, &c), 1);
	ASSERT_EQ(fg_strpool__count(p), 3);
	fg_strpool__free(p);
}

TEST(pointers_stay_valid_as_the_pool_grows)
{
	struct fg_strpool *p = fg_strpool__new();
	const char *first;
	uint32_t id;
	char buf[64];

	ASSERT_OK(fg_strpool__intern(p, "the first string", 16, &id));
	first = fg_strpool__str(p, id);
	for (int i = 0; i < 50000; i++) {
		int n = snprintf(buf, sizeof(buf), "symbol_%d", i);

		ASSERT_OK(fg_strpool__intern(p, buf, (size_t)n, &id));
	}
	ASSERT_STREQ(first, "the first string");
	ASSERT_STREQ(fg_strpool__str(p, 40001), "symbol_40000");
	ASSERT_TRUE(fg_strpool__bytes(p) > 50000 * 10);
	fg_strpool__free(p);
}

TEST(embedded_nul_and_empty_and_huge)
{
	struct fg_strpool *p = fg_strpool__new();
	static char huge[200000];
	uint32_t a, b, e, h;

	ASSERT_EQ(fg_strpool__intern(p, "a\0b", 3, &a), 1);
	ASSERT_EQ(fg_strpool__intern(p, "a\0c", 3, &b), 1);
	ASSERT_TRUE(a != b);
	ASSERT_EQ(fg_strpool__intern(p, "", 0, &e), 1);
	ASSERT_STREQ(fg_strpool__str(p, e), "");
	memset(huge, 'x', sizeof(huge) - 1);
	ASSERT_EQ(fg_strpool__intern(p, huge, sizeof(huge) - 1, &h), 1);
	ASSERT_EQ(fg_strpool__len(p, h), sizeof(huge) - 1);
	fg_strpool__free(p);
}
