/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Finding separate debug files: each place of the search order, what makes
 * a candidate acceptable, and what is refused. The trees are built in
 * temporary directories from the programs meson built.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf-test.h"
#include "symbols/fgd-debuginfo.h"
#include "symbols/fgd-elffile.h"
#include "test.h"

static struct fg_elf_syms *load(const char *path)
{
	struct fg_elf_syms *s;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	ASSERT_TRUE(fd >= 0);
	ASSERT_OK(fg_elf_syms__load_fd(fd, &s));
	close(fd);
	return s;
}

static void build_id_hex(const struct fg_elf_syms *s, char *hex)
{
	const uint8_t *id;
	size_t n = fg_elf_syms__build_id(s, &id);

	ASSERT_TRUE(n > 1 && n <= 20);
	for (size_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
}

TEST(crc32_is_the_debuglink_one)
{
	char path[] = "/tmp/fg-test-debuginfo-XXXXXX";
	int fd = mkstemp(path);
	uint32_t crc;

	ASSERT_TRUE(fd >= 0);
	ASSERT_TRUE(write(fd, "123456789", 9) == 9);
	/* The standard check value of CRC-32 (ISO-HDLC), which gdb and objcopy use. */
	ASSERT_OK(fg_debuginfo_crc32(fd, &crc));
	ASSERT_U64_EQ(crc, 0xcbf43926);
	close(fd);
	unlink(path);
}

TEST(debuglink_crc_matches_objcopy)
{
	_cleanup_(fg_elf_syms__freep) struct fg_elf_syms *s =
		load(program_path("fgtest-inline-debuglink"));
	const char *link;
	uint32_t want, crc;
	int fd;

	link = fg_elf_syms__debuglink(s, &want);
	ASSERT_STREQ(link, "fgtest-inline.debug");
	fd = open(program_path("fgtest-inline.debug"), O_RDONLY | O_CLOEXEC);
	ASSERT_TRUE(fd >= 0);
	ASSERT_OK(fg_debuginfo_crc32(fd, &crc));
	close(fd);
	ASSERT_U64_EQ(crc, want);
}

TEST(search_order_and_checks)
{
	char dir[] = "/tmp/fg-test-debuginfo-XXXXXX", bin[PATH_MAX], p[2 * PATH_MAX], hex[41];
	struct fg_debuginfo_query q = { .root = NULL };
	enum fg_debuginfo_how how;
	struct fg_elf_syms *s;
	int fd;

	ASSERT_TRUE(mkdtemp(dir));
	q.debug_dir = dir;
	snprintf(bin, sizeof(bin), "%s/usr/bin/fgtest-inline-debuglink", dir);
	copy_file(program_path("fgtest-inline-debuglink"), bin);
	q.path = bin;

	/* Nothing anywhere. */
	s = load(bin);
	build_id_hex(s, hex);
	ASSERT_EQ(fg_debuginfo_find(&(struct fg_debuginfo_query){ NULL, dir, "/usr/bin/none" }, s,
				    &how),
		  -ENOENT);
	ASSERT_EQ(fg_elf_syms__find(s, "fgtest_outer"), -1);

	/* 3. DEBUG_DIR/<path>.debug */
	snprintf(p, sizeof(p), "%s%s.debug", dir, bin);
	copy_file(program_path("fgtest-inline.debug"), p);
	fd = fg_debuginfo_find(&q, s, &how);
	ASSERT_OK(fd);
	close(fd);
	ASSERT_EQ(how, FG_DEBUGINFO_PATH);
	ASSERT_EQ(fg_elf_syms__source(s), FG_ELF_DEBUG_FILE);
	ASSERT_TRUE(fg_elf_syms__find(s, "fgtest_outer") >= 0);
	fg_elf_syms__free(s);

	/* 2. the debuglink beside the binary comes before it. */
	s = load(bin);
	snprintf(p, sizeof(p), "%s/usr/bin/fgtest-inline.debug", dir);
	copy_file(program_path("fgtest-inline.debug"), p);
	fd = fg_debuginfo_find(&q, s, &how);
	ASSERT_OK(fd);
	close(fd);
	ASSERT_EQ(how, FG_DEBUGINFO_DEBUGLINK);
	fg_elf_syms__free(s);

	/* 1. the build-id tree before everything. */
	s = load(bin);
	snprintf(p, sizeof(p), "%s/.build-id/%.2s/%s.debug", dir, hex, hex + 2);
	copy_file(program_path("fgtest-inline.debug"), p);
	fd = fg_debuginfo_find(&q, s, &how);
	ASSERT_OK(fd);
	close(fd);
	ASSERT_EQ(how, FG_DEBUGINFO_BUILD_ID);
	fg_elf_syms__free(s);

	/*
	 * A wrong file at the build-id path (another build) is skipped for the
	 * next place; a FIFO there is not even opened for reading.
	 */
	if (program_exists("fgtest-cxx.debug")) {
		s = load(bin);
		copy_file(program_path("fgtest-cxx.debug"), p);
		fd = fg_debuginfo_find(&q, s, &how);
		ASSERT_OK(fd);
		close(fd);
		ASSERT_EQ(how, FG_DEBUGINFO_DEBUGLINK);
		ASSERT_TRUE(fg_elf_syms__find(s, "fgtest_outer") >= 0);
		ASSERT_TRUE(fg_elf_syms__find(s, "main") >= 0);
		fg_elf_syms__free(s);
	}
	ASSERT_TRUE(unlink(p) == 0);
	ASSERT_TRUE(mkfifo(p, 0600) == 0);
	s = load(bin);
	fd = fg_debuginfo_find(&q, s, &how);
	ASSERT_OK(fd);
	close(fd);
	ASSERT_EQ(how, FG_DEBUGINFO_DEBUGLINK);
	fg_elf_syms__free(s);
	remove_tree(dir);
}
