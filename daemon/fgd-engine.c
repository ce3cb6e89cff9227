/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "base/budget.h"
#include "base/cpulist.h"
#include "base/macro.h"
#include "base/procfs.h"
#include "consumers/fgd-alwayson.h"
#include "fgd-clock.h"
#include "fgd-engine.h"
#include "fgd-log.h"
#include "proto/status-types.h"
#include "resolver/fgd-jit.h"
#include "sources/fgd-offcpu.h"

/* Ended processes stay resolvable this long, for samples read after their exit. */
#define REAP_GRACE_NS (10ULL * 1000000000ULL)
/* fgd_engine__tick() is called this often; CFI of a binary no sample needed for this long is dropped. */
#define TICK_NS (1000ULL * 1000000ULL)
#define UNWIND_IDLE_NS (600ULL * 1000000000ULL)
/*
 * Off-CPU blocks are drained after every sampling ring, within this long a
 * round for all the off-CPU sources together (drain_blocks()): a thread
 * storm makes blocks faster than the loop can unwind them (1.5 million in
 * 8 s of one Python program), and drained whole they held the loop for
 * 1.7 s. Blocks left behind wait BLOCKS_PAUSE_NS for the next round, while
 * the loop serves clients and the sampling rings: sources behind have at
 * most a fifth of the loop's time, and the blocks a ring cannot take are
 * lost to it, counted (lost_ring), as are those left at its end
 * (lost_late). Short rounds, because among a storm's threads every ms of
 * CPU in a turn risks tens of ms waiting for a CPU (turns of 100 to 300 ms
 * held 1 ms of it).
 */
#define BLOCKS_ROUND_NS (5ULL * 1000000ULL)
#define BLOCKS_PAUSE_NS (20ULL * 1000000ULL)
/* Sampling is system-wide whatever the target: what a non-root user may ask for is capped. */
#define USER_MAX_FREQUENCY 1000
#define DWARF_MAX_RING_PAGES 1024 /* 4 MiB per CPU */
/* Memory one recording's tables may use: a non-root user's share is smaller. */
#define RECORDING_MAX_BYTES (512ULL << 20)
#define USER_RECORDING_MAX_BYTES (64ULL << 20)

struct fgd_engine {
	const struct fgd_config *conf; /* borrowed: fgd.c's, swapped whole on reload */
	struct fgd_loop *loop;         /* borrowed */
	uint64_t started;              /* CLOCK_MONOTONIC ns */
	char hostname[256];

	struct fg_event_choice event;
	uint32_t max_stack;
	uint32_t max_frequency;
	int offcpu;             /* fg_offcpu_probe() at start: 0 or why not as a negative errno */
	const char *offcpu_why; /* static */

	/* owned: MemoryMax=, what every component below charges (common/base/budget.h) */
	struct fg_budget *budget;
	uint64_t tracker_charged; /* the budget's rings part: the tracking events' rings */
	struct fg_loader *loader; /* owned: reads binaries, CFI and kallsyms off the loop */
	struct fgd_watch loader_watch;
	struct fg_symbolizer *sym;    /* owned */
	struct fg_unwinder *unwinder; /* owned */
	struct fg_proctab *procs;     /* owned */
	struct fg_evset *tracker;     /* owned */
	/*
	 * Every perf ring fd wakes the loop through this one watch, so an event
	 * still pending for a ring whose recording was just freed cannot point
	 * at freed memory.
	 */
	struct fgd_watch ring_watch;
	bool drain_wanted;
	/*
	 * The off-CPU sources' rings wake the loop through this one, so that
	 * one behind (blocks_behind) waits for blocks_due whatever it says.
	 */
	struct fgd_watch blocks_watch;
	bool blocks_wanted;
	bool blocks_behind;  /* the last round left blocks in a ring */
	uint64_t blocks_due; /* CLOCK_MONOTONIC ns: the next round for them when behind */
	size_t blocks_first; /* where the next round's turn of the off-CPU sources begins */

	struct fgd_alwayson *alwayson;  /* owned; NULL when always-on sampling is off */
	struct fgd_alwayson *offcpu_on; /* owned; NULL when always-on off-CPU is off */
	struct fg_recording **recs; /* owned array of borrowed pointers: sampling or finishing */
	size_t n_recs, cap_recs;
	struct source_job *jobs; /* off-CPU sources being made on the loader (start_source()) */

	struct fgd_cpu_totals *cpu_totals; /* owned; indexed like the tracker's CPUs */
	size_t n_cpu_totals;
	/* of every recording ended, by enum fg_call_graph */
	struct fg_stack_quality stack_totals[3];
};

static void ring_event(struct fgd_watch *w, uint32_t events)
{
	struct fgd_engine *e =
		(struct fgd_engine *)((uint8_t *)w - offsetof(struct fgd_engine, ring_watch));

	e->drain_wanted = true;
}

static void blocks_event(struct fgd_watch *w, uint32_t events)
{
	struct fgd_engine *e =
		(struct fgd_engine *)((uint8_t *)w - offsetof(struct fgd_engine, blocks_watch));

	e->blocks_wanted = true;
}

/* Loads finished: hand their results over, and let the samples that waited for them go on. */
static void loader_event(struct fgd_watch *w, uint32_t events)
{
	struct fgd_engine *e =
		(struct fgd_engine *)((uint8_t *)w - offsetof(struct fgd_engine, loader_watch));

	if (fg_loader__complete(e->loader) > 0)
		e->drain_wanted = true;
}

