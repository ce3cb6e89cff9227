#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every file fgctl and fgd write, against links planted by another user.

An unprivileged user plants symlinks to a root-owned 0600 file (the victim)
where root's fgctl and fgd write, and keeps planting them while they run.
fs.protected_symlinks is off for the test, as on hosts without it: the
programs must not rely on it.
  - push's cursor in a directory that user owns: push refuses it and says
    why; nothing is sent, nothing written, the victim is as it was.
  - push's cursor in a sticky, world-writable directory (as /tmp), the
    user planting "cursor.tmp" and the cursor's other names as links over
    and over: push runs its periods, the cursor is a regular file of
    root's, the victim is as it was. A cursor that is a symlink, or that
    belongs to the user, is refused.
  - fgctl -o: a link of the user's, to the victim or to a file that does
    not exist yet, is refused with a message naming the link's owner;
    root's own link is followed; a device is written as it is.
  - fgd's socket: a link planted at its path keeps fgd from starting,
    said, and the victim is as it was.
(fgd's history files are created through the directory's descriptor with
O_EXCL | O_NOFOLLOW: test-history plants a link at a slice's temporary name.)
"""

import contextlib
import os
import subprocess
import sys
import tempfile
import time

from fgdtest import (FGCTL, FGD, Daemon, as_user, check, require_root, run, sysctl, test_user,
                     wait_for, workload)
from test_push import Ingest

USER = "fgd-writer-test"
GROUP = "fgd-writer-group"
SECRET = b"root's secret\n"


def make_victim(tmp):
    victim = os.path.join(tmp, "victim")
    with open(victim, "wb") as f:
        f.write(SECRET)
    os.chmod(victim, 0o600)
    return victim


def check_victim(victim, what):
    with open(victim, "rb") as f:
        data = f.read()
    check(data == SECRET, f"{what}: the victim was written: {data[:80]!r}")
    check(os.stat(victim).st_mode & 0o777 == 0o600, f"{what}: the victim's mode changed")


@contextlib.contextmanager
def planter(user, victim, paths):
    """user planting a link to victim at each of paths, again as soon as one is gone."""
    code = ("import os, sys\n"
            "victim, paths = sys.argv[1], sys.argv[2:]\n"
            "while True:\n"
            "    for p in paths:\n"
            "        try:\n"
            "            os.symlink(victim, p)\n"
            "        except OSError:\n"
            "            pass\n")
    proc = subprocess.Popen(as_user(user, [sys.executable, "-c", code, victim] + paths))
    try:
        # The first links are in place before the program under test starts.
        wait_for(lambda: all(os.path.islink(p) for p in paths), "the links planted", timeout=10)
        yield proc
    finally:
        proc.kill()
        proc.wait()


def push(d, srv, cursor):
    return d.fgctl("push", "--url", f"http://127.0.0.1:{srv.port}", "--comm", "^fgtest-burn$",
                   "--every", "1s", "--delay", "1s", "--last", "3s", "--once", "--cursor", cursor)


def cursor_in_users_dir(d, srv, tmp, victim):
    """The issue's case: the cursor's directory is the user's (/var/lib/fgd-push)."""
    home = os.path.join(tmp, "users-dir")
    os.mkdir(home)
    os.chown(home, *user_ids())
    cursor = os.path.join(home, "cursor")
    with planter(USER, victim, [cursor + ".tmp"]):
        srv.take()
        r = push(d, srv, cursor)
    err = r.stderr.decode()
    check(r.returncode != 0, f"push used a cursor in another user's directory: {err}")
    check("refusing the cursor" in err and "owned by another user" in err,
          f"the refusal does not say why: {err!r}")
    check(not srv.take(), "push sent profiles before refusing its cursor")
    check_victim(victim, "cursor in the user's directory")
    print(f"users-dir: refused: {err.strip()}")


def cursor_in_sticky_dir(d, srv, tmp, victim):
    """A directory as /tmp: the user plants the cursor's temporary names, again and again."""
    shared = os.path.join(tmp, "sticky")
    os.mkdir(shared)
    os.chmod(shared, 0o1777)
    cursor = os.path.join(shared, "cursor")
    with planter(USER, victim, [cursor + ".tmp", os.path.join(shared, ".cursor.tmp")]):
        r = push(d, srv, cursor)
        err = r.stderr.decode()
        check(r.returncode == 0, f"push failed in a sticky directory: {err}")
        check(srv.take(), f"nothing was sent: {err}")
        # Once more with the cursor there: loaded, saved again.
        time.sleep(1.1)
        r = push(d, srv, cursor)
        check(r.returncode == 0, f"push failed on its own cursor: {r.stderr.decode()}")
    st = os.lstat(cursor)
    check(not os.path.islink(cursor) and st.st_uid == 0, "the cursor is not root's own file")
    with open(cursor) as f:
        check(f.read().startswith("fgd-push 1\n"), "the cursor is not a cursor")
    check_victim(victim, "cursor in a sticky directory")

    # A cursor that is a link, or the user's own file: refused, not read, not replaced.
    os.unlink(cursor)
    os.symlink(victim, cursor)
    r = push(d, srv, cursor)
    err = r.stderr.decode()
    check(r.returncode != 0 and "it is a symlink" in err, f"a symlinked cursor: {err!r}")
    check(os.path.islink(cursor), "the symlinked cursor was replaced")
    os.unlink(cursor)
    subprocess.run(as_user(USER, ["sh", "-c", f"printf 'fgd-push 1\\nuntil=0\\n' > {cursor}"]),
                   check=True)
    r = push(d, srv, cursor)
    err = r.stderr.decode()
    check(r.returncode != 0 and "belongs to another user" in err, f"the user's cursor: {err!r}")
    check_victim(victim, "planted cursors")
    print("sticky-dir: periods pushed past the planted links; planted cursors refused")


def output_links(tmp, victim):
    """fgctl -o: the user's links are not followed, root's are."""
    shared = os.path.join(tmp, "out")
    os.mkdir(shared)
    os.chmod(shared, 0o1777)
    folded = os.path.join(tmp, "in.folded")
    with open(folded, "w") as f:
        f.write("main;hot_a 3\nmain;hot_b 1\n")
    uid = user_ids()[0]

    def render(out, *extra):
        return subprocess.run([FGCTL, "render", folded, "-o", out, *extra], capture_output=True)

    for name, target in (("to-victim.svg", victim), ("dangling.svg", os.path.join(tmp, "new"))):
        link = os.path.join(shared, name)
        subprocess.run(as_user(USER, ["ln", "-s", target, link]), check=True)
        r = render(link)
        err = r.stderr.decode()
        check(r.returncode != 0 and f"a symlink of another user's (uid {uid})" in err,
              f"-o through the user's link to {target}: rc {r.returncode}, {err!r}")
        check(os.path.islink(link), f"{name} was replaced")
    check(not os.path.exists(os.path.join(tmp, "new")), "a file was created through a link")
    check_victim(victim, "-o through the user's links")

    # Root's own link: the file it points to is replaced, the link kept.
    mine = os.path.join(tmp, "mine.svg")
    os.symlink("real.svg", mine)
    r = render(mine)
    check(r.returncode == 0, f"-o through root's own link: {r.stderr.decode()}")
    check(os.path.islink(mine) and os.path.getsize(os.path.join(tmp, "real.svg")) > 1000,
          "root's link was not followed")
    r = render("/dev/null", "-f", "svg")
    check(r.returncode == 0, f"-o /dev/null: {r.stderr.decode()}")
    print("output: the user's links refused, root's followed, /dev/null written")


def socket_link(tmp, victim):
    """fgd's socket path planted as a link: fgd does not start, and says why."""
    path = os.path.join(tmp, "fgd.sock")
    os.symlink(victim, path)
    r = subprocess.run([FGD, "--socket", path, "--state-directory", os.path.join(tmp, "state")],
                       capture_output=True, timeout=60)
    err = r.stderr.decode()
    check(r.returncode != 0, f"fgd started on a symlink: {err}")
    check(path in err, f"fgd does not say which socket: {err!r}")
    check(os.path.islink(path), "fgd removed the link")
    check_victim(victim, "fgd's socket")
    print(f"socket: {err.strip().splitlines()[-1]}")


def user_ids():
    import pwd
    pw = pwd.getpwnam(USER)
    return pw.pw_uid, pw.pw_gid


def test():
    require_root()
    with tempfile.TemporaryDirectory() as tmp, test_user(USER, GROUP), \
            sysctl("fs/protected_symlinks", 0):
        os.chmod(tmp, 0o755)  # the user reaches its directories in it
        victim = make_victim(tmp)
        output_links(tmp, victim)
        socket_link(tmp, victim)
        with Daemon(["--always-on-frequency", "199", "--slice-seconds", "1"]) as d, \
                workload("fgtest-burn"), Ingest() as srv:
            start = time.time()
            wait_for(lambda: time.time() - start >= 3 and
                     d.fgctl("snapshot", "--last", "3s", "--comm", "^fgtest-burn$", "-o", "-",
                             "-f", "folded").returncode == 0,
                     "3 s of fgtest-burn in the window", timeout=30)
            cursor_in_users_dir(d, srv, tmp, victim)
            cursor_in_sticky_dir(d, srv, tmp, victim)


run(test)
