# SPDX-License-Identifier: LGPL-2.1-or-later
"""One memory budget for the whole daemon (MemoryMax=, docs/ARCHITECTURE.md,
"The memory budget"): when the budget is too small for every binary's
tables, the least recently used give way, counted, and names still come.

fgd runs with MemoryMax=1G (no always-on sampler: only the recordings look
binaries up, so what is cold is up to the test).

  1. node (8 MiB of symbols) and fgtest-inline (DWARF, inline frames) are
     recorded: their symbol tables, DWARF and CFI are read.
  2. Other programs are recorded for 12 s (Java's libjvm, the debug-info
     Python's libpython with DWARF, Debian's python3): node's and
     fgtest-inline's tables go cold (unused for more than 10 s).
  3. MemoryMax= is lowered (SIGHUP) below what is charged by more than the
     cold tables hold. The budget relieves itself: status counts DWARF,
     CFI and symbol tables evicted, and what is charged is within the new
     total.
  4. fgtest-inline and node are recorded again: their frames are named
     (their symbol tables read again), fgtest-inline's inline frames too
     once its DWARF is read again.

All the while after the change, fgd's RSS stays near the budget: at most
half as much again, which is what the budget does not account (a table
being read on the loader thread, the allocator's free lists)."""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time

from fgdtest import (Daemon, check, parse_folded, require_root, run, sanitized, skip, wait_for,
                     workload)

NODE = """
function fgdBudgetA(n) { let x = 0; for (let i = 0; i < n; i++) x = (x * 31 + i) % 1000003; return x; }
process.stdout.write("ready\\n");
for (;;) fgdBudgetA(1000000);
"""

PYTHON = """
def fgd_budget_fib(n):
    return n if n < 2 else fgd_budget_fib(n - 1) + fgd_budget_fib(n - 2)
print("ready", flush=True)
while True:
    fgd_budget_fib(20)
"""

MIB = 1 << 20


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class RssWatch:
    """fgd's RSS every 0.1 s on a thread of its own, for its peak from now on."""

    def __init__(self, pid):
        self.pid, self.peak, self.stop = pid, 0, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop.wait(0.1):
            try:
                self.peak = max(self.peak, rss_kib(self.pid))
            except OSError:
                return

    def done(self):
        self.stop.set()
        self.thread.join()
        return self.peak


def start(cmd, cwd=None):
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, cwd=cwd)
    check(p.stdout.readline().strip() == "ready", f"{cmd[0]} did not start")
    return p


def record(d, pids, seconds, tmp):
    meta = os.path.join(tmp, "meta.json")
    r = d.fgctl("record", "-p", ",".join(str(p) for p in pids), "-t", seconds, "-F", "499",
                "--call-graph", "dwarf", "-q", "-f", "folded", "-o", "-", "--metadata", meta,
                check_rc=0, timeout=120)
    with open(meta) as f:
        return parse_folded(r.stdout.decode()), json.load(f)


def memory(d):
    return json.loads(d.fgctl("status", "--json", check_rc=0).stdout)["memory"]


def summary(mem):
    return (f"charged {mem['charged'] >> 10} KiB + base {mem['base'] >> 10} KiB of "
            f"{mem['budget'] >> 10} KiB, RSS {mem['rss'] >> 10} KiB; relieved {mem['relieved']}, "
            f"unrelieved {mem['unrelieved']}; "
            + ", ".join(f"{k} {v['bytes'] >> 10} KiB (evicted {v['evicted']})"
                        for k, v in mem["parts"].items() if v["bytes"] or v["evicted"]))


def share(stacks, pred):
    total = sum(stacks.values())
    return sum(n for s, n in stacks.items() if pred(s)) / total if total else 0.0


