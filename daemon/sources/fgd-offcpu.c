/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/hash.h"
#include "base/idxmap.h"
#include "base/macro.h"
#include "base/u32map.h"
#include "fgd-clock.h"
#include "perf/bpfring.h"
#include "sources/fgd-offcpu.h"

/* offcpu.h is shared with the BPF side, which has the kernel's __u32 and friends. */
#include "offcpu.h"
#include "offcpu.skel.h"
#include <linux/types.h>

_Static_assert(FG_OFFCPU_MAX_DUMP_BYTES == FG_OFFCPU_MAX_DUMP, "one limit, two names");
_Static_assert(offsetof(struct fg_offcpu_dwarf_slot, stack) == sizeof(struct fg_offcpu_dwarf_event),
	       "a record is the start of the slot it was built in");

#define BTF_VMLINUX "/sys/kernel/btf/vmlinux"
/*
 * The kernel frames of the tracing machinery above a block's stack when
 * __schedule cannot be found in them: the program's and bpf_trace_run's.
 */
#define TRACING_FRAMES 2

/*
 * Renewal of the stack maps (see fg_offcpu__drain()): new stacks go to a
 * fresh map when the one in use has this many stacks read from it, when a
 * stack was refused since the last renewal (its bucket was taken), or when
 * it has been in use this long (stacks of blocks too short to emit fill it
 * unread).
 */
#define RENEW_AFTER_STACKS (FG_OFFCPU_MAX_STACKS / 16)
#define RENEW_AFTER_NS (60ULL * 1000000000ULL)
/* From the switch to a fresh map until the other is emptied: programs running then are done. */
#define RENEW_SETTLE_NS (10ULL * 1000000ULL)
/* User stacks fgd keeps read; past it, a renewal keeps only those threads away refer to. */
#define USER_CACHE_MAX_STACKS 32768

/* Frames read from a stack map: a kernel stack is kept cut at __schedule. */
struct cached_stack {
	uint32_t at; /* first frame in its side's pool */
	uint8_t n;   /* frames (at most FG_OFFCPU_MAX_STACK) */
	bool read;
};

/*
 * User stacks read from the program's ustacks map, by key. A key is a hash
 * of the frames: a stack read once stays right for good, so the map may be
 * emptied whenever what it held was read first (empty_renewed()).
 */
struct user_stack {
	uint64_t key;
	uint32_t at; /* first frame in the pool */
	uint8_t n;
};

struct user_cache {
	struct user_stack *v; /* owned */
	size_t n, cap;
	uint64_t *pool; /* owned: the stacks' frames */
	size_t n_pool, cap_pool;
	struct fg_idxmap index; /* by key */
};

/* A stack of an emptied map that a thread still away refers to. */
struct carried_stack {
	uint8_t n;
	uint64_t frames[];
};

/*
 * One of the two stack maps, and the frames read from it. Its ids are
 * those tagged with its epoch: a map is not emptied while new stacks may
 * go to it, so an id's stack does not change within an epoch.
 */
struct stack_side {
	int fd;         /* borrowed from skel */
	uint32_t epoch; /* the epoch its stacks were taken in */
	/*
	 * Whether its map holds that epoch's stacks: not once emptied, when
	 * the stacks of its epoch that threads away refer to are the carried
	 * ones, until a renewal gives it the next epoch.
	 */
	bool holds;
	uint64_t began;             /* CLOCK_MONOTONIC ns: when new stacks began to go to it */
	struct cached_stack *cache; /* owned: FG_OFFCPU_MAX_STACKS entries */
	uint64_t *pool;             /* owned: the cached stacks' frames */
	size_t n_pool, cap_pool;
	size_t n_read; /* stacks cached */
};

