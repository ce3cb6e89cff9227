# SPDX-License-Identifier: LGPL-2.1-or-later
"""A binary replaced or deleted on disk while its process runs (a package
upgrade) must still be named from the file the process mapped, never from
the new file at its path.

fgtest-hot-old and fgtest-hot-new are the same code at the same addresses,
spinning in hot_old and hot_new: reading the wrong file would show the wrong
name. Processes started before fgd (read from /proc) and after it (perf
MMAP2 records with build-ids) are both covered, and so are a replacement by
rename and an unlink.
"""

import contextlib
import os
import shutil
import subprocess
import tempfile

from fgdtest import Daemon, check, parse_folded, program, require_root, run


@contextlib.contextmanager
def started(path):
    """Runs the binary at path until the block ends; waits for its "ready" line."""
    proc = subprocess.Popen([path], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        check(line.strip() == "ready", f"{path} did not start: {line!r}")
        yield proc
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()


def replace(src, dst):
    """Writes src to a new file and renames it over dst, as package managers do."""
    tmp = dst + ".new"
    shutil.copyfile(src, tmp)
    os.chmod(tmp, 0o755)
    os.rename(tmp, dst)


def leaf_counts(stacks, pid):
    """Samples of pid (by its --pid-frames root) whose stacks hold hot_old, hot_new."""
    mine = {s: c for s, c in stacks.items() if s.split(";")[0].endswith(f"-{pid}")}
    old = sum(c for s, c in mine.items() if "hot_old" in s.split(";"))
    new = sum(c for s, c in mine.items() if "hot_new" in s.split(";"))
    return sum(mine.values()), old, new


def test():
    require_root()
    old, new = program("fgtest-hot-old"), program("fgtest-hot-new")
    with tempfile.TemporaryDirectory(prefix="fgd-replaced-") as tmp:
        app, gone, app2 = (os.path.join(tmp, n) for n in ("app", "gone", "app2"))
        for path in (app, gone, app2):
            shutil.copy(old, path)
        # Started before fgd: fgd reads it from /proc, where its path is already "(deleted)".
        with started(app) as before:
            replace(new, app)
            with Daemon() as d, started(gone) as unlinked, started(app2) as after, \
                    started(app) as fresh:
                # Started after fgd (MMAP2 records): one file unlinked, one replaced.
                os.unlink(gone)
                replace(new, app2)
                # fresh runs the new file at the old path: it must get the new names.
                pids = [before.pid, unlinked.pid, after.pid, fresh.pid]
                r = d.fgctl("record", "-p", ",".join(map(str, pids)), "-t", "3", "-F", "499",
                            "--pid-frames", "-o", "-", check_rc=0)
        stacks = parse_folded(r.stdout.decode())
        for name, pid, want, other in (("started before fgd, replaced", before.pid, "old", "new"),
                                       ("unlinked", unlinked.pid, "old", "new"),
                                       ("started after fgd, replaced", after.pid, "old", "new"),
                                       ("the new file", fresh.pid, "new", "old")):
            total, n_old, n_new = leaf_counts(stacks, pid)
            counts = {"old": n_old, "new": n_new}
            print(f"{name}: {total} samples, hot_old {n_old}, hot_new {n_new}")
            check(total > 100, f"{name}: too few samples ({total})")
            check(counts[want] > total / 2,
                  f"{name}: hot_{want} in {counts[want]} of {total} samples: {list(stacks)[:6]}")
            check(counts[other] == 0, f"{name}: the other binary's hot_{other} was shown")


run(test)
