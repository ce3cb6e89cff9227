#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Off-CPU recording's cost on a context-switch storm (issue 13).

The storm is `perf bench sched pipe`: two tasks ping-ponging a token over a
pipe, every round trip two switches. Its throughput (ops/s) is measured,
each run --loops round trips:
  - with no profiler;
  - while `fgctl record --off-cpu -a` runs, with fp user stacks, then with
    dwarf ones (registers and up to 32 KiB of user stack copied per block);
  - while `perf record -e sched:sched_switch -a -g` runs (perf's own
    off-CPU method: every switch with its callchain, to a file);
and for fgd, its own CPU time per block, every block lost, and what its BPF
programs cost in the kernel per run (kernel.bpf_stats_enabled: run_time_ns
over run_cnt, the switch program and, in dwarf mode, the one at every
system call's end).

Always-on off-CPU (OffCpu=yes) is measured against always-on without it
(fgd's defaults otherwise), in DWARF mode (fgd's default call graph) and
in fp mode: the storm's throughput, a system-call loop's (`perf bench
syscall basic`: DWARF mode hooks every system call's end), and fgd's own
CPU while the machine is at rest (--rest seconds) and during the storm.
Runs alternate --rounds times; the median of each is printed. Asserts
nothing.

--pin CPU runs the storm's two tasks on that one CPU (taskset), the
profilers on the others. Unpinned, each round trip on a virtual machine
waits for cross-CPU wake-ups (IPIs) that cost far more than a switch, and
where the scheduler puts the two tasks moves the result more than any
profiler; pinned, every switch is one task to the other, and the storm
measures what a switch costs, the profiler's part included.

  sudo python3 tests/bench/bench_offcpu.py --build build --loops 400000 --rounds 3
  sudo python3 tests/bench/bench_offcpu.py --only-always-on
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

import fgbench


PIN = []


def perf_bench(*args):
    """Runs `perf bench ARGS` (under taskset with --pin); the ops/s it reports."""
    r = subprocess.run([*PIN, "perf", "bench", *args], capture_output=True, text=True,
                       check=True)
    m = re.search(r"(\d+) ops/sec", r.stdout)
    if not m:
        sys.exit(f"bench: no ops/sec in perf bench's output:\n{r.stdout}")
    return int(m.group(1))


def storm(loops):
    """Runs the storm; its ops/s."""
    return perf_bench("sched", "pipe", "-l", str(loops))


def syscalls(loops):
    """Runs a loop of system calls; its ops/s."""
    return perf_bench("syscall", "basic", "-l", str(loops))


def bpf_costs():
    """{program name: (runs, ns)} of fgd's loaded BPF programs, from bpftool."""
    r = subprocess.run(["bpftool", "prog", "show", "-j"], capture_output=True, text=True)
    progs = json.loads(r.stdout or "[]") if r.returncode == 0 else []
    return {p["name"]: (p.get("run_cnt", 0), p.get("run_time_ns", 0)) for p in progs
            if p.get("name", "").startswith("fg_offcpu")}


def with_fgd(build, loops, mode):
    """ops/s under an off-CPU recording of the whole machine with mode's user stacks, fgd's
    CPU per block, losses."""
    with fgbench.Fgd(build, ["--no-always-on"]) as fgd, tempfile.TemporaryDirectory() as tmp:
        meta = os.path.join(tmp, "meta.json")
        rec = subprocess.Popen([build.fgctl, "--socket", fgd.socket, "record", "--off-cpu", "-a",
                                "--call-graph", mode, "-o", os.path.join(tmp, "out.folded"), "--metadata", meta,
                                "-q"], stderr=subprocess.PIPE)
        # The recording runs once fgd says so: its status counts it.
        fgbench.wait_recording(fgd)
        before = fgbench.cpu_seconds(fgd.pid)
        ops = storm(loops)
        cpu = fgbench.cpu_seconds(fgd.pid) - before
        costs = bpf_costs()
        rec.send_signal(2)
        _, err = rec.communicate(timeout=120)
        if rec.returncode != 0:
            sys.exit(f"bench: fgctl record --off-cpu: {err.decode(errors='replace')}")
        with open(meta) as f:
            m = json.load(f)
    return ops, cpu, m["off_cpu"], costs


def always_on(build, args, off_cpu):
    """fgd always on, with off_cpu (None: OffCpu=no; else its call graph): its CPU per second at
    rest, the storm's and the system-call loop's ops/s under it, its CPU during the storm, and
    status's off_cpu."""
    with tempfile.TemporaryDirectory() as tmp:
        conf = os.path.join(tmp, "fgd.conf")
        with open(conf, "w") as f:
            f.write("[fgd]\n" + (f"OffCpu=yes\nCallGraph={off_cpu}\n" if off_cpu else ""))
        with fgbench.Fgd(build, ["--config", conf]) as fgd:
            before = fgbench.cpu_seconds(fgd.pid)
            subprocess.run(["sleep", str(args.rest)])
            rest = (fgbench.cpu_seconds(fgd.pid) - before) / args.rest
            before = fgbench.cpu_seconds(fgd.pid)
            ops = storm(args.loops)
            cpu = fgbench.cpu_seconds(fgd.pid) - before
            sys_ops = syscalls(args.syscalls)
            r = subprocess.run([build.fgctl, "--socket", fgd.socket, "status", "--json"],
                               capture_output=True, text=True, check=True)
            off = json.loads(r.stdout).get("off_cpu", {})
    return rest, ops, cpu, sys_ops, off


def with_perf(loops):
    with tempfile.TemporaryDirectory() as tmp:
        perf = subprocess.Popen(["perf", "record", "-e", "sched:sched_switch", "-a", "-g", "-o",
                                 os.path.join(tmp, "perf.data"), "-q"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        # perf opens its events before it reads anything: give it a storm-free moment.
        subprocess.run(["sleep", "1"])
        before = fgbench.cpu_seconds(perf.pid)
        ops = storm(loops)
        cpu = fgbench.cpu_seconds(perf.pid) - before
        perf.send_signal(2)
        _, err = perf.communicate(timeout=300)
        lost = re.findall(rb"(\d+) lost", err or b"")
    return ops, cpu, sum(int(x) for x in lost)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--loops", type=int, default=400000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--syscalls", type=int, default=2000000)
    ap.add_argument("--rest", type=int, default=10)
    ap.add_argument("--only-always-on", action="store_true")
    ap.add_argument("--no-always-on", action="store_true", help="measure recordings only")
    ap.add_argument("--pin", type=int, metavar="CPU", help="run the storm on this CPU alone")
    args = ap.parse_args()
    if args.pin is not None:
        PIN.extend(["taskset", "-c", str(args.pin)])
    fgbench.need_root()
    with open("/proc/sys/kernel/bpf_stats_enabled") as f:
        stats_were = f.read().strip()
    with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
        f.write("1")
    try:
        run_rounds(args)
    finally:
        with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
            f.write(stats_were)


def run_always_on(args, build):
    modes = {"OffCpu=no": None, "OffCpu=yes dwarf": "dwarf", "OffCpu=yes fp": "fp"}
    runs = {m: [] for m in modes}
    base, base_sys = [], []
    for _ in range(args.rounds):
        base.append(storm(args.loops))
        base_sys.append(syscalls(args.syscalls))
        for name, mode in modes.items():
            runs[name].append(always_on(build, args, mode))
    b, bs = statistics.median(base), statistics.median(base_sys)
    print(f"always-on: storm {' '.join(PIN + ['perf bench sched pipe'])} -l {args.loops}, system calls perf bench "
          f"syscall basic -l {args.syscalls}, {args.rounds} rounds, medians")
    print(f"  no fgd:      storm {b:8.0f} ops/s, system calls {bs:8.0f} ops/s")
    for name, rs in runs.items():
        ops = statistics.median(x[1] for x in rs)
        sys_ops = statistics.median(x[3] for x in rs)
        rest = statistics.median(x[0] for x in rs)
        cpu = statistics.median(x[2] for x in rs)
        print(f"  {name:16} storm {ops:8.0f} ops/s ({100 * (1 - ops / b):5.1f}% slower), system "
              f"calls {sys_ops:8.0f} ops/s ({100 * (1 - sys_ops / bs):5.1f}% slower); fgd CPU "
              f"at rest {1000 * rest:.1f} ms/s, during the storm {cpu:.2f} s")
        for r in rs:
            off = r[4]
            if off.get("always_on"):
                print(f"    run: {off['blocks']} blocks since start, {off['lost']} lost, "
                      f"{off['stacks_not_taken']} stacks not taken, {off['stack_renewals']} "
                      f"renewals, {off['user_dump_failed']} without user stack; window "
                      f"{off['window']['bytes'] / 2**20:.1f} MiB")


def run_rounds(args):
    build = fgbench.Build(args.build)
    machine = fgbench.Machine()
    if not args.no_always_on:
        run_always_on(args, build)
    if args.only_always_on:
        print(fgbench.conditions(machine))
        return
    base, perf = [], []
    fgd = {"fp": [], "dwarf": []}
    for _ in range(args.rounds):
        base.append(storm(args.loops))
        for mode, runs in fgd.items():
            runs.append(with_fgd(build, args.loops, mode))
        perf.append(with_perf(args.loops))
    b = statistics.median(base)
    p_ops = statistics.median(x[0] for x in perf)
    print(f"storm: {' '.join(PIN + ['perf bench sched pipe'])} -l {args.loops}, {args.rounds} "
          "rounds, medians")
    print(f"  no profiler:            {b:8.0f} ops/s  (runs: {base})")
    for mode, runs in fgd.items():
        f_ops = statistics.median(x[0] for x in runs)
        print(f"  fgd record --off-cpu -a --call-graph {mode}: {f_ops:8.0f} ops/s, "
              f"{100 * (1 - f_ops / b):5.1f}% slower  (runs: {[x[0] for x in runs]})")
    print(f"  perf record sched_switch -a -g: {p_ops:8.0f} ops/s, "
          f"{100 * (1 - p_ops / b):5.1f}% slower  (runs: {[x[0] for x in perf]})")
    for mode, runs in fgd.items():
        for ops, cpu, off, costs in runs:
            print(f"  fgd {mode} run: {off['blocks']} blocks kept, fgd CPU {cpu:.2f} s "
                  f"({1e6 * cpu / max(off['blocks'], 1):.2f} us a block); lost: "
                  f"{off['lost_threads']} (threads) + {off['lost_ring']} (ring); stacks not "
                  f"taken: {off['kernel_stack_failed']} kernel, {off['user_stack_failed']} user"
                  + (f"; no user stack: {off['user_dump_failed']}" if mode == "dwarf"
                     else ""))
            for name, (runs_, ns) in sorted(costs.items()):
                print(f"    BPF {name}: {runs_} runs, {ns / max(runs_, 1):.0f} ns a run")
    for ops, cpu, lost in perf:
        print(f"  perf run: perf's CPU {cpu:.2f} s, {lost} events lost")
    print(fgbench.conditions(machine))


if __name__ == "__main__":
    main()
