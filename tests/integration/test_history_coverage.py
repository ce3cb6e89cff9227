# SPDX-License-Identifier: LGPL-2.1-or-later
"""One period, one answer, before and after compaction (issue 28, finding 4).

A one-thread busy loop (fgtest-burn) runs under 1 s slices whose files are
merged into 4 s ones once 20 s old. top over the same 8 s, aligned to the
merged files, is asked while the 1 s files are on disk and again once they
are merged: the same samples, the same covered time (the whole 8 s: slices
abut, so no drain round between two of them is left out) and so the same
CPU%, which is the samples' own share of the period at 99 Hz.

Before, each slice started at the tick that noticed the previous one's end,
so the 1 s files left gaps whose samples counted but whose time did not: top
said more CPU% than the samples gave, and after the merge (a file spanning
its sources, gaps included) less."""

import json
import os
import re
import tempfile
import time

from fgdtest import Daemon, check, require_root, run, wait_for, workload

TIER_AGE = 20  # s before 1 s files become 4 s ones
HZ = 99


def period_files(slices, start, end):
    """The slice files starting in [start, end) as [(start, end)] in s (floats)."""
    out = []
    for name in os.listdir(slices):
        m = re.fullmatch(r"(\d{20})-(\d{20})\.fgdh", name)
        if m and start * 10**9 <= int(m.group(1)) < end * 10**9:
            out.append((int(m.group(1)) / 1e9, int(m.group(2)) / 1e9))
    return sorted(out)


def top(d, pid, start, end):
    reply = d.query_raw("top", {"since_ms": start * 1000, "until_ms": end * 1000, "pid": pid})
    check(reply.get("type") == "top", f"top failed: {reply}")
    row, meta = reply["processes"][0], reply["meta"]
    return row["samples"], meta["covered_ms"], row["cpu_pct"], meta


def test():
    require_root()
    with tempfile.NamedTemporaryFile("w", prefix="fgd-test-", suffix=".conf") as conf:
        conf.write(f"[fgd]\nHistoryTiers={TIER_AGE}s:4s\nHistoryKeepSec=1h\n")
        conf.flush()
        with Daemon(["--config", conf.name, "--always-on-frequency", str(HZ), "--slice-seconds",
                     "1", "--window-seconds", "2"]) as d, workload("fgtest-burn") as w:
            slices = os.path.join(d.dir, "state", "slices")
            start = (int(time.time()) + 2) // 4 * 4 + 4
            end = start + 8
            wait_for(lambda: time.time() >= end + 4, "the period to leave the window", 60)
            files = period_files(slices, start, end)
            check(len(files) == 8 and len({int(a) for a, _ in files}) == 8,
                  f"expected eight 1 s files in [{start}, {end}): {files}")
            before = top(d, w.pid, start, end)
            check(period_files(slices, start, end) == files,
                  "the files changed during the query: the machine is too slow for this test")
            samples, covered, pct, meta = before
            print(f"1 s files: {samples} samples, {covered} ms covered, {pct:.2f}% CPU")
            # Slices abut: the 8 s are covered, once, and CPU% is the samples' share of them.
            check(covered == 8000, f"8 s of slices cover {covered} ms: {meta}")
            check(abs(pct - 100 * samples / (HZ * 8)) < 1e-6,
                  f"{pct}% is not the samples' share ({samples} at {HZ} Hz over 8 s)")
            check(meta.get("gap_count") == 0, f"the period has gaps: {meta}")

            wait_for(lambda: len(period_files(slices, start, end)) == 2, "4 s files",
                     TIER_AGE + 40)
            check(period_files(slices, start, end) == [(start, start + 4), (start + 4, end)],
                  f"not the aligned 4 s files: {period_files(slices, start, end)}")
            after = top(d, w.pid, start, end)
            print(f"4 s files: {after[0]} samples, {after[1]} ms covered, {after[2]:.2f}% CPU")
            # The same figures (CPU% summed per file, in another order: to rounding).
            check(after[:2] == before[:2] and abs(after[2] - before[2]) < 1e-9,
                  f"the same period gives another answer after compaction: {after[:3]}, "
                  f"before {before[:3]}")
            # Snapshot's figures agree too.
            r = d.fgctl("snapshot", "--since", f"@{start}", "--until", f"@{end}", "-p", w.pid,
                        "--json", "-o", os.path.join(d.dir, "out.svg"), check_rc=0)
            snap = json.loads(r.stdout)
            check(snap["covered_ms"] == 8000 and snap["samples"] == samples,
                  f"snapshot after compaction: {snap}")


if __name__ == "__main__":
    run(test)
