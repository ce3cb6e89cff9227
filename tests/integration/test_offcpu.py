# SPDX-License-Identifier: LGPL-2.1-or-later
"""fgctl record --off-cpu: blocked time by stack, from fgd's BPF source.

fgtest-block sleeps 30 ms under block_long() and 10 ms under block_short(),
in turn, with inline syscalls so that the frame-pointer user stack starts in
them. Recorded for 3 s:
  - nearly all of the 3 s is blocked time (µs), within 10%;
  - block_long holds three quarters of it, within 5 points;
  - the kernel path that blocked (do_nanosleep, schedule) is under each, with _[k];
  - the SVG counts "us" in the blue off-CPU palette.
fgtest-block-nofp is the same built by gcc -O2 without frame pointers:
recorded with --call-graph dwarf, nearly all of its blocked time has a
user stack from main down to block_long/block_short and sleep_ns, where
the frame-pointer walk of the same binary loses main.
Its other ways of waiting, poll, a pipe read, a mutex held by another
thread and fsync, in both builds (DWARF mode, fgd's default): the main
thread's blocks have the kernel path of each (do_sys_poll, pipe_read,
futex_*, *fsync*) under block_long/short, reaching main; the timed ones
keep the 3:1 split and fill the recording's 2 s within 10%.
With "spin", fgtest-block spins 10 ms in spin_on_cpu() and sleeps 30 ms in
block_long(): recorded with --wall, the thread's total is the wall time
within 10%, a quarter of it on the CPU (within 5 points).
As an unprivileged user: their own process may be recorded, another user's
may not, nor the whole machine. Skipped where fgd says off-CPU is unavailable.
Then fgd with its bounding set cut to exactly the systemd unit's
(CapabilityBoundingSet= in systemd/fgd.service.in): off-CPU is available and
records, and so does on-CPU. Last, fgd without CAP_SYS_ADMIN and CAP_BPF,
and with OffCpu=yes in its configuration: it starts, status says off-CPU is
unavailable and why (and that always-on off-CPU does not run), an off-CPU
recording and a snapshot --off-cpu get that reason, and on-CPU recording
works as ever. In a build without BPF (meson -Dbpf=disabled) that last part
is the whole test, with the build's own reason."""

import json
import os
import re
import tempfile

from fgdtest import Daemon, check, parse_folded, require_root, run, skip, test_user, workload

USER = "fgd-test-offcpu"
GROUP = "fgd-test-offcpu-group"


def block_shares(stacks):
    total = sum(stacks.values())
    long_us = sum(c for s, c in stacks.items() if ";block_long;" in s)
    short_us = sum(c for s, c in stacks.items() if ";block_short;" in s)
    return total, long_us, short_us


def unavailable(prefix, cause):
    """fgd (run under prefix) where off-CPU cannot work, cause a phrase of its reason."""
    with tempfile.TemporaryDirectory() as tmp:
        conf = os.path.join(tmp, "fgd.conf")
        with open(conf, "w") as f:
            f.write("[fgd]\nOffCpu=yes\n")
        with Daemon(["--config", conf], prefix=prefix) as d:
            off = json.loads(d.fgctl("status", "--json", check_rc=0).stdout)["off_cpu"]
            check(not off["available"] and cause in off.get("why", ""),
                  f"status where off-CPU cannot work ({cause}): {off}")
            check(not off["always_on"], f"always-on off-CPU runs without BPF: {off}")
            check("Failed to start always-on off-CPU" in d.logs() and cause in d.logs(),
                  f"fgd's log does not say why always-on off-CPU is off:\n{d.logs()}")
            with workload("fgtest-block", "spin") as w:
                r = d.fgctl("record", "--off-cpu", "-p", w.pid, "-t", "1", "-o", "-")
                check(r.returncode != 0 and b"off-CPU recording is unavailable" in r.stderr
                      and cause.encode() in r.stderr, f"off-CPU without BPF: {r.stderr!r}")
                r = d.fgctl("record", "-p", w.pid, "-t", "1", "-o", "-", check_rc=0)
                check(b"spin_on_cpu" in r.stdout, "on-CPU recording without BPF named nothing")
            r = d.fgctl("snapshot", "--off-cpu", "--last", "1m", "-o", "-")
            check(r.returncode != 0 and b"off-CPU profiling is unavailable" in r.stderr
                  and cause.encode() in r.stderr, f"snapshot --off-cpu without BPF: {r.stderr!r}")


