#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Golden files: fgctl render's exact output for small inputs and a set of
options. Rendering is deterministic, so any change to these bytes is a
change users will see; when it is intended, regenerate with
FG_UPDATE_GOLDEN=1 and review the diff (and the pictures) before committing."""

import difflib
import os
import subprocess

from fgdtest import FGCTL, check, run

DATA = os.environ.get("FG_TEST_DATA_DIR",
                      os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data"))
GOLDEN = os.path.join(DATA, "golden")
RENDER = os.path.join(DATA, "render")

# (expected output file, fgctl arguments); inputs are relative to tests/data.
CASES = [
    ("basic.svg", ["render", "render/basic.folded"]),
    ("basic-icicle-mem.svg", ["render", "render/basic.folded", "--inverted", "--colors", "mem",
                              "--title", "Icicle <&>", "--subtitle", "sub", "--width", "900"]),
    ("annotated-java.svg", ["render", "golden/annotated.folded", "--colors", "java", "--bgcolors", "grey"]),
    ("annotated-js.svg", ["render", "golden/annotated.folded", "--colors", "js", "--minwidth", "3%"]),
    ("annotated-reverse.folded", ["render", "golden/annotated.folded", "--reverse", "-f", "folded"]),
    ("diff.svg", ["diff", "render/before.folded", "render/after.folded"]),
    ("diff-negate.svg", ["diff", "render/before.folded", "render/after.folded", "--negate"]),
    ("chart.svg", ["render", "golden/chart.folded", "--flamechart", "--notes", "time order"]),
]


def main():
    update = os.environ.get("FG_UPDATE_GOLDEN") == "1"
    failures = []
    for name, args in CASES:
        fmt = name.rsplit(".", 1)[1]
        argv = [FGCTL] + [os.path.join(DATA, a) if a.endswith(".folded") else a for a in args]
        argv += ["-f", fmt, "-o", "-"] if "-f" not in args else ["-o", "-"]
        p = subprocess.run(argv, capture_output=True, timeout=60)
        check(p.returncode == 0, f"{name}: {' '.join(args)} exited {p.returncode}: {p.stderr.decode()}")
        path = os.path.join(GOLDEN, name)
        if update:
            with open(path, "wb") as f:
                f.write(p.stdout)
            print(f"updated {name}")
            continue
        check(os.path.exists(path), f"{name} has no golden file; run with FG_UPDATE_GOLDEN=1")
        with open(path, "rb") as f:
            want = f.read()
        if p.stdout != want:
            diff = difflib.unified_diff(want.decode(errors="replace").splitlines(),
                                        p.stdout.decode(errors="replace").splitlines(),
                                        "golden/" + name, "now", lineterm="", n=1)
            failures.append(f"{name} differs:\n" + "\n".join(list(diff)[:40]))
        else:
            print(f"ok   {name}")
    check(not failures, "\n".join(failures))


if __name__ == "__main__":
    run(main)
