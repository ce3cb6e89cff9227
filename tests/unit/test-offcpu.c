/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The off-CPU source on a thread of this test that blocks in known ways: it
 * sleeps 10 times 20 ms. The BPF program follows only this process; its
 * blocks must come out with the time slept, a kernel stack (the path that
 * blocked) and a user stack. Needs root (BPF); skipped without, and in a
 * build without BPF, where the constructor must say why.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/macro.h"
#include "fgd-clock.h"
#include "sources/fgd-offcpu.h"
#include "test.h"

#define SLEEPS 10
#define SLEEP_MS 20
#define SLEEPER_NAME "fgtest-sleeper"

struct seen {
	pid_t tid;            /* the sleeper's */
	uintptr_t sleeper_sp; /* an address in the sleeper's frame */
	uint64_t blocks, with_kernel;
	/* Blocks of a sleep's length; others are waits for a CPU (it may be preempted) or its exit. */
	uint64_t sleeps, slept_us, sleeps_with_user;
	/* DWARF mode: sleeps with registers and a dump holding the sleeper's frame. */
	uint64_t sleeps_with_dump;
	uint64_t dump_end;    /* the highest address a dump reached */
	bool direct;          /* the source copied stacks straight into its ring */
	uint64_t periods[64]; /* every block's µs, for the message when a check fails */
	size_t n_periods;
	/*
	 * Sleeps under the name the sleeper gave itself. Other blocks need not
	 * carry it: on the main thread, a wait for a CPU after its old name is
	 * back (preempted before the drain) is still its block, and as long as
	 * a sleep on a busy machine.
	 */
	uint64_t sleeps_named;
	char other_comm[17]; /* a sleep's comm that was not the name, for the message */
};

static void *sleeper(void *arg)
{
	struct seen *seen = arg;
	struct timespec ts = { 0, SLEEP_MS * 1000000L };

	__atomic_store_n(&seen->sleeper_sp, (uintptr_t)&ts, __ATOMIC_RELAXED);
	__atomic_store_n(&seen->tid, gettid(), __ATOMIC_RELEASE);
	pthread_setname_np(pthread_self(), SLEEPER_NAME);
	for (int i = 0; i < SLEEPS; i++)
		nanosleep(&ts, NULL);
	return NULL;
}

static void on_block(void *ctx, const struct fg_sample *s, const char *comm)
{
	struct seen *seen = ctx;
	bool kernel = false, user = false, dump = false;

	ASSERT_EQ(s->sid.pid, (uint32_t)getpid());
	if ((pid_t)s->sid.tid != seen->tid)
		return;
	for (uint64_t i = 0; i + 1 < s->nr; i++) {
		kernel |= s->ips[i] == PERF_CONTEXT_KERNEL && s->ips[i + 1] < PERF_CONTEXT_MAX;
		user |= s->ips[i] == PERF_CONTEXT_USER && s->ips[i + 1] < PERF_CONTEXT_MAX;
	}
	/* perf's order: sp is the eighth register; the sleeper's frame is above it. */
	if (s->regs_abi == PERF_SAMPLE_REGS_ABI_64 && s->n_regs == 17 && s->stack_size)
		dump = s->regs[7] <= seen->sleeper_sp &&
		       seen->sleeper_sp < s->regs[7] + s->stack_size;
	if (dump)
		seen->dump_end = MAX(seen->dump_end, s->regs[7] + s->stack_size);
	if (seen->n_periods < ELEMENTSOF(seen->periods))
		seen->periods[seen->n_periods++] = s->period;
	seen->blocks++;
	seen->with_kernel += kernel;
	if (s->period >= SLEEP_MS * 1000) {
		seen->sleeps++;
		seen->slept_us += s->period;
		seen->sleeps_with_user += user || dump;
		seen->sleeps_with_dump += dump;
		if (strcmp(comm, SLEEPER_NAME) == 0)
			seen->sleeps_named++;
		else
			snprintf(seen->other_comm, sizeof(seen->other_comm), "%s", comm);
	}
}

