/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Stack resolution on synthesized samples, as perf's sample-parsing test
 * works: records made up here, about this very process (its maps, its
 * binary, its functions), fed to a resolver, and the stacks it emits read
 * back as names. No perf event is opened.
 */
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Only its register capture: the rest is for the test programs. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "../programs/fgtest-unwind.h"
#pragma GCC diagnostic pop
#include "base/budget.h"
#include "base/macro.h"
#include "fgd-clock.h"
#include "fgd-loader.h"
#include "profile/folded.h"
#include "resolver/fgd-proctab.h"
#include "resolver/fgd-resolve.h"
#include "resolver/fgd-unwind.h"
#include "symbols/fgd-symbols.h"
#include "test.h"
#include "unwind/unwind.h"

#define MAX_EMITTED 8

struct fixture {
	struct fg_symbolizer *sym;
	struct fg_unwinder *unwinder;
	struct fg_loader *loader;
	struct fg_proctab *procs;
	struct fg_folded *names;
	struct fg_resolver *res;
	struct fg_process *self;
	/* What emit() saw: each stack as "a;b;c", with the first root slot's fill. */
	char emitted[MAX_EMITTED][4096];
	size_t n_emitted;
	bool want; /* what want() answers */
	char jit_path[64];
};

static bool want(void *ctx, struct fg_process *proc)
{
	return ((struct fixture *)ctx)->want;
}

static int emit(void *ctx, struct fg_process *proc, const struct fg_sample *s, uint32_t *names,
		size_t n)
{
	struct fixture *f = ctx;
	const uint32_t *locs;
	bool cut;
	size_t n_locs = fg_resolver__sample_locations(f->res, &locs, &cut), k = 0;
	char *out;
	size_t used = 0;

	/*
	 * The sample's locations, root first, each expanded into its names
	 * (outermost first), are the names emitted: what keeps stacks of
	 * locations (pprof's) keeps the same stacks. A stack cut short starts
	 * with the truncation frame, which is no location.
	 */
	if (cut) {
		ASSERT_TRUE(n > 0);
		ASSERT_STREQ(fg_folded__name(f->names, names[0]), FG_RESOLVE_TRUNCATED);
		k = 1;
	}
	for (size_t i = n_locs; i-- > 0;) {
		struct fg_resolve_location l;

		ASSERT_OK(fg_resolver__location(f->res, locs[i], &l));
		ASSERT_TRUE(l.n_names >= 1);
		ASSERT_TRUE(l.kind != FG_LOCATION_KERNEL || l.dso == NULL);
		for (size_t j = 0; j < l.n_names; j++, k++)
			ASSERT_TRUE(k < n && names[k] == l.names[j]);
	}
	ASSERT_EQ((int)k, (int)n);
	ASSERT_TRUE(f->n_emitted < MAX_EMITTED);
	/* The root slot is the consumer's to fill, right before names[0]. */
	names[-1] = UINT32_MAX;
	out = f->emitted[f->n_emitted++];
	out[0] = '\0';
	for (size_t i = 0; i < n; i++)
		used += (size_t)snprintf(out + used, 4096 - used, "%s%s", i ? ";" : "",
					 fg_folded__name(f->names, names[i]));
	return 0;
}

/* budget: borrowed, NULL for none; only the resolver charges it (its waiting room). */
static void setup_opts(struct fixture *f, enum fg_call_graph mode, bool with_loader,
		       struct fg_budget *budget, bool inline_frames)
{
	struct fg_resolve_opts o = {
		.call_graph = mode,
		.max_stack = 127,
		.inline_frames = inline_frames,
		.demangle = true,
		.jit_suffix = true,
		.waiting_max = 8 << 20,
		.root_slots = 1,
		.want = want,
		.emit = emit,
		.ctx = f,
	};
	struct fg_resolve_deps d;
	pid_t tgid;

