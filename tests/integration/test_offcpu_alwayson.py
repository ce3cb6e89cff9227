# SPDX-License-Identifier: LGPL-2.1-or-later
"""Always-on off-CPU (OffCpu=yes in fgd.conf): fgctl snapshot --off-cpu
answers from the window, and from the history once fgd restarted.

fgtest-block sleeps 30 ms under block_long() and 10 ms under block_short(),
in turn; fgtest-block-nofp is the same built by gcc -O2 without frame
pointers. Both run while fgd keeps off-CPU always on (DWARF mode, its
default), with 1 s slices in a 60 s window:
  - a snapshot --off-cpu of each holds about the seconds it slept (µs), with
    block_long three quarters of it (within 5 points), and 95% of the time
    or more with the kernel path that blocked (do_nanosleep_[k]) and a user
    stack that reaches main, also in the build without frame pointers (a
    block whose stack could not be taken is counted in status);
  - the SVG counts "us" in the blue off-CPU palette, and says "off-CPU";
  - status shows the source (blocks, and what was lost) and its window, and
    its history in the state directory's off-cpu/;
  - the on-CPU snapshot of the same sleeper holds no blocked time;
  - after fgd stopped and started again on the same state directory, the
    same period's snapshot --off-cpu comes from the history on disk, with the
    same split.
fgd without OffCpu= refuses snapshot --off-cpu and says how to turn it on;
a top request for off-CPU is refused by the protocol. Skipped where fgd says
off-CPU is unavailable."""

import json
import os
import re
import shutil
import tempfile
import time

from fgdtest import Daemon, check, parse_folded, require_root, run, skip, wait_for, workload


def shares(stacks):
    total = sum(stacks.values())
    long_us = sum(c for s, c in stacks.items() if ";block_long;" in s)
    short_us = sum(c for s, c in stacks.items() if ";block_short;" in s)
    return total, long_us, short_us


def snapshot(d, pid, *args):
    return d.fgctl("snapshot", "--off-cpu", "-p", pid, "-f", "folded", "-o", "-", *args)


def check_split(stacks, what):
    total, long_us, short_us = shares(stacks)
    share = long_us / max(long_us + short_us, 1)
    print(f"{what}: {total} us, block_long {share:.1%}")
    check(long_us + short_us >= 0.95 * total, f"{what}: blocks outside block_long/short: {stacks}")
    check(abs(share - 0.75) <= 0.05, f"{what}: block_long has {share:.1%}, not 75%")
    for stack, count in stacks.items():
        frames = stack.split(";")
        # The window has the process from its fork on: the little before its exec is python3's.
        if count > total / 100:
            check(frames[0].startswith("fgtest-block"), f"{what}: root frame {frames[0]!r}")
    # A block may lack a stack, counted in status (stacks_not_taken, user_dump_failed): not
    # the bulk of the time. The kernel path, and the user stack down from main.
    kernel = sum(c for s, c in stacks.items() if ";do_nanosleep_[k];" in s)
    whole = sum(c for s, c in stacks.items() if re.search(r";main;block_(long|short);sleep_ns;", s))
    print(f"{what}: {kernel / total:.1%} with the kernel path, {whole / total:.1%} reaching main")
    check(kernel >= 0.95 * total, f"{what}: only {kernel / total:.1%} has the kernel path: {stacks}")
    check(whole >= 0.95 * total, f"{what}: only {whole / total:.1%} of the time reaches main")
    return total


def test():
    require_root()
    conf_dir = tempfile.mkdtemp(prefix="fgd-test-offcpu-conf-")
    try:
        with_conf(conf_dir)
    finally:
        shutil.rmtree(conf_dir, ignore_errors=True)


