/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/folded.h"
#include "test.h"

struct sink {
	char buf[65536];
	size_t len;
	int fail_after; /* calls before failing; -1 never */
};

static int sink_write(void *ctx, const void *p, size_t n)
{
	struct sink *s = ctx;

	if (s->fail_after == 0)
		return -ENOSPC;
	if (s->fail_after > 0)
		s->fail_after--;
	ASSERT_TRUE(s->len + n < sizeof(s->buf));
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	s->buf[s->len] = '\0';
	return 0;
}

static void emit_all(const struct fg_folded *f, size_t budget, struct sink *s)
{
	size_t cursor = 0;
	int r;

	s->len = 0;
	s->buf[0] = '\0';
	s->fail_after = -1;
	while ((r = fg_folded__emit(f, &cursor, sink_write, s, budget)) == 0)
		;
	ASSERT_EQ(r, 1);
}

static int add(struct fg_folded *f, const char *line)
{
	return fg_folded__add_line(f, line, strlen(line));
}

TEST(aggregates_and_sorts_frame_by_frame)
{
	struct fg_folded *f = fg_folded__new();
	struct sink s;

	ASSERT_EQ(add(f, "b 1"), 1);
	ASSERT_EQ(add(f, "a;b 2"), 1);
	ASSERT_EQ(add(f, "a-x 4"), 1);
	ASSERT_EQ(add(f, "a 8"), 1);
	ASSERT_EQ(add(f, "a;b 16"), 1); /* merges */
	ASSERT_EQ(fg_folded__n_stacks(f), 4);
	ASSERT_TRUE(fg_folded__total(f) == 31);
	ASSERT_OK(fg_folded__sort(f));
	emit_all(f, 1 << 20, &s);
	/* "a" sorts before "a-x" frame-wise, though "a;b" > "a-x" as whole strings. */
	ASSERT_STREQ(s.buf, "a 8\na;b 18\na-x 4\nb 1\n");
	fg_folded__free(f);
}

TEST(adding_by_ids_equals_adding_by_text)
{
	struct fg_folded *f = fg_folded__new();
	uint32_t ids[3];
	struct fg_stack st;

	ASSERT_OK(fg_folded__intern(f, "root", 4, &ids[0]));
	ASSERT_OK(fg_folded__intern(f, "mid", 3, &ids[1]));
	ASSERT_OK(fg_folded__intern(f, "leaf", 4, &ids[2]));
	ASSERT_OK(fg_folded__add(f, ids, 3, 2));
	ASSERT_EQ(add(f, "root;mid;leaf 3"), 1);
	ASSERT_EQ(fg_folded__n_stacks(f), 1);
	ASSERT_OK(fg_folded__sort(f));
	fg_folded__stack(f, 0, &st);
	ASSERT_EQ(st.n_frames, 3);
	ASSERT_TRUE(st.count == 5);
	ASSERT_STREQ(fg_folded__name(f, st.frames[2]), "leaf");
	ASSERT_ERR(fg_folded__add(f, ids, 0, 1), -EINVAL);
	ASSERT_ERR(fg_folded__add(f, ids, 1, -1), -EINVAL);
	fg_folded__free(f);
}

TEST(line_edge_cases)
{
	struct fg_folded *f = fg_folded__new();
	struct sink s;

	/* Frames may hold spaces; the count is the last token. */
	ASSERT_EQ(add(f, "java;Foo::bar(int, char) const;operator new 5"), 1);
	/* An empty frame is kept as such. */
	ASSERT_EQ(add(f, "a;;b 1"), 1);
	/* CRLF, tabs, trailing blanks. */
	ASSERT_EQ(add(f, "crlf;x 3\r"), 1);
	ASSERT_EQ(add(f, "tab;x\t4  "), 1);
	/* Fractions, and counts beyond 2^53 still print as digits. */
	ASSERT_EQ(add(f, "frac 1.5"), 1);
	ASSERT_EQ(add(f, "dot 2."), 1);
	ASSERT_EQ(add(f, "huge 18446744073709551616"), 1);
	/* Blank and comment lines are not stacks. */
	ASSERT_EQ(add(f, ""), 0);
	ASSERT_EQ(add(f, "   "), 0);
	ASSERT_EQ(add(f, "\r"), 0);
	ASSERT_EQ(add(f, "# fgd recording"), 0);
	/* Malformed. */
	ASSERT_ERR(add(f, "no;count"), -EINVAL);
	ASSERT_ERR(add(f, "bad;count x"), -EINVAL);
	ASSERT_ERR(add(f, "negative -1"), -EINVAL);
	ASSERT_ERR(add(f, "exp 1e5"), -EINVAL);
	ASSERT_ERR(add(f, " 5"), -EINVAL);
	ASSERT_ERR(add(f, "7"), -EINVAL);
	ASSERT_ERR(add(f, "two.dots 1.2.3"), -EINVAL);

	ASSERT_OK(fg_folded__sort(f));
	emit_all(f, 1 << 20, &s);
	ASSERT_STREQ(s.buf, "a;;b 1\n"
			    "crlf;x 3\n"
			    "dot 2\n"
			    "frac 1.5\n"
			    "huge 18446744073709551616\n"
			    "java;Foo::bar(int, char) const;operator new 5\n"
			    "tab;x 4\n");
	fg_folded__free(f);
}

