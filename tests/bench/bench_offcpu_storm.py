#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""An off-CPU storm against everyone else (issue 28, finding 2), as a benchmark.

A Python program with --threads threads, each sleeping 1 ms in a loop (and
so blocking on the GIL as often: tests/programs/fgtest-gilstorm.py), is
recorded with `fgctl record --off-cpu -p PID -t --seconds` by an
unprivileged user in fgd's socket group (or, with --as-root, the whole
machine with -a by root; --no-record: nobody), in fgd's default call graph
(DWARF) with always-on sampling running. Meanwhile root asks for status
every --poll seconds, with `fgctl status --json` and on the socket from
this process. Each of --runs runs starts a fresh fgd; printed per run and
as medians and worst over the runs:
  - status's time to answer as root sees it, both ways (fgctl's whole run,
    its start included, and fgd's answer on the socket): median, 90th
    percentile and worst, and how many answers took over 100 ms;
  - the daemon loop's longest turn (status loop.longest_ms, before the
    storm and at its end) and its turns over 50 ms during the storm;
  - always-on's lost samples during the storm;
  - the recording: blocks kept, and what was dropped and why (its
    metadata's off_cpu: the user rate limit, blocks not handled in time,
    the ring), and fgd's CPU time over the storm;
  - the loop thread's time on a CPU and waiting for one (schedstat).
--renice gives fgd's threads a nice value; --cgroup puts the storm in a CPU
cgroup of its own, as systemd puts a user's session in a slice: fgd then
competes with the storm as a whole rather than with each of its threads.
The machine's conditions are printed with the figures. Asserts nothing.

  sudo python3 tests/bench/bench_offcpu_storm.py --build build --runs 3
  sudo python3 tests/bench/bench_offcpu_storm.py --as-root --runs 3
"""

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import threading
import time

import fgbench

# The integration tests' user and process helpers.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from fgdtest import Conn, as_user, test_user  # noqa: E402

USER = "fgd-bench-offcpu"
GROUP = "fgd-bench-offcpu-group"
STORM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "programs",
                     "fgtest-gilstorm.py")


def schedstat(pid):
    """The main (loop) thread's time on a CPU, time waiting for one (ns), and turns on one."""
    with open(f"/proc/{pid}/task/{pid}/schedstat") as f:
        return tuple(int(x) for x in f.read().split())


def ask_status(path):
    """One status request on a new connection, as fgctl sends it; whether a reply came."""
    with Conn(path, timeout=30) as c:
        c.send({"cmd": "status"})
        return (c.reply("status") or {}).get("type") == "status"


class Poller(threading.Thread):
    """Root's status every period: with fgctl (`fgctl status --json`, its start included), or
    (direct) from this process over the socket, fgd's own time to answer; each answer's time."""

    def __init__(self, fgd, period, direct=False):
        super().__init__(daemon=True)
        self.fgd, self.period, self.direct = fgd, period, direct
        self.times, self.failed, self.stop = [], 0, threading.Event()

    def run(self):
        while not self.stop.is_set():
            t0 = time.monotonic()
            if self.direct:
                ok = ask_status(self.fgd.socket)
            else:
                ok = subprocess.run([self.fgd.build.fgctl, "--socket", self.fgd.socket, "status",
                                     "--json"], capture_output=True).returncode == 0
            self.times.append(time.monotonic() - t0)
            self.failed += not ok
            self.stop.wait(max(0.0, self.period - (time.monotonic() - t0)))


def percentiles(times):
    ms = sorted(t * 1000 for t in times)
    return {"n": len(ms), "median": statistics.median(ms), "p90": ms[int(0.9 * (len(ms) - 1))],
            "worst": ms[-1], "over_100": sum(t > 100 for t in ms)}


def one_run(args, build, user):
    """One fresh fgd, one storm, one recording (or, with --no-record, the storm's length
    without one): the run's figures."""
    with fgbench.Fgd(build, ["--socket-group", GROUP, "--call-graph", args.call_graph]
                     + args.fgd_arg) as fgd:
        os.chmod(fgd.dir, 0o755)  # the user reaches the socket
        if args.renice is not None:
            for tid in os.listdir(f"/proc/{fgd.pid}/task"):
                os.setpriority(os.PRIO_PROCESS, int(tid), args.renice)
        storm_cmd = [sys.executable, STORM, str(args.threads)]

        def enter():
            """In the storm's process before it runs: its threads start in its cgroup."""
            with open(os.path.join(args.cgroup, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))

        if args.cgroup:
            os.makedirs(args.cgroup, exist_ok=True)
        storm = subprocess.Popen(storm_cmd if args.as_root else as_user(user, storm_cmd),
                                 stdout=subprocess.PIPE, text=True,
                                 preexec_fn=enter if args.cgroup else None)
        try:
            if storm.stdout.readline().strip() != "ready":
                sys.exit("bench: the storm did not start")
            before = fgd.status()
            cpu0 = fgbench.cpu_seconds(fgd.pid)
            sched0 = schedstat(fgd.pid)
            pollers = [Poller(fgd, args.poll), Poller(fgd, args.poll, direct=True)]
            for p in pollers:
                p.start()
            target = ["-a"] if args.as_root else ["-p", str(storm.pid)]
            rec_cmd = [build.fgctl, "--socket", fgd.socket, "record", "--off-cpu", *target,
                       "-t", str(args.seconds), "-f", "folded", "-o", "/dev/null", "--json"]
            t0 = time.monotonic()
            if args.no_record:
                time.sleep(args.seconds)
                rec = subprocess.CompletedProcess(rec_cmd, 0, "{}", "")
            else:
                rec = subprocess.run(rec_cmd if args.as_root else as_user(user, rec_cmd),
                                     capture_output=True, text=True)
            wall = time.monotonic() - t0
            for p in pollers:
                p.stop.set()
                p.join()
            cpu = fgbench.cpu_seconds(fgd.pid) - cpu0
            sched1 = schedstat(fgd.pid)
            after = fgd.status()
            hwm = fgbench.status_kib(fgd.pid, "VmHWM") * 1024
        finally:
            storm.kill()
            storm.wait()
            storm.stdout.close()
            if args.cgroup:
                os.rmdir(args.cgroup)
        if rec.returncode != 0:
            sys.exit(f"bench: the recording failed ({rec.returncode}): {rec.stderr}")
        if os.environ.get("BENCH_DBG"):
            print("\n".join(l for l in fgd.logs().splitlines() if "DBG" in l))
        meta = {}
        with contextlib.suppress(ValueError):
            meta = json.loads(rec.stdout)
    ran, waited, slices = (b - a for a, b in zip(sched0, sched1))
    return {
        "wall": wall,
        "fgctl": percentiles(pollers[0].times),
        "direct": percentiles(pollers[1].times),
        "status_failed": pollers[0].failed + pollers[1].failed,
        "loop_before": before["loop"]["longest_ms"],
        "loop_longest": after["loop"]["longest_ms"],
        "loop_slow": after["loop"]["slow"] - before["loop"]["slow"],
        "always_on_lost": after["always_on"]["lost"] - before["always_on"]["lost"],
        "always_on_taken": after["always_on"]["total_samples"]
        - before["always_on"]["total_samples"],
        "blocks": meta.get("samples", 0),
        "off_cpu": {k: v for k, v in meta.get("off_cpu", {}).items() if isinstance(v, int)},
        "cpu": cpu,
        "ran": ran / 1e9,
        "waited": waited / 1e9,
        "slices": slices,
        "hwm": hwm,
        "memory": after["memory"],
    }