struct fg_offcpu {
	struct offcpu_bpf *skel; /* owned */
	/*
	 * The ring to the daemon, read with common/perf/bpfring rather than libbpf's
	 * ring_buffer, which reads for as long as the program writes: mapped
	 * here, its consumer page (owned, one page) and its producer page
	 * followed by its data twice (owned, ring_map_bytes).
	 */
	struct fg_bpfring ring;
	void *consumer_page, *producer_pages;
	size_t page_size, ring_map_bytes;
	int ring_fd;        /* borrowed from skel */
	bool behind;        /* the last drain stopped at its deadline, blocks left */
	uint64_t lost_late; /* blocks left unread in the ring at the end (fg_offcpu__abandon()) */
	int counters_fd;    /* borrowed from skel */
	int n_cpus;
	/*
	 * Where __schedule is, [lo, hi): sched_switch is traced inside it, so a
	 * block's kernel stack begins with its first frame there. The frames
	 * above are the tracing machinery's, how many depends on the other users
	 * of the tracepoint (one probe is called directly, several through
	 * __traceiter_sched_switch). Both 0 if /proc/kallsyms did not say.
	 */
	uint64_t schedule_lo, schedule_hi;
	fg_offcpu_fn fn; /* while draining */
	void *ctx;
	uint64_t blocks, blocked_ns;
	uint64_t flushed; /* DWARF mode: blocks found pending at a flush */
	bool direct;      /* DWARF mode: stacks copied straight into the ring */
	/* The stack maps: new stacks go to side[epoch & 1]. */
	struct stack_side side[2];
	uint32_t epoch;
	int emptying; /* the side to empty at the next drain after renewed; -1: none */
	/*
	 * While a map is emptied: what threads away referred to was carried
	 * over (carry_renewed()), and the map is emptied once the blocks the
	 * ring held then, up to this producer position, are handled.
	 */
	bool carried_over;
	uint64_t carried_at;
	uint64_t renewed;        /* CLOCK_MONOTONIC ns of the last switch of maps */
	uint64_t stack_failures; /* the program's stack counters at the last switch */
	uint64_t renewals, stacks_lost;
	uint64_t renew_ns;      /* the longest a map takes new stacks */
	size_t max_user_stacks; /* user stacks kept read before a renewal drops those unused */
	/*
	 * owned, values owned (struct carried_stack): by tagged id, the stacks
	 * of emptied maps that threads away still refer to. carried_old is
	 * empty but while a map is emptied (empty_renewed()).
	 */
	struct fg_u32map carried, carried_old;
	/* User stacks read, and while a renewal rebuilds them, those from before. */
	struct user_cache users, users_old;
	int ustacks_fd;                 /* borrowed from skel */
	struct fg_offcpu_ustack ustack; /* one read from the map */
	/* One block's callchain: two markers and two stacks. */
	uint64_t chain[2 + 2 * FG_OFFCPU_MAX_STACK];
	uint64_t frames[FG_OFFCPU_MAX_STACK];
};
_Static_assert(FG_OFFCPU_MAX_STACK <= UINT8_MAX, "a cached stack's length fits its field");

/* libbpf prints through this: fgd's loader reports errors itself, once, with their cause. */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return 0;
}

int fg_offcpu_probe(const char **ret_why)
{
	libbpf_set_print(quiet);
	if (access(BTF_VMLINUX, R_OK) < 0) {
		*ret_why = "the kernel has no BTF (" BTF_VMLINUX "; CONFIG_DEBUG_INFO_BTF)";
		return -EOPNOTSUPP;
	}
	/* libbpf 1.1 cannot probe BPF_PROG_TYPE_TRACING alone (it wants a target): the load tells. */
	if (libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_RAW_TRACEPOINT, NULL) <= 0) {
		*ret_why = "the kernel cannot run BPF tracing programs here (BPF not enabled, or "
			   "not permitted: fgd needs root, or CAP_BPF and CAP_PERFMON)";
		return -EOPNOTSUPP;
	}
	return 0;
}

static bool user_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct user_cache *c = ctx;

	return c->v[idx].key == *(const uint64_t *)key;
}

static const struct user_stack *user_find(const struct user_cache *c, uint64_t key)
{
	int64_t i = fg_idxmap_find(&c->index, fg_hash_mix(key), user_eq, c, &key);

	return i < 0 ? NULL : &c->v[i];
}

/* Adds user stack u under key; the caller has checked it is absent. 0 or -ENOMEM. */
static int user_add(struct user_cache *c, uint64_t key, const uint64_t *ips, size_t n)
{
	int r;

	n = MIN(n, (size_t)FG_OFFCPU_MAX_STACK);
	if (c->n_pool + n > UINT32_MAX || c->n >= UINT32_MAX ||
	    FG_GROW(c->pool, c->cap_pool, c->n_pool + n) < 0 || FG_GROW(c->v, c->cap, c->n + 1) < 0)
		return -ENOMEM;
	r = fg_idxmap_insert(&c->index, fg_hash_mix(key), (uint32_t)c->n);
	if (r < 0)
		return r;
	memcpy(c->pool + c->n_pool, ips, n * sizeof(*ips));
	c->v[c->n++] = (struct user_stack){ key, (uint32_t)c->n_pool, (uint8_t)n };
	c->n_pool += n;
	return 0;
}

static void user_cache_done(struct user_cache *c)
{
	free(c->v);
	free(c->pool);
	fg_idxmap_done(&c->index);
	*c = (struct user_cache){};
}

/* Frees a carried-stack table's stacks and the table. */
static void carried_done(struct fg_u32map *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->vals[i]);
	fg_u32map_done(m);
}

struct fg_offcpu *fg_offcpu__free(struct fg_offcpu *o)
{
	if (!o)
		return NULL;
	if (o->consumer_page)
		munmap(o->consumer_page, o->page_size);
	if (o->producer_pages)
		munmap(o->producer_pages, o->ring_map_bytes);
	offcpu_bpf__destroy(o->skel);
	for (size_t i = 0; i < ELEMENTSOF(o->side); i++) {
		free(o->side[i].cache);
		free(o->side[i].pool);
	}
	carried_done(&o->carried);
	carried_done(&o->carried_old);
	user_cache_done(&o->users);
	user_cache_done(&o->users_old);
	free(o);
	return NULL;
}

