# SPDX-License-Identifier: LGPL-2.1-or-later
"""No file a user controls can stall fgd for everyone else (issue 11, item 1).

An unprivileged user records their own processes with files made to be slow:
  - a JIT process whose /tmp/perf-PID.map is a sparse 8 GiB file: refused as
    too large before a byte is read, and reported so;
  - an executable whose symbol table holds a million and a half functions,
    which takes seconds to read: read on the loader's thread, its samples
    wait for it and then carry the right name.
Meanwhile root records a burner at the default rate and asks for the status
every 20 ms on connections of its own. Before the loader, one such binary
kept fgd from answering anyone for seconds and cost every recording its
records; now the status is answered throughout and no record is lost."""

import json
import os
import pwd
import socket
import subprocess
import tempfile
import threading
import time

from fgdtest import FGCTL, Daemon, check, parse_folded, program, require_root, run, test_user, workload

# A user of its own: other tests add and remove theirs.
USER, GROUP = "fgd-test-hostile", "fgd-test-hostgrp"
BIG_MAP = 8 << 30
BIG_SYMBOLS = 1500000
# fgd's status, asked every 20 ms; the slowest answer allowed while the attacks run. The
# binary's symbols alone take seconds to read (about 3 s here), so a loop that reads them
# cannot meet it.
STATUS_MAX_MS = 1000
# The loop's own longest turn (status "loop"), which no client's scheduling blurs.
LOOP_MAX_MS = 250


class StatusPoller(threading.Thread):
    """Asks fgd for its status every 20 ms on a fresh connection; keeps each latency."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.path, self.stop, self.ms, self.errors = path, threading.Event(), [], []

    def run(self):
        while not self.stop.is_set():
            t0 = time.monotonic()
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                    s.settimeout(30)
                    s.connect(self.path)
                    s.sendall(b'{"fgd":1,"cmd":"status"}\n')
                    buf = b""
                    while not buf.endswith(b"\n"):
                        chunk = s.recv(1 << 20)
                        if not chunk:
                            break
                        buf += chunk
                check(json.loads(buf).get("type") == "status", f"not a status: {buf[:200]!r}")
            except Exception as e:  # noqa: BLE001 - any failure is the finding
                self.errors.append(repr(e))
            self.ms.append((time.monotonic() - t0) * 1000)
            self.stop.wait(0.02)


def record_as(d, user, pid, meta_path):
    r = d.fgctl("record", "-p", pid, "-t", "2", "--metadata", meta_path, "-o", "-", user=user,
                check_rc=0)
    with open(meta_path) as f:
        return parse_folded(r.stdout.decode()), json.load(f)


def jit_attack(d, user, tmp):
    """A sparse 8 GiB perf map: refused on sight, reported, never read."""
    with workload("fgtest-jit", user=user.pw_name) as p:
        p.stdout.readline()  # START SIZE
        path = f"/tmp/perf-{p.pid}.map"
        try:
            with open(path, "wb") as f:
                f.truncate(BIG_MAP)
            os.chown(path, user.pw_uid, user.pw_gid)
            _, meta = record_as(d, user.pw_name, p.pid, os.path.join(tmp, "jit.json"))
        finally:
            os.unlink(path)
    jm = meta["jit_maps"]
    check(jm["refused_count"] == 1 and jm["refused"][0]["reason"] == "too_large",
          f"the 8 GiB map was not refused as too large: {jm}")
    check(jm["refused"][0]["size"] == BIG_MAP, f"the refusal does not say the size: {jm}")
    check(jm["maps"] == 0, f"the map was read: {jm}")


def elf_attack(d, user, tmp):
    """An executable with a huge symbol table: named once read, the loop never waiting for it."""
    exe = os.path.join(tmp, "bigsym")
    subprocess.run([program("fgtest-bigsym"), exe, str(BIG_SYMBOLS)], check=True)
    os.chown(exe, user.pw_uid, user.pw_gid)
    p = subprocess.Popen(["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}",
                          "--clear-groups", "--", exe])
    try:
        stacks, meta = record_as(d, user.pw_name, p.pid, os.path.join(tmp, "elf.json"))
    finally:
        p.kill()
        p.wait()
    named = sum(c for s, c in stacks.items() if s.endswith(";fgdBigSymSpin"))
    total = sum(stacks.values())
    check(total > 0 and named >= 0.9 * total,
          f"the binary's spin loop is not named in {named} of {total} samples: {stacks}")
    check(meta["waited"] > 0, f"no sample waited for the binary's symbols: {meta}")
    print(f"bigsym: {total} samples, {named} named fgdBigSymSpin, {meta['waited']} waited")


def test():
    require_root()
    with test_user(USER, GROUP) as name, tempfile.TemporaryDirectory(dir="/var/tmp") as tmp, \
            Daemon(["--socket-group", GROUP]) as d, workload("fgtest-burn") as burn:
        user = pwd.getpwnam(name)
        os.chown(tmp, user.pw_uid, user.pw_gid)  # the user writes its metadata there
        victim_meta = os.path.join(tmp, "victim.json")
        victim = subprocess.Popen([FGCTL, "--socket", d.socket, "record", "-p", str(burn.pid),
                                   "--metadata", victim_meta, "-o", "-"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        poller = StatusPoller(d.socket)
        try:
            check("recording" in victim.stderr.readline().decode(), "the victim did not start")
            poller.start()
            jit_attack(d, user, tmp)
            elf_attack(d, user, tmp)
        finally:
            poller.stop.set()
            poller.join()
            victim.send_signal(2)  # fgctl stops the recording on SIGINT and writes its result
            victim.communicate(timeout=60)
        with open(victim_meta) as f:
            meta = json.load(f)
        status = json.loads(d.fgctl("status", "--json", check_rc=0).stdout)
        worst = max(poller.ms)
        print(f"status: {len(poller.ms)} answers, slowest {worst:.0f} ms; victim: "
              f"{meta['samples']} samples, {meta['lost']} lost; loop: {status['loop']}; "
              f"loader: {status['loader']}")
        check(not poller.errors, f"status requests failed: {poller.errors[:3]}")
        check(worst < STATUS_MAX_MS, f"a status took {worst:.0f} ms while the attacks ran")
        check(meta["samples"] > 0 and meta["lost"] == 0,
              f"the victim's recording lost records: {meta['lost']} of {meta['samples']}")
        check(status["jit"]["refused"] >= 1, f"status does not count the refused map: {status['jit']}")
        # The loop's own measure of its longest turn: away from the rings and the clients.
        check(status["loop"]["longest_ms"] < LOOP_MAX_MS, f"the loop stalled: {status['loop']}")


run(test)