	*f = (struct fixture){ .want = true };
	ASSERT_OK(fg_symbolizer__new(&f->sym));
	ASSERT_OK(fg_unwinder__new(&f->unwinder));
	if (with_loader) {
		ASSERT_OK(fg_loader__new(&f->loader));
		fg_symbolizer__set_loader(f->sym, f->loader);
		fg_unwinder__set_loader(f->unwinder, f->loader);
	}
	ASSERT_OK(fg_proctab__new(f->sym, &f->procs));
	ASSERT_OK(fg_proctab__get_live(f->procs, getpid(), &f->self, &tgid));
	f->names = fg_folded__new();
	ASSERT_TRUE(f->names);
	d = (struct fg_resolve_deps){ f->procs, f->sym, f->unwinder, f->loader, budget };
	ASSERT_OK(fg_resolver__new(&o, &d, f->names, &f->res));
}

static void setup_budget(struct fixture *f, enum fg_call_graph mode, bool with_loader,
			 struct fg_budget *budget)
{
	setup_opts(f, mode, with_loader, budget, true);
}

static void setup(struct fixture *f, enum fg_call_graph mode, bool with_loader)
{
	setup_budget(f, mode, with_loader, NULL);
}

static void teardown(struct fixture *f)
{
	fg_resolver__free(f->res);
	fg_folded__free(f->names);
	if (f->loader) {
		fg_symbolizer__set_loader(f->sym, NULL);
		fg_unwinder__set_loader(f->unwinder, NULL);
	}
	fg_loader__free(f->loader);
	fg_proctab__free(f->procs);
	fg_unwinder__free(f->unwinder);
	fg_symbolizer__free(f->sym);
	if (f->jit_path[0])
		unlink(f->jit_path);
}

/* A frame-pointer-mode sample of this process with the callchain ips (PERF_CONTEXT_* marked). */
static void feed(struct fixture *f, const uint64_t *ips, size_t nr)
{
	struct fg_record rec = { .type = PERF_RECORD_SAMPLE, .misc = PERF_RECORD_MISC_USER };

	rec.sample.sid = (struct fg_sample_id){ .pid = (uint32_t)getpid(),
						.tid = (uint32_t)gettid(),
						.time = fgd_now() };
	rec.sid = rec.sample.sid;
	rec.sample.ip = ips[1];
	rec.sample.period = 1;
	rec.sample.nr = nr;
	rec.sample.ips = ips;
	fg_resolver__sample(f->res, &rec);
}

/* Hands over what the loader finished, waiting up to 100 ms for some. */
static void complete_some(struct fixture *f)
{
	struct pollfd p = { .fd = fg_loader__fd(f->loader), .events = POLLIN };

	(void)poll(&p, 1, 100);
	fg_loader__complete(f->loader);
}

/* Completes the loader's jobs until the resolver has nothing waiting, for 10 s at most. */
static void wait_for_loads(struct fixture *f)
{
	uint64_t deadline = fgd_now() + 10ULL * 1000000000ULL;

	for (;;) {
		struct fg_resolve_stats st;

		fg_resolver__replay(f->res, false);
		fg_resolver__stats(f->res, &st);
		if (st.waiting == 0)
			return;
		ASSERT_TRUE(fgd_now() < deadline);
		complete_some(f);
	}
}

/* Completes every job the loader has, for 10 s at most. */
static void drain_loader(struct fixture *f)
{
	uint64_t deadline = fgd_now() + 10ULL * 1000000000ULL;
	struct fg_loader_stats st;

	for (fg_loader__stats(f->loader, &st); st.queued > 0; fg_loader__stats(f->loader, &st)) {
		ASSERT_TRUE(fgd_now() < deadline);
		complete_some(f);
	}
}

/* Distinct functions this process runs: the callchains below point into them. */
int resolve_leaf(int x);
int resolve_caller(int x);
struct capture;
int resolve_capture(struct capture *c);
int resolve_capture_caller(struct capture *c);

