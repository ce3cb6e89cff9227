#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What pprof output costs a recording, against folded text, on the same load.

A recording asked for pprof keeps its stacks twice: as names (its model) and
as the resolver's code locations (daemon/consumers/fgd-pprof), so the profile has
addresses, mappings and inline lines. This measures, for one whole-machine
recording at 999 Hz of the same load (two g++ -O2 compile loops: many
binaries, many distinct stacks) written as folded text and as pprof, one
after the other:
  - the recording's tables at their peak (status: the budget's recordings
    part, polled every 0.2 s), which is where the location model is charged;
  - how long the end takes (fgctl's wall time past -t: settle, build, send);
  - the file's size, its distinct stacks (folded lines, pprof samples), and
    pprof's locations, functions and mappings (go tool pprof -raw, if go is
    installed).

Usage: tests/bench/bench_pprof.py [BUILD_DIR] [SECONDS]   (root; default build, 15)
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from fgbench import Build, Fgd, need_root

CXX = r"""
#include <algorithm>
#include <map>
#include <string>
#include <vector>
int main() {
    std::map<std::string, std::vector<int>> m;
    for (int i = 0; i < 100; i++) m[std::to_string(i)].push_back(i);
    std::vector<int> v(m.size());
    std::sort(v.begin(), v.end());
    return v.empty();
}
"""


def compile_loops(tmp, n, stop):
    gxx = shutil.which("g++")
    if not gxx:
        sys.exit("bench: g++ is missing")
    src = os.path.join(tmp, "load.cc")
    with open(src, "w") as f:
        f.write(CXX)

    def loop(i):
        while not stop.is_set():
            subprocess.run([gxx, "-O2", "-o", os.path.join(tmp, f"load{i}"), src],
                           capture_output=True)
    threads = [threading.Thread(target=loop, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    return threads


def record(fgd, out, seconds):
    """One recording: its tables' peak, the time its end took, fgctl's summary."""
    peak = 0
    start = time.monotonic()
    proc = subprocess.Popen([fgd.build.fgctl, "--socket", fgd.socket, "record", "-a", "-t",
                             str(seconds), "-F", "999", "-o", out], stderr=subprocess.PIPE)
    while proc.poll() is None:
        parts = fgd.status().get("memory", {}).get("parts", {})
        peak = max(peak, parts.get("recordings", {}).get("bytes", 0))
        time.sleep(0.2)
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if proc.returncode != 0:
        sys.exit(f"bench: record -o {out} failed: {err}")
    return peak, time.monotonic() - start - seconds, err


def pprof_counts(path):
    if not shutil.which("go"):
        return None
    r = subprocess.run(["go", "tool", "pprof", "-raw", path], capture_output=True, text=True)
    text = r.stdout
    samples = text.split("Samples:", 1)[1].split("Locations", 1)[0]
    locs = text.split("Locations", 1)[1].split("Mappings", 1)[0]
    maps = text.split("Mappings", 1)[1]
    return {"samples": len(re.findall(r"^\s+\d+\s+\d+: ", samples, re.M)),
            "locations": len(re.findall(r"^\s+\d+: 0x", locs, re.M)),
            "lines": len(re.findall(r" s=-?\d+(?:\(.*\))?$", locs, re.M)),
            "mappings": len(re.findall(r"^\d+: 0x", maps, re.M))}


def stacks(out, ext):
    """What the file holds: folded lines, or pprof's samples, locations and mappings."""
    if ext == "folded":
        with open(out) as f:
            return f"{sum(1 for _ in f)} lines"
    c = pprof_counts(out)
    return (f"{c['samples']} samples, {c['locations']} locations ({c['lines']} lines), "
            f"{c['mappings']} mappings" if c else "(go is not installed)")


def main():
    need_root()
    build = Build(sys.argv[1] if len(sys.argv) > 1 else "build")
    seconds = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    stop = threading.Event()
    with tempfile.TemporaryDirectory(prefix="fgd-bench-pprof-") as tmp, Fgd(build) as fgd:
        threads = compile_loops(tmp, os.cpu_count(), stop)
        try:
            time.sleep(2)  # the compilers' binaries read once, for both recordings alike
            rows = []
            for ext in ("folded", "pb.gz"):
                out = os.path.join(tmp, f"all.{ext}")
                peak, end, summary = record(fgd, out, seconds)
                samples = re.search(r"wrote \S+: (\d+) samples", summary)
                rows.append((ext, peak, end, os.path.getsize(out),
                             int(samples.group(1)) if samples else 0, stacks(out, ext)))
        finally:
            stop.set()
            for t in threads:
                t.join()
    print(f"whole machine, {seconds} s at 999 Hz, {os.cpu_count()} g++ -O2 compile loops")
    print(f"{'output':8} {'samples':>8} {'tables peak':>12} {'end':>7} {'file':>10}  stacks")
    for ext, peak, end, size, samples, stacks_text in rows:
        print(f"{ext:8} {samples:8} {peak / 2**20:9.1f} MiB {end:6.2f}s {size / 1024:8.1f}K  "
              f"{stacks_text}")


main()
