# SPDX-License-Identifier: LGPL-2.1-or-later
"""Access control from SO_PEERCRED: a second user may profile their own
processes only, never root's, and never the whole machine; a denied request
does not stop fgd serving everyone else. The socket is root-only by default."""

import grp
import json
import os
import stat
import subprocess
import sys

from fgdtest import (TEST_GROUP as GROUP, TEST_USER as USER, Daemon, check, parse_folded,
                     require_root, run, test_user, workload)


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


run(test)
