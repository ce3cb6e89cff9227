#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""speedscope files (-o FILE.speedscope.json), read as JSON and opened in speedscope itself.

  - `fgctl record -p PID -t 3 -F 999 -o x.speedscope.json` of fgtest-burn: the file
    format's fields and types, every frame index in the shared table, weights summing to
    each profile's endValue; one profile, "fgtest-burn (pid PID)", unit "none", whose
    weights give hot_a and hot_b 75% and 25% of the samples under main, as in the folded
    test.
  - Sample for sample: a snapshot of a past range of the always-on window (the same data
    whatever the format) as folded text and as speedscope are the same stacks with the
    same counts, once each profile's name is put back as its root frame; profiles
    heaviest first.
  - A process that execs during its recording is named as it ends it: the file of
    `sh -c 'read _; exec fgtest-burn'`, which execs once the recording started, is
    "pid N (fgtest-burn)", not "(sh)".
  - `fgctl render` of a folded file: one profile with its stacks as they are; a
    differential one is refused and leaves no file.
  - speedscope (npm, installed for the test into a temporary directory; a skip without
    npm or the registry) in headless chromium, served with the recording from a local
    http server and opened with #profileURL=: the toolbar names the process, and the
    Sandwich view's table, which speedscope computes from the file, gives hot_a and hot_b
    their shares of the profile.
"""

import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import webdriver  # noqa: E402
from fgdtest import (FGCTL, Daemon, check, parse_folded, past_snapshots, program,  # noqa: E402
                     require_root, run, skip, wait_for, workload)

SCHEMA = "https://www.speedscope.app/file-format-schema.json"


def load(path):
    """The file, with what speedscope's importer relies on checked."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    check(doc.get("$schema") == SCHEMA, f"$schema: {doc.get('$schema')!r}")
    fields = {k: v for k, v in doc.items() if k not in ("shared", "profiles")}
    check(doc.get("exporter") == "fgd" and isinstance(doc.get("name"), str) and
          doc.get("activeProfileIndex") == 0, f"file fields: {fields}")
    frames = doc["shared"]["frames"]
    check(all(isinstance(fr, dict) and isinstance(fr.get("name"), str) for fr in frames),
          "a frame without a name")
    names = [fr["name"] for fr in frames]
    check(len(set(names)) == len(names), "a frame name twice in the shared table")
    check(len(doc["profiles"]) >= 1, "no profiles")
    totals = []
    for p in doc["profiles"]:
        fields = {k: v for k, v in p.items() if k not in ("samples", "weights")}
        check(p.get("type") == "sampled" and isinstance(p.get("name"), str) and
              p.get("unit") in ("none", "microseconds") and p.get("startValue") == 0,
              f"profile fields: {fields}")
        check(len(p["samples"]) == len(p["weights"]), f"{p['name']}: samples and weights differ")
        for s in p["samples"]:
            check(s and all(isinstance(i, int) and 0 <= i < len(frames) for i in s),
                  f"{p['name']}: a sample {s} outside the {len(frames)} frames")
        check(all(w > 0 for w in p["weights"]), f"{p['name']}: a weight not above 0")
        check(abs(sum(p["weights"]) - p["endValue"]) <= 1e-6 * p["endValue"],
              f"{p['name']}: weights {sum(p['weights'])}, endValue {p['endValue']}")
        totals.append(p["endValue"])
    check(totals == sorted(totals, reverse=True), f"profiles not heaviest first: {totals}")
    return doc


def stacks(doc, profile):
    """{stack: weight} of one profile, its frames named from the shared table."""
    names = [fr["name"] for fr in doc["shared"]["frames"]]
    out = {}
    for s, w in zip(profile["samples"], profile["weights"]):
        key = ";".join(names[i] for i in s)
        out[key] = out.get(key, 0) + w
    return out


def as_folded(doc):
    """{stack: count} of all profiles, each profile's name as its stacks' root frame, in the
    form --pid-frames writes it: "comm (pid N)" is "comm-N"."""
    out = {}
    for p in doc["profiles"]:
        root = re.sub(r"^(.*) \(pid (\d+)\)$", r"\1-\2", p["name"])
        for key, w in stacks(doc, p).items():
            # A stack of its root frame alone ("[other processes]") kept it as its frame.
            if key != p["name"]:
                key = root + ";" + key
            check(key not in out, f"{key} in two profiles")
            out[key] = w
    return out


