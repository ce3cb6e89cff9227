#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the kernel's own sampling costs the sampled tasks, without a PMU.

The kernel takes a sample (the timer interrupt, the kernel and user
callchains, in dwarf mode the copy of the user stack into the ring) in an
interrupt charged to the task it interrupts, and the copy evicts that task's
cache. fgd's own CPU time leaves all of it out. So: one fgtest-spin pinned to
each CPU does a fixed work loop and reports its rounds per second of its own
CPU time (CLOCK_THREAD_CPUTIME_ID: other tasks and hypervisor steal left
out), first with no fgd at all, then under fgd's always-on sampling at each
--rates in each --modes. Every round runs every configuration once, in an
order that alternates between rounds, and each configuration is compared
with the no-sampling run of its own round, which cancels slow drift of the
machine. Mode `perf` (perf record -e cpu-clock -a, no call graph) gives the
bare cost of the interrupt and sample record for reference, and
--stack-bytes 0 runs the loop near the top of the stack, where a dwarf-mode
sample copies little.

A slowdown s at F samples per second of the task's CPU costs s / F of CPU
per sample. Fitting s = c F over the rates gives the cost per sample c and
its standard error; the cost of the default (19 Hz on every CPU) is then
c x 19 x CPUs, as a share of one CPU.

  sudo python3 tests/bench/bench_kernel_cost.py --rounds 5
"""

import argparse
import math
import os
import signal
import statistics
import subprocess
import tempfile

import fgbench


def spin(build, seconds, warmup, stack_bytes):
    """Rounds per CPU-second of each CPU's spinner, and their CPU share of wall time."""
    cmd = [build.program("fgtest-spin"), str(seconds), str(warmup), str(stack_bytes)]
    ncpu = os.cpu_count()
    rates, shares = [], []
    with fgbench.workloads([cmd] * ncpu, cpus=list(range(ncpu))) as procs:
        for p in procs:
            rounds, cpu_ns, wall_ns = (int(x) for x in p.stdout.readline().split())
            p.wait()
            rates.append(rounds / (cpu_ns / 1e9))
            shares.append(cpu_ns / wall_ns)
    return statistics.mean(rates), statistics.mean(shares)


def perf_plain(build, hz, args):
    """The same under `perf record -e cpu-clock -a` without call graphs: the bare interrupt and
    sample record, for reference. perf starts within the spinners' warm-up."""
    with tempfile.TemporaryDirectory(prefix="fg-bench-perf-") as tmp:
        perf = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(hz), "-a",
                                 "-o", os.path.join(tmp, "perf.data"), "--", "sleep", "3600"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            rate, share = spin(build, args.seconds, args.warmup, args.stack_bytes)
        finally:
            perf.send_signal(signal.SIGINT)
            perf.wait()
    return rate, share, 0, 0, 0


def run(build, conf, args):
    """One run of a configuration: (rounds per CPU-second, CPU share, samples, lost, throttled)."""
    if conf is None:
        return spin(build, args.seconds, args.warmup, args.stack_bytes) + (0, 0, 0)
    mode, hz = conf
    if mode == "perf":
        return perf_plain(build, hz, args)
    with fgbench.Fgd(build, ["--always-on-frequency", hz, "--call-graph", mode]) as fgd:
        before = fgd.status()["always_on"]
        rate, share = spin(build, args.seconds, args.warmup, args.stack_bytes)
        after = fgd.status()["always_on"]
    return (rate, share) + tuple(after[k] - before[k] for k in ("total_samples", "lost", "throttled"))


def fit_through_origin(points):
    """Least squares s = c F: (c, standard error of c)."""
    sxx = sum(f * f for f, _ in points)
    c = sum(f * s for f, s in points) / sxx
    if len(points) < 2:
        return c, float("nan")
    resid = sum((s - c * f) ** 2 for f, s in points) / (len(points) - 1)
    return c, math.sqrt(resid / sxx)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--rates", default="19,99,999,2999", help="always-on rates, Hz")
    ap.add_argument("--modes", default="dwarf,fp",
                    help="fgd's call-graph modes; 'perf': perf record without call graphs")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=20, help="measured, per run")
    ap.add_argument("--warmup", type=float, default=3, help="before each measurement")
    ap.add_argument("--stack-bytes", type=int, default=40960,
                    help="stack above the spinning loop (40960: every dwarf sample copies 32 KiB)")
    args = ap.parse_args()
    fgbench.need_root()
    build = fgbench.Build(args.build)
    rates = [int(x) for x in args.rates.split(",")]
    confs = [(mode, hz) for mode in args.modes.split(",") for hz in rates]
    with open("/proc/sys/kernel/perf_event_max_sample_rate") as f:
        max_rate = f.read().strip()

    m = fgbench.Machine()
    slowdowns = {c: [] for c in confs}
    extra = {c: [] for c in confs}
    baseline = []
    for r in range(args.rounds):
        order = [None] + confs
        if r % 2:
            order.reverse()
        results = {c: run(build, c, args) for c in order}
        base = results[None][0]
        baseline.append(base)
        line = [f"round {r + 1}: none {base:.1f} rounds/CPU-s ({100 * results[None][1]:.0f}% of wall)"]
        for c in confs:
            rate, share, samples, lost, throttled = results[c]
            slowdowns[c].append(1 - rate / base)
            extra[c].append((samples, lost, throttled))
            line.append(f"{c[0]} {c[1]} Hz {100 * (1 - rate / base):+.2f}%"
                        + (f" ({lost} lost)" if lost else ""))
        print("; ".join(line), flush=True)

    print(f"\nno sampling: {statistics.mean(baseline):.1f} rounds per CPU-second "
          f"(sd {statistics.stdev(baseline) if len(baseline) > 1 else 0:.1f} between rounds)")
    for mode in args.modes.split(","):
        points = []
        for hz in rates:
            s = slowdowns[(mode, hz)]
            points += [(hz, x) for x in s]
            sd = statistics.stdev(s) if len(s) > 1 else float("nan")
            samples = sum(e[0] for e in extra[(mode, hz)])
            lost = sum(e[1] for e in extra[(mode, hz)])
            throttled = sum(e[2] for e in extra[(mode, hz)])
            print(f"{mode} {hz} Hz: slowdown {100 * statistics.mean(s):+.3f}% (sd {100 * sd:.3f}%, "
                  f"{len(s)} runs) = {1e6 * statistics.mean(s) / hz:.2f} us per sample; "
                  f"{samples} samples taken, {lost} lost, {throttled} throttled")
        c, se = fit_through_origin(points)
        ncpu = os.cpu_count()
        print(f"{mode}: fit over all runs: {1e6 * c:.2f} +- {1e6 * se:.2f} us of the sampled task's "
              f"CPU per sample; at 19 Hz on {ncpu} CPUs: {100 * c * 19 * ncpu:.4f}% "
              f"+- {100 * se * 19 * ncpu:.4f}% of one CPU", flush=True)
    with open("/proc/sys/kernel/perf_event_max_sample_rate") as f:
        now = f.read().strip()
    if now != max_rate:
        print(f"note: the kernel lowered perf_event_max_sample_rate from {max_rate} to {now} "
              "(samples took too long); rerun at lower rates")
    print(fgbench.conditions(m))


if __name__ == "__main__":
    main()