/*
 * Follows this process with opts while a thread (on_main: the main thread)
 * sleeps SLEEPS times; what its blocks showed in *seen, the source's
 * counters in *st. False if BPF cannot work here, with why in *ret_why (the
 * test is skipped).
 */
static bool watch_sleeper(const struct fg_offcpu_opts *opts, bool on_main, struct seen *seen,
			  struct fg_offcpu_stats *st, const char **ret_why)
{
	struct fg_offcpu *off = NULL;
	char name[16] = "";
	pthread_t t;
	int r;

	r = fg_offcpu__new(opts, &off, ret_why);
	if (r == -EOPNOTSUPP) {
		ASSERT_TRUE(*ret_why && (*ret_why)[0]);
		return false;
	}
	ASSERT_OK(r);
	if (on_main) {
		ASSERT_EQ(pthread_getname_np(pthread_self(), name, sizeof(name)), 0);
		sleeper(seen);
		ASSERT_EQ(pthread_setname_np(pthread_self(), name), 0);
	} else {
		ASSERT_EQ(pthread_create(&t, NULL, sleeper, seen), 0);
		ASSERT_EQ(pthread_join(t, NULL), 0);
	}
	/* Its last wake-up is in the ring once the join returned. */
	ASSERT_TRUE(fg_offcpu__drain(off, on_block, seen, UINT64_MAX) >= 0);
	seen->direct = fg_offcpu__copies_direct(off);
	fg_offcpu__stats(off, st);
	printf("# %" PRIu64 " blocks; %" PRIu64 " switch-ins unseen (measured from run time); "
	       "stacks not taken: %" PRIu64 " kernel, %" PRIu64 " user; %" PRIu64
	       " without a user stack copy\n",
	       st->blocks, st->switch_ins_unseen, st->kernel_stack_failed, st->user_stack_failed,
	       st->user_dump_failed);
	fg_offcpu__free(off);

	/*
	 * Each sleep is one block about as long as asked, and the scheduler
	 * adds little (a wait for a CPU as long as a sleep would be one more).
	 */
	if (seen->sleeps < SLEEPS)
		for (size_t i = 0; i < seen->n_periods; i++)
			printf("# block of %" PRIu64 " us\n", seen->periods[i]);
	ASSERT_TRUE(seen->sleeps >= SLEEPS);
	ASSERT_TRUE(seen->slept_us < SLEEPS * SLEEP_MS * 1000 * 3 / 2);
	/*
	 * Each has a user stack, or is counted as lacking one: the kernel's
	 * walk failed, or (DWARF mode) its switch-in was unseen and the thread
	 * may have been back in user space since.
	 */
	ASSERT_TRUE(seen->sleeps_with_user + st->user_stack_failed + st->user_dump_failed >=
		    seen->sleeps);
	ASSERT_TRUE(seen->sleeps_with_user >= SLEEPS / 2);
	/* Every block has the kernel path that left the CPU; one at exit may have no user stack. */
	ASSERT_U64_EQ(seen->with_kernel, seen->blocks);
	if (seen->sleeps_named < SLEEPS)
		printf("# a sleep came as \"%s\"\n", seen->other_comm);
	ASSERT_TRUE(seen->sleeps_named >= SLEEPS);
	ASSERT_TRUE(st->blocks >= seen->blocks);
	ASSERT_U64_EQ(st->lost_threads + st->lost_ring, 0);
	return true;
}