__attribute__((noinline, used)) int resolve_leaf(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

__attribute__((noinline, used)) int resolve_caller(int x)
{
	__asm__ volatile("" ::: "memory");
	return resolve_leaf(x) + 2;
}

/* A return address inside fn: the resolver looks up ip - 1, which must stay in fn. */
static uint64_t inside(void *fn)
{
	return (uint64_t)(uintptr_t)fn + 4;
}

TEST(user_frames_are_named_root_first)
{
	struct fixture f;
	uint64_t ips[] = { PERF_CONTEXT_USER, inside(resolve_leaf), inside(resolve_caller) };
	struct fg_resolve_stats st;

	setup(&f, FG_CALL_GRAPH_FP, false);
	feed(&f, ips, ELEMENTSOF(ips));
	ASSERT_EQ(f.n_emitted, 1);
	ASSERT_STREQ(f.emitted[0], "resolve_caller;resolve_leaf");
	/* The same stack again: a warm sample, named from the memo. */
	feed(&f, ips, ELEMENTSOF(ips));
	ASSERT_EQ(f.n_emitted, 2);
	ASSERT_STREQ(f.emitted[1], "resolve_caller;resolve_leaf");
	fg_resolver__stats(f.res, &st);
	ASSERT_EQ(st.samples, 2);
	ASSERT_EQ(st.frames[FG_FRAME_NAMED], 4);
	ASSERT_EQ(st.waited, 0);
	/* The chain stops in resolve_caller, not at _start: a frame-pointer walk that ended early. */
	ASSERT_EQ(st.quality.user_stacks, 2);
	ASSERT_EQ(st.quality.complete, 0);
	teardown(&f);
}

/* The name ids location idx stands for. */
static const uint32_t *location_names(const struct fixture *f, uint32_t idx, size_t *n)
{
	struct fg_resolve_location l;

	ASSERT_OK(fg_resolver__location(f->res, idx, &l));
	*n = l.n_names;
	return l.names;
}

TEST(addresses_of_a_function_named_once_take_its_names)
{
	struct fixture f;
	/* Other addresses in the same two functions (resolve_leaf is 4 bytes long at least). */
	uint64_t a[] = { PERF_CONTEXT_USER, inside(resolve_leaf), inside(resolve_caller) },
		 b[] = { PERF_CONTEXT_USER, inside(resolve_leaf) - 3, inside(resolve_caller) + 2 };
	struct fg_resolve_location la, lb;
	const uint32_t *names[4];
	size_t n[4];

	/* Without inline frames, every address of a function is named by its symbol. */
	setup_opts(&f, FG_CALL_GRAPH_FP, false, NULL, false);
	feed(&f, a, ELEMENTSOF(a));
	feed(&f, b, ELEMENTSOF(b));
	ASSERT_EQ(f.n_emitted, 2);
	ASSERT_STREQ(f.emitted[0], "resolve_caller;resolve_leaf");
	ASSERT_STREQ(f.emitted[1], "resolve_caller;resolve_leaf");
	/* Four locations (pprof keeps each address), two sets of names. */
	for (uint32_t i = 0; i < 4; i++)
		names[i] = location_names(&f, i, &n[i]);
	ASSERT_OK(fg_resolver__location(f.res, 0, &la));
	ASSERT_OK(fg_resolver__location(f.res, 2, &lb));
	ASSERT_U64_EQ(la.addr - lb.addr, 3);
	ASSERT_TRUE(names[2] == names[0] && n[2] == n[0]);
	ASSERT_TRUE(names[3] == names[1] && n[3] == n[1]);
	ASSERT_TRUE(names[1] != names[0]);
	teardown(&f);

	/* With them, this binary's DWARF may name each address differently: each is asked. */
	setup_opts(&f, FG_CALL_GRAPH_FP, false, NULL, true);
	feed(&f, a, ELEMENTSOF(a));
	feed(&f, b, ELEMENTSOF(b));
	ASSERT_STREQ(f.emitted[1], "resolve_caller;resolve_leaf");
	ASSERT_TRUE(location_names(&f, 2, &n[2]) != location_names(&f, 0, &n[0]));
	teardown(&f);
}

TEST(unwanted_processes_are_counted_not_emitted)
{
	struct fixture f;
	uint64_t ips[] = { PERF_CONTEXT_USER, inside(resolve_leaf) };
	struct fg_resolve_stats st;

	setup(&f, FG_CALL_GRAPH_FP, false);
	f.want = false;
	feed(&f, ips, ELEMENTSOF(ips));
	ASSERT_EQ(f.n_emitted, 0);
	fg_resolver__stats(f.res, &st);
	ASSERT_EQ(st.filtered, 1);
	ASSERT_EQ(st.samples, 0);
	teardown(&f);
}

TEST(unmapped_code_is_named_from_the_jit_map)
{
	struct fixture f;
	/* No mapping covers 0x10000: JIT code, perhaps; the process's perf map names it. */
	uint64_t ips[] = { PERF_CONTEXT_USER, 0x10010, inside(resolve_caller) };
	FILE *map;

	setup(&f, FG_CALL_GRAPH_FP, false);
	snprintf(f.jit_path, sizeof(f.jit_path), "/tmp/perf-%d.map", getpid());
	map = fopen(f.jit_path, "we");
	ASSERT_TRUE(map);
	fprintf(map, "10000 100 LazyCompile:*hot /srv/app.js:3\n");
	ASSERT_EQ(fclose(map), 0);
	feed(&f, ips, ELEMENTSOF(ips));
	ASSERT_EQ(f.n_emitted, 1);
	ASSERT_STREQ(f.emitted[0], "resolve_caller;LazyCompile:*hot /srv/app.js:3_[j]");
	teardown(&f);
}

TEST(kernel_frames_are_named_from_kallsyms_with_their_suffix)
{
	struct fixture f;
	uint64_t ips[4] = { PERF_CONTEXT_KERNEL, 0, PERF_CONTEXT_USER, inside(resolve_caller) };
	char line[512], name[256], type;
	unsigned long long addr = 0;
	FILE *ks = fopen("/proc/kallsyms", "re");

	ASSERT_TRUE(ks);
	while (fgets(line, sizeof(line), ks))
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) == 3 && addr &&
		    (type == 'T' || type == 't') && strcmp(name, "do_syscall_64") == 0)
			break;
	fclose(ks);
	if (!addr || strcmp(name, "do_syscall_64") != 0)
		SKIP("kallsyms hides addresses here (kptr_restrict) or lacks do_syscall_64");
	ips[1] = addr + 1;
	setup(&f, FG_CALL_GRAPH_FP, false);
	ASSERT_TRUE(fg_symbolizer__refresh_kernel(f.sym, false) >= 0);
	feed(&f, ips, ELEMENTSOF(ips));
	ASSERT_EQ(f.n_emitted, 1);
	/* Root first: user frames, then the kernel's on top. */
	ASSERT_STREQ(f.emitted[0], "resolve_caller;do_syscall_64_[k]");
	teardown(&f);
}

