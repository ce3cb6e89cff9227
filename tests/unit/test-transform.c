/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/folded.h"
#include "profile/transform.h"
#include "test.h"

struct sink {
	char buf[16384];
	size_t len;
};

static int sink_write(void *ctx, const void *p, size_t n)
{
	struct sink *s = ctx;

	ASSERT_TRUE(s->len + n < sizeof(s->buf));
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	s->buf[s->len] = '\0';
	return 0;
}

/* Sorts f and returns its folded text; static, valid until the next call. */
static const char *text(struct fg_folded *f)
{
	static struct sink s;
	size_t cursor = 0;
	int r;

	s.len = 0;
	s.buf[0] = '\0';
	ASSERT_OK(fg_folded__sort(f));
	while ((r = fg_folded__emit(f, &cursor, sink_write, &s, 1 << 20)) == 0)
		;
	ASSERT_EQ(r, 1);
	return s.buf;
}

/* A model from lines of folded text, left unsorted. */
static struct fg_folded *parse(const char *lines)
{
	struct fg_folded *f = fg_folded__new();

	ASSERT_TRUE(f);
	for (const char *p = lines; *p;) {
		size_t len = strcspn(p, "\n");

		ASSERT_TRUE(fg_folded__add_line(f, p, len) >= 0);
		p += len + (p[len] == '\n');
	}
	return f;
}

static bool close_to(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fmax(1.0, fabs(b));
}

/*
 * Transforms the folded text in with o and checks the output text, that the
 * stats account for every input sample and stack, and that the output holds
 * exactly the kept samples. Returns the stats.
 */
static struct fg_transform_stats check(const char *in, const struct fg_transform_opts *o,
				       const char *expect)
{
	struct fg_folded *f = parse(in), *out = NULL;
	struct fg_transform_stats st;
	char err[128] = "";

	ASSERT_OK(fg_transform(f, o, &out, &st, err, sizeof(err)));
	ASSERT_STREQ(err, "");
	ASSERT_STREQ(text(out), expect);
	ASSERT_TRUE(close_to(st.kept + st.dropped, fg_folded__total(f)));
	ASSERT_TRUE(close_to(st.kept, fg_folded__total(out)));
	ASSERT_EQ(st.stacks_kept + st.stacks_dropped, fg_folded__n_stacks(f));
	ASSERT_EQ(fg_folded__is_diff(out), fg_folded__is_diff(f));
	fg_folded__free(out);
	fg_folded__free(f);
	return st;
}

static const char *const simple = "main;parse;lex 3\n"
				  "main;Parse;LEX 1\n"
				  "main;eval;apply;eval 5\n"
				  "init;load 2\n";
/* simple as sorted text: byte order puts "Parse" before "eval" before "parse". */
static const char *const simple_sorted = "init;load 2\n"
					 "main;Parse;LEX 1\n"
					 "main;eval;apply;eval 5\n"
					 "main;parse;lex 3\n";

TEST(no_options_copy_the_model_and_leave_the_input_alone)
{
	struct fg_folded *f = parse(simple), *out = NULL;
	struct fg_transform_stats st;
	char before[1024];

	snprintf(before, sizeof(before), "%s", text(f));
	ASSERT_OK(fg_transform(f, NULL, &out, &st, NULL, 0));
	ASSERT_STREQ(text(out), before);
	ASSERT_TRUE(st.kept == 11 && st.dropped == 0);
	ASSERT_EQ(st.stacks_kept, 4);
	ASSERT_EQ(st.stacks_dropped, 0);
	fg_folded__free(out);

	/* All options off, and a sorted input this time. */
	ASSERT_OK(fg_transform(f, &(struct fg_transform_opts){ 0 }, &out, NULL, NULL, 0));
	ASSERT_STREQ(text(out), before);
	ASSERT_STREQ(text(f), before);
	fg_folded__free(out);
	fg_folded__free(f);
}

