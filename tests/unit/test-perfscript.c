/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The perf script importer against text perf 6.1 printed
 * (tests/data/perfscript/, recorded by record.sh there), and against
 * hand-made lines for what perf does not print on this machine.
 *
 * Every expected output in `recorded` and in the tests marked "verified"
 * was checked to be what stackcollapse-perf.pl (FlameGraph 778d6d4b)
 * prints for the same input and options, after sorting both: the script
 * sorts whole lines, the model frame by frame. The exceptions are marked
 * "differs" and are the deliberate differences listed in perfscript.h.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/macro.h"
#include "profile/folded.h"
#include "profile/lines.h"
#include "profile/perfscript.h"
#include "test.h"

struct sink {
	char buf[65536];
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

static int feed_line(void *ctx, const char *line, size_t len, uint64_t lineno)
{
	return fg_perfscript__feed(ctx, line, len, lineno);
}

/* Folds text (or the file when path is set) and returns the sorted folded output in s. */
static int fold(const char *text, const char *path, const struct fg_perfscript_opts *opts,
		struct sink *s, struct fg_perfscript_stats *ret_stats)
{
	struct fg_folded *f = fg_folded__new();
	struct fg_perfscript *p = NULL;
	size_t cursor = 0;
	int r;

	ASSERT_TRUE(f);
	ASSERT_OK(fg_perfscript__new(f, opts, &p));
	if (path) {
		char full[4096];
		int fd;

		snprintf(full, sizeof(full), "%s/perfscript/%s", fg_test_data_dir(), path);
		fd = open(full, O_RDONLY | O_CLOEXEC);
		ASSERT_TRUE(fd >= 0);
		r = fg_lines_read_fd(fd, 1 << 20, feed_line, p);
		close(fd);
	} else {
		r = fg_lines_split(text, strlen(text), feed_line, p);
	}
	if (r >= 0)
		r = fg_perfscript__finish(p);
	if (ret_stats)
		fg_perfscript__stats(p, ret_stats);
	s->len = 0;
	s->buf[0] = '\0';
	if (r >= 0) {
		ASSERT_OK(fg_folded__sort(f));
		while ((r = fg_folded__emit(f, &cursor, sink_write, s, 1 << 20)) == 0)
			;
		ASSERT_EQ(r, 1);
		r = 0;
	}
	fg_perfscript__free(p);
	fg_folded__free(f);
	return r;
}

static const char *fold_text(const char *text, const struct fg_perfscript_opts *opts)
{
	static struct sink s;

	ASSERT_OK(fold(text, NULL, opts, &s, NULL));
	return s.buf;
}

/* Verified against stackcollapse-perf.pl with the matching options. */
static const struct {
	const char *file;
	struct fg_perfscript_opts opts;
	const char *expect;
} recorded[] = {
	{ "fp-default.txt",
	  {},
	  "fg_jit;start_thread;[perf-2259.map] 2004008\n"
	  "fg_jit;start_thread;jit_loop 6012024\n"
	  "fg_worker;start_thread;syscall 4008016\n"
	  "fg_worker;start_thread;syscall;entry_SYSCALL_64_after_hwframe;do_syscall_64 2004008\n"
	  "fg_worker;start_thread;syscall;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_getppid;__task_pid_nr_ns;__rcu_read_unlock 2004008\n"
	  "fgtest-perfscri;__libc_start_call_main;main;burn 8016032\n" },
	{ "fp-default.txt",
	  { .pid = true },
	  "fg_jit-?;start_thread;[perf-2259.map] 2004008\n"
	  "fg_jit-?;start_thread;jit_loop 6012024\n"
	  "fg_worker-?;start_thread;syscall 4008016\n"
	  "fg_worker-?;start_thread;syscall;entry_SYSCALL_64_after_hwframe;do_syscall_64 2004008\n"
	  "fg_worker-?;start_thread;syscall;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_getppid;__task_pid_nr_ns;__rcu_read_unlock 2004008\n"
	  "fgtest-perfscri-?;__libc_start_call_main;main;burn 8016032\n" },
	{ "fp-default.txt",
	  { .tid = true },
	  "fg_jit-?/2262;start_thread;[perf-2259.map] 2004008\n"
	  "fg_jit-?/2262;start_thread;jit_loop 6012024\n"
	  "fg_worker-?/2261;start_thread;syscall 4008016\n"
	  "fg_worker-?/2261;start_thread;syscall;entry_SYSCALL_64_after_hwframe;do_syscall_64 2004008\n"
	  "fg_worker-?/2261;start_thread;syscall;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_getppid;__task_pid_nr_ns;__rcu_read_unlock 2004008\n"
	  "fgtest-perfscri-?/2259;__libc_start_call_main;main;burn 8016032\n" },
	{ "fp-default.txt",
	  { .annotate_kernel = true },
	  "fg_jit;start_thread;[perf-2259.map] 2004008\n"
	  "fg_jit;start_thread;jit_loop 6012024\n"
	  "fg_worker;start_thread;syscall 4008016\n"
	  "fg_worker;start_thread;syscall;entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k] 2004008\n"
	  "fg_worker;start_thread;syscall;entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k];__x64_sys_getppid_[k];__task_pid_nr_ns_[k];__rcu_read_unlock_[k] 2004008\n"
	  "fgtest-perfscri;__libc_start_call_main;main;burn 8016032\n" },
	{ "fp-default.txt",
	  { .annotate_jit = true },
	  "fg_jit;start_thread;[perf-2259.map]_[j] 2004008\n"
	  "fg_jit;start_thread;jit_loop_[j] 6012024\n"
	  "fg_worker;start_thread;syscall 4008016\n"
	  "fg_worker;start_thread;syscall;entry_SYSCALL_64_after_hwframe;do_syscall_64 2004008\n"
	  "fg_worker;start_thread;syscall;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_getppid;__task_pid_nr_ns;__rcu_read_unlock 2004008\n"
	  "fgtest-perfscri;__libc_start_call_main;main;burn 8016032\n" },
	{ "fp-default.txt",
	  { .annotate_kernel = true, .annotate_jit = true },
	  "fg_jit;start_thread;[perf-2259.map]_[j] 2004008\n"
	  "fg_jit;start_thread;jit_loop_[j] 6012024\n"
	  "fg_worker;start_thread;syscall 4008016\n"
	  "fg_worker;start_thread;syscall;entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k] 2004008\n"
	  "fg_worker;start_thread;syscall;entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k];__x64_sys_getppid_[k];__task_pid_nr_ns_[k];__rcu_read_unlock_[k] 2004008\n"
	  "fgtest-perfscri;__libc_start_call_main;main;burn 8016032\n" },
	{ "fp-default.txt",
	  { .addrs = true },
	  "fg_jit;start_thread;[perf-2259.map <7fe42d7ce007>] 2004008\n"
	  "fg_jit;start_thread;jit_loop 6012024\n"
	  "fg_worker;start_thread;syscall 4008016\n"
	  "fg_worker;start_thread;syscall;entry_SYSCALL_64_after_hwframe;do_syscall_64 2004008\n"
	  "fg_worker;start_thread;syscall;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_getppid;__task_pid_nr_ns;__rcu_read_unlock 2004008\n"
	  "fgtest-perfscri;__libc_start_call_main;main;burn 8016032\n" },
	{ "fp-comm-pid-tid.txt",
	  {},
	  "fg_jit;start_thread;jit_loop 3\n"
	  "fg_worker;start_thread;syscall 2\n"
	  "fg_worker;start_thread;syscall;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_getppid;__task_pid_nr_ns;__rcu_read_unlock 1\n"
	  "fgtest-perfscri;__libc_start_call_main;main;burn 3\n" },
	{ "fp-comm-pid-tid.txt",
	  { .tid = true },
	  "fg_jit-2259/2262;start_thread;jit_loop 3\n"
	  "fg_worker-2259/2261;start_thread;syscall 2\n"
	  "fg_worker-2259/2261;start_thread;syscall;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_getppid;__task_pid_nr_ns;__rcu_read_unlock 1\n"
	  "fgtest-perfscri-2259/2259;__libc_start_call_main;main;burn 3\n" },
	{ "fp-tid-time-period.txt",
	  { .pid = true },
	  "fg_jit-?;start_thread;jit_loop 6012024\n"
	  "fg_worker-?;start_thread;syscall 4008016\n"
	  "fg_worker-?;start_thread;syscall;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_getppid;__task_pid_nr_ns;__rcu_read_unlock 2004008\n"
	  "fgtest-perfscri-?;__libc_start_call_main;main;burn 6012024\n" },
	{ "fp-pid-tid-cpu.txt",
	  { .tid = true },
	  "fg_jit-2259/2262;start_thread;jit_loop 3\n"
	  "fg_worker-2259/2261;start_thread;syscall 2\n"
	  "fg_worker-2259/2261;start_thread;syscall;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_getppid;__task_pid_nr_ns;__rcu_read_unlock 1\n"
	  "fgtest-perfscri-2259/2259;__libc_start_call_main;main;burn 3\n" },
	{ "fp-header.txt",
	  {},
	  "fg_jit;start_thread;jit_loop 4008016\n"
	  "fg_worker;start_thread;syscall 2004008\n"
	  "fg_worker;start_thread;syscall;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_getppid;__task_pid_nr_ns;__rcu_read_unlock 2004008\n"
	  "fgtest-perfscri;__libc_start_call_main;main;burn 4008016\n" },
	{ "multi-event.txt",
	  {},
	  "fg_jit;start_thread;jit_loop 4008016\n"
	  "fg_worker;start_thread;syscall 2004008\n"
	  "fg_worker;start_thread;syscall;entry_SYSCALL_64_after_hwframe;do_syscall_64 2004008\n"
	  "fgtest-perfscri;__libc_start_call_main;main;burn 4008016\n" },
	{ "multi-event.txt",
	  { .event_filter = "task-clock" },
	  "fg_jit;start_thread;jit_loop 4008016\n"
	  "fg_worker;start_thread;syscall;entry_SYSCALL_64_after_hwframe;do_syscall_64 2004008\n"
	  "fg_worker;start_thread;syscall;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_getppid;__task_pid_nr_ns 2004008\n"
	  "fgtest-perfscri;__libc_start_call_main;main;burn 4008016\n" },
	{ "dwarf-inline.txt",
	  {},
	  "fg_jit;[perf-1767.map] 2004008\n"
	  "fg_jit;jit_loop 2004008\n"
	  "fg_worker;clone3;start_thread;syscaller;syscall;entry_SYSCALL_64_after_hwframe;do_syscall_64 2004008\n"
	  "fg_worker;clone3;start_thread;syscaller;syscall;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_getppid;__task_pid_nr_ns 2004008\n"
	  "fgtest-perfscri;_start;__libc_start_main_impl;__libc_start_call_main;main;burn;mix_outer;mix_inner 4008016\n" },
	{ "dwarf-inline.txt",
	  { .annotate_kernel = true, .annotate_jit = true },
	  "fg_jit;[perf-1767.map]_[j] 2004008\n"
	  "fg_jit;jit_loop_[j] 2004008\n"
	  "fg_worker;clone3;start_thread;syscaller;syscall;entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k] 2004008\n"
	  "fg_worker;clone3;start_thread;syscaller;syscall;entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k];__x64_sys_getppid_[k];__task_pid_nr_ns_[k] 2004008\n"
	  "fgtest-perfscri;_start;__libc_start_main_impl;__libc_start_call_main;main;burn;mix_outer;mix_inner 4008016\n" },
	{ "dwarf-inline.txt",
	  { .no_inline = true },
	  "fg_jit;[perf-1767.map] 2004008\n"
	  "fg_jit;jit_loop 2004008\n"
	  "fg_worker;clone3;start_thread;syscaller;syscall;entry_SYSCALL_64_after_hwframe;do_syscall_64 2004008\n"
	  "fg_worker;clone3;start_thread;syscaller;syscall;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_getppid;__task_pid_nr_ns 2004008\n"
	  "fgtest-perfscri;_start;__libc_start_main_impl;__libc_start_call_main;main;burn 4008016\n" },
};

TEST(recorded_text_folds_as_stackcollapse_perf)
{
	for (size_t i = 0; i < ELEMENTSOF(recorded); i++) {
		struct sink s;

		ASSERT_OK(fold(NULL, recorded[i].file, &recorded[i].opts, &s, NULL));
		if (strcmp(s.buf, recorded[i].expect) != 0)
			fprintf(stderr, "case %zu (%s):\n%s", i, recorded[i].file, s.buf);
		ASSERT_STREQ(s.buf, recorded[i].expect);
	}
}

TEST(event_filter_keeps_the_first_event_and_counts_the_rest)
{
	struct fg_perfscript_opts opts = {};
	struct fg_perfscript_stats st;
	struct sink s;

	ASSERT_OK(fold(NULL, "multi-event.txt", &opts, &s, &st));
	ASSERT_EQ(st.samples, 6);
	ASSERT_EQ(st.filtered, 6);
	ASSERT_TRUE(st.multiple_events);
	ASSERT_STREQ(st.event, "cpu-clock");
	ASSERT_EQ(st.malformed, 0);

	/* An event no sample has keeps nothing. */
	opts.event_filter = "cycles";
	ASSERT_OK(fold(NULL, "multi-event.txt", &opts, &s, &st));
	ASSERT_EQ(st.samples, 0);
	ASSERT_EQ(st.filtered, 12);
	ASSERT_STREQ(st.event, "cycles");
	ASSERT_STREQ(s.buf, "");

	/* One event: not multiple. */
	opts.event_filter = NULL;
	ASSERT_OK(fold(NULL, "fp-default.txt", &opts, &s, &st));
	ASSERT_EQ(st.samples, 12);
	ASSERT_EQ(st.filtered, 0);
	ASSERT_TRUE(!st.multiple_events);

	/* -F without the event field: no event, nothing filtered. */
	ASSERT_OK(fold(NULL, "fp-comm-pid-tid.txt", &opts, &s, &st));
	ASSERT_EQ(st.samples, 9);
	ASSERT_STREQ(st.event, "");
}

TEST(cpus_pick_samples_by_their_header)
{
	static const int first[] = { 0 }, second[] = { 1 };
	/* Comms of two bytes at least, as the script's header pattern wants. */
	const char *text = "aa 10 [000] 1.0: 1 cpu-clock:\n\t1 f (/x)\n\n"
			   "bb 11 [001] 1.1: 1 cpu-clock:\n\t1 g (/x)\n\n"
			   "cc 12 1.2: 1 cpu-clock:\n\t1 h (/x)\n\n";
	struct fg_perfscript_opts opts = { .cpus = first, .n_cpus = 1 };

	ASSERT_STREQ(fold_text(text, &opts), "aa;f 1\n");
	opts.cpus = second;
	ASSERT_STREQ(fold_text(text, &opts), "bb;g 1\n");
	/* No list: every sample, with a CPU or not. */
	opts.n_cpus = 0;
	ASSERT_STREQ(fold_text(text, &opts), "aa;f 1\nbb;g 1\ncc;h 1\n");
}

TEST(counts_are_named_for_what_they_are)
{
	struct fg_perfscript_opts opts = {};
	struct fg_perfscript_stats st;
	struct sink s;
	char buf[64];

	/* cpu-clock's periods are nanoseconds: summed, the counts are ns, not samples. */
	ASSERT_OK(fold(NULL, "fp-default.txt", &opts, &s, &st));
	ASSERT_EQ(st.period_samples, st.samples);
	ASSERT_STREQ(fg_perfscript_count_name(&st, buf, sizeof(buf)), "ns");
	/* Counted one each, they are samples. */
	opts.count_samples = true;
	ASSERT_OK(fold(NULL, "fp-default.txt", &opts, &s, &st));
	ASSERT_EQ(st.period_samples, 0);
	ASSERT_STREQ(fg_perfscript_count_name(&st, buf, sizeof(buf)), "samples");
	/* No period in the header: each counts 1. */
	opts.count_samples = false;
	ASSERT_OK(fold(NULL, "fp-comm-pid-tid.txt", &opts, &s, &st));
	ASSERT_EQ(st.period_samples, 0);
	ASSERT_STREQ(fg_perfscript_count_name(&st, buf, sizeof(buf)), "samples");
	/* Another event's periods are its own units, named without modifiers. */
	st = (struct fg_perfscript_stats){ .samples = 3, .period_samples = 3 };
	snprintf(st.event, sizeof(st.event), "cycles:ppp");
	ASSERT_STREQ(fg_perfscript_count_name(&st, buf, sizeof(buf)), "cycles");
	snprintf(st.event, sizeof(st.event), "task-clock:u");
	ASSERT_STREQ(fg_perfscript_count_name(&st, buf, sizeof(buf)), "ns");
}

/* Differs: the script folds nothing from text without callchains. */
TEST(samples_without_callchain_become_comm_and_symbol)
{
	struct fg_perfscript_opts opts = { .annotate_kernel = true, .annotate_jit = true };
	struct fg_perfscript_stats st;
	struct sink s;

	ASSERT_OK(fold(NULL, "nog-default.txt", &opts, &s, &st));
	ASSERT_STREQ(s.buf, "fg_jit;[perf-2281.map]_[j] 6012024\n"
			    "fg_jit;jit_loop_[j] 6012024\n"
			    "fg_worker;__rcu_read_lock_[k] 2004008\n"
			    "fg_worker;__task_pid_nr_ns_[k] 2004008\n"
			    "fg_worker;do_syscall_64_[k] 2004008\n"
			    "fgtest-perfscri;burn 6012024\n");
	ASSERT_EQ(st.samples, 12);
	ASSERT_EQ(st.malformed, 0);

	/* Other field selections; no IP field leaves the comm alone. */
	ASSERT_STREQ(fold_text("     fg worker  11/12  [001]     7f00 sym+0x1 (/lib/x.so)\n"
			       "        python3    13  1.5: sched:sched_switch: prev_comm=x\n"
			       "        python3    13  2.5:\n"
			       "        python3    13  99 task-clock:  1464 main (/bin/py)\n",
			       &(struct fg_perfscript_opts){ .tid = true }),
		     "fg_worker-11/12;sym 1\n"
		     "python3-?/13 2\n");
}

TEST(inlined_frames_kept_or_dropped)
{
	static const char text[] = "a.out 7 1.0: 1 cpu-clock:\n"
				   "\t126e inner+0x7e (inlined)\n"
				   "\t126e outer+0x7e (inlined)\n"
				   "\t126e burn+0x7e (/a.out)\n"
				   "\t1359 main+0x89 (/a.out)\n"
				   "\t27304 __libc_start_main_impl+0x84 (inlined)\n"
				   "\t1120 _start+0x20 (/a.out)\n"
				   "\n";

	/* Verified: inlined frames are frames. */
	ASSERT_STREQ(fold_text(text, &(struct fg_perfscript_opts){}),
		     "a.out;_start;__libc_start_main_impl;main;burn;outer;inner 1\n");
	/* The last frame of an address stays though perf marks it inlined. */
	ASSERT_STREQ(fold_text(text, &(struct fg_perfscript_opts){ .no_inline = true }),
		     "a.out;_start;__libc_start_main_impl;main;burn 1\n");
}

/* Verified, line by line, unless marked. */
TEST(header_and_frame_rules)
{
	struct fg_perfscript_opts none = {};

	/* swapper 0/0: a TID of "0" is false to perl, so the PID is "?". */
	ASSERT_STREQ(fold_text("swapper     0/0     [000]  1.0: 250000 cpu-clock:\n"
			       "\tffffffff8103ce3b native_safe_halt+0xb ([kernel.kallsyms])\n\n",
			       &(struct fg_perfscript_opts){ .tid = true,
							     .annotate_kernel = true }),
		     "swapper-?/0;native_safe_halt_[k] 250000\n");
	/* Comms with spaces, and the shortest comm the pattern allows. */
	ASSERT_STREQ(fold_text("V8 WorkerThread 24636/25607 [000] 94564.109216: 100 cycles:\n"
			       "\t1 f (/x)\n\n",
			       &(struct fg_perfscript_opts){ .pid = true }),
		     "V8_WorkerThread-24636;f 100\n");
	/* [unknown] takes the DSO's name, or stays unknown; --addrs adds the IP. */
	ASSERT_STREQ(fold_text("tt 5 1.0: cpu-clock:\n"
			       "\t7f01 [unknown] (/usr/lib/libfoo.so.1)\n"
			       "\t7f02 [unknown] ([unknown])\n\n",
			       &(struct fg_perfscript_opts){ .addrs = true }),
		     "tt;[unknown <7f02>];[libfoo.so.1 <7f01>] 1\n");
	/* Tidying: offsets, ';', parameters, quotes, Go methods, namespaces. */
	ASSERT_STREQ(
		fold_text("prog 5 1.0: 3 cpu-clock:\n"
			  "\t1 Foo::bar(int, char) const+0x1f (/x)\n"
			  "\t2 a;b+0x1 (/x)\n"
			  "\t3 net/http.(*Client).Do (/x)\n"
			  "\t4 ns::(anonymous namespace)::f(int) (/x)\n"
			  "\t5 RegExp:[&<>\"'] (/tmp/perf-7.map)\n"
			  "\t6 (skipped) (/x)\n"
			  "\t7 v+0xFF (/x)\n\n",
			  &(struct fg_perfscript_opts){ .annotate_jit = true }),
		"prog;v+0xFF;RegExp:[&<>]_[j];ns::(anonymous namespace)::f;net/http.(*Client).Do;"
		"a:b;Foo::bar 3\n");
	/* Java: a leading L goes from names with a '/'; "->" splits inlined Java frames. */
	ASSERT_STREQ(fold_text("java 5/6 1.0: cpu-clock:\n"
			       "\t1 Lorg/Foo;::a->Lorg/Bar;::b (/tmp/perf-5.map)\n"
			       "\t2 Interpreter (/x)\n\n",
			       &(struct fg_perfscript_opts){ .annotate_jit = true }),
		     "java;Interpreter;org/Foo:::a_[j];org/Bar:::b_[i] 1\n");
	/* Kernel by DSO: [..] or ..vmlinux, never "unknown". */
	ASSERT_STREQ(fold_text("kk 5 1.0: cpu-clock:\n"
			       "\t1 a ([vdso])\n"
			       "\t2 b (/boot/vmlinux)\n"
			       "\t3 c ([unknown])\n"
			       "\t4 d ([nf_conntrack])\n\n",
			       &(struct fg_perfscript_opts){ .annotate_kernel = true }),
		     "kk;d_[k];c;b_[k];a_[k] 1\n");
	/* A comm has two bytes at least: "c 5 1.0:" is the comm here, "2" the TID. */
	ASSERT_STREQ(fold_text("c 5 1.0: 2 cpu-clock:\n\t1 f (/x)\n\n", &none), "c_5_1.0:;f 2\n");
	/* A header with no stack is the comm alone; "0" and no period count 1. */
	ASSERT_STREQ(fold_text("idle 5 1.0: 0 cpu-clock:\n\nidle 5 2.0: cpu-clock:\n\n", &none),
		     "idle 2\n");
	/* Comment lines anywhere. */
	ASSERT_STREQ(fold_text("# cmdline : /usr/bin/perf record\n"
			       "cc 5 1.0: 2 cpu-clock:\n# mid\n\t1 f (/x)\n\n",
			       &none),
		     "cc;f 2\n");
	/* count_samples ignores the period. */
	ASSERT_STREQ(fold_text("cc 5 1.0: 2000 cpu-clock:\n\t1 f (/x)\n\n"
			       "cc 5 1.0: 3000 cpu-clock:\n\t1 f (/x)\n\n",
			       &(struct fg_perfscript_opts){ .count_samples = true }),
		     "cc;f 2\n");
	/* A ';' in a comm splits it, as the script's joined string does. */
	ASSERT_STREQ(fold_text("ab;c 5 1.0: cpu-clock:\n\t1 f (/x)\n\n"
			       "ab 5 1.0: cpu-clock:\n\t1 f (/x)\n\t1 c (/x)\n\n",
			       &none),
		     "ab;c;f 2\n");
}

TEST(edge_cases)
{
	struct fg_perfscript_opts none = {};
	struct fg_perfscript_stats st;
	struct sink s;

	/* Verified: empty input, and only blank lines. */
	ASSERT_STREQ(fold_text("", &none), "");
	ASSERT_STREQ(fold_text("\n\n\r\n", &none), "");

	/* Differs: CRLF text folds as LF text; the script sees no blank lines. */
	ASSERT_STREQ(fold_text("cc 5 1.0: 2 cpu-clock:\r\n\t1 f+0x1 (/x)\r\n\r\n"
			       "cc 5 1.0: 2 cpu-clock:\r\n\t1 f+0x2 (/x)\r\n\r\n",
			       &none),
		     "cc;f 4\n");

	/* Differs: truncated input still folds its last sample, even mid-line. */
	ASSERT_STREQ(fold_text("cc 5 1.0: 2 cpu-clock:\n\t1 f (/x)\n\n"
			       "cc 5 1.0: 2 cpu-clock:\n\t1 g (/x)\n\t1 f (/l",
			       &none),
		     "cc;f 2\ncc;g 2\n");

	/* Differs: a header without the blank line before it ends the sample. */
	ASSERT_STREQ(fold_text("cc 5 1.0: 2 cpu-clock:\n\t1 f (/x)\n"
			       "dd 6 1.0: 2 cpu-clock:\n\t1 g (/x)\n\n",
			       &none),
		     "cc;f 2\ndd;g 2\n");

	/*
	 * Garbage lines are counted and skipped; the first is remembered.
	 * Verified: the script warns "Unrecognized line" about the same three.
	 */
	ASSERT_OK(fold("cc 5 1.0: 2 cpu-clock:\n\t1 f (/x)\n\tgarbage\n   \n\n"
		       "nonsense\n\t1 h (/x)\n\n"
		       "cc 5 1.0: 2 cpu-clock:\n\t1 g (/x)\n\n",
		       NULL, &none, &s, &st));
	ASSERT_STREQ(s.buf, "cc;f 2\ncc;g 2\n");
	ASSERT_EQ(st.malformed, 3);
	ASSERT_EQ(st.first_bad_line, 3);
	ASSERT_EQ(st.samples, 2);

	/*
	 * Huge periods: exact to 2^53 (verified); differs from 2^64 on, where
	 * perl prints 1.84467440737096e+19. Beyond a double's range the header
	 * is malformed.
	 */
	ASSERT_STREQ(fold_text("cc 5 1.0: 9007199254740992 cpu-clock:\n\t1 f (/x)\n\n"
			       "cc 5 1.0: 18446744073709551616 cpu-clock:\n\t1 g (/x)\n\n",
			       &none),
		     "cc;f 9007199254740992\ncc;g 18446744073709551616\n");
	{
		char big[800] = "cc 5 1.0: ";

		memset(big + strlen(big), '9', 400);
		strcat(big,
		       " cpu-clock:\n\t1 f (/x)\n\ncc 99999999999999999999 1.0: cpu-clock:\n\n");
		ASSERT_OK(fold(big, NULL, &none, &s, &st));
		ASSERT_STREQ(s.buf, "cc 1\n");
		ASSERT_EQ(st.malformed, 1);
		ASSERT_EQ(st.first_bad_line, 1);
	}
}

TEST(model_cap_is_an_error)
{
	struct fg_folded *f = fg_folded__new();
	struct fg_perfscript *p = NULL;
	static const char *lines[] = { "cc 5 1.0: cpu-clock:", "\t1 f (/x)", "",
				       "cc 5 1.0: cpu-clock:", "\t1 g (/x)", "" };
	int r = 0;

	ASSERT_OK(fg_perfscript__new(f, NULL, &p));
	fg_folded__set_max_stacks(f, 1);
	for (size_t i = 0; i < ELEMENTSOF(lines) && r >= 0; i++)
		r = fg_perfscript__feed(p, lines[i], strlen(lines[i]), i + 1);
	ASSERT_ERR(r, -E2BIG);
	ASSERT_EQ(fg_folded__n_stacks(f), 1);
	ASSERT_TRUE(fg_perfscript__free(p) == NULL);
	ASSERT_TRUE(fg_perfscript__free(NULL) == NULL);
	fg_folded__free(f);
}