def show(i, r):
    print(f"run {i}: recording {r['wall']:.1f} s; {r['status_failed']} status requests failed")
    for name, what in (("fgctl", "fgctl status"), ("direct", "status on the socket")):
        p = r[name]
        print(f"  {what}: {p['n']} answers, median {p['median']:.0f} ms, p90 {p['p90']:.0f} "
              f"ms, worst {p['worst']:.0f} ms, {p['over_100']} over 100 ms")
    print(f"  loop: longest turn {r['loop_longest']} ms (before the storm {r['loop_before']}), "
          f"{r['loop_slow']} turns over 50 ms in it; always-on lost {r['always_on_lost']} of "
          f"{r['always_on_taken']}")
    print(f"  recording: {r['blocks']} blocks; off_cpu: "
          + ", ".join(f"{k} {v}" for k, v in sorted(r["off_cpu"].items())))
    print(f"  fgd: {r['cpu']:.2f} s of CPU; loop thread ran {r['ran']:.2f} s, waited "
          f"{r['waited']:.2f} s for a CPU in {r['slices']} turns on it")
    mem = r["memory"]
    print(f"  memory: VmHWM {r['hwm'] / 2**20:.1f} MiB against the {mem['budget'] >> 20} MiB "
          f"budget ({'within' if r['hwm'] <= mem['budget'] else 'OVER'}; status's peak "
          f"{mem['rss_peak'] / 2**20:.1f}); rings at most {mem['parts']['rings']['peak'] / 2**20:.1f}"
          f" MiB; now {max(mem['rss'] - mem['charged'] - mem['base'], 0) / 2**20:.1f} MiB "
          f"resident charged to no part", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--threads", type=int, default=2000)
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--poll", type=float, default=0.1)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--as-root", action="store_true",
                    help="root records the whole machine (-a), not the user its storm")
    ap.add_argument("--no-record", action="store_true",
                    help="the storm alone, no recording: what it costs everyone by itself")
    ap.add_argument("--cgroup", metavar="DIR",
                    help="the storm in this CPU cgroup of its own, made and removed (e.g. "
                    "/sys/fs/cgroup/cpu/storm)")
    ap.add_argument("--renice", type=int, metavar="NICE", help="fgd's threads at this nice value")
    ap.add_argument("--call-graph", choices=("dwarf", "fp"), default="dwarf")
    ap.add_argument("--fgd-arg", action="append", default=[],
                    help="another option for fgd (repeat)")
    args = ap.parse_args()
    fgbench.need_root()
    build = fgbench.Build(args.build)
    m = fgbench.Machine()
    who = "root, -a" if args.as_root else f"user {USER}, -p"
    print(f"storm: {args.threads} threads sleeping 1 ms; record --off-cpu ({who}) "
          f"-t {args.seconds}, {args.call_graph}; status every {args.poll * 1000:.0f} ms; "
          f"{args.runs} runs", flush=True)
    runs = []
    with test_user(USER, GROUP) as user:
        for i in range(args.runs):
            runs.append(one_run(args, build, user))
            show(i + 1, runs[-1])

    def worst(k):
        return max(r[k] for r in runs)

    for name, what in (("fgctl", "fgctl status"), ("direct", "status on the socket")):
        print(f"over {len(runs)} runs, {what}: median of medians "
              f"{statistics.median(r[name]['median'] for r in runs):.0f} ms, worst "
              f"{max(r[name]['worst'] for r in runs):.0f} ms (each run's: "
              f"{[round(r[name]['worst']) for r in runs]})")
    print(f"loop's longest turn: median {statistics.median(r['loop_longest'] for r in runs):.0f} "
          f"ms, worst {worst('loop_longest')} ms (each run's: "
          f"{[r['loop_longest'] for r in runs]}); always-on lost "
          f"{[r['always_on_lost'] for r in runs]}; blocks kept {[r['blocks'] for r in runs]}")
    print(fgbench.conditions(m), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
