#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A user's hostile JIT map against everyone else's service (issue 11, item 1).

An unprivileged process runs code from anonymous executable memory and owns a
sparse /tmp/perf-PID.map of several GiB; it is recorded, then a fresh one is
started and recorded again, for the whole run. Meanwhile a second client asks
fgd for its status every 20 ms over a raw socket, a root recording samples a
burner at the default rate, and always-on samples the machine. Prints the
status latency (median, p99, max), the records lost by the victim recording,
by always-on and by every recording fgd ran, and what fgd says about the maps.

Usage: bench_jit_attack.py BUILD_DIR [--seconds N] [--map-size BYTES]
"""

import argparse
import json
import os
import pwd
import socket
import subprocess
import threading
import time

import fgbench


def status_once(path):
    """One status request on a fresh connection; its latency in ms and the parsed reply."""
    t0 = time.monotonic()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    s.connect(path)
    s.sendall(b'{"fgd":1,"cmd":"status"}\n')
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = s.recv(1 << 20)
        if not chunk:
            break
        buf += chunk
    s.close()
    return (time.monotonic() - t0) * 1000, json.loads(buf)


class Poller(threading.Thread):
    def __init__(self, path):
        super().__init__(daemon=True)
        self.path, self.stop, self.ms = path, threading.Event(), []

    def run(self):
        while not self.stop.is_set():
            ms, _ = status_once(self.path)
            self.ms.append(ms)
            self.stop.wait(0.02)


def attacker(build, nobody, map_size):
    """A fresh JIT process owned by nobody, with its sparse map; returns the Popen."""
    p = subprocess.Popen(["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}",
                          "--clear-groups", "--", build.program("fgtest-jit")],
                         stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline().strip()
    if line != "ready":
        raise SystemExit(f"bench: fgtest-jit did not start: {line!r}")
    p.stdout.readline()
    path = f"/tmp/perf-{p.pid}.map"
    with open(path, "wb") as f:
        f.truncate(map_size)
    os.chown(path, nobody.pw_uid, nobody.pw_gid)
    return p, path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--map-size", type=int, default=8 << 30)
    args = ap.parse_args()
    fgbench.need_root()
    build = fgbench.Build(args.build)
    nobody = pwd.getpwnam("nobody")
    machine = fgbench.Machine()

    with fgbench.Fgd(build) as fgd, fgbench.workloads([[build.program("fgtest-burn")]]) as (burn,):
        base_ms, before = status_once(fgd.socket)
        poller = Poller(fgd.socket)
        poller.start()
        victim = subprocess.Popen([build.fgctl, "--socket", fgd.socket, "record", "-p", str(burn.pid),
                                   "-t", str(args.seconds), "-o", "-"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + args.seconds
        attacks = 0
        while time.monotonic() < deadline - 1:
            p, path = attacker(build, nobody, args.map_size)
            try:
                fgd.fgctl("record", "-p", p.pid, "-t", "2", "-o", "-")
                attacks += 1
            finally:
                p.kill()
                p.wait()
                os.unlink(path)
        out, err = victim.communicate(timeout=args.seconds + 60)
        poller.stop.set()
        poller.join()
        _, after = status_once(fgd.socket)

    ms = poller.ms
    lost_all = sum(c["lost"] for c in after["cpus"]) - sum(c["lost"] for c in before["cpus"])
    ao = after["always_on"]
    jit = after["jit"]
    print(f"bench_jit_attack: {args.seconds} s, {attacks} attacking recordings, maps of "
          f"{args.map_size >> 20} MiB (sparse)")
    print(f"  status latency: {len(ms)} requests, median {fgbench.percentile(ms, 0.5):.1f} ms, "
          f"p99 {fgbench.percentile(ms, 0.99):.1f} ms, max {max(ms):.1f} ms "
          f"(before the attack {base_ms:.1f} ms)")
    summary = [l for l in err.decode(errors="replace").splitlines() if "samples" in l]
    print(f"  victim recording (fgtest-burn, default rate): {summary[0] if summary else '?'}")
    print(f"  records lost, every recording: {lost_all}; always-on: {ao.get('lost', 0)}")
    print(f"  jit: {json.dumps(jit)}")
    print(f"  {fgbench.conditions(machine)}")


if __name__ == "__main__":
    main()
