/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/folded.h"
#include "render/result.h"
#include "test.h"

struct sink {
	char *data;
	size_t len;
};

static int collect(void *ctx, const void *buf, size_t len)
{
	struct sink *s = ctx;
	char *p = realloc(s->data, s->len + len + 1);

	if (!p)
		return -ENOMEM;
	memcpy(p + s->len, buf, len);
	s->len += len;
	p[s->len] = '\0';
	s->data = p;
	return 0;
}

static struct fg_folded *model(void)
{
	static const char *const lines[] = {
		"burner;main;hot_a 40",
		"burner;main;do_reads;entry_SYSCALL_64_[k];do_syscall_64_[k];ksys_read_[k] 30",
		"burner;main;do_reads;entry_SYSCALL_64_[k];do_syscall_64_[k] 20",
		"burner;main;do_reads;[unknown]_[k] 10",
	};
	struct fg_folded *f = fg_folded__new();

	ASSERT_TRUE(f);
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		ASSERT_OK(fg_folded__add_line(f, lines[i], strlen(lines[i])));
	return f;
}

/* The whole output of a result of model() for a client of uid, in format. */
static char *output(enum fg_format format, uid_t uid, size_t *ret_stacks)
{
	const char *info[] = { "line one", "line two", NULL };
	struct fg_result_opts o = { .format = format, .title = "T", .subtitle = "S", .info = info };
	struct fg_result *r = NULL;
	struct sink s = {};
	int e;

	fg_view_init(&o.view, uid, 2);
	ASSERT_OK(fg_result__new(model(), &o, &r));
	*ret_stacks = fg_result__n_stacks(r);
	/* Small budgets: the output comes in many pieces, as fgd streams it. */
	while ((e = fg_result__emit(r, collect, &s, 1)) == 0)
		;
	ASSERT_EQ(e, 1);
	fg_result__free(r);
	return s.data;
}

TEST(every_format_shows_what_the_view_allows)
{
	static const enum fg_format formats[] = { FG_FORMAT_FOLDED, FG_FORMAT_SVG, FG_FORMAT_HTML };
	/* The graphs show names without their suffix: the functions' names tell. */
	static const char *const kernel_names[] = { "entry_SYSCALL_64", "do_syscall_64",
						    "ksys_read" };

	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		size_t stacks;
		char *root = output(formats[i], 0, &stacks), *user;

		ASSERT_EQ(stacks, 4);
		for (size_t k = 0; k < sizeof(kernel_names) / sizeof(kernel_names[0]); k++)
			ASSERT_TRUE(strstr(root, kernel_names[k]));
		user = output(formats[i], 1000, &stacks);
		/* The three kernel stacks are one now. */
		ASSERT_EQ(stacks, 2);
		for (size_t k = 0; k < sizeof(kernel_names) / sizeof(kernel_names[0]); k++)
			ASSERT_TRUE(!strstr(user, kernel_names[k]));
		ASSERT_TRUE(strstr(user, "[kernel]"));
		ASSERT_TRUE(strstr(user, "hot_a"));
		ASSERT_TRUE(!strstr(user, "_[k]"));
		if (formats[i] == FG_FORMAT_FOLDED)
			ASSERT_STREQ(user,
				     "burner;main;do_reads;[kernel] 60\nburner;main;hot_a 40\n");
		else
			ASSERT_TRUE(strstr(user, "line two"));
		free(root);
		free(user);
	}
}

TEST(the_strings_are_copied)
{
	char title[] = "mine", line[] = "info";
	const char *info[] = { line, NULL };
	struct fg_result_opts o = { .format = FG_FORMAT_SVG, .title = title, .info = info };
	struct fg_result *r = NULL;
	struct sink s = {};

	fg_view_init(&o.view, 0, 2);
	ASSERT_OK(fg_result__new(model(), &o, &r));
	memcpy(title, "XXXX", 4);
	memcpy(line, "YYYY", 4);
	while (fg_result__emit(r, collect, &s, 4096) == 0)
		;
	ASSERT_TRUE(strstr(s.data, ">mine<") && strstr(s.data, "info"));
	ASSERT_TRUE(!strstr(s.data, "XXXX") && !strstr(s.data, "YYYY"));
	free(s.data);
	fg_result__free(r);
}

TEST(an_unknown_format_is_einval_and_the_model_is_freed)
{
	struct fg_result_opts o = { .format = (enum fg_format)42 };
	struct fg_result *r = NULL;

	fg_view_init(&o.view, 0, 2);
	/* Run under valgrind or ASan, a leak of the model shows here. */
	ASSERT_ERR(fg_result__new(model(), &o, &r), -EINVAL);
	ASSERT_TRUE(!r);
}
