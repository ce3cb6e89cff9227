# SPDX-License-Identifier: LGPL-2.1-or-later
"""A storm of off-CPU blocks: N threads (the first argument), each sleeping 1 ms in a loop,
and so waiting for the GIL as often (test_offcpu_storm.py, bench_offcpu_storm.py).

The threads start held, so that thousands of them start in a second rather than fighting
the GIL from the first one on (minutes); all go at once, then "ready" is printed. It runs
until it is killed."""

import sys
import threading
import time

go = threading.Event()


def sleeper():
    go.wait()
    while True:
        time.sleep(0.001)


for _ in range(int(sys.argv[1])):
    threading.Thread(target=sleeper, daemon=True).start()
go.set()
print("ready", flush=True)
threading.Event().wait()