/*
 * A source's rings: its per-CPU events (NULL: none), and the off-CPU ring's
 * fd (-1: none). That one is edge-triggered: it stays readable while the
 * ring holds anything, and the program asks for a wakeup only as the ring
 * fills past a quarter (offcpu.bpf.c), which is when a round is wanted
 * sooner.
 */
static int watch_rings(struct fgd_engine *e, const struct fg_evset *events, int ring_fd)
{
	int r = ring_fd >= 0 ?
			fgd_loop__add_fd(e->loop, ring_fd, &e->blocks_watch, EPOLLIN | EPOLLET) :
			0;

	for (size_t i = 0; r >= 0 && events && i < fg_evset__n(events); i++)
		r = fgd_loop__add_fd(e->loop, fg_evset__fd(events, i), &e->ring_watch, EPOLLIN);
	return r;
}

static void unwatch_rings(struct fgd_engine *e, const struct fg_evset *events, int ring_fd)
{
	if (ring_fd >= 0)
		fgd_loop__del_fd(e->loop, ring_fd);
	for (size_t i = 0; events && i < fg_evset__n(events); i++)
		fgd_loop__del_fd(e->loop, fg_evset__fd(events, i));
}

/*
 * A recording's off-CPU source, made on the loader: loading the program
 * (the kernel verifies it: 40 to 60 ms of CPU here) and finding __schedule
 * in /proc/kallsyms (50 ms) held the loop for 85 ms a recording, 0.6 to
 * 1.7 s among a thread storm's threads. The loop goes on meanwhile, and the
 * recording begins when its source is attached.
 */
struct source_job {
	struct fg_loader_job job;
	struct fgd_engine *e;
	struct source_job *next; /* in e->jobs */
	/* NULL once the recording went (finished, aborted) before its source came */
	struct fg_recording *rec;
	fgd_engine_started_fn started;
	void *ctx;
	/* work()'s: copied at submission, its results written there */
	struct fg_offcpu_opts opts;
	pid_t pids[FG_PROTO_MAX_PIDS];
	struct fg_offcpu *source;
	const char *why;
	int r;
};

static void source_work(struct fg_loader_job *job)
{
	struct source_job *j = (struct source_job *)job;

	j->r = fg_offcpu__new(&j->opts, &j->source, &j->why);
}

static int watch_rings(struct fgd_engine *e, const struct fg_evset *events, int ring_fd);

static void source_done(struct fg_loader_job *job, bool cancelled)
{
	struct source_job *j = (struct source_job *)job, **p;
	struct fgd_engine *e = j->e;
	struct fg_recording *rec = j->rec;
	int r = cancelled ? -ECANCELED : j->r;

	for (p = &e->jobs; *p; p = &(*p)->next)
		if (*p == j) {
			*p = j->next;
			break;
		}
	if (!rec) {
		fg_offcpu__free(j->source);
		free(j);
		return;
	}
	if (r >= 0) {
		r = fg_recording__attach_source(rec, TAKE_PTR(j->source));
		/* Stopped meanwhile: it ends without its source, as it would have without samples. */
		if (r == -ECANCELED) {
			free(j);
			return;
		}
	}
	if (r >= 0)
		r = watch_rings(e, NULL, fg_recording__ring_fd(rec));
	/* The caller aborts the recording on a failure: its rings are unwatched then. */
	j->started(j->ctx, rec, r, r < 0 ? j->why : NULL);
	fg_offcpu__free(j->source);
	free(j);
}

/* Makes rec's off-CPU source on the loader; started() is called once it is attached, or failed. */
static int start_source(struct fgd_engine *e, struct fg_recording *rec,
			fgd_engine_started_fn started, void *ctx)
{
	struct source_job *j = calloc(1, sizeof(*j));

	if (!j)
		return -ENOMEM;
	*j = (struct source_job){
		.e = e, .next = e->jobs, .rec = rec, .started = started, .ctx = ctx
	};
	fg_recording__source_opts(rec, &j->opts, j->pids);
	e->jobs = j;
	fg_loader__submit(e->loader, &j->job, source_work, source_done);
	return 0;
}

static const struct fg_resolve_deps *deps(struct fgd_engine *e, struct fg_resolve_deps *ret)
{
	*ret = (struct fg_resolve_deps){ e->procs, e->sym, e->unwinder, e->loader, e->budget };
	return ret;
}

/* Windows sharing the budget's window part: always-on's, and always-on off-CPU's. */
static unsigned windows(const struct fgd_config *c)
{
	return c->off_cpu ? 2 : 1;
}

/*
 * Always-on sampling (off_cpu: always-on off-CPU) with the configuration's
 * settings; its rings watched.
 */