def test():
    require_root()
    node, java, javac = shutil.which("node"), shutil.which("java"), shutil.which("javac")
    if not node:
        skip("node is not installed: no binary has a symbol table big enough to be evicted")
    tmp = tempfile.mkdtemp(prefix="fgd-test-budget-")
    conf = os.path.join(tmp, "fgd.conf")
    with open(conf, "w") as f:
        f.write("[fgd]\nMemoryMax=1G\n")
    procs = []
    try:
        with Daemon(["--config", conf, "--no-always-on"]) as d, workload("fgtest-inline") as inl:
            with open(os.path.join(tmp, "budget.js"), "w") as f:
                f.write(NODE)
            with open(os.path.join(tmp, "budget.py"), "w") as f:
                f.write(PYTHON)
            first = start([node, os.path.join(tmp, "budget.js")], cwd=tmp)
            procs.append(first)

            # 1. Named, with inline frames: the symbol tables and DWARF are read.
            stacks, meta = record(d, [inl.pid, first.pid], 2, tmp)
            chain = share(stacks, lambda s: "fgtest_outer;fgtest_middle;fgtest_inner" in s)
            print(f"1. {meta['samples']} samples, {chain:.1%} through fgtest-inline's inline "
                  f"chain; {summary(memory(d))}")
            check(chain > 0.3, f"no inline frames at first: {list(stacks)[:3]}")

            # 2. Other programs, recorded until the first two are cold.
            if java and javac:
                src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "programs",
                                   "FgJitHot.java")
                if subprocess.run([javac, "-d", tmp, src]).returncode == 0:
                    procs.append(start([java, "-cp", tmp, "FgJitHot"]))
            for py in (shutil.which("python3"), "/usr/bin/python3"):
                if py and os.access(py, os.X_OK):
                    procs.append(start([py, os.path.join(tmp, "budget.py")]))
            others = [p.pid for p in procs[1:]]
            for _ in range(4):
                record(d, others, 3, tmp)
            before = memory(d)
            print(f"2. {len(others)} other programs: {summary(before)}")
            check(before["relieved"] == 0, f"the budget was over at 1G: {before}")

            # 3. A budget that the cold tables must leave for: 6 MiB less than is charged.
            used = before["charged"] + before["base"]
            budget = max(32 * MIB, used - 6 * MIB)
            if budget >= used:
                # A machine without libc's debug file, or with a small kallsyms.
                skip(f"only {used >> 20} MiB charged: MemoryMax= cannot go below it (32M at least)")
            with open(conf, "w") as f:
                f.write(f"[fgd]\nMemoryMax={budget}\n")
            watch = RssWatch(d.proc.pid)
            d.proc.send_signal(signal.SIGHUP)
            wait_for(lambda: memory(d)["budget"] == budget, "the reload's new budget")
            mem = wait_for(lambda: (lambda m: m if m["relieved"] > 0 else None)(memory(d)),
                           "the budget to relieve itself")
            parts = mem["parts"]
            print(f"3. MemoryMax={budget >> 10}K: {summary(mem)}")
            # The symbolizer's own count of binaries agrees with the budget's of entries.
            syms = json.loads(d.fgctl("status", "--json", check_rc=0).stdout)["symbols"]
            check(parts["symbols"]["evicted"] > 0 and syms["symbols_evicted"] > 0,
                  f"no symbol table was evicted: {parts['symbols']}, {syms}")
            check(parts["dwarf"]["evicted"] > 0 and syms["dwarf_evicted"] > 0,
                  f"no DWARF was evicted, though it goes first: {parts['dwarf']}, {syms}")
            check(parts["cfi"]["evicted"] > 0, f"no CFI was evicted: {parts['cfi']}")
            check(mem["charged"] + mem["base"] <= budget,
                  f"still over the budget once relieved: {mem['charged']} + {mem['base']} > {budget}")
            check(mem["unrelieved"] == 0, f"the budget could not relieve itself: {mem}")

            # 4. Still named: their symbol tables are read again.
            stacks, meta = record(d, [inl.pid], 2, tmp)
            named = share(stacks, lambda s: ";fgtest_outer" in s)
            chain = share(stacks, lambda s: "fgtest_outer;fgtest_middle;fgtest_inner" in s)
            fr = meta["frames"]
            print(f"4. fgtest-inline: {meta['samples']} samples, {named:.1%} through fgtest_outer, "
                  f"{chain:.1%} with its inline frames; frames {fr}")
            check(named > 0.9, f"fgtest-inline's frames lost their names: {list(stacks)[:3]}")
            stacks, meta = record(d, [first.pid], 2, tmp)
            fr = meta["frames"]
            user = fr["named"] + fr["module_offset"]
            print(f"4. node: {meta['samples']} samples; frames {fr}")
            check(fr["named"] > 0.9 * user, f"node's frames lost their names: {fr}")
            mem = memory(d)
            print(f"4. {summary(mem)}")

            peak = watch.done()
            print(f"fgd's RSS peak since the budget changed: {peak} KiB, for {budget >> 10} KiB")
            if not sanitized():
                check(peak * 1024 <= budget * 3 // 2,
                      f"fgd's RSS reached {peak} KiB, over 1.5 x the budget of {budget >> 10} KiB")
    finally:
        for p in procs:
            p.kill()
            p.wait()
            p.stdout.close()
        shutil.rmtree(tmp, ignore_errors=True)


run(test)
