#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What clients that ask for a result and never read it cost fgd: a window
filled by a unique-stack storm (fgtest-stackstorm, one per CPU, always-on at
999 Hz), then --clients connections that each request a snapshot of
everything (--format, html by default) and read nothing. Prints fgd's RSS
(VmRSS) before, while they wait and after they have gone, and what status
counted. With --user, the storm and the clients run as that user (fgd's
socket group is then the user's group), whose result budget is smaller.

  sudo python3 tests/bench/bench_slow_clients.py --build build --storm-seconds 60 --clients 40
  sudo python3 tests/bench/bench_slow_clients.py --build build --user nobody --clients 8
"""

import argparse
import grp
import json
import os
import pwd
import subprocess
import sys
import time

import fgbench

HOLDER = r"""
import socket, sys
path, n, request = sys.argv[1], int(sys.argv[2]), sys.argv[3].encode() + b"\n"
socks = []
for _ in range(n):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.sendall(request)
    socks.append(s)
print("sent", flush=True)
sys.stdin.read()
"""


def rss(fgd):
    return fgbench.status_kib(fgd.pid, "VmRSS")


def settle(fgd, seconds=3.0):
    """fgd's RSS once it stopped moving (a drain round may be under way)."""
    last, stable_since = rss(fgd), time.monotonic()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        time.sleep(0.25)
        now = rss(fgd)
        if abs(now - last) > 256:
            last, stable_since = now, time.monotonic()
        elif time.monotonic() - stable_since >= seconds:
            break
    return last


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--storm-seconds", type=float, default=60)
    ap.add_argument("--clients", type=int, default=40)
    ap.add_argument("--format", default="html")
    ap.add_argument("--user", help="run the storm and the clients as this user")
    a = ap.parse_args()
    fgbench.need_root()
    build = fgbench.Build(a.build)
    m = fgbench.Machine()
    prefix, args = [], ["--always-on-frequency", "999", "--slice-seconds", "5"]
    if a.user:
        pw = pwd.getpwnam(a.user)
        prefix = ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--clear-groups", "--"]
        args += ["--socket-group", grp.getgrgid(pw.pw_gid).gr_name]
    with fgbench.Fgd(build, args) as fgd:
        os.chmod(fgd.dir, 0o755)  # the user reaches the socket through it
        with fgbench.workloads([prefix + [build.program("fgtest-stackstorm")]
                                for _ in range(os.cpu_count())]):
            time.sleep(a.storm_seconds)
        st = fgd.status()["always_on"]
        print(f"window: {st['bytes'] >> 10} KiB in {st['slices']} slices, {st['samples']} samples",
              flush=True)
        t0 = time.monotonic()
        fgd.fgctl("snapshot", "-f", a.format, "-o", "/dev/null")
        print(f"one {a.format} snapshot read at once by root: {time.monotonic() - t0:.2f} s",
              flush=True)
        before = settle(fgd)
        print(f"RSS before: {before / 1024:.1f} MiB; {fgbench.memory(fgd)}", flush=True)
        request = json.dumps({"fgd": 1, "cmd": "snapshot", "format": a.format})
        holder = subprocess.Popen(prefix + [sys.executable, "-c", HOLDER, fgd.socket,
                                            str(a.clients), request],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if holder.stdout.readline().strip() != "sent":
            sys.exit("bench: the clients could not connect")
        held = settle(fgd)
        server = fgd.status()["server"]
        print(f"RSS with {a.clients} {a.user or 'root'} clients not reading: {held / 1024:.1f} MiB "
              f"(+{(held - before) / 1024:.1f} MiB, {(held - before) / 1024 / a.clients:.2f} MiB "
              f"each; peak {fgbench.status_kib(fgd.pid, 'VmHWM') / 1024:.1f} MiB)", flush=True)
        print("server: " + json.dumps(server), flush=True)
        holder.stdin.close()
        holder.wait(timeout=30)
        holder.stdout.close()
        after = settle(fgd)
        print(f"RSS after they left: {after / 1024:.1f} MiB (+{(after - before) / 1024:.1f} MiB); "
              f"{fgbench.memory(fgd)}", flush=True)
        print(fgbench.conditions(m))


if __name__ == "__main__":
    main()