static int alwayson_start(struct fgd_engine *e, bool off_cpu, struct fgd_alwayson **ret)
{
	const struct fgd_config *c = e->conf;
	struct fgd_alwayson_opts o = {
		.conf = c,
		.event = e->event,
		.max_stack = e->max_stack,
		.hostname = e->hostname,
		.off_cpu = off_cpu,
		.windows = windows(c),
	};
	struct fg_resolve_deps d;
	struct fgd_alwayson *a = NULL;
	const char *why = NULL;
	int r;

	if (!off_cpu && c->always_on_frequency > e->max_frequency)
		return log_error(
			       "Always-on frequency %u Hz is above kernel.perf_event_max_sample_rate "
			       "(%u)",
			       c->always_on_frequency, e->max_frequency),
		       -EINVAL;
	r = fgd_alwayson__new(&o, deps(e, &d), &a, &why);
	if (r >= 0)
		r = watch_rings(e, fgd_alwayson__events(a), fgd_alwayson__ring_fd(a));
	if (r < 0) {
		if (off_cpu)
			log_error("Failed to start always-on off-CPU: %s", why ?: strerror(-r));
		else if (r != -EINVAL)
			log_error("Failed to start always-on sampling: %s", strerror(-r));
		if (a)
			unwatch_rings(e, fgd_alwayson__events(a), fgd_alwayson__ring_fd(a));
		fgd_alwayson__free(a);
		return r;
	}
	*ret = a;
	return 0;
}

static struct fgd_alwayson *alwayson_stop(struct fgd_engine *e, struct fgd_alwayson *a)
{
	if (a)
		unwatch_rings(e, fgd_alwayson__events(a), fgd_alwayson__ring_fd(a));
	return fgd_alwayson__free(a);
}

/*
 * The daemon's resident memory now and the most it ever was (VmRSS and
 * VmHWM of /proc/self/status, in bytes); 0 for what is unknown.
 */
static void resident(uint64_t *ret_now, uint64_t *ret_peak)
{
	_cleanup_free_ char *text = NULL;
	uint64_t kib;
	size_t len;

	*ret_now = *ret_peak = 0;
	if (fg_read_file("/proc/self/status", 1 << 16, &text, &len) < 0)
		return;
	if (fg_parse_proc_status(text, "VmRSS", &kib) == 0)
		*ret_now = kib * 1024;
	if (fg_parse_proc_status(text, "VmHWM", &kib) == 0)
		*ret_peak = kib * 1024;
}

/*
 * What the kernel's rings hold resident in fgd now (bytes): the Rss of its
 * perf event and BPF map mappings in /proc/self/smaps. A BPF ring is
 * resident whole from its mmap(); a perf ring page by page as it is read.
 */
