#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""fgd's whole memory while the machine is recorded hard (issue 12): fgd at
its defaults (always-on at 19 Hz, dwarf call graphs), and

  java    FgJitHot (tests/programs), -XX:+PreserveFramePointer, its perf map
          rewritten by `jcmd PID Compiler.perfmap` every 10 s;
  node    --perf-basic-prof, a few hot functions called in turn;
  python  the python3 on PATH (here a build with full debug information:
          libpython with .debug_info) and /usr/bin/python3 (Debian's,
          stripped), each running a recursive function;
  c++     `g++ -O2` of a source using the standard library, in a loop;

then `fgctl record -a -F 999 --call-graph dwarf` for --seconds, while
`fgctl status --json` is polled every --poll seconds. Prints fgd's VmHWM
(from its start) and RSS, what status says each component holds at the
poll with the highest RSS, the recording's stack completeness and share of
named frames, and the machine's conditions. Asserts nothing.

  sudo python3 tests/bench/bench_memory.py --build build-rel --seconds 60
  sudo python3 tests/bench/bench_memory.py --build build-rel -- --memory-max 32M
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import fgbench

NODE = """
function fgdMemA(n) { let x = 0; for (let i = 0; i < n; i++) x = (x * 31 + i) % 1000003; return x; }
function fgdMemB(n) { let s = ""; for (let i = 0; i < n; i++) s = (s + i).slice(-64); return s.length; }
function fgdMemC(n) { const m = new Map(); for (let i = 0; i < n; i++) m.set(i % 977, i); return m.size; }
function fgdMemD(n) { const a = []; for (let i = 0; i < n; i++) a.push(i * 1.5); return a.sort().length; }
process.stdout.write("ready\\n");
for (;;) { fgdMemA(200000); fgdMemB(20000); fgdMemC(100000); fgdMemD(20000); }
"""

PYTHON = """
import sys
def fgd_mem_fib(n):
    return n if n < 2 else fgd_mem_fib(n - 1) + fgd_mem_fib(n - 2)
def fgd_mem_work():
    d = {}
    for i in range(20000):
        d[str(i)] = [i] * 3
    return sum(len(v) for v in d.values()) + fgd_mem_fib(18)
print("ready", flush=True)
while True:
    fgd_mem_work()
"""

CXX = """
#include <algorithm>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>
int main(int argc, char **argv)
{
	std::map<std::string, std::vector<int>> m;
	std::regex re("([a-z]+)=([0-9]+)");
	for (int i = 1; i < argc; i++) {
		std::smatch s;
		std::string a(argv[i]);
		if (std::regex_match(a, s, re))
			m[s[1]].push_back(std::stoi(s[2]));
	}
	std::ostringstream o;
	for (auto &kv : m)
		o << kv.first << " " << kv.second.size() << "\\n";
	std::cout << o.str();
}
"""


def start(cmd, **kw):
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, **kw)
    line = p.stdout.readline()
    if line.strip() != "ready":
        sys.exit(f"bench: {cmd[0]} did not start: {line!r}")
    return p


def workloads(tmp, stop):
    """Starts everything; returns the processes and the threads that keep some going."""
    procs, threads = {}, []
    java, javac, jcmd = shutil.which("java"), shutil.which("javac"), shutil.which("jcmd")
    if java and javac and jcmd:
        src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "programs",
                           "FgJitHot.java")
        subprocess.run([javac, "-d", tmp, src], check=True, timeout=300)
        procs["java"] = start([java, "-XX:+PreserveFramePointer", "-cp", tmp, "FgJitHot"])

        def perfmap():
            while not stop.wait(10):
                subprocess.run([jcmd, str(procs["java"].pid), "Compiler.perfmap"],
                               capture_output=True, timeout=120)
        threads.append(threading.Thread(target=perfmap, daemon=True))
    else:
        print("bench: java, javac or jcmd missing: no Java", file=sys.stderr)
    node = shutil.which("node")
    if node:
        with open(os.path.join(tmp, "mem.js"), "w") as f:
            f.write(NODE)
        # Its V8 log files land in the working directory.
        procs["node"] = start([node, "--perf-basic-prof", os.path.join(tmp, "mem.js")], cwd=tmp)
    with open(os.path.join(tmp, "mem.py"), "w") as f:
        f.write(PYTHON)
    for name, exe in (("python (PATH)", shutil.which("python3")),
                      ("python (/usr/bin)", "/usr/bin/python3")):
        if exe and os.access(exe, os.X_OK):
            procs[name] = start([exe, os.path.join(tmp, "mem.py")])
    gxx = shutil.which("g++")
    if gxx:
        with open(os.path.join(tmp, "mem.cc"), "w") as f:
            f.write(CXX)

        def compiles():
            n = 0
            while not stop.is_set():
                subprocess.run([gxx, "-O2", "-o", os.path.join(tmp, "mem-cxx"),
                                os.path.join(tmp, "mem.cc")], capture_output=True)
                n += 1
            procs["c++ compiles"] = n
        threads.append(threading.Thread(target=compiles, daemon=True))
    for t in threads:
        t.start()
    return procs, threads


