# SPDX-License-Identifier: LGPL-2.1-or-later
"""A syscall-heavy workload shows kernel frames (with the _[k] suffix) above its
user frames: ...;main;do_reads;<kernel frames>_[k]. With -u (user-only) and -k
(kernel-only), recordings and snapshots keep one side's frames under the
process frame."""

from fgdtest import Daemon, check, parse_folded, require_root, run, workload


def test():
    require_root()
    with Daemon() as d, workload("fgtest-syscall") as w:
        r = d.fgctl("record", "-p", w.pid, "-t", "3", "-F", "499", "-o", "-", check_rc=0)
        stacks = parse_folded(r.stdout.decode())
        total = sum(stacks.values())
        check(total > 300, f"too few samples: {total}")
        in_kernel = 0
        for stack, count in stacks.items():
            frames = stack.split(";")
            check(frames[0] == "fgtest-syscall", f"root frame is {frames[0]!r}")
            if "do_reads" not in frames:
                continue
            below = frames[frames.index("do_reads") + 1:]
            if below and all(f.endswith("_[k]") for f in below):
                in_kernel += count
            # User frames never appear above kernel frames.
            seen_kernel = False
            for f in frames[1:]:
                seen_kernel |= f.endswith("_[k]")
                check(not seen_kernel or f.endswith("_[k]"), f"user frame above kernel frames: {stack}")
        print(f"{total} samples, {in_kernel / total:.1%} in the kernel under do_reads")
        check(in_kernel / total > 0.5, f"only {in_kernel}/{total} samples in the kernel under do_reads")

        # -u and -k: one side's frames under the process frame, every sample still counted.
        for flag, side in (("-u", "user"), ("-k", "kernel")):
            r = d.fgctl("record", "-p", w.pid, "-t", "1", "-F", "499", flag, "-o", "-",
                        check_rc=0)
            stacks = parse_folded(r.stdout.decode())
            check(sum(stacks.values()) > 100, f"{flag}: too few samples")
            for stack in stacks:
                frames = stack.split(";")
                check(frames[0] == "fgtest-syscall" and
                      all(f.endswith("_[k]") == (side == "kernel") for f in frames[1:]),
                      f"{flag} left a frame of the other side: {stack}")
            print(f"{flag}: {len(stacks)} stacks of {side} frames only")
        r = d.fgctl("record", "-p", w.pid, "-t", "1", "-u", "-k", "-o", "-", check_rc=2)
        check(b"exclude each other" in r.stderr, f"-u with -k: {r.stderr!r}")
        # Always-on's snapshot too.
        r = d.fgctl("snapshot", "--last", "3s", "-p", w.pid, "-k", "-o", "-", check_rc=0)
        stacks = parse_folded(r.stdout.decode())
        check(stacks and all(all(f.endswith("_[k]") for f in s.split(";")[1:]) for s in stacks),
              f"snapshot -k: {list(stacks)[:3]}")
        names = {f for s in stacks for f in s.split(";")}
        check(any(n.startswith("__x64_sys_read") or n.startswith("ksys_read") or n.startswith("vfs_read")
                  for n in names), f"no read syscall frame among {sorted(names)[:40]}")

        r = d.fgctl("record", "-p", w.pid, "-t", "1", "--no-kernel-suffix", "-o", "-", check_rc=0)
        text = r.stdout.decode()
        check("_[k]" not in text, "--no-kernel-suffix still wrote _[k]")
        check("vfs_read" in text or "ksys_read" in text or "read_zero" in text,
              "kernel frames missing without the suffix")


run(test)