static uint64_t rings_resident(void)
{
	_cleanup_(fclosep) FILE *f = fopen("/proc/self/smaps", "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	uint64_t kib = 0, sum = 0;
	bool ring = false;

	while (f && getline(&line, &cap, f) > 0) {
		/*
		 * A mapping's first line is "start-end perms offset dev inode
		 * [path]", its address in lower-case hex; the lines of its
		 * figures begin with an upper-case name ("Rss:").
		 */
		if ((line[0] >= '0' && line[0] <= '9') || (line[0] >= 'a' && line[0] <= 'f'))
			ring = strstr(line, "anon_inode:[perf_event]") ||
			       strstr(line, "anon_inode:bpf-map");
		else if (ring && sscanf(line, "Rss: %" SCNu64 " kB", &kib) == 1)
			sum += kib * 1024;
	}
	return sum;
}

/*
 * Under AddressSanitizer the RSS holds the sanitizer's shadow memory and
 * quarantine (tens of MiB at start), which are not fgd's: counted as the
 * base they would leave the data parts no room, and the daemon would behave
 * unlike a real build. Status still shows that RSS.
 */
#if defined(__SANITIZE_ADDRESS__)
#define RSS_IS_FGDS false
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RSS_IS_FGDS false
#endif
#endif
#ifndef RSS_IS_FGDS
#define RSS_IS_FGDS true
#endif

/*
 * Once everything is set up: what the daemon holds that no part is charged
 * with (its code, libraries, stacks, the allocator's own) counts against
 * the total as the base.
 */
static void budget_ready(struct fgd_engine *e)
{
	struct fg_status_memory st;
	uint64_t rss, peak, others;

	resident(&rss, &peak);
	fg_budget__stats(e->budget, &st);
	/*
	 * The rings part is charged whole, and its resident pages are only some
	 * of that (a perf ring's unread ones are not): both are left out.
	 */
	others = st.charged - st.by_part[FG_BUDGET_RINGS].bytes + rings_resident();
	if (RSS_IS_FGDS)
		fg_budget__set_base(e->budget, rss > others ? rss - others : 0);
	fg_budget__set_rss(e->budget, rss, peak);
}

struct fgd_engine *fgd_engine__free(struct fgd_engine *e)
{
	if (!e)
		return NULL;
	/* Recordings belong to the server's clients: they were aborted before this. */
	free(e->recs);
	e->alwayson = alwayson_stop(e, e->alwayson);
	e->offcpu_on = alwayson_stop(e, e->offcpu_on);
	/*
	 * The loader's jobs hold references to dsos and the unwinder: it goes
	 * before those. What they free from now on, they free themselves.
	 */
	if (e->sym)
		fg_symbolizer__set_loader(e->sym, NULL);
	if (e->unwinder)
		fg_unwinder__set_loader(e->unwinder, NULL);
	if (e->loader)
		fgd_loop__del(e->loop, &e->loader_watch);
	e->loader = fg_loader__free(e->loader);
	unwatch_rings(e, e->tracker, -1);
	fg_budget__account(e->budget, FG_BUDGET_RINGS, &e->tracker_charged, 0);
	e->tracker = fg_evset__free(e->tracker);
	e->procs = fg_proctab__free(e->procs);
	e->unwinder = fg_unwinder__free(e->unwinder);
	e->sym = fg_symbolizer__free(e->sym);
	e->budget = fg_budget__free(e->budget); /* after every component that charged it */
	free(e->cpu_totals);
	free(e);
	return NULL;
}

int fgd_engine__new(const struct fgd_config *conf, struct fgd_loop *loop, struct fgd_engine **ret,
		    const char **ret_why)
{
	_cleanup_(fgd_engine__freep) struct fgd_engine *e = calloc(1, sizeof(*e));
	struct fg_evset_opts track = { .kind = FG_EVSET_TRACK,
				       .ring_pages = conf->track_ring_pages };
	struct fg_status_symbols ss;
	int r;

#define FAIL(why, err) (*ret_why = (why), (err))
	if (!e)
		return FAIL("out of memory", -ENOMEM);
	e->conf = conf;
	e->loop = loop;
	e->started = fgd_now();
	e->ring_watch = (struct fgd_watch){ .fd = -1, .fn = ring_event };
	e->blocks_watch = (struct fgd_watch){ .fd = -1, .fn = blocks_event };
	if (gethostname(e->hostname, sizeof(e->hostname) - 1) < 0)
		snprintf(e->hostname, sizeof(e->hostname), "localhost");

	r = fg_sampler_probe_event(&e->event);
	if (r < 0)
		return FAIL(
			"cannot open a perf event (fgd needs root, or CAP_PERFMON, and a kernel "
			"with perf events)",
			r);
	e->max_stack = fg_sampler_max_stack();
	e->max_frequency = fg_sampler_max_rate();
	if (conf->default_frequency > e->max_frequency)
		return FAIL("the default frequency is above kernel.perf_event_max_sample_rate",
			    -EINVAL);
	log_info("Sampling event: %s%s", e->event.name,
		 e->event.type == PERF_TYPE_SOFTWARE ? " (no hardware PMU here: software clock)" :
						       "");
	e->offcpu = fg_offcpu_probe(&e->offcpu_why);
	if (e->offcpu < 0)
		log_info("Off-CPU recording unavailable: %s", e->offcpu_why);

	/* The budget first: the components get it as a borrowed pointer, and charge it from then on. */
	r = fg_budget__new(conf->memory_max, &e->budget);
	if (r >= 0)
		r = fg_unwinder__new(&e->unwinder);
	if (r >= 0)
		r = fg_symbolizer__new(&e->sym);
	if (r >= 0)
		r = fg_proctab__new(e->sym, &e->procs);
	if (r < 0)
		return FAIL("out of memory", r);
	fg_symbolizer__set_budget(e->sym, e->budget);
	fg_unwinder__set_budget(e->unwinder, e->budget);
	fg_proctab__set_budget(e->procs, e->budget);
	fg_jit__set_max_map(fg_proctab__jit(e->procs), conf->jit_map_max);

	/* Tracking first, then the scan: nothing born in between can be missed. */
	r = fg_evset__open(&track, &e->tracker);
	if (r >= 0)
		r = fg_evset__enable(e->tracker);
	if (r >= 0)
		r = watch_rings(e, e->tracker, -1);
	if (r < 0)
		return FAIL("cannot open the tracking events", r);
	fg_budget__account(e->budget, FG_BUDGET_RINGS, &e->tracker_charged,
			   fg_evset__bytes(e->tracker));
	e->n_cpu_totals = fg_evset__n(e->tracker);
	e->cpu_totals = calloc(e->n_cpu_totals, sizeof(*e->cpu_totals));
	if (!e->cpu_totals)
		return FAIL("out of memory", -ENOMEM);
	for (size_t i = 0; i < e->n_cpu_totals; i++)
		e->cpu_totals[i].cpu = fg_evset__cpu(e->tracker, i);

	r = fg_proctab__scan(e->procs);
	if (r < 0)
		return FAIL("cannot read /proc", r);
	r = fg_symbolizer__refresh_kernel(e->sym, false);
	if (r < 0)
		log_warning(
			"Failed to read /proc/kallsyms: %s; kernel frames will show as [unknown]",
			strerror(-r));
	fg_symbolizer__stats(e->sym, &ss);
	if (r >= 0 && ss.kernel_restricted)
		log_warning(
			"Kernel addresses are hidden (kernel.kptr_restrict); kernel frames will show "
			"as [unknown]");

	/* From here on, files are read on the loader's thread, never in the loop. */
	r = fg_loader__new(&e->loader);
	if (r < 0)
		return FAIL("cannot start the loader thread", r);
	e->loader_watch = (struct fgd_watch){ .fd = fg_loader__fd(e->loader), .fn = loader_event };
	r = fgd_loop__add(loop, &e->loader_watch, EPOLLIN);
	if (r < 0)
		return FAIL("cannot watch the loader", r);
	fg_symbolizer__set_loader(e->sym, e->loader);
	fg_unwinder__set_loader(e->unwinder, e->loader);

	if (conf->always_on) {
		r = alwayson_start(e, false, &e->alwayson);
		if (r < 0)
			return FAIL("cannot start always-on sampling", r);
		log_info("Always-on sampling at %u Hz: %u s slices, %u s window, %" PRIu64
			 " bytes at most",
			 conf->always_on_frequency, conf->slice_seconds, conf->window_seconds,
			 conf->memory_max);
	}
	/* Without BPF here fgd still starts: status says why off-CPU is unavailable. */
	if (conf->always_on && conf->off_cpu && alwayson_start(e, true, &e->offcpu_on) >= 0)
		log_info("Always-on off-CPU: blocks of %u us or more", conf->off_cpu_min_block_us);
	fgd_engine__drain(e);
	budget_ready(e);
	*ret = TAKE_PTR(e);
#undef FAIL
	return 0;
}

/*
 * The off-CPU sources' blocks, within BLOCKS_ROUND_NS for all of them: each
 * in turn gets an even share of what is left (what one did not need goes
 * to those after it), the first one a different source each round, so
 * that none is always left the least. A source behind keeps its blocks in
 * its own ring: no other consumer gives up anything for it.
 */
static void drain_blocks(struct fgd_engine *e)
{
	size_t n = e->n_recs + 1, left = e->offcpu_on ? 1 : 0;
	uint64_t end = fgd_now() + BLOCKS_ROUND_NS;
	bool behind = false;

	for (size_t i = 0; i < e->n_recs; i++)
		left += fg_recording__ring_fd(e->recs[i]) >= 0;
	for (size_t k = 0; k < n && left > 0; k++) {
		size_t i = (e->blocks_first + k) % n;
		uint64_t now = fgd_now(), share = now < end ? (end - now) / left : 0;

		if (i < e->n_recs && fg_recording__ring_fd(e->recs[i]) >= 0)
			behind |= fg_recording__drain_blocks(e->recs[i], now + share);
		else if (i == e->n_recs && e->offcpu_on)
			behind |= fgd_alwayson__drain_blocks(e->offcpu_on, now + share);
		else
			continue;
		left--;
	}
	e->blocks_first++;
	e->blocks_wanted = false;
	e->blocks_behind = behind;
	if (behind)
		e->blocks_due = fgd_now() + BLOCKS_PAUSE_NS;
}

static void on_tracking_record(void *ctx, const struct fg_record *rec)
{
	struct fgd_engine *e = ctx;

	fg_proctab__handle(e->procs, rec);
}

void fgd_engine__drain(struct fgd_engine *e)
{
	/*
	 * Snapshot the sample rings first, then read all tracking up to now:
	 * every fork, exec and mmap that a snapshotted sample depends on
	 * happened before the snapshot, so it is applied before the sample.
	 */
	for (size_t i = 0; i < e->n_recs; i++)
		if (fg_recording__events(e->recs[i]))
			fg_evset__snapshot(fg_recording__events(e->recs[i]));
	if (e->alwayson)
		fg_evset__snapshot(fgd_alwayson__events(e->alwayson));
	/*
	 * Off-CPU rings have no snapshot: they are drained whole, and a block of
	 * a process whose birth the tracking has not shown yet finds it in /proc
	 * (fg_proctab__find()).
	 */
	fg_evset__snapshot(e->tracker);
	fg_evset__drain_ordered(e->tracker, on_tracking_record, e);
	/* Its copies for the ordered drain grow with a round's records. */
	fg_budget__account(e->budget, FG_BUDGET_RINGS, &e->tracker_charged,
			   fg_evset__bytes(e->tracker));
	/* The names and loads the round's samples ask for go to the loader together. */
	fg_loader__hold(e->loader);
	for (size_t i = 0; i < e->n_recs; i++)
		fg_recording__drain(e->recs[i]);
	if (e->alwayson) {
		fgd_alwayson__drain(e->alwayson);
		fgd_alwayson__tick(e->alwayson, fgd_wall_ms());
	}
	/* Every sampling ring is drained: off-CPU blocks come after them, bounded. */
	if (!e->blocks_behind || fgd_now() >= e->blocks_due)
		drain_blocks(e);
	if (e->offcpu_on)
		fgd_alwayson__tick(e->offcpu_on, fgd_wall_ms());
	fg_loader__release(e->loader);
	e->drain_wanted = false;
}

void fgd_engine__feed_tracking(struct fgd_engine *e, const struct fg_record *rec)
{
	fg_proctab__handle(e->procs, rec);
}

bool fgd_engine__drain_wanted(const struct fgd_engine *e)
{
	/* A ring behind waits for its time: its wakeups say only that it is still full. */
	return e->drain_wanted || (e->blocks_wanted && !e->blocks_behind);
}

uint64_t fgd_engine__blocks_due(const struct fgd_engine *e)
{
	return e->blocks_behind ? e->blocks_due : UINT64_MAX;
}

bool fgd_engine__busy(const struct fgd_engine *e)
{
	return e->n_recs > 0;
}

/* Tells the budget the process's RSS and its peak, for status. */
static void tell_resident(struct fgd_engine *e)
{
	uint64_t rss, peak;

	resident(&rss, &peak);
	fg_budget__set_rss(e->budget, rss, peak);
}

void fgd_engine__tick(struct fgd_engine *e, uint64_t now)
{
	fg_proctab__reap(e->procs, now, REAP_GRACE_NS);
	fg_unwinder__trim(e->unwinder, UNWIND_IDLE_NS / TICK_NS);
	tell_resident(e);
}

void fgd_engine__relieve(struct fgd_engine *e, uint64_t now)
{
	/* The caches give back what the budget is over by, and the heap follows. */
	if (fg_budget__relieve(e->budget, now) > 0)
		fg_loader__trim_memory(e->loader);
}

/* Adds a recording's per-CPU counters and stack figures to the totals: as it leaves the engine. */
static void account(struct fgd_engine *e, struct fg_recording *rec)
{
	const struct fg_evset *events = fg_recording__events(rec);

	fg_stack_quality_add(&e->stack_totals[fg_recording__call_graph(rec)],
			     fg_recording__stack_quality(rec));
	for (size_t i = 0; events && i < fg_evset__n(events); i++) {
		const struct fg_cpu_counters *c = fg_evset__counters(events, i);

		for (size_t j = 0; j < e->n_cpu_totals; j++)
			if (e->cpu_totals[j].cpu == fg_evset__cpu(events, i))
				fg_cpu_counters_add(&e->cpu_totals[j].c, c);
	}
}

/* Takes rec out of the recordings drained: its figures go to the totals, its rings unwatched. */
static void detach(struct fgd_engine *e, struct fg_recording *rec)
{
	/* A source still being made is freed when it comes. */
	for (struct source_job *j = e->jobs; j; j = j->next)
		if (j->rec == rec)
			j->rec = NULL;
	for (size_t i = 0; i < e->n_recs; i++) {
		if (e->recs[i] != rec)
			continue;
		account(e, rec);
		unwatch_rings(e, fg_recording__events(rec), fg_recording__ring_fd(rec));
		e->recs[i] = e->recs[--e->n_recs];
		return;
	}
}

void fgd_engine__recording_defaults(const struct fgd_engine *e, struct fg_recording_opts *o)
{
	const struct fgd_config *c = e->conf;

	o->event = e->event;
	o->frequency = c->default_frequency;
	o->max_stack = e->max_stack;
	o->call_graph = c->call_graph;
	o->stack_dump = c->stack_dump;
	o->ring_pages = c->ring_pages;
	o->hostname = e->hostname;
}

_printf_(3, 4) static int refuse(struct fgd_engine_refusal *ret, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ret->why, sizeof(ret->why), fmt, ap);
	va_end(ap);
	return -err;
}

