/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>

#include "base/cpulist.h"
#include "base/parse.h"
#include "base/procfs.h"
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

/* A line as Linux 6.1 writes it, for a process whose name holds ") (" and spaces. */
static const char stat_line[] =
	"4242 (a) (b c) S 1 4242 4242 0 -1 4194560 120 0 0 0 3 1 0 0 20 0 1 0 "
	"123456789 12345678 300 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0\n";

TEST(proc_stat_gives_comm_and_start_time)
{
	char comm[16];
	uint64_t start = 0;

	ASSERT_OK(fg_parse_proc_stat(stat_line, comm, sizeof(comm), &start));
	ASSERT_STREQ(comm, "a) (b c");
	ASSERT_U64_EQ(start, 123456789);
	/* Truncated to the buffer, as the kernel's 16-byte comm would be. */
	ASSERT_OK(fg_parse_proc_stat(stat_line, comm, 4, NULL));
	ASSERT_STREQ(comm, "a) ");
	ASSERT_OK(fg_parse_proc_stat("1 (x) R 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 7", NULL, 0,
				     &start));
	ASSERT_U64_EQ(start, 7);
}

TEST(proc_stat_refuses_what_is_not_a_stat_line)
{
	uint64_t start = 99;
	char comm[16] = "kept";

	ASSERT_ERR(fg_parse_proc_stat("", comm, sizeof(comm), &start), -EINVAL);
	ASSERT_ERR(fg_parse_proc_stat("1 x) R", comm, sizeof(comm), &start), -EINVAL);
	ASSERT_ERR(fg_parse_proc_stat("1 )x( R", comm, sizeof(comm), &start), -EINVAL);
	/* Cut short before field 22, or field 22 not a number. */
	ASSERT_ERR(fg_parse_proc_stat("1 (x) R 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0", comm,
				      sizeof(comm), &start),
		   -EINVAL);
	ASSERT_ERR(fg_parse_proc_stat("1 (x) R 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 -7", comm,
				      sizeof(comm), &start),
		   -EINVAL);
	ASSERT_ERR(fg_parse_proc_stat("1 (x) R 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 7x", comm,
				      sizeof(comm), &start),
		   -EINVAL);
	ASSERT_ERR(fg_parse_proc_stat(
			   "1 (x) R 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 99999999999999999999999",
			   comm, sizeof(comm), &start),
		   -EINVAL);
	ASSERT_U64_EQ(start, 99);
	ASSERT_STREQ(comm, "kept");
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

TEST(proc_status_gives_a_line_s_number)
{
	/* As the kernel writes it: tabs, kB, keys that begin with one another. */
	static const char text[] = "Name:\tfgd\nUmask:\t0022\nTgid:\t4242\nVmPeak:\t  123 kB\n"
				   "VmHWM:\t   98112 kB\nVmRSS:\t   30268 kB\nVm:\tx\n";
	uint64_t v = 7;

	ASSERT_OK(fg_parse_proc_status(text, "VmHWM", &v));
	ASSERT_U64_EQ(v, 98112);
	ASSERT_OK(fg_parse_proc_status(text, "VmRSS", &v));
	ASSERT_U64_EQ(v, 30268);
	ASSERT_OK(fg_parse_proc_status(text, "Tgid", &v));
	ASSERT_U64_EQ(v, 4242);
	/* "Vm" is a line of its own, not the start of VmPeak's. */
	ASSERT_ERR(fg_parse_proc_status(text, "Vm", &v), -EINVAL);
	ASSERT_ERR(fg_parse_proc_status(text, "Name", &v), -EINVAL);
	ASSERT_ERR(fg_parse_proc_status(text, "VmSwap", &v), -ENOENT);
	ASSERT_ERR(fg_parse_proc_status("", "VmRSS", &v), -ENOENT);
	ASSERT_ERR(fg_parse_proc_status("VmRSS:\t99999999999999999999999 kB\n", "VmRSS", &v),
		   -EINVAL);
	/* The last line without its newline. */
	ASSERT_OK(fg_parse_proc_status("Tgid:\t1", "Tgid", &v));
	ASSERT_U64_EQ(v, 1);
}

TEST(proc_status_gives_the_ids_the_resolver_asks_for)
{
	static const char text[] = "Name:\tnode\nTgid:\t4242\nNgid:\t0\nPid:\t4243\n"
				   "Uid:\t1000\t1000\t1000\t1000\nGid:\t100\t100\t100\t0\n"
				   "NSpid:\t4243\t17\nCapEff:\t000001ffffffffff\n";
	struct fg_proc_status ps;
	uint64_t v[4];

	fg_proc_status_parse(text, &ps);
	ASSERT_EQ(ps.tgid, 4242);
	ASSERT_EQ(ps.nspid, 17); /* the innermost namespace's */
	ASSERT_TRUE(ps.have_uid && ps.have_gid && ps.have_cap_eff);
	ASSERT_EQ(ps.uid[0], 1000);
	ASSERT_EQ(ps.uid[3], 1000);
	ASSERT_EQ(ps.gid[3], 0);
	ASSERT_U64_EQ(ps.cap_eff, 0x1ffffffffffULL);
	ASSERT_EQ(fg_parse_proc_status_list(text, "Uid", 10, v, 2), 2);
	ASSERT_ERR(fg_parse_proc_status_list(text, "Name", 10, v, 4), -EINVAL);

	/* No NSpid (before 4.1), a short Uid line, a bad Tgid: unset, never half read. */
	fg_proc_status_parse("Tgid:\tx\nUid:\t1\t2\n", &ps);
	ASSERT_EQ(ps.tgid, 0);
	ASSERT_EQ(ps.nspid, 0);
	ASSERT_TRUE(!ps.have_uid && !ps.have_gid && !ps.have_cap_eff);
	fg_proc_status_parse("Uid:\t1\t2\t3\t99999999999\n", &ps);
	ASSERT_TRUE(!ps.have_uid);
}

TEST(proc_map_files_path_names_the_mapping)
{
	char buf[FG_PROC_MAP_FILES_MAX];

	ASSERT_STREQ(fg_proc_map_files_path(buf, 42, 0x7f0000001000, 0x7f0000002000),
		     "/proc/42/map_files/7f0000001000-7f0000002000");
	/* The widest bounds fit. */
	ASSERT_STREQ(fg_proc_map_files_path(buf, 2147483647, UINT64_MAX - 1, UINT64_MAX),
		     "/proc/2147483647/map_files/fffffffffffffffe-ffffffffffffffff");
}
