#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The heat map page with 15 minutes of samples at 999 Hz on every CPU (issue 14).

Makes a timed profile of --seconds seconds of --cpus CPUs sampled at --hz
(by default 900 s x 2 CPUs x 999 Hz: 1,798,200 samples), its stacks the
rendering benchmark's generator's (tests/bench/gen_folded.py: --stacks
distinct ones, picked with a Zipf skew), then:
  - writes the page with `fgctl heatmap --from timed` and reports its size
    and the time fgctl took;
  - loads it in headless chromium and reports the page's own figures
    (window.fgHeatmap): the time from its script's start to the heat map
    and the whole period's flame graph drawn (loadMs), then the time to
    draw the flame graph of a range of 1 s, of 1 minute and of the whole
    period, to isolate one process and to come back to all, each as the
    page measures it, and the wall time of the navigation.
Asserts nothing.

  python3 tests/bench/bench_heatmap.py --build build
"""

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import gen_folded  # noqa: E402
import webdriver  # noqa: E402


def write_profile(path, args):
    """The timed text form: stacks from gen_folded, samples every 1/hz s on each CPU."""
    g = argparse.Namespace(lines=args.stacks, size=args.stacks * 300, min_depth=5, max_depth=40,
                           long_share=0.45, seed=1)
    text, stacks = gen_folded.generate(g)
    rng = random.Random(2)
    zipf = gen_folded.Zipf(len(stacks), 1.1)
    start = 1764205200000
    n = 0
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"fgd-timed 1 clock=unix unit=samples start={start} since={start} "
                f"until={start + args.seconds * 1000}\n")
        for st, _ in stacks:
            f.write("s " + ";".join(text[x] for x in st) + "\n")
        prev, buf = start, []
        period_us = 1e6 / args.hz
        t_us = 0.0
        while t_us < args.seconds * 1e6:
            ms = start + int(t_us / 1000)
            for _ in range(args.cpus):
                buf.append(f"{ms - prev} {zipf.pick(rng)}\n")
                prev = ms
                n += 1
            t_us += period_us
            if len(buf) > 65536:
                f.write("".join(buf))
                buf.clear()
        f.write("".join(buf))
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--seconds", type=int, default=900)
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--hz", type=int, default=999)
    ap.add_argument("--stacks", type=int, default=20000)
    args = ap.parse_args()
    fgctl = os.path.join(args.build, "cli", "fgctl")
    with tempfile.TemporaryDirectory() as tmp:
        timed = os.path.join(tmp, "profile.timed")
        page = os.path.join(tmp, "heatmap.html")
        n = write_profile(timed, args)
        t = time.monotonic()
        subprocess.run([fgctl, "heatmap", "--from", "timed", timed, "-o", page, "-q"], check=True)
        write_s = time.monotonic() - t
        print(f"profile: {n} samples ({args.seconds} s x {args.cpus} CPUs x {args.hz} Hz), "
              f"{args.stacks} stacks; timed text {os.path.getsize(timed) / 2**20:.1f} MiB")
        print(f"page: {os.path.getsize(page) / 2**20:.1f} MiB, written by fgctl in {write_s:.2f} s")
        with webdriver.chromium_session() as s:
            s.set_window_size(1400, 1000)
            t = time.monotonic()
            s.navigate("file://" + page)
            nav_s = time.monotonic() - t
            load = s.execute("return window.fgHeatmap.loadMs")
            start = 1764205200000
            ranges = {"1 s": (start + 60000, start + 61000),
                      "1 minute": (start + 60000, start + 120000),
                      "whole period": (start, start + args.seconds * 1000)}
            print(f"chromium: navigation {nav_s:.2f} s; the page's setup (parse, cells, heat map, "
                  f"whole flame graph) {load:.0f} ms")
            for name, (lo, hi) in ranges.items():
                ms = s.execute("return window.fgHeatmap.select(arguments[0], arguments[1])", lo, hi)
                frames = len(s.execute("return window.fgHeatmap.frames()"))
                print(f"  range of {name}: flame graph in {ms:.0f} ms ({frames} frames drawn)")
            procs = s.execute("return window.fgHeatmap.processes()")
            ms = s.execute("return window.fgHeatmap.isolate(arguments[0])", procs[0]["id"])
            print(f"  isolate {procs[0]['name']}: {ms:.0f} ms")
            ms = s.execute("return window.fgHeatmap.isolate(-1)")
            print(f"  back to all processes: {ms:.0f} ms")


if __name__ == "__main__":
    main()