/* The ring takes what the budget has room for, halved down to the fp ring's size. */
TEST(the_ring_is_sized_by_the_budget_s_room)
{
	const uint64_t mib = 1 << 20;

	ASSERT_EQ(fg_offcpu_ring_bytes_for(true, UINT64_MAX), FG_OFFCPU_DWARF_RING_BYTES);
	ASSERT_EQ(fg_offcpu_ring_bytes_for(true, 64 * mib), 16 * mib);
	/* Half the room for the ring, mapped twice: 24 MiB of room takes 4 MiB. */
	ASSERT_EQ(fg_offcpu_ring_bytes_for(true, 24 * mib), 4 * mib);
	ASSERT_EQ(fg_offcpu_ring_bytes_for(true, 48 * mib), 8 * mib);
	ASSERT_EQ(fg_offcpu_ring_bytes_for(true, 0), FG_OFFCPU_RING_BYTES);
	ASSERT_EQ(fg_offcpu_ring_bytes_for(false, UINT64_MAX), FG_OFFCPU_RING_BYTES);
	ASSERT_EQ(fg_offcpu_ring_bytes_for(false, 0), FG_OFFCPU_RING_BYTES);
}

TEST(a_sleeping_thread_blocks_as_long_as_it_sleeps)
{
	pid_t me = getpid();
	struct fg_offcpu_opts o = {
		.min_block_ns = 1000, .user_stacks = true, .pids = &me, .n_pids = 1
	};
	struct fg_offcpu_stats st;
	struct seen seen = {};
	const char *why = NULL;

	if (geteuid() != 0)
		SKIP("BPF needs root");
	if (!watch_sleeper(&o, false, &seen, &st, &why))
		SKIP(why);
	ASSERT_U64_EQ(seen.sleeps_with_dump, 0);
}

TEST(dwarf_mode_blocks_carry_the_user_registers_and_stack)
{
	pid_t me = getpid();
	struct fg_offcpu_opts o = { .min_block_ns = 1000,
				    .user_stacks = true,
				    .stack_dump = 8192,
				    .pids = &me,
				    .n_pids = 1 };
	struct fg_offcpu_stats st;
	struct seen seen = {};
	const char *why = NULL;

	if (geteuid() != 0)
		SKIP("BPF needs root");
	if (!watch_sleeper(&o, false, &seen, &st, &why))
		SKIP(why);
	/* Each sleep ends by leaving nanosleep, where its stack is copied, unless counted. */
	ASSERT_TRUE(seen.sleeps_with_dump + st.user_dump_failed >= seen.sleeps);
	ASSERT_TRUE(seen.sleeps_with_dump >= SLEEPS / 2);
}

/* Where argc is: the top of the main thread's stack that a DWARF-mode copy reaches. */
static uint64_t start_stack(void)
{
	_cleanup_(fclosep) FILE *f = fopen("/proc/self/stat", "re");
	char buf[4096], *p;
	uint64_t v = 0;

	ASSERT_TRUE(f && fgets(buf, sizeof(buf), f));
	/* Field 28; the comm (2) ends with the last ')'. */
	p = strrchr(buf, ')');
	ASSERT_TRUE(p);
	for (int field = 2; field < 28 && p; field++)
		p = strchr(p + 1, ' ');
	ASSERT_TRUE(p && sscanf(p + 1, "%" SCNu64, &v) == 1);
	return v;
}

/*
 * The main thread's stack is copied up to where argc is, not into the
 * environment and arguments above it (a piece at a time when that is less
 * than a page, as here), and still holds the sleeper's frame.
 */
TEST(dwarf_mode_copies_a_main_thread_up_to_its_arguments)
{
	pid_t me = getpid();
	struct fg_offcpu_opts o = { .min_block_ns = 1000,
				    .user_stacks = true,
				    .stack_dump = 32768,
				    .pids = &me,
				    .n_pids = 1 };
	struct fg_offcpu_stats st;
	struct seen seen = {};
	const char *why = NULL;
	uint64_t top = start_stack();

	if (geteuid() != 0)
		SKIP("BPF needs root");
	if (!watch_sleeper(&o, true, &seen, &st, &why))
		SKIP(why);
	ASSERT_TRUE(seen.sleeps_with_dump + st.user_dump_failed >= seen.sleeps);
	ASSERT_TRUE(seen.sleeps_with_dump >= SLEEPS / 2);
	printf("# dumps reach %#" PRIx64 ", argc at %#" PRIx64 ", the sleeper's frame at %#" PRIxPTR
	       "\n",
	       seen.dump_end, top, seen.sleeper_sp);
	/* Copied through a slot (before 5.19), a stack goes on to the first page it cannot read. */
	if (seen.direct) {
		ASSERT_TRUE(seen.dump_end <= top);
		ASSERT_TRUE(seen.dump_end + 8 > top);
	}
}

