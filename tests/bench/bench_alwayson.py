#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Always-on cost: fgd's own CPU (user + system, from /proc/PID/stat) while
the machine is busy (one burner per CPU), at each always-on rate, with no
client attached; then the latency of `fgctl snapshot --last 15m` warm.

  sudo python3 tests/bench/bench_alwayson.py BUILD_DIR [SECONDS] [HZ...]
"""

import os
import socket
import subprocess
import sys
import tempfile
import time

build = sys.argv[1]
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 120
rates = [int(x) for x in sys.argv[3:]] or [19, 49, 99]
fgd = os.path.join(build, "daemon", "fgd")
fgctl = os.path.join(build, "cli", "fgctl")
burn = os.path.join(build, "tests", "programs", "fgtest-burn")
tick = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / tick


def wait_socket(path, proc):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit("fgd exited")
        with socket.socket(socket.AF_UNIX) as s:
            try:
                s.connect(path)
                return
            except OSError:
                time.sleep(0.1)
    sys.exit("fgd not ready")


burners = [subprocess.Popen([burn], stdout=subprocess.DEVNULL) for _ in range(os.cpu_count())]
try:
    for hz in rates:
        d = tempfile.mkdtemp()
        sock = os.path.join(d, "fgd.sock")
        args = [fgd, "--socket", sock] + (["--no-always-on"] if hz == 0 else
                                          ["--always-on-frequency", str(hz)])
        p = subprocess.Popen(args, stderr=subprocess.DEVNULL)
        try:
            wait_socket(sock, p)
            time.sleep(2)  # past start-up (the /proc scan, kallsyms)
            c0, t0 = cpu_s(p.pid), time.monotonic()
            time.sleep(seconds)
            c1, t1 = cpu_s(p.pid), time.monotonic()
            pct = 100 * (c1 - c0) / (t1 - t0)
            line = f"{'off' if hz == 0 else f'{hz} Hz'}: fgd used {c1 - c0:.2f} s CPU in {t1 - t0:.0f} s = {pct:.3f}% of one CPU"
            if hz:
                lat = []
                for _ in range(5):
                    s0 = time.monotonic()
                    subprocess.run([fgctl, "--socket", sock, "snapshot", "--last", "15m", "-q",
                                    "-o", os.path.join(d, "s.svg")], check=True)
                    lat.append(time.monotonic() - s0)
                lat.sort()
                line += f"; snapshot --last 15m to SVG: median {lat[2] * 1000:.0f} ms, max {lat[-1] * 1000:.0f} ms"
            with open(f"/proc/{p.pid}/status") as f:
                hwm = [l.split()[1] for l in f if l.startswith("VmHWM")][0]
            print(line + f"; peak RSS {int(hwm) // 1024} MiB", flush=True)
        finally:
            p.terminate()
            p.wait()
            for n in os.listdir(d):
                os.unlink(os.path.join(d, n))
            os.rmdir(d)
finally:
    for b in burners:
        b.kill()
        b.wait()
