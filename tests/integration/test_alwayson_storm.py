# SPDX-License-Identifier: LGPL-2.1-or-later
"""The always-on memory ceiling under storms, against a tiny share of the window's
ceiling for each slice: many short busy processes, each with a name of its own;
then a program whose every sample is a stack never seen before
(fgtest-stackstorm). The window's ceiling is its share of the daemon's memory
budget (--memory-max, a third of it), split evenly between the slices the
window holds (window / slice + 2), so a window hundreds of slices long leaves
each a few tens of KiB. The window's bytes never pass the ceiling, the daemon
survives, what was folded away is counted in status and in the snapshot's
metadata, and the snapshot still adds up."""

import json
import os
import subprocess
import time

from fgdtest import Daemon, check, parse_folded, require_root, run, workload

STORM = r"""
import ctypes, os, sys, time
libc = ctypes.CDLL(None)
n = int(sys.argv[1])
alive = []
for i in range(n):
    pid = os.fork()
    if pid == 0:
        libc.prctl(15, ("storm%d" % i).encode(), 0, 0, 0)  # PR_SET_NAME
        end = time.monotonic() + 0.05
        while time.monotonic() < end:
            pass
        os._exit(0)
    alive.append(pid)
    if len(alive) >= 8:
        os.waitpid(alive.pop(0), 0)
for pid in alive:
    os.waitpid(pid, 0)
"""


def vm_hwm_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def watch_ceiling(d, storm, seconds):
    """Checks the window's bytes against its ceiling every 0.5 s until the storm ends; returns
    their peak and the ceiling."""
    deadline = time.monotonic() + seconds
    peak = ceiling = 0
    while storm.poll() is None:
        check(time.monotonic() < deadline, "the storm did not end in time")
        check(d.proc.poll() is None, f"fgd died under the storm:\n{d.logs()}")
        ao = json.loads(d.fgctl("status", "--json", check_rc=0).stdout)["always_on"]
        ceiling = ao["memory_max"]
        check(ao["bytes"] <= ceiling, f"the window holds {ao['bytes']} bytes, over {ceiling}")
        peak = max(peak, ao["bytes"])
        time.sleep(0.5)
    return peak, ceiling


# The daemon's budget: its window's third is 21.3 MiB. The window is kept long, so each slice's
# share is small: 21.3 MiB / (window / slice + 2).
BUDGET = 64 << 20


def fork_storm():
    # 602 one-second slices: 36 KiB each.
    with Daemon(["--always-on-frequency", "999", "--slice-seconds", "1", "--window-seconds", "600",
                 "--memory-max", str(BUDGET)]) as d:
        before = vm_hwm_kib(d.proc.pid)
        storm = subprocess.Popen(["python3", "-c", STORM, "1500"])
        try:
            peak, ceiling = watch_ceiling(d, storm, 240)
        finally:
            if storm.poll() is None:
                storm.kill()
            storm.wait()
        ao = json.loads(d.fgctl("status", "--json", check_rc=0).stdout)["always_on"]
        folded = ao["total_folded_samples"] + ao["total_unattributed_samples"]
        print(f"window peak {peak} bytes of {ceiling} (slice budget {ao['slice_budget']}); folded "
              f"away {folded} samples; fgd VmHWM {before} -> {vm_hwm_kib(d.proc.pid)} KiB")
        check(ceiling == BUDGET // 3 // 1024 * 1024 or abs(ceiling - BUDGET // 3) < 1024,
              f"the window's ceiling {ceiling} is not a third of the budget {BUDGET}")
        check(folded > 0, f"the ceiling folded nothing away: {ao}")
        text = d.fgctl("status", check_rc=0).stdout.decode()
        check("folded away by the memory ceiling" in text, f"status does not show it:\n{text}")

        r = d.fgctl("snapshot", "--last", "10s", "-f", "folded", "-o", "-", check_rc=0)
        total = sum(int(l.rsplit(" ", 1)[1]) for l in r.stdout.decode().splitlines())
        check(b"folded into [other] by the memory ceiling" in r.stderr, f"summary: {r.stderr!r}")
        check(total > 0, "the snapshot is empty")
        # The whole daemon is within its budget (test_memory_budget checks the RSS against it);
        # this checks only that it stays sane under the storm.
        hwm = vm_hwm_kib(d.proc.pid)
        check(hwm < 400 << 10, f"fgd's peak RSS reached {hwm} KiB")


def stack_storm():
    # Room for some of the storm's stacks in each slice even when other processes (a parallel
    # test run) take their share; too little for the new stacks it makes a slice: one thread
    # at 999 Hz makes about a thousand. On an otherwise idle machine CI once saw them take
    # about 90 KB a slice, which the 150 KiB slices of a 140 s window held whole.
    # 302 one-second slices, 72 KiB each.
    with Daemon(["--always-on-frequency", "999", "--slice-seconds", "1", "--window-seconds", "300",
                 "--memory-max", str(BUDGET)]) as d:
        with workload("fgtest-stackstorm", 12) as storm:
            peak, ceiling = watch_ceiling(d, storm, 60)
            check(storm.returncode == 0, f"fgtest-stackstorm exited {storm.returncode}")
        ao = json.loads(d.fgctl("status", "--json", check_rc=0).stdout)["always_on"]
        print(f"window peak {peak} bytes of {ceiling}; {ao['total_folded_stacks']} stacks and "
              f"{ao['total_folded_samples']} samples folded into [other]")
        check(ao["total_folded_stacks"] > 0 and ao["total_folded_samples"] > 0,
              f"the ceiling folded nothing away: {ao}")

        # The storm's own samples: some stacks of its step functions kept, the rest in [other].
        r = d.fgctl("snapshot", "--last", "15s", "--comm", "^fgtest-stacks", "-f", "folded",
                    "-o", "-", check_rc=0)
        stacks = parse_folded(r.stdout.decode())
        other = sum(n for st, n in stacks.items() if st.endswith(";[other]"))
        kept = [st for st in stacks if ";step" in st]
        check(other > 0, f"no [other] in the storm's snapshot: {list(stacks)[:5]}")
        check(len(kept) > 0, f"no stack of the storm kept: {list(stacks)[:5]}")
        check(b"folded into [other] by the memory ceiling" in r.stderr, f"summary: {r.stderr!r}")


def test():
    require_root()
    fork_storm()
    stack_storm()


run(test)
