#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""fgctl heatmap: the subsecond-offset heat map, live from fgd and from perf script.

fgtest-band burns CPU in burst() from 200 to 400 ms of every wall-clock
second and sleeps in idle_wait() the rest of it. (It wakes 5 ms early and
spins from then on, so that its return from the sleep, on the CPU under
idle_wait, lies before the band and not in it.)
  - `fgctl heatmap -p PID -t 4 -o x.json`: nearly all samples (95%) lie in
    the buckets of 200 to 400 ms (rows 10 to 19 of 20 ms) and the lead's
    bucket before them, most (85%) in the band itself, across columns of
    whole wall-clock seconds; the JSON has the documented members.
  - The same as HTML with fgtest-hot-old spinning beside it, in headless
    chromium: both processes are in the isolate menu, and isolating
    fgtest-band leaves its samples alone in the cells; a range dragged over
    the band of one second then gives the flame graph of burst() alone (its
    frame holds every sample of the range); the URL keeps the range and the
    isolated process, and the page loaded from it shows the same graph; a
    range of the quiet part of the seconds has no samples, until all
    processes are shown again and hot_old fills it; the hover line names the
    cell's process; the differential view colours the range against the
    rest.
  - --off-cpu: the blocked time lies outside the band (90%), in µs.
  - perf record + perf script | fgctl heatmap --from perf: every sample
    perf printed is counted, and 95% lie in eleven consecutive rows (perf's
    clock is not the wall clock, so the band is somewhere else in the
    second, but still 200 ms wide); the SVG has its cells.
  - Wrong input gets a clear error and its exit status.
  - fgctl record --since S.200 --until S.400 keeps the band of second S:
    burst() alone; a range of the quiet part holds nothing.
  - Always-on at 199 Hz in 2 s slices, 4 s of them in memory: `fgctl
    heatmap --last 8s -p PID` puts the band's samples in rows 10 to 19,
    from memory and from the history on disk (10 ms ticks); snapshots of
    [S.200, S.400) hold burst() alone, in memory and on disk, and one of
    [S.500, S.900) nothing.
  - History written before fgd kept times (tests/data/history/slice-v1.fgdh):
    snapshot reads its samples; heatmap of its period fails saying that its
    slices kept no times.