/* Whether uid may record the processes req names: each must exist, and be uid's unless root. */
static int check_pids(struct fgd_engine *e, const struct fg_record_request *req, uid_t uid,
		      struct fgd_engine_refusal *ret)
{
	for (size_t i = 0; i < req->n_pids; i++) {
		struct fg_process *p;
		pid_t tgid = 0;
		uid_t owner;
		int r;

		r = fg_proctab__get_live(e->procs, req->pids[i], &p, &tgid);
		if (r < 0 && tgid > 0)
			return refuse(ret, ESRCH,
				      "%d is a thread of process %d: record the process with -p %d",
				      req->pids[i], tgid, tgid);
		if (r < 0)
			return refuse(ret, ESRCH, "no such process: %d", req->pids[i]);
		if (uid == 0)
			continue;
		r = fg_process_owner(p, &owner);
		if (r < 0)
			return refuse(ret, ESRCH, "no such process: %d", req->pids[i]);
		if (owner != uid) {
			ret->denied = true;
			return refuse(
				ret, EPERM,
				"process %d belongs to another user or runs with privileges "
				"(setuid, setgid, capabilities): you may record only your own "
				"processes",
				req->pids[i]);
		}
	}
	return 0;
}

/*
 * Stack dumps make samples large: enough ring for about a quarter of a
 * second of samples at the requested rate (rings are drained every 250 ms,
 * and sooner when half full), within a cap per CPU.
 */
