# SPDX-License-Identifier: LGPL-2.1-or-later
"""Always-on sampling: a workload started before the query shows up in a
snapshot of the window with its known hot functions (hot_a 75%, hot_b 25%),
selectors narrow it, fgctl top ranks it first with hot_a as its leaf, a
period with no data is an error with a message, status shows the window,
and a recording alongside neither disturbs it nor is disturbed. The sampler's
location memo is dropped once it is older than the window (so that it does
not keep every binary it ever named in memory), and names come back right
after."""

import json
import re
import signal
import subprocess

from fgdtest import FGCTL, Daemon, check, parse_folded, require_root, run, wait_for, workload


def memo_follows_the_window():
    with Daemon(["--always-on-frequency", "99", "--slice-seconds", "1",
                 "--window-seconds", "3"]) as d, workload("fgtest-inline") as w:
        def always_on():
            return json.loads(d.fgctl("status", "--json", check_rc=0).stdout)["always_on"]

        def inline_frames():
            r = d.fgctl("snapshot", "--last", "1s", "-p", w.pid, "-f", "folded", "-o", "-")
            return r.returncode == 0 and b"fgtest_outer;fgtest_middle;fgtest_inner" in r.stdout

        def dropped_twice():
            ao = always_on()
            return ao if ao["memo_resets"] >= 2 else None

        # Far below its 32 MiB cap, the memo is dropped for its age: twice within 20 s.
        ao = wait_for(dropped_twice, "two drops of the memo", timeout=20)
        check(ao["memo_bytes"] < 32 << 20, f"the memo was dropped for its size: {ao}")
        # Locations named anew from the binary, DWARF inline frames and all.
        wait_for(inline_frames, "fgtest-inline's inline frames after the drops")