/*
 * Frame pointers: the kernel's depth limit (127 here) counts kernel and
 * user frames together. A chain that long, short of an outermost function,
 * was cut: it starts with the frame that says so. One frame shorter, it
 * ended by itself (a walk that failed).
 */
TEST(a_frame_pointer_chain_at_the_depth_limit_is_truncated)
{
	struct fixture f;
	uint64_t ips[2 + 127];
	struct fg_resolve_stats st;
	size_t n = 0;

	ips[n++] = PERF_CONTEXT_KERNEL;
	for (size_t i = 0; i < 27; i++)
		ips[n++] = 0x10; /* no kernel symbol: [unknown]_[k] */
	ips[n++] = PERF_CONTEXT_USER;
	while (n < ELEMENTSOF(ips))
		ips[n++] = inside(resolve_leaf);
	setup(&f, FG_CALL_GRAPH_FP, false);
	feed(&f, ips, n);
	ASSERT_EQ(f.n_emitted, 1);
	ASSERT_TRUE(strncmp(f.emitted[0], FG_RESOLVE_TRUNCATED ";resolve_leaf;",
			    strlen(FG_RESOLVE_TRUNCATED ";resolve_leaf;")) == 0);
	fg_resolver__stats(f.res, &st);
	ASSERT_EQ(st.quality.truncated, 1);
	ASSERT_EQ(st.quality.failed, 0);
	feed(&f, ips, n - 1);
	ASSERT_EQ(f.n_emitted, 2);
	ASSERT_TRUE(strncmp(f.emitted[1], "resolve_leaf;", strlen("resolve_leaf;")) == 0);
	fg_resolver__stats(f.res, &st);
	ASSERT_EQ(st.quality.truncated, 1);
	ASSERT_EQ(st.quality.failed, 1);
	teardown(&f);
}

