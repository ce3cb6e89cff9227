#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""pprof profiles (-o FILE.pb.gz), judged by Go's own pprof (golang-go).

  - `fgctl record -p PID -F 999 -o x.pb.gz` of fgtest-burn: `go tool pprof
    -raw` reads it; its sample types are samples/count and cpu/nanoseconds
    (the default), its period 1/999 s in ns, its duration the recording's,
    its comments the event and the loss counters; every sample is labelled
    comm=fgtest-burn and pid=PID, and hot_a and hot_b have 75% and 25% of
    the samples under main, as in the folded test; `-top` and `-traces`
    name them too.
  - Sample for sample: a snapshot of a past range of the always-on window
    (the same data whatever the format), of the test's two workloads
    (--comm), as folded text and as pprof are the
    same stacks with the same counts, once the process frame is read back
    from the comm label and kernel frames from the kernel's mapping.
  - A recording's locations: fgtest-inline's inlined chain is one location
    whose lines are fgtest_inner, fgtest_middle, fgtest_outer (innermost
    first), at addresses inside its binary's mapping, which has the
    binary's path and build-id (readelf's); libc has its own mapping;
    fgtest-syscall's kernel frames have kernel addresses in the
    [kernel.kallsyms] mapping, named without _[k]; fgtest-cxx's
    Accumulator<int>::add has its mangled symbol as its system name (read
    with the test's own protobuf reader: Go's pprof does not print them).
  - The same for `fgctl render` of a folded file.
  - `record --off-cpu -o x.pb.gz`: off_cpu/microseconds.
  - A differential profile has no pprof form: a clear error.
"""

import datetime
import gzip
import os
import re
import shutil
import struct
import subprocess
import tempfile
import time

from fgdtest import (FGCTL, Daemon, TestFailure, check, parse_folded, past_snapshots, program,
                     require_root, run, skip, workload)


def go_pprof(*args):
    r = subprocess.run(["go", "tool", "pprof"] + list(args), capture_output=True, text=True,
                       timeout=120, env=dict(os.environ, HOME=os.environ.get("HOME", "/root"),
                                             GOFLAGS="", PPROF_TMPDIR=tempfile.gettempdir()))
    check(r.returncode == 0, f"go tool pprof {' '.join(args)} failed: {r.stderr}")
    return r.stdout


# -raw prints a line "name file:line s=start", then "(system name)" when it differs.
LOCATION = re.compile(r"^\s+(\d+): (0x[0-9a-f]+)(?: M=(\d+))? (.*) (\S*):(-?\d+) s=(-?\d+)"
                      r"(?:\(.*\))?$")
INLINE = re.compile(r"^\s+(.*) (\S*):(-?\d+) s=(-?\d+)(?:\(.*\))?$")
SAMPLE = re.compile(r"^\s+(-?\d+(?:\s+-?\d+)*): ((?:\d+ )*)$")
LABELS = re.compile(r"(\w+):\[(.*?)\]")
MAPPING = re.compile(r"^(\d+): (0x[0-9a-f]+)/(0x[0-9a-f]+)/(0x[0-9a-f]+) (\S*) ?(\S*)")


def read_raw(path):
    """go tool pprof -raw, parsed: header lines, samples, locations, mappings."""
    text = go_pprof("-raw", path)
    prof = {"header": {}, "comments": [], "types": None, "samples": [], "locations": {},
            "mappings": {}}
    section = "header"
    last_loc = None
    for line in text.splitlines():
        if line in ("Samples:", "Locations", "Mappings"):
            section = line.rstrip(":").lower()
            continue
        if section == "header":
            key, _, value = line.partition(": ")
            if key == "Comment":
                prof["comments"].append(value)
            else:
                prof["header"][key] = value
        elif section == "samples":
            m = SAMPLE.match(line)
            if prof["types"] is None:
                prof["types"] = line.split()
            elif m:
                prof["samples"].append({"values": [int(v) for v in m.group(1).split()],
                                        "locs": [int(v) for v in m.group(2).split()],
                                        "labels": {}})
            elif LABELS.search(line):
                prof["samples"][-1]["labels"] = dict(LABELS.findall(line))
            else:
                check(not line.strip(), f"an unexpected sample line: {line!r}")
        elif section == "locations":
            m = LOCATION.match(line)
            if m:
                last_loc = int(m.group(1))
                prof["locations"][last_loc] = {"address": int(m.group(2), 16),
                                               "mapping": int(m.group(3) or 0),
                                               "lines": [m.group(4)]}
            elif INLINE.match(line) and not re.match(r"^\s+\d+: 0x", line):
                prof["locations"][last_loc]["lines"].append(INLINE.match(line).group(1))
            else:
                check(False, f"a location line -raw printed that the test cannot read: {line!r}")
        elif section == "mappings":
            m = MAPPING.match(line)
            if m:
                prof["mappings"][int(m.group(1))] = {
                    "start": int(m.group(2), 16), "limit": int(m.group(3), 16),
                    "offset": int(m.group(4), 16), "file": m.group(5),
                    "build_id": m.group(6) if not m.group(6).startswith("[") else ""}
    return prof


def frames(prof, sample):
    """A sample's frames, root first, as folded text names them (kernel frames with _[k])."""
    out = []
    for loc_id in reversed(sample["locs"]):
        loc = prof["locations"][loc_id]
        mapping = prof["mappings"].get(loc["mapping"], {}).get("file", "")
        suffix = {"[kernel.kallsyms]": "_[k]", "[jit]": "_[j]"}.get(mapping, "")
        # Lines are innermost first: the root-first order reverses them.
        out += [name + suffix for name in reversed(loc["lines"])]
    return out


