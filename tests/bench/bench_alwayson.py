#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Always-on cost and snapshot latency, the issue's way: one fgtest-burn per
CPU, fgd with its default configuration (or the options after --) and no
client, then

  1. fgd's own CPU (utime + stime from /proc/PID/stat) over --minutes from
     READY=1, minute by minute, and its start-up cost before READY=1;
  2. with --full-window, sampling goes on until the window holds its whole
     span (15 minutes by default), then `fgctl snapshot --last 15m` is timed
     warm (one untimed query first), to SVG and to folded text; with
     --then-minutes, sampling goes on that much longer;
  3. every minute, fgd's RSS and what it holds (the window, the location
     memo, process table, binaries, CFI) from `fgctl status`, and the
     machine's conditions (busy share, new processes/s, load), since
     other work on the machine is what fgd's tracking and symbolizing cost
     grows with.

With --off-minutes, fgd --no-always-on (tracking only) is measured first
under the same load, for reference.

  sudo python3 tests/bench/bench_alwayson.py --build build --minutes 10 --full-window
"""

import argparse
import os
import statistics
import time

import fgbench


def measure_cpu(fgd, minutes, label):
    """Prints fgd's CPU share over `minutes` (and each minute's, with its memory); returns the
    total share."""
    m = fgbench.Machine()
    c0, t0 = fgbench.cpu_seconds(fgd.pid), time.monotonic()
    per_minute = []
    for i in range(int(minutes)):
        cm, tm = fgbench.cpu_seconds(fgd.pid), time.monotonic()
        time.sleep(max(0.0, t0 + 60 * (i + 1) - time.monotonic()))
        if not fgd.alive():
            raise SystemExit(f"bench: fgd died:\n{fgd.logs()}")
        per_minute.append(100 * (fgbench.cpu_seconds(fgd.pid) - cm) / (time.monotonic() - tm))
        print(f"  minute {i + 1}: {per_minute[-1]:.3f}%; {fgbench.memory(fgd)}", flush=True)
    c1, t1 = fgbench.cpu_seconds(fgd.pid), time.monotonic()
    pct = 100 * (c1 - c0) / (t1 - t0)
    print(f"{label}: fgd used {c1 - c0:.2f} s of CPU (user+sys) in {t1 - t0:.0f} s = "
          f"{pct:.3f}% of one CPU", flush=True)
    print("  each minute (% of one CPU): " + " ".join(f"{x:.3f}" for x in per_minute))
    print("  " + fgbench.conditions(m), flush=True)
    return pct


def time_snapshots(fgd, runs, fmt):
    out = os.path.join(fgd.dir, "snapshot." + fmt)
    fgd.fgctl("snapshot", "--last", "15m", "-q", "-f", fmt, "-o", out)  # warms it up
    lat = []
    for _ in range(runs):
        t = time.perf_counter()
        fgd.fgctl("snapshot", "--last", "15m", "-q", "-f", fmt, "-o", out)
        lat.append(1000 * (time.perf_counter() - t))
    size = os.path.getsize(out)
    print(f"snapshot --last 15m to {fmt} ({size} bytes), {runs} warm runs: median "
          f"{statistics.median(lat):.1f} ms, p90 {fgbench.percentile(lat, 0.9):.1f} ms, "
          f"max {max(lat):.1f} ms", flush=True)


def window_figures(fgd):
    ao = fgd.status()["always_on"]
    return (f"window: {ao['slices']} slices, {ao['bytes']} bytes of {ao['memory_max']}, "
            f"{ao['samples']} samples ({ao['total_samples']} ever), "
            f"{ao['total_folded_samples']} folded, {ao['lost']} lost; {fgbench.memory(fgd)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--full-window", action="store_true",
                    help="go on until the window is full, then time snapshots")
    ap.add_argument("--snapshots", type=int, default=10, help="timed snapshot runs per format")
    ap.add_argument("--then-minutes", type=float, default=0,
                    help="with --full-window: go on this long after the snapshots (memory over time)")
    ap.add_argument("--off-minutes", type=float, default=0,
                    help="first measure fgd --no-always-on for this long")
    ap.add_argument("fgd_args", nargs="*", help="options for fgd (after --)")
    args = ap.parse_args()
    fgbench.need_root()
    build = fgbench.Build(args.build)

    with fgbench.burners(build):
        if args.off_minutes:
            with fgbench.Fgd(build, ["--no-always-on"] + args.fgd_args) as fgd:
                measure_cpu(fgd, args.off_minutes, "always-on off (tracking only)")
        t_start = time.monotonic()
        with fgbench.Fgd(build, args.fgd_args) as fgd:
            startup = fgbench.cpu_seconds(fgd.pid)
            print(f"fgd {' '.join(args.fgd_args) or '(default configuration)'}: ready in "
                  f"{time.monotonic() - t_start:.1f} s, {startup:.2f} s of CPU to start", flush=True)
            ao = fgd.status()["always_on"]
            print(f"always-on: {ao['frequency']} Hz, {ao['call_graph']}, slices of "
                  f"{ao['slice_seconds']} s, window {ao['window_seconds']} s, memory max "
                  f"{ao['memory_max']}", flush=True)
            measure_cpu(fgd, args.minutes, f"always-on, {args.minutes:g} min from READY")
            print("  " + window_figures(fgd), flush=True)
            if not args.full_window:
                return
            c0 = fgbench.cpu_seconds(fgd.pid) - startup
            full = ao["window_seconds"] // ao["slice_seconds"]
            last = time.monotonic()
            while fgd.status()["always_on"]["slices"] < full + 1:
                if not fgd.alive():
                    raise SystemExit(f"bench: fgd died:\n{fgd.logs()}")
                if time.monotonic() - last >= 60:
                    last = time.monotonic()
                    print(f"  at {(last - t_start) / 60:.1f} min: {fgbench.memory(fgd)}", flush=True)
                time.sleep(5)
            elapsed = time.monotonic() - t_start
            total = fgbench.cpu_seconds(fgd.pid) - startup
            print(f"window full after {elapsed / 60:.1f} min; fgd's CPU since READY: {total:.2f} s "
                  f"= {100 * total / elapsed:.3f}% of one CPU (the last {(total - c0):.2f} s "
                  f"after the first {args.minutes:g} min)")
            print("  " + window_figures(fgd), flush=True)
            r = fgd.fgctl("snapshot", "--last", "15m", "-f", "folded", "-o",
                          os.path.join(fgd.dir, "first.folded"))
            print("first snapshot: " + r.stderr.decode(errors="replace").strip().replace("\n", "; "))
            with open(os.path.join(fgd.dir, "first.folded")) as f:
                print(f"  {sum(1 for _ in f)} distinct stacks")
            for fmt in ("svg", "folded"):
                time_snapshots(fgd, args.snapshots, fmt)
            print("  " + window_figures(fgd), flush=True)
            if args.then_minutes:
                measure_cpu(fgd, args.then_minutes, f"then {args.then_minutes:g} min more")


if __name__ == "__main__":
    main()
