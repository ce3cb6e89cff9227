# SPDX-License-Identifier: LGPL-2.1-or-later
"""Time the history has no record of is a gap, not idle time (issue 28, finding 4).

A storm that starves fgd is played by SIGSTOP: fgd stops for 8 s while a
burner runs, as the storm's 40 s and 70 s stretches stopped it. Then a
restart leaves a few seconds with no fgd at all.
  - top and snapshot over the stopped stretch name the gap ("no data for
    A-B: fgd was not sampling or lost samples"), in the summary and in the
    metadata (gap_count, gap_ms, gaps), from memory and, once the stretch
    left the window, from disk alike;
  - across the restart, the time no fgd ran is a gap too;
  - a period inside that gap is an error that names the gap, not "no
    samples"; push reports its periods as lost, counts them and fails
    (--once), where it used to log "no samples" and move on;
  - a period fgd covered with nothing of the selection in it is still plain
    "no samples", with no gap: idle stays idle.
Before, the answers were "no samples in that period" or a profile with no
word of the missing time."""

import json
import os
import signal
import time

from fgdtest import Daemon, check, require_root, run, wait_for, workload
from test_push import Ingest

ARGS = ["--always-on-frequency", "99", "--slice-seconds", "1", "--window-seconds", "20"]
STOP_S = 8


def gaps(meta):
    return [(g["from_ms"] / 1000, g["until_ms"] / 1000) for g in meta.get("gaps", [])]


def overlap(gs, a, b):
    """Seconds of [a, b) the gaps gs cover."""
    return sum(max(0, min(b, y) - max(a, x)) for x, y in gs)


def check_gap(meta, a, b, what):
    gs = gaps(meta)
    check(meta.get("gap_count", 0) >= 1 and overlap(gs, a, b) >= (b - a) - 1.5,
          f"{what}: no gap named over [{a:.1f}, {b:.1f}): {gs}, {meta}")


def query_json(d, verb, a, b, *sel):
    """The metadata of a top or snapshot of [a, b), or of its error."""
    period = ["--since", f"@{a:.3f}", "--until", f"@{b:.3f}", *sel]
    if verb == "top":
        r = d.query_raw("top", {"since_ms": int(a * 1000), "until_ms": int(b * 1000)})
        return r.get("meta", {}), r
    r = d.fgctl("snapshot", *period, "--json", "-o", os.path.join(d.dir, "out.svg"))
    return (json.loads(r.stdout) if r.returncode == 0 else {}), r


def test():
    require_root()
    with Daemon(ARGS) as d, workload("fgtest-burn") as w:
        state = os.path.join(d.dir, "state")
        # A few slices first, then fgd stopped as a starved loop is.
        wait_for(lambda: d.status()["always_on"]["slices"] >= 4, "four slices", 30)
        stop = time.time()
        os.kill(d.proc.pid, signal.SIGSTOP)
        time.sleep(STOP_S)
        os.kill(d.proc.pid, signal.SIGCONT)
        cont = time.time()
        wait_for(lambda: time.time() >= cont + 3, "slices after the stop", 10)
        # From memory: the stretch within the stop, a second in from each end.
        a, b = stop + 1.5, cont - 1.5
        for verb in ("top", "snapshot"):
            meta, r = query_json(d, verb, stop - 2, cont + 2)
            check(meta, f"{verb} across the stop failed: {r}")
            check_gap(meta, a, b, f"{verb} from memory")
        r = d.fgctl("top", "--since", f"@{stop - 2:.3f}", "--until", f"@{cont + 2:.3f}", check_rc=0)
        err = r.stderr.decode()
        print(err, end="")
        check("no data for" in err and "fgd was not sampling or lost samples" in err,
              f"top's summary does not name the gap: {err!r}")

        # From disk, once the window (20 s) has let it go.
        wait_for(lambda: d.status()["always_on"]["oldest_ms"] / 1000 > cont + 1, "the window to pass the stop", 60)
        meta, r = query_json(d, "snapshot", stop - 2, cont + 2)
        check(meta, f"snapshot across the stop, from disk, failed: {r}")
        check_gap(meta, a, b, "snapshot from disk")
        d.stop()
        down = time.time()

        # Nobody sampling for a few seconds, then fgd again on the same history.
        time.sleep(6)
        with Daemon(ARGS + ["--state-directory", state]) as d2:
            up = time.time()
            wait_for(lambda: time.time() >= up + 3, "slices after the restart", 10)
            meta, r = query_json(d2, "snapshot", down - 3, up + 2)
            check(meta, f"snapshot across the restart failed: {r}")
            check_gap(meta, down + 0.5, up - 0.5, "across the restart")

            # Within the gap: an error that names it, never "no samples".
            r = d2.fgctl("snapshot", "--since", f"@{down + 1:.3f}", "--until", f"@{up - 1:.3f}",
                         "-o", os.path.join(d2.dir, "gap.svg"))
            err = r.stderr.decode()
            print(err, end="")
            check(r.returncode != 0 and "no data for" in err
                  and "fgd was not sampling or lost samples" in err,
                  f"a period inside the gap: rc {r.returncode}, {err!r}")

            # Covered but without the selection: idle, no gap.
            r = d2.fgctl("snapshot", "--since", f"@{up + 0.5:.3f}", "--until", f"@{up + 2.5:.3f}",
                         "--comm", "^no-such-process$", "-o", os.path.join(d2.dir, "idle.svg"))
            err = r.stderr.decode()
            check(r.returncode != 0 and "no samples of the selected processes" in err
                  and "no data for" not in err, f"an idle period: rc {r.returncode}, {err!r}")

            # push: the periods in the gap are lost, said and counted, and --once fails.
            with Ingest() as srv:
                first = int(down) // 2 * 2 - 2
                cursor = os.path.join(d2.dir, "cursor")
                with open(cursor, "w") as f:
                    f.write(f"fgd-push 1\nuntil={first * 1000}\n")
                r = d2.fgctl("push", "--once", "--url", f"http://127.0.0.1:{srv.port}",
                             "--comm", "^fgtest-burn$", "--every", "2s", "--delay", "1s",
                             "--cursor", cursor)
                err = r.stderr.decode()
                print(err, end="")
                inside = [p for p in range(first, int(up), 2) if p >= down and p + 2 <= up]
                check(inside, f"no whole 2 s period inside the gap [{down}, {up})")
                for p in inside:
                    hm = time.strftime("%H:%M:%S", time.localtime(p))
                    check(f"push {hm}-" in err and "no samples" not in err.split(f"push {hm}-")[1].split("\n")[0],
                          f"the period at {hm} is not reported: {err!r}")
                check(r.returncode != 0 and f" lost: fgd has no samples of it to send" in err,
                      f"push over the gap: rc {r.returncode}, {err!r}")
                check(len(srv.take()) > 0, "push sent nothing of the periods fgd covered")


if __name__ == "__main__":
    run(test)
