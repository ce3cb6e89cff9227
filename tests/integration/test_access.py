# SPDX-License-Identifier: LGPL-2.1-or-later
"""Access control from SO_PEERCRED: a second user may profile their own
processes only, never root's, and never the whole machine; a denied request
does not stop fgd serving everyone else. The socket is root-only by default.
A member of the reader group (--reader-group, ReaderGroup=) reads every
process's always-on data, snapshot and top, and records like any user."""

import contextlib
import grp
import json
import os
import signal
import stat
import subprocess
import sys
import tempfile

from fgdtest import (FGCTL, FGD, TEST_GROUP as GROUP, TEST_USER as USER, Daemon, check,
                     parse_folded, require_root, run, test_user, wait_for, workload)

# Names of this test's own: a machine's real fgd-readers group must not be touched.
READER = "fgd-test-reader"
READERS = "fgd-test-readers"


@contextlib.contextmanager
def reader_user():
    """READER, in the socket's GROUP and in READERS, made for the test if missing."""
    created = False
    try:
        try:
            grp.getgrnam(READERS)
        except KeyError:
            subprocess.run(["groupadd", "--system", READERS], check=True)
            created = True
        with test_user(READER, GROUP):
            subprocess.run(["usermod", "-a", "-G", READERS, READER], check=True)
            yield READER
    finally:
        if created:
            subprocess.run(["groupdel", READERS], check=False)


def top_pids(d, user):
    r = d.fgctl("top", "--last", "60s", "-n", "1000", "--json", user=user, check_rc=0)
    return {p["pid"] for p in json.loads(r.stdout)["processes"]}


def top_pids_as(d, gid, groups):
    """top as READER with exactly these gid and supplementary groups, not its own."""
    r = subprocess.run(["setpriv", f"--reuid={READER}", f"--regid={gid}",
                        f"--groups={','.join(str(g) for g in groups)}", "--", FGCTL, "--socket",
                        d.socket, "top", "--last", "60s", "-n", "1000", "--json"],
                       capture_output=True, timeout=60)
    if r.returncode != 0 and b"no samples" in r.stderr:
        return set()  # nothing it may see, or nothing yet
    check(r.returncode == 0, f"top as {READER} gid {gid} groups {groups}: {r.stderr!r}")
    return {p["pid"] for p in json.loads(r.stdout)["processes"]}


def snapshot_stacks(d, user, *selectors):
    r = d.fgctl("snapshot", "--last", "60s", "-f", "folded", "-o", "-", *selectors, user=user)
    return parse_folded(r.stdout.decode()) if r.returncode == 0 else {}