COMPONENTS = (("always-on window", ("always_on", "bytes")),
              ("always-on memo", ("always_on", "memo_bytes")),
              ("DWARF held", ("symbols", "dwarf_bytes")),
              ("names kept (loader)", ("symbols", "resolved_bytes")),
              ("CFI", ("unwinding", "bytes")),
              ("JIT maps", ("jit", "bytes")),
              ("client results", ("server", "result_bytes")))


OFFSET = re.compile(r"\+0x[0-9a-f]+$")


def per_program(path):
    """Frames named per workload, from the recording's folded stacks: whatever else ran on the
    machine meanwhile is left out. A frame is named unless it is [unknown] or module+offset."""
    groups = {"java": ("java",), "node": ("node",), "python": ("python3",),
              "c++ compiles": ("cc1plus", "g++", "as", "ld", "collect2")}
    out = {}
    with open(path) as f:
        for line in f:
            stack, n = line.rsplit(" ", 1)
            frames = stack.split(";")
            for g, comms in groups.items():
                if frames[0] in comms or any(frames[0].startswith(c + "-") for c in comms):
                    user = [x for x in frames[1:] if not x.endswith("_[k]")]
                    named = sum(1 for x in user if x != "[unknown]" and not OFFSET.search(x))
                    o = out.setdefault(g, [0, 0, 0])
                    o[0] += int(n)
                    o[1] += named * int(n)
                    o[2] += len(user) * int(n)
    return out