def test():
    require_root()
    with test_user(USER, GROUP), Daemon(["--no-always-on", "--socket-group", GROUP]) as d:
        status = json.loads(d.fgctl("status", "--json", check_rc=0).stdout)
        off = status.get("off_cpu", {})
        if not off.get("available") and "built without BPF" in off.get("why", ""):
            unavailable([], "built without BPF")
            return
        if not off.get("available"):
            skip(f"off-CPU is unavailable here: {off.get('why')}")

        with workload("fgtest-block") as w:
            r = d.fgctl("record", "--off-cpu", "-p", w.pid, "-t", "3", "-o", "-",
                        "--metadata", "/dev/stdout", check_rc=0)
        out = r.stdout.decode()
        folded, _, meta_text = out.partition("{")
        meta = json.loads("{" + meta_text)
        stacks = parse_folded(folded)
        total, long_us, short_us = block_shares(stacks)
        print(f"{total} us blocked in 3 s: block_long {long_us}, block_short {short_us}; "
              f"{meta['off_cpu']}")
        check(meta["event"].startswith("off-cpu"), f"event {meta['event']!r}")
        check(meta["off_cpu"]["lost_threads"] + meta["off_cpu"]["lost_ring"] == 0,
              f"blocks lost: {meta['off_cpu']}")
        check(2.7e6 <= total <= 3.3e6, f"{total} us blocked in a 3 s recording of a sleeper")
        check(long_us + short_us >= 0.95 * total, f"blocks outside block_long/short: {stacks}")
        share = long_us / max(long_us + short_us, 1)
        check(abs(share - 0.75) <= 0.05, f"block_long has {share:.1%} of the time, not 75%")
        for stack, count in stacks.items():
            frames = stack.split(";")
            check(frames[0] == "fgtest-block", f"root frame {frames[0]!r}")
            if count > total / 100:
                check("do_nanosleep_[k]" in frames and frames[-1].endswith("schedule_[k]"),
                      f"the kernel path that blocked is missing: {stack}")

        with workload("fgtest-block") as w:
            r = d.fgctl("record", "--off-cpu", "-p", w.pid, "-t", "1", "-o", "-", "-f", "svg",
                        check_rc=0)
        svg = r.stdout.decode()
        check(" us, " in svg or " us)" in svg, "the SVG does not count microseconds")
        # The io palette is blue: red and green below blue in every frame's colour.
        fills = [tuple(int(x) for x in f.split(",")) for f in
                 re.findall(r'fill="rgb\((\d+,\d+,\d+)\)"', svg)]
        check(fills and all(b >= r_ and b >= g for r_, g, b in fills[1:]),
              f"frames not in the blue off-CPU palette: {fills[:5]}")

        # Without frame pointers: whole user stacks only by DWARF unwinding.
        reach = {}
        for mode in ("dwarf", "fp"):
            with workload("fgtest-block-nofp") as w:
                r = d.fgctl("record", "--off-cpu", "--call-graph", mode, "-p", w.pid, "-t", "2",
                            "-o", "-", "--metadata", "/dev/stdout", check_rc=0)
            folded, _, meta_text = r.stdout.decode().partition("{")
            meta = json.loads("{" + meta_text)
            stacks = parse_folded(folded)
            total = sum(stacks.values())
            whole = sum(c for s, c in stacks.items()
                        if re.search(r";main;block_(long|short);sleep_ns;", s))
            reach[mode] = whole / max(total, 1)
            print(f"{mode}, no frame pointers: {reach[mode]:.1%} of {total} us reaches main "
                  f"through sleep_ns; {meta['off_cpu']}")
            check(1.8e6 <= total <= 2.2e6, f"{mode}: {total} us blocked in a 2 s recording")
            check(meta["off_cpu"]["lost_threads"] + meta["off_cpu"]["lost_ring"] == 0,
                  f"{mode}: blocks lost: {meta['off_cpu']}")
        check(reach["dwarf"] >= 0.95, f"dwarf: only {reach['dwarf']:.1%} of the time reaches main")
        check(reach["fp"] < 0.5, f"fp reached main through a binary without frame pointers: "
              f"{reach['fp']:.1%}")

        # Other ways of waiting: the kernel path of each, and the share of each function.
        paths = {"poll": r";do_sys_poll_\[k\];", "pipe": r";\w*pipe_read_\[k\];",
                 "mutex": r";futex_\w+_\[k\];", "fsync": r";\w*fsync\w*_\[k\];"}
        for program in ("fgtest-block", "fgtest-block-nofp"):
            for mode, path in paths.items():
                with workload(program, mode) as w:
                    r = d.fgctl("record", "--off-cpu", "-p", w.pid, "-t", "2", "-o", "-",
                                check_rc=0)
                # The main thread's blocks; the helper threads wait under helper().
                mains = {s: c for s, c in parse_folded(r.stdout.decode()).items()
                         if ";main;" in s}
                total = sum(mains.values())
                long_us = sum(c for s, c in mains.items() if ";main;block_long;sleep_ns;" in s)
                short_us = sum(c for s, c in mains.items() if ";main;block_short;sleep_ns;" in s)
                on_path = sum(c for s, c in mains.items() if re.search(path, s))
                print(f"{program} {mode}: main blocked {total} us, block_long {long_us}, "
                      f"block_short {short_us}, {on_path} us under {path}")
                check(total > 0 and long_us + short_us >= 0.95 * total,
                      f"{program} {mode}: the main thread's blocks are elsewhere: {mains}")
                check(on_path >= 0.9 * total,
                      f"{program} {mode}: the kernel path {path} is missing: {mains}")
                if mode == "fsync":
                    check(long_us > 0 and short_us > 0, f"{program} fsync: {mains}")
                    continue
                check(1.8e6 <= total <= 2.2e6,
                      f"{program} {mode}: main blocked {total} us in a 2 s recording")
                share = long_us / (long_us + short_us)
                check(abs(share - 0.75) <= 0.05,
                      f"{program} {mode}: block_long has {share:.1%} of the time, not 75%")

        # Wall clock: on-CPU samples (1/F s each) and blocks, both in µs.
        with workload("fgtest-block", "spin") as w:
            r = d.fgctl("record", "--wall", "-F", "999", "-p", w.pid, "-t", "3", "-o", "-",
                        check_rc=0)
        stacks = parse_folded(r.stdout.decode())
        total = sum(stacks.values())
        spin = sum(c for s, c in stacks.items() if ";spin_on_cpu" in s)
        sleep = sum(c for s, c in stacks.items() if ";block_long;" in s)
        print(f"wall clock: {total} us in 3 s, spin_on_cpu {spin}, block_long {sleep}")
        check(2.7e6 <= total <= 3.3e6, f"{total} us of wall-clock time in a 3 s recording")
        check(abs(spin / total - 0.25) <= 0.05, f"spin_on_cpu has {spin / total:.1%}, not 25%")
        check(spin + sleep >= 0.95 * total, f"time outside spin_on_cpu/block_long: {stacks}")

        # Access: the same rules as on-CPU recordings.
        with workload("fgtest-block", user=USER) as mine, workload("fgtest-block") as roots:
            d.fgctl("record", "--off-cpu", "-p", mine.pid, "-t", "1", "-o", "-", user=USER,
                    check_rc=0)
            r = d.fgctl("record", "--off-cpu", "-p", roots.pid, "-t", "1", "-o", "-",
                        user=USER, check_rc=4)
            check(b"your own processes" in r.stderr, f"another's process: {r.stderr!r}")
            r = d.fgctl("record", "--off-cpu", "-a", "-t", "1", "-o", "-", user=USER, check_rc=4)
            check(b"needs root" in r.stderr, f"-a as a user: {r.stderr!r}")

        # Bad requests get a clear error.
        r = d.fgctl("record", "-p", "1", "--min-block", "5", "-t", "1", "-o", "-", check_rc=2)
        check(b"off-CPU" in r.stderr or b"off_cpu" in r.stderr, f"--min-block alone: {r.stderr!r}")

    # With exactly the systemd unit's capabilities: both kinds of recording work.
    unit = os.path.join(os.path.dirname(__file__), "..", "..", "systemd", "fgd.service.in")
    with open(unit) as f:
        caps = re.search(r"^CapabilityBoundingSet=(.*)$", f.read(), re.M).group(1).split()
    bounding = "-all," + ",".join("+" + c.removeprefix("CAP_").lower() for c in caps)
    with Daemon(["--no-always-on"], prefix=["setpriv", "--bounding-set", bounding]) as d:
        off = json.loads(d.fgctl("status", "--json", check_rc=0).stdout)["off_cpu"]
        check(off["available"], f"off-CPU with the unit's capabilities {caps}: {off}")
        with workload("fgtest-block", "spin") as w:
            r = d.fgctl("record", "--off-cpu", "-p", w.pid, "-t", "1", "-o", "-", check_rc=0)
            check(b";block_long;" in r.stdout, "off-CPU with the unit's capabilities: "
                  f"{r.stdout[:300]!r}")
            r = d.fgctl("record", "-p", w.pid, "-t", "1", "-o", "-", check_rc=0)
            check(b"spin_on_cpu" in r.stdout, "on-CPU with the unit's capabilities named nothing")

    # Without the capabilities BPF needs: said, and on-CPU unaffected.
    unavailable(["setpriv", "--bounding-set", "-sys_admin,-bpf"], "not permitted")


run(test)