"""

import json
import os
import shutil
import subprocess
import tempfile
import time

import webdriver
from fgdtest import FGCTL, Daemon, check, parse_folded, require_root, run, wait_for, workload

DATA = os.environ.get("FG_TEST_DATA_DIR",
                      os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data"))
BAND = (200, 400)
BUCKET = 20


def band_rows():
    return range(BAND[0] // BUCKET, BAND[1] // BUCKET)


def row_totals(j):
    rows = [0.0] * j["rows"]
    for col in j["columns"]:
        check(len(col) == j["rows"], f"a column of {len(col)} buckets, not {j['rows']}")
        for i, v in enumerate(col):
            rows[i] += v
    return rows


def live_json(d, pid):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "band.json")
        d.fgctl("heatmap", "-p", pid, "-t", "4", "-o", out, check_rc=0)
        with open(out) as f:
            j = json.load(f)
    for key in ("start", "bucket_ms", "rows", "columns", "total", "clock", "unit"):
        check(key in j, f"the JSON lacks {key!r}: {sorted(j)}")
    check(j["bucket_ms"] == BUCKET and j["rows"] == 1000 // BUCKET, f"buckets: {j['bucket_ms']}")
    check(j["clock"] == "unix" and j["unit"] == "samples", f"clock {j['clock']}, unit {j['unit']}")
    check(4 <= len(j["columns"]) <= 6, f"{len(j['columns'])} columns for 4 s")
    rows = row_totals(j)
    total = sum(rows)
    check(total == j["total"], f"cells sum to {total}, total says {j['total']}")
    in_band = sum(rows[r] for r in band_rows())
    # The bucket before the band holds the workload's lead: it spins from 5 ms
    # before the band (LEAD_MS), a fortieth of its time on the CPU, which at
    # 99 Hz is a sample or two a second, as many as chance puts there.
    lead = rows[band_rows()[0] - 1]
    check(total >= 40, f"only {total} samples in 4 s of a 20% burn at 99 Hz")
    check(in_band + lead >= 0.95 * total,
          f"{in_band + lead} of {total} samples in {BAND[0] - BUCKET}-{BAND[1]} ms: rows {rows}")
    check(in_band >= 0.85 * total,
          f"{in_band} of {total} samples in {BAND[0]}-{BAND[1]} ms: rows {rows}")
    print(f"live: {in_band:.0f} of {total:.0f} samples in the band, {lead:.0f} in the lead's bucket, "
          f"{len(j['columns'])} columns")


def drag(s, a, b):
    s.perform_actions([{"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
                        "actions": [
                            {"type": "pointerMove", "duration": 0, "x": int(a["cx"]), "y": int(a["cy"])},
                            {"type": "pointerDown", "button": 0},
                            {"type": "pointerMove", "duration": 50, "x": int(b["cx"]), "y": int(b["cy"])},
                            {"type": "pointerUp", "button": 0}]}])


def click(s, a):
    s.perform_actions([{"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
                        "actions": [
                            {"type": "pointerMove", "duration": 0, "x": int(a["cx"]), "y": int(a["cy"])},
                            {"type": "pointerDown", "button": 0},
                            {"type": "pointerUp", "button": 0}]}])


def frames(s):
    return s.execute("return window.fgHeatmap.frames().map(f => [f.name, f.value, f.depth])")


def burst_alone(s, what):
    fr = frames(s)
    check(fr, f"{what}: nothing drawn")
    root = [v for n, v, d in fr if d == 0][0]
    burst = sum(v for n, v, d in fr if n == "burst")
    check(root > 0 and burst == root,
          f"{what}: burst holds {burst} of the range's {root} samples: {fr}")
    return root


def isolate(s, name):
    """Picks name in the isolate menu as a user does ("" for all processes)."""
    s.find("#isolate").click()
    for opt in s.find_all("#isolate option"):
        if (opt.text().startswith(name + " (") if name else opt.attribute("value") == ""):
            opt.click()
            return
    check(False, f"{name!r} is not in the isolate menu")


def browser(d, pid):
    tmp = tempfile.mkdtemp(prefix="fgd-heatmap-")
    try:
        page = os.path.join(tmp, "band.html")
        with workload("fgtest-hot-old", 30) as hot:
            d.fgctl("heatmap", "-p", f"{pid},{hot.pid}", "-t", "3", "-o", page, check_rc=0)
        with webdriver.chromium_session() as s:
            s.set_window_size(1400, 1100)
            s.navigate("file://" + page)
            hm = s.execute("return {cols: window.fgHeatmap.columns, rows: window.fgHeatmap.rows, "
                           "procs: window.fgHeatmap.processes()}")
            check(hm["rows"] == 50 and hm["cols"] >= 3, f"the page's heat map: {hm}")
            # The spinner runs the whole time, the band a fifth of it: it comes first.
            check([p["name"] for p in hm["procs"]] == ["fgtest-hot-old", "fgtest-band"],
                  f"processes: {hm['procs']}")
            band_total = hm["procs"][1]["total"]
            everyone = sum(s.execute("return window.fgHeatmap.cells()"))

            # Isolate fgtest-band: the cells hold its samples alone.
            isolate(s, "fgtest-band")
            alone = sum(s.execute("return window.fgHeatmap.cells()"))
            check(alone == band_total and alone < everyone,
                  f"isolated, the cells hold {alone} samples; fgtest-band has {band_total}, "
                  f"everyone {everyone}")
            # A column whose band is whole: one with samples in the band's every bucket or most.
            cells = s.execute("return window.fgHeatmap.cells()")
            cols = [c for c in range(hm["cols"])
                    if sum(cells[c * 50 + r] for r in band_rows()) >= 10]
            check(cols, f"no second holds 10 samples in the band: {cells}")
            col = cols[0]

            # Drag over the band of that second: its flame graph is burst's alone.
            drag(s, s.execute(f"return window.fgHeatmap.cellRect({col}, 10)"),
                 s.execute(f"return window.fgHeatmap.cellRect({col}, 19)"))
            sel = s.execute("return window.fgHeatmap.selection()")
            check(sel and sel["hi"] - sel["lo"] == 200, f"the selection: {sel}")
            n = burst_alone(s, "the band")
            url = s.execute("return location.href")
            check(f"r={sel['lo']}_{sel['hi']}" in url and "p=fgtest-band" in url,
                  f"the URL does not keep the range and the process: {url}")

            # The hover line names the cell's time, count and process: over a cell of the
            # band with samples (at 99 Hz a 20 ms cell of one second may have none).
            row = next(r for r in band_rows() if cells[col * 50 + r] > 0)
            rect = s.execute(f"return window.fgHeatmap.cellRect({col}, {row})")
            s.perform_actions([{"type": "pointer", "id": "mouse",
                                "parameters": {"pointerType": "mouse"},
                                "actions": [{"type": "pointerMove", "duration": 0,
                                             "x": int(rect["cx"]), "y": int(rect["cy"])}]}])
            text = s.execute("return window.fgHeatmap.cellText()")
            check("fgtest-band" in text and f"second {col}" in text and
                  f"+{row * BUCKET} ms" in text, f"hover line over row {row}: {text!r}")

            # The differential view: the range against the rest of the period.
            s.find("#diff").click()
            check(frames(s), "the differential view draws nothing")
            check("red: more" in s.execute("return window.fgHeatmap.rangeText()"),
                  "the differential view does not say what its colours mean")
            s.find("#diff").click()

            # A link to the page shows the same range and graph.
            s.navigate(url)
            check(s.execute("return window.fgHeatmap.selection()") == sel,
                  "the page loaded from the URL lost the range")
            check(sum(s.execute("return window.fgHeatmap.cells()")) == alone,
                  "the page loaded from the URL lost the isolated process")
            check(burst_alone(s, "the range from the URL") == n, "another graph from the URL")

            # Click, click: the quiet part of the second has no samples.
            click(s, s.execute(f"return window.fgHeatmap.cellRect({col}, 25)"))
            check(s.execute("return window.fgHeatmap.pending()") == {"col": col, "row": 25},
                  "the first click did not start a range")
            click(s, s.execute(f"return window.fgHeatmap.cellRect({col}, 45)"))
            check(s.execute("return window.fgHeatmap.selection()")["hi"] -
                  s.execute("return window.fgHeatmap.selection()")["lo"] == 420,
                  "click, click: not the range of both cells")
            text = s.execute("return window.fgHeatmap.rangeText()")
            check(text.startswith("No samples"), f"the quiet range: {text!r}")

            # All processes again: the spinner fills the quiet range.
            isolate(s, "")
            check(sum(s.execute("return window.fgHeatmap.cells()")) == everyone,
                  "all processes again: not the cells of everyone")
            fr = frames(s)
            check(any(name == "hot_old" for name, v, depth in fr),
                  f"all processes again: no hot_old in the quiet range: {fr}")
        print(f"browser: fgtest-band isolated, the band's range is burst() alone ({n} samples)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def off_cpu(d, pid):
    st = d.status()
    if not st.get("off_cpu", {}).get("available", False):
        print("off-CPU: unavailable here, left out")
        return
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "waits.json")
        d.fgctl("heatmap", "-p", pid, "--off-cpu", "-t", "3", "-o", out, check_rc=0)
        with open(out) as f:
            j = json.load(f)
    check(j["unit"] == "us", f"unit {j['unit']}")
    rows = row_totals(j)
    total = sum(rows)
    in_band = sum(rows[r] for r in band_rows())
    # It sleeps 800 ms of each second. Inside the band it runs, but waits for the CPU
    # whenever something else has it (a busy machine), which is off-CPU time too: the band
    # must stand out, not be empty. A block still going at the end is not counted: 3 s hold
    # two whole blocks at least.
    band = len(band_rows())
    in_avg, out_avg = in_band / band, (total - in_band) / (j["rows"] - band)
    check(total >= 1.5e6 and in_avg <= 0.5 * out_avg,
          f"{in_band:.0f} of {total:.0f} us blocked inside the band: rows {rows}")
    print(f"off-CPU: {total / 1e6:.2f} s blocked, {100 * in_band / total:.1f}% in the band")


def perf_script(tmp):
    data = os.path.join(tmp, "perf.data")
    with workload("fgtest-band", BAND[0], BAND[1], 6) as w:
        subprocess.run(["perf", "record", "-F", "499", "-g", "-p", str(w.pid), "-o", data, "-q",
                        "--", "sleep", "4"], check=True, capture_output=True)
    r = subprocess.run(["perf", "script", "-i", data], capture_output=True, check=True)
    return r.stdout


def offline():
    if not shutil.which("perf"):
        print("offline: no perf, left out")
        return
    tmp = tempfile.mkdtemp(prefix="fgd-heatmap-perf-")
    try:
        text = perf_script(tmp)
        headers = sum(1 for line in text.decode(errors="replace").splitlines()
                      if line and not line[0].isspace() and line.startswith("fgtest-band"))
        out = os.path.join(tmp, "band.json")
        r = subprocess.run([FGCTL, "heatmap", "--from", "perf", "-o", out], input=text,
                           capture_output=True)
        check(r.returncode == 0, f"--from perf: {r.stderr.decode()}")
        with open(out) as f:
            j = json.load(f)
        check(j["clock"] == "perf", f"clock {j['clock']}")
        rows = row_totals(j)
        check(j["total"] == headers, f"{j['total']} samples counted, perf printed {headers}")
        best = max(sum(rows[k] for k in range(i, i + 11)) for i in range(0, len(rows) - 10))
        check(best >= 0.95 * j["total"], f"no band of 220 ms holds 95% of the samples: {rows}")

        svg = os.path.join(tmp, "band.svg")
        r = subprocess.run([FGCTL, "heatmap", "--from", "perf", "-o", svg, "--scale", "rank"],
                           input=text, capture_output=True)
        check(r.returncode == 0, f"--from perf -o .svg: {r.stderr.decode()}")
        with open(svg) as f:
            body = f.read()
        check(body.startswith("<?xml") and body.count("<rect") > 10, "the SVG has no cells")

        # A timed profile written and read back gives the same heat map.
        timed = os.path.join(tmp, "band.timed")
        subprocess.run([FGCTL, "heatmap", "--from", "perf", "-o", timed], input=text, check=True,
                       capture_output=True)
        again = os.path.join(tmp, "again.json")
        subprocess.run([FGCTL, "heatmap", "--from", "timed", timed, "-o", again], check=True,
                       capture_output=True)
        with open(again) as f:
            check(json.load(f) == j, "the timed profile read back draws another heat map")
        print(f"offline: {headers} samples, {best:.0f} in the best 220 ms")

        # Wrong input: said, with the input's exit status (7); wrong options: usage (2).
        r = subprocess.run([FGCTL, "heatmap", "--from", "timed", svg, "-o", out],
                           capture_output=True)
        check(r.returncode == 7 and b"not a timed profile" in r.stderr,
              f"an SVG read as a timed profile: {r.returncode} {r.stderr!r}")
        r = subprocess.run([FGCTL, "heatmap", "--from", "perf", "--comm", "^nothing$", "-o", out],
                           input=text, capture_output=True)
        check(r.returncode == 7 and b"no samples" in r.stderr, f"--comm matching nothing: {r.stderr!r}")
        for args in (["--bucket-ms", "0"], ["--scale", "log"], ["-a", "-p", "1"], []):
            r = subprocess.run([FGCTL, "heatmap", "-o", out] + args, capture_output=True,
                               stdin=subprocess.DEVNULL)
            check(r.returncode == 2 and r.stderr, f"{args}: {r.returncode} {r.stderr!r}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def band_only(d, pid, since, until, *extra):
    """The stacks of pid's samples in [since, until) (Unix seconds, ms) from fgctl ARGS."""
    r = d.fgctl(*extra, "-p", pid, "--since", f"{since:.3f}", "--until", f"{until:.3f}",
                "-o", "-")
    return r.returncode, parse_folded(r.stdout.decode()) if r.returncode == 0 else {}, r.stderr