/*
 * Finds __schedule's extent in /proc/kallsyms: from its address to the next
 * symbol's. The core kernel's symbols come first, in address order, so the
 * next above it follows it. Leaves o's extent 0 if it is not there.
 */
static void find_schedule(struct fg_offcpu *o)
{
	_cleanup_(fclosep) FILE *f = fopen("/proc/kallsyms", "re");
	char line[512], name[256];
	uint64_t addr, lo = 0;

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 " %*c %255s", &addr, name) != 2)
			continue;
		if (!lo && addr && strcmp(name, "__schedule") == 0) {
			lo = addr;
		} else if (lo && addr > lo) {
			o->schedule_lo = lo;
			o->schedule_hi = addr;
			return;
		}
	}
}

/* How many of a kernel stack's frames, from the leaf, are the tracing machinery's. */
static size_t tracing_frames(const struct fg_offcpu *o, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (o->frames[i] >= o->schedule_lo && o->frames[i] < o->schedule_hi)
			return i;
	return MIN((size_t)TRACING_FRAMES, n);
}

/* The side that holds tagged stack id's stack, or NULL: its map was emptied since. */
static struct stack_side *side_of(struct fg_offcpu *o, int32_t id)
{
	uint32_t epoch = (uint32_t)id >> FG_OFFCPU_STACK_ID_BITS;

	for (size_t i = 0; i < ELEMENTSOF(o->side); i++)
		if (o->side[i].holds && (o->side[i].epoch & FG_OFFCPU_EPOCH_MASK) == epoch)
			return &o->side[i];
	return NULL;
}

/*
 * Tagged kernel stack id's frames, leaf first, *ret_n of them: from the
 * cache, read from its map and cached (cut at __schedule), or
 * carried over from a map emptied since. Borrowed until the next call; NULL
 * if the stack was not taken or cannot be read.
 */
static const uint64_t *stack_frames(struct fg_offcpu *o, int32_t id, size_t *ret_n)
{
	uint32_t index = (uint32_t)id & (FG_OFFCPU_MAX_STACKS - 1);
	struct carried_stack *cs;
	struct stack_side *side;
	struct cached_stack *c;
	size_t n = 0, skip = 0;

	if (id < 0)
		return NULL;
	side = side_of(o, id);
	if (!side) {
		cs = fg_u32map_get(&o->carried, (uint32_t)id) ?:
			     fg_u32map_get(&o->carried_old, (uint32_t)id);
		if (!cs) {
			o->stacks_lost++;
			return NULL;
		}
		*ret_n = cs->n;
		return cs->frames;
	}
	c = &side->cache[index];
	if (c->read) {
		*ret_n = c->n;
		return side->pool + c->at;
	}
	if (bpf_map_lookup_elem(side->fd, &index, o->frames) < 0) {
		o->stacks_lost++;
		return NULL;
	}
	while (n < FG_OFFCPU_MAX_STACK && o->frames[n])
		n++;
	skip = tracing_frames(o, n);
	n -= skip;
	*ret_n = n;
	/* Out of memory: this once uncached. */
	if (side->n_pool + n > UINT32_MAX ||
	    FG_GROW(side->pool, side->cap_pool, side->n_pool + n) < 0)
		return o->frames + skip;
	memcpy(side->pool + side->n_pool, o->frames + skip, n * sizeof(*side->pool));
	*c = (struct cached_stack){ .at = (uint32_t)side->n_pool, .n = (uint8_t)n, .read = true };
	side->n_pool += n;
	side->n_read++;
	return side->pool + c->at;
}

/*
 * User stack key's frames, leaf first, *ret_n of them: read before, or from
 * the map now (and kept). Borrowed until the next call; NULL if the stack was
 * not taken or cannot be read.
 */
static const uint64_t *user_frames(struct fg_offcpu *o, uint64_t key, size_t *ret_n)
{
	const struct user_stack *u;

	if (!key)
		return NULL;
	u = user_find(&o->users, key);
	if (u) {
		*ret_n = u->n;
		return o->users.pool + u->at;
	}
	u = user_find(&o->users_old, key);
	if (u) {
		*ret_n = u->n;
		return o->users_old.pool + u->at;
	}
	if (bpf_map_lookup_elem(o->ustacks_fd, &key, &o->ustack) < 0) {
		o->stacks_lost++;
		return NULL;
	}
	*ret_n = MIN((size_t)o->ustack.n, (size_t)FG_OFFCPU_MAX_STACK);
	/* Out of memory: this once unkept. */
	(void)user_add(&o->users, key, (const uint64_t *)o->ustack.ips, *ret_n);
	return (const uint64_t *)o->ustack.ips;
}