TEST(include_keeps_stacks_where_any_frame_matches)
{
	struct fg_transform_stats st;

	st = check(simple, &(struct fg_transform_opts){ .include = "^(lex|load)$" },
		   "init;load 2\nmain;parse;lex 3\n");
	ASSERT_TRUE(st.kept == 5 && st.dropped == 6);
	ASSERT_EQ(st.stacks_kept, 2);
	ASSERT_EQ(st.stacks_dropped, 2);
	/* Unanchored: a match anywhere in a name, case sensitive. */
	check(simple, &(struct fg_transform_opts){ .include = "ex" }, "main;parse;lex 3\n");
	/* The root frame counts too. */
	check(simple, &(struct fg_transform_opts){ .include = "init" }, "init;load 2\n");
	check(simple, &(struct fg_transform_opts){ .include = "nothing" }, "");
	/* The empty pattern matches every name. */
	check(simple, &(struct fg_transform_opts){ .include = "" }, simple_sorted);
}

TEST(exclude_drops_stacks_where_any_frame_matches)
{
	struct fg_transform_stats st;

	st = check(simple, &(struct fg_transform_opts){ .exclude = "eval|load" },
		   "main;Parse;LEX 1\nmain;parse;lex 3\n");
	ASSERT_TRUE(st.kept == 4 && st.dropped == 7);
	check(simple, &(struct fg_transform_opts){ .exclude = "^main$" }, "init;load 2\n");
	check(simple, &(struct fg_transform_opts){ .exclude = "." }, "");
}

TEST(ignore_case_applies_to_include_and_exclude)
{
	check(simple, &(struct fg_transform_opts){ .include = "^lex$" }, "main;parse;lex 3\n");
	check(simple, &(struct fg_transform_opts){ .include = "^lex$", .ignore_case = true },
	      "main;Parse;LEX 1\nmain;parse;lex 3\n");
	check(simple, &(struct fg_transform_opts){ .exclude = "PARSE", .ignore_case = true },
	      "init;load 2\nmain;eval;apply;eval 5\n");
	check(simple, &(struct fg_transform_opts){ .exclude = "PARSE" }, simple_sorted);
}

TEST(a_bad_regex_is_einval_with_regerror_text)
{
	struct fg_folded *f = parse(simple), *out = (struct fg_folded *)&out;
	struct fg_transform_stats st = { .kept = -1 };
	char err[128] = "", tiny[4] = "xyz";

	ASSERT_ERR(fg_transform(f, &(struct fg_transform_opts){ .include = "a(" }, &out, &st, err,
				sizeof(err)),
		   -EINVAL);
	ASSERT_TRUE(strlen(err) > 0);
	/* Outputs untouched on failure. */
	ASSERT_TRUE(out == (struct fg_folded *)&out);
	ASSERT_TRUE(st.kept == -1);

	err[0] = '\0';
	ASSERT_ERR(fg_transform(f,
				&(struct fg_transform_opts){ .include = "a", .exclude = "[z-a]" },
				&out, &st, err, sizeof(err)),
		   -EINVAL);
	ASSERT_TRUE(strlen(err) > 0);
	/* A short buffer holds a truncated, terminated message; none is fine too. */
	ASSERT_ERR(fg_transform(f, &(struct fg_transform_opts){ .exclude = "a{2,1}" }, &out, NULL,
				tiny, sizeof(tiny)),
		   -EINVAL);
	ASSERT_TRUE(strlen(tiny) == 3 && strcmp(tiny, "xyz") != 0);
	ASSERT_ERR(fg_transform(f, &(struct fg_transform_opts){ .include = "(" }, &out, NULL, NULL,
				0),
		   -EINVAL);
	ASSERT_TRUE(out == (struct fg_folded *)&out);
	fg_folded__free(f);
}

TEST(focus_reroots_at_the_outermost_occurrence)
{
	static const char *const in = "a;f;b;f;c 1\n"
				      "f;x 2\n"
				      "a;b;c;f 4\n"
				      "a;b;c 8\n"
				      "a;ff;g 16\n"
				      "z;f;b;f;c 32\n";
	struct fg_transform_stats st;

	/* At the root, in the middle, at the leaf; two roots merge once re-rooted. */
	st = check(in, &(struct fg_transform_opts){ .focus = "f" }, "f 4\nf;b;f;c 33\nf;x 2\n");
	ASSERT_TRUE(st.kept == 39 && st.dropped == 24);
	ASSERT_EQ(st.stacks_kept, 4);
	ASSERT_EQ(st.stacks_dropped, 2);
	/* An exact name: neither a substring nor a regex. */
	check(in, &(struct fg_transform_opts){ .focus = "ff" }, "ff;g 16\n");
	check(in, &(struct fg_transform_opts){ .focus = "f.*" }, "");
	check(in, &(struct fg_transform_opts){ .focus = "absent" }, "");
	/* A stack ending at the focus keeps just that frame. */
	check(in, &(struct fg_transform_opts){ .focus = "c" }, "c 41\nc;f 4\n");
}