def record_cpu(d, tmp):
    with workload("fgtest-burn") as w:
        out = os.path.join(tmp, "burn.speedscope.json")
        d.fgctl("record", "-p", w.pid, "-t", "3", "-F", "999", "-o", out, check_rc=0)
        doc = load(out)
    check(len(doc["profiles"]) == 1, f"profiles {[p['name'] for p in doc['profiles']]}")
    p = doc["profiles"][0]
    name = f"fgtest-burn (pid {w.pid})"
    check(p["name"] == name and p["unit"] == "none", f"profile {p['name']!r}, unit {p['unit']}")
    # The file is named after what was recorded: "host: pid N (comm)".
    check(f"pid {w.pid} (fgtest-burn)" in doc["name"], f"the file's name {doc['name']!r}")
    got = stacks(doc, p)
    total = p["endValue"]
    check(total > 1000, f"only {total} samples")
    check(not any(k.startswith("fgtest-burn") for k in got),
          "the process frame is still a frame of the samples")
    a = sum(c for k, c in got.items() if k.endswith("main;hot_a"))
    b = sum(c for k, c in got.items() if k.endswith("main;hot_b"))
    print(f"record: {total} samples, hot_a {a / total:.1%}, hot_b {b / total:.1%}")
    check(abs(a / total - 0.75) < 0.05 and abs(b / total - 0.25) < 0.05,
          f"hot_a {a}, hot_b {b} of {total}")
    # What speedscope's Sandwich view calls their self weight: the samples they are the leaf of.
    leaf = {n: sum(c for k, c in got.items() if k.split(";")[-1] == n) / total
            for n in ("hot_a", "hot_b")}
    return out, name, leaf