/* Appends frames[0..count) to o->chain after marker; none (NULL) adds nothing. */
static size_t append_frames(struct fg_offcpu *o, size_t n, uint64_t marker, const uint64_t *f,
			    size_t frames)
{
	if (!f)
		return n;
	o->chain[n++] = marker;
	memcpy(o->chain + n, f, frames * sizeof(*f));
	return n + frames;
}

/* One record of the ring (or a block found pending at the end) to the drain's fn. */
static void on_event(struct fg_offcpu *o, const void *data, size_t size)
{
	const struct fg_offcpu_event *e = data;
	char comm[sizeof(e->comm) + 1];
	struct fg_sample s = {};
	const uint64_t *f;
	size_t n = 0, frames = 0;

	if (size < sizeof(*e))
		return;
	if (e->has_regs) {
		const struct fg_offcpu_dwarf_event *d = data;

		if (size < sizeof(*d) + e->dump_size)
			return;
		s.regs_abi = PERF_SAMPLE_REGS_ABI_64;
		s.regs = (const uint64_t *)d->regs;
		s.n_regs = FG_OFFCPU_N_REGS;
		s.stack = d->stack;
		s.stack_size = e->dump_size;
	}
	f = stack_frames(o, e->kernel_stack, &frames);
	n = append_frames(o, n, PERF_CONTEXT_KERNEL, f, frames);
	f = user_frames(o, e->user_stack, &frames);
	n = append_frames(o, n, PERF_CONTEXT_USER, f, frames);
	memcpy(comm, e->comm, sizeof(e->comm));
	comm[sizeof(e->comm)] = '\0';
	s.sid = (struct fg_sample_id){ .pid = e->pid, .tid = e->tid, .time = e->time };
	s.ip = n > 1 ? o->chain[1] : 0;
	/* Weighed in µs, at least 1: a block that passed the threshold counts. */
	s.period = e->blocked_ns / 1000 ? e->blocked_ns / 1000 : 1;
	s.nr = n;
	s.ips = o->chain;
	o->blocks++;
	o->blocked_ns += e->blocked_ns;
	o->fn(o->ctx, &s, comm);
}

/*
 * Whether the kernel has what DWARF mode's direct copy needs: ring buffer
 * dynptrs (5.19) and bpf_find_vma() (5.17). Probed as a kprobe's helpers,
 * which tracing programs have too (libbpf 1.1 cannot probe tracing alone).
 */
static bool dynptrs(void)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_ringbuf_reserve_dynptr,
				       NULL) > 0 &&
	       libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_find_vma, NULL) > 0;
}

/*
 * Maps the ring as the kernel lays it out for a consumer: the consumer
 * position's page, which fgd writes, then read-only the producer
 * position's page and the data area twice over, so that a record wrapping
 * the end reads whole. 0 or a negative errno.
 */
static int map_ring(struct fg_offcpu *o)
{
	size_t data = bpf_map__max_entries(o->skel->maps.events);
	void *p;

	o->ring_fd = bpf_map__fd(o->skel->maps.events);
	o->page_size = (size_t)sysconf(_SC_PAGESIZE);
	p = mmap(NULL, o->page_size, PROT_READ | PROT_WRITE, MAP_SHARED, o->ring_fd, 0);
	if (p == MAP_FAILED)
		return negative_errno();
	o->consumer_page = p;
	o->ring_map_bytes = o->page_size + 2 * data;
	p = mmap(NULL, o->ring_map_bytes, PROT_READ, MAP_SHARED, o->ring_fd, (off_t)o->page_size);
	if (p == MAP_FAILED)
		return negative_errno();
	o->producer_pages = p;
	return fg_bpfring_init(&o->ring, o->consumer_page, o->producer_pages,
			       (const uint8_t *)o->producer_pages + o->page_size, data);
}

