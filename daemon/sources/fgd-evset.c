/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/cpulist.h"
#include "base/macro.h"
#include "perf/ring.h"
#include "proto/proto-types.h"
#include "proto/status.h"
#include "sources/fgd-evset.h"
#include "unwind/unwind.h"

#define SAMPLE_TYPE                                                                     \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)
#define TRACK_SAMPLE_TYPE \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

struct cpu_event {
	int cpu;
	int fd;
	void *base; /* owned mapping of map_size bytes */
	size_t map_size;
	struct fg_ring ring;
	struct fg_cpu_counters counters;
};

/* A record copied out of a ring for ordered delivery. */
struct held {
	uint64_t time;
	size_t offset; /* into the arena, in u64 units */
};

struct fg_evset {
	struct fg_record_fmt fmt;
	struct cpu_event *events; /* owned */
	size_t n;
	uint64_t *arena; /* owned: copies of records awaiting ordered delivery */
	size_t arena_len, arena_cap;
	struct held *held; /* owned */
	size_t n_held, cap_held;
};

static int perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group,
			   unsigned long flags)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group, flags);
}

static uint32_t read_sysctl_u32(const char *path, uint32_t fallback)
{
	_cleanup_(fclosep) FILE *f = fopen(path, "re");
	unsigned v;

	if (!f || fscanf(f, "%u", &v) != 1 || v == 0)
		return fallback;
	return v;
}

uint32_t fg_sampler_max_stack(void)
{
	return read_sysctl_u32("/proc/sys/kernel/perf_event_max_stack", 127);
}

uint32_t fg_sampler_max_rate(void)
{
	return read_sysctl_u32("/proc/sys/kernel/perf_event_max_sample_rate", 100000);
}

int fg_sampler_probe_event(struct fg_event_choice *ret)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_CPU_CYCLES,
		.freq = 1,
		.sample_freq = 99,
		.disabled = 1,
	};
	int fd = perf_event_open(&attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		*ret = (struct fg_event_choice){ PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES,
						 "cycles" };
		return 0;
	}
	/* No PMU (most VMs): the hrtimer-driven software clock works everywhere. */
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	fd = perf_event_open(&attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return negative_errno();
	close(fd);
	*ret = (struct fg_event_choice){ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "cpu-clock" };
	return 0;
}

int fg_evset_online_cpus(int **ret, size_t *ret_n)
{
	_cleanup_(fclosep) FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	char buf[4096];

	if (!f)
		return negative_errno();
	if (!fgets(buf, sizeof(buf), f))
		return -EIO;
	return fg_cpulist_parse(buf, ret, ret_n);
}

static void fill_attr(const struct fg_evset_opts *o, struct perf_event_attr *attr)
{
	long page = sysconf(_SC_PAGESIZE);

	*attr = (struct perf_event_attr){
		.size = sizeof(*attr),
		.disabled = 1,
		.sample_id_all = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		/*
		 * Wake us at half full: the loop's periodic drain empties the ring
		 * first, unless it is late. Each wakeup is a drain round of its own,
		 * and at a quarter full they cost 7% of a DWARF recording
		 * (docs/PERFORMANCE.md); half a ring still leaves the other half.
		 */
		.watermark = 1,
		.wakeup_watermark = (uint32_t)(o->ring_pages * (size_t)page / 2),
	};
	if (o->kind == FG_EVSET_TRACK) {
		attr->type = PERF_TYPE_SOFTWARE;
		attr->config = PERF_COUNT_SW_DUMMY;
		attr->sample_type = TRACK_SAMPLE_TYPE;
		attr->mmap = 1;
		attr->mmap2 = 1;
		attr->comm = 1;
		attr->comm_exec = 1;
		attr->task = 1;
		/* The kernel reads the build-id: binaries get an identity without us opening them. */
		attr->build_id = 1;
	} else {
		attr->type = o->event.type;
		attr->config = o->event.config;
		attr->freq = 1;
		attr->sample_freq = o->frequency;
		attr->sample_type = SAMPLE_TYPE;
		attr->sample_max_stack = (uint16_t)MIN(o->max_stack, (uint32_t)UINT16_MAX);
		attr->exclude_guest = 1;
		if (o->call_graph == FG_CALL_GRAPH_DWARF) {
			attr->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
			attr->sample_regs_user = FG_PERF_REGS_MASK_X86_64;
			attr->sample_stack_user = o->stack_dump;
			/* The user part comes from the dump; the kernel's walk of it would be wasted. */
			attr->exclude_callchain_user = 1;
		}
	}
}

