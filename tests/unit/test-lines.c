/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/macro.h"
#include "profile/lines.h"
#include "test.h"

struct seen {
	char text[4096];
	size_t used;
	uint64_t last_lineno;
	int stop_at;
};

static int collect(void *ctx, const char *line, size_t len, uint64_t lineno)
{
	struct seen *s = ctx;
	int n;

	if (s->stop_at && lineno == (uint64_t)s->stop_at)
		return -ECANCELED;
	n = snprintf(s->text + s->used, sizeof(s->text) - s->used, "%llu:%.*s|",
		     (unsigned long long)lineno, (int)len, line);
	s->used += (size_t)n;
	s->last_lineno = lineno;
	return 0;
}

TEST(split_numbers_lines_and_keeps_an_unterminated_last_line)
{
	struct seen s = {};

	ASSERT_OK(fg_lines_split("a 1\n\nb 2\r\nc 3", 13, collect, &s));
	ASSERT_STREQ(s.text, "1:a 1|2:|3:b 2\r|4:c 3|");
	memset(&s, 0, sizeof(s));
	ASSERT_OK(fg_lines_split("x\n", 2, collect, &s));
	ASSERT_STREQ(s.text, "1:x|");
	memset(&s, 0, sizeof(s));
	ASSERT_OK(fg_lines_split("", 0, collect, &s));
	ASSERT_EQ(s.used, 0);
}

TEST(callback_error_stops_reading)
{
	struct seen s = { .stop_at = 2 };

	ASSERT_ERR(fg_lines_split("a\nb\nc\n", 6, collect, &s), -ECANCELED);
	ASSERT_STREQ(s.text, "1:a|");
}

/* Checks each line is "frame<N-1>;x <N-1>" for line number N, or the tail. */
static int check_numbered(void *ctx, const char *line, size_t len, uint64_t lineno)
{
	struct seen *s = ctx;
	char want[64];
	int n = snprintf(want, sizeof(want), "frame%llu;x %llu", (unsigned long long)lineno - 1,
			 (unsigned long long)lineno - 1);

	if (!((size_t)n == len && memcmp(want, line, len) == 0) &&
	    !(len == 6 && memcmp(line, "tail 1", 6) == 0))
		return -EBADMSG;
	s->last_lineno = lineno;
	return 0;
}

/* Lines that straddle the reader's 1 MiB blocks arrive whole. */
TEST(read_fd_joins_lines_across_blocks)
{
	char path[] = "/tmp/fgtest-lines-XXXXXX";
	int fd = mkstemp(path);
	size_t n_lines = 0, total = 0;
	char line[64];
	struct seen s = {};

	ASSERT_TRUE(fd >= 0);
	unlink(path);
	while (total < 3u << 20) {
		int n = snprintf(line, sizeof(line), "frame%zu;x %zu\n", n_lines, n_lines);

		ASSERT_EQ(write(fd, line, (size_t)n), n);
		total += (size_t)n;
		n_lines++;
	}
	ASSERT_EQ(write(fd, "tail 1", 6), 6);
	ASSERT_EQ(lseek(fd, 0, SEEK_SET), 0);
	ASSERT_OK(fg_lines_read_fd(fd, 1 << 20, check_numbered, &s));
	ASSERT_EQ(s.last_lineno, n_lines + 1);
	close(fd);
}

TEST(read_fd_refuses_an_endless_line)
{
	char path[] = "/tmp/fgtest-lines-XXXXXX";
	int fd = mkstemp(path);
	char block[4096];
	struct seen s = {};

	ASSERT_TRUE(fd >= 0);
	unlink(path);
	memset(block, 'x', sizeof(block));
	for (int i = 0; i < 1024; i++)
		ASSERT_EQ(write(fd, block, sizeof(block)), (ssize_t)sizeof(block));
	ASSERT_EQ(lseek(fd, 0, SEEK_SET), 0);
	ASSERT_ERR(fg_lines_read_fd(fd, 100000, collect, &s), -E2BIG);
	ASSERT_EQ(s.used, 0);
	close(fd);
}

/* Fed in pieces of any size, the lines come out as fg_lines_split() gives them. */
TEST(feed_joins_lines_across_pieces)
{
	static const char text[] = "a;b 1\n\nlonger;line 22\r\nc 3\nunfinished 4";
	struct seen whole = {};

	ASSERT_OK(fg_lines_split(text, sizeof(text) - 1, collect, &whole));
	for (size_t piece = 1; piece <= sizeof(text); piece++) {
		struct seen s = {};
		struct fg_lines l;

		fg_lines_init(&l, 64, collect, &s);
		for (size_t off = 0; off < sizeof(text) - 1; off += piece)
			ASSERT_OK(
				fg_lines_feed(&l, text + off, MIN(piece, sizeof(text) - 1 - off)));
		ASSERT_OK(fg_lines_finish(&l));
		fg_lines_done(&l);
		ASSERT_STREQ(s.text, whole.text);
		ASSERT_EQ(s.last_lineno, 5);
	}
}

TEST(feed_refuses_a_line_longer_than_the_limit)
{
	struct seen s = {};
	struct fg_lines l;

	fg_lines_init(&l, 8, collect, &s);
	ASSERT_OK(fg_lines_feed(&l, "ok\n1234", 7));
	ASSERT_OK(fg_lines_feed(&l, "5678\n", 5));
	ASSERT_ERR(fg_lines_feed(&l, "123456789", 9), -E2BIG);
	fg_lines_done(&l);
	ASSERT_STREQ(s.text, "1:ok|2:12345678|");
	/* A callback's error stops the feeding. */
	memset(&s, 0, sizeof(s));
	s.stop_at = 2;
	fg_lines_init(&l, 8, collect, &s);
	ASSERT_ERR(fg_lines_feed(&l, "a\nb\nc\n", 6), -ECANCELED);
	fg_lines_done(&l);
	ASSERT_STREQ(s.text, "1:a|");
}
