#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A user's hostile files against everyone else's service (issue 11, item 1).

For the whole run, a second client asks fgd for its status every 20 ms over
a raw socket, a root recording samples a burner at the default rate and call
graph, and always-on samples the machine. Meanwhile the attacker, user
nobody, records processes of its own again and again, each a fresh one:
  --attack jit  a process running code from anonymous executable memory,
                with a sparse /tmp/perf-PID.map of --map-size bytes;
  --attack elf  an executable whose symbol table holds --symbols functions
                (tests/programs/fgtest-bigsym), also made afresh each time.
Prints the status latency (median, p99, max), fgd's own longest loop turn,
the records lost by the victim recording, by always-on and by every
recording, and what fgd says about the maps and its loader. Assert nothing:
run it against two builds to compare.

Usage: bench_hostile.py BUILD_DIR [--attack jit|elf] [--seconds N]
                        [--map-size BYTES] [--symbols N] [--programs BUILD_DIR]
"""

import argparse
import json
import os
import pwd
import socket
import subprocess
import tempfile
import threading
import time

import fgbench


def status_once(path):
    """One status request on a fresh connection; its latency in ms and the parsed reply."""
    t0 = time.monotonic()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(60)
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


def as_nobody(nobody, cmd, **kw):
    return subprocess.Popen(["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}",
                             "--clear-groups", "--"] + cmd, **kw)


def jit_attacker(build, nobody, args, tmp):
    """A fresh JIT process owned by nobody, with its sparse map; returns (Popen, files to remove)."""
    p = as_nobody(nobody, [build.program("fgtest-jit")], stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline().strip()
    if line != "ready":
        raise SystemExit(f"bench: fgtest-jit did not start: {line!r}")
    p.stdout.readline()
    path = f"/tmp/perf-{p.pid}.map"
    with open(path, "wb") as f:
        f.truncate(args.map_size)
    os.chown(path, nobody.pw_uid, nobody.pw_gid)
    return p, [path]


def elf_attacker(build, nobody, args, tmp):
    """A fresh executable with a huge symbol table, run by nobody."""
    exe = os.path.join(tmp, f"bigsym-{time.monotonic_ns()}")
    subprocess.run([build.program("fgtest-bigsym"), exe, str(args.symbols)], check=True)
    os.chmod(exe, 0o755)
    return as_nobody(nobody, [exe]), [exe]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--attack", choices=("jit", "elf"), default="jit")
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--map-size", type=int, default=8 << 30)
    ap.add_argument("--symbols", type=int, default=1500000)
    ap.add_argument("--programs", help="the build whose test programs to use (default: BUILD_DIR), "
                    "to measure an older fgd with today's workloads")
    args = ap.parse_args()
    fgbench.need_root()
    build = fgbench.Build(args.build)
    if args.programs:
        build.program = fgbench.Build(args.programs).program
    nobody = pwd.getpwnam("nobody")
    attacker = jit_attacker if args.attack == "jit" else elf_attacker
    machine = fgbench.Machine()

    with fgbench.Fgd(build) as fgd, fgbench.workloads([[build.program("fgtest-burn")]]) as (burn,), \
            tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        base_ms, before = status_once(fgd.socket)
        poller = Poller(fgd.socket)
        poller.start()
        victim = subprocess.Popen([build.fgctl, "--socket", fgd.socket, "record", "-p", str(burn.pid),
                                   "-t", str(args.seconds), "-o", "-"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + args.seconds
        attacks = 0
        while time.monotonic() < deadline - 2:
            p, files = attacker(build, nobody, args, tmp)
            try:
                fgd.fgctl("record", "-p", p.pid, "-t", "2", "-o", "-")
                attacks += 1
            finally:
                p.kill()
                p.wait()
                for path in files:
                    os.unlink(path)
        out, err = victim.communicate(timeout=args.seconds + 120)
        poller.stop.set()
        poller.join()
        _, after = status_once(fgd.socket)

    ms = poller.ms
    lost_all = sum(c["lost"] for c in after["cpus"]) - sum(c["lost"] for c in before["cpus"])
    what = (f"sparse maps of {args.map_size >> 20} MiB" if args.attack == "jit" else
            f"executables of {args.symbols} symbols")
    print(f"bench_hostile --attack {args.attack}: {args.seconds} s, {attacks} attacking recordings, "
          f"{what}")
    print(f"  status latency: {len(ms)} requests, median {fgbench.percentile(ms, 0.5):.1f} ms, "
          f"p99 {fgbench.percentile(ms, 0.99):.1f} ms, max {max(ms):.1f} ms "
          f"(before the attack {base_ms:.1f} ms)")
    if "loop" in after:
        print(f"  fgd's loop: longest turn {after['loop']['longest_ms']} ms, "
              f"{after['loop']['slow']} over {after['loop']['slow_ms']} ms; loader: {after['loader']}")
    summary = [l for l in err.decode(errors="replace").splitlines() if "samples" in l]
    print(f"  victim recording (fgtest-burn, default rate): {summary[0] if summary else '?'}")
    print(f"  records lost, every recording: {lost_all}; always-on: {after['always_on'].get('lost', 0)}")
    print(f"  jit: {json.dumps(after['jit'])}")
    print(f"  {fgbench.conditions(machine)}")


if __name__ == "__main__":
    main()