int fg_offcpu__new(const struct fg_offcpu_opts *opts, struct fg_offcpu **ret, const char **ret_why)
{
	_cleanup_(fg_offcpu__freep) struct fg_offcpu *o = NULL;
	size_t ring;
	int r;

	r = fg_offcpu_probe(ret_why);
	if (r < 0)
		return r;
	if (opts->n_pids > FG_OFFCPU_MAX_PIDS) {
		*ret_why = "too many processes for one off-CPU recording";
		return -E2BIG;
	}
	o = calloc(1, sizeof(*o));
	if (o) {
		o->emptying = -1;
		o->side[0].cache = calloc(FG_OFFCPU_MAX_STACKS, sizeof(struct cached_stack));
		o->side[1].cache = calloc(FG_OFFCPU_MAX_STACKS, sizeof(struct cached_stack));
	}
	if (!o || !o->side[0].cache || !o->side[1].cache) {
		*ret_why = "out of memory";
		return -ENOMEM;
	}
	/* Side 0 takes epoch 0's stacks; side 1 holds none until the first renewal gives it one. */
	o->side[0].holds = true;
	o->n_cpus = libbpf_num_possible_cpus();
	if (o->n_cpus <= 0) {
		*ret_why = "cannot count the CPUs";
		return o->n_cpus < 0 ? o->n_cpus : -EINVAL;
	}
	o->skel = offcpu_bpf__open();
	if (!o->skel) {
		*ret_why = "cannot open the off-CPU BPF program";
		return -errno ?: -EINVAL;
	}
	o->skel->rodata->min_block_ns = opts->min_block_ns;
	o->skel->rodata->user_stacks = opts->user_stacks;
	o->skel->rodata->all_processes = !opts->pids;
	o->skel->rodata->stack_dump = (uint32_t)MIN(opts->stack_dump, (uint64_t)FG_OFFCPU_MAX_DUMP);
	if (opts->max_rate) {
		/* A tenth of a second's blocks a window, or one at a time when that is less than one. */
		uint64_t per_window = MAX(opts->max_rate / 10, (uint64_t)1);

		o->skel->rodata->rate_blocks = per_window;
		o->skel->rodata->rate_window_ns = per_window * 1000000000ULL / opts->max_rate;
	}
	ring = opts->ring_bytes ?: fg_offcpu_ring_bytes_for(opts->stack_dump != 0, UINT64_MAX);
	if (ring < (size_t)sysconf(_SC_PAGESIZE) || (ring & (ring - 1))) {
		*ret_why = "the off-CPU ring's size is not a power of two of a page or more";
		return -EINVAL;
	}
	r = bpf_map__set_max_entries(o->skel->maps.events, (uint32_t)ring);
	if (r < 0) {
		*ret_why = "cannot size the off-CPU ring buffer";
		return r;
	}
	/* Woken a quarter full: the loop's own rounds drain what comes slower. */
	o->skel->rodata->wakeup_bytes = ring / 4;
	if (opts->stack_dump) {
		/*
		 * Records as long as their stack copy, straight into the ring, where
		 * the kernel has dynptrs (5.19); before, through a scratch slot a CPU.
		 */
		bool slot = opts->slot_copy || !dynptrs();

		o->direct = !slot;
		bpf_program__set_autoload(o->skel->progs.fg_offcpu_syscall_done, !slot);
		bpf_program__set_autoload(o->skel->progs.fg_offcpu_syscall_done_slot, slot);
		if (slot)
			r = bpf_map__set_max_entries(o->skel->maps.scratch, (uint32_t)o->n_cpus);
		if (r < 0) {
			*ret_why = "cannot size the off-CPU ring buffer";
			return r;
		}
	} else {
		/* Nothing to copy: system calls' ends are not hooked at all. */
		bpf_program__set_autoload(o->skel->progs.fg_offcpu_syscall_done, false);
		bpf_program__set_autoload(o->skel->progs.fg_offcpu_syscall_done_slot, false);
	}
	r = offcpu_bpf__load(o->skel);
	if (r < 0) {
		*ret_why = "the kernel refused the off-CPU BPF program (its BTF may lack "
			   "sched_switch's arguments, or BPF is restricted)";
		return r;
	}
	for (size_t i = 0; opts->pids && i < opts->n_pids; i++) {
		uint32_t pid = (uint32_t)opts->pids[i];
		uint8_t one = 1;

		r = bpf_map_update_elem(bpf_map__fd(o->skel->maps.pids), &pid, &one, BPF_ANY);
		if (r < 0) {
			*ret_why = "cannot select the processes to follow";
			return -errno;
		}
	}
	find_schedule(o);
	o->side[0].fd = bpf_map__fd(o->skel->maps.stacks0);
	o->side[1].fd = bpf_map__fd(o->skel->maps.stacks1);
	o->ustacks_fd = bpf_map__fd(o->skel->maps.ustacks);
	o->counters_fd = bpf_map__fd(o->skel->maps.counters);
	r = map_ring(o);
	if (r < 0) {
		*ret_why = "cannot map the off-CPU ring buffer";
		return r;
	}
	r = offcpu_bpf__attach(o->skel);
	if (r < 0) {
		*ret_why = "cannot attach to the sched_switch tracepoint";
		return r;
	}
	o->renew_ns = opts->renew_ns ? opts->renew_ns : RENEW_AFTER_NS;
	o->max_user_stacks = opts->max_user_stacks ? opts->max_user_stacks : USER_CACHE_MAX_STACKS;
	o->renewed = o->side[0].began = fgd_now();
	*ret = TAKE_PTR(o);
	return 0;
}

int fg_offcpu__fd(const struct fg_offcpu *o)
{
	return o->ring_fd;
}

/* The sum over CPUs of one of the program's counters; 0 if it cannot be read. */
static uint64_t counter(const struct fg_offcpu *o, enum fg_offcpu_counter what);

/* Stacks the program could not take, of either kind. */
static uint64_t stack_failures(const struct fg_offcpu *o)
{
	return counter(o, FG_OFFCPU_DROP_KERNEL_STACK) + counter(o, FG_OFFCPU_DROP_USER_STACK);
}

