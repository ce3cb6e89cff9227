# SPDX-License-Identifier: LGPL-2.1-or-later
"""One policy for kernel frames, in every output. With kernel.perf_event_paranoid
at 2 or more (set for the test, and put back), an unprivileged user profiling a
syscall-heavy workload of their own gets its kernel part as one [kernel] frame
from every verb: record, snapshot (from the window in memory and from the
history on disk), top, and diff --baseline; in folded text, SVG, HTML and top's
JSON, no frame carries _[k] and no kernel function's name appears, the metadata
says kernel_hidden and fgctl prints its note. Root, asking the same of the same
process, sees the kernel functions."""

import json
import time

from fgdtest import (Daemon, check, parse_folded, require_root, run, sysctl, test_user, wait_for,
                     workload)

NOTE = b"kernel frames are collapsed into [kernel]"
# Its own user and group: test_access, of this checkout or another, may add and delete its own
# while this runs.
USER = "fgd-test-kview"
GROUP = "fgd-test-kview-g"


def frames(stacks):
    return {f for s in stacks for f in s.split(";")}


class Leaks:
    """What must not reach the user: found in root's view of the same process."""

    def __init__(self, d, root_stacks):
        kernel = {f[:-len("_[k]")] for f in frames(root_stacks) if f.endswith("_[k]")}
        user_frames = {f for f in frames(root_stacks) if not f.endswith("_[k]")}
        check(kernel, f"root's recording shows no kernel frame: {sorted(root_stacks)[:5]}")
        # A name that is part of a user frame's, or of what every graph holds (its
        # script, its styles), would be found whether it leaked or not.
        boilerplate = b""
        for fmt in ("svg", "html"):
            r = d.fgctl("render", "-f", fmt, "-o", "-", input=b"fgtest;main;do_reads 1\n", check_rc=0)
            boilerplate += r.stdout
        self.names = sorted(k for k in kernel if k != "[unknown]" and len(k) >= 4 and
                            not any(k in u for u in user_frames) and k.encode() not in boilerplate)
        check(self.names, f"no kernel name to look for among {sorted(kernel)}")
        print(f"kernel names root sees: {', '.join(self.names[:8])}{' ...' if len(self.names) > 8 else ''}")

    def shown(self, data):
        return [k for k in self.names if k.encode() in data]

    def check_hidden(self, what, data):
        check(data, f"{what}: empty output")
        check(b"_[k]" not in data, f"{what}: a _[k] frame reached the user: "
              f"{[l for l in data.splitlines() if b'_[k]' in l][:3]}")
        leaked = self.shown(data)
        check(not leaked, f"{what}: kernel functions reached the user: {leaked[:5]}")

    def check_shown(self, what, data):
        check(self.shown(data), f"{what}: root does not see the kernel functions")


def check_folded_hidden(leaks, what, data):
    """Folded text for the user: hidden, and the kernel part there as [kernel] frames."""
    leaks.check_hidden(what, data)
    stacks = parse_folded(data.decode())
    in_kernel = sum(c for s, c in stacks.items() if s.endswith(";[kernel]"))
    check(in_kernel > 0, f"{what}: no stack ends in [kernel]: {sorted(stacks)[:5]}")
    # One frame stands for the whole kernel part.
    check(not any(";[kernel];[kernel]" in s for s in stacks), f"{what}: [kernel] repeated")


def period(since, until=None):
    return ["--since", f"@{since}"] + (["--until", f"@{until}"] if until else [])


