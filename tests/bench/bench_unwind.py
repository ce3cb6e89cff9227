#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Stack quality and cost of DWARF unwinding, against perf as the reference.

Workloads: Debian's binaries, which have no frame pointers: /usr/bin/python3
running a CPU-bound script, `xz -9` and `gzip -9` compressing /dev/urandom.

  1. quality: each workload recorded by fgd in dwarf and in fp mode: the share
     of user stacks that reach the outermost frame, and the share of frames
     named (not [unknown], not module+offset); the same share for
     `perf record --call-graph dwarf` + `perf script` on the same process;
  2. cost: the whole machine at 999 Hz with the three workloads running, fgd's
     own CPU time (utime + stime) per sample read, dwarf then fp, warm (a
     first recording loads the binaries); and perf script's time per sample
     to unwind perf's dwarf recording of the same load;
  3. churn (--churn-minutes, default 0 = skip): 50 short-lived processes per
     second while back-to-back one-minute dwarf recordings of the whole
     machine run; fgd's RSS every 30 s.

Prints figures; asserts nothing (machines are noisy). Needs root and a build.
usage: tests/bench/bench_unwind.py [--build build] [--seconds 10] [--churn-minutes 10]
"""

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time

HZ = os.sysconf("SC_CLK_TCK")
SCRIPT = """
def hot(n):
    return n if n < 2 else hot(n - 1) + hot(n - 2)
while True:
    hot(20)
