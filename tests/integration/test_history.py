# SPDX-License-Identifier: LGPL-2.1-or-later
"""The always-on window's closed slices go to the state directory as they
close, so a crash loses at most the open slice: fgd is killed with SIGKILL
after a workload ran through a few 1 s slices, the files it left name the
workload's hot functions, and a daemon started again on the same directory
answers `fgctl snapshot` and `fgctl top` for that time from them. A daemon
whose window is shorter than the period answers top from disk and memory
together, one row per process. A process that outlives the restart has the
same start time, /proc's, in the slices of both daemons. Then a clean stop
writes the open slice too. A sample stored past its slice's end (drained
after the slice closed) counts in the range its time is in, on disk as in
memory."""

import os
import signal
import subprocess
import tempfile
import time

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


def start_times(state, pid):
    """The start times the slices in state give pid, and how many slices name it."""
    # Other processes of the machine are in the slices too, whatever bytes their names hold.
    r = subprocess.run([program("fgtest-history"), "--processes", state], capture_output=True,
                       text=True, errors="replace")
    check(r.returncode == 0, f"fgtest-history failed: {r.stderr}")
    times, slices = set(), set()
    for line in r.stdout.splitlines():
        slice_start, p, start, _ = line.split(" ", 3)
        if int(p) == pid:
            times.add(int(start))
            slices.add(slice_start)
    return times, len(slices)


