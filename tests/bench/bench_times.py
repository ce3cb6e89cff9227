#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What keeping each sample's time costs always-on sampling (issue 14).

fgd always on at each --hz (default 19, the default rate, and 999), 10 s
slices, with a burner on every CPU (fgtest-burn), for --seconds; then:
  - in memory: the window's bytes, of which the samples' times, over the
    samples it holds (status: always_on.bytes, times_bytes, samples), and
    the slices that had to do without their times;
  - on disk: the history files' bytes over the samples they hold, and of
    them the times section's (each file parsed here: the body's strings,
    processes and stacks are skipped, what follows is the times).
Asserts nothing.

  sudo python3 tests/bench/bench_times.py --build build
"""

import argparse
import glob
import json
import os
import subprocess
import sys
import time

import fgbench


def varint(b, i):
    v, shift = 0, 0
    while True:
        byte = b[i]
        i += 1
        v |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return v, i
        shift += 7


def slice_costs(path):
    """(file bytes, times section bytes, samples) of a history file (docs/HISTORY-FORMAT.md)."""
    with open(path, "rb") as f:
        b = f.read()
    header = int.from_bytes(b[6:8], "little")
    body_end = header + int.from_bytes(b[12:16], "little")
    flags = int.from_bytes(b[8:12], "little")
    i = header
    n, i = varint(b, i)
    for _ in range(n):
        length, i = varint(b, i)
        i += length
    n, i = varint(b, i)
    for _ in range(n * 6):
        _, i = varint(b, i)
    n, i = varint(b, i)
    samples = 0
    for _ in range(n):
        _, i = varint(b, i)
        count, i = varint(b, i)
        depth, i = varint(b, i)
        for _ in range(depth):
            _, i = varint(b, i)
        samples += count
    return len(b), body_end - i if flags & 1 else 0, samples


def run(build, hz, seconds):
    with fgbench.burners(build), fgbench.Fgd(build, ["--always-on-frequency", hz,
                                                     "--slice-seconds", "10"]) as fgd:
        time.sleep(seconds)
        st = json.loads(subprocess.run([build.fgctl, "--socket", fgd.socket, "status", "--json"],
                                       capture_output=True, text=True, check=True).stdout)
        ao = st["always_on"]
        state = os.path.join(fgd.dir, "state", "slices")
        files = [slice_costs(p) for p in glob.glob(os.path.join(state, "*.fgdh"))]
    disk, times, samples = (sum(x[k] for x in files) for k in range(3))
    print(f"{hz} Hz, {os.cpu_count()} CPUs busy, {seconds} s:")
    print(f"  memory: {ao['samples']} samples held in {ao['bytes'] / 1024:.0f} KiB, of which "
          f"times {ao['times_bytes'] / 1024:.0f} KiB: {ao['times_bytes'] / max(ao['samples'], 1):.1f} "
          f"bytes a sample ({ao['untimed_slices']} slices without times)")
    print(f"  disk: {len(files)} files, {samples} samples in {disk / 1024:.0f} KiB, "
          f"{disk / max(samples, 1):.2f} bytes a sample; times {times / 1024:.1f} KiB, "
          f"{times / max(samples, 1):.2f} bytes a sample ({100 * times / max(disk, 1):.0f}% of the files)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--hz", type=int, nargs="+", default=[19, 999])
    ap.add_argument("--seconds", type=int, default=60)
    args = ap.parse_args()
    fgbench.need_root()
    build = fgbench.Build(args.build)
    for hz in args.hz:
        run(build, hz, args.seconds)


if __name__ == "__main__":
    sys.exit(main())
