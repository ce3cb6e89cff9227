# SPDX-License-Identifier: LGPL-2.1-or-later
"""Names a developer recognises, from a real recording.

fgtest-inline-debuglink is stripped: its functions are named only through
the separate debug file its .gnu_debuglink points to, and fgtest_middle and
fgtest_inner exist only as inlined code, found in that file's DWARF.
fgtest-inline-stripped has no debug file to find: its hot function has no
name, and is one frame, "module+0x" and the function's start, which the
binary's .eh_frame gives. The C++ workload's names come demangled, or raw
with --no-demangle.
"""

import os
import re
import subprocess

from fgdtest import Daemon, check, parse_folded, program, require_root, run, workload

INLINE_TAIL = ";fgtest_outer;fgtest_middle;fgtest_inner"


def share(stacks, pred):
    total = sum(stacks.values())
    check(total > 200, f"too few samples: {total}")
    return sum(c for s, c in stacks.items() if pred(s)) / total


def record(d, pid, *extra):
    r = d.fgctl("record", "-p", pid, "-t", "2", "-F", "499", "-o", "-", *extra, check_rc=0)
    return parse_folded(r.stdout.decode())


def test():
    require_root()
    with Daemon() as d, workload("fgtest-inline-debuglink") as w:
        stacks = record(d, w.pid)
        inl = share(stacks, lambda s: s.endswith(INLINE_TAIL))
        print(f"inline chain in {inl:.0%} of samples")
        # The loop is fgtest_inner's code: nearly every sample is there.
        check(inl > 0.8, f"{INLINE_TAIL} ends only {inl:.0%} of stacks: {list(stacks)[:5]}")
        check(not any("fgtest-inline-debuglink+0x" in s for s in stacks),
              f"an unnamed frame of the stripped binary: {list(stacks)[:5]}")

        stacks = record(d, w.pid, "--no-inline")
        check(share(stacks, lambda s: s.endswith(";fgtest_outer")) > 0.8,
              f"--no-inline: stacks should end in fgtest_outer: {list(stacks)[:5]}")
        check(not any("fgtest_inner" in s or "fgtest_middle" in s for s in stacks),
              f"--no-inline still has inline frames: {list(stacks)[:5]}")

    # Where fgtest_outer starts, from the build the stripped one was made from.
    nm = subprocess.run(["nm", program("fgtest-inline")], capture_output=True, text=True,
                        check=True).stdout
    outer = int(re.search(r"^([0-9a-f]+) T fgtest_outer$", nm, re.M).group(1), 16)
    with Daemon() as d, workload("fgtest-inline-stripped") as w:
        stacks = record(d, w.pid)
        leaf = f";fgtest-inline-stripped+0x{outer:x}"
        hot = share(stacks, lambda s: s.endswith(leaf))
        print(f"stripped: {hot:.0%} of samples in {leaf[1:]}")
        check(hot > 0.8, f"stacks should end in {leaf[1:]}: {list(stacks)[:5]}")
        # One frame per function of the binary, not one per sampled address of its loop.
        unnamed = {f for s in stacks for f in s.split(";") if f.startswith("fgtest-inline-stripped+")}
        check(len(unnamed) <= 4, f"the stripped binary's frames are per address: {sorted(unnamed)}")

    if not os.access(os.path.join(os.environ.get("FG_TEST_PROGRAMS", "."), "fgtest-cxx"), os.X_OK):
        print("no C++ compiler: fgtest-cxx not built, C++ part skipped")
        return
    program("fgtest-cxx")
    with Daemon() as d, workload("fgtest-cxx") as w:
        stacks = record(d, w.pid)
        tail = ";fgtest::shapes::Accumulator<int>::add;fgtest::shapes::mix"
        check(share(stacks, lambda s: s.endswith(tail)) > 0.8,
              f"demangled C++ frames missing: {list(stacks)[:5]}")
        stacks = record(d, w.pid, "--no-demangle")
        check(share(stacks, lambda s: ";_ZN6fgtest6shapes11AccumulatorIiE3addEi;" in s + ";") > 0.8,
              f"--no-demangle: the mangled name is missing: {list(stacks)[:5]}")


run(test)