def check_burst(stacks, what):
    check(stacks and all(s.endswith(";burst") or ";burst;" in s for s in stacks),
          f"{what}: not burst() alone: {stacks}")
    return sum(stacks.values())


def recorded_range(d, pid):
    s = int(time.time()) + 2
    rc, stacks, err = band_only(d, pid, s + 0.2, s + 0.4, "record", "-t", "4", "-F", "499")
    check(rc == 0, f"record --since/--until: {err!r}")
    n = check_burst(stacks, "record of the band of a second")
    check(n >= 50, f"{n} samples of 200 ms at 499 Hz")
    rc, stacks, err = band_only(d, pid, s + 3.5, s + 3.9, "record", "-t", "4", "-F", "499")
    check(rc == 0 and not stacks and b"no sample of the recording lies in that range" in err,
          f"record of the quiet part of a second: {stacks}, {err!r}")
    print(f"record --since/--until: {n} samples of the band, burst() alone")


def always_on():
    with Daemon(["--always-on-frequency", "199", "--slice-seconds", "2",
                 "--window-seconds", "4"]) as d, \
            workload("fgtest-band", BAND[0], BAND[1], 60) as w:
        start = int(time.time()) + 1
        slices = os.path.join(d.dir, "state", "slices")
        # Seconds old enough to be on disk only, and seconds still in memory.
        wait_for(lambda: len(os.listdir(slices)) >= 5, "five slices on disk", 60)
        now = int(time.time())
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "always.json")
            d.fgctl("heatmap", "--last", "8s", "-p", w.pid, "-o", out, check_rc=0)
            with open(out) as f:
                j = json.load(f)
        rows = row_totals(j)
        total, in_band = sum(rows), sum(rows[r] for r in band_rows())
        check(total >= 100 and in_band >= 0.95 * total,
              f"always-on: {in_band} of {total} samples in the band: {rows}")
        for second, where in ((start + 1, "disk"), (now - 1, "memory")):
            rc, stacks, err = band_only(d, w.pid, second + 0.2, second + 0.4, "snapshot")
            check(rc == 0, f"snapshot of the band of {second} ({where}): {err!r}")
            n = check_burst(stacks, f"the band of {second} ({where})")
            check(n >= 20, f"{n} samples in the band of {second} ({where}) at 199 Hz")
            rc, stacks, err = band_only(d, w.pid, second + 0.5, second + 0.9, "snapshot")
            check(rc != 0 and b"no samples" in err,
                  f"the quiet part of {second} ({where}): {rc} {stacks} {err!r}")
        print(f"always-on: {in_band:.0f} of {total:.0f} samples in the band; ranges to the ms "
              "in memory and on disk")