static size_t dwarf_ring_pages(size_t pages, uint32_t frequency, uint32_t stack_dump)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t want = (uint64_t)frequency * (stack_dump + 1024) / 4;

	while (pages * (uint64_t)page < want && pages < DWARF_MAX_RING_PAGES)
		pages *= 2;
	return pages;
}

int fgd_engine__recording_opts(struct fgd_engine *e, const struct fg_record_request *req, uid_t uid,
			       const struct fg_view *view, struct fg_recording_opts *ret,
			       struct fgd_engine_refusal *ret_why)
{
	struct fg_recording_opts o = {
		.req = *req,
		.view = *view,
		.max_bytes = uid == 0 ? RECORDING_MAX_BYTES : USER_RECORDING_MAX_BYTES,
	};
	int r;

	*ret_why = (struct fgd_engine_refusal){};
	/* What the daemon uses unless the request chooses. */
	fgd_engine__recording_defaults(e, &o);
	if (req->frequency)
		o.frequency = req->frequency;
	if (req->call_graph != FG_CALL_GRAPH_DEFAULT)
		o.call_graph = req->call_graph;
	if (req->stack_dump)
		o.stack_dump = req->stack_dump;
	/* Off-CPU: every block; a non-root user's, up to a rate of their own (OffCpuUserRate=). */
	if (req->off_cpu)
		o.frequency = 0;
	if (uid != 0)
		o.off_cpu_rate = e->conf->off_cpu_user_rate;
	if (req->all && uid != 0) {
		ret_why->denied = true;
		return refuse(ret_why, EPERM,
			      "recording the whole machine (-a) needs root; "
			      "record your own processes with -p");
	}
	r = check_pids(e, req, uid, ret_why);
	if (r < 0)
		return r;
	/* Off-CPU has no frequency (0 above): these caps are sampling's. */
	if (uid != 0 && o.frequency > USER_MAX_FREQUENCY)
		return refuse(ret_why, EINVAL,
			      "frequency %u Hz is above the %d Hz allowed to non-root users",
			      o.frequency, USER_MAX_FREQUENCY);
	if (o.frequency > e->max_frequency)
		return refuse(ret_why, EINVAL,
			      "frequency %u Hz is above the kernel's limit "
			      "(kernel.perf_event_max_sample_rate = %u)",
			      o.frequency, e->max_frequency);
	if (o.call_graph == FG_CALL_GRAPH_DWARF)
		o.ring_pages = dwarf_ring_pages(o.ring_pages, o.frequency, o.stack_dump);
	*ret = o;
	return 0;
}

