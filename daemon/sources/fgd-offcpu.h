/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Off-CPU source: where threads block, and for how long, from a CO-RE BPF
 * program on sched_switch (bpf/offcpu.bpf.c). Each block that lasted at
 * least min_block_ns comes out as a sample in the engine's shape: the
 * thread, the time it ran again, a weight (the blocked time in µs), and a
 * perf-style callchain (PERF_CONTEXT_KERNEL, the path that blocked,
 * PERF_CONTEXT_USER, the user stack by frame pointer).
 *
 * Only this module includes the skeleton and libbpf. A build without BPF
 * (meson -Dbpf=disabled, or no clang, bpftool or BTF on the build machine)
 * has the same interface, whose constructor fails with -EOPNOTSUPP.
 */

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/macro.h"
#include "perf/record.h"

struct fg_offcpu;

/* What recordings and status call the source, as perf names its events. */
#define FG_OFFCPU_EVENT "off-cpu (sched_switch)"
/* The most user stack a DWARF-mode block carries (bytes). */
#define FG_OFFCPU_MAX_DUMP_BYTES 32768

struct fg_offcpu_opts {
	uint64_t min_block_ns; /* shorter blocks are not emitted */
	bool user_stacks;      /* take user stacks (frame pointers) too */
	/*
	 * DWARF mode: bytes of user stack (and the user registers) copied with
	 * each block, at most FG_OFFCPU_MAX_DUMP_BYTES (more is cut to it), for the daemon to
	 * unwind; 0: frame-pointer stacks only.
	 */
	uint64_t stack_dump;
	/*
	 * DWARF mode: copy as on kernels before 5.19, through a scratch slot
	 * (for tests; otherwise the kernel's features choose).
	 */
	bool slot_copy;
	const pid_t *pids; /* borrowed for the call; NULL: every process */
	size_t n_pids;
	/* The stack maps are renewed at least this often (fg_offcpu__drain()); 0: once a minute. */
	uint64_t renew_ns;
	/*
	 * User stacks fgd keeps read; past it, a renewal keeps only those that
	 * threads away refer to. 0: 32768.
	 */
	size_t max_user_stacks;
	/*
	 * Blocks kept a second at most (a non-root user's recording,
	 * fgd.conf(5) OffCpuUserRate=), counted in a tenth of a second
	 * (within a block a CPU); those past it are dropped in the kernel
	 * before anything is copied for them, counted in rate_limited.
	 * 0: no limit.
	 */
	uint64_t max_rate;
	/*
	 * The ring's data bytes, a power of two from a page up
	 * (fg_offcpu_ring_bytes_for()); 0: that of no budget.
	 */
	size_t ring_bytes;
};

/* The ring to the daemon, as the program declares it. */
#define FG_OFFCPU_RING_BYTES (1U << 20)
/* The ring in DWARF mode at most, whose records carry a user stack each. */
#define FG_OFFCPU_DWARF_RING_BYTES (16U << 20)

/*
 * A ring's data size out of what the memory budget has room for (its rings
 * part, fg_budget__room(); UINT64_MAX without a budget): in DWARF mode the
 * most, halved while the ring as mapped (twice its data: RSS counts both
 * mappings once written) would take more than half the room, down to
 * FG_OFFCPU_RING_BYTES; the rest of the room is for what its blocks make
 * (the recording's tables). Without stack copies, FG_OFFCPU_RING_BYTES.
 */
static inline size_t fg_offcpu_ring_bytes_for(bool dwarf, uint64_t room)
{
	size_t ring = dwarf ? FG_OFFCPU_DWARF_RING_BYTES : FG_OFFCPU_RING_BYTES;

	while (ring > FG_OFFCPU_RING_BYTES && 2 * (uint64_t)ring > room / 2)
		ring /= 2;
	return ring;
}

struct fg_offcpu_stats {
	uint64_t blocks;       /* emitted */
	uint64_t blocked_ns;   /* their time together */
	uint64_t lost_threads; /* blocks lost: too many threads blocked at once */
	uint64_t lost_ring;    /* blocks lost: the ring to the daemon was full */
	/* blocks lost: left in the ring at the end, not handled in time (fg_offcpu__abandon()) */
	uint64_t lost_late;
	uint64_t kernel_stack_failed; /* blocks without their kernel stack */
	uint64_t user_stack_failed;   /* blocks without their user stack */
	uint64_t switch_ins_unseen;   /* blocks measured from run time, their switch-in unseen */
	uint64_t user_dump_failed;    /* DWARF mode: blocks without their user stack */
	uint64_t rate_limited;        /* blocks not kept: past opts.max_rate */
	uint64_t stack_renewals;      /* the stack maps renewed (fg_offcpu__drain()) */
	uint64_t stacks_lost; /* stack ids taken whose stacks could not be read (none expected) */
	uint64_t ring_bytes;  /* the ring's data size (fg_offcpu_opts.ring_bytes) */
};

