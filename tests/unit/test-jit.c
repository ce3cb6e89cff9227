/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon side of JIT maps, on this very process: its perf map is
 * /tmp/perf-<our pid>.map, which the tests write, grow, rewrite and cut.
 * Re-reads are rate-limited, so a test polls a lookup until it sees what it
 * expects, within a deadline.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "base/budget.h"
#include "base/macro.h"
#include "fgd-clock.h"
#include "resolver/fgd-jit.h"
#include "resolver/fgd-proctab.h"
#include "symbols/fgd-symbols.h"
#include "test.h"

struct fixture {
	struct fg_symbolizer *sym;
	struct fg_proctab *t;
	struct fg_jit *jit;      /* borrowed from t */
	struct fg_process *self; /* borrowed from t */
	struct fg_jitmap *map;   /* borrowed from self */
	char path[64];
};

static void setup(struct fixture *f)
{
	pid_t tgid;

	snprintf(f->path, sizeof(f->path), "/tmp/perf-%d.map", getpid());
	(void)unlink(f->path);
	ASSERT_OK(fg_symbolizer__new(&f->sym));
	ASSERT_OK(fg_proctab__new(f->sym, &f->t));
	ASSERT_OK(fg_proctab__get_live(f->t, getpid(), &f->self, &tgid));
	f->jit = fg_proctab__jit(f->t);
	f->map = fg_jit__map(f->jit, f->self);
	ASSERT_TRUE(f->map);
	ASSERT_TRUE(fg_jit__map(f->jit, f->self) == f->map);
}

static void teardown(struct fixture *f)
{
	fg_proctab__free(f->t);
	fg_symbolizer__free(f->sym);
	(void)unlink(f->path);
}

