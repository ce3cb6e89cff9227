// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Off-CPU time by stack. At sched_switch the thread leaving the CPU has its
 * kernel stack (the path that blocked) and user stack taken, and the time
 * noted; when it is switched in again, the time it was away is its block,
 * emitted to the daemon if it is at least min_block_ns. CO-RE: built
 * against vmlinux.h, relocated by libbpf against the running kernel's BTF.
 *
 * The kernel does not always run the tracepoint for a switch-in (seen on
 * 6.18 under load, for ftrace's own sched_switch event as well): a thread
 * found still noted as away when it is switched out again has its block
 * measured from what it ran in between (FG_OFFCPU_SWITCH_IN_UNSEEN).
 *
 * DWARF mode (stack_dump > 0): a thread's user stack does not change while
 * it is off the CPU, and can only be read while it is current. A block long
 * enough to keep waits in pending until its thread, back on the CPU, leaves
 * its system call (fg_offcpu_syscall_done, at sys_exit): its user registers
 * and stack are copied then, for the daemon to unwind with CFI. (fexit on
 * schedule() would come sooner, but function tracing is not permitted on
 * every host; the tracepoint is.) Blocks the thread has in the same system
 * call with the same stacks add up while they wait. A preempted thread's
 * block is emitted at once with the frame-pointer user stack. A pending
 * block whose thread left the CPU again from elsewhere (it went back to
 * user space by another way, such as a page fault's return), and those the
 * daemon finds pending at the end (fg_offcpu__flush()), go without a user
 * stack: the frame-pointer walk at every voluntary switch would cost more
 * than all the copies.
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
const volatile __u32 stack_dump = 0; /* DWARF mode: user stack bytes per block; 0: off */
/* The daemon is woken once the ring holds this much; it drains on its own rounds before. */
const volatile __u64 wakeup_bytes = 1;
/* At most rate_blocks blocks kept every rate_window_ns (fgd-offcpu.c sets both); 0: no limit. */
const volatile __u64 rate_blocks = 0;
const volatile __u64 rate_window_ns = 1000000000;

/* Before 5.14, task_struct's state was called state. */
struct task_struct___pre_5_14 {
	long state;
} __attribute__((preserve_access_index));

/* Keyed by tid. A thread leaves its entry when it runs again, or when it exits. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FG_OFFCPU_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct fg_offcpu_start);
} starts SEC(".maps");

/*
 * DWARF mode: where a block's record is put together, one slot a CPU (the
 * loader sizes it), as a ring record must be reserved at its full size.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fg_offcpu_dwarf_slot);
} scratch SEC(".maps");

/* DWARF mode: blocks whose thread is back but still in its system call; by tid. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FG_OFFCPU_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct fg_offcpu_pending);
} pending SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FG_OFFCPU_MAX_PIDS);
	__type(key, __u32);
	__type(value, __u8);
} pids SEC(".maps");

/*
 * Two stack maps, for stack_epoch's parity: while new stacks go to one, the
 * daemon empties the other (fgd-offcpu.c's renewal). A map is never emptied
 * under the program's feet, and a full one does not stop stacks for good.
 */
struct stack_map {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, FG_OFFCPU_MAX_STACK * sizeof(__u64));
	__uint(max_entries, FG_OFFCPU_MAX_STACKS);
};
struct stack_map stacks0 SEC(".maps");
struct stack_map stacks1 SEC(".maps");

/*
 * User stacks, by the hash of their frames: the program's own frame-pointer
 * walk, several times cheaper than the kernel's (docs/PERFORMANCE.md). The
 * daemon reads and deletes them each drain.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FG_OFFCPU_MAX_USTACKS);
	__type(key, __u64);
	__type(value, struct fg_offcpu_ustack);
} ustacks SEC(".maps");

/* Where a user stack is walked into, one a CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fg_offcpu_ustack);
} uscratch SEC(".maps");

/* The epoch new stacks are taken in: written by the daemon when it renews the maps. */
volatile __u32 stack_epoch = 0;

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

/* The rate limit's window, one for all CPUs. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fg_offcpu_rate);
} rate SEC(".maps");

static void count(__u32 what)
{
	__u64 *n = bpf_map_lookup_elem(&counters, &what);

	if (n)
		(*n)++;
}

/*
 * Whether a block that ended at now, long enough to keep, is kept under the
 * rate limit (counted when it is not): before anything is copied for it,
 * so a storm of blocks costs its threads and the daemon only what is kept.
 * Windows of a tenth of a second, counted by all CPUs at once without a
 * lock: the add is atomic, the read after it and the reset of a window
 * are not, so two CPUs may each keep or drop a block the other decided
 * on, a block a CPU a window at most (this needs no BPF atomics with
 * fetch, which older kernels lack).
 */
static __always_inline bool kept(__u64 now)
{
	struct fg_offcpu_rate *w;
	__u32 zero = 0;

	if (!rate_blocks)
		return true;
	w = bpf_map_lookup_elem(&rate, &zero);
	if (!w)
		return true;
	if (now - w->start >= rate_window_ns) {
		w->start = now;
		w->n = 0;
	}
	__sync_fetch_and_add(&w->n, 1);
	if (w->n <= rate_blocks)
		return true;
	count(FG_OFFCPU_DROP_RATE);
	return false;
}

/*
 * The current stack's id, tagged with its epoch (FG_OFFCPU_STACK_ID_BITS and
 * up), or a negative errno: it was not taken.
 */
static __always_inline __s32 take_stack(void *ctx, __u64 flags)
{
	__u32 epoch = stack_epoch;
	long id;

	if (epoch & 1)
		id = bpf_get_stackid(ctx, &stacks1, flags);
	else
		id = bpf_get_stackid(ctx, &stacks0, flags);
	if (id < 0)
		return (__s32)id;
	return (__s32)(((epoch & FG_OFFCPU_EPOCH_MASK) << FG_OFFCPU_STACK_ID_BITS) | id);
}

/*
 * Whether a record of size bytes wakes the daemon: when it takes what the
 * ring holds past a multiple of wakeup_bytes (reserved: the ring counts it
 * already). A wakeup per block would cost more than the block; and one per
 * block while the ring stays full past the mark (the daemon behind, taking
 * its blocks in bounded rounds) woke its loop thousands of times a second
 * for nothing. Each multiple, not the first alone: two CPUs that fill the
 * ring past a mark at once may both see it passed, and the next wakes.
 */
static __always_inline __u64 wakeup(__u64 size, bool reserved)
{
	__u64 avail = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
	__u64 after = reserved ? avail : avail + size;

	if (after < size)
		return BPF_RB_NO_WAKEUP;
	return after / wakeup_bytes > (after - size) / wakeup_bytes ? BPF_RB_FORCE_WAKEUP :
								      BPF_RB_NO_WAKEUP;
}

/*
 * How far above the stack pointer a frame may be: a frame pointer further
 * (or below it) is not one. Code built without frame pointers keeps any
 * value in rbp, and a walk that believed it would read garbage for its 127
 * frames (2.5 µs a switch on the storm of docs/PERFORMANCE.md).
 */
#define FRAME_SPAN (8ULL << 20)

/*
 * t's user stack, walked by frame pointers as the kernel's perf callchains
 * are (its user ip, then the return address of each frame), until a frame
 * cannot be read, does not lead up the stack, or is not within FRAME_SPAN
 * of the stack pointer, into ustacks: its key, or 0 if it could not be kept.
 */
static __always_inline __u64 walk_user(struct task_struct *t)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	/* FNV-1a over the frames' words. */
	__u64 key = 14695981039346656037ULL, bp, sp, frame[2];
	struct fg_offcpu_ustack *u;
	__u32 zero = 0, n = 1;
	long err;

	u = bpf_map_lookup_elem(&uscratch, &zero);
	if (!u)
		return 0;
	u->ips[0] = BPF_CORE_READ(regs, ip);
	key = (key ^ u->ips[0]) * 1099511628211ULL;
	bp = BPF_CORE_READ(regs, bp);
	sp = BPF_CORE_READ(regs, sp);
	for (int i = 1; i < FG_OFFCPU_MAX_STACK; i++) {
		if (bp < sp || bp - sp >= FRAME_SPAN ||
		    bpf_probe_read_user(frame, sizeof(frame), (void *)bp) || !frame[1])
			break;
		u->ips[i] = frame[1];
		key = (key ^ frame[1]) * 1099511628211ULL;
		n = i + 1;
		if (frame[0] <= bp)
			break;
		bp = frame[0];
	}
	u->n = n;
	key |= 1;
	err = bpf_map_update_elem(&ustacks, &key, u, BPF_NOEXIST);
	return err && err != -EEXIST ? 0 : key;
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

/* t's block that began at st and ended at time, into e. */
static __always_inline void fill(struct fg_offcpu_event *e, struct task_struct *t, __u32 tid,
				 const struct fg_offcpu_start *st, __u64 time, __u64 blocked_ns)
{
	e->time = time;
	e->blocked_ns = blocked_ns;
	e->pid = BPF_CORE_READ(t, tgid);
	e->tid = tid;
	e->kernel_stack = st->kernel_stack;
	e->user_stack = st->user_stack;
	e->pad = 0;
	BPF_CORE_READ_STR_INTO(&e->comm, t, comm);
	e->dump_size = 0;
	e->has_regs = 0;
}

/* Emits a block as it is, without a copy of the user stack. */
static __always_inline void output(const struct fg_offcpu_event *e)
{
	if (bpf_ringbuf_output(&events, (void *)e, sizeof(*e), wakeup(sizeof(*e), false)))
		count(FG_OFFCPU_DROP_RING);
}

/* Emits t's block that began at st and ended at time, kept (kept_block()). */
static __always_inline void put(struct task_struct *t, __u32 tid, const struct fg_offcpu_start *st,
				__u64 time, __u64 blocked_ns)
{
	struct fg_offcpu_event *e;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(FG_OFFCPU_DROP_RING);
		return;
	}
	fill(e, t, tid, st, time, blocked_ns);
	bpf_ringbuf_submit(e, wakeup(sizeof(*e), true));
}