def threads_cpu(pid):
    """Each thread's utime + stime in seconds, and the process's minor page faults."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        out["loop" if int(tid) == pid else "loader"] = (int(fields[11]) + int(fields[12])) / fgbench.TICK
    with open(f"/proc/{pid}/stat") as f:
        out["minflt"] = int(f.read().rsplit(")", 1)[1].split()[7])
    return out


def get(st, path):
    for k in path:
        if not isinstance(st, dict) or k not in st:
            return None
        st = st[k]
    return st


def report_status(st, rss_kib):
    print(f"  status at the poll with the highest RSS ({rss_kib / 1024:.1f} MiB):")
    mem = st.get("memory")
    if mem:
        # The budget's own account (issue 12): every part, the RSS beside them.
        print(f"    budget {mem['budget'] / 2**20:.1f} MiB: charged {mem['charged'] / 2**20:.1f} "
              f"+ base {mem['base'] / 2**20:.1f} MiB; RSS {mem['rss'] / 2**20:.1f} MiB; "
              f"pressure {mem['pressure']}, relieved {mem['relieved']} times, "
              f"unrelieved {mem['unrelieved']}")
        for name, c in mem["parts"].items():
            extra = ", ".join(f"{k} {v}" for k, v in c.items()
                              if k not in ("bytes", "peak", "share") and v)
            print(f"    {name:12} {c['bytes'] / 2**20:7.2f} MiB (peak {c['peak'] / 2**20:6.2f}, share "
                  f"{c['share'] / 2**20:5.1f})" + (f"; {extra}" if extra else ""))
        return
    for name, path in COMPONENTS:
        v = get(st, path)
        if v is not None:
            print(f"    {name:22} {v / 2**20:7.2f} MiB")
    sy, pr = st["symbols"], st["processes"]
    print(f"    {sy['binaries']} binaries, {sy['binaries_loaded']} symbol tables read, "
          f"{sy['binaries_dwarf']} with DWARF; CFI of {st['unwinding']['binaries']} binaries; "
          f"{pr['generations']} process generations, {pr['maps']} maps")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build-rel")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--warmup", type=float, default=15, help="workloads alone before recording")
    ap.add_argument("--frequency", type=int, default=999)
    ap.add_argument("--poll", type=float, default=1.0)
    ap.add_argument("fgd_args", nargs="*", help="after --: more fgd options")
    args = ap.parse_args()
    fgbench.need_root()
    build = fgbench.Build(args.build)
    tmp = tempfile.mkdtemp(prefix="fgd-bench-mem-")
    stop = threading.Event()
    m = fgbench.Machine()
    procs = {}
    try:
        with fgbench.Fgd(build, args.fgd_args) as fgd:
            print(f"fgd {' '.join(args.fgd_args) or '(defaults)'}; RSS at READY "
                  f"{fgbench.status_kib(fgd.pid, 'VmRSS') / 1024:.1f} MiB", flush=True)
            procs, threads = workloads(tmp, stop)
            print("workloads: " + ", ".join(k for k in procs) + (", c++ compiles" if threads else ""),
                  flush=True)
            time.sleep(args.warmup)
            meta_path = os.path.join(tmp, "meta.json")
            cpu0 = fgbench.cpu_seconds(fgd.pid)
            th0 = threads_cpu(fgd.pid)
            rec = subprocess.Popen([build.fgctl, "--socket", fgd.socket, "record", "-a", "-F",
                                    str(args.frequency), "--call-graph", "dwarf", "-t",
                                    str(args.seconds), "-q", "-f", "folded", "-o",
                                    os.path.join(tmp, "out.folded"), "--metadata", meta_path],
                                   stderr=subprocess.PIPE)
            best, best_rss, rss = None, 0, []
            while rec.poll() is None:
                time.sleep(args.poll)
                if not fgd.alive():
                    sys.exit(f"bench: fgd died:\n{fgd.logs()}")
                st = fgd.status()
                r = fgbench.status_kib(fgd.pid, "VmRSS")
                rss.append(r)
                if r >= best_rss:
                    best, best_rss = st, r
            err = rec.stderr.read().decode(errors="replace")
            if rec.returncode != 0:
                sys.exit(f"bench: fgctl record failed: {err}")
            with open(meta_path) as f:
                meta = json.load(f)
            hwm = fgbench.status_kib(fgd.pid, "VmHWM")
            cpu = fgbench.cpu_seconds(fgd.pid) - cpu0
            th = {k: v - th0.get(k, 0) for k, v in threads_cpu(fgd.pid).items()}
            st = fgd.status()
            fr, q = meta["frames"], meta["stack_quality"]
            total = fr["named"] + fr["module_offset"] + fr["unknown"]
            print(f"recording: -a -F {args.frequency} --call-graph dwarf for {args.seconds:.0f} s: "
                  f"{meta['samples']} samples, {meta['lost']} lost, {meta.get('degraded', 0)} "
                  f"degraded, {meta['stacks']} stacks")
            print(f"  user stacks complete {q['complete_pct']:.1f}%; frames named "
                  f"{100 * fr['named'] / max(total, 1):.1f}% ({fr['named']} of {total}; "
                  f"module+offset {fr['module_offset']}, unknown {fr['unknown']}; "
                  f"inlined {fr['inlined']})")
            print("  per workload, user frames named (samples): " + "; ".join(
                f"{g} {100 * named / max(frames, 1):.1f}% ({n})"
                for g, (n, named, frames) in per_program(os.path.join(tmp, "out.folded")).items()))
            print(f"fgd CPU {cpu:.1f} s for the recording ({1e6 * cpu / max(meta['samples_seen'], 1):.1f} "
                  f"us a sample); loop's longest turn {st.get('loop', {}).get('longest_ms', '?')} "
                  f"ms; loader busy {st.get('loader', {}).get('busy_ms', '?')} ms, longest job "
                  f"{st.get('loader', {}).get('longest_job_ms', '?')} ms")
            print(f"  of which the loop {th.get('loop', 0):.1f} s, the loader {th.get('loader', 0):.1f} s; "
                  f"{th['minflt']} minor page faults; CFI rows: {st['unwinding']['row_hits']} hits, "
                  f"{st['unwinding']['row_misses']} misses")
            print(f"fgd VmHWM {hwm / 1024:.1f} MiB; RSS during the recording: median "
                  f"{sorted(rss)[len(rss) // 2] / 1024:.1f}, max {max(rss) / 1024:.1f} MiB; "
                  f"now {fgbench.status_kib(fgd.pid, 'VmRSS') / 1024:.1f} MiB")
            report_status(best, best_rss)
            print("at the end: " + fgbench.memory(fgd))
            stop.set()
    finally:
        stop.set()
        for p in procs.values():
            if isinstance(p, subprocess.Popen):
                p.kill()
                p.wait()
        for name in ("java",):
            if name in procs and isinstance(procs[name], subprocess.Popen):
                path = f"/tmp/perf-{procs[name].pid}.map"
                if os.path.exists(path):
                    os.unlink(path)
        if "node" in procs:
            path = f"/tmp/perf-{procs['node'].pid}.map"
            if os.path.exists(path):
                os.unlink(path)
        print(fgbench.conditions(m), flush=True)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
