# SPDX-License-Identifier: LGPL-2.1-or-later
"""The always-on window's closed slices go to the state directory as they
close, so a crash loses at most the open slice: fgd is killed with SIGKILL
after a workload ran through a few 1 s slices, the files it left name the
workload's hot functions, and a daemon started again on the same directory
answers `fgctl snapshot` for that time from them. Then a clean stop writes
the open slice too."""

import os
import signal
import subprocess

from fgdtest import Daemon, check, parse_folded, program, require_root, run, wait_for, workload


def history(state):
    r = subprocess.run([program("fgtest-history"), state], capture_output=True, text=True)
    check(r.returncode == 0, f"fgtest-history failed: {r.stderr}")
    stacks = {}
    for line in r.stdout.splitlines():
        frames, count = line.rsplit(" ", 1)
        stacks[frames] = stacks.get(frames, 0) + int(count)
    return stacks, r.stderr.strip()


def hot(stacks):
    return sum(c for s, c in stacks.items()
               if s.startswith("fgtest-burn;") and s.endswith((";main;hot_a", ";main;hot_b")))


def test():
    require_root()
    with Daemon(["--always-on-frequency", "99", "--slice-seconds", "1"]) as d:
        state = os.path.join(d.dir, "state")
        with workload("fgtest-burn"):
            # Closed slices appear as files while fgd runs.
            wait_for("slices naming fgtest-burn on disk", lambda: hot(history(state)[0]) > 50, 30)
        stacks, summary = history(state)
        print(f"before the crash: {summary}, {hot(stacks)} samples of hot_a/hot_b")
        d.kill()
        # What was on disk is whole: every file reads, none is corrupt.
        stacks, summary = history(state)
        check(summary.endswith("corrupt 0"), f"damaged history after SIGKILL: {summary}")
        check(hot(stacks) > 50, f"the history lost the workload: {summary}")

        # A new daemon on the same state directory answers for the time before it started,
        # from the disk: the workload is gone, its profile is not.
        with Daemon(["--state-directory", state]) as d2:
            r = d2.fgctl("snapshot", "--last", "10m", "--comm", "^fgtest-burn$", "-o", "-")
            check(r.returncode == 0, f"snapshot after the restart failed: {r.stderr.decode()}")
            after = parse_folded(r.stdout.decode())
            got = sum(c for s, c in after.items() if s.endswith((";main;hot_a", ";main;hot_b")))
            print(f"after the restart, from disk: {got} samples of hot_a/hot_b")
            check(got > 50, f"the restarted daemon did not read its history: {after}")

    # A clean stop in the middle of a long slice writes it, cut short.
    with Daemon(["--always-on-frequency", "99", "--slice-seconds", "3600", "--window-seconds", "3600"]) as d:
        state = os.path.join(d.dir, "state")
        with workload("fgtest-burn"):
            wait_for("fgtest-burn in the always-on window",
                     lambda: "fgtest-burn" in d.fgctl("top", "--last", "1m").stdout.decode(), 30)
            check(history(state)[0] == {}, "a one-hour slice was written before it closed")
            d.proc.send_signal(signal.SIGTERM)
            check(d.proc.wait(timeout=30) == 0, f"fgd did not stop cleanly:\n{d.logs()}")
        stacks, summary = history(state)
        print(f"after SIGTERM: {summary}, {hot(stacks)} samples of hot_a/hot_b")
        check(hot(stacks) > 0, f"SIGTERM did not write the open slice: {summary}")


run(test)
