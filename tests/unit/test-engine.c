/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The engine on synthesized input: a process it never saw run is made up
 * with tracking records (fork, exec, an mmap of this test's own binary),
 * its samples are fed to a recording the engine started, and the result
 * the engine finishes must name the functions they point into. The engine
 * opens real tracking and sampling events (it needs root); nothing it reads
 * from them is what the test checks.
 */
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/macro.h"
#include "fgd-clock.h"
#include "fgd-conf.h"
#include "fgd-engine.h"
#include "fgd-loop.h"
#include "proto/status-types.h"
#include "test.h"

/* A pid no process has: the engine learns of it from the records alone. */
#define FAKE_PID 4000000
#define FAKE_BASE 0x7f0000000000ULL

int engine_leaf(int x);
int engine_caller(int x);

__attribute__((noinline, used)) int engine_leaf(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 5 + 1;
}

__attribute__((noinline, used)) int engine_caller(int x)
{
	__asm__ volatile("" ::: "memory");
	return engine_leaf(x) + 3;
}

/* The file offset of addr in this binary, from our own mapping of it. */
static uint64_t file_offset(uint64_t addr)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	uint64_t off = UINT64_MAX;

	ASSERT_TRUE(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, pgoff;

		if (sscanf(line, "%lx-%lx %*s %lx", &lo, &hi, &pgoff) == 3 && addr >= lo &&
		    addr < hi)
			off = addr - lo + pgoff;
	}
	fclose(f);
	ASSERT_TRUE(off != UINT64_MAX);
	return off;
}

struct sink {
	char text[65536];
	size_t len;
};

static int collect(void *ctx, const void *buf, size_t len)
{
	struct sink *s = ctx;

	ASSERT_TRUE(s->len + len < sizeof(s->text));
	memcpy(s->text + s->len, buf, len);
	s->len += len;
	return 0;
}

static void start(struct fgd_config *conf, struct fgd_loop **loop, struct fgd_engine **e)
{
	const char *why = NULL;

	if (geteuid() != 0)
		SKIP("the engine opens perf events: needs root");
	ASSERT_OK(fgd_config_init(conf));
	conf->always_on = false;
	ASSERT_OK(fgd_loop__new(loop));
	ASSERT_OK(fgd_engine__new(conf, *loop, e, &why));
}

/* A root client's recording of pid, or of the whole machine with pid 0, at the engine's defaults. */
static void recording_opts(struct fgd_engine *e, pid_t pid, struct fg_recording_opts *o)
{
	*o = (struct fg_recording_opts){};
	fgd_engine__recording_defaults(e, o);
	fg_record_request_init(&o->req);
	o->req.all = pid == 0;
	if (pid) {
		o->req.n_pids = 1;
		o->req.pids[0] = pid;
	}
	o->max_bytes = 64 << 20;
	fg_view_init(&o->view, 0, 0);
}