TEST(two_counts_make_a_differential_pair)
{
	struct fg_folded *f = fg_folded__new();
	struct fg_stack st;
	struct sink s;

	ASSERT_TRUE(!fg_folded__is_diff(f));
	ASSERT_EQ(add(f, "a;b 3 5"), 1);
	ASSERT_TRUE(fg_folded__is_diff(f));
	ASSERT_EQ(add(f, "a;b\t1   2\r"), 1); /* merges */
	ASSERT_EQ(add(f, "a;c 4"), 1);        /* one count: unchanged */
	ASSERT_EQ(add(f, "x 2.5 0"), 1);
	/* Two numbers: a frame named "1" and a count, never a pair without frames. */
	ASSERT_EQ(add(f, "1 2"), 1);
	ASSERT_TRUE(fg_folded__total(f) == 13);
	ASSERT_TRUE(fg_folded__total_before(f) == 12.5);
	ASSERT_OK(fg_folded__sort(f));
	fg_folded__stack(f, 1, &st);
	ASSERT_TRUE(st.before == 4 && st.count == 7);
	emit_all(f, 1 << 20, &s);
	ASSERT_STREQ(s.buf, "1 2 2\na;b 4 7\na;c 4 4\nx 2.5 0\n");
	fg_folded__free(f);
}

TEST(a_sequence_merges_only_neighbours_and_keeps_its_order)
{
	struct fg_folded *f = fg_folded__new();
	struct sink s;

	fg_folded__set_sequence(f);
	ASSERT_EQ(add(f, "main;b 1"), 1);
	ASSERT_EQ(add(f, "main;b 2"), 1); /* merges with its neighbour */
	ASSERT_EQ(add(f, "main;a 1"), 1);
	ASSERT_EQ(add(f, "main;b 4"), 1); /* a new run */
	ASSERT_EQ(fg_folded__n_stacks(f), 3);
	ASSERT_OK(fg_folded__sort(f));
	emit_all(f, 1 << 20, &s);
	ASSERT_STREQ(s.buf, "main;b 3\nmain;a 1\nmain;b 4\n");
	fg_folded__free(f);
}

TEST(a_count_beyond_double_range_is_erange)
{
	struct fg_folded *f = fg_folded__new();
	char line[700] = "big ";

	memset(line + 4, '9', 600);
	line[604] = '\0';
	ASSERT_ERR(add(f, line), -ERANGE);
	memset(line + 4, '9', 400);
	line[404] = '\0';
	ASSERT_ERR(add(f, line), -ERANGE);
	ASSERT_EQ(fg_folded__n_stacks(f), 0);
	/* Each count finite, but not their sum: the third is refused, the total stays finite. */
	line[4] = '1';
	memset(line + 5, '0', 307); /* 10^307 */
	line[312] = '\0';
	for (int i = 0; i < 17; i++)
		ASSERT_EQ(add(f, line), 1);
	ASSERT_ERR(add(f, line), -ERANGE); /* 1.8e308 > DBL_MAX */
	ASSERT_TRUE(isfinite(fg_folded__total(f)));
	/* Too small to draw: its width would divide by almost nothing. */
	ASSERT_ERR(add(f, "tiny 0.0000000000001"), -ERANGE);
	ASSERT_EQ(add(f, "small 0.000000002"), 1);
	fg_folded__free(f);
}

TEST(streaming_in_small_budgets_gives_the_same_bytes)
{
	struct fg_folded *f = fg_folded__new();
	struct sink whole, pieces;
	char line[64];

	for (int i = 0; i < 500; i++) {
		snprintf(line, sizeof(line), "p;f%d;g%d %d", i % 17, i, i + 1);
		ASSERT_EQ(add(f, line), 1);
	}
	ASSERT_OK(fg_folded__sort(f));
	emit_all(f, 1 << 20, &whole);
	emit_all(f, 1, &pieces);
	ASSERT_EQ(whole.len, pieces.len);
	ASSERT_TRUE(memcmp(whole.buf, pieces.buf, whole.len) == 0);
	fg_folded__free(f);
}

TEST(sink_errors_propagate)
{
	struct fg_folded *f = fg_folded__new();
	struct sink s = { .fail_after = 0 };
	size_t cursor = 0;

	ASSERT_EQ(add(f, "a 1"), 1);
	ASSERT_OK(fg_folded__sort(f));
	ASSERT_ERR(fg_folded__emit(f, &cursor, sink_write, &s, 16), -ENOSPC);
	fg_folded__free(f);
}