/* The copy kernels before 5.19 get (a scratch slot, then the ring) does the same here. */
TEST(dwarf_mode_copies_through_a_slot_without_dynptrs)
{
	pid_t me = getpid();
	struct fg_offcpu_opts o = { .min_block_ns = 1000,
				    .user_stacks = true,
				    .stack_dump = 8192,
				    .slot_copy = true,
				    .pids = &me,
				    .n_pids = 1 };
	struct fg_offcpu_stats st;
	struct seen seen = {};
	const char *why = NULL;

	if (geteuid() != 0)
		SKIP("BPF needs root");
	if (!watch_sleeper(&o, false, &seen, &st, &why))
		SKIP(why);
	ASSERT_TRUE(!seen.direct);
	ASSERT_TRUE(seen.sleeps_with_dump + st.user_dump_failed >= seen.sleeps);
	ASSERT_TRUE(seen.sleeps_with_dump >= SLEEPS / 2);
}

/* The source opened with o, or NULL when it cannot work here, with why in *ret_why (skip). */
static struct fg_offcpu *source_or_why(const struct fg_offcpu_opts *o, const char **ret_why)
{
	struct fg_offcpu *off = NULL;
	int r;

	if (geteuid() != 0) {
		*ret_why = "BPF needs root";
		return NULL;
	}
	r = fg_offcpu__new(o, &off, ret_why);
	if (r == -EOPNOTSUPP)
		return NULL;
	ASSERT_OK(r);
	return off;
}

/* What the renewal test's threads showed: blocks and those with each stack, of each thread. */
struct renewal {
	pid_t long_tid, short_tid;
	bool short_done;
	uint64_t long_us, long_with_both;
	uint64_t short_blocks, short_with_kernel;
};

static void *long_sleeper(void *arg)
{
	struct renewal *rn = arg;
	struct timespec ts = { 0, 300 * 1000000L };

	__atomic_store_n(&rn->long_tid, gettid(), __ATOMIC_RELEASE);
	nanosleep(&ts, NULL);
	return NULL;
}

static void *short_sleeper(void *arg)
{
	struct renewal *rn = arg;
	struct timespec ts = { 0, 1000000L };

	__atomic_store_n(&rn->short_tid, gettid(), __ATOMIC_RELEASE);
	for (int i = 0; i < 200; i++)
		nanosleep(&ts, NULL);
	return NULL;
}

static void on_renewal_block(void *ctx, const struct fg_sample *s, const char *comm)
{
	struct renewal *rn = ctx;
	bool kernel = false, user = false;

	for (uint64_t i = 0; i + 1 < s->nr; i++) {
		kernel |= s->ips[i] == PERF_CONTEXT_KERNEL && s->ips[i + 1] < PERF_CONTEXT_MAX;
		user |= s->ips[i] == PERF_CONTEXT_USER && s->ips[i + 1] < PERF_CONTEXT_MAX;
	}
	if ((pid_t)s->sid.tid == __atomic_load_n(&rn->long_tid, __ATOMIC_ACQUIRE) &&
	    s->period >= 250000) {
		rn->long_us += s->period;
		rn->long_with_both += kernel && user;
	} else if ((pid_t)s->sid.tid == __atomic_load_n(&rn->short_tid, __ATOMIC_ACQUIRE)) {
		rn->short_blocks++;
		rn->short_with_kernel += kernel;
	}
}

