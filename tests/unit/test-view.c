/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/folded.h"
#include "profile/timed.h"
#include "profile/view.h"
#include "test.h"

static struct fg_folded *model_of(const char *text, bool sequence)
{
	struct fg_folded *f = fg_folded__new();
	const char *p = text;

	ASSERT_TRUE(f);
	if (sequence)
		fg_folded__set_sequence(f);
	while (*p) {
		const char *nl = strchr(p, '\n');

		ASSERT_OK(fg_folded__add_line(f, p, (size_t)(nl - p)));
		p = nl + 1;
	}
	return f;
}

static int collect(void *ctx, const void *buf, size_t len)
{
	char **out = ctx;
	size_t have = *out ? strlen(*out) : 0;
	char *p = realloc(*out, have + len + 1);

	ASSERT_TRUE(p);
	memcpy(p + have, buf, len);
	p[have + len] = '\0';
	*out = p;
	return 0;
}

/* The folded text of in as v shows it; sorted unless a sequence. */
static char *viewed(const struct fg_view *v, const char *text, bool sequence)
{
	struct fg_folded *out = NULL;
	char *s = NULL;
	size_t cursor = 0;

	ASSERT_OK(fg_view_model(v, model_of(text, sequence), &out));
	ASSERT_OK(fg_folded__sort(out));
	while (fg_folded__emit(out, &cursor, collect, &s, 4096) == 0)
		;
	fg_folded__free(out);
	return s ? s : strdup("");
}

#define ASSERT_VIEWED(v, in, want)                 \
	do {                                       \
		char *_got = viewed(v, in, false); \
		ASSERT_STREQ(_got, want);          \
		free(_got);                        \
	} while (0)

