/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>

#include "base/argsplit.h"
#include "test.h"

/* Splits s and checks the words against want (NULL-terminated). */
static void check_split(const char *s, const char *const *want)
{
	char **argv = NULL;
	size_t argc = 0, n = 0;

	ASSERT_OK(fg_split_args(s, &argv, &argc, NULL, NULL));
	while (want[n])
		n++;
	ASSERT_EQ(argc, n);
	for (size_t i = 0; i < n; i++)
		ASSERT_STREQ(argv[i], want[i]);
	ASSERT_TRUE(argv[argc] == NULL);
	free(argv);
}

#define SPLIT(s, ...) check_split((s), (const char *const[]){ __VA_ARGS__, NULL })

static void check_refused(const char *s, const char *why, size_t offset)
{
	char **argv = (char **)"untouched";
	size_t argc = 99, off = 0;
	const char *err = NULL;

	ASSERT_ERR(fg_split_args(s, &argv, &argc, &err, &off), -EINVAL);
	ASSERT_STREQ(err, why);
	ASSERT_EQ(off, offset);
	ASSERT_STREQ((const char *)argv, "untouched");
	ASSERT_EQ(argc, 99);
}

TEST(words_split_on_blanks)
{
	SPLIT("--since -1h --until -55m", "--since", "-1h", "--until", "-55m");
	SPLIT("  \t--last\n5m  ", "--last", "5m");
	SPLIT("-p 1234", "-p", "1234");
	SPLIT("--comm=nginx", "--comm=nginx");
}

TEST(nothing_but_blanks_is_no_word)
{
	char **argv;
	size_t argc;

	ASSERT_OK(fg_split_args("", &argv, &argc, NULL, NULL));
	ASSERT_EQ(argc, 0);
	ASSERT_TRUE(argv[0] == NULL);
	free(argv);
	ASSERT_OK(fg_split_args(" \t\n ", &argv, &argc, NULL, NULL));
	ASSERT_EQ(argc, 0);
	free(argv);
}

TEST(quotes_keep_what_is_inside)
{
	SPLIT("--comm '^my app$'", "--comm", "^my app$");
	SPLIT("--comm \"^my app$\"", "--comm", "^my app$");
	/* Single quotes keep backslashes and double quotes; double quotes keep single ones. */
	SPLIT("'a\\b \"c\"'", "a\\b \"c\"");
	SPLIT("\"it's\"", "it's");
	/* In double quotes only \" and \\ are escapes. */
	SPLIT("\"a\\\"b\\\\c\\d\"", "a\"b\\c\\d");
	/* Parts next to each other are one word; empty quotes an empty word. */
	SPLIT("--comm='a b'c\"d e\"", "--comm=a bcd e");
	SPLIT("'' x \"\"", "", "x", "");
}

TEST(a_backslash_keeps_the_next_character)
{
	SPLIT("a\\ b c", "a b", "c");
	SPLIT("\\'x\\\"", "'x\"");
	SPLIT("\\\\", "\\");
}

TEST(nothing_else_is_special)
{
	SPLIT("--comm $HOME* ~ #x a;b|c `d`", "--comm", "$HOME*", "~", "#x", "a;b|c", "`d`");
}

TEST(unterminated_quotes_and_a_final_backslash_are_refused)
{
	check_refused("--comm 'abc", "a single quote without its closing one", 7);
	check_refused("x \"a\\\"", "a double quote without its closing one", 2);
	check_refused("--since -1h \\", "a backslash at the end", 12);
	check_refused("'a' \"b", "a double quote without its closing one", 4);
}