TEST(filters_match_frames_by_their_plain_names)
{
	static const char *const in = "app;main;read;do_syscall_64_[k];ksys_read_[k] 1\n"
				      "app;main;do_syscall_64 2\n"
				      "java;Interp;Hot.run_[j] 4\n"
				      "app;main;compute 8\n";

	/* A plain name finds the annotated frames, and the plain one alike. */
	check(in, &(struct fg_transform_opts){ .focus = "do_syscall_64" },
	      "do_syscall_64 2\ndo_syscall_64_[k];ksys_read_[k] 1\n");
	check(in, &(struct fg_transform_opts){ .focus = "Hot.run" }, "Hot.run_[j] 4\n");
	/* The annotated name finds that frame alone. */
	check(in, &(struct fg_transform_opts){ .focus = "do_syscall_64_[k]" },
	      "do_syscall_64_[k];ksys_read_[k] 1\n");
	/* A regex anchored at the plain name's end matches annotated frames too. */
	check(in, &(struct fg_transform_opts){ .include = "^ksys_read$" },
	      "app;main;read;do_syscall_64_[k];ksys_read_[k] 1\n");
	check(in, &(struct fg_transform_opts){ .exclude = "^Hot\\.run$" },
	      "app;main;compute 8\napp;main;do_syscall_64 2\n"
	      "app;main;read;do_syscall_64_[k];ksys_read_[k] 1\n");
}

TEST(user_only_and_kernel_only_keep_one_side_under_the_roots)
{
	static const char *const in = "app;main;read;sys_read_[k];vfs_read_[k] 7\n"
				      "app;main;compute 30\n"
				      "app;f;f_[k];f_[k];f 2\n";
	struct fg_transform_opts o = { .user_only = true, .roots = 1 };
	struct fg_transform_stats st;

	check(in, &o, "app;f;f 2\napp;main;compute 30\napp;main;read 7\n");
	/* A run that dropping made adjacent collapses like any other. */
	o.collapse_recursion = true;
	check(in, &o, "app;f 2\napp;main;compute 30\napp;main;read 7\n");
	o = (struct fg_transform_opts){ .kernel_only = true, .roots = 1 };
	/* The root frame stays: user time is its process's alone. */
	st = check(in, &o, "app 30\napp;f_[k];f_[k] 2\napp;sys_read_[k];vfs_read_[k] 7\n");
	ASSERT_EQ(st.stacks_kept, 3);
	/* Without roots, a stack of the other side alone is dropped, and counted. */
	o.roots = 0;
	st = check(in, &o, "f_[k];f_[k] 2\nsys_read_[k];vfs_read_[k] 7\n");
	ASSERT_TRUE(st.dropped == 30 && st.stacks_dropped == 1);
	/* Not both. */
	{
		struct fg_folded *f = parse(in), *out = NULL;
		char err[128] = "";

		o.user_only = true;
		ASSERT_ERR(fg_transform(f, &o, &out, NULL, err, sizeof(err)), -EINVAL);
		ASSERT_TRUE(strstr(err, "exclude each other") != NULL);
		fg_folded__free(f);
	}
}

TEST(an_unprivileged_clients_kernel_frame_is_kernel_to_u_and_k)
{
	/* Under kernel.perf_event_paranoid >= 2 a run of kernel frames is one [kernel]. */
	static const char *const in = "p;a;b;[kernel] 5\np;a;c 2\n";

	check(in, &(struct fg_transform_opts){ .user_only = true, .roots = 1 },
	      "p;a;b 5\np;a;c 2\n");
	check(in, &(struct fg_transform_opts){ .kernel_only = true, .roots = 1 },
	      "p 2\np;[kernel] 5\n");
}

