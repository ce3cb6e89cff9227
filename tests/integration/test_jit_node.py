# SPDX-License-Identifier: LGPL-2.1-or-later
"""node --perf-basic-prof writes /tmp/perf-PID.map as it compiles, for its
whole life. The script waits until the recording runs before it starts its hot
function, so the function is compiled, and its map lines appended, while fgd
samples: fgd must re-read the growing map and name the function, with _[j], in
most samples. Then the steady state, without the suffix, and the metadata."""

import json
import os
import re
import shutil
import subprocess
import tempfile

from fgdtest import FGCTL, Daemon, check, parse_folded, require_root, run, skip

HOT = "fgdJitNodeHotLoop"
SCRIPT = f"""
function {HOT}(n) {{
  let x = 0;
  for (let i = 0; i < n; i++) x = (x * 31 + i) % 1000003;
  return x;
}}
process.stdout.write("ready\\n");
process.stdin.once("data", () => {{
  let s = 0;
  for (;;) s += {HOT}(100000);
}});
"""


def share(stacks, pred):
    total = sum(stacks.values())
    return sum(c for s, c in stacks.items() if any(pred(f) for f in s.split(";"))) / total


def test():
    require_root()
    node = shutil.which("node")
    if not node:
        skip("node is not installed")
    tmp = tempfile.mkdtemp(prefix="fgd-jit-node-")
    script = os.path.join(tmp, "hot.js")
    with open(script, "w") as f:
        f.write(SCRIPT)
    # Not inlined into its caller, so its samples carry its own name.
    # In its directory: --perf-basic-prof also writes isolate-*-v8.log where node runs.
    proc = subprocess.Popen([node, "--perf-basic-prof", "--no-turbo-inlining", script], cwd=tmp,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    map_path = f"/tmp/perf-{proc.pid}.map"
    try:
        check(proc.stdout.readline().strip() == "ready", "node did not start")
        check(os.path.exists(map_path), f"node --perf-basic-prof wrote no {map_path}")
        with open(map_path) as f:
            check(HOT not in f.read(), f"{HOT} is in the map before it ran")
        with Daemon() as d:
            rec = subprocess.Popen([FGCTL, "--socket", d.socket, "record", "-p", str(proc.pid),
                                    "-t", "4", "-F", "499", "-f", "folded", "-o", "-"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            try:
                # Start the hot loop once sampling runs: fgctl says so when fgd has started.
                line = rec.stderr.readline().decode()
                check("recording pid" in line, f"fgctl did not start recording: {line!r}")
                proc.stdin.write("go\n")
                proc.stdin.flush()
                out, err = rec.communicate(timeout=60)
            finally:
                if rec.poll() is None:
                    rec.kill()
                    rec.wait()
            check(rec.returncode == 0, f"fgctl record failed: {err.decode()}\n{d.logs()}")
            stacks = parse_folded(out.decode())
            total = sum(stacks.values())
            named = share(stacks, lambda f: f.startswith("JS:") and HOT in f and f.endswith("_[j]"))
            print(f"while compiling: {total} samples, {named:.1%} in {HOT}_[j]")
            # ~2000 at 499 Hz for 4 s on an idle CPU; enough for a share on a loaded machine.
            check(total > 300, f"too few samples: {total}")
            with open(map_path) as f:
                lines = [l for l in f if HOT in l]
            check(lines, f"node never wrote {HOT} to its map")
            check(named > 0.5, f"only {named:.1%} of samples named {HOT}_[j]; map lines {lines}; "
                  f"top stacks {sorted(stacks.items(), key=lambda kv: -kv[1])[:2]}")
            check(re.search(r"JIT maps: 1 read", err.decode()), f"no JIT summary: {err.decode()}")
            st = json.loads(d.fgctl("status", "--json", check_rc=0).stdout)
            print(f"fgd status jit: {st['jit']}")
            check(st["jit"]["maps_read"] == 1 and st["jit"]["refused"] == 0, f"status: {st['jit']}")
            text = d.fgctl("status", check_rc=0).stdout.decode()
            check("jit maps:" in text and "1 maps read" in text, f"fgctl status shows no JIT maps:\n{text}")

            # Steady state, without the suffix.
            r = d.fgctl("record", "-p", proc.pid, "-t", "1", "-F", "499", "--no-jit-suffix", "-f",
                        "folded", "-o", "-", check_rc=0)
            stacks = parse_folded(r.stdout.decode())
            check("_[j]" not in r.stdout.decode(), "--no-jit-suffix still wrote _[j]")
            plain = share(stacks, lambda f: f.startswith("JS:") and HOT in f)
            check(plain > 0.8, f"without the suffix only {plain:.1%} of samples in {HOT}")

            # What the metadata says about it.
            result, data = d.record_raw({"pids": [proc.pid], "duration_ms": 1000, "format": "folded",
                                         "frequency": 499})
            jit, frames = result["meta"]["jit_maps"], result["meta"]["frames"]
            print(f"jit_maps {jit}, frames {frames}")
            check(jit["maps"] == 1 and jit["entries"] >= len(lines) and jit["frames"] > 0, f"{jit}")
            check(jit["refused_count"] == 0 and jit["malformed"] == 0, f"{jit}")
            check(frames["named"] >= jit["frames"], f"JIT frames not counted as named: {frames}")
            check(f"{HOT} " in data.decode() or f"{HOT}_[j]" in data.decode(), "raw result lacks the name")

            # In dwarf mode (fgd's default) JIT frames have no CFI and are unwound by frame
            # pointer, between C++ frames unwound by CFI: the stacks must still be whole.
            q = result["meta"]["stack_quality"]
            print(f"{result['meta']['call_graph']} mode, default dump: {q}")
            check(result["meta"]["call_graph"] == "dwarf", f"not fgd's default mode: {result['meta']}")
            check(q["complete_pct"] >= 95.0 and q["fp_frames"] > 0,
                  f"node stacks through JIT code incomplete in dwarf mode: {q}")
            # A callback run from node's event loop sits under more than perf's 8 KiB
            # default: with that dump its stacks are truncated (not failed), and fgctl
            # says how to get them whole.
            r = d.fgctl("record", "-p", proc.pid, "-t", "1", "-F", "499", "--stack-dump", "8192",
                        "--metadata", os.path.join(tmp, "small.json"), "-o", "-", check_rc=0)
            with open(os.path.join(tmp, "small.json")) as f:
                q = json.load(f)["stack_quality"]
            print(f"dwarf mode, 8 KiB dump: {q}")
            check(q["truncated"] > q["user_stacks"] * 0.5 and q["failed"] <= q["user_stacks"] * 0.05,
                  f"8 KiB dumps of node's stacks not reported as truncated: {q}")
            check("--stack-dump 32768" in r.stderr.decode(),
                  f"no hint about the dump size: {r.stderr.decode()}")
    finally:
        proc.kill()
        proc.wait()
        proc.stdin.close()
        proc.stdout.close()
        if os.path.exists(map_path):
            os.unlink(map_path)
        shutil.rmtree(tmp)


run(test)