def readers():
    """The reader role: every process in queries; recordings as for any user."""
    # A reader group named and missing is a bad configuration, not no role.
    r = subprocess.run([FGD, "--socket", "/nonexistent/fgd.sock", "--reader-group",
                        "fgd-test-no-such-group"], capture_output=True, text=True, timeout=60)
    check(r.returncode == 2 and "No such group: fgd-test-no-such-group" in r.stderr,
          f"a missing reader group: exit {r.returncode}, {r.stderr!r}")
    with reader_user(), \
            Daemon(["--socket-group", GROUP, "--reader-group", READERS,
                    "--always-on-frequency", "99", "--slice-seconds", "1"]) as d, \
            workload("fgtest-burn") as root_burn, workload("fgtest-burn", user=USER) as user_burn:
        # Root's process, in the reader's snapshot and top.
        stacks = wait_for(lambda: snapshot_stacks(d, READER, "-p", root_burn.pid),
                          "root's fgtest-burn in the reader's snapshot")
        check(any(s.endswith(";hot_a") for s in stacks), f"the reader's snapshot lacks hot_a: {stacks}")
        # Whole-machine queries: root's and the other user's processes alike.
        wait_for(lambda: {root_burn.pid, user_burn.pid} <= top_pids(d, READER),
                 "root's and the other user's fgtest-burn in the reader's top")
        # It has no process of its own: whatever it gets is others'.
        r = d.fgctl("snapshot", "--last", "60s", "--comm", "^fgtest-burn$", "-f", "folded",
                    "-o", "-", user=READER, check_rc=0)
        check(r.stdout, "the reader's whole-machine snapshot is empty")
        # A heat map of a period is a query too.
        r = d.fgctl("heatmap", "--last", "60s", "-p", root_burn.pid, "-f", "json", "-o", "-",
                    user=READER, check_rc=0)
        check(json.loads(r.stdout), "the reader's heat map of root's process is empty")

        # Recording stays the ordinary rule: never another user's process, never -a.
        r = d.fgctl("record", "-p", root_burn.pid, "-t", "1", "-o", "-", user=READER, check_rc=4)
        check(b"another user" in r.stderr, f"unclear refusal of a reader's record: {r.stderr!r}")
        r = d.fgctl("record", "-a", "-t", "1", "-o", "-", user=READER, check_rc=4)
        check(b"needs root" in r.stderr, f"unclear refusal of a reader's -a: {r.stderr!r}")
        r = d.fgctl("heatmap", "-p", root_burn.pid, "-t", "1", "-f", "json", "-o", "-",
                    user=READER, check_rc=4)
        check(b"another user" in r.stderr, f"unclear refusal of a reader's heatmap -t: {r.stderr!r}")

        # The groups are the connecting process's, as the kernel has them: the reader group
        # as its gid counts, and a process that dropped it is no reader, whatever
        # /etc/group says of the user.
        socket_gid, readers_gid = grp.getgrnam(GROUP).gr_gid, grp.getgrnam(READERS).gr_gid
        check(root_burn.pid in top_pids_as(d, readers_gid, [socket_gid]),
              "the reader group as the gid does not make a reader")
        check(root_burn.pid not in top_pids_as(d, socket_gid, [socket_gid]),
              "a process without the reader group reads root's process")

        # Not in the group: their own processes only, as before.
        check(user_burn.pid in top_pids(d, USER), "the user's own process is missing from their top")
        pids = top_pids(d, USER)
        check(root_burn.pid not in pids, f"a user who is no reader sees root's process in top: {pids}")
        check(not snapshot_stacks(d, USER, "-p", root_burn.pid),
              "a user who is no reader sees root's process in a snapshot")
        check(snapshot_stacks(d, USER, "-p", user_burn.pid), "the user's own snapshot is empty")
        print(f"readers: {READER} reads root's pid {root_burn.pid} in snapshot, top and heatmap, "
              f"may not record it; {USER} sees only their own")


def reader_reload():
    """ReaderGroup= from fgd.conf; a reload changes the role of the connections after it, and a
    reload naming a missing group keeps the running one."""
    with reader_user(), tempfile.TemporaryDirectory() as tmp, \
            workload("fgtest-burn") as root_burn:
        conf = os.path.join(tmp, "fgd.conf")
        with open(conf, "w") as f:
            f.write(f"[fgd]\nReaderGroup={READERS}\n")
        with Daemon(["-c", conf, "--socket-group", GROUP, "--always-on-frequency", "99",
                     "--slice-seconds", "1"]) as d:
            groups = [grp.getgrnam(GROUP).gr_gid, grp.getgrnam(READERS).gr_gid]
            gid = groups[0]

            def reload(text, want):
                n = d.logs().count(want)
                with open(conf, "w") as f:
                    f.write(text)
                d.proc.send_signal(signal.SIGHUP)
                wait_for(lambda: d.logs().count(want) > n, f"the reload ({want!r} logged)")

            wait_for(lambda: root_burn.pid in top_pids_as(d, gid, groups),
                     "root's fgtest-burn in a reader's top (ReaderGroup= in fgd.conf)")
            reload("[fgd]\nReaderGroup=fgd-test-no-such-group\n", "keeping the running one")
            check("No such group: fgd-test-no-such-group" in d.logs(), "no reason for the refusal")
            check(root_burn.pid in top_pids_as(d, gid, groups),
                  "a refused reload took the reader role away")
            # A group the user is not in: no reader any more, root's process out of sight.
            reload("[fgd]\nReaderGroup=root\n", "Configuration reloaded")
            check(root_burn.pid not in top_pids_as(d, gid, groups),
                  "the reader role outlived a reload that gave it to another group")
            print("reader_reload: ReaderGroup= from fgd.conf, kept by a refused reload, "
                  "given to another group by a reload")


