#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Rendering cost: folded stacks in, flame-graph SVG out.

  1. generates a big folded file (200,000 distinct stacks, about 100 MB) and a
     typical one (5,000 stacks) with gen_folded.py, cached in --cache;
  2. runs build/tests/bench/bench-render --runs times on each and reports the
     median and minimum of each phase (read+parse, sort, layout, emit) and of
     the whole process's wall time, and the process's peak RSS (from
     os.wait4's rusage) against the input size;
  3. measures the start-up cost of a trivial process for comparison:
     bench-render on an empty file, and /bin/true;
  4. with --fgctl PATH, also times `PATH render IN -o OUT` end to end;
     with --flamegraph-pl PATH, also times `perl PATH IN > OUT`.

Prints figures; it asserts nothing (machines are noisy). Needs a build.
usage: tests/bench/bench_render.py [--build build] [--runs 5] [--fgctl build/cli/fgctl]
                                   [--flamegraph-pl /tmp/flamegraph.pl]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PHASES = ["read+parse s", "sort s", "layout s", "emit s", "total s"]


def generate(cache, lines, size, seed):
    name = f"folded-{lines}-{size or 'auto'}-{seed}.folded"
    path = os.path.join(cache, name)
    if not os.path.exists(path):
        cmd = [sys.executable, os.path.join(HERE, "gen_folded.py"), "--lines", str(lines),
               "--seed", str(seed), "-o", path + ".tmp"]
        if size:
            cmd += ["--size", size]
        print(f"generating {path} ...", flush=True)
        subprocess.run(cmd, check=True)
        os.rename(path + ".tmp", path)
    return path


def run(cmd, stdout=subprocess.PIPE):
    """Runs cmd; returns (wall s, peak RSS KiB, stdout text or None)."""
    with tempfile.TemporaryFile() as errf:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=stdout, stderr=errf)
        out = p.stdout.read().decode() if stdout == subprocess.PIPE else None
        # wait4 rather than Popen.wait: it also gives the child's rusage.
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            errf.seek(0)
            sys.exit(f"bench: {' '.join(cmd)} failed ({p.returncode}): "
                     f"{errf.read().decode().strip()}")
    return wall, ru.ru_maxrss, out


def figures(text):
    d = {}
    for line in text.splitlines():
        k, _, v = line.partition(": ")
        d[k] = v
    return d


def fmt(xs, unit="s", scale=1.0):
    return f"median {statistics.median(xs) * scale:.3f} {unit}, min {min(xs) * scale:.3f} {unit}"


def bench_ours(exe, path, out, runs):
    walls, rsss, phases, last = [], [], {k: [] for k in PHASES}, None
    for _ in range(runs):
        wall, rss, text = run([exe, "-o", out, path])
        walls.append(wall)
        rsss.append(rss)
        last = figures(text)
        for k in PHASES:
            phases[k].append(float(last[k]))
    size = os.path.getsize(path)
    print(f"{path}: {size} bytes, {last['lines']}; {last['model']}")
    for k in PHASES:
        print(f"  {k[:-2]:<11} {fmt(phases[k], 'ms', 1e3)}")
    print(f"  process wall {fmt(walls, 'ms', 1e3)}")
    print(f"  peak RSS (wait4) {max(rsss)} KiB = {max(rsss) * 1024 / size:.2f} x input; "
          f"VmHWM {last['VmHWM KiB']} KiB = {int(last['VmHWM KiB']) * 1024 / size:.2f} x input")
    print(f"  SVG {last['output bytes']} bytes")
    return statistics.median(walls)


def bench_cmd(label, cmd, runs, stdout_path=None):
    walls, rsss = [], []
    for _ in range(runs):
        if stdout_path:
            with open(stdout_path, "wb") as f:
                wall, rss, _ = run(cmd, stdout=f)
        else:
            wall, rss, _ = run(cmd)
        walls.append(wall)
        rsss.append(rss)
    print(f"  {label}: wall {fmt(walls, 'ms', 1e3)}, peak RSS {max(rsss)} KiB")
    return statistics.median(walls)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "fgd-bench-render"),
                    help="where generated inputs and outputs are kept")
    ap.add_argument("--lines", type=int, default=200000)
    ap.add_argument("--size", default="100000000")
    ap.add_argument("--small-lines", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--fgctl", help="also time `FGCTL render IN -o OUT`")
    ap.add_argument("--flamegraph-pl", help="also time `perl FLAMEGRAPH_PL IN > OUT`")
    ap.add_argument("--pl-runs", type=int, default=1, help="runs of flamegraph.pl (slow)")
    args = ap.parse_args()

    exe = os.path.join(args.build, "tests/bench/bench-render")
    if not os.access(exe, os.X_OK):
        sys.exit(f"bench: {exe} not found; build first (ninja -C {args.build})")
    os.makedirs(args.cache, exist_ok=True)
    big = generate(args.cache, args.lines, args.size, args.seed)
    small = generate(args.cache, args.small_lines, None, args.seed)
    empty = os.path.join(args.cache, "empty.folded")
    open(empty, "w").close()
    svg = os.path.join(args.cache, "out.svg")

    print(f"machine: {os.cpu_count()} CPUs; {args.runs} runs each; SVG written to {svg}")
    print("bench-render:")
    big_wall = bench_ours(exe, big, svg, args.runs)
    small_wall = bench_ours(exe, small, svg, args.runs)
    print("start-up cost:")
    empty_wall = bench_cmd("bench-render on an empty file", [exe, "-o", svg, empty], args.runs)
    true_wall = bench_cmd("/bin/true", ["/bin/true"], args.runs)
    print("  (wait4's ru_maxrss never reads below this script's own RSS, which the child had\n"
          "  before exec: /bin/true shows that floor. VmHWM is the child's own peak.)")
    print(f"  {args.small_lines}-line render = {small_wall / empty_wall:.1f} x bench-render's "
          f"start-up, {small_wall / true_wall:.1f} x /bin/true")

    if args.fgctl:
        print("fgctl render:")
        for path in (big, small):
            bench_cmd(os.path.basename(path), [args.fgctl, "render", path, "-o", svg], args.runs)
    if args.flamegraph_pl:
        print("flamegraph.pl (default options):")
        pl = bench_cmd(os.path.basename(big), ["perl", args.flamegraph_pl, big], args.pl_runs,
                       stdout_path=os.path.join(args.cache, "out-pl.svg"))
        print(f"  bench-render is {pl / big_wall:.1f} x faster on {os.path.basename(big)}")
        bench_cmd(os.path.basename(small), ["perl", args.flamegraph_pl, small], args.pl_runs,
                  stdout_path=os.path.join(args.cache, "out-pl.svg"))


if __name__ == "__main__":
    main()
