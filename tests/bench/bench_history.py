#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""History storage: bytes per sample and per stack of the slice files fgd
writes at its defaults (19 Hz, 10 s slices), the same history merged into
1 min and 10 min files by fgd's own compaction (bench-history, on a copy),
and from those the bytes on disk per host-day at the default tiers (an hour
of 10 s files, a day of 1 min files, a week of 10 min files).

  sudo python3 tests/bench/bench_history.py BUILD_DIR [MINUTES]
  sudo python3 tests/bench/bench_history.py BUILD_DIR --state DIR

The first runs fgd at its defaults for MINUTES (default 30) on whatever the
machine is doing, with a state directory of its own; the second measures a
state directory collected before (it is copied, not changed).
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

build = sys.argv[1]
os.environ["FGD"] = os.path.join(build, "daemon", "fgd")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from fgdtest import Daemon  # noqa: E402 (after FGD is set)

bench = os.path.join(build, "tests", "bench", "bench-history")


def collect(minutes, tmp):
    """fgd at its defaults (the harness gives it its own socket and state directory);
    the history is not compacted before an hour, so what is measured is what fgd wrote."""
    state = os.path.join(tmp, "state")
    with Daemon([], timeout=120) as d:
        print(f"collecting for {minutes} min; load average {os.getloadavg()}", flush=True)
        time.sleep(minutes * 60)
        print(f"load average at the end {os.getloadavg()}", flush=True)
        d.stop()  # SIGTERM writes the open slice
        shutil.copytree(os.path.join(d.dir, "state"), state)
    return state


def measure(state, tmp):
    copy = os.path.join(tmp, "copy")
    shutil.copytree(state, copy)
    out = subprocess.run([bench, copy], capture_output=True, text=True, check=True)
    print(out.stdout, end="")
    if out.stderr:
        print(out.stderr, end="", file=sys.stderr)
    rows = {}
    for line in out.stdout.splitlines():
        f = line.split()
        rows[f[0]] = {f[i]: float(f[i + 1]) for i in range(1, len(f), 2)}
    return rows


def main():
    tmp = tempfile.mkdtemp(prefix="fgd-bench-history-")
    try:
        if len(sys.argv) > 3 and sys.argv[2] == "--state":
            state = sys.argv[3]
        else:
            state = collect(float(sys.argv[2]) if len(sys.argv) > 2 else 30, tmp)
        rows = measure(state, tmp)
        as_is, m1, m10 = rows["as-is"], rows["1min"], rows["10min"]
        print(f"\nmerging: 1 min files take {m1['bytes'] / as_is['bytes']:.2f}x the bytes of 10 s "
              f"files, 10 min files {m10['bytes'] / as_is['bytes']:.2f}x")
        print(f"per unique stack of a slice: {as_is['B/stack']:.0f} B (10 s), "
              f"{m1['B/stack']:.0f} B (1 min), {m10['B/stack']:.0f} B (10 min)")
        day = 86400
        tiers = [("10 s files, 1 h", as_is["B/s"], 3600),
                 ("1 min files, 23 h", m1["B/s"], day - 3600),
                 ("10 min files, 6 days", m10["B/s"], 6 * day)]
        total = 0
        for name, rate, seconds in tiers:
            total += rate * seconds
            print(f"  {name:22} {rate * day / 2**20:8.1f} MiB per day of history, "
                  f"{rate * seconds / 2**20:8.1f} MiB held")
        print(f"steady state at the defaults (a week): {total / 2**20:.0f} MiB; "
              f"{total / 7 / 2**20:.1f} MiB per host-day kept")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


main()
