/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the off-CPU BPF program (offcpu.bpf.c) and its loader (fgd-offcpu.c)
 * both see: the event one block makes, and the counters of what was lost.
 * Plain C types only: the BPF side includes it after vmlinux.h, the daemon
 * after <stdint.h>.
 */

/* Frames per stack, kernel or user: perf's default kernel.perf_event_max_stack. */
#define FG_OFFCPU_MAX_STACK 127
/*
 * Threads off the CPU at once that are followed; past it a thread switched
 * out is not noted, and its block is lost (counted: FG_OFFCPU_DROP_THREADS).
 */
#define FG_OFFCPU_MAX_THREADS 65536
/*
 * Distinct stacks (kernel and user together) each of the two stack maps
 * holds. A map is a hash table without chains: a stack whose bucket is taken
 * is not taken (counted: FG_OFFCPU_DROP_*_STACK), so the daemon renews the
 * maps long before they fill (fgd-offcpu.c).
 */
#define FG_OFFCPU_MAX_STACKS 8192
/*
 * A stack id is the map's index (below FG_OFFCPU_MAX_STACKS) tagged with the
 * epoch it was taken in, which says which map holds it and whether that map
 * was emptied since: (epoch & FG_OFFCPU_EPOCH_MASK) << FG_OFFCPU_STACK_ID_BITS.
 */
#define FG_OFFCPU_STACK_ID_BITS 13
#define FG_OFFCPU_EPOCH_MASK 0x1ffffU
/*
 * User stacks (frame-pointer walks) new since the daemon's last drain: it
 * reads and deletes them each drain (fgd-offcpu.c). Past it, new user stacks
 * are not kept (counted: FG_OFFCPU_DROP_USER_STACK).
 */
#define FG_OFFCPU_MAX_USTACKS 4096

/* Processes a recording may select (pid list). */
#define FG_OFFCPU_MAX_PIDS 64

/* Indexes of the counters array: why blocks were lost, and what was recovered. */
enum fg_offcpu_counter {
	FG_OFFCPU_DROP_THREADS,      /* a thread could not be noted as off the CPU */
	FG_OFFCPU_DROP_KERNEL_STACK, /* the kernel stack could not be taken (stack map full) */
	FG_OFFCPU_DROP_USER_STACK,   /* the user stack could not be taken */
	FG_OFFCPU_DROP_RING,         /* the ring buffer to the daemon was full */
	/*
	 * Not a loss: a thread was switched out again without its switch-in
	 * having reached the program (the kernel skips sched_switch now and
	 * then, seen on 6.18 under load); its block was measured from the
	 * time it ran in between (its sum_exec_runtime) and emitted then.
	 */
	FG_OFFCPU_SWITCH_IN_UNSEEN,
	/*
	 * DWARF mode: blocks emitted without their user stack: the copy
	 * failed, or the thread did not leave the kernel through the end of
	 * the system call it blocked in (a page fault's), or blocked again with
	 * other stacks first, or was still in it at the end.
	 */
	FG_OFFCPU_DROP_USER_DUMP,
	/* A block not kept: the recording's rate limit (a non-root user's, fgd.conf(5) OffCpuUserRate=) */
	FG_OFFCPU_DROP_RATE,
	FG_OFFCPU_N_COUNTERS
};

/* User registers a DWARF-mode block carries: perf's x86-64 order (FG_PERF_REGS_MASK_X86_64). */
#define FG_OFFCPU_N_REGS 17
/* The most user stack a DWARF-mode block carries, in bytes: a power of two. */
#define FG_OFFCPU_MAX_DUMP 32768
/* Pages a copy of the user stack reads, one at a time: it stops at the first unmapped. */
#define FG_OFFCPU_PAGE 4096

/*
 * A user stack walked by frame pointers: the ustacks map's values, keyed by
 * a hash of its frames (never 0), so equal stacks share one key whenever
 * they were taken. Frames leaf first: the user ip, then return addresses.
 */
struct fg_offcpu_ustack {
	__u32 n;
	__u32 pad;
	__u64 ips[FG_OFFCPU_MAX_STACK];
};

/* A thread off the CPU, as it was switched out (the starts map's values, by tid). */
struct fg_offcpu_start {
	__u64 time;       /* bpf_ktime_get_ns() */
	__u64 ran;        /* its sum_exec_runtime: the ns it had run until then */
	__u64 user_stack; /* key in ustacks; 0: not taken */
	__s32 kernel_stack;
	__u32 voluntary; /* it called schedule(), and will return from it */
};

/* One block, emitted when the thread runs again. */
struct fg_offcpu_event {
	__u64 time; /* CLOCK_MONOTONIC ns when it ran again (estimated if its switch-in was unseen) */
	__u64 blocked_ns; /* how long it was off the CPU */
	__u64 user_stack; /* key in ustacks; 0: not taken */
	__u32 pid;        /* the thread group */
	__u32 tid;
	__s32 kernel_stack; /* tagged id in a stack map, or negative: not taken */
	__u32 pad;
	char comm[16];
	__u32 dump_size; /* DWARF mode: bytes of user stack in the record; else 0 */
	__u32 has_regs;  /* DWARF mode: the record is a struct fg_offcpu_dwarf_event */
};

/*
 * The rate limit's window: the blocks kept since start (bpf_ktime_get_ns()),
 * at most rate_blocks of them until rate_window_ns has passed.
 */
struct fg_offcpu_rate {
	__u64 start;
	__u64 n;
};

/* DWARF mode: a block waiting for its thread to leave the system call it blocked in. */
struct fg_offcpu_pending {
	struct fg_offcpu_event e;
	__u64 user_ip, user_sp; /* the system call's: its thread's user registers */
};

/*
 * A DWARF-mode block: copied as the thread left its system call, its user
 * registers (those it entered the kernel with) and dump_size bytes of its
 * user stack from the stack pointer up; the record ends there.
 */
struct fg_offcpu_dwarf_event {
	struct fg_offcpu_event e;
	__u64 regs[FG_OFFCPU_N_REGS];
	__u8 stack[];
};

/*
 * Where the BPF side builds one: the same layout with room for the stack,
 * and a page more, which lets the verifier see each page's copy stay inside.
 */
struct fg_offcpu_dwarf_slot {
	struct fg_offcpu_event e;
	__u64 regs[FG_OFFCPU_N_REGS];
	__u8 stack[FG_OFFCPU_MAX_DUMP + FG_OFFCPU_PAGE];
};