TEST(the_policy_hides_the_kernel_from_users_when_paranoid_says_so)
{
	static const struct {
		uid_t uid;
		int paranoid;
		bool hide;
	} cases[] = {
		{ 0, -1, false },    { 0, 2, false },    { 0, 4, false },
		{ 1000, -1, false }, { 1000, 0, false }, { 1000, 1, false },
		{ 1000, 2, true },   { 1000, 3, true },  { 1, 4, true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fg_view v;

		fg_view_init(&v, cases[i].uid, cases[i].paranoid);
		ASSERT_EQ(v.hide_kernel, cases[i].hide);
		ASSERT_EQ(v.uid, cases[i].uid);
		ASSERT_TRUE(v.kernel_suffix);
	}
}

TEST(processes_are_shown_to_root_and_to_their_owner)
{
	struct fg_view root, user;

	fg_view_init(&root, 0, 2);
	fg_view_init(&user, 1000, 2);
	ASSERT_TRUE(fg_view_shows_process(&root, 0));
	ASSERT_TRUE(fg_view_shows_process(&root, 1000));
	ASSERT_TRUE(fg_view_shows_process(&user, 1000));
	ASSERT_TRUE(!fg_view_shows_process(&user, 0));
	ASSERT_TRUE(!fg_view_shows_process(&user, 1001));
}

TEST(a_readers_query_shows_every_process_and_nothing_more)
{
	struct fg_view user, reader, root;

	fg_view_init(&user, 1000, 2);
	fg_view_init(&reader, 1000, 2);
	fg_view_init(&root, 0, 2);
	ASSERT_TRUE(!user.all_processes);
	ASSERT_TRUE(!fg_view_shows_all(&user));
	ASSERT_TRUE(fg_view_shows_all(&root));
	fg_view_read_all(&reader);
	ASSERT_TRUE(fg_view_shows_all(&reader));
	ASSERT_TRUE(fg_view_shows_process(&reader, 0));
	ASSERT_TRUE(fg_view_shows_process(&reader, 1001));
	ASSERT_TRUE(fg_view_shows_process(&reader, 1000));
	/* The kernel stays hidden as from any user: the role widens processes only. */
	ASSERT_TRUE(reader.hide_kernel);
	ASSERT_EQ(reader.uid, 1000);
	ASSERT_VIEWED(&reader, "main;read_[k];vfs_read_[k] 3\n", "main;[kernel] 3\n");
}

TEST(kernel_frames_are_told_by_their_suffix)
{
	struct fg_view user, root, plain;
	size_t len;
	const char *s;

	ASSERT_TRUE(fg_frame_is_kernel("do_syscall_64_[k]", 17));
	ASSERT_TRUE(fg_frame_is_kernel("[unknown]_[k]", 13));
	ASSERT_TRUE(fg_frame_is_kernel("_[k]", 4));
	ASSERT_TRUE(!fg_frame_is_kernel("do_syscall_64", 13));
	ASSERT_TRUE(!fg_frame_is_kernel("f_[j]", 5));
	ASSERT_TRUE(!fg_frame_is_kernel("[k]", 3));
	/* The length counts, not a NUL. */
	ASSERT_TRUE(!fg_frame_is_kernel("x_[k]", 4));

	fg_view_init(&user, 1000, 2);
	fg_view_init(&root, 0, 2);
	plain = root;
	plain.kernel_suffix = false;
	s = fg_view_frame(&user, "vfs_read_[k]", 12, &len);
	ASSERT_TRUE(len == 8 && memcmp(s, FG_VIEW_KERNEL, len) == 0);
	s = fg_view_frame(&user, "main", 4, &len);
	ASSERT_TRUE(len == 4 && memcmp(s, "main", 4) == 0);
	s = fg_view_frame(&root, "vfs_read_[k]", 12, &len);
	ASSERT_TRUE(len == 12 && memcmp(s, "vfs_read_[k]", 12) == 0);
	s = fg_view_frame(&plain, "vfs_read_[k]", 12, &len);
	ASSERT_TRUE(len == 8 && memcmp(s, "vfs_read", 8) == 0);
}

TEST(runs_of_kernel_frames_collapse_and_identical_stacks_merge)
{
	struct fg_view user;

	fg_view_init(&user, 1000, 2);
	ASSERT_VIEWED(&user,
		      "app;main;read_[k];vfs_read_[k];read_zero_[k] 5\n"
		      "app;main;read_[k];vfs_read_[k] 3\n"
		      "app;main;write_[k];[unknown]_[k] 2\n"
		      "app;main;work 7\n"
		      "app;main 1\n",
		      "app;main 1\n"
		      "app;main;[kernel] 10\n"
		      "app;main;work 7\n");
	/* Runs apart stay apart; a stack of kernel frames only is one frame. */
	ASSERT_VIEWED(&user, "a_[k];b;c_[k];d_[k] 1\nk1_[k];k2_[k] 4\n",
		      "[kernel] 4\n[kernel];b;[kernel] 1\n");
	/* Kernel frames spelled without the suffix cannot be told, and are not changed. */
	ASSERT_VIEWED(&user, "app;main;work 2\n", "app;main;work 2\n");
}

TEST(root_sees_everything_and_the_model_is_handed_back_as_it_is)
{
	struct fg_folded *in = model_of("app;main;read_[k] 3\napp;work 1\n", false), *out = NULL;
	struct fg_view root, user;

	fg_view_init(&root, 0, 3);
	ASSERT_OK(fg_view_model(&root, in, &out));
	ASSERT_TRUE(out == in);
	fg_folded__free(out);

	/* A model with no kernel frame is handed back too, whoever looks. */
	fg_view_init(&user, 1000, 3);
	in = model_of("app;main 3\n", false);
	ASSERT_OK(fg_view_model(&user, in, &out));
	ASSERT_TRUE(out == in);
	fg_folded__free(out);
}

TEST(without_the_suffix_kernel_frames_are_shown_bare)
{
	struct fg_view v;

	fg_view_init(&v, 0, 2);
	v.kernel_suffix = false;
	ASSERT_VIEWED(&v, "app;main;read_[k];vfs_read_[k] 3\napp;main;f_[j] 1\n",
		      "app;main;f_[j] 1\napp;main;read;vfs_read 3\n");
	/* Hidden, there is nothing left to take the suffix off. */
	fg_view_init(&v, 1000, 2);
	v.kernel_suffix = false;
	ASSERT_VIEWED(&v, "app;main;read_[k];vfs_read_[k] 3\n", "app;main;[kernel] 3\n");
}

TEST(differential_pairs_and_sequences_keep_their_form)
{
	struct fg_view user;
	char *got;

	fg_view_init(&user, 1000, 2);
	ASSERT_VIEWED(&user, "a;x_[k] 1 2\na;y_[k] 3 4\na;b 5 6\n", "a;[kernel] 4 6\na;b 5 6\n");
	/* A flame chart's order is time: kept, and only neighbours merge. */
	got = viewed(&user, "a;x_[k] 1\na;y_[k] 2\na;b 3\na;z_[k] 4\n", true);
	ASSERT_STREQ(got, "a;[kernel] 3\na;b 3\na;[kernel] 4\n");
	free(got);
}

TEST(what_users_get_holds_no_kernel_name)
{
	struct fg_folded *out = NULL;
	struct fg_view user;
	char *s = NULL;
	size_t cursor = 0;

	fg_view_init(&user, 1000, 2);
	ASSERT_OK(fg_view_model(&user,
				model_of("p;entry_SYSCALL_64_[k];do_syscall_64_[k] 9\n"
					 "p;main;ksys_read_[k] 1\n",
					 false),
				&out));
	for (uint32_t id = 0; id < fg_folded__n_names(out); id++)
		ASSERT_TRUE(!strstr(fg_folded__name(out, id), "_[k]"));
	ASSERT_OK(fg_folded__sort(out));
	while (fg_folded__emit(out, &cursor, collect, &s, 16) == 0)
		;
	ASSERT_STREQ(s, "p;[kernel] 9\np;main;[kernel] 1\n");
	free(s);
	fg_folded__free(out);
}

/* A timed profile's stacks as the view shows them, each sample keeping its time and weight. */
TEST(timed_samples_keep_their_times_on_the_stacks_the_view_shows)
{
	struct fg_view v = { .uid = 1000, .hide_kernel = true, .kernel_suffix = true };
	static const char *const stacks[] = {
		"app;main;read_[k];vfs_read_[k]",
		"app;main;write_[k];vfs_write_[k]",
		"app;main;work",
	};
	struct fg_timed *t = NULL, *out = NULL;
	char *text = NULL;
	size_t cursor = 0;
	int r;

	ASSERT_OK(fg_timed__new(FG_TIMED_US, FG_TIMED_CLOCK_UNIX, &t));
	fg_timed__set_period(t, 900, 1100);
	for (size_t i = 0; i < 3; i++) {
		const uint32_t *frames;
		uint32_t copy[8];
		size_t n;

		ASSERT_OK(fg_folded__intern_stack(fg_timed__model(t), stacks[i], strlen(stacks[i]),
						  &frames, &n));
		memcpy(copy, frames, n * sizeof(*frames));
		ASSERT_OK(fg_timed__add(t, 1000 + (int64_t)i, copy, n, 10 * (i + 1)));
	}
	ASSERT_OK(fg_view_timed(&v, t, &out));
	ASSERT_OK(fg_timed__sort(out));
	while ((r = fg_timed__emit(out, &cursor, collect, &text, 4096)) == 0)
		;
	ASSERT_EQ(r, 1);
	/* Both kernel paths are one [kernel] stack; times, weights and the period stay. */
	ASSERT_STREQ(text, "fgd-timed 1 clock=unix unit=us start=1000 since=900 until=1100\n"
			   "s app;main;[kernel]\n"
			   "s app;main;work\n"
			   "0 0 10\n"
			   "1 0 20\n"
			   "1 1 30\n");
	free(text);
	fg_timed__free(out);
}