def test():
    require_root()
    with open("/proc/sys/kernel/perf_event_paranoid") as f:
        paranoid = int(f.read())
    with test_user(USER, GROUP) as user, sysctl("kernel/perf_event_paranoid", max(paranoid, 2)), \
            Daemon(["--socket-group", GROUP, "--always-on-frequency", "99",
                    "--slice-seconds", "1", "--window-seconds", "4"]) as d:
        t0 = int(time.time())
        with workload("fgtest-syscall", user=user) as w:
            pid = w.pid

            # record: root first, for what there is to hide.
            r = d.fgctl("record", "-p", pid, "-t", "2", "-f", "folded", "-o", "-", check_rc=0)
            leaks = Leaks(d, parse_folded(r.stdout.decode()))
            check(NOTE not in r.stderr, "root was told its kernel frames are hidden")
            for fmt in ("folded", "svg", "html"):
                r = d.fgctl("record", "-p", pid, "-t", "1", "-f", fmt, "-o", "-", user=user, check_rc=0)
                if fmt == "folded":
                    check_folded_hidden(leaks, "record folded", r.stdout)
                else:
                    leaks.check_hidden(f"record {fmt}", r.stdout)
                check(NOTE in r.stderr, f"record {fmt}: no note: {r.stderr!r}")
            r = d.fgctl("record", "-p", pid, "-t", "1", "-f", "svg", "-o", "-", check_rc=0)
            leaks.check_shown("root's record svg", r.stdout)

            # snapshot, from the window in memory.
            def user_samples(since):
                r = d.fgctl("snapshot", *period(since), "-p", pid, "-f", "folded", "-o", "-", "-q",
                            user=user)
                return r.returncode == 0 and sum(parse_folded(r.stdout.decode()).values()) >= 100

            wait_for(lambda: user_samples(t0), "100 always-on samples of the workload", timeout=60)
            for fmt in ("folded", "svg", "html"):
                r = d.fgctl("snapshot", *period(t0), "-p", pid, "-f", fmt, "-o", "-", user=user,
                            check_rc=0)
                if fmt == "folded":
                    check_folded_hidden(leaks, "snapshot folded", r.stdout)
                else:
                    leaks.check_hidden(f"snapshot {fmt}", r.stdout)
                check(NOTE in r.stderr, f"snapshot {fmt}: no note: {r.stderr!r}")
            r = d.fgctl("snapshot", *period(t0), "-p", pid, "-f", "folded", "-o", "-", check_rc=0)
            check(b"_[k]" in r.stdout, "root's snapshot has no kernel frame")
            leaks.check_shown("root's snapshot folded", r.stdout)
            result, data = d.record_raw({"since_ms": t0 * 1000, "pid": pid, "format": "folded"},
                                        cmd="snapshot")
            check(result["meta"].get("kernel_hidden") is False, f"root's snapshot meta: {result['meta']}")

            # top: the protocol's JSON, and fgctl's table.
            raw = d.query_raw("top", {"since_ms": t0 * 1000, "pid": pid}, user=user, raw=True)
            leaks.check_hidden("top json", raw)
            reply = json.loads(raw.decode("utf-8"))
            check(reply["meta"].get("kernel_hidden") is True, f"top meta: {reply['meta']}")
            check(reply["processes"] and reply["processes"][0]["leaf"] == "[kernel]",
                  f"the user's top leaf is not [kernel]: {reply['processes']}")
            root_top = d.query_raw("top", {"since_ms": t0 * 1000, "pid": pid})
            check(root_top["meta"].get("kernel_hidden") is False, f"root's top meta: {root_top['meta']}")
            check(root_top["processes"][0]["leaf"].endswith("_[k]"),
                  f"root's top leaf is not a kernel function: {root_top['processes']}")
            r = d.fgctl("top", *period(t0), "-p", pid, user=user, check_rc=0)
            leaks.check_hidden("fgctl top", r.stdout)
            check(b"[kernel]" in r.stdout and NOTE in r.stderr, f"fgctl top: {r.stdout!r} {r.stderr!r}")

            # diff --baseline: two snapshots, the second from t1 on.
            t1 = int(time.time())
            wait_for(lambda: user_samples(t1), "100 more always-on samples", timeout=60)
            baseline = f"--since @{t0} --until @{t1} -p {pid}"
            for fmt in ("folded", "svg"):
                r = d.fgctl("diff", "--baseline", baseline, *period(t1), "-p", pid, "-f", fmt, "-o", "-",
                            user=user, check_rc=0)
                leaks.check_hidden(f"diff --baseline {fmt}", r.stdout)
                check(NOTE in r.stderr, f"diff --baseline {fmt}: no note: {r.stderr!r}")
            r = d.fgctl("diff", "--baseline", baseline, *period(t1), "-p", pid, "-f", "folded", "-o", "-",
                        check_rc=0)
            leaks.check_shown("root's diff --baseline", r.stdout)
        t_end = int(time.time()) + 1

        # The history on disk: once the window no longer holds the workload's time.
        wait_for(lambda: d.query_raw("status", {})["always_on"]["oldest_ms"] > t_end * 1000,
                 "the window to move past the workload", timeout=30)
        r = d.fgctl("snapshot", *period(t0, t_end), "-p", pid, "-f", "folded", "-o", "-", user=user,
                    check_rc=0)
        check_folded_hidden(leaks, "snapshot from the history", r.stdout)
        r = d.fgctl("snapshot", *period(t0, t_end), "-p", pid, "-f", "folded", "-o", "-", check_rc=0)
        leaks.check_shown("root's snapshot from the history", r.stdout)
        raw = d.query_raw("top", {"since_ms": t0 * 1000, "until_ms": t_end * 1000, "pid": pid},
                          user=user, raw=True)
        leaks.check_hidden("top json from the history", raw)
        reply = json.loads(raw.decode("utf-8"))
        check(reply["meta"]["slices"] > 0 and reply["processes"][0]["leaf"] == "[kernel]",
              f"the user's top from the history: {reply}")


run(test)
