# SPDX-License-Identifier: LGPL-2.1-or-later
"""fgctl diff --baseline: two periods of fgd's always-on sampling compared.
fgtest-syscall runs in the first period and fgtest-burn in the second (each
picked by its pid: other tests on the machine may run the same programs), so
the burner's hot_a is growth from nothing. The folded diff's two counts per
line are checked against snapshots of the same periods, normalized and raw,
and against `fgctl diff` of those snapshots as files; the SVG names both
periods and draws hot_a red. Then the errors: a selector given once applies
to the baseline too (and here leaves it empty), either side without data is
named, and a baseline that cannot be parsed or lacks a period is refused."""

import os
import re
import time

from fgdtest import Daemon, check, parse_folded, require_root, run, wait_for, workload


def snapshot(d, period, pid):
    """{stack: count} of pid in period, or None while fgd has none."""
    r = d.fgctl("snapshot", *period, "-p", pid, "-o", "-", "-q")
    return parse_folded(r.stdout.decode()) if r.returncode == 0 else None


def sample(d, name, t0):
    """Runs workload name until the closed slices since t0 hold 150 of its samples.

    Returns its pid and the period: from t0 up to a second ago, so every slice of
    it has closed and a later query of the same period sees the same samples."""
    with workload(name) as w:
        def enough():
            period = ["--since", f"@{t0}", "--until", f"@{int(time.time()) - 1}"]
            stacks = snapshot(d, period, w.pid)
            return (period, stacks) if stacks and sum(stacks.values()) >= 150 else None

        period, _ = wait_for(enough, f"150 samples of {name}", timeout=60)
        return w.pid, period


def parse_diff(text):
    """Folded differential text to {stack: (before, after)}."""
    stacks = {}
    for line in text.splitlines():
        m = re.fullmatch(r"(.+) ([0-9.]+) ([0-9.]+)", line)
        check(m is not None, f"not a differential folded line: {line!r}")
        stacks[m.group(1)] = (float(m.group(2)), float(m.group(3)))
    return stacks


