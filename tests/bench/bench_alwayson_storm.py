#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The always-on memory ceiling under storms, as a benchmark: fgd at a high
always-on rate with a small --memory-max and short slices, against

  stacks  one fgtest-stackstorm per CPU (64 functions calling each other in
          random sequences 4 to 12 deep: nearly every sample a new stack),
          for --minutes; then a 10 s whole-machine recording without the
          window's ceiling tells how many of its samples were distinct stacks;
  fork    fgtest-forkstorm: --processes processes, each with a name of its
          own, --alive of them alive at once (one running per CPU).

`fgctl status --json` is polled every --poll seconds: the window's bytes
against the ceiling, and fgd's RSS (VmRSS, VmHWM) with what else it holds
(process table, binaries, CFI, the location memo). Reports peaks, samples
folded by the ceiling, and whether fgd survived; prints OVER if the window
ever held more than the ceiling.

  sudo python3 tests/bench/bench_alwayson_storm.py stacks --minutes 3
  sudo python3 tests/bench/bench_alwayson_storm.py fork --processes 10000 --alive 10000
"""

import argparse
import os
import sys
import time

import fgbench


class Poll:
    """Peaks of what status and /proc show while a storm runs."""

    KEYS = (("always_on", "bytes"), ("always_on", "memo_bytes"), ("processes", "alive"),
            ("processes", "generations"), ("processes", "threads"), ("processes", "maps"),
            ("symbols", "binaries"), ("symbols", "binaries_dwarf"), ("symbols", "dwarf_bytes"),
            ("unwinding", "bytes"))

    def __init__(self, fgd):
        self.fgd = fgd
        self.peak = {k: 0 for k in self.KEYS}
        self.rss_peak = 0
        self.polls = self.over = 0
        self.rss0 = fgbench.status_kib(fgd.pid, "VmRSS")
        self.st = None

    def __call__(self):
        if not self.fgd.alive():
            sys.exit(f"bench: fgd died (exit {self.fgd.proc.returncode}):\n{self.fgd.logs()}")
        st = self.fgd.status()
        ao = st["always_on"]
        for k in self.KEYS:
            self.peak[k] = max(self.peak[k], st[k[0]][k[1]])
        self.rss_peak = max(self.rss_peak, fgbench.status_kib(self.fgd.pid, "VmRSS"))
        self.polls += 1
        if ao["bytes"] > ao["memory_max"]:
            self.over += 1
            print(f"OVER: the window holds {ao['bytes']} bytes, over {ao['memory_max']}", flush=True)
        self.st = st

    def report(self, seconds):
        st, ao = self.st, self.st["always_on"]
        hwm = fgbench.status_kib(self.fgd.pid, "VmHWM")
        p = {f"{a}.{b}": v for (a, b), v in self.peak.items()}
        print(f"{self.polls} polls in {seconds:.0f} s; fgd alive: {self.fgd.alive()}")
        print(f"window: peak {p['always_on.bytes']} bytes of {ao['memory_max']} "
              f"({100 * p['always_on.bytes'] / ao['memory_max']:.1f}%), slice budget "
              f"{ao['slice_budget']}; polls over the ceiling: {self.over}")
        print(f"samples: {ao['total_samples']} taken into the window, {ao['total_folded_samples']} "
              f"folded into [other] ({ao['total_folded_stacks']} stacks folded), "
              f"{ao['total_unattributed_samples']} into [other processes]; {ao['compactions']} "
              f"compactions; lost {ao['lost']}, throttled {ao['throttled']}; "
              f"{ao['expired_slices']} slices expired; memo resets {ao['memo_resets']}")
        mem = st["memory"]
        print(f"fgd RSS: {self.rss0 // 1024} MiB at start, peak {self.rss_peak // 1024} MiB polled, "
              f"VmHWM {hwm / 1024:.1f} MiB against the {mem['budget'] >> 20} MiB budget "
              f"({'within' if hwm * 1024 <= mem['budget'] else 'OVER'}; status's peak "
              f"{mem['rss_peak'] / (1 << 20):.1f}); now "
              f"{fgbench.status_kib(self.fgd.pid, 'VmRSS') // 1024} MiB, of which charged to no "
              f"part {max(mem['rss'] - mem['charged'] - mem['base'], 0) / (1 << 20):.1f} MiB")
        print(f"peaks: location memo {p['always_on.memo_bytes'] >> 20} MiB, processes alive "
              f"{p['processes.alive']}, generations {p['processes.generations']}, threads "
              f"{p['processes.threads']}, maps {p['processes.maps']}; binaries "
              f"{p['symbols.binaries']} ({p['symbols.binaries_dwarf']} with DWARF read, "
              f"{p['symbols.dwarf_bytes'] >> 20} MiB held), CFI {p['unwinding.bytes'] >> 20} MiB")
        print("at the end: " + fgbench.memory(self.fgd))
        pr = st["processes"]
        print(f"dropped: processes {pr['dropped_processes']}, threads {pr['dropped_threads']}, "
              f"maps {pr['dropped_maps']}; binaries {st['symbols']['binaries_dropped']}; history "
              f"{ao.get('history', {}).get('written', 0)} slices written, "
              f"{ao.get('history', {}).get('write_errors', 0)} write errors", flush=True)


def distinct_stacks(fgd, comm):
    """A 10 s whole-machine recording (its own tables, no window ceiling): samples and distinct
    stacks of processes whose name starts with comm."""
    out = os.path.join(fgd.dir, "calibration.folded")
    fgd.fgctl("record", "-a", "-t", "10", "-F", fgd.status()["always_on"]["frequency"], "-q",
              "-f", "folded", "-o", out)
    samples = stacks = 0
    with open(out) as f:
        for line in f:
            if line.startswith(comm):
                stacks += 1
                samples += int(line.rsplit(" ", 1)[1])
    return samples, stacks


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("storm", choices=("stacks", "fork"))
    ap.add_argument("--build", default="build")
    ap.add_argument("--frequency", type=int, default=999)
    ap.add_argument("--memory-max", default="8M")
    ap.add_argument("--slice-seconds", type=int, default=2)
    ap.add_argument("--window-seconds", type=int, default=60)
    ap.add_argument("--call-graph", choices=("dwarf", "fp"), default="dwarf")
    ap.add_argument("--poll", type=float, default=0.25)
    ap.add_argument("--minutes", type=float, default=3, help="stacks: how long")
    ap.add_argument("--processes", type=int, default=10000, help="fork: how many")
    ap.add_argument("--alive", type=int, default=8, help="fork: how many alive at once")
    ap.add_argument("--busy-ms", type=float, default=5, help="fork: CPU each burns per round")
    ap.add_argument("--rounds", type=int, default=2, help="fork: rounds each runs")
    args = ap.parse_args()
    fgbench.need_root()
    build = fgbench.Build(args.build)

    fgd_args = ["--always-on-frequency", args.frequency, "--memory-max", args.memory_max,
                "--slice-seconds", args.slice_seconds, "--window-seconds", args.window_seconds,
                "--call-graph", args.call_graph]
    fgd_args = [str(a) for a in fgd_args]
    m = fgbench.Machine()
    with fgbench.Fgd(build, fgd_args) as fgd:
        print(f"fgd {' '.join(fgd_args)}", flush=True)
        poll = Poll(fgd)
        t0 = time.monotonic()
        if args.storm == "stacks":
            cmd = [build.program("fgtest-stackstorm")]
            with fgbench.workloads([cmd + ["0", str(i + 1)] for i in range(os.cpu_count())]):
                while time.monotonic() - t0 < 60 * args.minutes:
                    poll()
                    time.sleep(args.poll)
                elapsed = time.monotonic() - t0
                samples, stacks = distinct_stacks(fgd, "fgtest-stacks")
                poll()
            print(f"stack storm, {os.cpu_count()} x fgtest-stackstorm, {args.call_graph}: in a 10 s "
                  f"recording at {args.frequency} Hz its {samples} samples were {stacks} distinct "
                  f"stacks ({100 * stacks / max(samples, 1):.1f}%)")
        else:
            cmd = [build.program("fgtest-forkstorm"), str(args.processes), str(args.alive),
                   str(args.busy_ms), str(args.rounds)]
            with fgbench.workloads([cmd]) as (storm,):
                while storm.poll() is None:
                    poll()
                    time.sleep(args.poll)
                print("fork storm: " + storm.stdout.read().strip() + f", exit {storm.returncode}")
            elapsed = time.monotonic() - t0
            poll()
        poll.report(elapsed)
        print(fgbench.conditions(m), flush=True)
    return 1 if poll.over else 0


if __name__ == "__main__":
    sys.exit(main())
