# SPDX-License-Identifier: LGPL-2.1-or-later
"""History compaction with tiny tiers: 1 s slices become 2 s files after 30 s
and 4 s files after 50 s. A period of 8 s of a known workload (fgtest-burn)
is queried from disk three times, as 1 s, 2 s and 4 s files: the same
samples each time, hot functions included (a merge neither loses nor
duplicates). Status counts the merges, the files on disk are the aligned
coarse ones, and a query inside a coarse file is answered from its
samples' times (10 ms ticks, merged with the files): the samples of that
second, as the 1 s file held them, and its span reported as the query's."""

import json
import os
import re
import tempfile
import time

from fgdtest import Daemon, check, parse_folded, require_root, run, wait_for, workload

SLICE_AGE_1, SLICE_AGE_2 = 30, 50  # the tiers' ages, s


def files(state):
    """The slice files on disk as [(start, end)] in whole seconds, sorted.

    A slice ends on a multiple of its length, and starts when the daemon's
    loop opened it, a little after the previous one's end: whole seconds
    name the period it belongs to."""
    out = []
    for name in os.listdir(os.path.join(state, "slices")):
        if name.endswith(".fgdh"):
            a, b = name[:-len(".fgdh")].split("-")
            out.append((int(a) // 10**9, int(b) // 10**9))
    return sorted(out)


def period_files(state, start, end):
    return [(a, b) for a, b in files(state) if start <= a < end]


def wait_until(t):
    """Until the wall clock reaches t (Unix s), in short polls."""
    wait_for(lambda: time.time() >= t, f"the clock to reach {t}", t - time.time() + 30)


def snapshot(d, pid, start, end):
    """fgctl snapshot of [start, end) for the workload: (all its samples, hot_a + hot_b).

    The pid too: other tests may run burners of the same name meanwhile."""
    r = d.fgctl("snapshot", "--since", f"@{start}", "--until", f"@{end}", "--comm", "^fgtest-burn$",
                "-p", pid, "-o", "-", check_rc=0)
    stacks = parse_folded(r.stdout.decode())
    hot = sum(c for s, c in stacks.items() if s.endswith((";main;hot_a", ";main;hot_b")))
    return sum(stacks.values()), hot


def test():
    require_root()
    with tempfile.NamedTemporaryFile("w", prefix="fgd-test-", suffix=".conf") as conf:
        conf.write(f"[fgd]\nHistoryTiers={SLICE_AGE_1}s:2s {SLICE_AGE_2}s:4s\nHistoryKeepSec=1h\n")
        conf.flush()
        run_with(conf.name)


def run_with(conf):
    with Daemon(["--config", conf, "--always-on-frequency", "99", "--slice-seconds", "1",
                 "--window-seconds", "2"]) as d, workload("fgtest-burn") as w:
        state = os.path.join(d.dir, "state")
        status = json.loads(d.fgctl("status", "--json", check_rc=0).stdout)
        h = status["always_on"]["history"]
        check([(t["age_seconds"], t["length_seconds"]) for t in h["tiers"]] ==
              [(SLICE_AGE_1, 2), (SLICE_AGE_2, 4)] and h["keep_seconds"] == 3600,
              f"status does not show the configured tiers: {h}")

        # A period of 8 s aligned to the coarsest tier, after fgd's first (short) slice.
        start = (int(time.time()) + 2) // 4 * 4 + 4
        end = start + 8

        # Out of the window (2 s) but younger than the first tier: 1 s files on disk.
        wait_until(end + 4)
        before = period_files(state, start, end)
        check(len(before) == 8 and all(b - a == 1 for a, b in before),
              f"expected eight 1 s files in [{start}, {end}), found {before}")
        total, hot = snapshot(d, w.pid, start, end)
        second, _ = snapshot(d, w.pid, start + 1, start + 2)
        check(period_files(state, start, end) == before,
              "the files changed during the first snapshot: the machine is too slow for this test")
        print(f"1 s files: {total} samples of fgtest-burn, {hot} in hot_a/hot_b")
        check(hot > 100, f"too few samples of the workload to compare: {total}, {hot}")

        # First tier: four 2 s files.
        two = [(start + i, start + i + 2) for i in range(0, 8, 2)]
        wait_for(lambda: period_files(state, start, end) == two, "2 s files", SLICE_AGE_1 + 30)
        check(snapshot(d, w.pid, start, end) == (total, hot),
              f"2 s files hold other samples: {snapshot(d, w.pid, start, end)}, expected {(total, hot)}")

        # Second tier: two 4 s files.
        four = [(start, start + 4), (start + 4, end)]
        wait_for(lambda: period_files(state, start, end) == four, "4 s files", SLICE_AGE_2 + 30)
        check(snapshot(d, w.pid, start, end) == (total, hot),
              f"4 s files hold other samples: {snapshot(d, w.pid, start, end)}, expected {(total, hot)}")
        print(f"after two merges: the same {total} samples, {hot} in hot_a/hot_b")

        # A query inside a coarse file takes the samples of its range, by their times.
        result, data = d.record_raw({"since_ms": (start + 1) * 1000, "until_ms": (start + 2) * 1000,
                                     "pid": w.pid, "format": "folded"}, cmd="snapshot")
        meta = result["meta"]
        check((meta["first_ms"], meta["last_ms"]) == ((start + 1) * 1000, (start + 2) * 1000),
              f"a query of [{start + 1}, {start + 2}) reports {meta['first_ms']}..{meta['last_ms']}")
        n = sum(parse_folded(data.decode()).values())
        # The 1 s file also held what was taken just before it began and added after.
        check(abs(n - second) <= max(3, second // 20),
              f"{n} samples of [{start + 1}, {start + 2}) from the 4 s file, {second} from the 1 s one")
        check(meta["untimed_slices"] == 0, f"the merged files lost their times: {meta}")

        status = json.loads(d.fgctl("status", "--json", check_rc=0).stdout)
        h = status["always_on"]["history"]
        print(f"history: {h}")
        # At least: the period's four 2 s merges (two sources each) and two 4 s merges.
        check(h["merged"] >= 6 and h["merged_sources"] >= 12, f"merges not counted: {h}")
        check(h["compact_errors"] == 0 and h["corrupt"] == 0 and h["corrupt_dropped"] == 0,
              f"compaction failed: {h}")
        check(h["files"] == len(files(state)), f"status counts {h['files']} files, the disk holds "
              f"{len(files(state))}")
        text = d.fgctl("status", check_rc=0).stdout.decode()
        m = re.search(r"compaction: (\d+) merged files from (\d+) .* (\d+) errors", text)
        check(m and int(m.group(1)) >= h["merged"] and int(m.group(3)) == 0,
              f"fgctl status does not show compaction:\n{text}")


run(test)
