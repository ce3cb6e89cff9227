# SPDX-License-Identifier: LGPL-2.1-or-later
"""A workload in a container made by hand: its own mount and pid namespaces
(unshare), a private tmpfs root (chroot), and a cgroup of its own.

Inside the container the workload's binary is fgtest-hot-old at a path that,
on the host, holds fgtest-hot-new: the same code under another name. fgd must
name the container's hot function (hot_old, never hot_new), find it by its
host pid, and with --group-by put its cgroup at the root of every stack, in
recordings and in snapshots of always-on.
"""

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile

from fgdtest import Daemon, check, parse_folded, program, require_root, run, skip, wait_for


def cgroup2_mount():
    """Where the cgroup v2 hierarchy is mounted, and the path of its root within it."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            sep = fields.index("-")
            if fields[sep + 1] == "cgroup2":
                return fields[4], fields[3]
    return None, None


@contextlib.contextmanager
def test_cgroup():
    mount, _ = cgroup2_mount()
    if not mount:
        skip("no cgroup v2 hierarchy mounted")
    path = os.path.join(mount, f"fgd-test-{os.getpid()}")
    os.mkdir(path)
    try:
        yield path
    finally:
        # Its processes were killed; the kernel empties it shortly after.
        def empty():
            with open(os.path.join(path, "cgroup.procs")) as f:
                return f.read().strip() == ""
        wait_for(empty, f"{path} to empty")
        os.rmdir(path)


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except FileNotFoundError:
        return []


@contextlib.contextmanager
def container(tmp, binary, inner_path, cgroup):
    """Runs binary at inner_path in new mount and pid namespaces, chrooted into a tmpfs.

    Yields the workload's host pid once it printed "ready". The tmpfs lives only in
    the container's mount namespace; the host sees an empty directory.
    """
    root = os.path.join(tmp, "root")
    os.mkdir(root)
    script = ('set -e; mount -t tmpfs none "$1"; mkdir -p "$1$(dirname "$2")" "$1/proc"; '
              'cp "$3" "$1$2"; mount -t proc proc "$1/proc"; exec chroot "$1" "$2"')

    def enter_cgroup():
        with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))

    proc = subprocess.Popen(["unshare", "--mount", "--pid", "--fork", "--kill-child",
                             "--propagation", "private", "sh", "-c", script, "sh", root,
                             inner_path, binary],
                            stdout=subprocess.PIPE, text=True, preexec_fn=enter_cgroup)
    inner = None
    try:
        line = proc.stdout.readline()
        check(line.strip() == "ready", f"the container did not start: {line!r}")
        kids = wait_for(lambda: children(proc.pid), "the container's first process")
        check(len(kids) == 1, f"unshare has children {kids}")
        inner = kids[0]
        yield inner
    finally:
        if inner:
            with contextlib.suppress(ProcessLookupError):
                os.kill(inner, signal.SIGKILL)
        proc.kill()
        proc.wait()
        proc.stdout.close()


def status_field(pid, name):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(name + ":"):
                return line.split(":", 1)[1].split()
    return []


def test():
    require_root()
    if not shutil.which("unshare") or not shutil.which("chroot"):
        skip("util-linux unshare and coreutils chroot are needed")
    old, new = program("fgtest-hot-old"), program("fgtest-hot-new")
    with tempfile.TemporaryDirectory(prefix="fgd-container-") as tmp, test_cgroup() as cg:
        # The container's binary path exists on the host too, as a different binary.
        inner_path = os.path.join(tmp, "decoy", "workload")
        os.mkdir(os.path.dirname(inner_path))
        shutil.copy(new, inner_path)
        with Daemon() as d, container(tmp, old, inner_path, cg) as pid:
            check(status_field(pid, "NSpid") == [str(pid), "1"],
                  f"pid {pid} is not the first process of a new pid namespace: "
                  f"{status_field(pid, 'NSpid')}")
            check(os.stat(f"/proc/{pid}/ns/mnt").st_ino != os.stat("/proc/self/ns/mnt").st_ino,
                  "the workload shares our mount namespace")
            with open(f"/proc/{pid}/cgroup") as f:
                cg_path = [l[3:].strip() for l in f if l.startswith("0::")][0]
            check(cg_path.endswith("/" + os.path.basename(cg)),
                  f"the workload is in {cg_path}, not in {cg}")

            r = d.fgctl("record", "-p", pid, "-t", "2", "-F", "499", "--group-by", "cgroup",
                        "-o", "-", check_rc=0)
            stacks = parse_folded(r.stdout.decode())
            total = sum(stacks.values())
            hot = sum(c for s, c in stacks.items() if "hot_old" in s.split(";"))
            print(f"{total} samples, {hot} in hot_old; stacks: {list(stacks)[:3]}")
            check(total > 100, f"too few samples: {total}")
            check(all(s.startswith(f"{cg_path};workload;") for s in stacks),
                  f"a stack without the cgroup {cg_path} and comm at its root: {list(stacks)[:3]}")
            check(hot > total / 2, f"hot_old in only {hot} of {total} samples: {list(stacks)[:5]}")
            check(not any("hot_new" in s for s in stacks), "the host's binary was read")

            r = d.fgctl("record", "-p", pid, "-t", "1", "--group-by", "cgroup-name", "-o", "-",
                        check_rc=0)
            stacks = parse_folded(r.stdout.decode())
            name = os.path.basename(cg)
            check(stacks and all(s.startswith(f"{name};workload;") for s in stacks),
                  f"--group-by cgroup-name roots wrong: {list(stacks)[:3]}")

            # Always-on kept it too: a snapshot puts the same cgroup frames above it.
            for group_by, root in (("cgroup", cg_path), ("cgroup-name", name)):
                r = d.fgctl("snapshot", "--last", "5s", "-p", pid, "--group-by", group_by,
                            "-o", "-", check_rc=0)
                stacks = parse_folded(r.stdout.decode())
                check(stacks and all(s.startswith(f"{root};workload;") for s in stacks),
                      f"snapshot --group-by {group_by} roots wrong: {list(stacks)[:3]}")
            st = d.fgctl("status", "--json", check_rc=0)
            check(b'"roots":' in st.stdout, "status shows no roots counter")


run(test)