/* Blocks lost, whatever the cause (those the rate limit did not keep are not losses). */
static inline uint64_t fg_offcpu_lost(const struct fg_offcpu_stats *s)
{
	return s->lost_threads + s->lost_ring + s->lost_late;
}

/* A block handed over as a sample, as the sample record the resolver takes (fgd-resolve.h). */
static inline void fg_offcpu_record(const struct fg_sample *s, struct fg_record *ret)
{
	*ret = (struct fg_record){ .type = PERF_RECORD_SAMPLE,
				   .misc = PERF_RECORD_MISC_USER,
				   .sid = s->sid,
				   .sample = *s };
}

/* A block as a sample (period: the blocked time in µs) and its thread's name; borrowed for the call. */
typedef void (*fg_offcpu_fn)(void *ctx, const struct fg_sample *sample, const char *comm);

/*
 * Whether off-CPU recording can work here: 0, or a negative errno with why
 * (a static sentence naming the cause: no BPF in this build, no BTF in the
 * kernel, not permitted...) in *ret_why.
 */
int fg_offcpu_probe(const char **ret_why);

/*
 * Loads the program with opts and attaches it. On failure *ret_why names
 * the cause (static). Caller frees *ret with fg_offcpu__free().
 */
int fg_offcpu__new(const struct fg_offcpu_opts *opts, struct fg_offcpu **ret, const char **ret_why);
struct fg_offcpu *fg_offcpu__free(struct fg_offcpu *o);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fg_offcpu *, fg_offcpu__free);

/* The ring buffer's epoll fd: readable when blocks wait. */
int fg_offcpu__fd(const struct fg_offcpu *o);

/*
 * Hands fn the blocks waiting in the ring as the call begins (never those
 * the program writes meanwhile, however fast: the call is bounded by the
 * ring's size), and stops early once deadline (CLOCK_MONOTONIC ns;
 * UINT64_MAX: none) has passed, having handled at least one: the rest
 * waits for the next drain (fg_offcpu__behind()), and while it waits the
 * ring has that much less room (blocks that find it full are lost,
 * counted in lost_ring). Returns how many, or a negative errno.
 *
 * Also renews the program's stack maps, which must be drained from to be
 * emptied: new stacks go to a fresh one when the one in use fills, or has
 * been in use a minute, and the old one is emptied at least 10 ms later,
 * once the stacks of threads still away are read from it and the blocks
 * the ring held then are handled. Drained regularly, the source runs for
 * months with room for new stacks.
 */
int fg_offcpu__drain(struct fg_offcpu *o, fg_offcpu_fn fn, void *ctx, uint64_t deadline);
/* Whether the last drain stopped at its deadline with blocks left in the ring. */
bool fg_offcpu__behind(const struct fg_offcpu *o);

/*
 * Detaches the program: no block ends after this, and the ring holds only
 * what it held (a stopped recording's last drains have that much to do).
 * DWARF mode's blocks waiting for a stack copy stay for fg_offcpu__flush().
 */
void fg_offcpu__stop(struct fg_offcpu *o);

/*
 * At the end, once the time for draining is spent: the blocks still in the
 * ring go unread, counted as lost_late. Returns how many.
 */
uint64_t fg_offcpu__abandon(struct fg_offcpu *o);

/*
 * DWARF mode, at the end: hands fn the blocks still waiting in the kernel
 * for their thread to leave its system call, without a user stack (counted
 * in user_dump_failed). Returns how many.
 */
int fg_offcpu__flush(struct fg_offcpu *o, fg_offcpu_fn fn, void *ctx);

void fg_offcpu__stats(const struct fg_offcpu *o, struct fg_offcpu_stats *ret);
/* Heap bytes the source holds in fgd: the stacks it read, for the memory budget. */
size_t fg_offcpu__bytes(const struct fg_offcpu *o);
/*
 * What its ring takes in fgd once written through, for the memory budget's
 * rings part: its two pages of positions and its data mapped twice (so
 * that a record wrapping its end reads whole), as RSS counts them.
 */
size_t fg_offcpu__ring_bytes(const struct fg_offcpu *o);

/*
 * DWARF mode: whether user stacks are copied straight into the ring, sized
 * to what they hold (kernels with ring-buffer dynptrs, 5.19), rather than
 * through a scratch slot.
 */
bool fg_offcpu__copies_direct(const struct fg_offcpu *o);

/* Whether the program holds thread tid as off the CPU now (it will end a block when it runs again). */
bool fg_offcpu__away(const struct fg_offcpu *o, pid_t tid);