def test():
    require_root()
    with test_user():
        # Default: only root may connect.
        with Daemon() as d:
            mode = stat.S_IMODE(os.stat(d.socket).st_mode)
            check(mode == 0o600, f"default socket mode is {oct(mode)}, expected 0600")
            r = d.fgctl("status", user=USER, check_rc=4)
            check(b"permission denied" in r.stderr, f"unclear refusal: {r.stderr!r}")

        with Daemon(["--socket-group", GROUP]) as d, workload("fgtest-burn") as root_burn, \
                workload("fgtest-burn", user=USER) as user_burn:
            st = os.stat(d.socket)
            check(stat.S_IMODE(st.st_mode) == 0o660, f"group socket mode is {oct(st.st_mode)}")
            check(st.st_gid == grp.getgrnam(GROUP).gr_gid, "socket group not set")

            r = d.fgctl("record", "-p", root_burn.pid, "-t", "1", "-o", "-", user=USER, check_rc=4)
            check(b"another user" in r.stderr, f"unclear refusal: {r.stderr!r}")
            check(r.stdout == b"", "a denied recording wrote output")
            r = d.fgctl("record", "-a", "-t", "1", "-o", "-", user=USER, check_rc=4)
            check(b"needs root" in r.stderr, f"unclear refusal of -a: {r.stderr!r}")
            # A list with one foreign pid is refused whole.
            d.fgctl("record", "-p", f"{user_burn.pid},{root_burn.pid}", "-t", "1", "-o", "-",
                    user=USER, check_rc=4)

            # fgd keeps serving everyone: root, and the user for their own process.
            d.fgctl("status", check_rc=0)
            r = d.fgctl("record", "-p", user_burn.pid, "-t", "2", "-o", "-", user=USER, check_rc=0)
            stacks = parse_folded(r.stdout.decode())
            check(any(s.endswith(";hot_a") for s in stacks), "user's own recording lacks hot_a")
            r = d.fgctl("status", "--json", check_rc=0)
            check(b'"denied":3' in r.stdout.replace(b" ", b""), f"denials not counted: {r.stdout[:2000]!r}")

            # One user cannot take every connection: past their share, each new connection of theirs
            # closes their own oldest idle one (test_client_slots.py), and root still gets in.
            hog = subprocess.Popen(
                ["setpriv", f"--reuid={USER}", f"--regid={USER}", "--init-groups", "--", sys.executable, "-c",
                 "import socket, sys\n"
                 "socks = []\n"
                 "for i in range(20):\n"
                 "    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); socks.append(s)\n"
                 "    try:\n"
                 "        s.send(b'{')\n"
                 "    except OSError:\n"
                 "        pass  # closed by fgd for a newer one: what this checks\n"
                 "print('connected', flush=True)\n"
                 "sys.stdin.read()\n", d.socket],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            try:
                check(hog.stdout.readline().strip() == "connected", "the connecting user failed")
                d.fgctl("status", user=USER, check_rc=0)
                st = json.loads(d.fgctl("status", "--json", check_rc=0).stdout)["server"]
                check(st["clients"] <= 8 + 1, f"the user holds more than their 8 connections: {st}")
                check(st["clients_evicted"] >= 20 + 1 - 8, f"evictions not counted: {st}")
            finally:
                hog.stdin.close()
                hog.wait(timeout=30)
        readers()
        reader_reload()


run(test)