/* Whether a block of blocked_ns that ended at time is kept: long enough, and within the rate. */
static __always_inline bool kept_block(__u64 time, __u64 blocked_ns)
{
	return blocked_ns >= min_block_ns && kept(time);
}

/* The user registers t entered the kernel with. */
static __always_inline struct pt_regs *user_regs(struct task_struct *t)
{
	return (struct pt_regs *)bpf_task_pt_regs(t);
}

/*
 * DWARF mode: a block of tid's still waiting for its user stack goes as it
 * is, unless (keep) t is still in the kernel entry that made it wait.
 */
static __always_inline void flush_pending(struct task_struct *t, __u32 tid, bool keep)
{
	struct fg_offcpu_pending *p = bpf_map_lookup_elem(&pending, &tid);
	struct pt_regs *regs;

	if (!p)
		return;
	regs = user_regs(t);
	if (keep && p->user_ip == BPF_CORE_READ(regs, ip) && p->user_sp == BPF_CORE_READ(regs, sp))
		return;
	count(FG_OFFCPU_DROP_USER_DUMP);
	output(&p->e);
	bpf_map_delete_elem(&pending, &tid);
}

/* DWARF mode: next's block e waits for its system call's end, with any it had there before. */
static __always_inline void add_pending(struct task_struct *next, __u32 tid,
					const struct fg_offcpu_event *e)
{
	struct fg_offcpu_pending *p = bpf_map_lookup_elem(&pending, &tid), n = { .e = *e };
	struct pt_regs *regs = user_regs(next);

	n.user_ip = BPF_CORE_READ(regs, ip);
	n.user_sp = BPF_CORE_READ(regs, sp);
	if (p && p->user_ip == n.user_ip && p->user_sp == n.user_sp &&
	    p->e.kernel_stack == e->kernel_stack && p->e.user_stack == e->user_stack) {
		p->e.blocked_ns += e->blocked_ns;
		p->e.time = e->time;
		return;
	}
	if (p) {
		count(FG_OFFCPU_DROP_USER_DUMP);
		output(&p->e);
	}
	if (bpf_map_update_elem(&pending, &tid, &n, BPF_ANY)) {
		count(FG_OFFCPU_DROP_USER_DUMP);
		output(e);
	}
}

