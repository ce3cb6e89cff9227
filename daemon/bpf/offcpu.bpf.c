// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Off-CPU time by stack. At sched_switch the thread leaving the CPU has its
 * kernel stack (the path that blocked) and user stack taken, and the time
 * noted; when it is switched in again, the time it was away is its block,
 * emitted to the daemon if it is at least min_block_ns. CO-RE: built
 * against vmlinux.h, relocated by libbpf against the running kernel's BTF.
 *
 * The kernel does not always run the tracepoint for a switch-in (seen on
 * 6.18 under load, for perf's and ftrace's sched_switch as well): a thread
 * found still noted as away when it is switched out again has its block
 * measured from what it ran in between (FG_OFFCPU_SWITCH_IN_UNSEEN).
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "offcpu.h"

/* task_struct's state of a thread switched out for the last time (include/linux/sched.h). */
#define TASK_DEAD 0x80
/* What the map update returns when the key is there (vmlinux.h has no errno macros). */
#define EEXIST 17

/* Set before load (fgd-offcpu.c). */
const volatile __u64 min_block_ns = 1000;
const volatile bool all_processes = true; /* else only the tgids in pids */
const volatile bool user_stacks = true;

/* A thread off the CPU, as it was switched out. */
struct start {
	__u64 time; /* bpf_ktime_get_ns() */
	__u64 ran;  /* its sum_exec_runtime: the ns it had run until then */
	__s32 kernel_stack, user_stack;
};

/* Before 5.14, task_struct's state was called state. */
struct task_struct___pre_5_14 {
	long state;
} __attribute__((preserve_access_index));

/* Keyed by tid. A thread leaves its entry when it runs again, or when it exits. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
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
	__uint(max_entries, FG_OFFCPU_N_COUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static void count(__u32 what)
{
	__u64 *n = bpf_map_lookup_elem(&counters, &what);

	if (n)
		(*n)++;
}

static bool wanted(struct task_struct *t)
{
	__u32 tgid = BPF_CORE_READ(t, tgid);

	return all_processes || bpf_map_lookup_elem(&pids, &tgid);
}

static bool exiting(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state) & TASK_DEAD;
	return BPF_CORE_READ((struct task_struct___pre_5_14 *)t, state) & TASK_DEAD;
}

/* Emits t's block that began at st and ended at time, if it is long enough. */
static __always_inline void emit(struct task_struct *t, __u32 tid, const struct start *st,
				 __u64 time, __u64 blocked_ns)
{
	struct fg_offcpu_event *e;

	if (blocked_ns < min_block_ns)
		return;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(FG_OFFCPU_DROP_RING);
		return;
	}
	e->time = time;
	e->blocked_ns = blocked_ns;
	e->pid = BPF_CORE_READ(t, tgid);
	e->tid = tid;
	e->kernel_stack = st->kernel_stack;
	e->user_stack = st->user_stack;
	BPF_CORE_READ_STR_INTO(&e->comm, t, comm);
	bpf_ringbuf_submit(e, 0);
}

/* prev is leaving the CPU at now: notes where it stops. */
static __always_inline void switched_out(void *ctx, struct task_struct *prev, __u32 tid, __u64 now)
{
	struct start st, *away;
	int err;

	/* Its last switch-out: it will not come back to end a block. */
	if (exiting(prev)) {
		bpf_map_delete_elem(&starts, &tid);
		return;
	}
	st.time = now;
	st.ran = BPF_CORE_READ(prev, se.sum_exec_runtime);
	/* Whole: the daemon cuts the tracing machinery's frames above __schedule. */
	st.kernel_stack = bpf_get_stackid(ctx, &stacks, 0);
	if (st.kernel_stack < 0)
		count(FG_OFFCPU_DROP_KERNEL_STACK);
	st.user_stack = -1;
	if (user_stacks && BPF_CORE_READ(prev, mm)) {
		st.user_stack = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
		if (st.user_stack < 0)
			count(FG_OFFCPU_DROP_USER_STACK);
	}
	err = bpf_map_update_elem(&starts, &tid, &st, BPF_NOEXIST);
	if (err == -EEXIST) {
		/* It ran since its last switch-out, unseen: away for the time it did not run. */
		away = bpf_map_lookup_elem(&starts, &tid);
		if (away) {
			__u64 ran = st.ran - away->ran;

			count(FG_OFFCPU_SWITCH_IN_UNSEEN);
			if (now - away->time > ran)
				emit(prev, tid, away, now - ran, now - away->time - ran);
		}
		err = bpf_map_update_elem(&starts, &tid, &st, BPF_ANY);
	}
	if (err)
		count(FG_OFFCPU_DROP_THREADS);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(fg_offcpu_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 tid = BPF_CORE_READ(prev, pid);
	struct start *s, st;

	/* The thread leaving (the idle task, tid 0, is not followed). */
	if (tid && wanted(prev))
		switched_out(ctx, prev, tid, now);

	/* The thread coming back: how long it was away. */
	tid = BPF_CORE_READ(next, pid);
	s = bpf_map_lookup_elem(&starts, &tid);
	if (!s)
		return 0;
	st = *s;
	bpf_map_delete_elem(&starts, &tid);
	emit(next, tid, &st, now, now - st.time);
	return 0;
}

/* LGPL code may be used under the GPL, which the kernel asks of programs calling its stack helpers. */
char LICENSE[] SEC("license") = "GPL";