def with_conf(conf_dir):
    state = os.path.join(conf_dir, "state")
    conf = os.path.join(conf_dir, "fgd.conf")
    with open(conf, "w") as f:
        # 1 s slices in a 60 s window: each slice's share of the window's memory holds the
        # whole machine's blocked stacks of a second, even under ASan, without [other].
        f.write("[fgd]\nOffCpu=yes\nSliceSec=1\nWindowSec=60\n")
    args = ["--config", conf, "--state-directory", state]

    with Daemon(args) as d:
        status = json.loads(d.fgctl("status", "--json", check_rc=0).stdout)
        off = status["off_cpu"]
        if not off.get("available"):
            skip(f"off-CPU is unavailable here: {off.get('why')}")
        check(off.get("always_on") is True, f"always-on off-CPU is not running: {off}\n{d.logs()}")
        since = time.time()

        with workload("fgtest-block") as fp, workload("fgtest-block-nofp") as nofp:
            def slept(pid, seconds):
                def enough():
                    r = snapshot(d, pid, "--last", "1m")
                    if r.returncode != 0:
                        return None
                    stacks = parse_folded(r.stdout.decode())
                    return stacks if sum(stacks.values()) >= seconds * 1e6 else None
                return enough

            fp_stacks = wait_for(slept(fp.pid, 3), "3 s of fgtest-block's blocks", timeout=60)
            nofp_stacks = wait_for(slept(nofp.pid, 3), "3 s of fgtest-block-nofp's blocks",
                                   timeout=60)
            until = time.time()
            fp_pid, nofp_pid = fp.pid, nofp.pid

            check_split(fp_stacks, "fgtest-block")
            check_split(nofp_stacks, "fgtest-block-nofp (dwarf)")

            r = d.fgctl("snapshot", "--off-cpu", "-p", fp_pid, "--last", "1m", "-o",
                        os.path.join(d.dir, "off.svg"), check_rc=0)
            print(r.stderr.decode().strip())
            check(b"s blocked in" in r.stderr, f"summary in samples: {r.stderr}")
            with open(os.path.join(d.dir, "off.svg")) as f:
                svg = f.read()
            check(re.search(r"[0-9,]+ us", svg), "the SVG does not count us")
            check("off-CPU" in svg, "the SVG's subtitle does not say off-CPU")
            blue = re.findall(r'fill="rgb\((\d+),(\d+),(\d+)\)"', svg)
            check(blue and all(int(b) >= int(r) and int(b) >= int(g) for r, g, b in blue[:50]),
                  f"not the blue palette: {blue[:5]}")

            # On-CPU, a sleeper barely shows; none of its blocked time is there.
            r = d.fgctl("snapshot", "-p", fp_pid, "--last", "1m", "-f", "folded", "-o", "-")
            on = sum(parse_folded(r.stdout.decode()).values()) if r.returncode == 0 else 0
            check(on < 1000, f"{on} samples of a sleeper in the on-CPU window")

        status = json.loads(d.fgctl("status", "--json", check_rc=0).stdout)["off_cpu"]
        print(f"status: {status['blocks']} blocks, {status['lost']} lost, "
              f"{status['stacks_not_taken']} stacks not taken, {status['stack_renewals']} "
              f"renewals, {status['user_dump_failed']} without a user stack copy; window "
              f"{status['window']['samples']} us")
        check(status["blocks"] > 0 and status["window"]["samples"] > 0, f"status: {status}")
        # Losses are the whole machine's (a storm elsewhere fills the ring): counted, not ours.
        check(isinstance(status["lost"], int) and isinstance(status["stacks_lost"], int),
              f"status: {status}")
        check(status["window"]["history"]["directory"].endswith("/off-cpu"), f"status: {status}")
        text = d.fgctl("status", check_rc=0).stdout.decode()
        check("always-on: blocks of 1 us or more" in text, f"fgctl status: {text}")

    # The window is gone with that fgd: the period comes back from its history.
    with Daemon(args) as d:
        def iso(t):
            return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(t))
        period = ["--since", iso(since - 1), "--until", iso(until + 2)]
        r = snapshot(d, fp_pid, *period)
        check(r.returncode == 0, f"no history after a restart: {r.stderr}")
        total = check_split(parse_folded(r.stdout.decode()), "fgtest-block from the history")
        check(total >= 3e6, f"{total} us from the history, less than the 3 s seen before")

    with Daemon(["--slice-seconds", "1"]) as d:
        r = d.fgctl("snapshot", "--off-cpu", "--last", "1m", "-o", "-")
        check(r.returncode != 0 and b"OffCpu=yes" in r.stderr,
              f"snapshot --off-cpu without OffCpu=: {r.returncode} {r.stderr}")
        reply = d.query_raw("top", {"off_cpu": True})
        check("'off_cpu' is for snapshots" in reply.get("message", ""), f"top off_cpu: {reply}")


if __name__ == "__main__":
    run(test)
