#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Daemon cost per sample, loss and memory, against perf record as reference.

Loads every CPU with fgtest-burn, then:
  1. warms fgd up with a short whole-machine recording (symbols, tables);
  2. records the whole machine at 999 Hz for --seconds and divides fgd's own
     CPU time (utime + stime, and on-CPU ns from schedstat) by the samples it
     read from the rings;
  3. reports lost samples with the default ring size, and fgd's RSS idle and
     after the recording;
  4. runs `perf record -F 999 -a -g` for the same time under the same load and
     divides perf's CPU time by its samples.

Prints figures; it asserts nothing (machines are noisy). Needs root and a build.
usage: tests/bench/bench_daemon.py [--build build] [--seconds 30] [--long 60] [--burners-only]
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

import fgbench


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def hwm_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def start_fgd(build, sock, env_notify, extra=()):
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(env_notify)
    proc = subprocess.Popen([os.path.join(build, "daemon/fgd"), "--socket", sock, *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=dict(os.environ, NOTIFY_SOCKET=env_notify))
    notify.settimeout(60)
    while b"READY=1" not in notify.recv(4096):
        pass
    notify.close()
    return proc


def record(build, sock, seconds, freq=999, pids=None):
    target = ["-p", ",".join(map(str, pids))] if pids else ["-a"]
    r = subprocess.run([os.path.join(build, "cli/fgctl"), "--socket", sock, "record", *target,
                        "-t", str(seconds), "-F", str(freq), "-o", "-", "-q"],
                       capture_output=True, check=True)
    st = subprocess.run([os.path.join(build, "cli/fgctl"), "--socket", sock, "status", "--json"],
                        capture_output=True, check=True)
    return r.stdout, json.loads(st.stdout)


def perf_reference(seconds, tmp):
    r = fgbench.perf_record(seconds, os.path.join(tmp, "perf.data"))
    return r["polled"], r["samples"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--seconds", type=int, default=30)
    ap.add_argument("--long", type=int, default=60)
    ap.add_argument("--no-perf", action="store_true")
    ap.add_argument("--burners-only", action="store_true",
                    help="record only the fgtest-burn processes, with no always-on sampling: the "
                         "cost of the hot path alone, whatever else the machine runs")
    ap.add_argument("--churn", action="store_true",
                    help="replace one burner with a loop of short-lived processes (exec, mmap, new stacks)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench: needs root")
    ncpu = os.cpu_count()
    burners = [subprocess.Popen([os.path.join(args.build, "tests/programs/fgtest-burn")],
                                stdout=subprocess.DEVNULL) for _ in range(ncpu - args.churn)]
    if args.churn:
        burners.append(subprocess.Popen(["sh", "-c", "while :; do ls -lR /usr/share/doc >/dev/null; done"]))
    fgd = None
    try:
        with tempfile.TemporaryDirectory() as tmp:
            sock = os.path.join(tmp, "fgd.sock")
            fgd = start_fgd(args.build, sock, os.path.join(tmp, "notify"),
                            ["--no-always-on"] if args.burners_only else [])
            pids = [b.pid for b in burners] if args.burners_only else None
            time.sleep(2)  # settle: the figure is the RSS of a daemon at rest
            idle_rss = rss_kib(fgd.pid)

            record(args.build, sock, 5, pids=pids)  # warm-up
            _, st0 = record(args.build, sock, 1, pids=pids)
            seen0 = sum(c["samples"] for c in st0["cpus"])
            before_cpu, before_ns = fgbench.cpu_times(fgd.pid)
            folded, st1 = record(args.build, sock, args.seconds, pids=pids)
            after_cpu, after_ns = fgbench.cpu_times(fgd.pid)
            seen = sum(c["samples"] for c in st1["cpus"]) - seen0
            lost = sum(c["lost"] for c in st1["cpus"]) - sum(c["lost"] for c in st0["cpus"])
            us_ticks = (after_cpu - before_cpu) * 1e6 / max(seen, 1)
            us_sched = (after_ns - before_ns) / 1e3 / max(seen, 1)

            _, st2 = record(args.build, sock, args.long, pids=pids)
            long_rss, peak = rss_kib(fgd.pid), hwm_kib(fgd.pid)
            lost_long = sum(c["lost"] for c in st2["cpus"]) - sum(c["lost"] for c in st1["cpus"])

            load = "fgtest-burn" + (" and a loop of short-lived ls processes" if args.churn else "")
            print(f"machine: {ncpu} CPUs, all busy with {load}; event {st1['event']}")
            what = "the burners only, no always-on" if args.burners_only else "the whole machine"
            print(f"fgd, {args.seconds} s at 999 Hz on all CPUs, recording {what}: {seen} samples "
                  f"read, {lost} lost, "
                  f"{len(folded.splitlines())} distinct stacks")
            print(f"fgd CPU per sample: {us_ticks:.2f} us (utime+stime), {us_sched:.2f} us (schedstat)")
            print(f"fgd lost over a further {args.long} s: {lost_long}")
            print(f"fgd RSS: idle {idle_rss} KiB, after a further {args.long} s recording "
                  f"{long_rss} KiB (peak {peak} KiB)")
            fgd.terminate()
            fgd.wait()
            fgd = None

            if not args.no_perf:
                (pcpu, pns), psamples = perf_reference(args.seconds, tmp)
                if psamples:
                    print(f"perf record -F 999 -a -g, {args.seconds} s: {psamples} samples, "
                          f"{pcpu * 1e6 / psamples:.2f} us (utime+stime), "
                          f"{pns / 1e3 / psamples:.2f} us (schedstat) per sample")
    finally:
        if fgd:
            fgd.kill()
        for b in burners:
            b.kill()
            b.wait()


if __name__ == "__main__":
    main()