def proc_start_ns(pid):
    """What /proc says: the boot time plus the process's starttime in clock ticks."""
    with open("/proc/stat") as f:
        btime = next(int(line.split()[1]) for line in f if line.startswith("btime "))
    with open(f"/proc/{pid}/stat") as f:
        ticks = int(f.read().rsplit(")", 1)[1].split()[19])
    return btime * 10**9 + ticks * (10**9 // os.sysconf("SC_CLK_TCK"))


def top_rows(r):
    check(r.returncode == 0, f"fgctl top failed: {r.stderr.decode()}")
    # PID UID COMM CPU% SAMPLES LEAF, after two header lines and a blank one.
    return [line.split() for line in r.stdout.decode().splitlines()[3:]]


def top_samples(d, pid, *period):
    """pid's samples in fgctl top over period; 0 while fgd has none yet."""
    r = d.fgctl("top", *period, "-p", pid)
    if r.returncode != 0:
        return 0
    return sum(int(row[4]) for row in top_rows(r) if int(row[0]) == pid)


def check_top_matches_snapshot(d, period, pid):
    """top's row for pid agrees with a snapshot of the same period: samples, leaf, its count."""
    snap = parse_folded(d.fgctl("snapshot", *period, "-p", pid, "-o", "-", check_rc=0).stdout.decode())
    rows = [row for row in top_rows(d.fgctl("top", *period, "-n", "1000")) if int(row[0]) == pid]
    check(len(rows) == 1, f"pid {pid} is not exactly one row of top: {rows}")
    row = rows[0]
    hot_a = sum(c for s, c in snap.items() if s.endswith(";main;hot_a"))
    print(f"top {' '.join(period)}: {' '.join(row)}; the snapshot has {sum(snap.values())} samples, "
          f"{hot_a} in hot_a")
    check(row[2] == "fgtest-burn" and row[5] == "hot_a", f"not fgtest-burn with leaf hot_a: {row}")
    check(int(row[4]) == sum(snap.values()), f"top counts {row[4]} samples, the snapshot {sum(snap.values())}")
    return row, hot_a


def late_samples():
    """A sample drained after its slice closed lies past the slice's end: a range on disk
    counts it by its time, as the window does, so it counts in one range only."""
    with tempfile.TemporaryDirectory() as tmp:
        slices = os.path.join(tmp, "state", "slices")
        os.makedirs(slices)
        t0 = (int(time.time()) - 600) // 2 * 2 * 1000
        writer = program("fgtest-slice")
        # [t0, t0 + 2 s): one sample inside, one 13 ms after its end (kept in 10 ms
        # ticks: at t0 + 2010); the next slice: one.
        subprocess.run([writer, slices, str(t0), str(t0 + 2000), str(t0 + 500),
                        str(t0 + 2013)], check=True)
        subprocess.run([writer, slices, str(t0 + 2000), str(t0 + 4000), str(t0 + 2500)],
                       check=True)
        conf = os.path.join(tmp, "fgd.conf")
        with open(conf, "w") as f:
            f.write("[fgd]\nHistoryTiers=\n")
        with Daemon(["-c", conf, "--state-directory", os.path.join(tmp, "state")]) as d:
            for lo, hi, want in ((0, 2000, 1), (2000, 4000, 2), (0, 4000, 3), (2010, 2020, 1)):
                r = d.fgctl("snapshot", "--since", f"@{(t0 + lo) / 1000:.3f}",
                            "--until", f"@{(t0 + hi) / 1000:.3f}", "-o", "-")
                got = parse_folded(r.stdout.decode()).get("fgtest-late;main;late", 0)
                check(r.returncode == 0 and got == want,
                      f"[t0+{lo}, t0+{hi}) ms on disk: {got} samples, not {want}: {r.stderr!r}")
    print("late samples on disk count in the range their times say")


def test():
    require_root()
    late_samples()
    with Daemon(["--always-on-frequency", "99", "--slice-seconds", "1"]) as d:
        state = os.path.join(d.dir, "state")
        t0 = int(time.time())
        with workload("fgtest-burn") as w:
            pid = w.pid
            # A few slices' worth, so top has several to sum.
            wait_for(lambda: top_samples(d, pid, "--since", f"@{t0}") > 250, "fgtest-burn sampled")
            # Closed slices appear as files while fgd runs.
            wait_for(lambda: hot(history(state)[0]) > 50, "slices naming fgtest-burn on disk")
        stacks, summary = history(state)
        print(f"before the crash: {summary}, {hot(stacks)} samples of hot_a/hot_b")
        d.kill()
        t1 = int(time.time()) + 1
        # What was on disk is whole: every file reads, none is corrupt.
        stacks, summary = history(state)
        check(summary.endswith("corrupt 0"), f"damaged history after SIGKILL: {summary}")
        check(hot(stacks) > 50, f"the history lost the workload: {summary}")

        # A new daemon on the same state directory answers for the time before it started,
        # from the disk: the workload is gone, its profile is not. It samples at another rate,
        # and weighs the files' counts by theirs.
        with Daemon(["--state-directory", state, "--always-on-frequency", "49"]) as d2:
            r = d2.fgctl("snapshot", "--last", "10m", "--comm", "^fgtest-burn$", "-o", "-")
            check(r.returncode == 0, f"snapshot after the restart failed: {r.stderr.decode()}")
            check(b"taken at another sampling rate than 49 Hz" in r.stderr,
                  f"no word on the 99 Hz history: {r.stderr.decode()}")
            after = parse_folded(r.stdout.decode())
            got = sum(c for s, c in after.items() if s.endswith((";main;hot_a", ";main;hot_b")))
            print(f"after the restart, from disk: {got} samples of hot_a/hot_b")
            check(got > 50, f"the restarted daemon did not read its history: {after}")

            # top, too: the workload from disk alone, its leaf from the slices' summed counts.
            period = ["--since", f"@{t0}", "--until", f"@{t1}"]
            row, hot_a = check_top_matches_snapshot(d2, period, pid)
            reply = d2.query_raw("top", {"since_ms": t0 * 1000, "until_ms": t1 * 1000, "pid": pid})
            check(reply.get("type") == "top", f"top over the protocol: {reply}")
            e, meta = reply["processes"][0], reply["meta"]
            check(e["leaf_samples"] == hot_a, f"leaf_samples {e['leaf_samples']}, the snapshot's hot_a {hot_a}")
            # The share is over the time the slices hold samples for, at the files' 99 Hz.
            check(0 < meta["covered_ms"] <= meta["duration_ms"], f"covered time: {meta}")
            share = 100 * e["samples"] / (99 * meta["covered_ms"] / 1000)
            check(abs(e["cpu_pct"] - share) < 1e-6,
                  f"cpu_pct {e['cpu_pct']}, expected {share}: {meta}")
            # A period with nothing on disk either: an error that says so.
            r = d2.fgctl("top", "--since", "2001-01-01T00:00Z", "--until", "2001-01-01T01:00Z")
            check(r.returncode != 0 and b"no always-on data for that period" in r.stderr,
                  f"top of an empty period: rc {r.returncode}, {r.stderr!r}")

    # A process running across a restart is one process to both daemons.
    with workload("fgtest-burn") as w:
        want = proc_start_ns(w.pid)
        t0 = int(time.time())
        with Daemon(["--always-on-frequency", "99", "--slice-seconds", "1"]) as d:
            state = os.path.join(d.dir, "state")
            wait_for(lambda: start_times(state, w.pid)[1] >= 2, "slices of the first daemon")
            d.kill()
            _, before = start_times(state, w.pid)
            with Daemon(["--state-directory", state, "--always-on-frequency", "99",
                         "--slice-seconds", "1"]) as d2:
                wait_for(lambda: start_times(state, w.pid)[1] >= before + 2,
                         "slices of the second daemon")
                # And one row of top, over the time of both daemons.
                rows = [row for row in top_rows(d2.fgctl("top", "--since", f"@{t0}", "-n", "1000"))
                        if int(row[0]) == w.pid]
                check(len(rows) == 1, f"pid {w.pid} across the restart is not one row of top: {rows}")
            times, n = start_times(state, w.pid)
            print(f"pid {w.pid} in {n} slices across the restart, start times {times}")
            check(times == {want}, f"start times {times} across a restart, /proc says {want}")

    # A window of 2 s: a longer period comes from the disk and from memory, one row per process.
    with Daemon(["--always-on-frequency", "99", "--slice-seconds", "1", "--window-seconds", "2"]) as d:
        t0 = int(time.time())
        with workload("fgtest-burn") as w:
            # Up to a second ago: closed slices only, the latest of them still in memory. More
            # samples than the window's three 1 s slices at 99 Hz hold: the disk's part is needed.
            def period():
                return ["--since", f"@{t0}", "--until", f"@{int(time.time()) - 1}"]

            wait_for(lambda: top_samples(d, w.pid, *period()) > 450,
                     "fgtest-burn's samples beyond the window", timeout=60)
            row, _ = check_top_matches_snapshot(d, period(), w.pid)
            check(int(row[4]) > 450, f"fewer samples than the window alone could hold: {row}")

    # A clean stop in the middle of a long slice writes it, cut short.
    with Daemon(["--always-on-frequency", "99", "--slice-seconds", "3600", "--window-seconds", "3600"]) as d:
        state = os.path.join(d.dir, "state")
        with workload("fgtest-burn"):
            wait_for(lambda: "fgtest-burn" in d.fgctl("top", "--last", "1m").stdout.decode(),
                     "fgtest-burn in the always-on window")
            check(history(state)[0] == {}, "a one-hour slice was written before it closed")
            d.proc.send_signal(signal.SIGTERM)
            check(d.proc.wait(timeout=30) == 0, f"fgd did not stop cleanly:\n{d.logs()}")
        stacks, summary = history(state)
        print(f"after SIGTERM: {summary}, {hot(stacks)} samples of hot_a/hot_b")
        check(hot(stacks) > 0, f"SIGTERM did not write the open slice: {summary}")


run(test)