"""


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / HZ


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def start_fgd(build, tmp):
    sock, notify_path = os.path.join(tmp, "fgd.sock"), os.path.join(tmp, "notify")
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(notify_path)
    proc = subprocess.Popen([os.path.join(build, "daemon/fgd"), "--socket", sock],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=dict(os.environ, NOTIFY_SOCKET=notify_path))
    notify.settimeout(60)
    while b"READY=1" not in notify.recv(4096):
        pass
    notify.close()
    return proc, sock


def fgctl_record(build, sock, tmp, target, seconds, mode, freq=999):
    meta = os.path.join(tmp, "meta.json")
    subprocess.run([os.path.join(build, "cli/fgctl"), "--socket", sock, "record", *target,
                    "-t", str(seconds), "-F", str(freq), "--call-graph", mode, "-q",
                    "--metadata", meta, "-o", os.path.join(tmp, "out.folded")],
                   check=True)
    with open(meta) as f:
        return json.load(f)


def named_share(frames):
    total = frames["named"] + frames["module_offset"] + frames["unknown"]
    return frames["named"] / total if total else 0.0


def perf_named_share(pid, seconds, tmp):
    """perf record --call-graph dwarf + perf script: share of frames with a symbol, and
    perf script's seconds per sample."""
    data = os.path.join(tmp, "perf.data")
    subprocess.run(["perf", "record", "-q", "--buildid-mmap", "--call-graph", "dwarf", "-F", "999",
                    "-p", str(pid), "-o", data, "--", "sleep", str(seconds)],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    t0 = time.perf_counter()
    out = subprocess.run(["perf", "script", "-i", data], capture_output=True, text=True,
                         check=True).stdout
    elapsed = time.perf_counter() - t0
    samples = named = total = 0
    for line in out.splitlines():
        m = re.match(r"\s+[0-9a-f]+ (.*) \((.*)\)$", line)
        if m:
            total += 1
            # "[unknown]" and bare "dso+0x..." offsets are not names.
            named += not m.group(1).startswith("[unknown]")
        elif line and not line[0].isspace():
            samples += 1
    return (named / total if total else 0.0), (elapsed / samples if samples else 0.0), samples


def start_workloads(tmp):
    script = os.path.join(tmp, "hot.py")
    with open(script, "w") as f:
        f.write(SCRIPT)
    random = open("/dev/urandom", "rb")
    procs = {"python3": subprocess.Popen(["/usr/bin/python3", script])}
    for tool in ("xz", "gzip"):
        procs[tool] = subprocess.Popen([shutil.which(tool), "-9", "-c"], stdin=random,
                                       stdout=subprocess.DEVNULL)
    random.close()
    time.sleep(1)  # let xz allocate its dictionary and every process reach its loop
    return procs


def churn(stop):
    """50 short-lived processes per second, each burning a few milliseconds."""
    while not stop.is_set():
        t0 = time.monotonic()
        for _ in range(50):
            subprocess.Popen(["/bin/sh", "-c", "i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done"])
        while True:
            try:
                if os.waitpid(-1, os.WNOHANG) == (0, 0):
                    break
            except ChildProcessError:
                break
        stop.wait(max(0.0, 1.0 - (time.monotonic() - t0)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--churn-minutes", type=float, default=0)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        fgd, sock = start_fgd(args.build, tmp)
        procs = start_workloads(tmp)
        try:
            print("1. stack quality per workload (user stacks reaching the outermost frame; "
                  "frames named)")
            print(f"   {'workload':9} {'fgd dwarf':>18} {'fgd fp':>18} {'perf dwarf':>11}")
            for name, p in procs.items():
                dw = fgctl_record(args.build, sock, tmp, ["-p", str(p.pid)], args.seconds, "dwarf")
                fp = fgctl_record(args.build, sock, tmp, ["-p", str(p.pid)], args.seconds, "fp")
                perf_named, _, _ = perf_named_share(p.pid, args.seconds, tmp)
                q, qf = dw["stack_quality"], fp["stack_quality"]
                print(f"   {name:9} {q['complete_pct']:5.1f}% / {named_share(dw['frames']):5.1%} "
                      f"named {qf['complete_pct']:5.1f}% / {named_share(fp['frames']):5.1%} named "
                      f"{perf_named:6.1%} named")

            print(f"2. cost: whole machine, 999 Hz, {args.seconds} s, the three workloads running")
            fgctl_record(args.build, sock, tmp, ["-a"], 2, "dwarf")  # warm up: load CFI, symbols
            for mode in ("dwarf", "fp"):
                c0 = cpu_seconds(fgd.pid)
                meta = fgctl_record(args.build, sock, tmp, ["-a"], args.seconds, mode)
                used = cpu_seconds(fgd.pid) - c0
                n = meta["samples_seen"]
                print(f"   fgd {mode:5}: {n} samples, {used:.2f} s CPU = {used / n * 1e6:.1f} us/sample; "
                      f"lost {meta['lost']}; {meta['stack_quality']['complete_pct']:.1f}% complete")
            _, per_sample, n = perf_named_share(procs["python3"].pid, args.seconds, tmp)
            print(f"   perf script (python3, --call-graph dwarf): {n} samples, "
                  f"{per_sample * 1e6:.0f} us/sample to unwind and print")
            st = json.loads(subprocess.run([os.path.join(args.build, "cli/fgctl"), "--socket", sock,
                                            "status", "--json"], capture_output=True,
                                           check=True).stdout)
            u = st["unwinding"]
            hits = u["row_hits"] / max(1, u["row_hits"] + u["row_misses"])
            print(f"   unwinder: CFI of {u['binaries']} binaries, {u['bytes'] / 2**20:.1f} MiB held, "
                  f"row cache {hits:.1%} hits; fgd RSS {rss_kib(fgd.pid) / 1024:.1f} MiB")
        finally:
            for p in procs.values():
                p.kill()
                p.wait()

        if args.churn_minutes > 0:
            print(f"3. churn: 50 short-lived processes/s for {args.churn_minutes:g} min, "
                  "back-to-back 60 s dwarf recordings of the whole machine")
            stop = threading.Event()
            t = threading.Thread(target=churn, args=(stop,))
            t.start()
            end = time.monotonic() + args.churn_minutes * 60
            rss = []
            try:
                while time.monotonic() < end:
                    seconds = int(min(60, max(1, end - time.monotonic())))
                    meta = fgctl_record(args.build, sock, tmp, ["-a"], seconds, "dwarf", freq=99)
                    rss.append(rss_kib(fgd.pid))
                    print(f"   +{len(rss)} min: fgd RSS {rss[-1] / 1024:.1f} MiB, {meta['samples']} "
                          f"samples, {meta['stacks']} stacks, "
                          f"{meta['stack_quality']['complete_pct']:.1f}% complete", flush=True)
            finally:
                stop.set()
                t.join()
            st = json.loads(subprocess.run([os.path.join(args.build, "cli/fgctl"), "--socket", sock,
                                            "status", "--json"], capture_output=True,
                                           check=True).stdout)
            print(f"   RSS first {rss[0] / 1024:.1f} MiB, last {rss[-1] / 1024:.1f} MiB, "
                  f"max {max(rss) / 1024:.1f} MiB; processes known {st['processes']['generations']}, "
                  f"unwinder binaries {st['unwinding']['binaries']}")
        fgd.terminate()
        fgd.wait()


if __name__ == "__main__":
    main()
