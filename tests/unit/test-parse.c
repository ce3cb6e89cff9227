/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>

#include "cpulist.h"
#include "parse.h"
#include "test.h"

TEST(parse_u32_whole_decimal_in_range)
{
	uint32_t v = 7;

	ASSERT_OK(fg_parse_u32("999", 1, 100000, &v));
	ASSERT_EQ(v, 999);
	ASSERT_OK(fg_parse_u32("100000", 1, 100000, &v));
	ASSERT_EQ(v, 100000);
	ASSERT_OK(fg_parse_u32("4294967295", 0, UINT32_MAX, &v));
	ASSERT_U64_EQ(v, UINT32_MAX);
	v = 7;
	ASSERT_ERR(fg_parse_u32("0", 1, 10, &v), -EINVAL);
	ASSERT_ERR(fg_parse_u32("11", 1, 10, &v), -EINVAL);
	ASSERT_ERR(fg_parse_u32("", 0, 10, &v), -EINVAL);
	ASSERT_ERR(fg_parse_u32("-1", 0, 10, &v), -EINVAL);
	ASSERT_ERR(fg_parse_u32("+1", 0, 10, &v), -EINVAL);
	ASSERT_ERR(fg_parse_u32(" 1", 0, 10, &v), -EINVAL);
	ASSERT_ERR(fg_parse_u32("1 ", 0, 10, &v), -EINVAL);
	ASSERT_ERR(fg_parse_u32("12x", 0, 100, &v), -EINVAL);
	ASSERT_ERR(fg_parse_u32("99999999999999999999999", 0, UINT32_MAX, &v), -EINVAL);
	ASSERT_EQ(v, 7); /* untouched on failure */
}

TEST(cpulist_parses_kernel_lists)
{
	int *cpus;
	size_t n;

	ASSERT_OK(fg_cpulist_parse("0-1\n", &cpus, &n));
	ASSERT_EQ(n, 2);
	ASSERT_EQ(cpus[1], 1);
	free(cpus);
	ASSERT_OK(fg_cpulist_parse("0,2-4,7", &cpus, &n));
	ASSERT_EQ(n, 5);
	ASSERT_EQ(cpus[0], 0);
	ASSERT_EQ(cpus[1], 2);
	ASSERT_EQ(cpus[3], 4);
	ASSERT_EQ(cpus[4], 7);
	free(cpus);
	ASSERT_ERR(fg_cpulist_parse("", &cpus, &n), -EINVAL);
	ASSERT_ERR(fg_cpulist_parse("3-1", &cpus, &n), -EINVAL);
	ASSERT_ERR(fg_cpulist_parse("1,1", &cpus, &n), -EINVAL);
	ASSERT_ERR(fg_cpulist_parse("0-", &cpus, &n), -EINVAL);
	ASSERT_ERR(fg_cpulist_parse("a", &cpus, &n), -EINVAL);
	ASSERT_ERR(fg_cpulist_parse("0-99999999", &cpus, &n), -EINVAL);
}
