# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every output is valid UTF-8, and a name never splits a frame or a line.
fgtest-jit names itself with bytes that are not UTF-8, a ';' and a newline
(prctl(PR_SET_NAME), as any process may) and runs JIT code that its perf map
names with more of them (invalid bytes, an overlong form, a surrogate, a
sequence cut short, ';', CR, tab, ESC). Where cgroup v2 can be written, it
runs in a cgroup whose name is as bad. Record (folded, SVG, HTML, --pid-frames,
--group-by cgroup-name), snapshot from the window and from the history on
disk, and top must all decode as strict UTF-8, each folded line holding
exactly the frames expected, with the bad bytes as U+FFFD and ';' as ':'.
fgctl render of a foreign folded file cleans its names alike."""

import contextlib
import json
import os
import time

from fgdtest import Daemon, check, jit_program, program, require_root, run, wait_for

R = "\ufffd"
# prctl keeps 15 bytes.
COMM = b"fg\xff;c\n\xc3\xa9\xed\xa0\x80"
COMM_SHOWN = "fg" + R + ":c" + R + "\u00e9" + R * 3
JIT = (b"jit\xff\xfe;semi\rcr\tt\x1besc\xc0\xafover\xed\xa0\x80sur\xe2\x82end"
       b"\xc3\xa9\xe2\x86\x92\xf0\x9f\x94\xa5")
JIT_SHOWN = ("jit" + R * 2 + ":semi" + R + "cr" + R + "t" + R + "esc" + R * 2 + "over" + R * 3 +
             "sur" + R * 2 + "end\u00e9\u2192\U0001f525")
CGROUP = b"fgd-test-\xff;cg\x1b"
CGROUP_SHOWN = "fgd-test-" + R + ":cg" + R


def cgroup2_root():
    """Where cgroup v2 is mounted, if a cgroup can be made there; else None."""
    with open("/proc/mounts") as f:
        for line in f:
            fields = line.split()
            if fields[2] == "cgroup2" and os.access(fields[1], os.W_OK):
                return fields[1]
    return None


@contextlib.contextmanager
def jit_process(cgroup_dir):
    """fgtest-jit named COMM, in cgroup_dir if given, with its perf map written; yields its pid."""
    cmd = [program("fgtest-jit").encode(), COMM]
    if cgroup_dir:
        # In the cgroup before the exec, so fgd reads it there at the exec.
        cmd = [b"sh", b"-c", b'echo $$ > "$0/cgroup.procs" && exec "$@"', cgroup_dir] + cmd
    with jit_program(cmd) as (proc, start, size):
        with open(f"/tmp/perf-{proc.pid}.map", "wb") as f:
            f.write(f"{start:x} {size:x} ".encode() + JIT + b"\n")
        with open(f"/proc/{proc.pid}/comm", "rb") as f:
            check(f.read() == COMM + b"\n", "prctl did not name the process")
        yield proc.pid


def utf8(what, data):
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        check(False, f"{what} is not UTF-8: {e}: {data[max(0, e.start - 40):e.end + 40]!r}")


def check_folded(what, data, roots, min_jit=1, before_name=False):
    """Each line: the root frames given, then the process's frames, the JIT frame last if any.

    With before_name, a few lines may have the names the process had before it named
    itself (always-on sampling saw it from its fork)."""
    text = utf8(what, data)
    jit = 0
    for line in text.split("\n")[:-1]:
        parts = line.rsplit(" ", 1)
        check(len(parts) == 2 and parts[1].isdigit(), f"{what}: not a folded line: {line!r}")
        if len(parts) != 2:
            continue
        stack, count = parts
        frames = stack.split(";")
        if before_name and frames[0] in ("sh", "fgtest-jit", "python3") and "jit" not in stack:
            continue
        check(frames[:len(roots)] == roots, f"{what}: roots are {frames[:len(roots)]}, expected {roots}")
        for f in frames:
            check(not any(ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0 for c in f), f"{what}: control in {f!r}")
        if frames[-1].startswith("jit"):
            check(frames[-1] == JIT_SHOWN + "_[j]", f"{what}: JIT frame {frames[-1]!r}, expected "
                  f"{JIT_SHOWN + '_[j]'!r}")
            jit += int(count)
    check(text.endswith("\n"), f"{what}: no final newline")
    check(jit >= min_jit, f"{what}: {jit} samples in the JIT frame")
    return jit


def check_graph(what, data):
    text = utf8(what, data)
    if "<svg" not in text[:200]:
        # The HTML page holds its names as a JSON array in its script.
        at = text.find('"names":')
        check(at >= 0, f"{what}: no names in the page")
        names, _ = json.JSONDecoder().raw_decode(text, at + len('"names":'))
        text = "\n".join(names)
    check(JIT_SHOWN in text and COMM_SHOWN in text, f"{what}: the names are not shown as expected")


def test():
    require_root()
    cg_root = cgroup2_root()
    cg_dir = os.path.join(cg_root.encode(), CGROUP) if cg_root else None
    if cg_dir:
        os.mkdir(cg_dir)
    try:
        with Daemon(["--always-on-frequency", "99", "--slice-seconds", "1", "--window-seconds", "4"]) as d:
            t0 = int(time.time())
            with jit_process(cg_dir) as pid:
                _, data = d.record_raw({"pids": [pid], "duration_ms": 1500, "format": "folded"})
                n = check_folded("record folded", data, [COMM_SHOWN])
                print(f"record: {n} samples in the JIT frame")
                _, data = d.record_raw({"pids": [pid], "duration_ms": 1000, "format": "folded",
                                        "with_pid": True})
                check_folded("record --pid-frames", data, [f"{COMM_SHOWN}-{pid}"])
                if cg_dir:
                    _, data = d.record_raw({"pids": [pid], "duration_ms": 1000, "format": "folded",
                                            "group_by": "cgroup-name"})
                    check_folded("record --group-by cgroup-name", data, [CGROUP_SHOWN, COMM_SHOWN])
                else:
                    print("no writable cgroup v2: the cgroup name is not tried")
                for fmt in ("svg", "html"):
                    _, data = d.record_raw({"pids": [pid], "duration_ms": 1000, "format": fmt})
                    check_graph(f"record {fmt}", data)

                def snapshot(until=None):
                    req = {"since_ms": t0 * 1000, "pid": pid, "format": "folded"}
                    if until:
                        req["until_ms"] = until * 1000
                    return d.record_raw(req, cmd="snapshot")[1]

                def samples(data):
                    counts = [l.rsplit(b" ", 1)[-1] for l in data.split(b"\n")]
                    return sum(int(c) for c in counts if c.isdigit())

                wait_for(lambda: samples(snapshot()) >= 100, "100 always-on samples of fgtest-jit",
                         timeout=60)
                check_folded("snapshot folded", snapshot(), [COMM_SHOWN], before_name=True)
                _, data = d.record_raw({"since_ms": t0 * 1000, "pid": pid, "format": "svg"},
                                       cmd="snapshot")
                check_graph("snapshot svg", data)
                raw = d.query_raw("top", {"since_ms": t0 * 1000, "pid": pid}, raw=True)
                top = json.loads(utf8("top", raw))["processes"]
                check(top and top[0]["comm"] == COMM_SHOWN and top[0]["leaf"] == JIT_SHOWN + "_[j]",
                      f"top: {top}")
            t_end = int(time.time()) + 1

            # The history on disk, read back once the window has moved past.
            wait_for(lambda: d.query_raw("status", {})["always_on"]["oldest_ms"] > t_end * 1000,
                     "the window to move past the workload", timeout=30)
            check_folded("snapshot from the history", snapshot(t_end), [COMM_SHOWN], before_name=True)
            raw = d.query_raw("top", {"since_ms": t0 * 1000, "until_ms": t_end * 1000, "pid": pid},
                              raw=True)
            top = json.loads(utf8("top from the history", raw))["processes"]
            check(top and top[0]["comm"] == COMM_SHOWN, f"top from the history: {top}")

            # A foreign folded file: render cleans its names as fgd does.
            r = d.fgctl("render", "-f", "folded", "-o", "-", check_rc=0,
                        input=b"caf\xc3\xa9\xff;main;jit\xc0\xaf\xed\xa0\x80\r\x1b 3\n")
            check(utf8("render folded", r.stdout) == f"caf\u00e9{R};main;jit{R * 7} 3\n",
                  f"render folded: {r.stdout!r}")
    finally:
        # The killed workload leaves its cgroup as it goes: a moment, at most.
        deadline = time.monotonic() + 10
        while cg_dir:
            try:
                os.rmdir(cg_dir)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)


run(test)