TEST(a_sample_waits_for_its_binary_then_is_named)
{
	struct fixture f;
	uint64_t ips[] = { PERF_CONTEXT_USER, inside(resolve_leaf), inside(resolve_caller) };
	struct fg_resolve_stats st;

	setup(&f, FG_CALL_GRAPH_FP, true);
	feed(&f, ips, ELEMENTSOF(ips));
	/* This binary's symbols are read on the loader's thread: nothing yet, the sample waits. */
	ASSERT_EQ(f.n_emitted, 0);
	fg_resolver__stats(f.res, &st);
	ASSERT_EQ(st.waiting, 1);
	wait_for_loads(&f);
	ASSERT_EQ(f.n_emitted, 1);
	ASSERT_STREQ(f.emitted[0], "resolve_caller;resolve_leaf");
	fg_resolver__stats(f.res, &st);
	ASSERT_EQ(st.waited, 1);
	ASSERT_EQ(st.degraded, 0);
	teardown(&f);
}

TEST(a_sample_that_cannot_wait_is_handled_with_what_is_known)
{
	struct fixture f;
	uint64_t ips[] = { PERF_CONTEXT_USER, inside(resolve_leaf), inside(resolve_caller) };
	struct fg_resolve_stats st;

	setup(&f, FG_CALL_GRAPH_FP, true);
	feed(&f, ips, ELEMENTSOF(ips));
	/* Nothing completed here (the loop's thread hands loads over): the binary is not read. */
	fg_resolver__replay(f.res, true);
	ASSERT_EQ(f.n_emitted, 1);
	ASSERT_TRUE(strstr(f.emitted[0], "test-resolve+0x") != NULL);
	fg_resolver__stats(f.res, &st);
	ASSERT_EQ(st.degraded, 1);
	ASSERT_EQ(st.waiting, 0);
	/* The names it got were not kept: once the binary is read, the next sample is named. */
	drain_loader(&f);
	feed(&f, ips, ELEMENTSOF(ips));
	wait_for_loads(&f);
	ASSERT_EQ(f.n_emitted, 2);
	ASSERT_STREQ(f.emitted[1], "resolve_caller;resolve_leaf");
	teardown(&f);
}

TEST(the_waiting_room_is_charged_to_the_budget_and_given_back)
{
	struct fixture f;
	uint64_t ips[] = { PERF_CONTEXT_USER, inside(resolve_leaf), inside(resolve_caller) };
	struct fg_budget *b;
	struct fg_status_memory bs;

	ASSERT_OK(fg_budget__new(32 << 20, &b));
	setup_budget(&f, FG_CALL_GRAPH_FP, true, b);
	feed(&f, ips, ELEMENTSOF(ips));
	ASSERT_EQ(f.n_emitted, 0);
	fg_budget__stats(b, &bs);
	ASSERT_TRUE(bs.by_part[FG_BUDGET_WAITING].bytes > 0);
	wait_for_loads(&f);
	ASSERT_EQ(f.n_emitted, 1);
	/* An empty room gives its memory back. */
	fg_budget__stats(b, &bs);
	ASSERT_U64_EQ(bs.by_part[FG_BUDGET_WAITING].bytes, 0);
	ASSERT_U64_EQ(bs.by_part[FG_BUDGET_WAITING].refused, 0);
	teardown(&f);
	fg_budget__free(b);
}

TEST(a_sample_the_budget_has_no_room_for_does_not_wait)
{
	struct fixture f;
	uint64_t ips[] = { PERF_CONTEXT_USER, inside(resolve_leaf), inside(resolve_caller) };
	struct fg_resolve_stats st;
	struct fg_budget *b;
	struct fg_status_memory bs;

	ASSERT_OK(fg_budget__new(32 << 20, &b));
	/* The window holds the whole total: no data part has room left. */
	fg_budget__charge(b, FG_BUDGET_WINDOW, 32 << 20);
	setup_budget(&f, FG_CALL_GRAPH_FP, true, b);
	feed(&f, ips, ELEMENTSOF(ips));
	/* Named at once with what is known (module+offset), counted as degraded and refused. */
	ASSERT_EQ(f.n_emitted, 1);
	ASSERT_TRUE(strstr(f.emitted[0], "test-resolve+0x") != NULL);
	fg_resolver__stats(f.res, &st);
	ASSERT_EQ(st.degraded, 1);
	ASSERT_EQ(st.waiting, 0);
	fg_budget__stats(b, &bs);
	ASSERT_U64_EQ(bs.by_part[FG_BUDGET_WAITING].bytes, 0);
	ASSERT_U64_EQ(bs.by_part[FG_BUDGET_WAITING].refused, 1);
	drain_loader(&f);
	teardown(&f);
	fg_budget__release(b, FG_BUDGET_WINDOW, 32 << 20);
	fg_budget__free(b);
}

