# SPDX-License-Identifier: LGPL-2.1-or-later
"""Processes that live 40 ms, shorter than fgd's 250 ms drain round, so most
of their samples are read after they exited: their binaries must still be
named and, in dwarf mode, their stacks unwound whole. What was learned when
the process was first seen (its maps, the binary's build-id) is all there is
by then; /proc/PID is gone."""

import subprocess
import threading

from fgdtest import FGCTL, Daemon, check, parse_folded, program, require_root, run

RUNS = 40


def user_part(stack):
    """The stack without the kernel frames an interrupt or a system call put on top."""
    frames = stack.split(";")
    while frames and frames[-1].endswith("_[k]"):
        frames.pop()
    return ";".join(frames)


def spawn_many(stop):
    """RUNS fgtest-burn processes of 40 ms each, one after the other."""
    for _ in range(RUNS):
        if stop.is_set():
            return
        subprocess.run([program("fgtest-burn"), "0.04"], stdout=subprocess.DEVNULL, check=True)


def test():
    require_root()
    with Daemon() as d:
        for mode in ("dwarf", "fp"):
            stop = threading.Event()
            rec = subprocess.Popen([FGCTL, "--socket", d.socket, "record", "-a", "-t", "4", "-F",
                                    "999", "--call-graph", mode, "-o", "-"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            try:
                # fgctl says it is recording once fgd has started sampling.
                line = rec.stderr.readline().decode()
                check("recording all CPUs" in line, f"fgctl did not start: {line!r}")
                spawner = threading.Thread(target=spawn_many, args=(stop,))
                spawner.start()
                out, err = rec.communicate(timeout=60)
            finally:
                stop.set()
                if rec.poll() is None:
                    rec.kill()
                    rec.wait()
            spawner.join()
            check(rec.returncode == 0, f"fgctl record failed: {err.decode()}")
            stacks = {s: c for s, c in parse_folded(out.decode()).items()
                      if s.startswith("fgtest-burn;")}
            total = sum(stacks.values())
            # The program's own samples, through its main: what is left is each process's
            # exec, dynamic loading and exit, which take a share of a 40 ms life that depends
            # on the machine (7% on a paravirtualized one, where page faults are slow).
            program_part = {s: c for s, c in stacks.items() if ";main;" in s}
            in_main = sum(program_part.values())
            hot = sum(c for s, c in program_part.items()
                      if user_part(s).endswith(";main;hot_a") or user_part(s).endswith(";main;hot_b"))
            print(f"{mode}: {total} samples of {RUNS} short-lived processes, {in_main} in main, "
                  f"{hot / max(1, in_main):.1%} of those named main;hot_a/hot_b")
            # 40 x 40 ms of one busy CPU at 999 Hz is ~1600 samples; allow a loaded machine.
            check(total > 400, f"{mode}: too few samples of the short-lived processes: {total}")
            # Unnamed code would have no main at all: at least half the samples must be in it
            # (7% are outside on a quiet machine, 20% on a loaded one, where exec is slower).
            check(in_main >= 0.5 * total, f"{mode}: only {in_main} of {total} samples in main: "
                  f"{sorted(stacks.items(), key=lambda kv: -kv[1])[:3]}")
            check(hot / in_main >= 0.95, f"{mode}: only {hot / in_main:.1%} of their samples in main "
                  f"are named: {sorted(program_part.items(), key=lambda kv: -kv[1])[:3]}")
            if mode == "dwarf":
                whole = sum(c for s, c in program_part.items() if ";_start;__libc_start_main;" in s)
                check(whole / in_main >= 0.95, f"dwarf: only {whole / in_main:.1%} of their stacks "
                      f"in main reach _start: {sorted(program_part.items(), key=lambda kv: -kv[1])[:3]}")

run(test)