static int open_one(const struct fg_evset_opts *o, struct perf_event_attr *attr,
		    struct cpu_event *ev)
{
	long page = sysconf(_SC_PAGESIZE);
	int r;

	ev->fd = perf_event_open(attr, -1, ev->cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (ev->fd < 0)
		return negative_errno();
	ev->map_size = (o->ring_pages + 1) * (size_t)page;
	ev->base = mmap(NULL, ev->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, ev->fd, 0);
	if (ev->base == MAP_FAILED) {
		ev->base = NULL;
		return negative_errno();
	}
	r = fg_ring_init(&ev->ring, ev->base, (size_t)page, o->ring_pages * (size_t)page);
	return r;
}

static void close_one(struct cpu_event *ev)
{
	fg_ring_done(&ev->ring);
	if (ev->base)
		munmap(ev->base, ev->map_size);
	safe_close(ev->fd);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int fg_evset__open(const struct fg_evset_opts *opts, struct fg_evset **ret)
{
	_cleanup_free_ int *cpus = NULL;
	struct fg_evset *s;
	struct perf_event_attr attr;
	size_t n_cpus;
	int r;

	if (opts->ring_pages == 0 || (opts->ring_pages & (opts->ring_pages - 1)))
		return -EINVAL;
	if (opts->call_graph == FG_CALL_GRAPH_DWARF &&
	    (opts->stack_dump == 0 || opts->stack_dump % 8 ||
	     opts->stack_dump > FG_PROTO_MAX_STACK_DUMP))
		return -EINVAL;
	r = fg_evset_online_cpus(&cpus, &n_cpus);
	if (r < 0)
		return r;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->events = calloc(n_cpus, sizeof(*s->events));
	if (!s->events) {
		free(s);
		return -ENOMEM;
	}
	fill_attr(opts, &attr);
	s->fmt = (struct fg_record_fmt){
		.sample_type = attr.sample_type,
		.sample_regs_user = attr.sample_regs_user,
		.sample_id_all = true,
	};
	for (size_t i = 0; i < n_cpus; i++) {
		struct cpu_event *ev = &s->events[s->n];

		if (opts->cpus &&
		    !bsearch(&cpus[i], opts->cpus, opts->n_cpus, sizeof(int), cmp_int))
			continue;
		ev->cpu = cpus[i];
		ev->fd = -1;
		r = open_one(opts, &attr, ev);
		if (r == -ENODEV) {
			/* Went offline between reading the list and opening: skip it. */
			close_one(ev);
			continue;
		}
		s->n++;
		if (r < 0) {
			fg_evset__free(s);
			return r;
		}
	}
	if (s->n == 0) {
		fg_evset__free(s);
		return -ENODEV;
	}
	*ret = s;
	return 0;
}

struct fg_evset *fg_evset__free(struct fg_evset *s)
{
	if (!s)
		return NULL;
	for (size_t i = 0; i < s->n; i++)
		close_one(&s->events[i]);
	free(s->events);
	free(s->arena);
	free(s->held);
	free(s);
	return NULL;
}

static int ioctl_all(struct fg_evset *s, unsigned long req)
{
	for (size_t i = 0; i < s->n; i++)
		if (ioctl(s->events[i].fd, req, 0) < 0)
			return negative_errno();
	return 0;
}

int fg_evset__enable(struct fg_evset *s)
{
	return ioctl_all(s, PERF_EVENT_IOC_ENABLE);
}

int fg_evset__disable(struct fg_evset *s)
{
	return ioctl_all(s, PERF_EVENT_IOC_DISABLE);
}

size_t fg_evset__n(const struct fg_evset *s)
{
	return s->n;
}

size_t fg_evset__bytes(const struct fg_evset *s)
{
	size_t bytes = s->arena_cap * sizeof(*s->arena) + s->cap_held * sizeof(*s->held);

	for (size_t i = 0; i < s->n; i++)
		bytes += s->events[i].map_size;
	return bytes;
}

int fg_evset__fd(const struct fg_evset *s, size_t i)
{
	return s->events[i].fd;
}

int fg_evset__cpu(const struct fg_evset *s, size_t i)
{
	return s->events[i].cpu;
}

void fg_evset__snapshot(struct fg_evset *s)
{
	for (size_t i = 0; i < s->n; i++)
		fg_ring_read_init(&s->events[i].ring);
}

/*
 * Reads every CPU's ring up to its snapshot, counts what it sees, and passes
 * each decoded record other than loss and throttling to fn with its header.
 */
typedef void (*raw_fn)(void *ctx, const struct fg_record *rec, const struct perf_event_header *h);

static void drain_rings(struct fg_evset *s, raw_fn fn, void *ctx)
{
	for (size_t i = 0; i < s->n; i++) {
		struct cpu_event *ev = &s->events[i];
		struct fg_cpu_counters *c = &ev->counters;
		const struct perf_event_header *h;
		int r;

		while ((r = fg_ring_read_event(&ev->ring, &h)) != 0) {
			struct fg_record rec;

			if (r < 0 || fg_record_parse(h, &s->fmt, &rec) < 0) {
				c->malformed++;
				continue;
			}
			c->records++;
			switch (rec.type) {
			case PERF_RECORD_LOST:
				c->lost += rec.lost;
				break;
			case PERF_RECORD_LOST_SAMPLES:
				c->lost_samples += rec.lost;
				break;
			case PERF_RECORD_THROTTLE:
				c->throttled++;
				break;
			case PERF_RECORD_UNTHROTTLE:
				break;
			default:
				c->samples += rec.type == PERF_RECORD_SAMPLE;
				fn(ctx, &rec, h);
				break;
			}
		}
		fg_ring_read_done(&ev->ring);
	}
}

struct direct {
	fg_record_fn fn;
	void *ctx;
};

static void deliver(void *ctx, const struct fg_record *rec, const struct perf_event_header *h)
{
	struct direct *d = ctx;

	d->fn(d->ctx, rec);
}

void fg_evset__drain(struct fg_evset *s, fg_record_fn fn, void *ctx)
{
	drain_rings(s, deliver, &(struct direct){ fn, ctx });
}

static void hold(void *ctx, const struct fg_record *rec, const struct perf_event_header *h)
{
	struct fg_evset *s = ctx;
	size_t words = h->size / 8;

	/* Out of memory: the record is lost, and counted as such. */
	if (FG_GROW(s->arena, s->arena_cap, s->arena_len + words) < 0 ||
	    FG_GROW(s->held, s->cap_held, s->n_held + 1) < 0) {
		s->events[0].counters.lost++;
		return;
	}
	memcpy(s->arena + s->arena_len, h, h->size);
	s->held[s->n_held++] = (struct held){ rec->sid.time, s->arena_len };
	s->arena_len += words;
}

static int cmp_held(const void *a, const void *b)
{
	const struct held *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	/* Same time: keep ring order, which offset reflects. */
	return (x->offset > y->offset) - (x->offset < y->offset);
}

void fg_evset__drain_ordered(struct fg_evset *s, fg_record_fn fn, void *ctx)
{
	s->n_held = s->arena_len = 0;
	drain_rings(s, hold, s);
	if (s->n_held > 1)
		qsort(s->held, s->n_held, sizeof(*s->held), cmp_held);
	for (size_t i = 0; i < s->n_held; i++) {
		struct fg_record rec;

		/* Decoded once already; the copy decodes the same. */
		if (fg_record_parse((const struct perf_event_header *)(s->arena +
								       s->held[i].offset),
				    &s->fmt, &rec) == 0)
			fn(ctx, &rec);
	}
}

const struct fg_cpu_counters *fg_evset__counters(const struct fg_evset *s, size_t i)
{
	return &s->events[i].counters;
}

void fg_evset__totals(const struct fg_evset *s, struct fg_cpu_counters *ret)
{
	*ret = (struct fg_cpu_counters){};
	for (size_t i = 0; i < s->n; i++)
		fg_cpu_counters_add(ret, &s->events[i].counters);
}

void fg_cpu_counters_status(int cpu, const struct fg_cpu_counters *c, struct fg_status_cpu *ret)
{
	*ret = (struct fg_status_cpu){
		.cpu = (uint32_t)cpu,
		.samples = c->samples,
		.lost = c->lost + c->lost_samples,
		.throttled = c->throttled,
		.malformed = c->malformed,
	};
}