TEST(a_made_up_process_is_tracked_and_its_samples_named)
{
	struct fgd_config conf;
	struct fgd_loop *loop = NULL;
	struct fgd_engine *e = NULL;
	struct fg_recording *rec = NULL;
	struct fg_recording_opts o = {};
	struct fgd_engine_stats es;
	struct fg_status status = {};
	struct sink *out = calloc(1, sizeof(*out));
	char exe[4096];
	struct stat st;
	ssize_t n;
	uint64_t t = fgd_now(), leaf, caller;
	struct fg_record r;
	int done;

	ASSERT_TRUE(out);
	start(&conf, &loop, &e);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_TRUE(n > 0);
	exe[n] = '\0';
	ASSERT_EQ(stat(exe, &st), 0);

	/* The whole machine, frame pointers: the samples below are all the test reads back. */
	recording_opts(e, 0, &o);
	o.call_graph = FG_CALL_GRAPH_FP;
	o.frequency = 1;
	ASSERT_OK(fgd_engine__start_recording(e, &o, &rec, NULL, NULL, NULL));

	/* Born of us, then exec'd into "fakeproc" with this binary mapped at FAKE_BASE. */
	r = (struct fg_record){ .type = PERF_RECORD_FORK, .sid.time = ++t };
	r.task = (struct fg_task){ .pid = FAKE_PID,
				   .ppid = (uint32_t)getpid(),
				   .tid = FAKE_PID,
				   .ptid = (uint32_t)getpid(),
				   .time = t };
	fgd_engine__feed_tracking(e, &r);
	r = (struct fg_record){ .type = PERF_RECORD_COMM,
				.misc = PERF_RECORD_MISC_COMM_EXEC,
				.sid.time = ++t };
	r.comm = (struct fg_comm){
		.pid = FAKE_PID, .tid = FAKE_PID, .exec = true, .comm = "fakeproc"
	};
	fgd_engine__feed_tracking(e, &r);
	r = (struct fg_record){ .type = PERF_RECORD_MMAP2, .sid.time = ++t };
	r.mmap2 = (struct fg_mmap2){ .pid = FAKE_PID,
				     .tid = FAKE_PID,
				     .addr = FAKE_BASE,
				     .len = ((uint64_t)st.st_size + 4095) & ~4095ULL,
				     .pgoff = 0,
				     .maj = major(st.st_dev),
				     .min = minor(st.st_dev),
				     .ino = st.st_ino,
				     .prot = PROT_READ | PROT_EXEC,
				     .flags = MAP_PRIVATE,
				     .filename = exe };
	fgd_engine__feed_tracking(e, &r);

	/* Three samples in engine_leaf called from engine_caller, as the kernel would write them. */
	leaf = FAKE_BASE + file_offset((uint64_t)(uintptr_t)engine_leaf) + 4;
	caller = FAKE_BASE + file_offset((uint64_t)(uintptr_t)engine_caller) + 4;
	for (int i = 0; i < 3; i++) {
		uint64_t ips[] = { PERF_CONTEXT_USER, leaf, caller };

		r = (struct fg_record){ .type = PERF_RECORD_SAMPLE, .misc = PERF_RECORD_MISC_USER };
		r.sample.sid =
			(struct fg_sample_id){ .pid = FAKE_PID, .tid = FAKE_PID, .time = ++t };
		r.sid = r.sample.sid;
		r.sample.ip = leaf;
		r.sample.period = 1;
		r.sample.nr = ELEMENTSOF(ips);
		r.sample.ips = ips;
		fg_recording__feed(rec, &r);
	}
	/* The binary is read on the loader's thread: drain rounds until none waits. */
	fgd_engine__stop_recording(e, rec);
	for (int i = 0; i < 100 && fg_recording__waiting(rec) > 0; i++) {
		(void)fgd_loop__wait(loop, 100);
		fgd_engine__drain(e);
	}
	ASSERT_EQ(fg_recording__waiting(rec), 0);
	ASSERT_OK(fgd_engine__finish_recording(e, rec));
	while ((done = fg_recording__emit(rec, collect, out, 65536)) == 0)
		;
	ASSERT_EQ(done, 1);
	out->text[out->len] = '\0';
	ASSERT_TRUE(strstr(out->text, "fakeproc;engine_caller;engine_leaf 3\n") != NULL);

	/* The recording's figures went to the engine's totals as it left. */
	fgd_engine__stats(e, &es);
	ASSERT_EQ(es.recordings, 0);
	ASSERT_OK(fgd_engine__status(e, &status));
	ASSERT_TRUE(status.processes.generations >= 1);
	fg_status_done(&status);
	fg_recording__free(rec);
	fgd_engine__free(e);
	fgd_loop__free(loop);
	fgd_config_done(&conf);
	free(out);
}