def test():
    require_root()
    memo_follows_the_window()
    # 99 Hz and 2 s slices so a few seconds give enough samples to check proportions.
    with Daemon(["--always-on-frequency", "99", "--slice-seconds", "2"]) as d, \
            workload("fgtest-burn") as w:
        def enough():
            r = d.fgctl("snapshot", "--last", "30s", "-p", w.pid, "-o", "-")
            if r.returncode != 0:
                return None
            stacks = parse_folded(r.stdout.decode())
            return stacks if sum(stacks.values()) >= 600 else None

        stacks = wait_for(enough, "600 always-on samples of fgtest-burn", timeout=60)
        total = sum(stacks.values())
        check(all(s.startswith("fgtest-burn;") for s in stacks), f"foreign stacks: {list(stacks)[:3]}")
        a = sum(c for s, c in stacks.items() if s.endswith(";main;hot_a"))
        b = sum(c for s, c in stacks.items() if s.endswith(";main;hot_b"))
        print(f"{total} samples: hot_a {a / total:.1%}, hot_b {b / total:.1%}")
        check(abs(a / total - 0.75) < 0.07, f"hot_a has {a / total:.1%}, expected 75%")
        check(abs(b / total - 0.25) < 0.07, f"hot_b has {b / total:.1%}, expected 25%")

        # Selectors combine: the right comm and exe keep it, a wrong one leaves nothing.
        r = d.fgctl("snapshot", "--last", "30s", "--comm", "^fgtest-bu", "--exe", "fgtest-burn",
                    "--uid", "0", "-o", "-", check_rc=0)
        check("hot_a" in r.stdout.decode(), "comm/exe/uid selectors lost the workload")
        r = d.fgctl("snapshot", "--last", "30s", "-p", w.pid, "--comm", "^nomatch$", "-o", "-")
        check(r.returncode != 0 and b"no samples of the selected processes" in r.stderr,
              f"an empty selection must say so: rc {r.returncode}, {r.stderr!r}")

        # A period before the daemon started: an error that says so, and no output file.
        r = d.fgctl("snapshot", "--since", "2001-01-01T00:00Z", "--until", "2001-01-01T01:00Z",
                    "-o", d.dir + "/old.svg")
        check(r.returncode != 0 and b"no always-on data for that period" in r.stderr,
              f"a period without data must be an error: rc {r.returncode}, {r.stderr!r}")
        check(not __import__("os").path.exists(d.dir + "/old.svg"), "an empty graph was written")

        # The whole machine as SVG, with the summary.
        r = d.fgctl("snapshot", "--last", "5m", "-o", d.dir + "/now.svg", check_rc=0)
        with open(d.dir + "/now.svg") as f:
            svg = f.read()
        check(svg.startswith("<?xml") and "hot_a" in svg, "the SVG lacks the workload")
        check(b"folded into [other]" in r.stderr, f"no summary: {r.stderr!r}")

        # top: the burner listed (other tests may be as busy), its leaf hot_a, busiest first;
        # the text is UTF-8 whatever bytes names hold: a process named with 15 bytes that are
        # not UTF-8 is 15 U+FFFD, whole (a cut at 16 bytes went through a character).
        odd = subprocess.Popen(["python3", "-c", "import ctypes\n"
                                "ctypes.CDLL(None).prctl(15, b'\\xff' * 15)\n"
                                "print('ready', flush=True)\nwhile True: pass"],
                               stdout=subprocess.PIPE)
        try:
            check(odd.stdout.readline() == b"ready\n", "the oddly named process did not start")
            wait_for(lambda: "\ufffd" * 15 in d.fgctl("top", "--last", "30s", "-n", "1000")
                     .stdout.decode(), "the oddly named process in top")
            r = d.fgctl("top", "--last", "30s", "-n", "1000", check_rc=0)
        finally:
            odd.kill()
            odd.wait()
        out = r.stdout.decode()
        print(out)
        rows = [re.match(r" *(\d+) +\d+ (.{16}) +([\d.]+)% +\d+  (.*)$", l)
                for l in out.splitlines()[3:]]
        check(all(rows), f"top's lines are not its columns:\n{out}")
        mine = [row for row in rows if int(row[1]) == w.pid]
        check(mine and mine[0][4] == "hot_a", f"fgtest-burn missing or its leaf is not hot_a:\n{out}")
        check(any(row[2] == "\ufffd" * 15 + " " for row in rows), f"the odd name:\n{out}")
        shares = [float(row[3]) for row in rows]
        check(shares == sorted(shares, reverse=True), f"not busiest first:\n{out}")
        r = d.fgctl("top", "--last", "30s", "-n", "2", check_rc=0)
        check(len(r.stdout.decode().splitlines()[3:]) <= 2, "-n 2 shows more than two")
        r = d.fgctl("top", "--last", "30s", "-p", w.pid, check_rc=0)
        rows = [l.split() for l in r.stdout.decode().splitlines()[3:]]
        check(len(rows) == 1 and int(rows[0][0]) == w.pid, f"top -p: {rows}")

        # --json: what scripts read, the same figures.
        top = json.loads(d.fgctl("top", "--last", "30s", "-p", w.pid, "--json",
                                 check_rc=0).stdout)
        procs = top["processes"]
        check(len(procs) == 1 and procs[0]["pid"] == w.pid and procs[0]["leaf"] == "hot_a" and
              procs[0]["samples"] > 0 and top["meta"]["samples"] > 0, f"top --json: {top}")
        # --watch --json: a line a refresh, until Ctrl-C, which ends it cleanly (status 0).
        watch = subprocess.Popen([FGCTL, "--socket", d.socket, "top", "--last", "30s", "-p",
                                  str(w.pid), "-w", "-i", "1", "--json"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        lines = [watch.stdout.readline(), watch.stdout.readline()]
        watch.send_signal(signal.SIGINT)
        out, err = watch.communicate(timeout=30)
        check(all(json.loads(l)["processes"][0]["pid"] == w.pid for l in lines) and
              watch.returncode == 0 and not err,
              f"top -w: {watch.returncode} {err!r} {lines!r}")
        snap = json.loads(d.fgctl("snapshot", "--last", "30s", "-p", w.pid, "--json",
                                  "-o", d.dir + "/j.folded", check_rc=0).stdout)
        check(snap["samples"] > 0 and snap["processes"] >= 1, f"snapshot --json: {snap}")
        rec = json.loads(d.fgctl("record", "-p", w.pid, "-t", "1", "--json",
                                 "-o", d.dir + "/j.svg", check_rc=0).stdout)
        check(rec["samples"] > 0 and "lost" in rec and "stack_quality" in rec,
              f"record --json: {sorted(rec)}")
        r = d.fgctl("record", "-p", w.pid, "-t", "1", "--json", "-o", "-", check_rc=2)
        check(b"--json writes the summary to stdout" in r.stderr, f"{r.stderr!r}")

        # render's graph options on a snapshot: drawn here.
        d.fgctl("snapshot", "--last", "30s", "-p", w.pid, "--width", "700", "--inverted",
                "--subtitle", "drawn here", "-o", d.dir + "/ic.svg", check_rc=0)
        with open(d.dir + "/ic.svg") as f:
            svg = f.read()
        check('width="700"' in svg and "drawn here" in svg and "hot_a" in svg,
              "snapshot's graph options were not drawn")

        # A recording alongside gets its own samples at its own rate.
        r = d.fgctl("record", "-p", w.pid, "-t", "2", "-F", "499", "-o", "-", check_rc=0)
        rec = parse_folded(r.stdout.decode())
        check(sum(rec.values()) > 400, f"the recording alongside got {sum(rec.values())} samples")

        st = json.loads(d.fgctl("status", "--json", check_rc=0).stdout)
        ao = st["always_on"]
        check(ao["enabled"] and ao["frequency"] == 99, f"status: {ao}")
        check(ao["bytes"] <= ao["memory_max"], f"over the ceiling: {ao}")
        check("total_folded_samples" in ao, "status lacks the folded-away count")
        text = d.fgctl("status", check_rc=0).stdout.decode()
        check("always-on" in text and "folded" in text, f"fgctl status does not show the window:\n{text}")


run(test)
