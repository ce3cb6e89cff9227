# SPDX-License-Identifier: LGPL-2.1-or-later
"""DWARF call graphs on Debian's own binaries, which have no frame pointers:
python3 running a CPU-bound script, and xz -9 and gzip -9 compressing. In the
default (dwarf) mode at least 95% of user stacks must reach the outermost
frame, the interpreter's frames must reach Py_BytesMain and libc's start
code, and kernel frames must sit on top of complete user stacks. With a
stack dump too small for the interpreter, the stacks cut short start with
[truncated], as many as the stack figures count as truncated. Frame-pointer
mode is recorded too, for the figures side by side."""

import json
import os
import shutil
import subprocess
import tempfile

from fgdtest import Daemon, check, parse_folded, require_root, run, skip, wait_for

SCRIPT = """
import sys
def fgtest_python_hot(n):
    return n if n < 2 else fgtest_python_hot(n - 1) + fgtest_python_hot(n - 2)
print("ready", flush=True)
while True:
    fgtest_python_hot(20)
"""


def record(d, pid, tmp, mode, name):
    meta_path = os.path.join(tmp, f"{name}-{mode}.json")
    r = d.fgctl("record", "-p", pid, "-t", "3", "-F", "999", "--call-graph", mode,
                "--metadata", meta_path, "-o", "-", check_rc=0)
    stacks = parse_folded(r.stdout.decode())
    with open(meta_path) as f:
        meta = json.load(f)
    check(meta["call_graph"] == mode, f"asked for {mode}, got {meta['call_graph']}")
    q = meta["stack_quality"]
    check(q["user_stacks"] > 150, f"{name}: too few user stacks: {q}")
    check(q["complete"] + q["truncated"] + q["failed"] == q["user_stacks"],
          f"{name}: stack figures do not add up: {q}")
    print(f"{name:8} {mode:6} {q['user_stacks']:5} user stacks, {q['complete_pct']:5.1f}% complete, "
          f"{q['truncated']} truncated, {q['failed']} failed; frames {meta['frames']}")
    return stacks, q


def truncated_marked(d, pid, tmp):
    """A stack dump too small for the interpreter's stack: every stack the walk could not
    finish starts with [truncated], as many as the stack figures count, and no other."""
    meta_path = os.path.join(tmp, "truncated.json")
    r = d.fgctl("record", "-p", pid, "-t", "2", "-F", "499", "--stack-dump", "128",
                "--metadata", meta_path, "-o", "-", check_rc=0)
    stacks = parse_folded(r.stdout.decode())
    with open(meta_path) as f:
        q = json.load(f)["stack_quality"]
    marked = sum(c for s, c in stacks.items() if s.split(";")[1:2] == ["[truncated]"])
    check(q["truncated"] > 0 and marked == q["truncated"],
          f"{marked} stacks start with [truncated], the figures count {q['truncated']}: {q}")
    check(not any("[truncated]" in s.split(";")[2:] for s in stacks),
          "[truncated] elsewhere than at the root end")
    print(f"python3 with 128-byte stack dumps: {marked} truncated stacks marked")


def bytes_read(pid):
    """Bytes a process has read so far (/proc/PID/io rchar)."""
    with open(f"/proc/{pid}/io") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("rchar:"))


def share(stacks, pred):
    total = sum(stacks.values())
    return sum(c for s, c in stacks.items() if pred(s)) / total if total else 0.0


def test():
    require_root()
    tools = {t: shutil.which(t) for t in ("xz", "gzip")}
    if not os.path.exists("/usr/bin/python3") or not all(tools.values()):
        skip("needs Debian's /usr/bin/python3, xz and gzip")
    with tempfile.TemporaryDirectory() as tmp, Daemon() as d, \
            open("/dev/urandom", "rb") as random:
        script = os.path.join(tmp, "hot.py")
        with open(script, "w") as f:
            f.write(SCRIPT)
        procs = {}
        try:
            py = subprocess.Popen(["/usr/bin/python3", script], stdout=subprocess.PIPE, text=True)
            procs["python3"] = py
            check(py.stdout.readline().strip() == "ready", "python3 did not start")
            # Random input never ends and never compresses: both stay busy in their own code.
            for name, path in tools.items():
                procs[name] = subprocess.Popen([path, "-9", "-c"], stdin=random,
                                               stdout=subprocess.DEVNULL)
            kernel_on_complete = 0
            for name, p in procs.items():
                if name != "python3":
                    # xz -9 first allocates and clears ~700 MiB (slow to fault in on a loaded
                    # machine): record it once it compresses, which it does as it reads.
                    wait_for(lambda: bytes_read(p.pid) > 1 << 20, f"{name} to compress",
                             timeout=120)
                stacks, q = record(d, p.pid, tmp, "dwarf", name)
                check(q["complete_pct"] >= 95.0,
                      f"{name}: only {q['complete_pct']:.1f}% of user stacks are complete in "
                      f"dwarf mode (target 95%)")
                check(all(s.startswith(name) or s.startswith(name[:15]) for s in stacks),
                      f"{name}: another process in its profile: {list(stacks)[:2]}")
                started_ok = share(stacks, lambda s: ";__libc_start_main;" in s)
                check(started_ok >= 0.95, f"{name}: only {started_ok:.1%} of stacks reach "
                      f"__libc_start_main: {sorted(stacks, key=stacks.get)[-3:]}")
                kernel_on_complete += sum(c for s, c in stacks.items()
                                          if ";__libc_start_main;" in s and "_[k]" in s)
                if name == "python3":
                    interp = share(stacks, lambda s: ";Py_BytesMain;" in s and
                                   "_PyEval_EvalFrameDefault" in s)
                    check(interp >= 0.9, f"python3: only {interp:.1%} of stacks run from "
                          f"Py_BytesMain through the eval loop")
                    truncated_marked(d, p.pid, tmp)
                if name == "xz":
                    lzma = share(stacks, lambda s: ";lzma_code;" in s)
                    check(lzma >= 0.5, f"xz: only {lzma:.1%} of stacks pass through lzma_code: {sorted(stacks, key=stacks.get)[-2:]}")
                # The same process with frame pointers, for comparison only: Debian's
                # binaries have none, so these stacks stop early.
                record(d, p.pid, tmp, "fp", name)
            check(kernel_on_complete > 0,
                  "no stack joined kernel frames to a complete user stack")
        finally:
            for p in procs.values():
                if p.poll() is None:
                    p.kill()
                p.wait()
            if "python3" in procs:
                procs["python3"].stdout.close()


run(test)
