#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What fgd holds after an off-CPU storm is charged to its budget's parts,
and its peak stays within the budget (issue 28, finding 5).

fgd runs with always-on off-CPU (OffCpu=yes, DWARF mode: its ring, 16 MiB
mapped twice, is resident from its mmap) at the default MemoryMax=. A
Python program of 1,000 threads, each sleeping 1 ms in a loop, storms it,
and root records it off-CPU (a second ring, sized by what the budget has
room for). Then:
  - status's RSS peak is the process's own, the kernel's VmHWM: from the one
    read before the status request to 1 MiB over the one after (VmHWM lags
    memory given back without an unmap); before, the peak was the largest
    RSS seen at a tick, and missed a recording's rings;
  - what fgd holds resident is charged to its parts, or is its base: RSS
    exceeds charged + base by less than 8 MiB (before, the rings were
    charged to no part: always-on's 32 MiB counted as fgd's own code, or,
    turned on by a reload, as nothing at all);
  - the rings are a part of their own in status, holding always-on's ring
    and, at their peak, the recording's as its metadata gives its size;
  - VmHWM stayed within the budget (before: 98 to 100 MiB of a 96 MiB one,
    the recording's 32 MiB ring on top of everything else).
Skipped under AddressSanitizer (its shadow memory is RSS that is not fgd's)
and where off-CPU is unavailable.
"""

import json
import os
import sys
import tempfile

from fgdtest import Daemon, check, ready_process, require_root, run, sanitized, skip

MIB = 1 << 20
THREADS = 1000
STORM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "programs",
                     "fgtest-gilstorm.py")


def vm_bytes(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(key)


def test():
    require_root()
    if sanitized():
        skip("RSS under AddressSanitizer is the sanitizer's as much as fgd's")
    with tempfile.TemporaryDirectory() as tmp:
        conf = os.path.join(tmp, "fgd.conf")
        with open(conf, "w") as f:
            f.write("[fgd]\nOffCpu=yes\n")
        with Daemon(["--config", conf]) as d:
            st = d.status()
            if not st.get("off_cpu", {}).get("always_on"):
                skip(f"always-on off-CPU is unavailable here: {d.logs()}")
            rings_before = st["memory"]["parts"].get("rings", {}).get("bytes", 0)
            with ready_process([sys.executable, STORM, str(THREADS)], "the storm") as storm:
                r = d.fgctl("record", "--off-cpu", "-p", storm.pid, "-t", "5", "-f", "folded",
                            "-o", os.path.join(tmp, "storm.folded"), "--json")
                check(r.returncode == 0, f"the off-CPU recording failed: {r.stderr.decode()}")
                meta = json.loads(r.stdout)
            ring = meta["off_cpu"].get("ring_bytes", 16 * MIB)

            pid = d.proc.pid
            hwm_before = vm_bytes(pid, "VmHWM")
            m = d.status()["memory"]
            hwm_after = vm_bytes(pid, "VmHWM")
            rings = m["parts"].get("rings", {"bytes": 0, "peak": 0})
            print(f"after the storm: RSS {m['rss'] / MIB:.1f} MiB (peak {m['rss_peak'] / MIB:.1f}, "
                  f"VmHWM {hwm_after / MIB:.1f}) of {m['budget'] / MIB:.0f} MiB; charged "
                  f"{m['charged'] / MIB:.1f} (rings {rings['bytes'] / MIB:.1f}, peak "
                  f"{rings['peak'] / MIB:.1f}; the recording's ring {ring / MIB:.0f} MiB), base "
                  f"{m['base'] / MIB:.1f}")
            # The kernel's peak, or an RSS seen higher: VmHWM is brought up to date only as
            # memory is unmapped, so memory given back otherwise may leave it a little low.
            check(hwm_before <= m["rss_peak"] <= hwm_after + MIB,
                  f"status's peak {m['rss_peak']} is not the process's VmHWM "
                  f"({hwm_before} to {hwm_after})")
            uncharged = m["rss"] - m["charged"] - m["base"]
            check(uncharged < 8 * MIB, f"{uncharged / MIB:.1f} MiB resident is charged to no part")
            check(hwm_after <= m["budget"],
                  f"VmHWM {hwm_after / MIB:.1f} MiB passed the budget {m['budget'] / MIB:.0f}")
            # Always-on's off-CPU ring, 16 MiB mapped twice, and the tracking rings.
            check(rings["bytes"] >= 32 * MIB, f"the rings part holds {rings['bytes']} bytes")
            check(rings["peak"] >= rings_before + 2 * ring,
                  f"the recording's ring ({ring} bytes, mapped twice) was not charged: "
                  f"peak {rings['peak']}, before the recording {rings_before}")


run(test)
