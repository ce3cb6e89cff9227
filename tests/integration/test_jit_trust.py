# SPDX-License-Identifier: LGPL-2.1-or-later
"""JIT maps and who may write them. fgtest-jit runs a busy loop in anonymous
executable memory; the test writes /tmp/perf-PID.map naming it, the honest way
and the hostile ways. A trusted map names the loop (with _[j]); a map that is
a symlink, a FIFO, or owned by a uid other than root's or the process's is not
read, the loop stays [unknown], and the recording's metadata reports why.
Also: a process in its own mount and pid namespaces has its map found under
/proc/PID/root/tmp, by the pid it has there."""

import contextlib
import os
import pwd
import shutil
import tempfile

from fgdtest import Daemon, check, jit_program, parse_folded, program, require_root, run

NAME = "fgdJitPlantedLoop"
NOBODY = pwd.getpwnam("nobody")


@contextlib.contextmanager
def jit_process(user=None, namespaced=False):
    """Starts fgtest-jit; yields (pid, nspid, start, size)."""
    cmd = [program("fgtest-jit")]
    copy_dir = None
    if namespaced:
        # The private /tmp hides whatever lives under the host's /tmp, the build
        # tree of a clone made there included: run a copy from elsewhere.
        copy_dir = tempfile.mkdtemp(prefix="fgd-jit-", dir="/var/tmp")
        cmd = [shutil.copy2(cmd[0], copy_dir)]
    if user:
        cmd = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups",
               "--"] + cmd
    if namespaced:
        # A private /tmp in a new mount namespace, and pid 1 of a new pid namespace.
        cmd = ["unshare", "--mount", "--pid", "--fork", "--kill-child", "--propagation", "private",
               "sh", "-c", 'mount -t tmpfs fgd-test-tmp /tmp && exec "$0"', cmd[0]]
    try:
        with jit_program(cmd) as (proc, start, size):
            pid = proc.pid
            try:
                if namespaced:
                    # The workload is unshare's child (sh exec'd into it), not unshare.
                    with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as f:
                        pid = int(f.read().split()[0])
                with open(f"/proc/{pid}/status") as f:
                    nspid = [int(l.split()[-1]) for l in f if l.startswith("NSpid:")][0]
                yield pid, nspid, start, size
            finally:
                if pid != proc.pid:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, 9)
    finally:
        if copy_dir:
            shutil.rmtree(copy_dir)


def map_path(pid, nspid):
    return f"/proc/{pid}/root/tmp/perf-{nspid}.map"


def write_map(path, start, size, owner=0):
    with open(path, "w") as f:
        # jcmd's form and node's form in one file: the second, later line wins.
        f.write(f"0x{start:016x} 0x{size:016x} placeholder that loses\n")
        f.write(f"{start:x} {size:x} {NAME}\n")
    os.chown(path, owner, owner)


def record(d, pid):
    result, data = d.record_raw({"pids": [pid], "duration_ms": 1500, "format": "folded",
                                 "frequency": 499})
    stacks = parse_folded(data.decode())
    total = sum(stacks.values())
    check(total > 100, f"too few samples of pid {pid}: {total}")
    leaf = lambda name: sum(c for s, c in stacks.items() if s.split(";")[-1] == name)
    return result["meta"], stacks, total, leaf


def expect_named(d, pid, what):
    meta, stacks, total, leaf = record(d, pid)
    named = leaf(NAME + "_[j]")
    jit = meta["jit_maps"]
    print(f"{what}: {named}/{total} samples in {NAME}_[j]; jit_maps {jit}")
    check(named / total > 0.8, f"{what}: only {named}/{total} samples named {NAME}_[j]: "
          f"{sorted(stacks.items(), key=lambda kv: -kv[1])[:3]}")
    check(not any("placeholder" in s for s in stacks), f"{what}: an overridden entry named a frame")
    check(jit["maps"] == 1 and jit["entries"] == 2 and jit["malformed"] == 0, f"{what}: {jit}")
    check(jit["frames"] >= named and jit["refused_count"] == 0 and jit["refused"] == [], f"{what}: {jit}")
    check(meta["frames"]["named"] >= jit["frames"], f"{what}: JIT frames not counted as named: {meta['frames']}")