TEST(collapse_recursion_merges_runs_only)
{
	static const char *const in = "a;a;b;b;b;c 1\n"
				      "a;b;c;c 2\n"
				      "a;b;a 4\n"
				      "a;b;a;a;b;b 8\n"
				      "x 16\n"
				      "x;x;x 32\n";

	/* Runs at the root, inside, at the leaf, and a whole stack; a;b;a is not a run. */
	check(in, &(struct fg_transform_opts){ .collapse_recursion = true },
	      "a;b;a 4\na;b;a;b 8\na;b;c 3\nx 48\n");
}

TEST(stackcollapse_names_cut_arguments_below_the_roots)
{
	static const char *const in =
		"java-7;Interpreter;double Hot.middle(int)_[j];StubRoutines (1)_[j] 1\n"
		"java-7;Interpreter;double Hot.middle(long)_[j];StubRoutines (2)_[j] 2\n"
		"java-7;Lorg/x/Y:.run(I)V_[j] 4\n"
		"app(1);f(int);(anonymous namespace)::g(char);\"q\"_[k];main.(*T).M 8\n"
		"app(1);Lorg/x/Y:.run(I)V 16\n";

	/*
	 * Overloads merge, annotations stay; the process frame is left alone;
	 * the Java rule only under a java process; Go methods stay whole.
	 */
	check(in, &(struct fg_transform_opts){ .stackcollapse_names = true, .roots = 1 },
	      "app(1);Lorg/x/Y:.run 16\n"
	      "app(1);f;(anonymous namespace)::g;q_[k];main.(*T).M 8\n"
	      "java-7;Interpreter;double Hot.middle_[j];StubRoutines _[j] 3\n"
	      "java-7;org/x/Y:.run_[j] 4\n");
	/* With recursion collapsed, frames equal once tidied are one. */
	check("a;f(int);f(long) 1\n",
	      &(struct fg_transform_opts){
		      .stackcollapse_names = true, .roots = 1, .collapse_recursion = true },
	      "a;f 1\n");
}

TEST(reverse_puts_the_leaf_first)
{
	check("a;b;c 1\nx;b;c 2\nc 4\na;b 8\n", &(struct fg_transform_opts){ .reverse = true },
	      "b;a 8\nc 4\nc;b;a 1\nc;b;x 2\n");
	/* Stacks that differ only in their callers merge once those are cut. */
	check("a;b;c 1\nx;b;c 2\n", &(struct fg_transform_opts){ .reverse = true, .focus = "b" },
	      "c;b 3\n");
}

TEST(options_combine_in_the_documented_order)
{
	/* focus, then collapse, then reverse. */
	check("root;f;g;g;h 2\nroot;f;f;g 1\nother;g 4\n",
	      &(struct fg_transform_opts){
		      .focus = "f", .collapse_recursion = true, .reverse = true },
	      "g;f 1\nh;g;f 2\n");
	/* Focus looks for the outermost occurrence root first, before the reversal. */
	check("a;f;b;f;c 1\n", &(struct fg_transform_opts){ .focus = "f", .reverse = true },
	      "c;f;b;f 1\n");
	/* include and exclude see the frames that focus later cuts away. */
	check("main;f;g 1\nmain2;f;g 2\nmain;h 4\n",
	      &(struct fg_transform_opts){ .include = "^main$", .focus = "f" }, "f;g 1\n");
	check("main;f;g 1\nmain2;f;g 2\nmain;h 4\n",
	      &(struct fg_transform_opts){ .exclude = "^main$", .focus = "f" }, "f;g 2\n");
	/* include, then exclude: both must agree. */
	check(simple, &(struct fg_transform_opts){ .include = "main", .exclude = "eval" },
	      "main;Parse;LEX 1\nmain;parse;lex 3\n");
	/* no_idle comes first, so including the idle loop finds nothing. */
	check("swapper;do_idle 5\napp;main 1\n",
	      &(struct fg_transform_opts){ .no_idle = true, .include = "idle" }, "");
}

