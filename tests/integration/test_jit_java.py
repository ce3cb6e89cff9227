# SPDX-License-Identifier: LGPL-2.1-or-later
"""A JVM writes its perf map on request: `jcmd PID Compiler.perfmap` dumps the
code cache to /tmp/perf-PID.map with 0x-prefixed fields. FgJitHot (compiled
with javac at test time) runs one hot method under -XX:+PreserveFramePointer,
so fgd's frame-pointer callchains walk through compiled Java frames; once the
JIT compiled the method (jcmd is polled until the map names it) a recording
must name it, with _[j], in a good share of samples, with the JVM's whole
signature; --stackcollapse-names cuts it at the '(' as stackcollapse-perf.pl
does."""

import os
import shutil
import subprocess
import tempfile
import time

from fgdtest import Daemon, check, parse_folded, require_root, run, skip

HOT = "fgdJitJavaHotMethod"
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "programs", "FgJitHot.java")


def test():
    require_root()
    tools = {t: shutil.which(t) for t in ("java", "javac", "jcmd")}
    missing = [t for t, p in tools.items() if not p]
    if missing:
        skip(f"{', '.join(missing)} not installed")
    tmp = tempfile.mkdtemp(prefix="fgd-jit-java-")
    proc = None
    map_path = None
    try:
        subprocess.run([tools["javac"], "-d", tmp, SOURCE], check=True, timeout=120)
        # Not inlined into main, so its samples carry its own name.
        proc = subprocess.Popen([tools["java"], "-XX:+PreserveFramePointer",
                                 "-XX:CompileCommand=quiet",
                                 f"-XX:CompileCommand=dontinline,FgJitHot::{HOT}",
                                 "-cp", tmp, "FgJitHot"], stdout=subprocess.PIPE, text=True)
        check(proc.stdout.readline().strip() == "ready", "FgJitHot did not start")
        map_path = f"/tmp/perf-{proc.pid}.map"

        # Until the JIT compiled the method, the code cache has nothing to name it.
        deadline = time.monotonic() + 90
        lines = []
        while not lines:
            check(time.monotonic() < deadline, f"jcmd Compiler.perfmap never named {HOT}")
            r = subprocess.run([tools["jcmd"], str(proc.pid), "Compiler.perfmap"],
                               capture_output=True, timeout=60)
            check(r.returncode == 0, f"jcmd failed: {r.stdout.decode()} {r.stderr.decode()}")
            # Each jcmd takes a JVM start, which paces the polling.
            with open(map_path) as f:
                lines = [l.strip() for l in f if HOT in l]
        print(f"perf map lines for {HOT}: {lines}")
        check(all(l.startswith("0x") for l in lines), f"not jcmd's 0x form: {lines}")

        with Daemon() as d:
            r = d.fgctl("record", "-p", proc.pid, "-t", "4", "-F", "499", "-f", "folded", "-o", "-",
                        check_rc=0)
            stacks = parse_folded(r.stdout.decode())
            total = sum(stacks.values())
            named = sum(c for s, c in stacks.items()
                        if any(HOT in f and f.endswith("_[j]") for f in s.split(";")))
            top = sorted(stacks.items(), key=lambda kv: -kv[1])[:3]
            print(f"{total} samples, {named / total:.1%} in {HOT}_[j]")
            # ~2000 at 499 Hz for 4 s on an idle CPU; enough for a share on a loaded machine.
            check(total > 300, f"too few samples: {total}")
            check(named / total > 0.5, f"only {named}/{total} samples named {HOT}_[j]: {top}")
            err = r.stderr.decode()
            check("JIT maps: 1 read" in err, f"no JIT summary: {err}")
            # fgd keeps the JVM's whole signature ("double Hot.middle(int)")...
            hot = {f for s in stacks for f in s.split(";") if HOT in f}
            check(all("(" in f for f in hot), f"signatures lost: {hot}")

            # ...and --stackcollapse-names writes stackcollapse-perf.pl's "double Hot.middle".
            r = d.fgctl("record", "-p", proc.pid, "-t", "2", "-F", "499", "--stackcollapse-names",
                        "-o", os.path.join(tmp, "sc.folded"), check_rc=0)
            with open(os.path.join(tmp, "sc.folded")) as f:
                tidy = parse_folded(f.read())
            tidy_hot = {f for s in tidy for f in s.split(";") if HOT in f}
            want = {f[:f.index("(")] + "_[j]" for f in hot}
            print(f"--stackcollapse-names: {sorted(tidy_hot)}")
            check(tidy_hot and tidy_hot <= want, f"not cut at '(': {tidy_hot}, want {want}")
            check(not any("(" in f or "'" in f or '"' in f
                          for s in tidy for f in s.split(";")[1:]),
                  f"'(' or quotes left below the root: {list(tidy)[:5]}")
    finally:
        if proc:
            proc.kill()
            proc.wait()
            proc.stdout.close()
        if map_path and os.path.exists(map_path):
            os.unlink(map_path)
        shutil.rmtree(tmp)


run(test)
