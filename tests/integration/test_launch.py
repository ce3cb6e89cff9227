#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""fgctl record -- CMD ARGS: fgctl runs the command itself and records it and
the processes it starts, as perf record and samply do.

  - A shell that starts fgtest-burn, kills it after a second and exits 3:
    the profile has the shell and fgtest-burn's hot_a and hot_b (a child of
    the command), and fgctl exits 3, saying so.
  - The command runs with the caller's privileges, never root's: run by a
    second user, it writes that user's uid, and the user's recording of it
    works.
  - A command that cannot run: 127 and the reason, and no output file; with
    -p: a usage error.
  - With the profile on stdout (-o -), the command's stdout goes to stderr;
    -q does not say its normal exit.
  - -t shorter than the command: the recording ends, the command is left
    running and named (the test stops it).
"""

import os
import re
import subprocess
import tempfile

from fgdtest import (FGCTL, TEST_GROUP, Daemon, as_user, check, parse_folded, program,
                     require_root, run, test_user)


def test():
    require_root()
    burn = program("fgtest-burn")
    # The second user reaches the socket through its group.
    with tempfile.TemporaryDirectory() as tmp, test_user() as user, \
            Daemon(["--socket-group", TEST_GROUP]) as d:
        out = os.path.join(tmp, "cmd.folded")
        script = f"{burn} > /dev/null & p=$!; sleep 1; kill $p; exit 3"
        r = d.fgctl("record", "-F", "999", "-o", out, "--", "sh", "-c", script)
        check(r.returncode == 3, f"fgctl exited {r.returncode}, not the command's 3: "
              f"{r.stderr.decode()}")
        check(b"sh exited with status 3" in r.stderr, f"no exit status said: {r.stderr!r}")
        with open(out) as f:
            stacks = parse_folded(f.read())
        roots = {s.split(";")[0] for s in stacks}
        burned = sum(c for s, c in stacks.items() if s.startswith("fgtest-burn;") and
                     (s.endswith(";hot_a") or s.endswith(";hot_b")))
        check("sh" in roots and burned > 300,
              f"the command's child was not recorded: roots {roots}, {burned} in hot_a/hot_b")
        # fgctl-exec: the command's process in its exec, before exec renames it.
        check(roots <= {"fgctl-exec", "sh", "fgtest-burn", "sleep", "kill"},
              f"processes the command did not start: {roots}")
        print(f"{sum(stacks.values())} samples of {sorted(roots)}; {burned} in fgtest-burn")

        # The caller's privileges: a second user's command runs as that user.
        os.chmod(tmp, 0o777)
        idfile = os.path.join(tmp, "uid")
        mine = os.path.join(tmp, "user.folded")
        r = subprocess.run(as_user(user, [FGCTL, "--socket", d.socket, "record", "-o", mine,
                                          "--", "sh", "-c", f"id -u > {idfile}"]),
                           capture_output=True, timeout=60)
        check(r.returncode == 0, f"the user's recording failed: {r.stderr.decode()}")
        with open(idfile) as f:
            uid = int(f.read())
        check(uid == int(subprocess.check_output(["id", "-u", user])) and uid != 0,
              f"the command ran as uid {uid}, not {user}'s")

        # A command that cannot run: said, and no profile of nothing is written.
        none = os.path.join(tmp, "none.folded")
        r = d.fgctl("record", "-o", none, "--", "/nonexistent/fgd-test-cmd")
        check(r.returncode == 127 and b"cannot run /nonexistent/fgd-test-cmd" in r.stderr and
              b"exited with status" not in r.stderr and not os.path.exists(none),
              f"a command that cannot run: {r.returncode}, {r.stderr!r}")

        # The profile on stdout: the command's output goes to stderr, not into it. -q says
        # nothing of a normal exit.
        r = d.fgctl("record", "-q", "-o", "-", "--", "sh", "-c",
                    f"echo fgd-test-said; {burn} 1 > /dev/null")
        lines = r.stdout.decode().splitlines()
        check(r.returncode == 0 and lines and all(re.fullmatch(r".+ \d+", l) for l in lines) and
              b"fgd-test-said" in r.stderr and b"exited with status" not in r.stderr,
              f"-o - with a command: {r.returncode} {lines[:3]} {r.stderr!r}")
        r = d.fgctl("record", "-p", "1", "-o", out, "--", "true")
        check(r.returncode == 2 and b"excludes -p and -a" in r.stderr, f"-p with a command: {r.stderr!r}")

        # -t first: the command is left running, and named.
        r = d.fgctl("record", "-t", "0.5", "-o", out, "--", "sleep", "30")
        m = re.search(rb"sleep \(pid (\d+)\) is still running", r.stderr)
        try:
            check(r.returncode == 0 and m, f"-t before the command's end: {r.stderr!r}")
        finally:
            if m:
                os.kill(int(m.group(1)), 9)


run(test)
