# SPDX-License-Identifier: LGPL-2.1-or-later
"""A JIT map written just before a recording names the recording's samples
from its first one (issue 17, item 4b). `jcmd PID Compiler.perfmap`, then
`fgctl record`: the always-on sampler had looked for the map, absent, less
than a second before it was written, and a miss re-reads a map at most once
a second while it is absent, so every JIT frame of the recording's first
(up to) second was [unknown], about 5% of a 10 s recording, and none of a
recording made later. A recording does not take a look from before it began
for an answer. fgtest-jit runs a busy loop in anonymous executable memory;
the map naming it is written while always-on samples it, and a recording
started at once must have no [unknown] frame. Each round's window was random
(the time left until the next look), so three rounds, each a new process
(a map's state is per process): all three passing without the fix is a few
chances in 100,000. Each round waits for always-on's misses to be held by
the rate limit (status jit.held), the state the recording meets."""

from fgdtest import Daemon, check, jit_program, parse_folded, program, require_root, run, wait_for

NAME = "fgdJitLateMapLoop"


def test():
    require_root()
    with Daemon() as d:
        for round_ in range(3):
            held = d.status()["jit"]["held"]
            with jit_program([program("fgtest-jit")]) as (proc, start, size):
                pid = proc.pid
                # Always-on (19 Hz) samples the loop and looks for the map, absent; its
                # next misses wait for the rate limit.
                wait_for(lambda: d.status()["jit"]["held"] > held,
                         "always-on's misses held by the rate limit")
                with open(f"/tmp/perf-{pid}.map", "w") as f:
                    f.write(f"0x{start:016x} 0x{size:016x} {NAME}\n")
                r = d.fgctl("record", "-p", pid, "-t", "1", "-F", "999", "--call-graph", "dwarf",
                            "-f", "folded", "-o", "-", check_rc=0)
                stacks = parse_folded(r.stdout.decode())
                total = sum(stacks.values())
                unknown = sum(c for s, c in stacks.items() if "[unknown]" in s.split(";"))
                named = sum(c for s, c in stacks.items() if NAME + "_[j]" in s.split(";"))
                print(f"round {round_}: {total} samples, {named} in {NAME}_[j], {unknown} with "
                      f"[unknown]")
                check(total > 300, f"too few samples: {total}")
                check(unknown == 0, f"{unknown}/{total} samples with [unknown] although the map "
                      f"was written before the recording: "
                      f"{sorted(stacks.items(), key=lambda kv: -kv[1])[:3]}")
                check(named / total > 0.8, f"only {named}/{total} samples named {NAME}_[j]")
        print(f"status jit.held: {d.status()['jit']['held']}")


run(test)