def expect_refused(d, pid, path, reason, what, uid=None):
    meta, stacks, total, leaf = record(d, pid)
    unknown = leaf("[unknown]")
    jit = meta["jit_maps"]
    print(f"{what}: {unknown}/{total} samples [unknown]; jit_maps {jit}")
    check(not any(NAME in s for s in stacks), f"{what}: the refused map named frames")
    check(unknown / total > 0.8, f"{what}: only {unknown}/{total} samples in [unknown]: "
          f"{sorted(stacks.items(), key=lambda kv: -kv[1])[:3]}")
    check(jit["maps"] == 0 and jit["frames"] == 0 and jit["refused_count"] == 1, f"{what}: {jit}")
    r = jit["refused"][0]
    check(r["pid"] == pid and r["path"] == path and r["reason"] == reason,
          f"{what}: refusal reported as {r}, expected pid {pid}, {path}, {reason}")
    if uid is not None:
        check(r.get("uid") == uid, f"{what}: refusal should name uid {uid}: {r}")


def test():
    require_root()
    elsewhere = tempfile.mkdtemp(prefix="fgd-jit-")
    try:
        # Without always-on: its sampler could meet a process before the test wrote its map,
        # and fgd looks for an absent map again only a second later (fgd-jit.c), most of a
        # 1.5 s recording. The trust rules are the same for every reader.
        with Daemon(["--no-always-on"]) as d:
            # Control: root's process, root's map.
            with jit_process() as (pid, nspid, start, size):
                path = map_path(pid, nspid)
                write_map(f"/tmp/perf-{pid}.map", start, size)
                try:
                    expect_named(d, pid, "trusted map")
                finally:
                    os.unlink(f"/tmp/perf-{pid}.map")

            # A symlink to a well-formed, root-owned map: not followed.
            with jit_process() as (pid, nspid, start, size):
                target = os.path.join(elsewhere, "real.map")
                write_map(target, start, size)
                os.symlink(target, f"/tmp/perf-{pid}.map")
                try:
                    expect_refused(d, pid, map_path(pid, nspid), "symlink", "symlinked map")
                    # fgctl tells the user too.
                    r = d.fgctl("record", "-p", pid, "-t", "0.5", "-o", "-", check_rc=0)
                    err = r.stderr.decode()
                    check(f"{map_path(pid, nspid)}: symlink" in err and "JIT maps were not read" in err,
                          f"fgctl did not report the refused map: {err}")
                finally:
                    os.unlink(f"/tmp/perf-{pid}.map")

            # Root's process, a map owned by another user: that user may not name root's frames.
            with jit_process() as (pid, nspid, start, size):
                write_map(f"/tmp/perf-{pid}.map", start, size, owner=NOBODY.pw_uid)
                try:
                    expect_refused(d, pid, map_path(pid, nspid), "owner", "map of another uid",
                                   uid=NOBODY.pw_uid)
                finally:
                    os.unlink(f"/tmp/perf-{pid}.map")

            # A FIFO must neither be read nor stall the daemon.
            with jit_process() as (pid, nspid, start, size):
                os.mkfifo(f"/tmp/perf-{pid}.map")
                try:
                    expect_refused(d, pid, map_path(pid, nspid), "not_regular", "FIFO map")
                finally:
                    os.unlink(f"/tmp/perf-{pid}.map")

            # An unprivileged process's own map is trusted: its uid wrote it.
            with jit_process(user=NOBODY) as (pid, nspid, start, size):
                write_map(f"/tmp/perf-{pid}.map", start, size, owner=NOBODY.pw_uid)
                try:
                    expect_named(d, pid, "map of the process's own uid")
                finally:
                    os.unlink(f"/tmp/perf-{pid}.map")

            # Its own mount and pid namespaces: the map is in its /tmp, under its own pid.
            with jit_process(namespaced=True) as (pid, nspid, start, size):
                check(nspid != pid, f"not in a pid namespace: NSpid {nspid}, pid {pid}")
                write_map(map_path(pid, nspid), start, size)
                check(not os.path.exists(f"/tmp/perf-{nspid}.map"), "the private /tmp is not private")
                expect_named(d, pid, "namespaced process")
    finally:
        shutil.rmtree(elsewhere)


run(test)