/*
 * The block at away that ended, unseen, at time. In DWARF mode a voluntary
 * one has no user stack: the thread may have been back in user space
 * meanwhile (its registers cannot tell one system call from the next made
 * at the same place), so its stack is not waited for.
 */
static __always_inline void recovered(struct task_struct *t, __u32 tid,
				      const struct fg_offcpu_start *away, __u64 time,
				      __u64 blocked_ns)
{
	if (!kept_block(time, blocked_ns))
		return;
	if (stack_dump && away->voluntary && !away->user_stack)
		count(FG_OFFCPU_DROP_USER_DUMP);
	put(t, tid, away, time, blocked_ns);
}

/* prev is leaving the CPU at now: notes where it stops. */
static __always_inline void switched_out(void *ctx, struct task_struct *prev, __u32 tid, __u64 now,
					 bool preempt)
{
	struct fg_offcpu_start st, *away;
	int err;

	/* Its last switch-out: it will not come back to end a block. */
	if (stack_dump)
		flush_pending(prev, tid, !exiting(prev));
	if (exiting(prev)) {
		bpf_map_delete_elem(&starts, &tid);
		return;
	}
	st.time = now;
	st.ran = BPF_CORE_READ(prev, se.sum_exec_runtime);
	st.voluntary = !preempt;
	/* Whole: the daemon cuts the tracing machinery's frames above __schedule. */
	st.kernel_stack = take_stack(ctx, 0);
	if (st.kernel_stack < 0)
		count(FG_OFFCPU_DROP_KERNEL_STACK);
	st.user_stack = 0;
	/*
	 * The user stack walk is the dearest part of a switch. In DWARF mode a thread that
	 * calls schedule() has its stack copied as it leaves its system call: the
	 * walk is only for preempted ones, whose blocks are emitted at once.
	 */
	if (user_stacks && BPF_CORE_READ(prev, mm) && (!stack_dump || preempt)) {
		st.user_stack = walk_user(prev);
		if (!st.user_stack)
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
				recovered(prev, tid, away, now - ran, now - away->time - ran);
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
	struct fg_offcpu_start *s, st;

	/* The thread leaving (the idle task, tid 0, is not followed). */
	if (tid && wanted(prev))
		switched_out(ctx, prev, tid, now, preempt);

	/* The thread coming back: how long it was away. */
	tid = BPF_CORE_READ(next, pid);
	s = bpf_map_lookup_elem(&starts, &tid);
	if (!s)
		return 0;
	st = *s;
	bpf_map_delete_elem(&starts, &tid);
	if (!kept_block(now, now - st.time))
		return 0;
	if (stack_dump && st.voluntary && BPF_CORE_READ(next, mm)) {
		struct fg_offcpu_event e;

		/* Its user stack is copied as it leaves its system call. */
		fill(&e, next, tid, &st, now, now - st.time);
		add_pending(next, tid, &e);
		return 0;
	}
	put(next, tid, &st, now, now - st.time);
	return 0;
}

/* DWARF mode: d's block p, with the user registers regs (perf's x86-64 order). */
static __always_inline void dwarf_head(struct fg_offcpu_dwarf_event *d,
				       const struct fg_offcpu_pending *p, struct pt_regs *regs)
{
	d->e = p->e;
	d->e.has_regs = 1;
	d->e.dump_size = 0;
	d->regs[0] = BPF_CORE_READ(regs, ax);
	d->regs[1] = BPF_CORE_READ(regs, bx);
	d->regs[2] = BPF_CORE_READ(regs, cx);
	d->regs[3] = BPF_CORE_READ(regs, dx);
	d->regs[4] = BPF_CORE_READ(regs, si);
	d->regs[5] = BPF_CORE_READ(regs, di);
	d->regs[6] = BPF_CORE_READ(regs, bp);
	d->regs[7] = BPF_CORE_READ(regs, sp);
	d->regs[8] = BPF_CORE_READ(regs, ip);
	d->regs[9] = BPF_CORE_READ(regs, r8);
	d->regs[10] = BPF_CORE_READ(regs, r9);
	d->regs[11] = BPF_CORE_READ(regs, r10);
	d->regs[12] = BPF_CORE_READ(regs, r11);
	d->regs[13] = BPF_CORE_READ(regs, r12);
	d->regs[14] = BPF_CORE_READ(regs, r13);
	d->regs[15] = BPF_CORE_READ(regs, r14);
	d->regs[16] = BPF_CORE_READ(regs, r15);
}

/* What bpf_find_vma() found: the end of the mapping that holds the stack pointer. */
struct stack_vma {
	__u64 end;
};

static long stack_vma_end(struct task_struct *t, struct vm_area_struct *vma, void *ctx)
{
	((struct stack_vma *)ctx)->end = vma->vm_end;
	return 0;
}

/*
 * How many bytes of the current thread t's user stack, from sp up, a block
 * carries: stack_dump at most, and no further than the top of the mapping
 * sp is in, or for the main thread, the start of its stack (where argc is:
 * above lie the environment and arguments, which no frame refers to). A
 * multiple of 8. Without the mapping (its lock was taken), stack_dump; the
 * copy then stops at the first page that cannot be read.
 */
static __always_inline __u32 stack_extent(struct task_struct *t, __u64 sp)
{
	struct stack_vma v = {};
	__u64 size = stack_dump, top;

	if (bpf_find_vma(t, sp, stack_vma_end, &v, 0) == 0 && v.end > sp) {
		top = v.end;
		__u64 start = BPF_CORE_READ(t, mm, start_stack);

		if (start > sp && start < top)
			top = start;
		if (top - sp < size)
			size = top - sp;
	}
	if (size > FG_OFFCPU_MAX_DUMP)
		size = FG_OFFCPU_MAX_DUMP;
	return (__u32)size & ~7U;
}

/*
 * Copies n bytes of user stack at sp + at into the record ptr, at its stack's
 * offset at. n must be a constant where this is inlined: the verifier sizes
 * the slice of the record by it.
 */
static __always_inline bool copy_at(struct bpf_dynptr *ptr, __u64 sp, __u32 at, __u32 n)
{
	void *dst = bpf_dynptr_data(ptr, sizeof(struct fg_offcpu_dwarf_event) + at, n);

	return dst && !bpf_probe_read_user(dst, n, (void *)(sp + at));
}

/* Less than a page: the piece of n bytes (a power of two) at *at, if size has that bit. */
static __always_inline bool copy_piece(struct bpf_dynptr *ptr, __u64 sp, __u32 size, __u32 *at,
				       __u32 n)
{
	if (!(size & n))
		return true;
	if (!copy_at(ptr, sp, *at, n))
		return false;
	*at += n;
	return true;
}

/*
 * Copies size bytes (a multiple of 8) of user stack from sp into the
 * record ptr, straight into the ring: whole pages, then the last page's
 * worth ending at size (which reads some bytes twice), or for less than a
 * page, a piece for each power of two in size. Returns the bytes copied
 * before the first that could not be read.
 */
static __always_inline __u32 copy_stack(struct bpf_dynptr *ptr, __u64 sp, __u32 size)
{
	__u32 at = 0;

	if (size >= FG_OFFCPU_PAGE) {
		for (int i = 0; i < FG_OFFCPU_MAX_DUMP / FG_OFFCPU_PAGE; i++) {
			if (at + FG_OFFCPU_PAGE > size)
				break;
			if (!copy_at(ptr, sp, at, FG_OFFCPU_PAGE))
				return at;
			at += FG_OFFCPU_PAGE;
		}
		if (at < size && !copy_at(ptr, sp, size - FG_OFFCPU_PAGE, FG_OFFCPU_PAGE))
			return at;
		return size;
	}
	(void)(copy_piece(ptr, sp, size, &at, 2048) && copy_piece(ptr, sp, size, &at, 1024) &&
	       copy_piece(ptr, sp, size, &at, 512) && copy_piece(ptr, sp, size, &at, 256) &&
	       copy_piece(ptr, sp, size, &at, 128) && copy_piece(ptr, sp, size, &at, 64) &&
	       copy_piece(ptr, sp, size, &at, 32) && copy_piece(ptr, sp, size, &at, 16) &&
	       copy_piece(ptr, sp, size, &at, 8));
	return at;
}

/*
 * DWARF mode: the current thread leaves a system call, with regs its user
 * registers. If it has a block pending, its registers and user stack go
 * with it, copied straight into a record of the ring sized to what the
 * stack holds (stack_extent()). Kernels without dynptrs (before 5.19) have
 * fg_offcpu_syscall_done_slot instead.
 */
SEC("tp_btf/sys_exit")
int BPF_PROG(fg_offcpu_syscall_done, struct pt_regs *regs, long ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), size, got;
	struct fg_offcpu_pending *p = bpf_map_lookup_elem(&pending, &tid);
	struct fg_offcpu_dwarf_event *d;
	struct bpf_dynptr ptr;
	__u64 sp;

	if (!p)
		return 0;
	sp = BPF_CORE_READ(regs, sp);
	size = stack_extent(bpf_get_current_task_btf(), sp);
	if (bpf_ringbuf_reserve_dynptr(&events, sizeof(*d) + size, 0, &ptr)) {
		bpf_ringbuf_discard_dynptr(&ptr, 0);
		count(FG_OFFCPU_DROP_RING);
		bpf_map_delete_elem(&pending, &tid);
		return 0;
	}
	d = bpf_dynptr_data(&ptr, 0, sizeof(*d));
	if (!d) {
		/* Not expected: the record is at least this long. */
		bpf_ringbuf_discard_dynptr(&ptr, 0);
		count(FG_OFFCPU_DROP_USER_DUMP);
		output(&p->e);
		bpf_map_delete_elem(&pending, &tid);
		return 0;
	}
	dwarf_head(d, p, regs);
	bpf_map_delete_elem(&pending, &tid);
	got = copy_stack(&ptr, sp, size);
	d->e.dump_size = got;
	if (!got)
		count(FG_OFFCPU_DROP_USER_DUMP);
	bpf_ringbuf_submit_dynptr(&ptr, wakeup(sizeof(*d) + size, true));
	return 0;
}