/* Carries kernel stack id over from a map about to be emptied, or from the carried before. */
static int carry(struct fg_offcpu *o, int32_t id)
{
	struct carried_stack *cs;
	const uint64_t *f;
	size_t n;
	int r;

	if (id < 0 || fg_u32map_get(&o->carried, (uint32_t)id))
		return 0;
	/* In the map in use: nothing to carry. */
	if (side_of(o, id) == &o->side[o->epoch & 1])
		return 0;
	cs = fg_u32map_del(&o->carried_old, (uint32_t)id);
	if (!cs) {
		f = stack_frames(o, id, &n);
		if (!f)
			return 0; /* counted there */
		cs = malloc(sizeof(*cs) + n * sizeof(*f));
		if (!cs)
			return -ENOMEM;
		cs->n = (uint8_t)n;
		memcpy(cs->frames, f, n * sizeof(*f));
	}
	r = fg_u32map_set(&o->carried, (uint32_t)id, cs);
	if (r < 0)
		free(cs);
	return r;
}

/* While the user stacks read are rebuilt: keeps user stack key among them. */
static int carry_user(struct fg_offcpu *o, uint64_t key)
{
	const uint64_t *f;
	size_t n;

	if (!key || !o->users_old.index.slots || user_find(&o->users, key))
		return 0;
	f = user_frames(o, key, &n);
	if (!f || user_find(&o->users, key))
		return 0; /* counted there, or read from the map into users */
	return user_add(&o->users, key, f, n);
}

/* Carries over every stack a thread still away (or a pending block) refers to. */
static int carry_all(struct fg_offcpu *o)
{
	int fd = bpf_map__fd(o->skel->maps.starts), r = 0;
	struct fg_offcpu_pending p;
	struct fg_offcpu_start st;
	uint32_t tid, *prev = NULL;

	while (r >= 0 && bpf_map_get_next_key(fd, prev, &tid) == 0) {
		prev = &tid;
		if (bpf_map_lookup_elem(fd, &tid, &st) < 0)
			continue; /* it came back meanwhile */
		r = carry(o, st.kernel_stack);
		if (r >= 0)
			r = carry_user(o, st.user_stack);
	}
	fd = bpf_map__fd(o->skel->maps.pending);
	prev = NULL;
	while (r >= 0 && bpf_map_get_next_key(fd, prev, &tid) == 0) {
		prev = &tid;
		if (bpf_map_lookup_elem(fd, &tid, &p) < 0)
			continue;
		r = carry(o, p.e.kernel_stack);
		if (r >= 0)
			r = carry_user(o, p.e.user_stack);
	}
	return r;
}

/*
 * Empties the user stacks map, each stack read first (and kept) unless it
 * was: a key stays right for good, so whatever refers to it later finds it
 * read. A stack put in meanwhile may stay for the next time.
 */
static int empty_users(struct fg_offcpu *o)
{
	uint64_t key, next;
	bool more = bpf_map_get_next_key(o->ustacks_fd, NULL, &key) == 0;
	int r = 0;

	while (more && r >= 0) {
		more = bpf_map_get_next_key(o->ustacks_fd, &key, &next) == 0;
		if (!user_find(&o->users, key) &&
		    bpf_map_lookup_elem(o->ustacks_fd, &key, &o->ustack) == 0)
			r = user_add(&o->users, key, (const uint64_t *)o->ustack.ips,
				     MIN((size_t)o->ustack.n, (size_t)FG_OFFCPU_MAX_STACK));
		if (r >= 0)
			(void)bpf_map_delete_elem(o->ustacks_fd, &key);
		key = next;
	}
	return r;
}

/* Empties side's map and forgets what was read from it. */
static void empty(struct stack_side *side)
{
	uint32_t key, next;
	bool more = bpf_map_get_next_key(side->fd, NULL, &key) == 0;

	while (more) {
		more = bpf_map_get_next_key(side->fd, &key, &next) == 0;
		(void)bpf_map_delete_elem(side->fd, &key);
		key = next;
	}
	memset(side->cache, 0, FG_OFFCPU_MAX_STACKS * sizeof(*side->cache));
	side->n_pool = side->n_read = 0;
	side->holds = false;
}

/* New stacks go to the other map from now on; the one in use is emptied at a later drain. */
static void renew(struct fg_offcpu *o, uint64_t now)
{
	uint32_t epoch = o->epoch + 1, tag = epoch & FG_OFFCPU_EPOCH_MASK;
	struct stack_side *side = &o->side[epoch & 1];

	/* A thread away since the tag last came round (days of renewals) loses its stacks. */
	for (size_t i = 0; i < o->carried.n; i++) {
		uint32_t id = o->carried.keys[i];

		if (o->carried.vals[i] && id >> FG_OFFCPU_STACK_ID_BITS == tag) {
			free(fg_u32map_del(&o->carried, id));
			o->stacks_lost++;
		}
	}
	side->epoch = epoch;
	side->holds = true;
	side->began = now;
	o->emptying = (int)(o->epoch & 1);
	o->epoch = epoch;
	__atomic_store_n(&o->skel->bss->stack_epoch, epoch, __ATOMIC_RELEASE);
	o->renewed = now;
	o->stack_failures = stack_failures(o);
	o->renewals++;
}