def renamed_by_exec(d):
    sh = subprocess.Popen(["sh", "-c", 'echo ready; read _; exec "$0"', program("fgtest-burn")],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        check(sh.stdout.readline().strip() == "ready", "sh did not start")
        with d.conn(timeout=30) as c:
            c.send({"cmd": "record", "pids": [sh.pid], "duration_ms": 1500,
                    "format": "speedscope"})
            started = c.reply()
            check(started and started["type"] == "started", f"not started: {started}")
            sh.stdin.write("\n")
            sh.stdin.flush()
            check(sh.stdout.readline().strip() == "ready", "fgtest-burn did not start")
            result = c.reply()
            check(result and result["type"] == "result", f"no result: {result}")
            data, _ = c.result()
    finally:
        sh.kill()
        sh.wait()
    doc = json.loads(data)
    check(doc["name"].endswith(f": pid {sh.pid} (fgtest-burn)"), f"the file's name {doc['name']!r}")


def snapshot_same(d, tmp):
    """A past range of the window, folded and speedscope: the same samples."""
    folded = os.path.join(tmp, "snap.folded")
    ss = os.path.join(tmp, "snap.speedscope.json")
    # speedscope has a profile per process: folded with the pid to compare.
    syscall_pid, _ = past_snapshots(d, (folded, ss), "--pid-frames")
    with open(folded) as f:
        want = parse_folded(f.read())
    doc = load(ss)
    got = as_folded(doc)
    check(got == want, "the speedscope snapshot differs from the folded one: "
          f"only folded {sorted(set(want) - set(got))[:5]}, "
          f"only speedscope {sorted(set(got) - set(want))[:5]}, counts "
          f"{[(k, want[k], got[k]) for k in want if k in got and want[k] != got[k]][:5]}")
    names = [p["name"] for p in doc["profiles"]]
    check(f"fgtest-syscall (pid {syscall_pid})" in names and
          any(n.startswith("fgtest-burn (pid ") for n in names), f"snapshot profiles {names}")
    print(f"snapshot: {len(want)} stacks, {sum(want.values())} samples alike in "
          f"{len(names)} profiles, heaviest {names[0]!r}")


def render_same(tmp):
    src = os.path.join(tmp, "in.folded")
    with open(src, "w") as f:
        f.write("prog;main;read;sys_read_[k];vfs_read_[k] 7\n"
                "prog;main;compute 30\n"
                "java;Interpreter;double Hot.middle(int)_[j] 5\n"
                "odd \"quoted\" \\ näme;main 1\n")
    out = os.path.join(tmp, "in.speedscope.json")
    r = subprocess.run([FGCTL, "render", src, "-o", out], capture_output=True, text=True)
    check(r.returncode == 0, f"render to speedscope: {r.stderr}")
    doc = load(out)
    with open(src) as f:
        want = parse_folded(f.read())
    check(len(doc["profiles"]) == 1 and doc["profiles"][0]["name"] == "in.speedscope.json",
          f"render's profiles: {[p['name'] for p in doc['profiles']]}")
    got = stacks(doc, doc["profiles"][0])
    check(got == want, f"render: speedscope {got} against folded {want}")

    diff = os.path.join(tmp, "diff.folded")
    with open(diff, "w") as f:
        f.write("a;b 1 2\n")
    bad = os.path.join(tmp, "d.speedscope.json")
    r = subprocess.run([FGCTL, "render", diff, "-o", bad], capture_output=True, text=True)
    check(r.returncode != 0 and "no speedscope form" in r.stderr, f"differential: {r.stderr}")
    check(not os.path.exists(bad), "a failed render left a file")


def install_speedscope(tmp):
    """speedscope's release build from npm, or a skip."""
    npm = shutil.which("npm")
    if not npm:
        skip("npm is not installed: the speedscope file checks passed, speedscope itself "
             "did not open the file")
    prefix = os.path.join(tmp, "npm")
    try:
        r = subprocess.run([npm, "install", "--prefix", prefix, "--no-audit", "--no-fund",
                            "--no-save", "speedscope"], capture_output=True, text=True,
                           timeout=300, env=dict(os.environ, npm_config_update_notifier="false"))
    except subprocess.TimeoutExpired:
        skip("npm install speedscope timed out: the speedscope file checks passed, "
             "speedscope itself did not open the file")
    if r.returncode != 0:
        skip(f"npm install speedscope failed (no registry?): the speedscope file checks "
             f"passed, speedscope itself did not open the file\n{r.stderr[-1500:]}")
    app = os.path.join(prefix, "node_modules", "speedscope", "dist", "release")
    check(os.path.isfile(os.path.join(app, "index.html")),
          f"no dist/release/index.html in the speedscope package: {os.listdir(os.path.dirname(app))}")
    with open(os.path.join(prefix, "node_modules", "speedscope", "package.json")) as f:
        print(f"speedscope {json.load(f)['version']} from npm")
    return app


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


# The Sandwich view's table: speedscope's own totals per function.
ROWS_JS = """
return Array.from(document.querySelectorAll("tr")).map(function (r) {
    return Array.from(r.cells).map(function (c) { return c.innerText.trim(); });
});
"""


def share(cell):
    """The percentage speedscope shows in a cell such as "7.50K (75%)"."""
    m = re.search(r"\(<?([\d.]+)%\)", cell)
    check(m is not None, f"no share in the cell {cell!r}")
    return float(m.group(1)) / 100


def in_speedscope(app, profile, name, leaf):
    served = "burn.speedscope.json"
    shutil.copy(profile, os.path.join(app, served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(QuietHandler, directory=app))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        url = (f"{base}/index.html#profileURL="
               f"{urllib.parse.quote(f'{base}/{served}', safe='')}&view=sandwich")
        with webdriver.chromium_session() as s:
            s.set_window_size(1400, 1000)
            s.navigate(url)

            def table():
                rows = s.execute(ROWS_JS)
                funcs = {r[2]: r for r in rows if len(r) == 3 and r[2] in ("hot_a", "hot_b")}
                return funcs if len(funcs) == 2 else None
            funcs = wait_for(table, "speedscope's Sandwich table to list hot_a and hot_b",
                             timeout=60)
            text = s.execute("return document.body.innerText")
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
    check(name in text, f"speedscope does not name the profile {name!r}: {text[:300]!r}")
    print(f"speedscope: {name!r}, rows {funcs['hot_a']}, {funcs['hot_b']}")
    for n in ("hot_a", "hot_b"):
        # Its percentages are rounded to whole ones.
        check(abs(share(funcs[n][1]) - leaf[n]) <= 0.011,
              f"speedscope's self share of {n}: {funcs[n]}, {leaf[n]:.1%} in the file")


def test():
    require_root()
    with tempfile.TemporaryDirectory() as tmp:
        render_same(tmp)
        with Daemon(["--always-on-frequency", "199", "--slice-seconds", "1"]) as d:
            profile, name, leaf = record_cpu(d, tmp)
            renamed_by_exec(d)
            snapshot_same(d, tmp)
        app = install_speedscope(tmp)
        in_speedscope(app, profile, name, leaf)


run(test)
