# SPDX-License-Identifier: LGPL-2.1-or-later
"""fgtest-burn spends 75% of its CPU in hot_a and 25% in hot_b, both called from
main: the folded output must show those call paths in those proportions."""

import contextlib
import json
import os
import re
import subprocess

from fgdtest import Daemon, check, parse_folded, program, require_root, run, wait_for, workload


def test():
    require_root()
    with Daemon() as d, workload("fgtest-burn") as w:
        r = d.fgctl("record", "-p", w.pid, "-t", "5", "-F", "999", "-o", "-", check_rc=0)
        stacks = parse_folded(r.stdout.decode())
        total = sum(stacks.values())
        # One busy thread at 999 Hz for 5 s is ~5000 samples; allow a loaded machine.
        check(total > 2000, f"too few samples: {total}")
        check(all(s.startswith("fgtest-burn;") for s in stacks),
              f"a stack without the process name at its root: {list(stacks)[:3]}")
        a = sum(c for s, c in stacks.items() if s.endswith(";main;hot_a"))
        b = sum(c for s, c in stacks.items() if s.endswith(";main;hot_b"))
        print(f"{total} samples: hot_a {a / total:.1%}, hot_b {b / total:.1%}")
        check(abs(a / total - 0.75) < 0.05, f"hot_a has {a / total:.1%} of samples, expected 75%")
        check(abs(b / total - 0.25) < 0.05, f"hot_b has {b / total:.1%} of samples, expected 25%")
        # Deterministic order: sorted, one line per stack.
        lines = r.stdout.decode().splitlines()
        check(lines == sorted(lines, key=lambda l: l.rsplit(" ", 1)[0].split(";")),
              "folded lines are not in sorted order")
        err = r.stderr.decode()
        check("samples" in err and "lost" in err, f"no summary on stderr: {err!r}")

        # The same with pid/tid root frames, as stackcollapse-perf.pl --pid/--tid write them.
        r = d.fgctl("record", "-p", w.pid, "-t", "1", "--tid-frames", "-o", "-", check_rc=0)
        stacks = parse_folded(r.stdout.decode())
        check(stacks and all(s.startswith(f"fgtest-burn-{w.pid}/{w.pid};") for s in stacks),
              f"--tid-frames root frames wrong: {list(stacks)[:2]}")
        r = d.fgctl("record", "-p", w.pid, "-t", "1", "--pid-frames", "-o", "-", check_rc=0)
        stacks = parse_folded(r.stdout.decode())
        check(stacks and all(s.startswith(f"fgtest-burn-{w.pid};") for s in stacks),
              f"--pid-frames root frames wrong: {list(stacks)[:2]}")

        # render's graph options on record: drawn here from fgd's folded stacks.
        out = os.path.join(d.dir, "icicle.svg")
        r = d.fgctl("record", "-p", w.pid, "-t", "1", "--inverted", "--focus", "main",
                    "--width", "900", "--title", "Icicle", "--colors", "blue", "-o", out,
                    check_rc=0)
        with open(out) as f:
            svg = f.read()
        check('width="900"' in svg and ">Icicle<" in svg, "--width or --title not drawn")
        names = re.findall(r"<title>([^<(]+) \(", svg)
        check("main" in names and "_start" not in names and "hot_a" in names,
              f"--focus main: frames {sorted(set(names))}")
        check(b"wrote" in r.stderr and b"samples" in r.stderr, f"summary: {r.stderr!r}")
        r = d.fgctl("record", "-p", w.pid, "-t", "1", "--inverted", "-o", "-", "-f", "folded",
                    check_rc=2)
        check(b"draw a graph" in r.stderr, f"a graph option for folded text: {r.stderr!r}")
        flame_chart(d)

        cpu_subset(d)
        one_thread(d)


def flame_chart(d):
    """--flamechart: fgd's samples in time order, as flamegraph.pl --flamechart draws
    perf's: a command that runs fgtest-spin, then fgtest-burn, has the spinner's frame left
    of the burner's (a flame graph sorts them by name, the other way round), each whole."""
    out = os.path.join(d.dir, "chart.svg")
    d.fgctl("record", "--flamechart", "-F", "499", "-o", out, "--", "sh", "-c",
            f"{program('fgtest-spin')} 1 > /dev/null; {program('fgtest-burn')} 1 > /dev/null",
            check_rc=0)
    with open(out) as f:
        svg = f.read()
    x = {}
    for name, left in re.findall(r'<title>(fgtest-\w+) \([^<]*</title><rect x="([\d.]+)"', svg):
        x.setdefault(name, []).append(float(left))
    check(len(x.get("fgtest-spin", [])) == 1 and len(x.get("fgtest-burn", [])) == 1 and
          x["fgtest-spin"][0] < x["fgtest-burn"][0],
          f"--flamechart: the processes' frames at {x}")
    print(f"--flamechart: fgtest-spin at x={x['fgtest-spin'][0]}, then fgtest-burn at "
          f"x={x['fgtest-burn'][0]}")