def as_folded(prof, roots=("comm",)):
    """{stack: count} of the first value, the labels named by roots as root frames."""
    stacks = {}
    for s in prof["samples"]:
        root = [s["labels"][k] for k in roots if k in s["labels"]]
        key = ";".join(root + frames(prof, s))
        stacks[key] = stacks.get(key, 0) + s["values"][0]
    return stacks


def record_cpu(d, tmp):
    with workload("fgtest-burn") as w:
        out = os.path.join(tmp, "burn.pb.gz")
        start = time.time()
        d.fgctl("record", "-p", w.pid, "-t", "3", "-F", "999", "-o", out, check_rc=0)
        prof = read_raw(out)
    check(prof["types"] == ["samples/count", "cpu/nanoseconds[dflt]"],
          f"sample types: {prof['types']}")
    check(prof["header"].get("PeriodType") == "cpu nanoseconds" and
          prof["header"].get("Period") == str(10**9 // 999), f"period: {prof['header']}")
    duration = float(prof["header"]["Duration"])
    check(2.9 <= duration <= 4, f"duration {duration} s for a 3 s recording")
    check(any(c.startswith("event: cpu-clock") or c.startswith("event: cycles")
              for c in prof["comments"]) and any("lost:" in c for c in prof["comments"]),
          f"comments: {prof['comments']}")
    when = datetime.datetime.strptime(" ".join(prof["header"]["Time"].split()[:3]),
                                      "%Y-%m-%d %H:%M:%S.%f %z").timestamp()
    check(abs(when - start) < 5, f"time {prof['header']['Time']}, started at {start}")
    total = sum(s["values"][0] for s in prof["samples"])
    check(total > 1000, f"only {total} samples")
    for s in prof["samples"]:
        check(s["labels"] == {"comm": "fgtest-burn", "pid": str(w.pid)},
              f"a sample's labels: {s['labels']}")
        check(s["values"][1] == s["values"][0] * (10**9 // 999),
              f"cpu ns {s['values'][1]} for {s['values'][0]} samples")
    stacks = as_folded(prof, roots=())
    a = sum(c for k, c in stacks.items() if k.endswith("main;hot_a"))
    b = sum(c for k, c in stacks.items() if k.endswith("main;hot_b"))
    print(f"record: {total} samples, hot_a {a / total:.1%}, hot_b {b / total:.1%}")
    check(abs(a / total - 0.75) < 0.05 and abs(b / total - 0.25) < 0.05,
          f"hot_a {a}, hot_b {b} of {total}")
    top = go_pprof("-top", out)
    check(re.search(r"\bhot_a\n", top) and re.search(r"\bhot_b\n", top), f"-top:\n{top}")
    traces = go_pprof("-traces", out)
    check("comm:  fgtest-burn" in traces and "hot_a\n             main" in traces,
          f"-traces:\n{traces[:2000]}")


def pb_fields(buf):
    """A protobuf message's fields: (number, varint or bytes), in order."""
    i = 0
    while i < len(buf):
        tag, i = varint(buf, i)
        if tag & 7 == 0:
            v, i = varint(buf, i)
        elif tag & 7 == 2:
            n, i = varint(buf, i)
            v, i = buf[i:i + n], i + n
        else:
            raise TestFailure(f"wire type {tag & 7} in a pprof profile")
        yield tag >> 3, v


def varint(buf, i):
    v = shift = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7f) << shift
        shift += 7
        if not b & 0x80:
            return v, i


def functions(path):
    """[(name, system_name)] of the profile's functions, read with the test's own reader:
    go tool pprof shows no system names."""
    with gzip.open(path) as f:
        data = f.read()
    strings, funcs = [], []
    for field, v in pb_fields(data):
        if field == 6:
            strings.append(v.decode())
        elif field == 5:
            funcs.append(dict(pb_fields(v)))
    return [(strings[f.get(2, 0)], strings[f.get(3, 0)]) for f in funcs]


def kernel_build_id():
    """The running kernel's build-id: the GNU build-id note of /sys/kernel/notes."""
    with open("/sys/kernel/notes", "rb") as f:
        notes = f.read()
    off = 0
    while off + 12 <= len(notes):
        namesz, descsz, kind = struct.unpack_from("<III", notes, off)
        name_at = off + 12
        desc_at = name_at + (namesz + 3) // 4 * 4
        if kind == 3 and notes[name_at:name_at + namesz] == b"GNU\0":
            return notes[desc_at:desc_at + descsz].hex()
        off = desc_at + (descsz + 3) // 4 * 4
    return None


def build_id(path):
    r = subprocess.run(["readelf", "-n", path], capture_output=True, text=True)
    m = re.search(r"Build ID: ([0-9a-f]+)", r.stdout)
    return m.group(1) if m else None


def record_locations(d, tmp):
    """A recording's pprof has what names alone lose: addresses, mappings, inline lines."""
    binary = program("fgtest-inline")
    with workload("fgtest-inline") as w:
        out = os.path.join(tmp, "inline.pb.gz")
        d.fgctl("record", "-p", w.pid, "-t", "2", "-F", "999", "-o", out, check_rc=0)
        prof = read_raw(out)
    # The inlined chain is one location: its lines innermost first, as pprof wants them.
    chain = ["fgtest_inner", "fgtest_middle", "fgtest_outer"]
    inlined = [l for l in prof["locations"].values() if l["lines"][:3] == chain]
    check(inlined, "no location with fgtest_inner inlined into fgtest_middle and "
          f"fgtest_outer: {list(prof['locations'].values())[:5]}")
    on_inline = sum(s["values"][0] for s in prof["samples"]
                    if prof["locations"][s["locs"][0]]["lines"][:3] == chain)
    total = sum(s["values"][0] for s in prof["samples"])
    check(on_inline > 0.9 * total, f"{on_inline} of {total} samples at the inlined chain")
    # Its binary's mapping: the path and build-id, a range that holds its addresses.
    mapping = prof["mappings"][inlined[0]["mapping"]]
    check(os.path.realpath(mapping["file"]) == os.path.realpath(binary),
          f"the mapping is {mapping['file']}, not {binary}")
    want = build_id(binary)
    check(want is None or mapping["build_id"] == want,
          f"build-id {mapping['build_id']}, readelf says {want}")
    for loc in inlined:
        check(loc["address"] and mapping["start"] <= loc["address"] < mapping["limit"],
              f"address {loc['address']:#x} outside {mapping}")
    libc = [m for m in prof["mappings"].values() if "libc.so" in m["file"]]
    check(libc and libc[0]["build_id"], f"no libc mapping with a build-id: {prof['mappings']}")
    print(f"locations: {len(inlined)} inlined locations hold {on_inline} of {total} samples; "
          f"mappings {sorted(m['file'] for m in prof['mappings'].values())}")

    # C++: the name demangled, the system name as the binary spells it.
    with workload("fgtest-cxx") as w:
        out = os.path.join(tmp, "cxx.pb.gz")
        d.fgctl("record", "-p", w.pid, "-t", "1", "-F", "999", "-o", out, check_rc=0)
    fns = [f for f in functions(out) if "Accumulator<int>::add" in f[0]]
    check(fns and all(sys.startswith("_ZN") and "Accumulator" in sys for _, sys in fns),
          f"system names of Accumulator<int>::add: {fns}")
    check(("main", "main") in functions(out), "main's system name is not main")

    # Kernel frames: addresses in the kernel's mapping.
    with workload("fgtest-syscall") as w:
        out = os.path.join(tmp, "syscall.pb.gz")
        d.fgctl("record", "-p", w.pid, "-t", "2", "-F", "999", "-o", out, check_rc=0)
        prof = read_raw(out)
    kernel = [l for l in prof["locations"].values()
              if prof["mappings"].get(l["mapping"], {}).get("file") == "[kernel.kallsyms]"]
    check(kernel, "no kernel location in a recording of fgtest-syscall")
    check(all(l["address"] >= 0xffff800000000000 for l in kernel),
          f"kernel locations without kernel addresses: {kernel[:3]}")
    check(not any(n.endswith("_[k]") for l in kernel for n in l["lines"]),
          "a kernel function keeps its _[k] suffix in pprof")
    # The kernel mapping has the running kernel's build-id, from /sys/kernel/notes.
    kmap = prof["mappings"][kernel[0]["mapping"]]
    want = kernel_build_id()
    check(want and kmap["build_id"] == want,
          f"kernel mapping build-id {kmap['build_id']!r}, /sys/kernel/notes says {want!r}")


def snapshot_same(d, tmp):
    """A past range of the window, folded and pprof: the same samples."""
    folded = os.path.join(tmp, "snap.folded")
    pb = os.path.join(tmp, "snap.pb.gz")
    syscall_pid, burn_pid = past_snapshots(d, (folded, pb))
    with open(folded) as f:
        want = parse_folded(f.read())
    prof = read_raw(pb)
    got = as_folded(prof)
    check(got == want, "the pprof snapshot differs from the folded one: "
          f"only folded {sorted(set(want) - set(got))[:5]}, "
          f"only pprof {sorted(set(got) - set(want))[:5]}, counts "
          f"{[(k, want[k], got[k]) for k in want if k in got and want[k] != got[k]][:5]}")
    # Each sample has its process's pid, which the window keeps (another process of
    # these names, elsewhere on the machine, has its own).
    pids = {(s["labels"].get("comm"), s["labels"].get("pid")) for s in prof["samples"]}
    check({("fgtest-syscall", str(syscall_pid)), ("fgtest-burn", str(burn_pid))} <= pids and
          all(c in ("fgtest-syscall", "fgtest-burn") and p for c, p in pids),
          f"the snapshot's comm and pid labels: {pids}")
    kernel = sum(c for k, c in want.items() if k.startswith("fgtest-syscall;") and "_[k]" in k)
    check(kernel > 0, "no kernel frames of fgtest-syscall to compare")
    check(prof["types"] == ["samples/count", "cpu/nanoseconds[dflt]"], f"types {prof['types']}")
    print(f"snapshot: {len(want)} stacks, {sum(want.values())} samples alike, "
          f"{kernel} samples with kernel frames")


def render_same(tmp):
    src = os.path.join(tmp, "in.folded")
    with open(src, "w") as f:
        f.write("prog;main;read;sys_read_[k];vfs_read_[k] 7\n"
                "prog;main;compute 30\n"
                "java;Interpreter;double Hot.middle(int)_[j] 5\n"
                "prog;main 1\n")
    out = os.path.join(tmp, "in.pb.gz")
    r = subprocess.run([FGCTL, "render", src, "-o", out], capture_output=True, text=True)
    check(r.returncode == 0, f"render to pprof: {r.stderr}")
    prof = read_raw(out)
    with open(src) as f:
        want = parse_folded(f.read())
    got = as_folded(prof, roots=())
    check(got == want, f"render: pprof {got} against folded {want}")
    check(prof["types"] == ["samples/count"], f"render's types: {prof['types']}")


def off_cpu(d, tmp):
    with workload("fgtest-block") as w:
        out = os.path.join(tmp, "off.pb.gz")
        r = d.fgctl("record", "--off-cpu", "-p", w.pid, "-t", "2", "-o", out)
        if r.returncode != 0 and b"BPF" in r.stderr:
            print(f"off-CPU not available here: {r.stderr.decode().strip()}")
            return
        check(r.returncode == 0, f"off-CPU record: {r.stderr.decode()}")
        prof = read_raw(out)
    check(prof["types"] == ["off_cpu/microseconds[dflt]"] or
          prof["types"] == ["off_cpu/microseconds"], f"off-CPU types: {prof['types']}")
    total = sum(s["values"][0] for s in prof["samples"])
    check(total > 500000, f"{total} us blocked in 2 s of a mostly blocked program")
    print(f"off-CPU: {total / 1e6:.2f} s blocked")


def errors(tmp):
    src = os.path.join(tmp, "diff.folded")
    with open(src, "w") as f:
        f.write("a;b 1 2\n")
    r = subprocess.run([FGCTL, "render", src, "-o", os.path.join(tmp, "d.pb.gz")],
                       capture_output=True, text=True)
    check(r.returncode != 0 and "no pprof form" in r.stderr, f"differential: {r.stderr}")
    check(not os.path.exists(os.path.join(tmp, "d.pb.gz")), "a failed render left a file")


def test():
    require_root()
    if not shutil.which("go"):
        skip("go (golang-go) is not installed: scripts/install-deps.sh --tests")
    with tempfile.TemporaryDirectory() as tmp:
        render_same(tmp)
        errors(tmp)
        with Daemon(["--always-on-frequency", "199", "--slice-seconds", "1"]) as d:
            record_cpu(d, tmp)
            record_locations(d, tmp)
            snapshot_same(d, tmp)
            off_cpu(d, tmp)


run(test)