def test():
    require_root()
    with Daemon(["--always-on-frequency", "99", "--slice-seconds", "1"]) as d:
        pa, before_period = sample(d, "fgtest-syscall", int(time.time()))
        pb, after_period = sample(d, "fgtest-burn", int(time.time()))
        baseline = " ".join(before_period) + f" -p {pa}"
        before = snapshot(d, before_period, pa)
        after = snapshot(d, after_period, pb)
        tb, ta = sum(before.values()), sum(after.values())
        print(f"baseline {baseline}: {tb} samples; after {' '.join(after_period)} -p {pb}: {ta}")

        def diff(*extra, check_rc=None):
            return d.fgctl("diff", "--baseline", baseline, *after_period, "-p", pb, *extra,
                           check_rc=check_rc)

        # Normalized (the default): the baseline scaled to the after total.
        r = diff("-f", "folded", "-o", "-")
        check(r.returncode == 0, f"diff --baseline failed: {r.stderr.decode()}")
        got = parse_diff(r.stdout.decode())
        check(set(got) == set(before) | set(after), "the diff's stacks are not the two profiles'")
        for s, (b, a) in got.items():
            check(a == after.get(s, 0), f"{s}: after {a}, the snapshot has {after.get(s, 0)}")
            want = before.get(s, 0) * ta / tb
            check(abs(b - want) <= 1e-4 * max(1, want), f"{s}: before {b}, expected {want:.6f}")
        hot = [(b, a) for s, (b, a) in got.items() if s.endswith(";main;hot_a")]
        reads = [(b, a) for s, (b, a) in got.items() if ";do_reads" in s]
        check(hot and all(b == 0 and a > 0 for b, a in hot), f"hot_a is not growth from 0: {hot}")
        check(sum(a for _, a in hot) > 50, f"too few hot_a samples: {hot}")
        check(reads and all(a == 0 and b > 0 for b, a in reads), f"do_reads did not vanish: {reads}")
        check(abs(sum(b for b, _ in got.values()) - ta) < 1e-3 * ta, "normalized totals differ")
        check(b"scaled by" in r.stderr, f"no word of the scaling: {r.stderr!r}")

        # Raw counts, and the same bytes as diffing the two snapshots saved as files.
        r = diff("--no-normalize", "-f", "folded", "-o", "-", check_rc=0)
        raw = parse_diff(r.stdout.decode())
        check(all(b == before.get(s, 0) and a == after.get(s, 0) for s, (b, a) in raw.items()),
              "--no-normalize changed the counts")
        for name, period, pid in (("before", before_period, pa), ("after", after_period, pb)):
            r = d.fgctl("snapshot", *period, "-p", pid, "-o", os.path.join(d.dir, name + ".folded"),
                        check_rc=0)
        files = d.fgctl("diff", os.path.join(d.dir, "before.folded"), os.path.join(d.dir, "after.folded"),
                        "-f", "folded", "-o", "-", check_rc=0)
        fetched = diff("-f", "folded", "-o", "-", check_rc=0)
        check(files.stdout == fetched.stdout, "diff --baseline and diff of the same files differ")

        # The graph says what was compared, and hot_a is red.
        svg_path = os.path.join(d.dir, "what-changed.svg")
        diff("-o", svg_path, check_rc=0)
        with open(svg_path) as f:
            svg = f.read()
        # Times to the second, or to the ms where a period does not start or end on one.
        check(re.search(r'id="subtitle"[^>]*>always-on: baseline \d{4}-\d\d-\d\d [\d:.]+ to '
                        r'[\d:.]+, after \d{4}-\d\d-\d\d [\d:.]+ to [\d:.]+<', svg) is not None,
              "the subtitle does not name both periods")
        check(f">baseline ({baseline}): " in svg and f">after ({' '.join(after_period)}): " in svg,
              "the info lines do not give the two queries")
        m = re.search(r"<title>hot_a \(\d+ samples, [\d.]+%; before: 0, 0.00%; change \+[\d.]+%\)"
                      r'</title><rect [^>]*fill="rgb\((\d+),(\d+),(\d+)\)"', svg)
        check(m is not None, "no hot_a frame grown from nothing in the SVG")
        check(int(m.group(1)) == 255 and int(m.group(2)) < 255 and int(m.group(3)) < 255,
              f"hot_a is not red: rgb{m.groups()}")

        # -p outside --baseline applies to it too: the burner's pid had no samples back then.
        out = os.path.join(d.dir, "none.svg")
        r = d.fgctl("diff", "--baseline", " ".join(before_period), *after_period, "-p", pb, "-o", out)
        check(r.returncode == 1 and b"fgctl: baseline: no samples of the selected processes" in r.stderr,
              f"an empty baseline must be named: rc {r.returncode}, {r.stderr!r}")
        check(not os.path.exists(out), "a file was written for an empty baseline")
        # Either side without data says which.
        old = "--since 2001-01-01T00:00Z --until 2001-01-01T01:00Z"
        r = d.fgctl("diff", "--baseline", old, *after_period, "-p", pb, "-o", out)
        check(r.returncode == 1 and b"fgctl: baseline: no always-on data for that period" in r.stderr,
              f"baseline without data: rc {r.returncode}, {r.stderr!r}")
        r = d.fgctl("diff", "--baseline", baseline, *old.split(), "-o", out)
        check(r.returncode == 1 and b"fgctl: after: no always-on data for that period" in r.stderr,
              f"after without data: rc {r.returncode}, {r.stderr!r}")
        # Baselines that are not query options.
        for text, why in ((f"--since @0 --comm 'x", b"single quote without its closing one"),
                          ("-p 1", b"needs a period of its own"),
                          ("--last 5m -o x.svg", b"takes a period"),
                          ("--last 5m stray", b"unexpected 'stray'"),
                          ("", b"--baseline is empty")):
            r = d.fgctl("diff", "--baseline", text, "-o", out)
            check(r.returncode == 2 and why in r.stderr, f"--baseline {text!r}: rc {r.returncode}, {r.stderr!r}")
        r = d.fgctl("diff", "--baseline", baseline, os.path.join(d.dir, "before.folded"), "-o", out)
        check(r.returncode == 2 and b"takes no files" in r.stderr, f"files with --baseline: {r.stderr!r}")
        check(not os.path.exists(out), "a refused diff wrote a file")


run(test)