TEST(no_idle_drops_the_kernel_idle_loop_of_stackcollapse_perf_output)
{
	/* perf script | stackcollapse-perf.pl --kernel, abridged. */
	static const char *const in =
		"swapper;secondary_startup_64_[k];start_secondary_[k];cpu_startup_entry_[k];"
		"do_idle_[k];default_idle_call_[k];default_idle_[k];native_safe_halt_[k] 50\n"
		"swapper;secondary_startup_64_[k];start_secondary_[k];cpu_startup_entry_[k];"
		"do_idle_[k];cpuidle_enter_[k];cpuidle_enter_state_[k];intel_idle_[k] 30\n"
		/* A timer interrupt taken while idle belongs to the idle loop. */
		"swapper;secondary_startup_64_[k];start_secondary_[k];cpu_startup_entry_[k];"
		"do_idle_[k];cpuidle_enter_[k];cpuidle_enter_state_[k];"
		"asm_sysvec_apic_timer_interrupt_[k];sysvec_apic_timer_interrupt_[k];"
		"hrtimer_interrupt_[k] 3\n"
		"swapper;x86_64_start_kernel_[k];x86_64_start_reservations_[k];start_kernel_[k];"
		"arch_call_rest_init_[k];rest_init_[k];cpu_startup_entry_[k];do_idle_[k];"
		"cpu_idle_poll.isra.0_[k] 2\n"
		/* Rooted at the idle task without an idle function. */
		"swapper;asm_common_interrupt_[k];common_interrupt_[k] 1\n"
		/* Processes, some waiting in the kernel: not idle. */
		"bash;[unknown];__libc_start_main;main;reader_loop;execute_command;"
		"entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k];__x64_sys_wait4_[k];"
		"do_wait_[k];schedule_[k];__schedule_[k] 7\n"
		"kworker/3:1;ret_from_fork_[k];kthread_[k];worker_thread_[k];process_one_work_[k] 6\n"
		"game;main;idle_frame;do_idle_work;cpu_idle_stats;my_default_idle 5\n"
		"swapperd;main 1\n";
	struct fg_transform_stats st;

	st = check(in, &(struct fg_transform_opts){ .no_idle = true },
		   "bash;[unknown];__libc_start_main;main;reader_loop;execute_command;"
		   "entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k];__x64_sys_wait4_[k];"
		   "do_wait_[k];schedule_[k];__schedule_[k] 7\n"
		   "game;main;idle_frame;do_idle_work;cpu_idle_stats;my_default_idle 5\n"
		   "kworker/3:1;ret_from_fork_[k];kthread_[k];worker_thread_[k];"
		   "process_one_work_[k] 6\n"
		   "swapperd;main 1\n");
	ASSERT_TRUE(st.kept == 19 && st.dropped == 86);
	ASSERT_EQ(st.stacks_dropped, 5);
}

TEST(no_idle_root_forms_and_idle_functions_without_a_comm)
{
	static const char *const in =
		"swapper;w 1\n"
		"swapper/0;w 1\n"
		"swapper/12;w 1\n"
		"swapper-0;w 1\n"
		"swapper-0/0;w 1\n"
		"swapper/3-0/0;w 1\n"
		"swapper/3-0;w 1\n"
		/* Tools that emit no comm frame, and other architectures. */
		"secondary_startup_64;start_secondary;cpu_startup_entry;do_idle;"
		"cpuidle_enter;cpuidle_enter_state;acpi_idle_enter;"
		"acpi_idle_do_entry 1\n"
		"secondary_start_kernel;do_idle;arch_cpu_idle;cpu_do_idle 1\n"
		"x;intel_idle.constprop.0 1\n"
		"x;pv_native_safe_halt 1\n"
		/* Kept: not the idle task, or not an idle function. */
		"swapper-1234;w 2\n"
		"swapper-0/5;w 2\n"
		"swapper/;w 2\n"
		"swapper/x;w 2\n"
		"swapper-;w 2\n"
		"xswapper;w 2\n"
		"w;swapper 2\n"
		"w;do_idle_[j] 2\n"
		"w;.do_idle 2\n";
	struct fg_transform_stats st;

	st = check(in, &(struct fg_transform_opts){ .no_idle = true },
		   "swapper-;w 2\n"
		   "swapper-0/5;w 2\n"
		   "swapper-1234;w 2\n"
		   "swapper/;w 2\n"
		   "swapper/x;w 2\n"
		   "w;.do_idle 2\n"
		   "w;do_idle_[j] 2\n"
		   "w;swapper 2\n"
		   "xswapper;w 2\n");
	ASSERT_TRUE(st.kept == 18 && st.dropped == 11);
	ASSERT_EQ(st.stacks_kept, 9);
	ASSERT_EQ(st.stacks_dropped, 11);
}

