# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the history cannot read, every answer says (issue 28, finding 4).

Eight 1 s slices of a burner are on disk, out of the 2 s window. Five are
damaged as a careless hand or an attacker would: truncated, a flipped bit,
random bytes, a FIFO, and a symbolic link to /etc/shadow. Then:
  - snapshot over the period succeeds with the three readable slices, and its
    summary and its --json metadata name the five that could not be read,
    with their spans and why (truncated, bad checksum, not a slice file, not
    a regular file);
  - top, heatmap and diff (both sides) say the same;
  - each damaged file was set aside once: renamed to START-END.fgdh.REASON,
    logged once however many queries read the period, never read again (a
    second daemon on the same directory names them from their names); the
    link is moved, not followed, and its target is untouched;
  - a period made only of damaged slices is an error that says they could not
    be read, not "no samples".
Before, snapshot answered "N samples in 3 slices" with exit 0 and nothing
else; only status counted "damaged files skipped"."""

import hashlib
import json
import os
import re
import tempfile
import time

from fgdtest import Daemon, check, require_root, run, wait_for, workload

ARGS = ["--always-on-frequency", "99", "--slice-seconds", "1", "--window-seconds", "2"]
REASONS = ["truncated", "bad checksum", "not a slice file", "not a regular file",
           "not a regular file"]
SUFFIXES = ["truncated", "bad-checksum", "not-slice", "not-file", "not-file"]


def slice_files(slices):
    """{(start_ns, end_ns): name} of the slice files in slices."""
    out = {}
    for name in os.listdir(slices):
        m = re.fullmatch(r"(\d{20})-(\d{20})\.fgdh", name)
        if m:
            out[(int(m.group(1)), int(m.group(2)))] = name
    return out


def damage(slices, names):
    """Truncated, a flipped bit, random bytes, a FIFO, a link to /etc/shadow."""
    paths = [os.path.join(slices, n) for n in names]
    with open(paths[0], "r+b") as f:
        f.truncate(30)
    with open(paths[1], "r+b") as f:
        size = os.fstat(f.fileno()).st_size
        f.seek(size // 2)
        byte = f.read(1)
        f.seek(size // 2)
        f.write(bytes([byte[0] ^ 0x08]))
    with open(paths[2], "wb") as f:
        f.write(os.urandom(700))
    os.unlink(paths[3])
    os.mkfifo(paths[3], 0o600)
    os.unlink(paths[4])
    os.symlink("/etc/shadow", paths[4])


def check_named(meta, spans, what):
    """The metadata names the five, with their spans (ms) and reasons."""
    check(meta.get("unreadable_slices") == 5, f"{what}: unreadable_slices: {meta}")
    got = sorted((u["from_ms"], u["until_ms"], u["reason"]) for u in meta["unreadable"])
    want = sorted((a // 10**6, -(-b // 10**6), r) for (a, b), r in zip(spans, REASONS))
    check(got == want, f"{what}: unreadable {got}, expected {want}")


def check_said(stderr, what, label=""):
    check(re.search(rf"{label}5 slices of the history could not be read: .*\(truncated\)", stderr)
          and "(bad checksum)" in stderr and "(not a slice file)" in stderr
          and "(not a regular file)" in stderr,
          f"{what} does not name the damaged slices: {stderr!r}")


def test():
    require_root()
    with open("/etc/shadow", "rb") as f:
        shadow = hashlib.sha256(f.read()).digest()
    with Daemon(ARGS) as d, workload("fgtest-burn") as w:
        slices = os.path.join(d.dir, "state", "slices")
        start = int(time.time()) + 2
        end = start + 8
        # Out of the 2 s window: answered from disk.
        wait_for(lambda: time.time() >= end + 4, "the period to leave the window", 60)
        files = {k: v for k, v in slice_files(slices).items()
                 if start * 10**9 <= k[0] < end * 10**9}
        check(len(files) >= 8, f"expected eight slices in [{start}, {end}): {sorted(files)}")
        spans = sorted(files)[1:6]
        damage(slices, [files[s] for s in spans])
        period = ["--since", f"@{start}", "--until", f"@{end}"]

        out = os.path.join(d.dir, "out.svg")
        r = d.fgctl("snapshot", *period, "--json", "-o", out, check_rc=0)
        check_named(json.loads(r.stdout), spans, "snapshot --json")
        r = d.fgctl("snapshot", *period, "-o", out, check_rc=0)
        print(r.stderr.decode(), end="")
        check_said(r.stderr.decode(), "snapshot")

        # Set aside, each once: renamed with its reason; the link moved, not followed.
        names = os.listdir(slices)
        for (a, b), suffix in zip(spans, SUFFIXES):
            name = f"{a:020d}-{b:020d}.fgdh"
            check(name not in names and f"{name}.{suffix}" in names,
                  f"{name} not set aside as .{suffix}: {sorted(names)}")
        link = os.path.join(slices, f"{spans[4][0]:020d}-{spans[4][1]:020d}.fgdh.not-file")
        check(os.readlink(link) == "/etc/shadow", "the link is not the one planted")
        with open("/etc/shadow", "rb") as f:
            check(hashlib.sha256(f.read()).digest() == shadow, "/etc/shadow changed")

        r = d.fgctl("top", *period, "--json", check_rc=0)
        check_named(json.loads(r.stdout)["meta"], spans, "top --json")
        r = d.fgctl("top", *period, check_rc=0)
        check_said(r.stderr.decode(), "top")
        r = d.fgctl("heatmap", *period, "-o", os.path.join(d.dir, "map.html"), check_rc=0)
        check_said(r.stderr.decode(), "heatmap")
        r = d.fgctl("diff", "--baseline", " ".join(period), *period, "-o", out, check_rc=0)
        check_said(r.stderr.decode(), "diff", "baseline: ")
        check_said(r.stderr.decode(), "diff", "after: ")

        # A period of damaged slices only: an error that says so, not "no samples".
        inner = ["--since", f"@{spans[1][0] / 1e9 + 0.2:.3f}", "--until",
                 f"@{spans[3][1] / 1e9 - 0.2:.3f}"]
        r = d.fgctl("snapshot", *inner, "-o", out)
        err = r.stderr.decode()
        print(err, end="")
        check(r.returncode != 0 and "slices of the history could not be read" in err
              and "(bad checksum)" in err, f"a period of damaged slices: rc {r.returncode}, {err!r}")

        # Logged once each, however many queries read them.
        logs = d.logs()
        for (a, b), suffix in zip(spans, SUFFIXES):
            name = f"{a:020d}-{b:020d}.fgdh"
            said = logs.count(f"set aside as {name}.{suffix}")
            check(said == 1, f"{name} logged {said} times:\n{logs}")

        # Another daemon on the same directory: named from their names, nothing read again.
        with Daemon(ARGS + ["--state-directory", os.path.join(d.dir, "state")]) as d2:
            r = d2.fgctl("snapshot", *period, "--json", "-o", os.path.join(d2.dir, "out.svg"),
                         check_rc=0)
            check_named(json.loads(r.stdout), spans, "after a restart")
            check("set aside" not in d2.logs(), f"set aside again:\n{d2.logs()}")
            status = json.loads(d2.fgctl("status", "--json", check_rc=0).stdout)
            check(status["always_on"]["history"]["corrupt"] == 0,
                  f"damaged files counted again: {status['always_on']['history']}")


if __name__ == "__main__":
    run(test)