TEST(stack_cap_refuses_only_new_stacks)
{
	struct fg_folded *f = fg_folded__new();

	fg_folded__set_max_stacks(f, 2);
	ASSERT_EQ(add(f, "a 1"), 1);
	ASSERT_EQ(add(f, "b 1"), 1);
	ASSERT_ERR(add(f, "c 1"), -E2BIG);
	ASSERT_EQ(add(f, "a 1"), 1);
	ASSERT_EQ(fg_folded__n_stacks(f), 2);
	ASSERT_TRUE(fg_folded__total(f) == 3);
	fg_folded__free(f);
}

/* fgd budgets a result by this figure (a snapshot's profile): it is the heap the model takes. */
TEST(bytes_are_the_heap_held)
{
	size_t before = heap_in_use();
	struct fg_folded *f = fg_folded__new();
	char line[128];

	ASSERT_TRUE(f);
	for (int i = 0; i < 50000; i++) {
		int n = snprintf(line, sizeof(line), "main;mod_%d;fn_%d;leaf_%d %d", i % 13,
				 i % 997, i, 1 + i % 5);

		ASSERT_EQ(fg_folded__add_line(f, line, (size_t)n), 1);
	}
	ASSERT_OK(fg_folded__sort(f));
	ASSERT_BYTES_MATCH(fg_folded__bytes(f), before, heap_in_use());
	ASSERT_TRUE(fg_folded__bytes(f) > 50000 * (4 * sizeof(uint32_t)));
	fg_folded__free(f);
}

TEST(format_count)
{
	char buf[64];

	fg_format_count(0, buf, sizeof(buf));
	ASSERT_STREQ(buf, "0");
	fg_format_count(1e19, buf, sizeof(buf));
	ASSERT_STREQ(buf, "10000000000000000000");
	fg_format_count(0.25, buf, sizeof(buf));
	ASSERT_STREQ(buf, "0.25");
	fg_format_count(1.0 / 3, buf, sizeof(buf));
	ASSERT_STREQ(buf, "0.333333");
	fg_format_count(2e-9, buf, sizeof(buf));
	ASSERT_STREQ(buf, "0.000000002");
	fg_format_count(0.0123456789, buf, sizeof(buf));
	ASSERT_STREQ(buf, "0.01234568");
}

TEST(a_nul_byte_read_from_text_is_replaced_and_an_empty_model_can_be_differential)
{
	struct fg_folded *f = fg_folded__new();
	struct fg_stack st;

	ASSERT_EQ(fg_folded__add_line(f, "a\0b;c 1", 7), 1);
	fg_folded__stack(f, 0, &st);
	ASSERT_EQ(fg_folded__name_len(f, st.frames[0]), 5);
	ASSERT_TRUE(memcmp(fg_folded__name(f, st.frames[0]),
			   "a\xef\xbf\xbd"
			   "b",
			   5) == 0);
	ASSERT_EQ(fg_folded__name_len(f, st.frames[1]), 1);
	fg_folded__free(f);

	f = fg_folded__new();
	ASSERT_TRUE(!fg_folded__is_diff(f));
	fg_folded__mark_diff(f);
	ASSERT_TRUE(fg_folded__is_diff(f));
	ASSERT_EQ(fg_folded__n_stacks(f), 0);
	fg_folded__free(f);
}

TEST(names_are_clean_whichever_way_they_come_in)
{
	struct fg_folded *f = fg_folded__new();
	static struct sink s;
	uint32_t ids[3];

	/* By id: a process name with ';' and a newline, a JIT name with bytes that are not UTF-8. */
	ASSERT_OK(fg_folded__intern(f, "we;ird\ncomm", 11, &ids[0]));
	ASSERT_OK(fg_folded__intern(f, "main", 4, &ids[1]));
	ASSERT_OK(fg_folded__intern(f, "jit\xff\xc0\xaf\xed\xa0\x80\xe2\x82_[j]", 15, &ids[2]));
	ASSERT_OK(fg_folded__add(f, ids, 3, 2));
	/* By text: the same names as a foreign folded file spells them, cleaned alike. */
	ASSERT_EQ(add(f, "we:ird\x0b"
			 "comm;main;jit\xff\xc0\xaf\xed\xa0\x80\xe2\x82_[j] 1"),
		  1);
	ASSERT_EQ(add(f, "caf\xc3\xa9;\x1b[0m\tx 4"), 1);
	ASSERT_OK(fg_folded__sort(f));
	emit_all(f, 4096, &s);
	ASSERT_STREQ(s.buf, "caf\xc3\xa9;\xef\xbf\xbd[0m\xef\xbf\xbdx 4\n"
			    "we:ird\xef\xbf\xbd"
			    "comm;main;jit\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
			    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd_[j] 3\n");
	/* One name each: raw and clean spellings intern to the same id. */
	ASSERT_EQ(fg_folded__n_names(f), 5);
	fg_folded__free(f);
}