def one_thread(d):
    """--tid: one thread of a process of three (fgtest-perfscript's "fg worker"), its
    process found from the thread, the other threads' samples counted, not drawn; another
    process's samples (fgtest-burn's) count as other processes, as without --tid."""
    proc = subprocess.Popen([program("fgtest-perfscript"), "20"], stdout=subprocess.DEVNULL)
    burn = subprocess.Popen([program("fgtest-burn")], stdout=subprocess.DEVNULL)
    try:
        def worker():
            for tid in os.listdir(f"/proc/{proc.pid}/task"):
                with open(f"/proc/{proc.pid}/task/{tid}/comm") as f:
                    if f.read().strip() == "fg worker":
                        return int(tid)
            return None
        tid = wait_for(worker, "fgtest-perfscript's worker thread")
        meta = os.path.join(d.dir, "tid.json")
        r = d.fgctl("record", "--tid", tid, "--tid-frames", "-t", "1", "-F", "499",
                    "--metadata", meta, "-o", "-", check_rc=0)
        stacks = parse_folded(r.stdout.decode())
        roots = {s.split(";")[0] for s in stacks}
        with open(meta) as f:
            m = json.load(f)
        other, others = m["other_threads"], m["other_processes"]
        check(roots == {f"fg_worker-{proc.pid}/{tid}"} or roots == {f"fg worker-{proc.pid}/{tid}"},
              f"--tid {tid}: root frames {roots}")
        check(other > 0, f"the other threads' samples were not counted: {other}")
        check(others > 0, f"fgtest-burn's samples were not other processes': {m}")
        print(f"--tid {tid}: {sum(stacks.values())} samples of it, {other} of other threads, "
              f"{others} of other processes")
    finally:
        for p in (proc, burn):
            p.kill()
            p.wait()
        # Its "fg jit" thread wrote a perf map, which its end by SIGKILL leaves behind.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"/tmp/perf-{proc.pid}.map")
    r = d.fgctl("record", "--tid", "999999999", "-t", "1", "-o", "-", check_rc=2)
    check(b"no such thread" in r.stderr, f"--tid of no thread: {r.stderr!r}")


def cpu_subset(d):
    """--cpu: only those CPUs are sampled. fgtest-spin pinned to the last CPU, fgtest-burn
    to the first: a whole-machine recording of the first CPU has the burner, never the
    spinner."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        print("--cpu: one CPU here, nothing to leave out")
        return
    first, last = cpus[0], cpus[-1]
    procs = [subprocess.Popen([program(name)], stdout=subprocess.PIPE, text=True,
                              preexec_fn=lambda c=cpu: os.sched_setaffinity(0, {c}))
             for name, cpu in (("fgtest-burn", first), ("fgtest-spin", last))]
    try:
        for p in procs:
            check(p.stdout.readline().strip() == "ready", "a pinned workload did not start")
        r = d.fgctl("record", "-a", "--cpu", str(first), "-t", "1", "-F", "499", "-o", "-",
                    check_rc=0)
        stacks = parse_folded(r.stdout.decode())
        mine = {s.split(";")[0]: 0 for s in stacks}
        for s, c in stacks.items():
            mine[s.split(";")[0]] += c
        check(mine.get("fgtest-burn", 0) > 50 and "fgtest-spin" not in mine,
              f"--cpu {first}: fgtest-burn {mine.get('fgtest-burn')}, fgtest-spin "
              f"{mine.get('fgtest-spin')}")
        # What it says it records: those CPUs, not all.
        check(f"recording CPUs {first} with".encode() in r.stderr, f"--cpu {first}: {r.stderr!r}")
        print(f"--cpu {first}: fgtest-burn {mine['fgtest-burn']} samples, fgtest-spin none")
    finally:
        for p in procs:
            p.kill()
            p.wait()
            p.stdout.close()
    r = d.fgctl("record", "-a", "--cpu", "4095", "-t", "1", "-o", "-", check_rc=2)
    check(b"cpu 4095 is not online" in r.stderr, f"--cpu 4095: {r.stderr!r}")
    r = d.fgctl("record", "-a", "--cpu", "x", "-t", "1", "-o", "-", check_rc=2)
    check(b"invalid --cpu" in r.stderr, f"--cpu x: {r.stderr!r}")


run(test)