/*
 * The stack maps renewed every drain, and the user stacks read dropped each
 * time: a thread that sleeps across tens of renewals still has its stacks
 * when it wakes (carried over each time), and the blocks that come and go
 * meanwhile keep theirs.
 */
TEST(stacks_survive_the_renewal_of_the_stack_maps)
{
	pid_t me = getpid();
	struct fg_offcpu_opts o = {
		.min_block_ns = 1000,
		.user_stacks = true,
		.pids = &me,
		.n_pids = 1,
		.renew_ns = 1000000,
		/* The user stacks read are dropped at each renewal, but for those in use. */
		.max_user_stacks = 1
	};
	struct timespec tick = { 0, 2 * 1000000L };
	struct fg_offcpu_stats st;
	struct renewal rn = {};
	const char *why = NULL;
	struct fg_offcpu *off = source_or_why(&o, &why);
	pthread_t lt, sh;

	if (!off)
		SKIP(why);
	ASSERT_EQ(pthread_create(&lt, NULL, long_sleeper, &rn), 0);
	ASSERT_EQ(pthread_create(&sh, NULL, short_sleeper, &rn), 0);
	/* Drained every 2 ms while they sleep: a renewal, then its emptying 10 ms on, and again. */
	for (uint64_t end = fgd_now() + 400 * 1000000ULL; fgd_now() < end;) {
		ASSERT_TRUE(fg_offcpu__drain(off, on_renewal_block, &rn, UINT64_MAX) >= 0);
		nanosleep(&tick, NULL);
	}
	ASSERT_EQ(pthread_join(lt, NULL), 0);
	ASSERT_EQ(pthread_join(sh, NULL), 0);
	ASSERT_TRUE(fg_offcpu__drain(off, on_renewal_block, &rn, UINT64_MAX) >= 0);
	fg_offcpu__stats(off, &st);
	fg_offcpu__free(off);
	printf("# %" PRIu64 " renewals, %" PRIu64 " stacks lost; long sleep %" PRIu64
	       " us with both stacks: %" PRIu64 "; short blocks %" PRIu64 ", with kernel %" PRIu64
	       "\n",
	       st.stack_renewals, st.stacks_lost, rn.long_us, rn.long_with_both, rn.short_blocks,
	       rn.short_with_kernel);
	ASSERT_TRUE(st.stack_renewals >= 10);
	ASSERT_U64_EQ(st.stacks_lost, 0);
	ASSERT_TRUE(rn.long_us >= 300000 && rn.long_us < 400000);
	ASSERT_U64_EQ(rn.long_with_both, 1);
	ASSERT_TRUE(rn.short_blocks >= 150);
	ASSERT_U64_EQ(rn.short_with_kernel, rn.short_blocks);
}

static void ignore_block(void *ctx, const struct fg_sample *s, const char *comm)
{
}

static void *exit_soon(void *arg)
{
	struct timespec ts = { 0, 100000 };
	pid_t *tid = arg;

	*tid = gettid();
	nanosleep(&ts, NULL);
	return NULL;
}

TEST(threads_that_exit_are_not_held_as_away)
{
	pid_t me = getpid();
	struct fg_offcpu_opts o = { .min_block_ns = 1000, .pids = &me, .n_pids = 1 };
	struct fg_offcpu_stats st;
	pthread_t t[64];
	pid_t tids[ELEMENTSOF(t)];
	const char *why = NULL;
	struct fg_offcpu *off = source_or_why(&o, &why);

	if (!off)
		SKIP(why);
	/* Each thread blocks, runs again and exits: its last switch-out notes nothing. */
	for (size_t i = 0; i < ELEMENTSOF(t); i++)
		ASSERT_EQ(pthread_create(&t[i], NULL, exit_soon, &tids[i]), 0);
	for (size_t i = 0; i < ELEMENTSOF(t); i++)
		ASSERT_EQ(pthread_join(t[i], NULL), 0);
	for (size_t i = 0; i < ELEMENTSOF(t); i++)
		ASSERT_TRUE(!fg_offcpu__away(off, tids[i]));
	ASSERT_TRUE(fg_offcpu__drain(off, ignore_block, NULL, UINT64_MAX) >= 0);
	fg_offcpu__stats(off, &st);
	ASSERT_TRUE(st.blocks >= ELEMENTSOF(t));
	fg_offcpu__free(off);
}