def old_history():
    """History written before fgd kept times: snapshot reads it, heatmap says why it cannot."""
    with tempfile.TemporaryDirectory() as tmp:
        slices = os.path.join(tmp, "state", "slices")
        os.makedirs(slices)
        # A version 1 slice of [1000, 2000) ns since the epoch: kept however old it is.
        shutil.copy(os.path.join(DATA, "history", "slice-v1.fgdh"),
                    os.path.join(slices, f"{1000:020}-{2000:020}.fgdh"))
        conf = os.path.join(tmp, "fgd.conf")
        with open(conf, "w") as f:
            f.write("[fgd]\nHistoryKeepSec=infinity\nHistoryTiers=\n")
        with Daemon(["-c", conf, "--state-directory", os.path.join(tmp, "state")]) as d:
            r = d.fgctl("snapshot", "--since", "@0", "--until", "@1", "-o", "-")
            stacks = parse_folded(r.stdout.decode())
            check(r.returncode == 0 and stacks == {"burn;_start;main;hot_a": 7},
                  f"snapshot of the old slice: {r.returncode} {stacks} {r.stderr!r}")
            out = os.path.join(tmp, "old.json")
            r = d.fgctl("heatmap", "--since", "@0", "--until", "@1", "-o", out)
            check(r.returncode == 1 and b"no times kept for that period: none of its 1 slices"
                  in r.stderr and not os.path.exists(out),
                  f"heat map of the old slice: {r.returncode} {r.stderr!r}")
    print("old history: snapshot reads it; heatmap says its slice kept no times")


def test():
    require_root()
    old_history()
    with Daemon(["--no-always-on"]) as d:
        with workload("fgtest-band", BAND[0], BAND[1], 60) as w:
            live_json(d, w.pid)
            recorded_range(d, w.pid)
            off_cpu(d, w.pid)
            browser(d, w.pid)
    always_on()
    offline()


if __name__ == "__main__":
    run(test)