/* The first CPU of list (valid: the request was checked) that is not online, or -1. */
static int offline_cpu(const char *list)
{
	_cleanup_free_ int *want = NULL, *online = NULL;
	size_t n_want, n_online;

	if (fg_cpulist_parse(list, &want, &n_want) < 0 ||
	    fg_evset_online_cpus(&online, &n_online) < 0)
		return -1; /* the evset's open says what is wrong then */
	for (size_t i = 0; i < n_want; i++) {
		bool found = false;

		for (size_t k = 0; k < n_online && !found; k++)
			found = online[k] == want[i];
		if (!found)
			return want[i];
	}
	return -1;
}

int fgd_engine__can_record(const struct fgd_engine *e, const struct fg_recording_opts *o,
			   struct fgd_engine_refusal *ret_why)
{
	*ret_why = (struct fgd_engine_refusal){};
	if (o->req.cpus[0]) {
		int bad = offline_cpu(o->req.cpus);

		if (bad >= 0)
			return refuse(ret_why, EINVAL, "cpu %d is not online", bad);
	}
	if ((o->req.off_cpu || o->req.wall) && e->offcpu < 0)
		return refuse(ret_why, EOPNOTSUPP, "off-CPU recording is unavailable: %s",
			      e->offcpu_why);
	return 0;
}

int fgd_engine__start_recording(struct fgd_engine *e, const struct fg_recording_opts *o,
				struct fg_recording **ret, pid_t *ret_bad_pid,
				fgd_engine_started_fn started, void *ctx)
{
	struct fg_recording *rec = NULL;
	struct fg_resolve_deps d;
	int r;

	if (!o->req.off_cpu && o->frequency > e->max_frequency)
		return -ERANGE;
	r = FG_GROW(e->recs, e->cap_recs, e->n_recs + 1);
	if (r < 0)
		return r;
	/* Modules loaded since: their frames would not be named. */
	(void)fg_symbolizer__refresh_kernel(e->sym, false);
	r = fg_recording__new(o, deps(e, &d), &rec, ret_bad_pid);
	if (r >= 0)
		r = watch_rings(e, fg_recording__events(rec), fg_recording__ring_fd(rec));
	if (r >= 0 && fg_recording__starting(rec))
		r = start_source(e, rec, started, ctx);
	if (r < 0) {
		if (rec)
			unwatch_rings(e, fg_recording__events(rec), fg_recording__ring_fd(rec));
		fg_recording__free(rec);
		return r;
	}
	e->recs[e->n_recs++] = rec;
	*ret = rec;
	return fg_recording__starting(rec) ? 1 : 0;
}

void fgd_engine__stop_recording(struct fgd_engine *e, struct fg_recording *rec)
{
	fg_recording__stop(rec);
	/* One last round: whatever the rings hold up to now belongs to this recording. */
	fgd_engine__drain(e);
}

int fgd_engine__finish_recording(struct fgd_engine *e, struct fg_recording *rec)
{
	detach(e, rec);
	return fg_recording__finish(rec);
}

void fgd_engine__abort_recording(struct fgd_engine *e, struct fg_recording *rec)
{
	detach(e, rec);
	fg_recording__free(rec);
}

struct fg_proctab *fgd_engine__procs(struct fgd_engine *e)
{
	return e->procs;
}

struct fgd_alwayson *fgd_engine__alwayson(struct fgd_engine *e)
{
	return e->alwayson;
}

struct fgd_alwayson *fgd_engine__offcpu_alwayson(struct fgd_engine *e)
{
	return e->offcpu_on;
}

struct fg_loader *fgd_engine__loader(struct fgd_engine *e)
{
	return e->loader;
}

struct fg_budget *fgd_engine__budget(struct fgd_engine *e)
{
	return e->budget;
}

const char *fgd_engine__hostname(const struct fgd_engine *e)
{
	return e->hostname;
}

bool fgd_engine__has_history(const struct fgd_engine *e)
{
	return e->alwayson && fgd_alwayson__has_history(e->alwayson);
}

void fgd_engine__stats(const struct fgd_engine *e, struct fgd_engine_stats *ret)
{
	*ret = (struct fgd_engine_stats){
		.event = e->event,
		.max_frequency = e->max_frequency,
		.cpu_totals = e->cpu_totals,
		.n_cpu_totals = e->n_cpu_totals,
		.offcpu_available = e->offcpu >= 0,
		.offcpu_why = e->offcpu < 0 ? e->offcpu_why : NULL,
		.recordings = e->n_recs,
	};
}