/*
 * A child process that blocks `blocks` times for ns each, then exits,
 * followed by a source made with o: the source follows it alone, so the
 * test's own waits are not its blocks. The child starts once the source is
 * there (a pipe), and has exited when this returns, its resource usage in
 * *ret_ru (its context switches: child_blocks()). NULL, with why, if BPF
 * cannot work here.
 */
static struct fg_offcpu *follow_child(struct fg_offcpu_opts *o, pid_t *child, unsigned blocks,
				      long ns, struct rusage *ret_ru, const char **ret_why)
{
	struct fg_offcpu *off;
	int go[2], status;
	char c = 0;
	pid_t pid;

	ASSERT_EQ(pipe(go), 0);
	pid = fork();
	ASSERT_TRUE(pid >= 0);
	if (pid == 0) {
		struct timespec ts = { 0, ns };

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		for (unsigned i = 0; i < blocks; i++)
			nanosleep(&ts, NULL);
		_exit(0);
	}
	close(go[0]);
	o->pids = &pid;
	o->n_pids = 1;
	off = source_or_why(o, ret_why);
	o->pids = NULL;
	ASSERT_EQ(write(go[1], &c, 1), 1);
	close(go[1]);
	ASSERT_EQ(wait4(pid, &status, 0, ret_ru), pid);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	*child = pid;
	return off;
}

/*
 * How many times the child left the CPU of its own accord after the source
 * was there (ru from follow_child()): its voluntary switches, but for its
 * wait on the pipe, which may have begun before, and its last, as it died.
 * Not every sleep is one: a sleep whose timer runs out before it gets to
 * leave the CPU (an interrupt or a preemption in between, on a busy
 * machine) returns without a block.
 */
static uint64_t child_blocks(const struct rusage *ru)
{
	return ru->ru_nvcsw > 2 ? (uint64_t)ru->ru_nvcsw - 2 : 0;
}

struct counted {
	pid_t tid;
	uint64_t blocks, with_kernel;
};

static void count_block(void *ctx, const struct fg_sample *s, const char *comm)
{
	struct counted *c = ctx;
	bool kernel = false;

	if ((pid_t)s->sid.tid != c->tid)
		return;
	for (uint64_t i = 0; i + 1 < s->nr; i++)
		kernel |= s->ips[i] == PERF_CONTEXT_KERNEL && s->ips[i + 1] < PERF_CONTEXT_MAX;
	c->blocks++;
	c->with_kernel += kernel;
}

/*
 * A drain past its deadline handles one block and leaves the rest for the
 * next, which goes on where it stopped. The renewal of the stack maps due
 * meanwhile (after a millisecond here) empties the map renewed away from
 * only once the blocks the ring held when it began are handled: every
 * block keeps its kernel stack, and the renewal is done with the last.
 */