/*
 * First step of emptying the kernel stack map renewed away from, and the
 * user stacks map. Kernel stacks that blocks in the ring refer to are read
 * as they are drained; those that threads still away refer to are carried
 * over (a thread's entry leaves the starts map only as its block goes into
 * the ring). The map is emptied once the blocks the ring holds now, which
 * ended before that, are handled (finish_renewal()): over several drains
 * when they are behind, while the map stays whole and carried_old and
 * users_old stay kept. The user stacks map is read before it is emptied;
 * past max_user_stacks, the user stacks read are rebuilt the same way,
 * keeping those threads away refer to and those just read from the map.
 */
static int carry_renewed(struct fg_offcpu *o)
{
	bool rebuild = o->users.n > o->max_user_stacks;
	int r;

	o->carried_old = o->carried;
	o->carried = (struct fg_u32map)FG_U32MAP_INIT;
	/* Too many user stacks read: only those still referred to are kept. */
	if (rebuild) {
		o->users_old = o->users;
		o->users = (struct user_cache){};
	}
	r = carry_all(o);
	if (r >= 0)
		r = empty_users(o);
	if (r < 0) {
		/* Out of memory: all is kept as it was, and tried again at the next drain. */
		for (size_t i = 0; i < o->carried.n; i++)
			if (o->carried.vals[i] && fg_u32map_set(&o->carried_old, o->carried.keys[i],
								o->carried.vals[i]) >= 0)
				o->carried.vals[i] = NULL;
		carried_done(&o->carried);
		o->carried = o->carried_old;
		o->carried_old = (struct fg_u32map)FG_U32MAP_INIT;
		/* Those read from the map meanwhile are gone from it: they stay. */
		if (rebuild) {
			for (size_t i = 0; i < o->users.n; i++) {
				const struct user_stack *u = &o->users.v[i];

				if (!user_find(&o->users_old, u->key))
					(void)user_add(&o->users_old, u->key, o->users.pool + u->at,
						       u->n);
			}
			user_cache_done(&o->users);
			o->users = o->users_old;
			o->users_old = (struct user_cache){};
		}
		return r;
	}
	/* A block that ended after this refers to a carried stack, or to the map in use. */
	fg_bpfring_read_init(&o->ring);
	o->carried_at = o->ring.head;
	o->carried_over = true;
	return 0;
}

/* The blocks before the carry are handled: the map renewed away from goes, with what was carried before. */
static void finish_renewal(struct fg_offcpu *o)
{
	carried_done(&o->carried_old);
	o->carried_old = (struct fg_u32map)FG_U32MAP_INIT;
	user_cache_done(&o->users_old);
	empty(&o->side[o->emptying]);
	o->emptying = -1;
	o->carried_over = false;
}

/*
 * Hands fn the blocks the ring holds, up to the producer position seen as
 * it starts, however fast the program writes more, and stops early once
 * deadline (CLOCK_MONOTONIC ns) has passed, having handled at least one:
 * what is left is behind, for the next drain. Returns how many, or
 * -EBADMSG if the ring could not be walked (skipped to its end).
 */
static int consume(struct fg_offcpu *o, uint64_t deadline)
{
	const void *data;
	uint32_t len;
	int n = 0, r;

	fg_bpfring_read_init(&o->ring);
	while ((r = fg_bpfring_read(&o->ring, &data, &len)) > 0) {
		on_event(o, data, len);
		n++;
		/* The space goes back to the program as it is read: fewer blocks find the ring full. */
		if (n % 16 == 0)
			fg_bpfring_read_done(&o->ring);
		if (fgd_now() >= deadline)
			break;
	}
	fg_bpfring_read_done(&o->ring);
	o->behind = r > 0 && fg_bpfring_pending(&o->ring) > 0;
	return r < 0 ? r : n;
}

int fg_offcpu__drain(struct fg_offcpu *o, fg_offcpu_fn fn, void *ctx, uint64_t deadline)
{
	const struct stack_side *in_use = &o->side[o->epoch & 1];
	uint64_t now = fgd_now();
	int n, r = 0;

	o->fn = fn;
	o->ctx = ctx;
	n = consume(o, deadline);
	if (n >= 0 && o->emptying >= 0 && !o->carried_over && now - o->renewed >= RENEW_SETTLE_NS) {
		r = carry_renewed(o);
		/* Most often the ring held nothing more than what came meanwhile: a few blocks. */
		if (r >= 0 && !o->behind && fgd_now() < deadline && (r = consume(o, deadline)) > 0)
			n += r;
	}
	if (o->carried_over && o->ring.tail >= o->carried_at)
		finish_renewal(o);
	else if (n >= 0 && o->emptying < 0 &&
		 (in_use->n_read >= RENEW_AFTER_STACKS || now - in_use->began >= o->renew_ns ||
		  stack_failures(o) > o->stack_failures))
		renew(o, now);
	o->fn = NULL;
	o->ctx = NULL;
	return r < 0 ? r : n;
}

