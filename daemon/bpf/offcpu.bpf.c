// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Off-CPU time by stack. At sched_switch the thread leaving the CPU has its
 * kernel stack (the path that blocked) and user stack taken, and the time
 * noted; when it is switched in again, the time it was away is its block,
 * emitted to the daemon if it is at least min_block_ns. CO-RE: built
 * against vmlinux.h, relocated by libbpf against the running kernel's BTF.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "offcpu.h"

#define KERNEL_SKIP 2

/* Set before load (fgd-offcpu.c). */
const volatile __u64 min_block_ns = 1000;
const volatile bool all_processes = true; /* else only the tgids in pids */
const volatile bool user_stacks = true;

struct start {
	__u64 time;
	__s32 kernel_stack, user_stack;
};

/* LRU: a thread that exits while off the CPU leaves an entry only until room is needed. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FG_OFFCPU_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct start);
} starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FG_OFFCPU_MAX_PIDS);
	__type(key, __u32);
	__type(value, __u8);
} pids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, FG_OFFCPU_MAX_STACK * sizeof(__u64));
	__uint(max_entries, FG_OFFCPU_MAX_STACKS);
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FG_OFFCPU_N_DROPS);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

static void drop(__u32 why)
{
	__u64 *n = bpf_map_lookup_elem(&drops, &why);

	if (n)
		(*n)++;
}

static bool wanted(struct task_struct *t)
{
	__u32 tgid = BPF_CORE_READ(t, tgid);

	return all_processes || bpf_map_lookup_elem(&pids, &tgid);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(fg_offcpu_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 tid = BPF_CORE_READ(prev, pid);
	struct start *s, st;
	struct fg_offcpu_event *e;

	/* The thread leaving: where it stops (the idle task, tid 0, is not followed). */
	if (tid && wanted(prev)) {
		st.time = now;
		/* The first two frames are this program's and bpf_trace_run's, not the task's. */
		st.kernel_stack =
			bpf_get_stackid(ctx, &stacks, KERNEL_SKIP & BPF_F_SKIP_FIELD_MASK);
		if (st.kernel_stack < 0)
			drop(FG_OFFCPU_DROP_KERNEL_STACK);
		st.user_stack = -1;
		if (user_stacks && BPF_CORE_READ(prev, mm)) {
			st.user_stack = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
			if (st.user_stack < 0)
				drop(FG_OFFCPU_DROP_USER_STACK);
		}
		if (bpf_map_update_elem(&starts, &tid, &st, BPF_ANY))
			drop(FG_OFFCPU_DROP_THREADS);
	}

	/* The thread coming back: how long it was away. */
	tid = BPF_CORE_READ(next, pid);
	s = bpf_map_lookup_elem(&starts, &tid);
	if (!s)
		return 0;
	st = *s;
	bpf_map_delete_elem(&starts, &tid);
	if (now - st.time < min_block_ns)
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		drop(FG_OFFCPU_DROP_RING);
		return 0;
	}
	e->time = now;
	e->blocked_ns = now - st.time;
	e->pid = BPF_CORE_READ(next, tgid);
	e->tid = tid;
	e->kernel_stack = st.kernel_stack;
	e->user_stack = st.user_stack;
	BPF_CORE_READ_STR_INTO(&e->comm, next, comm);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* LGPL code may be used under the GPL, which the kernel asks of programs calling its stack helpers. */
char LICENSE[] SEC("license") = "GPL";
