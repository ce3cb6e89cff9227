#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Two builds of fgd against each other, recording the same load at the same time.

A change to the per-sample path is worth a few percent, and one fgd's cost moves by more
than that between two runs on a busy machine (what else runs, where the load's compile is,
the caches). Run side by side, both daemons meet the same moods, so their difference is
the change's. For each round:
  1. a private fgd of each build (its own socket and state directory, always-on sampling
     off) records the whole machine for --warm seconds, both at once: new binaries read;
  2. both record for --seconds, started together: `fgctl record -a -F 999 -t SECONDS
     --call-graph MODE`. A build's cost is its CPU time over the recording, from the
     schedstat of each of its threads (ns, not 10 ms ticks), divided by the samples it read.
Rounds alternate which build starts first. The load is one of bench_vs_perf.py's.

Each daemon also pays for sampling the other (whole-machine recordings see both), which
falls on both alike. Prints a row a round and the median of B's cost over A's; asserts
nothing. Needs root and two builds (`meson setup B2 && ninja -C B2` in another checkout).

usage: tests/bench/bench_ab.py --a build --b ../other/build [--load cxx] [--mode dwarf]
           [--seconds 15] [--warm 5] [--rounds 3]
"""

import argparse
import concurrent.futures
import contextlib
import os
import shlex
import signal
import statistics
import sys
import tempfile

import bench_vs_perf
import fgbench


def record(fgd, seconds, mode, out):
    """One whole-machine recording: (fgd's CPU ns over it, samples read)."""
    (_, ns), meta = bench_vs_perf.fgd_recording(fgd, seconds, mode, out)
    return ns, meta["samples_seen"]


def side_by_side(fgds, seconds, mode, tmp):
    """Both recordings at once: [(ns, samples)] in fgds' order."""
    with concurrent.futures.ThreadPoolExecutor(len(fgds)) as pool:
        jobs = [pool.submit(record, fgd, seconds, mode, os.path.join(tmp, f"{i}.folded"))
                for i, fgd in enumerate(fgds)]
        return [j.result() for j in jobs]


def main():
    ap = argparse.ArgumentParser(description="two fgd builds on the same load at once")
    ap.add_argument("--a", required=True, help="meson build directory A (the reference)")
    ap.add_argument("--b", required=True, help="meson build directory B (the change)")
    ap.add_argument("--load", default="cxx", choices=bench_vs_perf.LOADS)
    ap.add_argument("--mode", default="dwarf", choices=bench_vs_perf.MODES)
    ap.add_argument("--seconds", type=int, default=15)
    ap.add_argument("--warm", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if args.rounds < 1 or args.seconds < 1:
        sys.exit("bench: --rounds and --seconds must be at least 1")
    fgbench.need_root()
    builds = {"A": fgbench.Build(args.a), "B": fgbench.Build(args.b)}
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    print("$ " + shlex.join([sys.argv[0]] + sys.argv[1:]))
    print(f"\nA: {builds['A'].fgd}\nB: {builds['B'].fgd}\n{args.load}, {args.mode}, "
          f"{bench_vs_perf.FREQUENCY} Hz on all CPUs, {args.seconds} s after a {args.warm} s "
          f"warm-up, {args.rounds} rounds; {os.cpu_count()} CPUs\n", flush=True)
    rows, ratios = [], []
    with tempfile.TemporaryDirectory(prefix="fgd-bench-ab-") as tmp:
        cmds, what, group = bench_vs_perf.load(args.load, tmp)
        pids = []
        try:
            with fgbench.workloads(cmds, group=group, cwd=tmp) as procs:
                pids = [p.pid for p in procs]
                for i in range(args.rounds):
                    order = ["A", "B"] if i % 2 == 0 else ["B", "A"]
                    bench_vs_perf.progress(f"round {i + 1}/{args.rounds}: {' then '.join(order)}")
                    with contextlib.ExitStack() as stack:
                        fgds = [stack.enter_context(fgbench.Fgd(builds[x], ["--no-always-on"]))
                                for x in order]
                        side_by_side(fgds, args.warm, args.mode, tmp)
                        got = dict(zip(order, side_by_side(fgds, args.seconds, args.mode, tmp)))
                    us = {x: bench_vs_perf.us_per_sample(ns / 1e9, n) for x, (ns, n) in got.items()}
                    ratios.append(us["B"] / us["A"])
                    rows.append((i + 1, " then ".join(order), f"{us['A']:.2f}", f"{us['B']:.2f}",
                                 f"{got['A'][1]} / {got['B'][1]}", f"{ratios[-1]:.3f}"))
        finally:
            if args.load == "node":  # --perf-basic-prof's maps, ours to remove
                for pid in pids:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(f"/tmp/perf-{pid}.map")
    bench_vs_perf.table(["round", "started", "A µs/sample", "B µs/sample", "samples (A / B)",
                         "B/A"], rows)
    print(f"\n- {args.load}: {what}")
    print(f"- B/A: median {statistics.median(ratios):.3f}, from {min(ratios):.3f} to "
          f"{max(ratios):.3f} over {len(ratios)} rounds")


if __name__ == "__main__":
    main()