bool fg_offcpu__behind(const struct fg_offcpu *o)
{
	return o->behind;
}

void fg_offcpu__stop(struct fg_offcpu *o)
{
	offcpu_bpf__detach(o->skel);
}

uint64_t fg_offcpu__abandon(struct fg_offcpu *o)
{
	const void *data;
	uint32_t len;
	uint64_t n = 0;

	fg_bpfring_read_init(&o->ring);
	while (fg_bpfring_read(&o->ring, &data, &len) > 0)
		n++;
	fg_bpfring_read_done(&o->ring);
	o->behind = false;
	o->lost_late += n;
	return n;
}

/* The sum over CPUs of one of the program's counters; 0 if it cannot be read. */
static uint64_t counter(const struct fg_offcpu *o, enum fg_offcpu_counter what)
{
	uint64_t per_cpu[o->n_cpus], sum = 0;
	uint32_t key = what;

	if (bpf_map_lookup_elem(o->counters_fd, &key, per_cpu) < 0)
		return 0;
	for (int i = 0; i < o->n_cpus; i++)
		sum += per_cpu[i];
	return sum;
}

void fg_offcpu__stats(const struct fg_offcpu *o, struct fg_offcpu_stats *ret)
{
	*ret = (struct fg_offcpu_stats){
		.blocks = o->blocks,
		.blocked_ns = o->blocked_ns,
		.lost_threads = counter(o, FG_OFFCPU_DROP_THREADS),
		.lost_ring = counter(o, FG_OFFCPU_DROP_RING),
		.kernel_stack_failed = counter(o, FG_OFFCPU_DROP_KERNEL_STACK),
		.user_stack_failed = counter(o, FG_OFFCPU_DROP_USER_STACK),
		.switch_ins_unseen = counter(o, FG_OFFCPU_SWITCH_IN_UNSEEN),
		.user_dump_failed = counter(o, FG_OFFCPU_DROP_USER_DUMP) + o->flushed,
		.lost_late = o->lost_late,
		.rate_limited = counter(o, FG_OFFCPU_DROP_RATE),
		.stack_renewals = o->renewals,
		.stacks_lost = o->stacks_lost,
		.ring_bytes = bpf_map__max_entries(o->skel->maps.events),
	};
}

static size_t user_cache_bytes(const struct user_cache *c)
{
	return c->cap * sizeof(*c->v) + c->cap_pool * sizeof(*c->pool) + fg_idxmap_bytes(&c->index);
}

size_t fg_offcpu__ring_bytes(const struct fg_offcpu *o)
{
	return 2 * (size_t)sysconf(_SC_PAGESIZE) +
	       2 * (size_t)bpf_map__max_entries(o->skel->maps.events);
}

size_t fg_offcpu__bytes(const struct fg_offcpu *o)
{
	size_t bytes = user_cache_bytes(&o->users) + user_cache_bytes(&o->users_old);

	for (size_t i = 0; i < ELEMENTSOF(o->side); i++)
		bytes += FG_OFFCPU_MAX_STACKS * sizeof(struct cached_stack) +
			 o->side[i].cap_pool * sizeof(uint64_t);
	/* Carried stacks: few (threads away across a renewal); counted at their largest. */
	bytes += (fg_u32map_count(&o->carried) + fg_u32map_count(&o->carried_old)) *
		 (sizeof(struct carried_stack) + FG_OFFCPU_MAX_STACK * sizeof(uint64_t));
	return bytes;
}

bool fg_offcpu__copies_direct(const struct fg_offcpu *o)
{
	return o->direct;
}

bool fg_offcpu__away(const struct fg_offcpu *o, pid_t tid)
{
	struct fg_offcpu_start st;
	uint32_t key = (uint32_t)tid;

	return bpf_map_lookup_elem(bpf_map__fd(o->skel->maps.starts), &key, &st) == 0;
}

int fg_offcpu__flush(struct fg_offcpu *o, fg_offcpu_fn fn, void *ctx)
{
	int fd = bpf_map__fd(o->skel->maps.pending), n = 0;
	struct fg_offcpu_pending p;
	uint32_t tid;

	o->fn = fn;
	o->ctx = ctx;
	/* Each is deleted once handed over, so the first key is always the next one. */
	while (bpf_map_get_next_key(fd, NULL, &tid) == 0) {
		if (bpf_map_lookup_and_delete_elem(fd, &tid, &p) < 0) {
			if (bpf_map_lookup_elem(fd, &tid, &p) < 0 ||
			    bpf_map_delete_elem(fd, &tid) < 0)
				break;
		}
		o->flushed++;
		on_event(o, &p.e, sizeof(p.e));
		n++;
	}
	o->fn = NULL;
	o->ctx = NULL;
	return n;
}