TEST(differential_models_stay_differential_through_every_transform)
{
	static const char *const in = "main;parse;lex 3 5\n"
				      "main;eval;eval 2 0\n"
				      "swapper;do_idle 10 12\n"
				      "init;load 1\n";

	check(in, NULL,
	      "init;load 1 1\nmain;eval;eval 2 0\nmain;parse;lex 3 5\nswapper;do_idle 10 12\n");
	check(in, &(struct fg_transform_opts){ .no_idle = true },
	      "init;load 1 1\nmain;eval;eval 2 0\nmain;parse;lex 3 5\n");
	check(in, &(struct fg_transform_opts){ .include = "LEX", .ignore_case = true },
	      "main;parse;lex 3 5\n");
	check(in, &(struct fg_transform_opts){ .exclude = "^(main|init)$" },
	      "swapper;do_idle 10 12\n");
	check(in, &(struct fg_transform_opts){ .focus = "eval" }, "eval;eval 2 0\n");
	check(in, &(struct fg_transform_opts){ .collapse_recursion = true },
	      "init;load 1 1\nmain;eval 2 0\nmain;parse;lex 3 5\nswapper;do_idle 10 12\n");
	check(in, &(struct fg_transform_opts){ .reverse = true },
	      "do_idle;swapper 10 12\neval;eval;main 2 0\nlex;parse;main 3 5\nload;init 1 1\n");
	/* Merged stacks add both counts; nothing kept is still a differential model. */
	check("a;a 1 2\na 3 4\n", &(struct fg_transform_opts){ .collapse_recursion = true },
	      "a 4 6\n");
	check(in, &(struct fg_transform_opts){ .include = "nothing" }, "");
}

TEST(names_are_whole_byte_strings)
{
	struct fg_folded *f = fg_folded__new(), *out = NULL;
	struct fg_stack s;

	/* A NUL byte read from text is U+FFFD in the name (framename.h): matched past, and copied. */
	ASSERT_EQ(fg_folded__add_line(f, "x\0y;z 1", 7), 1);
	ASSERT_OK(fg_transform(f, &(struct fg_transform_opts){ .include = "y$" }, &out, NULL, NULL,
			       0));
	ASSERT_EQ(fg_folded__n_stacks(out), 1);
	fg_folded__stack(out, 0, &s);
	ASSERT_EQ(fg_folded__name_len(out, s.frames[0]), 5);
	ASSERT_TRUE(memcmp(fg_folded__name(out, s.frames[0]),
			   "x\xef\xbf\xbd"
			   "y",
			   5) == 0);
	fg_folded__free(out);
	ASSERT_OK(fg_transform(f, &(struct fg_transform_opts){ .exclude = "y" }, &out, NULL, NULL,
			       0));
	ASSERT_EQ(fg_folded__n_stacks(out), 0);
	fg_folded__free(out);
	/* A focus name is the whole name: "x" is not "x\ufffdy". */
	ASSERT_OK(
		fg_transform(f, &(struct fg_transform_opts){ .focus = "x" }, &out, NULL, NULL, 0));
	ASSERT_EQ(fg_folded__n_stacks(out), 0);
	fg_folded__free(out);
	fg_folded__free(f);
}

TEST(stats_add_up_with_fractional_counts)
{
	struct fg_transform_stats st;

	st = check("a;b 0.25\na;c 1.5\nd 0.125\nswapper;x 2\n",
		   &(struct fg_transform_opts){ .no_idle = true, .exclude = "^c$" },
		   "a;b 0.25\nd 0.125\n");
	ASSERT_TRUE(st.kept == 0.375 && st.dropped == 3.5);
	ASSERT_EQ(st.stacks_kept, 2);
	ASSERT_EQ(st.stacks_dropped, 2);
	st = check("", &(struct fg_transform_opts){ .reverse = true }, "");
	ASSERT_TRUE(st.kept == 0 && st.dropped == 0);
	ASSERT_EQ(st.stacks_kept + st.stacks_dropped, 0);
}