TEST(a_recording_aborted_leaves_the_engine)
{
	struct fgd_config conf;
	struct fgd_loop *loop = NULL;
	struct fgd_engine *e = NULL;
	struct fg_recording *rec = NULL;
	struct fg_recording_opts o = {};
	struct fgd_engine_stats es;
	struct fg_status status = {};
	pid_t bad = 0;

	start(&conf, &loop, &e);
	recording_opts(e, FAKE_PID + 1, &o);
	/* A pid that does not exist is named back. */
	ASSERT_ERR(fgd_engine__start_recording(e, &o, &rec, &bad, NULL, NULL), -ESRCH);
	ASSERT_EQ(bad, FAKE_PID + 1);
	o.req.pids[0] = getpid();
	ASSERT_OK(fgd_engine__start_recording(e, &o, &rec, &bad, NULL, NULL));
	ASSERT_TRUE(fgd_engine__busy(e));
	fgd_engine__drain(e);
	/* Its tables are charged to the memory budget's recordings part while it lives. */
	ASSERT_OK(fgd_engine__status(e, &status));
	ASSERT_TRUE(status.memory.by_part[FG_BUDGET_RECORDINGS].bytes > 0);
	ASSERT_U64_EQ(status.memory.parts.recordings.bytes,
		      status.memory.by_part[FG_BUDGET_RECORDINGS].bytes);
	ASSERT_U64_EQ(status.memory.budget, conf.memory_max);
	fg_status_done(&status);
	fgd_engine__abort_recording(e, rec);
	ASSERT_TRUE(!fgd_engine__busy(e));
	fgd_engine__stats(e, &es);
	ASSERT_EQ(es.recordings, 0);
	ASSERT_OK(fgd_engine__status(e, &status));
	ASSERT_U64_EQ(status.memory.by_part[FG_BUDGET_RECORDINGS].bytes, 0);
	fg_status_done(&status);
	/* Over the kernel's maximum rate: refused before any event is opened. */
	o.frequency = es.max_frequency + 1;
	ASSERT_ERR(fgd_engine__start_recording(e, &o, &rec, &bad, NULL, NULL), -ERANGE);
	fgd_engine__free(e);
	fgd_loop__free(loop);
	fgd_config_done(&conf);
}

