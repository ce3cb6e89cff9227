#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""fgctl render and fgctl diff, offline: flamegraph.pl's options and input
conventions, filters, differential graphs, and the error messages. Every
expectation is computed here from the input files; no daemon is involved."""

import os
import pty
import re
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET

from fgdtest import FGCTL, check, parse_folded, program, run

SVG = "{http://www.w3.org/2000/svg}"
DATA = os.path.join(os.environ.get("FG_TEST_DATA_DIR",
                                   os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")),
                    "render")
BASIC = os.path.join(DATA, "basic.folded")
BEFORE = os.path.join(DATA, "before.folded")
AFTER = os.path.join(DATA, "after.folded")
FULL = 1200 - 20


def fgctl(*args, stdin=None, rc=0):
    p = subprocess.run([FGCTL] + [str(a) for a in args], input=stdin, capture_output=True, timeout=120)
    if rc is not None:
        check(p.returncode == rc, f"fgctl {' '.join(map(str, args))} exited {p.returncode}, expected {rc}: "
                                  f"{p.stderr.decode(errors='replace')}")
    return p


def read_folded(path):
    stacks = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\r\n")
            if not line.strip() or line.startswith("#"):
                continue
            frames, count = line.rsplit(" ", 1)
            stacks.append((frames.split(";"), float(count)))
    return stacks


def display(name):
    return re.sub(r"_\[[kjiw]\]$", "", name)


def inclusive(stacks):
    """{display name: total count}; every frame name in the fixtures is unique per path."""
    out = {"all": sum(c for _, c in stacks)}
    for frames, c in stacks:
        for f in set(frames):
            out[display(f)] = out.get(display(f), 0) + c
    return out


def frames_of(svg_bytes):
    root = ET.fromstring(svg_bytes)
    out = []
    for g in root.iter(SVG + "g"):
        if g.get("class") != "func_g":
            continue
        title = g.find(SVG + "title").text
        r = g.find(SVG + "rect")
        name = title[:title.rindex(" (")]
        count = float(re.match(r"[0-9,.]+", title[title.rindex(" (") + 2:]).group(0).replace(",", ""))
        out.append({"name": name, "title": title, "count": count, "x": float(r.get("x")),
                    "y": float(r.get("y")), "w": float(r.get("width")), "fill": r.get("fill")})
    return root, out


def by_name(frames):
    return {f["name"]: f for f in frames}


def rgb(fill):
    return tuple(int(v) for v in re.fullmatch(r"rgb\((\d+),(\d+),(\d+)\)", fill).groups())


def test_basic(tmp):
    out = os.path.join(tmp, "basic.svg")
    p = fgctl("render", BASIC, "-o", out)
    check(b"wrote " + out.encode() in p.stderr, f"no summary line: {p.stderr!r}")
    with open(out, "rb") as f:
        root, frames = frames_of(f.read())
    want = inclusive(read_folded(BASIC))
    got = {f["name"]: f["count"] for f in frames}
    check(got == want, f"frame counts differ: got {got}, want {want}")
    f = by_name(frames)
    check(abs(f["all"]["w"] - FULL) < 0.01, "root is not full width")
    for name, n in want.items():
        check(abs(f[name]["w"] - FULL * n / want["all"]) < 0.011, f"{name} has the wrong width")
    # Kernel frames are coloured as such but shown without the annotation.
    check("sys_write" in f and rgb(f["sys_write"]["fill"])[0] >= 245, "sys_write_[k] not in the kernel band")
    check(root.find(f".//{SVG}text[@id='title']").text == "Flame Graph", "default title")


def test_stdin_and_formats(tmp):
    with open(BASIC, "rb") as f:
        data = f.read()
    p = fgctl("render", "-o", "-", stdin=data)
    check(p.stdout.startswith(b"<?xml"), "stdin to stdout did not give an SVG")
    folded = fgctl("render", "-f", "folded", stdin=data).stdout.decode()
    want = sorted(f"{';'.join(fr)} {c:g}" for fr, c in read_folded(BASIC))
    check(sorted(folded.splitlines()) == want, f"folded round trip differs: {folded!r}")
    fgctl("render", BASIC, "-o", os.path.join(tmp, "x.folded"))
    with open(os.path.join(tmp, "x.folded")) as f:
        check(f.read() == folded, ".folded extension does not give folded text")
    p = fgctl("render", BASIC, "-o", os.path.join(tmp, "x.png"), rc=2)
    check(b"cannot tell the format" in p.stderr, f"bad extension message: {p.stderr!r}")


def test_output_targets(tmp):
    """Devices and FIFOs are written as they are, symlinks followed, modes kept."""
    import stat
    if os.geteuid() == 0:  # a device node of our own, not the system's /dev/null
        dev = os.path.join(tmp, "null")
        os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        fgctl("render", BASIC, "-f", "svg", "-o", dev)
        check(stat.S_ISCHR(os.stat(dev).st_mode), "-o to a device replaced the device node")
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", fifo], stdout=subprocess.PIPE)
    fgctl("render", BASIC, "-f", "folded", "-o", fifo)
    out, _ = reader.communicate(timeout=30)
    check(stat.S_ISFIFO(os.stat(fifo).st_mode) and out.startswith(b"main;"), "-o to a FIFO")
    real, link = os.path.join(tmp, "real.svg"), os.path.join(tmp, "link.svg")
    with open(real, "w") as f:
        f.write("old")
    os.chmod(real, 0o600)
    os.symlink(real, link)
    fgctl("render", BASIC, "-o", link)
    check(os.path.islink(link), "-o through a symlink replaced the link")
    check(stat.S_IMODE(os.stat(real).st_mode) == 0o600, "the file's mode was not kept")
    with open(real, "rb") as f:
        check(f.read(5) == b"<?xml", "the symlink's target was not written")

    # Without -o on a terminal: a named file here, never the terminal, never an error.
    here = os.path.join(tmp, "here")
    os.mkdir(here)
    master, slave = pty.openpty()
    try:
        names = []
        for fmt in ((), ("-f", "html")):
            p = subprocess.run([FGCTL, "render", BASIC, *fmt], stdout=slave,
                               stderr=subprocess.PIPE, cwd=here, timeout=60)
            m = re.search(rb"writing (fgd-render-\d{8}-\d{6}(?:-\d+)?\.(svg|html))\n", p.stderr)
            check(p.returncode == 0 and m, f"no -o on a terminal: rc {p.returncode}, {p.stderr!r}")
            names.append(m.group(1).decode())
    finally:
        os.close(master)
        os.close(slave)
    check(sorted(os.listdir(here)) == sorted(names) and names[0].endswith(".svg") and
          names[1].endswith(".html"), f"default outputs {names}, directory {os.listdir(here)}")
    with open(os.path.join(here, names[0]), "rb") as f:
        check(f.read(5) == b"<?xml", "the default output is not the SVG")


def test_input_conventions(tmp):
    text = ("# comment\r\n"
            "\r\n"
            "a;b 1.5\r\n"
            "a;b c 2\r\n"          # a frame with a space
            "no count here\r\n"    # line 5: malformed
            "a;;b 1\r\n"           # an empty frame is a frame
            "a 18446744073709551616\r\n")
    p = fgctl("render", "-f", "folded", "-o", "-", stdin=text.encode())
    check(re.search(rb"<stdin>:5: malformed line", p.stderr), f"no line-numbered message: {p.stderr!r}")
    got = p.stdout.decode().splitlines()
    check(got == ["a 18446744073709551616", "a;;b 1", "a;b 1.5", "a;b c 2"], f"parsed lines: {got}")
    # --strict: nothing written, its own exit code.
    out = os.path.join(tmp, "strict.svg")
    p = fgctl("render", "--strict", "-o", out, stdin=text.encode(), rc=7)
    check(not os.path.exists(out), "--strict left an output file")
    check(b":5: malformed line" in p.stderr, "--strict does not name the line")
    # No stacks at all is an error, not an empty graph.
    p = fgctl("render", "-o", os.path.join(tmp, "e.svg"), stdin=b"# nothing\n", rc=7)
    check(b"no samples" in p.stderr, f"empty input message: {p.stderr!r}")
    p = fgctl("render", os.path.join(tmp, "missing.folded"), "-o", "-", rc=7)
    check(b"cannot read" in p.stderr and b"missing.folded" in p.stderr, "missing file message")


def test_options(tmp):
    out = os.path.join(tmp, "o.svg")
    fgctl("render", BASIC, "-o", out, "--title", "T <&>", "--subtitle", "sub", "--width", 800, "--height", 20,
          "--fonttype", "Courier", "--fontsize", 10, "--countname", "bytes", "--nametype", "Frame:",
          "--colors", "mem", "--bgcolors", "blue", "--notes", "note -- here", "--inverted")
    with open(out, "rb") as f:
        root, frames = frames_of(f.read())
    check(root.get("width") == "800" and root.get("font-family") == "Courier", "width/fonttype not applied")
    check(root.find(f".//{SVG}text[@id='title']").text == "T <&>", "title not escaped/applied")
    check(root.find(f".//{SVG}text[@id='subtitle']").text == "sub", "subtitle missing")
    check("NOTES: note -- here" in root.find(f".//{SVG}desc[@id='notes']").text, "notes missing")
    stops = [s.get("stop-color") for s in root.iter(SVG + "stop")]
    check(stops == ["#eeeeee", "#e0e0ff"], f"bgcolors blue: {stops}")
    details = root.find(f".//{SVG}text[@id='details']")
    check(details.get("data-count-name") == "bytes" and details.get("data-name-type") == "Frame:",
          "countname/nametype")
    f = by_name(frames)
    check("bytes" in f["hot_a"]["title"], "countname not in tooltips")
    for fr in frames:
        r, g, b = rgb(fr["fill"])
        check(r == 0 and g >= 190, f"mem palette: {fr['name']} is {fr['fill']}")
    # Icicle: the root at the top, children below it, 20 px apart.
    check(f["all"]["y"] < f["main"]["y"] < f["run"]["y"], "inverted graph is not top-down")
    check(abs((f["main"]["y"] - f["all"]["y"]) - 20) < 0.01, "--height not applied")

    # --total makes the root narrower; --minwidth in percent drops narrow frames.
    fgctl("render", BASIC, "-o", out, "--total", 556.0, "--minwidth", "5%")
    with open(out, "rb") as f:
        root, frames = frames_of(f.read())
    total = sum(c for _, c in read_folded(BASIC))
    f = by_name(frames)
    check(abs(f["all"]["w"] - FULL * total / 556.0) < 0.02, "--total not applied")
    check(all(fr["count"] >= 0.05 * 556.0 for fr in frames), "--minwidth 5% kept a narrower frame")
    check("operator<<(std::ostream&, Foo const&)" not in f, "a 10-sample frame survived 5%")

    for bad, msg in [(["--colors", "nope"], b"hot, mem"), (["--width", "5"], b"--width"),
                     (["--minwidth", "x"], b"--minwidth"), (["--bgcolors", "#12345"], b"--bgcolors"),
                     (["--include", "("], b"invalid regular expression")]:
        p = fgctl("render", BASIC, "-o", out, *bad, rc=2)
        check(msg in p.stderr, f"{bad}: message {p.stderr!r}")


def test_palette_file(tmp):
    pal = os.path.join(tmp, "palette.map")
    out = os.path.join(tmp, "p.svg")
    fgctl("render", BASIC, "-o", out, "--cp-file", pal, "--random")
    with open(pal) as f:
        entries = dict(line.rstrip("\n").split("->") for line in f)
    check("hot_a" in entries and "sys_write_[k]" in entries, f"palette entries: {sorted(entries)}")
    with open(out, "rb") as f:
        first = {fr["name"]: fr["fill"] for fr in frames_of(f.read())[1]}
    check(first["hot_a"] == entries["hot_a"], "the palette does not hold the drawn colour")
    # Random colours, but the palette keeps them from one graph to the next.
    fgctl("render", BASIC, "-o", out, "--cp-file", pal, "--random")
    with open(out, "rb") as f:
        second = {fr["name"]: fr["fill"] for fr in frames_of(f.read())[1]}
    check(first == second, "colours changed despite the palette")
    with open(pal, "a") as f:
        f.write("main->rgb(1,2,3)\n")
    fgctl("render", BASIC, "-o", out, "--cp-file", pal)
    with open(out, "rb") as f:
        check(by_name(frames_of(f.read())[1])["main"]["fill"] == "rgb(1,2,3)", "palette entry not used")
    with open(pal, "w") as f:
        f.write("garbage\n")
    p = fgctl("render", BASIC, "-o", out, "--cp-file", pal, rc=7)
    check(b"not a palette file" in p.stderr, f"bad palette message: {p.stderr!r}")


def test_reverse_and_flamechart(tmp):
    text = b"a;b;c 1\nx;c 2\n"
    got = fgctl("render", "--reverse", "-f", "folded", stdin=text).stdout.decode().splitlines()
    check(got == ["c;b;a 1", "c;x 2"], f"--reverse: {got}")
    out = os.path.join(tmp, "chart.svg")
    fgctl("render", "--flamechart", "-o", out, stdin=b"m;b 1\nm;b 1\nm;a 1\nm;b 2\n")
    with open(out, "rb") as f:
        root, frames = frames_of(f.read())
    row = sorted((fr["x"], fr["name"], fr["count"]) for fr in frames if fr["name"] in ("a", "b"))
    check([(n, c) for _, n, c in row] == [("b", 2), ("a", 1), ("b", 2)], f"flame chart order: {row}")
    check(root.find(f".//{SVG}text[@id='title']").text == "Flame Chart", "flame chart title")
    # How a graph looks has no folded form: said, never dropped in silence.
    for look in (["--flamechart"], ["--inverted"], ["--width", "900"], ["--title", "T"]):
        p = fgctl("render", *look, "-f", "folded", stdin=text, rc=2)
        check(f"{look[0]} is how a graph is drawn".encode() in p.stderr,
              f"{look} to folded text: {p.stderr!r}")


def test_filters(tmp):
    def folded(*args):
        return fgctl("render", BASIC, "-f", "folded", "-o", "-", *args).stdout.decode().splitlines()

    check(all("hot_a" in l for l in folded("--include", "^hot_a$")) and folded("--include", "^hot_a$"),
          "--include kept other stacks")
    check(not any("compute" in l for l in folded("--exclude", "comp")), "--exclude kept a match")
    focused = folded("--focus", "compute")
    check(focused and all(l.startswith("compute;") or l.startswith("compute ") for l in focused),
          f"--focus did not re-root: {focused}")
    check(any(l.startswith("hot_a") for l in folded("--reverse")), "--reverse")
    p = fgctl("render", "--no-idle", "-f", "folded", "-o", "-",
              stdin=b"swapper;secondary_startup_64_[k];cpu_startup_entry_[k];do_idle_[k] 90\n"
                    b"app;main;work 10\n")
    check(p.stdout.decode().splitlines() == ["app;main;work 10"], f"--no-idle: {p.stdout!r}")


def test_diff(tmp):
    out = os.path.join(tmp, "diff.svg")
    fgctl("diff", BEFORE, AFTER, "-o", out)
    with open(out, "rb") as f:
        root, frames = frames_of(f.read())
    f = by_name(frames)
    check(root.find(f".//{SVG}text[@id='title']").text == "Differential Flame Graph", "diff title")
    after = inclusive(read_folded(AFTER))
    for name, n in after.items():
        check(f[name]["count"] == n, f"{name}: width count {f[name]['count']}, want after's {n}")
    check("before:" in f["hot_a"]["title"] and "change +" in f["hot_a"]["title"],
          f"tooltip lacks before/change: {f['hot_a']['title']}")
    r, g, b = rgb(f["hot_a"]["fill"])
    check(r == 255 and g < 200 and b < 200, f"hot_a grew but is {f['hot_a']['fill']}")
    r, g, b = rgb(f["hot_b"]["fill"])
    check(b == 255 and r < 255, f"hot_b shrank but is {f['hot_b']['fill']}")
    check(rgb(f["new_path"]["fill"])[0] == 255, "new_path is new but not red")
    check("shutdown" not in f, "shutdown has no samples after, yet is drawn")
    # Its colours say what changed: a palette is refused, not silently ignored.
    p = fgctl("diff", BEFORE, AFTER, "-o", out, "--colors", "blue", rc=2)
    check(b"--colors does not apply to a differential graph" in p.stderr, f"{p.stderr!r}")
    # Normalised: before counts scaled by 500/300.
    m = re.search(r"before: ([0-9.,]+),", f["hot_b"]["title"])
    check(m and abs(float(m.group(1).replace(",", "")) - 100 * 500 / 300) < 0.01, f["hot_b"]["title"])
    # --negate: the widths of the before profile, where shutdown still exists.
    fgctl("diff", BEFORE, AFTER, "-o", out, "--negate", "--no-normalize")
    with open(out, "rb") as f2:
        f = by_name(frames_of(f2.read())[1])
    check("shutdown" in f and f["shutdown"]["count"] == 50, "--negate did not use before's widths")
    check(rgb(f["shutdown"]["fill"])[2] == 255, "shutdown vanished but is not blue")
    p = fgctl("diff", BEFORE, "-o", out, rc=2)
    check(b"two profiles" in p.stderr, "diff with one input")


def perf_script(tmp, name, *events, fields=None):
    """Records fgtest-burn with the machine's perf and returns perf script's text."""
    data = os.path.join(tmp, name + ".data")
    ev = [a for e in events for a in ("-e", e)]
    # --buildid-mmap: perf 6.1 here aborts ("assertion failed at util/build-id.c:1010") when it
    # reads build-ids from the binaries itself, but not with the kernel's mmap2 build-ids.
    p = subprocess.run(["perf", "record", "-q", "--buildid-mmap", *ev, "-F", "999", "-g", "-o", data, "--",
                        program("fgtest-burn"), "1.5"], capture_output=True, timeout=120)
    check(p.returncode == 0, f"perf record failed: {p.stderr.decode(errors='replace')}")
    p = subprocess.run(["perf", "script", "-i", data] + (["-F", fields] if fields else []),
                       capture_output=True, timeout=120)
    check(p.returncode == 0 and p.stdout, f"perf script failed: {p.stderr.decode(errors='replace')}")
    return p.stdout


def test_perf_script(tmp):
    """perf script | fgctl render --from perf, on text this test records itself."""
    check(shutil.which("perf"), "perf is not installed (linux-perf)")
    text = perf_script(tmp, "one", "cpu-clock")
    folded = fgctl("render", "--from", "perf", "-f", "folded", stdin=text).stdout.decode()
    burn = {}
    for line in folded.splitlines():
        stack, count = line.rsplit(" ", 1)
        if stack.startswith("fgtest-burn;"):
            burn[stack] = burn.get(stack, 0) + int(count)
    a = sum(c for st, c in burn.items() if st.endswith(";main;hot_a"))
    b = sum(c for st, c in burn.items() if st.endswith(";main;hot_b"))
    # Counts are the samples' periods, as stackcollapse-perf.pl sums them.
    n = len(re.findall(rb"^fgtest-burn ", text, re.M))
    check(n > 200 and a + b > 0, f"too few fgtest-burn samples: {n}, hot_a {a}, hot_b {b}")
    share = a / (a + b)
    check(abs(share - 0.75) < 0.05, f"hot_a has {100 * share:.1f}% of hot_a + hot_b, expected 75%")
    # --count-samples counts samples, not periods: as many as perf script printed.
    folded = fgctl("render", "--from", "perf", "--count-samples", "-f", "folded", stdin=text).stdout.decode()
    total = sum(int(l.rsplit(" ", 1)[1]) for l in folded.splitlines())
    check(total == len(re.findall(rb"^\S.*cpu-clock:", text, re.M)), f"--count-samples: {total} samples")
    # --pid puts the pid in the root frame; perf script's default output has only the
    # tid, so stackcollapse-perf.pl writes "comm-?", and so do we.
    folded = fgctl("render", "--from", "perf", "--pid", "-f", "folded", stdin=text).stdout.decode()
    check(re.search(r"^fgtest-burn-\?;", folded, re.M), "--pid: no comm-? root frame")
    text_f = perf_script(tmp, "fields", "cpu-clock", fields="comm,pid,tid,time,event,ip,sym,dso,period")
    folded = fgctl("render", "--from", "perf", "--tid", "-f", "folded", stdin=text_f).stdout.decode()
    check(re.search(r"^fgtest-burn-(\d+)/\1;.*;main;hot_a \d+$", folded, re.M),
          f"--tid with -F fields: no comm-PID/TID root frame: {folded[:300]}")
    # And straight to a graph, its counts named for what they are: cpu-clock's periods, ns.
    out = os.path.join(tmp, "perf.svg")
    p = fgctl("render", "--from", "perf", "-o", out, stdin=text)
    check(re.search(rb"wrote \S+: \d+ stacks, \d+ ns\n", p.stderr), f"summary: {p.stderr!r}")
    with open(out, "rb") as f:
        svg = f.read()
    check("hot_a" in by_name(frames_of(svg)[1]), "hot_a missing from the perf graph")
    check(re.search(rb"\([\d,]+ ns, [\d.]+%\)", svg), "the graph's counts are not ns")
    p = fgctl("render", "--from", "perf", "--count-samples", "-o", out, stdin=text)
    check(re.search(rb"\d+ samples\n", p.stderr), f"--count-samples summary: {p.stderr!r}")
    # Two events in one file: the first one seen is drawn, and the user is told which.
    text = perf_script(tmp, "two", "cpu-clock", "task-clock")
    p = fgctl("render", "--from", "perf", "-f", "folded", stdin=text)
    m = re.search(rb"holds several events; using '([a-z-]+)'", p.stderr)
    check(m is not None, f"no event notice: {p.stderr!r}")
    used = m.group(1).decode()
    first = re.search(r"^\S.*?:\s+\d+\s+([a-z-]+):", text.decode(errors="replace"), re.M)
    check(first and first.group(1) == used, f"drew {used}, but the first event is {first and first.group(1)}")
    check(p.stdout, "nothing drawn for the first event")
    other = "task-clock" if used == "cpu-clock" else "cpu-clock"
    p = fgctl("render", "--from", "perf", "--event-filter", other, "-f", "folded", stdin=text)
    check(b"several events" not in p.stderr, "notice despite --event-filter")
    check(p.stdout, f"--event-filter {other} gave nothing")


def test_perf_cpu(tmp):
    """--cpu picks perf script samples by their [CPU]: a system-wide perf record while
    fgtest-burn is pinned to the last CPU; --cpu LAST holds the burner, --cpu FIRST not."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2 or os.geteuid() != 0:
        print("--cpu: needs two CPUs and root for perf record -a")
        return
    burn = subprocess.Popen([program("fgtest-burn")], stdout=subprocess.PIPE, text=True,
                            preexec_fn=lambda: os.sched_setaffinity(0, {cpus[-1]}))
    try:
        check(burn.stdout.readline().strip() == "ready", "fgtest-burn did not start")
        data = os.path.join(tmp, "all.data")
        p = subprocess.run(["perf", "record", "-q", "--buildid-mmap", "-a", "-g", "-F", "499",
                            "-o", data, "--", "sleep", "1"], capture_output=True, timeout=120)
        check(p.returncode == 0, f"perf record -a failed: {p.stderr.decode(errors='replace')}")
    finally:
        burn.kill()
        burn.wait()
        burn.stdout.close()
    text = subprocess.run(["perf", "script", "-i", data], capture_output=True, timeout=120).stdout

    def burner(cpu):
        p = fgctl("render", "--from", "perf", "--count-samples", "--cpu", cpu, "-f", "folded",
                  stdin=text, rc=None)
        stacks = {} if p.returncode else parse_folded(p.stdout.decode())
        return sum(c for s, c in stacks.items() if s.startswith("fgtest-burn;")), p
    on_last, p = burner(str(cpus[-1]))
    on_first, _ = burner(str(cpus[0]))
    check(on_last > 200 and on_first == 0,
          f"fgtest-burn on CPU {cpus[-1]}: {on_last} samples with --cpu {cpus[-1]}, "
          f"{on_first} with --cpu {cpus[0]}")
    check(b"samples of other CPUs left out" in p.stderr, f"no count of what --cpu left out: {p.stderr!r}")
    p = fgctl("render", "--cpu", "0", BASIC, "-o", "-", rc=2)
    check(b"give --from perf" in p.stderr, f"--cpu on folded input: {p.stderr!r}")


def main():
    with tempfile.TemporaryDirectory(prefix="fg-render-") as tmp:
        for t in (test_basic, test_stdin_and_formats, test_output_targets, test_input_conventions,
                  test_options,
                  test_palette_file, test_reverse_and_flamechart, test_filters, test_diff,
                  test_perf_script, test_perf_cpu):
            t(tmp)
            print(f"ok   {t.__name__}")


if __name__ == "__main__":
    run(main)