/*
 * The same, for kernels without dynptrs: the record is put together in this
 * CPU's scratch slot, copied a page at a time from the stack pointer, up to
 * stack_dump bytes or the first page that cannot be read (above the stack's
 * top, or not resident), then copied into the ring as long as what was read.
 */
SEC("tp_btf/sys_exit")
int BPF_PROG(fg_offcpu_syscall_done_slot, struct pt_regs *regs, long ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct fg_offcpu_pending *p = bpf_map_lookup_elem(&pending, &tid);
	__u32 cpu = bpf_get_smp_processor_id(), got = 0;
	struct fg_offcpu_dwarf_slot *d;
	__u64 sp;

	if (!p)
		return 0;
	/* Tracepoints run with preemption off: this CPU's slot is this program's alone. */
	d = bpf_map_lookup_elem(&scratch, &cpu);
	if (!d) {
		count(FG_OFFCPU_DROP_USER_DUMP);
		output(&p->e);
		bpf_map_delete_elem(&pending, &tid);
		return 0;
	}
	dwarf_head((struct fg_offcpu_dwarf_event *)d, p, regs);
	bpf_map_delete_elem(&pending, &tid);
	sp = d->regs[7];
	for (int i = 0; i < FG_OFFCPU_MAX_DUMP / FG_OFFCPU_PAGE + 1; i++) {
		/* To the end of sp's page first, then whole pages. */
		__u32 want = FG_OFFCPU_PAGE - ((sp + got) & (FG_OFFCPU_PAGE - 1));

		if (got >= stack_dump || got >= FG_OFFCPU_MAX_DUMP)
			break;
		if (want > stack_dump - got)
			want = stack_dump - got;
		got &= FG_OFFCPU_MAX_DUMP - 1;
		want &= 2 * FG_OFFCPU_PAGE - 1;
		if (want > FG_OFFCPU_PAGE)
			break;
		if (bpf_probe_read_user(d->stack + got, want, (void *)(sp + got)))
			break;
		got += want;
	}
	if (got > FG_OFFCPU_MAX_DUMP)
		got = FG_OFFCPU_MAX_DUMP;
	d->e.dump_size = got;
	if (!got)
		count(FG_OFFCPU_DROP_USER_DUMP);
	/* The record is as long as what was copied: a shallow stack leaves room for more. */
	if (bpf_ringbuf_output(&events, d, sizeof(struct fg_offcpu_dwarf_event) + got,
			       wakeup(sizeof(struct fg_offcpu_dwarf_event) + got, false)))
		count(FG_OFFCPU_DROP_RING);
	return 0;
}

/* LGPL code may be used under the GPL, which the kernel asks of programs calling its stack helpers. */
char LICENSE[] SEC("license") = "GPL";