TEST(a_drain_stops_at_its_deadline_and_the_next_goes_on)
{
	struct fg_offcpu_opts o = { .min_block_ns = 1000, .renew_ns = 1000000 };
	struct timespec pause = { 0, 200 * 1000L };
	const unsigned blocks = 500;
	struct counted c = {};
	struct fg_offcpu_stats st;
	struct rusage ru = {};
	const char *why = NULL;
	struct fg_offcpu *off = follow_child(&o, &c.tid, blocks, 20 * 1000L, &ru, &why);
	unsigned drains = 0, behind = 0;

	if (!off)
		SKIP(why);
	/* All its blocks are in the ring: each drain, already late, takes one. */
	do {
		ASSERT_EQ(fg_offcpu__drain(off, count_block, &c, 0), 1);
		drains++;
		behind += fg_offcpu__behind(off);
		nanosleep(&pause, NULL);
	} while (fg_offcpu__behind(off));
	fg_offcpu__stats(off, &st);
	printf("# %u drains, %" PRIu64 " of the thread's blocks (%" PRIu64 " of its %u sleeps left "
	       "the CPU), %" PRIu64 " with their kernel stack; %" PRIu64 " renewals, %" PRIu64
	       " stacks lost\n",
	       drains, c.blocks, child_blocks(&ru), blocks, c.with_kernel, st.stack_renewals,
	       st.stacks_lost);
	ASSERT_TRUE(child_blocks(&ru) >= blocks * 9 / 10);
	ASSERT_TRUE(c.blocks >= child_blocks(&ru));
	ASSERT_EQ(behind, drains - 1);
	ASSERT_U64_EQ(st.stack_renewals, 1);
	ASSERT_U64_EQ(st.stacks_lost, 0);
	ASSERT_U64_EQ(c.with_kernel, c.blocks);
	/* Nothing is left: the next drain has nothing, is not behind, and renews again. */
	ASSERT_EQ(fg_offcpu__drain(off, count_block, &c, 0), 0);
	ASSERT_TRUE(!fg_offcpu__behind(off));
	fg_offcpu__stats(off, &st);
	ASSERT_U64_EQ(st.stack_renewals, 2);
	fg_offcpu__free(off);
}

/*
 * With a rate, blocks past it are not kept, counted; those kept are about
 * the rate times the time, and nothing is lost.
 */
TEST(the_rate_limit_keeps_about_that_many_blocks_a_second)
{
	struct fg_offcpu_opts o = { .min_block_ns = 1000, .max_rate = 1000 };
	const unsigned blocks = 4000;
	struct counted c = {};
	struct fg_offcpu_stats st;
	struct rusage ru = {};
	const char *why = NULL;
	uint64_t start = fgd_now(), ms;
	struct fg_offcpu *off = follow_child(&o, &c.tid, blocks, 100 * 1000L, &ru, &why);

	if (!off)
		SKIP(why);
	ms = (fgd_now() - start) / 1000000;
	ASSERT_TRUE(fg_offcpu__drain(off, count_block, &c, UINT64_MAX) >= 0);
	fg_offcpu__stats(off, &st);
	fg_offcpu__free(off);
	printf("# %" PRIu64 " blocks kept in %" PRIu64 " ms (%" PRIu64 " of the thread's), %" PRIu64
	       " past the rate; %" PRIu64 " switch-ins unseen; %" PRIu64
	       " of %u sleeps left the CPU\n",
	       st.blocks, ms, c.blocks, st.rate_limited, st.switch_ins_unseen, child_blocks(&ru),
	       blocks);
	ASSERT_TRUE(st.rate_limited > 0);
	/*
	 * Every block is kept or counted, but for those whose switch-in the
	 * kernel did not report and whose run since says nothing of them.
	 */
	ASSERT_TRUE(child_blocks(&ru) >= blocks * 9 / 10);
	ASSERT_TRUE(st.blocks + st.rate_limited + st.switch_ins_unseen >= child_blocks(&ru));
	/* A tenth of a second's worth a window, the last window's whole, a block a CPU a window. */
	ASSERT_TRUE(st.blocks <= ms + 100 + (ms / 100 + 1) * 64);
	ASSERT_TRUE(st.blocks >= ms / 2);
	ASSERT_U64_EQ(st.lost_ring + st.lost_threads, 0);
}

TEST(the_probe_says_why_it_cannot)
{
	const char *why = NULL;
	int r = fg_offcpu_probe(&why);

	/* Here it can (root, BTF); either way the answer is definite. */
	ASSERT_TRUE(r == 0 || (r == -EOPNOTSUPP && why && why[0]));
}