/* Captures this function's registers and a copy of the stack above them, as perf would. */
struct capture {
	uint64_t regs[17];
	uint8_t stack[16384];
	uint64_t stack_size;
};

__attribute__((noinline, used)) int resolve_capture(struct capture *c)
{
	uint64_t sp, end;

	FGTEST_CAPTURE_REGS();
	memcpy(c->regs, fgtest_regs, sizeof(c->regs));
	sp = c->regs[7];
	end = fgtest_stack_end(sp);
	c->stack_size = MIN(end - sp, sizeof(c->stack));
	fgtest_copy_stack(c->stack, sp, c->stack_size);
	return 0;
}

__attribute__((noinline, used)) int resolve_capture_caller(struct capture *c)
{
	int r = resolve_capture(c);

	__asm__ volatile("" ::: "memory");
	return r + 1;
}

TEST(dwarf_mode_unwinds_the_stack_copy_to_start)
{
	/* Off the stack: the copy of it must reach the harness's frames, and _start. */
	static struct fixture f;
	struct fg_record rec = { .type = PERF_RECORD_SAMPLE, .misc = PERF_RECORD_MISC_USER };
	_cleanup_free_ struct capture *c = calloc(1, sizeof(*c));
	struct fg_resolve_stats st;

	ASSERT_TRUE(c);
	resolve_capture_caller(c);
	setup(&f, FG_CALL_GRAPH_DWARF, false);
	rec.sample.sid = (struct fg_sample_id){ .pid = (uint32_t)getpid(),
						.tid = (uint32_t)gettid(),
						.time = fgd_now() };
	rec.sid = rec.sample.sid;
	rec.sample.ip = c->regs[8];
	rec.sample.regs_abi = PERF_SAMPLE_REGS_ABI_64;
	rec.sample.regs = c->regs;
	rec.sample.n_regs = 17;
	rec.sample.stack = c->stack;
	rec.sample.stack_size = c->stack_size;
	fg_resolver__sample(f.res, &rec);
	ASSERT_EQ(f.n_emitted, 1);
	ASSERT_TRUE(strstr(f.emitted[0], ";resolve_capture_caller;resolve_capture") != NULL);
	ASSERT_TRUE(strstr(f.emitted[0], "main;") != NULL);
	fg_resolver__stats(f.res, &st);
	ASSERT_EQ(st.quality.user_stacks, 1);
	ASSERT_EQ(st.quality.complete, 1);
	/* Whole: nothing says it was cut. */
	ASSERT_TRUE(strstr(f.emitted[0], FG_RESOLVE_TRUNCATED) == NULL);

	/*
	 * The same copy cut to its first 64 bytes: the walk stops at the
	 * dump's end, and the stack starts with the frame that says so, not
	 * with a frame that looks like the outermost.
	 */
	rec.sample.stack_size = 64;
	rec.sample.sid.time = fgd_now();
	rec.sid = rec.sample.sid;
	fg_resolver__sample(f.res, &rec);
	ASSERT_EQ(f.n_emitted, 2);
	ASSERT_TRUE(strncmp(f.emitted[1], FG_RESOLVE_TRUNCATED ";",
			    strlen(FG_RESOLVE_TRUNCATED) + 1) == 0);
	ASSERT_TRUE(strstr(f.emitted[1], "main;") == NULL);
	fg_resolver__stats(f.res, &st);
	ASSERT_EQ(st.quality.truncated, 1);
	teardown(&f);
}