int fgd_engine__status(struct fgd_engine *e, struct fg_status *st)
{
	struct fg_stack_quality q[ELEMENTSOF(e->stack_totals)];
	struct fg_cpu_counters tracking;

	st->cpus = calloc(MAX(e->n_cpu_totals, (size_t)1), sizeof(*st->cpus));
	if (!st->cpus)
		return -ENOMEM;
	st->n_cpus = e->n_cpu_totals;
	for (size_t i = 0; i < e->n_cpu_totals; i++)
		fg_cpu_counters_status(e->cpu_totals[i].cpu, &e->cpu_totals[i].c, &st->cpus[i]);
	st->uptime_ms = (fgd_now() - e->started) / 1000000;
	st->event = e->event.name;
	st->max_frequency = e->max_frequency;
	st->max_stack = e->max_stack;
	/* Every recording's stack figures, finished or not yet, by mode. */
	memcpy(q, e->stack_totals, sizeof(q));
	for (size_t i = 0; i < e->n_recs; i++)
		fg_stack_quality_add(&q[fg_recording__call_graph(e->recs[i])],
				     fg_recording__stack_quality(e->recs[i]));
	fg_stack_quality_status(&q[FG_CALL_GRAPH_FP], &st->stack_quality.fp);
	fg_stack_quality_status(&q[FG_CALL_GRAPH_DWARF], &st->stack_quality.dwarf);
	fg_evset__totals(e->tracker, &tracking);
	st->tracking = (struct fg_status_tracking){
		.records = tracking.records,
		.lost = tracking.lost + tracking.lost_samples,
		.malformed = tracking.malformed,
	};
	st->has_off_cpu = true;
	st->off_cpu.available = e->offcpu >= 0;
	st->off_cpu.why = e->offcpu < 0 ? e->offcpu_why : NULL;

	fg_proctab__stats(e->procs, &st->processes);
	fg_symbolizer__stats(e->sym, &st->symbols);
	fg_unwinder__stats(e->unwinder, &st->unwinding);
	st->has_jit = true;
	fg_jit__stats(fg_proctab__jit(e->procs), &st->jit);
	st->has_loader = true;
	fg_loader__status(e->loader, &st->loader);
	/* What status shows is what the process holds as it answers, not at the last tick. */
	tell_resident(e);
	st->has_memory = true;
	fg_budget__stats(e->budget, &st->memory);
	return 0;
}

void fgd_engine__live_counters(const struct fgd_engine *e, struct fg_cpu_counters *sum)
{
	for (size_t i = 0; i < e->n_recs; i++) {
		const struct fg_evset *events = fg_recording__events(e->recs[i]);
		struct fg_cpu_counters t;

		if (!events)
			continue;
		fg_evset__totals(events, &t);
		fg_cpu_counters_add(sum, &t);
	}
}

int fgd_engine__reconfigure(struct fgd_engine *e, bool restart_always_on)
{
	const struct fgd_config *c = e->conf;
	struct fgd_alwayson *next = NULL;
	struct fg_status_memory bs;
	int r;

	/* Maps already refused stay refused; the limit applies from their next read. */
	fg_jit__set_max_map(fg_proctab__jit(e->procs), c->jit_map_max);
	/*
	 * Shares follow the total; the window's follows with a new always-on
	 * sampler, which is made with it. If that fails, fgd.c puts the old
	 * MemoryMax= back into the configuration: so does the budget.
	 */
	fg_budget__stats(e->budget, &bs);
	fg_budget__set_total(e->budget, c->memory_max);
	if (!restart_always_on)
		return 0;
	/*
	 * A new sampler starts with the new settings, then the running one
	 * writes its open slice, cut short, to the history and stops. Its
	 * closed slices are on disk already, so queries go on answering for
	 * their time from there (in the same state directory).
	 */
	if (c->always_on) {
		r = alwayson_start(e, false, &next);
		if (r < 0) {
			fg_budget__set_total(e->budget, bs.budget);
			return r;
		}
	}
	if (e->alwayson)
		fgd_alwayson__flush(e->alwayson);
	alwayson_stop(e, e->alwayson);
	e->alwayson = next;
	/* Off-CPU likewise, but a failure there (logged, said by status) leaves sampling on. */
	next = NULL;
	if (c->always_on && c->off_cpu)
		(void)alwayson_start(e, true, &next);
	if (e->offcpu_on)
		fgd_alwayson__flush(e->offcpu_on);
	alwayson_stop(e, e->offcpu_on);
	e->offcpu_on = next;
	if (next)
		log_info("Always-on off-CPU now keeps blocks of %u us or more",
			 c->off_cpu_min_block_us);
	if (next)
		log_info("Always-on sampling now at %u Hz: %u s slices, %u s window, %" PRIu64
			 " bytes at "
			 "most, call graph %s; the slices before are read from %s",
			 c->always_on_frequency, c->slice_seconds, c->window_seconds, c->memory_max,
			 fg_call_graph_name(c->call_graph), c->state_directory ?: "(no history)");
	else
		log_info("Always-on sampling stopped");
	return 0;
}

void fgd_engine__stopping(struct fgd_engine *e)
{
	/* The open slice is cut short and kept: a restart finds the history up to now. */
	if (e->alwayson)
		fgd_alwayson__flush(e->alwayson);
	if (e->offcpu_on)
		fgd_alwayson__flush(e->offcpu_on);
}
