#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Deterministic generator of realistic folded stacks, for the rendering benchmark.

The stacks are random walks down one fixed call tree, so they share prefixes
the way a real profile does:
  - process roots ("java", "postgres", "swapper", ...), picked with a skew;
  - below each root a tree of user frames with a fan-out that shrinks with
    depth; children are picked with a Zipf-like skew, so hot paths are hot;
  - names are a mix of short C names and long C++ names (namespaces,
    templates, argument lists); their lengths are scaled so the file lands
    on --size;
  - a third of the stacks end in a kernel tail (syscall, page fault or
    interrupt paths, frames annotated "_[k]"); idle stacks are kernel only;
  - depth 5..40 (--min-depth/--max-depth), every line a distinct stack, as
    stackcollapse tools write them;
  - counts from a heavy-tailed (Pareto) distribution: most stacks are seen
    once or twice, a few thousands of times.

The same arguments give the same bytes (random.Random(seed), no hash order).

usage: tests/bench/gen_folded.py [--lines 200000] [--size 100M] [--seed 1] [-o FILE]
"""

import argparse
import bisect
import random
import sys

PROCESSES = [
    "java", "postgres", "nginx", "chrome", "python3", "node", "mysqld", "envoy",
    "redis-server", "clang++", "rustc", "ld.lld", "ffmpeg", "qemu-system-x86",
    "containerd", "dockerd", "kubelet", "sshd", "bash", "systemd-journal",
]
IDLE = "swapper"

C_WORDS = [
    "alloc", "free", "init", "read", "write", "send", "recv", "poll", "wait", "lock",
    "unlock", "hash", "find", "insert", "remove", "parse", "encode", "decode", "flush",
    "copy", "move", "scan", "sort", "merge", "split", "open", "close", "map", "unmap",
    "emit", "load", "store", "push", "pop", "get", "set", "update", "check", "apply",
    "resolve", "dispatch", "handle", "process", "execute", "run", "step", "visit",
    "compile", "link", "render", "compress", "inflate", "deflate", "sync", "commit",
]
C_NOUNS = [
    "buffer", "page", "table", "index", "entry", "node", "tree", "list", "queue",
    "socket", "request", "response", "header", "frame", "block", "chunk", "segment",
    "tuple", "row", "column", "plan", "expr", "token", "symbol", "module", "object",
    "string", "vector", "cache", "pool", "arena", "slab", "region", "context", "state",
    "session", "stream", "channel", "event", "timer", "task", "thread", "worker",
]
LIBC = [
    "__libc_start_main", "__libc_start_call_main", "start_thread", "clone3", "malloc",
    "free", "_int_malloc", "_int_free", "memcpy", "__memmove_avx_unaligned_erms",
    "__memset_avx2_unaligned_erms", "pthread_mutex_lock", "pthread_cond_wait",
    "__GI___libc_read", "__GI___libc_write", "epoll_wait", "__lll_lock_wait",
    "operator new(unsigned long)", "operator delete(void*, unsigned long)",
]
NAMESPACES = [
    "std", "boost", "absl", "folly", "v8", "blink", "llvm", "clang", "grpc", "google",
    "protobuf", "internal", "detail", "impl", "base", "net", "io", "sql", "exec",
    "storage", "runtime", "compiler", "codegen", "http", "tls", "json", "util",
]
CLASSES = [
    "Parser", "Lexer", "Executor", "Planner", "Optimizer", "BufferManager", "Allocator",
    "HashTable", "BTree", "Scheduler", "EventLoop", "Connection", "Session", "Request",
    "Handler", "Dispatcher", "Compiler", "Interpreter", "Visitor", "Builder", "Encoder",
    "Decoder", "Stream", "Channel", "Future", "Promise", "Task", "ThreadPool", "Mutex",
    "Isolate", "Heap", "GarbageCollector", "MarkingVisitor", "Document", "LayoutObject",
    "RenderTree", "Serializer", "Arena", "StringPiece", "Cord", "FlatHashMap",
]
TYPES = [
    "int", "unsigned long", "char const*", "double", "bool", "std::string const&",
    "std::basic_string_view<char, std::char_traits<char> >", "void*", "unsigned int",
    "std::vector<int, std::allocator<int> > const&", "std::shared_ptr<Node>",
    "std::unique_ptr<Buffer, std::default_delete<Buffer> >", "Context&", "Slice const&",
    "std::function<void (Status)>", "absl::Span<unsigned char const>", "long",
    "std::map<std::string, Value, std::less<std::string>, std::allocator<std::pair<"
    "std::string const, Value> > >&",
]

# Kernel tails, root first, as perf shows them with --kernel annotations.
K_SYSCALL = ["entry_SYSCALL_64_after_hwframe", "do_syscall_64"]
K_CALLS = {
    "read": ["__x64_sys_read", "ksys_read", "vfs_read", "ext4_file_read_iter",
             "filemap_read", "copy_page_to_iter", "_copy_to_iter"],
    "write": ["__x64_sys_write", "ksys_write", "vfs_write", "ext4_buffered_write_iter",
              "generic_perform_write", "copy_page_from_iter_atomic"],
    "sendmsg": ["__x64_sys_sendto", "__sys_sendto", "tcp_sendmsg", "tcp_sendmsg_locked",
                "tcp_push", "__tcp_push_pending_frames", "tcp_write_xmit",
                "__tcp_transmit_skb", "ip_queue_xmit", "__ip_queue_xmit", "ip_finish_output2",
                "__dev_queue_xmit", "dev_hard_start_xmit"],
    "recvmsg": ["__x64_sys_recvfrom", "__sys_recvfrom", "sock_recvmsg", "tcp_recvmsg",
                "tcp_recvmsg_locked", "skb_copy_datagram_iter", "__skb_datagram_iter"],
    "futex": ["__x64_sys_futex", "do_futex", "futex_wait", "futex_wait_queue",
              "schedule", "__schedule", "finish_task_switch.isra.0"],
    "epoll": ["__x64_sys_epoll_wait", "do_epoll_wait", "ep_poll", "schedule_hrtimeout_range",
              "schedule", "__schedule"],
    "mmap": ["__x64_sys_mmap", "ksys_mmap_pgoff", "vm_mmap_pgoff", "do_mmap", "mmap_region",
             "vma_merge"],
}
K_FAULT = ["asm_exc_page_fault", "exc_page_fault", "do_user_addr_fault", "handle_mm_fault",
           "__handle_mm_fault", "do_anonymous_page", "alloc_pages_mpol", "__alloc_pages",
           "get_page_from_freelist", "clear_page_erms"]
K_IRQ = ["asm_sysvec_apic_timer_interrupt", "sysvec_apic_timer_interrupt",
         "__sysvec_apic_timer_interrupt", "hrtimer_interrupt", "__hrtimer_run_queues",
         "tick_nohz_handler", "update_process_times", "scheduler_tick", "task_tick_fair"]
K_IDLE = ["secondary_startup_64_no_verify", "start_secondary", "cpu_startup_entry",
          "do_idle", "cpuidle_idle_call", "cpuidle_enter", "cpuidle_enter_state",
          "acpi_idle_enter", "acpi_idle_do_entry", "native_safe_halt"]


def parse_size(s):
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    s = s.strip().lower().rstrip("b").rstrip("i")
    if s and s[-1] in mult:
        return int(float(s[:-1]) * mult[s[-1]])
    return int(s)


class Zipf:
    """Picks 0..n-1 with weight 1/(i+1)^s, by bisection on the cumulative weights."""

    def __init__(self, n, s):
        acc, self.cum = 0.0, []
        for i in range(n):
            acc += 1.0 / (i + 1) ** s
            self.cum.append(acc)

    def pick(self, rng):
        return bisect.bisect_left(self.cum, rng.random() * self.cum[-1])


class Names:
    """Frame names. Long (C++) ones get their final text once the length scale is known."""

    MAX_PARTS = 24

    def __init__(self, seed):
        self.seed = seed
        self.text = []   # fixed text, or None for a scalable name
        self.base = []   # relative length of a scalable name
        self.steps = []  # lengths a scalable name can take, shortest first
        self.seen = set()

    def fixed(self, s):
        if s in self.seen:
            s = f"{s}.part.{len(self.text)}"  # as gcc names its clones
        self.seen.add(s)
        self.text.append(s)
        self.base.append(0)
        self.steps.append(None)
        return len(self.text) - 1

    def c_name(self, rng):
        s = f"{rng.choice(C_WORDS)}_{rng.choice(C_NOUNS)}"
        if rng.random() < 0.4:
            s += f"_{rng.choice(C_NOUNS)}"
        return self.fixed(s)

    def _cpp(self, i, parts):
        """The name of scalable name i with its first `parts` argument types."""
        r = random.Random(self.seed * 1000003 + i)
        ns = "::".join(r.choice(NAMESPACES) for _ in range(r.randint(1, 3)))
        cls = r.choice(CLASSES)
        meth = f"{r.choice(C_WORDS)}{r.choice(C_NOUNS).capitalize()}"
        const = " const" if r.random() < 0.2 else ""
        targs, args = [], []
        for _ in range(parts):
            (targs if r.random() < 0.3 else args).append(r.choice(TYPES))
        tmpl = f"<{', '.join(targs)} >" if targs else ""
        return f"{ns}::{cls}{tmpl}::{meth}({', '.join(args)}){const}"

    def cpp_name(self, rng):
        # Lengths spread like real C++ symbols: a long tail of template-heavy ones.
        i = len(self.text)
        self.text.append(None)
        self.base.append(min(8.0, rng.lognormvariate(0, 0.6)))
        self.steps.append(None)  # computed when first needed: most pool names go unused
        return i

    def _steps(self, i):
        if self.steps[i] is None:
            self.steps[i] = [len(self._cpp(i, k)) for k in range(self.MAX_PARTS + 1)]
        return self.steps[i]

    def length(self, i, scale):
        """Length of scalable name i at this scale: the first step reaching scale * base."""
        st = self._steps(i)
        k = bisect.bisect_left(st, scale * self.base[i])
        return st[min(k, len(st) - 1)]

    def finish(self, scale, used):
        for i, t in enumerate(self.text):
            if t is not None or not used[i]:
                continue
            st = self._steps(i)
            k = min(bisect.bisect_left(st, scale * self.base[i]), len(st) - 1)
            s = self._cpp(i, k)
            if s in self.seen:
                s += f" [clone .constprop.{i}]"
            self.seen.add(s)
            self.text[i] = s


class Tree:
    """
    The call tree, built lazily as the walks reach new nodes. Each process
    has its own pool of functions; a node calls functions near its own in
    the pool (code calls code of its module), plus shared library ones, so
    a name turns up under many parents, as in real profiles.
    """

    def __init__(self, rng, names, long_share, pool_size):
        self.rng, self.names = rng, names
        self.long_share, self.pool_size = long_share, pool_size
        self.children = {}  # node -> list of child nodes
        self.node_name = []
        self.node_pos = []  # position of the node's function in its process pool
        self.node_pool = []
        self.zipf = {}
        self.common = [names.fixed(s) for s in LIBC]

    def new_node(self, name, pool, pos):
        self.node_name.append(name)
        self.node_pool.append(pool)
        self.node_pos.append(pos)
        return len(self.node_name) - 1

    def new_pool(self):
        pool = []
        for _ in range(self.pool_size):
            if self.rng.random() < self.long_share:
                pool.append(self.names.cpp_name(self.rng))
            else:
                pool.append(self.names.c_name(self.rng))
        return pool

    def fanout(self, depth):
        hi = 12 if depth < 3 else 6 if depth < 10 else 3
        return self.rng.randint(1, hi)

    def child(self, node, depth):
        kids = self.children.get(node)
        if kids is None:
            kids, used = [], set()
            pool, pos = self.node_pool[node], self.node_pos[node]
            for _ in range(self.fanout(depth)):
                if self.rng.random() < 0.08:
                    name, npos = self.rng.choice(self.common), pos
                else:
                    npos = (pos + int(self.rng.gauss(0, 40))) % len(pool)
                    name = pool[npos]
                if name not in used:
                    used.add(name)
                    kids.append(self.new_node(name, pool, npos))
            self.children[node] = kids
        n = len(kids)
        z = self.zipf.get(n)
        if z is None:
            z = self.zipf[n] = Zipf(n, 1.1)
        return kids[z.pick(self.rng)]


def kernel_tail(rng, names_k, max_len):
    kind = rng.random()
    if kind < 0.6:
        call = rng.choice(sorted(K_CALLS))
        path = K_SYSCALL + K_CALLS[call][:rng.randint(1, len(K_CALLS[call]))]
    elif kind < 0.85:
        path = K_FAULT[:rng.randint(3, len(K_FAULT))]
    else:
        path = K_IRQ[:rng.randint(2, len(K_IRQ))]
    return [names_k[f] for f in path[:max_len]]


def generate(args):
    rng = random.Random(args.seed)
    names = Names(args.seed)
    tree = Tree(rng, names, args.long_share, max(100, args.lines // 50))
    names_k = {}
    for f in K_SYSCALL + K_FAULT + K_IRQ + K_IDLE + sum(K_CALLS.values(), []):
        if f not in names_k:
            names_k[f] = names.fixed(f + "_[k]")
    roots = []
    for p in PROCESSES:
        name, pool = names.fixed(p), tree.new_pool()
        roots.append((name, tree.new_node(name, pool, rng.randrange(len(pool)))))
    idle = names.fixed(IDLE)
    proc_zipf = Zipf(len(roots), 1.0)

    stacks, seen = [], set()
    misses = 0
    while len(stacks) < args.lines:
        if rng.random() < 0.03:
            # Idle: kernel frames only, few distinct stacks.
            st = [idle] + [names_k[f] for f in K_IDLE[:rng.randint(4, len(K_IDLE))]]
            st += kernel_tail(rng, names_k, rng.randint(0, 4))[2:]
        else:
            depth = min(args.max_depth, max(args.min_depth, round(rng.triangular(
                args.min_depth, args.max_depth, args.min_depth + 8))))
            ktail = kernel_tail(rng, names_k, depth - 2) if rng.random() < 0.33 else []
            name, node = roots[proc_zipf.pick(rng)]
            st = [name]
            for d in range(1, depth - len(ktail)):
                node = tree.child(node, d)
                st.append(tree.node_name[node])
            st += ktail
        st = tuple(st[:args.max_depth])
        if len(st) < args.min_depth or st in seen:
            misses += 1
            if misses > 50 * args.lines:
                sys.exit("gen_folded: cannot find enough distinct stacks")
            continue
        seen.add(st)
        count = min(10 ** 6, int(rng.paretovariate(1.1)))
        stacks.append((st, count))

    # Choose the length scale of the long names so the file lands on --size.
    occ = [0] * len(names.text)
    fixed = 0
    for st, count in stacks:
        fixed += len(st) + len(str(count))  # separators, newline and count
        for f in st:
            occ[f] += 1
    scalable = []
    for i, t in enumerate(names.text):
        if t is not None:
            fixed += occ[i] * len(t)
        elif occ[i]:
            scalable.append((occ[i], i))

    def total(scale):
        return fixed + sum(o * names.length(i, scale) for o, i in scalable)

    lo, hi = 0.0, 4096.0
    for _ in range(40):
        mid = (lo + hi) / 2
        if total(mid) < args.size:
            lo = mid
        else:
            hi = mid
    names.finish(hi, occ)
    return names.text, stacks


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lines", type=int, default=200000)
    ap.add_argument("--size", type=parse_size, default=None,
                    help="target file size, e.g. 100M (default: 500 bytes per line)")
    ap.add_argument("--min-depth", type=int, default=5)
    ap.add_argument("--max-depth", type=int, default=40)
    ap.add_argument("--long-share", type=float, default=0.45,
                    help="share of user frames with long C++ names")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--output", default="-")
    args = ap.parse_args()
    if args.size is None:
        args.size = args.lines * 500
    if not 1 <= args.min_depth <= args.max_depth:
        sys.exit("gen_folded: need 1 <= --min-depth <= --max-depth")

    text, stacks = generate(args)
    out = sys.stdout if args.output == "-" else open(args.output, "w", encoding="utf-8")
    with out:
        buf = []
        for st, count in stacks:
            buf.append(";".join(text[f] for f in st) + f" {count}\n")
            if len(buf) >= 4096:
                out.write("".join(buf))
                buf.clear()
        out.write("".join(buf))


if __name__ == "__main__":
    main()