TEST(a_request_gets_the_defaults_and_what_its_user_may_ask)
{
	struct fgd_config conf;
	struct fgd_loop *loop = NULL;
	struct fgd_engine *e = NULL;
	struct fgd_engine_refusal why;
	struct fg_recording_opts o;
	struct fg_record_request req;
	struct fg_view root, user;

	start(&conf, &loop, &e);
	fg_view_init(&root, 0, 0);
	fg_view_init(&user, 1000, 2);

	/* Root, the whole machine, nothing chosen: the daemon's defaults. */
	fg_record_request_init(&req);
	req.all = true;
	ASSERT_OK(fgd_engine__recording_opts(e, &req, 0, &root, &o, &why));
	ASSERT_EQ(o.frequency, conf.default_frequency);
	ASSERT_EQ(o.call_graph, conf.call_graph);
	/* Only DWARF stack dumps size the ring for the rate. */
	ASSERT_TRUE(o.call_graph == FG_CALL_GRAPH_DWARF ? o.ring_pages >= conf.ring_pages :
							  o.ring_pages == conf.ring_pages);
	ASSERT_U64_EQ(o.max_bytes, 512ULL << 20);
	ASSERT_EQ(o.off_cpu_rate, 0);
	ASSERT_TRUE(o.req.all);

	/* The machine needs root: a denial, counted as one by the server. */
	ASSERT_ERR(fgd_engine__recording_opts(e, &req, 1000, &user, &o, &why), -EPERM);
	ASSERT_TRUE(why.denied);
	ASSERT_TRUE(strstr(why.why, "needs root") != NULL);

	/* A process of root's. */
	fg_record_request_init(&req);
	req.n_pids = 1;
	req.pids[0] = getpid();
	ASSERT_OK(fgd_engine__recording_opts(e, &req, 0, &root, &o, &why));
	/* Another user's process (the test runs as root) is refused to a user, and counted. */
	ASSERT_ERR(fgd_engine__recording_opts(e, &req, 1000, &user, &o, &why), -EPERM);
	ASSERT_TRUE(why.denied);
	ASSERT_TRUE(strstr(why.why, "you may record only your own processes") != NULL);
	req.pids[0] = FAKE_PID + 1;
	ASSERT_ERR(fgd_engine__recording_opts(e, &req, 0, &root, &o, &why), -ESRCH);
	ASSERT_TRUE(!why.denied);
	ASSERT_STREQ(why.why, "no such process: 4000001");
	req.pids[0] = getpid();
	req.frequency = UINT32_MAX;
	ASSERT_ERR(fgd_engine__recording_opts(e, &req, 0, &root, &o, &why), -EINVAL);
	ASSERT_TRUE(strstr(why.why, "kernel.perf_event_max_sample_rate") != NULL);

	/*
	 * A user's (no process named: the protocol's check asks for one): a
	 * smaller memory share, OffCpuUserRate=, and a capped rate.
	 */
	fg_record_request_init(&req);
	ASSERT_OK(fgd_engine__recording_opts(e, &req, 1000, &user, &o, &why));
	ASSERT_U64_EQ(o.max_bytes, 64ULL << 20);
	ASSERT_EQ(o.off_cpu_rate, conf.off_cpu_user_rate);
	req.frequency = 1001;
	ASSERT_ERR(fgd_engine__recording_opts(e, &req, 1000, &user, &o, &why), -EINVAL);
	ASSERT_STREQ(why.why, "frequency 1001 Hz is above the 1000 Hz allowed to non-root users");
	ASSERT_TRUE(!why.denied);
	req.n_pids = 1;
	req.pids[0] = getpid();

	/* DWARF: the ring grows with the rate, within its cap. */
	req.frequency = 999;
	req.call_graph = FG_CALL_GRAPH_DWARF;
	ASSERT_OK(fgd_engine__recording_opts(e, &req, 0, &root, &o, &why));
	ASSERT_EQ(o.frequency, 999);
	ASSERT_TRUE(o.ring_pages > conf.ring_pages && o.ring_pages <= 1024);

	/* A CPU that is not online is refused before anything is opened. */
	snprintf(o.req.cpus, sizeof(o.req.cpus), "%d", 4095);
	ASSERT_ERR(fgd_engine__can_record(e, &o, &why), -EINVAL);
	ASSERT_STREQ(why.why, "cpu 4095 is not online");
	o.req.cpus[0] = '\0';
	ASSERT_OK(fgd_engine__can_record(e, &o, &why));

	fgd_engine__free(e);
	fgd_loop__free(loop);
	fgd_config_done(&conf);
}

TEST(a_recording_the_budget_has_no_room_for_stops_growing)
{
	struct fgd_config conf;
	struct fgd_loop *loop = NULL;
	struct fgd_engine *e = NULL;
	struct fg_recording *rec = NULL;
	struct fg_recording_opts o = {};
	struct fg_status status = {};
	struct json_object *meta, *v;

	start(&conf, &loop, &e);
	/* Something else holds the whole budget: no data part has room. */
	fg_budget__charge(fgd_engine__budget(e), FG_BUDGET_WINDOW, conf.memory_max);
	recording_opts(e, getpid(), &o);
	ASSERT_OK(fgd_engine__start_recording(e, &o, &rec, NULL, NULL, NULL));
	fgd_engine__drain(e);
	ASSERT_OK(fgd_engine__status(e, &status));
	ASSERT_U64_EQ(status.memory.by_part[FG_BUDGET_RECORDINGS].refused, 1);
	ASSERT_TRUE(status.memory.pressure);
	fg_status_done(&status);
	/* Its tables stopped growing, as at its own limit, and its metadata says so. */
	fgd_engine__stop_recording(e, rec);
	ASSERT_OK(fgd_engine__finish_recording(e, rec));
	meta = fg_recording__metadata(rec);
	ASSERT_TRUE(meta);
	ASSERT_TRUE(json_object_object_get_ex(meta, "memory_limited", &v));
	ASSERT_TRUE(json_object_get_boolean(v));
	json_object_put(meta);
	fg_recording__free(rec);
	fg_budget__release(fgd_engine__budget(e), FG_BUDGET_WINDOW, conf.memory_max);
	fgd_engine__free(e);
	fgd_loop__free(loop);
	fgd_config_done(&conf);
}