/* Diffs the two folded texts and checks the result's text and totals. */
static void check_diff(const char *before, const char *after, bool normalize, const char *expect)
{
	struct fg_folded *b = parse(before), *a = parse(after), *out = NULL;
	char b_text[1024], a_text[1024];

	snprintf(b_text, sizeof(b_text), "%s", text(b));
	snprintf(a_text, sizeof(a_text), "%s", text(a));
	ASSERT_OK(fg_folded_diff(b, a, normalize, &out));
	ASSERT_TRUE(fg_folded__is_diff(out));
	ASSERT_STREQ(text(out), expect);
	ASSERT_TRUE(close_to(fg_folded__total(out), fg_folded__total(a)));
	if (normalize && fg_folded__total(b) > 0 && fg_folded__total(a) > 0)
		ASSERT_TRUE(close_to(fg_folded__total_before(out), fg_folded__total(a)));
	else
		ASSERT_TRUE(close_to(fg_folded__total_before(out), fg_folded__total(b)));
	/* The inputs are unchanged. */
	ASSERT_STREQ(text(b), b_text);
	ASSERT_STREQ(text(a), a_text);
	fg_folded__free(out);
	fg_folded__free(b);
	fg_folded__free(a);
}

TEST(diff_merges_the_union_of_stacks)
{
	/* Names interned in different orders in the two models. */
	static const char *const before = "only_before 4\na;b 3\na;c 1\n";
	static const char *const after = "a;d 2\nonly_after 4\na;b 6\n";

	check_diff(before, after, false,
		   "a;b 3 6\na;c 1 0\na;d 0 2\nonly_after 0 4\nonly_before 4 0\n");
	/* Totals 8 and 12: before counts scaled by 1.5. */
	check_diff(before, after, true,
		   "a;b 4.5 6\na;c 1.5 0\na;d 0 2\nonly_after 0 4\nonly_before 6 0\n");
	/* One side empty, or of total 0: nothing to scale by. */
	check_diff("", after, true, "a;b 0 6\na;d 0 2\nonly_after 0 4\n");
	check_diff(before, "", true, "a;b 3 0\na;c 1 0\nonly_before 4 0\n");
	check_diff("a 0\n", "a 5\n", true, "a 0 5\n");
	check_diff("", "", false, "");
}

TEST(diff_normalisation_keeps_fractions)
{
	struct fg_folded *b = parse("x 1\ny 2\n"), *a = parse("x 1\n"), *out = NULL;
	struct fg_stack s;

	ASSERT_OK(fg_folded_diff(b, a, true, &out));
	ASSERT_OK(fg_folded__sort(out));
	fg_folded__stack(out, 0, &s);
	ASSERT_TRUE(close_to(s.before, 1.0 / 3) && s.count == 1);
	fg_folded__stack(out, 1, &s);
	ASSERT_TRUE(close_to(s.before, 2.0 / 3) && s.count == 0);
	ASSERT_STREQ(text(out), "x 0.333333 1\ny 0.666667 0\n");
	fg_folded__free(out);
	fg_folded__free(a);
	fg_folded__free(b);
}

TEST(diff_refuses_differential_inputs)
{
	struct fg_folded *plain = parse("a 1\n"), *pair = parse("a 1 2\n");
	struct fg_folded *out = (struct fg_folded *)&out;

	ASSERT_ERR(fg_folded_diff(pair, plain, false, &out), -EINVAL);
	ASSERT_ERR(fg_folded_diff(plain, pair, true, &out), -EINVAL);
	ASSERT_TRUE(out == (struct fg_folded *)&out);
	/* A diff's output can be transformed like any differential model. */
	ASSERT_OK(fg_folded_diff(plain, plain, false, &out));
	fg_folded__free(out);
	fg_folded__free(plain);
	fg_folded__free(pair);
}