static void write_file(const char *path, const char *text, const char *mode)
{
	FILE *fp = fopen(path, mode);

	ASSERT_TRUE(fp);
	ASSERT_TRUE(fputs(text, fp) >= 0);
	ASSERT_TRUE(fclose(fp) == 0);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Looks addr up until it has the name expected (NULL: none), for at most 5 s. */
static bool poll_name(struct fixture *f, uint64_t addr, const char *want, struct fg_jit_frame *ret)
{
	double deadline = now_s() + 5;
	struct fg_jit_frame fr = {};

	do {
		int r = fg_jitmap__lookup(f->jit, f->map, f->self, addr, 0, &fr);

		if (want ? r == 1 && strcmp(fr.name, want) == 0 : r == 0) {
			if (ret)
				*ret = fr;
			return true;
		}
		/* Between polls: 10 ms. */
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	} while (now_s() < deadline);
	return false;
}

static struct fg_jitmap_info info(struct fixture *f)
{
	struct fg_jitmap_info i;

	fg_jitmap__info(f->map, &i);
	return i;
}

TEST(absent_then_appended)
{
	struct fixture f = {};
	struct fg_jit_frame fr;
	struct fg_status_jit st;
	char want[64];

	setup(&f);
	ASSERT_EQ(fg_jitmap__lookup(f.jit, f.map, f.self, 0x1000, 0, &fr), 0);
	ASSERT_EQ(info(&f).state, FG_JIT_ABSENT);
	ASSERT_EQ(info(&f).error, 0);
	snprintf(want, sizeof(want), "/proc/%d/root/tmp/perf-%d.map", getpid(), getpid());
	ASSERT_STREQ(info(&f).path, want);

	/* The runtime writes, the last line not finished yet. */
	write_file(f.path, "1000 10 first\n2000 10 seco", "w");
	ASSERT_TRUE(poll_name(&f, 0x1000, "first", NULL));
	ASSERT_EQ(info(&f).state, FG_JIT_READING);
	ASSERT_EQ(fg_jitmap__lookup(f.jit, f.map, f.self, 0x2000, 0, &fr), 0);
	write_file(f.path, "nd\n0x3000 0x10 third with spaces\n", "a");
	ASSERT_TRUE(poll_name(&f, 0x2000, "second", NULL));
	ASSERT_TRUE(poll_name(&f, 0x300f, "third with spaces", NULL));
	ASSERT_EQ(info(&f).stats.entries, 3);
	ASSERT_EQ(info(&f).stats.bytes,
		  strlen("1000 10 first\n2000 10 second\n0x3000 0x10 third with spaces\n"));
	fg_jit__stats(f.jit, &st);
	ASSERT_EQ(st.maps, 1);
	ASSERT_EQ(st.maps_read, 1);
	ASSERT_EQ(st.resets, 0);
	/* Read in steps, not from the start each time. */
	ASSERT_TRUE(st.reads >= 2);
	ASSERT_TRUE(st.bytes > 0);
	teardown(&f);
}

/*
 * jcmd PID Compiler.perfmap, then fgctl record: the map was looked for,
 * absent, by the always-on sampler or another recording less than a second
 * before it was written. The new recording's misses look again at once
 * (issue 17: every JIT frame of its first second was [unknown]); within the
 * recording, the rate limit holds, and what it holds back is counted.
 */
TEST(map_written_before_a_recording_names_its_samples)
{
	struct fixture f = {};
	struct fg_jit_frame fr;
	struct fg_status_jit st;
	uint64_t started;

	setup(&f);
	ASSERT_EQ(fg_jitmap__lookup(f.jit, f.map, f.self, 0x1000, 0, &fr), 0);
	ASSERT_EQ(info(&f).state, FG_JIT_ABSENT);
	write_file(f.path, "1000 10 written late\n", "w");
	/* A second is a long time in a test: the rate limit must still hold here. */
	ASSERT_EQ(fg_jitmap__lookup(f.jit, f.map, f.self, 0x1000, 0, &fr), 0);
	fg_jit__stats(f.jit, &st);
	ASSERT_U64_EQ(st.held, 1);
	ASSERT_U64_EQ(st.reads, 0);

	started = fgd_now();
	ASSERT_EQ(fg_jitmap__lookup(f.jit, f.map, f.self, 0x1000, started, &fr), 1);
	ASSERT_STREQ(fr.name, "written late");
	ASSERT_EQ(info(&f).state, FG_JIT_READING);
	/* Looked at since the recording began: its next miss waits for the rate limit. */
	ASSERT_EQ(fg_jitmap__lookup(f.jit, f.map, f.self, 0x5000, started, &fr), 0);
	fg_jit__stats(f.jit, &st);
	ASSERT_U64_EQ(st.held, 2);
	ASSERT_U64_EQ(st.reads, 1);
	teardown(&f);
}

TEST(rewritten_map_is_read_anew)
{
	struct fixture f = {};
	struct fg_jit_frame a, x;
	struct fg_status_jit st;

	setup(&f);
	write_file(f.path, "0x1000 0x10 old name\n", "w");
	ASSERT_TRUE(poll_name(&f, 0x1000, "old name", &a));
	/* As jcmd Compiler.perfmap does: the same file, truncated and written whole again. */
	write_file(f.path, "0x1000 0x10 new name\n0x2000 0x10 more code\n", "w");
	ASSERT_TRUE(poll_name(&f, 0x2000, "more code", NULL));
	ASSERT_TRUE(poll_name(&f, 0x1000, "new name", &x));
	/* A new map: its entries have new ids, so no recording confuses them with the old. */
	ASSERT_TRUE(a.id != x.id);
	fg_jit__stats(f.jit, &st);
	ASSERT_EQ(st.resets, 1);

	/* Cut shorter than what was read: read anew too. */
	write_file(f.path, "4000 10 short\n", "w");
	ASSERT_TRUE(poll_name(&f, 0x4000, "short", NULL));
	ASSERT_TRUE(poll_name(&f, 0x2000, NULL, NULL));
	fg_jit__stats(f.jit, &st);
	ASSERT_EQ(st.resets, 2);
	ASSERT_EQ(info(&f).stats.entries, 1);
	teardown(&f);
}

TEST(ended_generation_never_opens)
{
	struct fixture f = {};
	struct fg_process gone = { .pid = getpid(), .end_time = 1 };
	struct fg_jitmap *m;
	struct fg_jitmap_info i;
	struct fg_jit_frame fr;

	setup(&f);
	write_file(f.path, "1000 10 f\n", "w");
	m = fg_jit__map(f.jit, &gone);
	ASSERT_TRUE(m && m != f.map);
	/* Its pid may belong to someone else now: nothing is read for it. */
	ASSERT_EQ(fg_jitmap__lookup(f.jit, m, &gone, 0x1000, 0, &fr), 0);
	fg_jitmap__info(m, &i);
	ASSERT_EQ(i.state, FG_JIT_ABSENT);
	ASSERT_STREQ(i.path, "");
	fg_jit__release(f.jit, &gone);
	ASSERT_TRUE(gone.jit == NULL);
	teardown(&f);
}

TEST(reference_outlives_generation)
{
	struct fixture f = {};
	struct fg_jitmap *held;
	struct fg_jitmap_info i;
	struct fg_status_jit st;

	setup(&f);
	write_file(f.path, "1000 10 f\n2000 10 g\nbogus line\n", "w");
	ASSERT_TRUE(poll_name(&f, 0x2000, "g", NULL));
	held = fg_jitmap__ref(f.map);
	/* The generation goes (as when reaped); a recording's reference still reports it. */
	fg_jit__release(f.jit, f.self);
	ASSERT_TRUE(f.self->jit == NULL);
	fg_jitmap__info(held, &i);
	ASSERT_EQ(i.state, FG_JIT_READING);
	ASSERT_EQ(i.stats.entries, 2);
	ASSERT_EQ(i.stats.malformed, 1);
	fg_jit__stats(f.jit, &st);
	ASSERT_EQ(st.maps, 0);
	ASSERT_EQ(st.maps_read, 0);
	ASSERT_EQ(st.bytes, 0);
	ASSERT_TRUE(fg_jitmap__unref(held) == NULL);
	teardown(&f);
}

TEST(map_over_the_size_limit_is_refused)
{
	struct fixture f = {};
	struct fg_jit_frame fr;
	struct fg_status_jit st;
	struct fg_jitmap_info i;
	FILE *fp;

	setup(&f);
	fg_jit__set_max_map(f.jit, 4096);
	/* Sparse: its size, not its content, is what is refused, before anything is read. */
	write_file(f.path, "1000 10 first\n", "w");
	ASSERT_EQ(truncate(f.path, 8 << 20), 0);
	ASSERT_EQ(fg_jitmap__lookup(f.jit, f.map, f.self, 0x1000, 0, &fr), 0);
	i = info(&f);
	ASSERT_EQ(i.state, FG_JIT_REFUSED);
	ASSERT_STREQ(fg_jit_refusal_name(i.refusal), "too_large");
	ASSERT_EQ(i.file_size, 8 << 20);
	ASSERT_EQ(i.stats.bytes, 0);
	fg_jit__stats(f.jit, &st);
	ASSERT_EQ(st.refused, 1);
	ASSERT_EQ(st.reads, 0);
	teardown(&f);

	/* A map that grows past the limit while it is read keeps what was read, and reads no more. */
	setup(&f);
	fg_jit__set_max_map(f.jit, 64);
	write_file(f.path, "1000 10 first\n", "w");
	ASSERT_TRUE(poll_name(&f, 0x1000, "first", NULL));
	fp = fopen(f.path, "a");
	ASSERT_TRUE(fp);
	for (int k = 0; k < 16; k++)
		fprintf(fp, "%x 10 later%d\n", 0x2000 + k * 0x100, k);
	ASSERT_EQ(fclose(fp), 0);
	ASSERT_TRUE(poll_name(&f, 0x2000, "later0", NULL));
	/* Past byte 64 nothing is read: the last entries never come. */
	ASSERT_TRUE(poll_name(&f, 0x2f00, NULL, NULL));
	i = info(&f);
	ASSERT_EQ(i.state, FG_JIT_READING);
	ASSERT_TRUE(i.size_limited);
	ASSERT_EQ(i.stats.bytes, 64);
	fg_jit__stats(f.jit, &st);
	ASSERT_EQ(st.size_limited, 1);
	teardown(&f);
}

TEST(reads_are_bounded_by_the_read_budget)
{
	struct fixture f = {};
	struct fg_jit_frame fr;
	struct fg_status_jit st;
	double t0;
	int misses = 0;

	setup(&f);
	/* 16 MiB of one unterminated line: no entry, and half a second of the read rate. */
	write_file(f.path, "", "w");
	ASSERT_EQ(truncate(f.path, 16 << 20), 0);
	t0 = now_s();
	/* Every lookup misses and asks for more, as samples in unnamed JIT code do. */
	while (info(&f).stats.bytes < (16 << 20) && now_s() - t0 < 10) {
		ASSERT_EQ(fg_jitmap__lookup(f.jit, f.map, f.self, 0x1000, 0, &fr), 0);
		misses++;
	}
	ASSERT_EQ(info(&f).stats.bytes, 16 << 20);
	fg_jit__stats(f.jit, &st);
	/* No refresh read more than its share, and the budget made some wait. */
	ASSERT_TRUE(st.reads >= 16);
	ASSERT_TRUE(st.deferred > 0);
	/* 16 MiB at 32 MiB/s, after a 2 MiB burst: no less than 0.4 s, however fast the disk. */
	ASSERT_TRUE(now_s() - t0 >= 0.4);
	printf("# %d lookups, %" PRIu64 " reads, %" PRIu64 " put off, %.2f s\n", misses, st.reads,
	       st.deferred, now_s() - t0);
	teardown(&f);
}

TEST(maps_are_charged_to_the_budget_and_stop_without_room)
{
	struct fixture f = {};
	struct fg_status_memory bs;
	struct fg_status_jit st;
	struct fg_budget *b;

	ASSERT_OK(fg_budget__new(32ULL << 20, &b));
	setup(&f);
	fg_proctab__set_budget(f.t, b);
	write_file(f.path, "1000 10 first\n", "w");
	ASSERT_TRUE(poll_name(&f, 0x1000, "first", NULL));
	fg_jit__stats(f.jit, &st);
	fg_budget__stats(b, &bs);
	ASSERT_TRUE(st.bytes > 0);
	ASSERT_U64_EQ(bs.by_part[FG_BUDGET_JIT].bytes, st.bytes);
	/* The whole budget spent elsewhere: what the map gains is not read, and that is counted. */
	fg_budget__set_base(b, 32ULL << 20);
	write_file(f.path, "2000 10 second\n", "a");
	for (double deadline = now_s() + 5; !info(&f).budget_limited && now_s() < deadline;) {
		struct fg_jit_frame fr;

		ASSERT_EQ(fg_jitmap__lookup(f.jit, f.map, f.self, 0x2000, 0, &fr), 0);
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	}
	ASSERT_TRUE(info(&f).budget_limited);
	fg_jit__stats(f.jit, &st);
	fg_budget__stats(b, &bs);
	ASSERT_TRUE(st.budget_skipped > 0);
	ASSERT_TRUE(bs.by_part[FG_BUDGET_JIT].refused > 0);
	teardown(&f);
	fg_budget__stats(b, &bs);
	ASSERT_U64_EQ(bs.by_part[FG_BUDGET_JIT].bytes, 0);
	fg_budget__free(b);
}
