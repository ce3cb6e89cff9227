#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""fgd against `perf record`, side by side on the same load: CPU cost per sample and loss
(issue 17, items 2, 3 and 5).

For each load and each unwinding mode, with the load running on every CPU:
  1. a private fgd (its own socket and state directory, always-on sampling off unless
     --always-on, so that all its CPU time is the recording's) records the whole machine
     for --warm seconds, `fgctl record -a -F 999 -t WARM --call-graph MODE`: its first
     seconds with new binaries (symbol tables, DWARF, CFI), reported as the warm-up cost;
  2. the same fgd records for --seconds: the measured figure. fgd's cost is its CPU time
     (utime + stime of all its threads, /proc/PID/stat before and after the recording, its
     work at the end included) divided by the samples it read (`samples_seen` of
     `fgctl record --json`); lost samples are the summary's `lost`;
  3. fgd stops, and `perf record -F 999 -a -g` (fp) or `perf record -F 999 -a --call-graph
     dwarf,SIZE` (dwarf; SIZE is fgd's stack copy, 32 KiB by default, unless
     --perf-stack-dump says otherwise; 0 for perf's default, 8 KiB) records for as long.
     perf's cost is its CPU time (utime + stime from rusage, its processing of the file
     after the recording included) divided by the samples it wrote (its closing line);
     lost samples are the LOST_SAMPLES of `perf report --stats`. "perf mid-run" is perf's
     on-CPU time (schedstat) between a quarter and 85% of the way through, over the samples
     of that part: its cost without its start (reading every process's maps) and its end
     (the build-id pass). In fp mode nearly all of perf record's cost is those two, so its
     per-sample figure shrinks as --seconds grows (0.20 s of CPU for 5 s and for 25 s of
     the cxx load, measured); fgd's does not. With --perf-script, the CPU time of `perf
     script` over the file is noted too: the symbolizing that fgd does as it goes.

Loads (--load, repeatable; default all):
  python           2 x the python3 found on PATH (a build with debug info in libpython):
                   recursion, dict and str work in a loop
  python-stripped  the same with /usr/bin/python3 (Debian's, stripped)
  cxx              a loop of `g++ -O2 -c` of a C++ file (templates, STL) per CPU
  node             2 x node --perf-basic-prof running a CPU-bound JS loop

With --rounds N (default 1), each load and mode is compared N times in turn (fgd, then
perf, then fgd again...), a row each, and a line per load and mode gives the medians and
the range of the ratio: perf's own cost per sample moves by a quarter between runs on a
busy machine, so one round's ratio says less than the spread of several.

With --loss (or --loss-runs N, default 10): for each load, in dwarf mode, N further
recordings of --seconds at 999 Hz on every CPU with fgd's defaults (ring, stack copy),
and the worst lost fraction and lost count over them.

Prints the command line, a markdown table and notes; asserts nothing (machines are
noisy). Every process it starts is stopped at the end, on Ctrl-C and on errors too.
Needs root, perf, and a build (`meson setup build && ninja -C build`).

usage: tests/bench/bench_vs_perf.py [--build build] [--seconds 20] [--warm 5]
           [--load python|python-stripped|cxx|node ...] [--mode fp|dwarf ...]
           [--perf-stack-dump BYTES] [--always-on] [--rounds 1] [--perf-script] [--loss]
           [--loss-runs 10]
"""

import argparse
import contextlib
import json
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile

import fgbench

LOADS = ("python", "python-stripped", "cxx", "node")
MODES = ("fp", "dwarf")
FREQUENCY = 999

PY_LOAD = """\
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

def words(n):
    d = {}
    for i in range(n):
        k = "key%d" % (i % 97)
        d[k] = d.get(k, 0) + len(k.upper().replace("K", "kk"))
    return sorted(d.items())

print("ready", flush=True)
while True:
    fib(18)
    words(2000)
"""

JS_LOAD = """\
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
function words(n) {
    const d = new Map();
    for (let i = 0; i < n; i++) {
        const k = "key" + (i % 97);
        d.set(k, (d.get(k) || 0) + k.toUpperCase().replace("K", "kk").length);
    }
    return [...d.entries()].sort().length;
}
console.log("ready");
let x = 0;
for (;;) x += fib(20) + words(2000);
"""

# 1 to 3 s of g++ -O2 on an idle CPU.
CXX_SOURCE = """\
// A compile load for bench_vs_perf.py: templates and the standard library.
#include <algorithm>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <tuple>
#include <unordered_map>
#include <variant>
#include <vector>

template <int N> struct Fib { static constexpr long value = Fib<N - 1>::value + Fib<N - 2>::value; };
template <> struct Fib<1> { static constexpr long value = 1; };
template <> struct Fib<0> { static constexpr long value = 0; };

template <typename... Ts> struct Overload : Ts... { using Ts::operator()...; };
template <typename... Ts> Overload(Ts...) -> Overload<Ts...>;

using Value = std::variant<long, double, std::string, std::vector<long>>;

template <typename K, typename V>
std::map<V, std::vector<K>> invert(const std::unordered_map<K, V> &m)
{
	std::map<V, std::vector<K>> out;
	for (const auto &[k, v] : m)
		out[v].push_back(k);
	for (auto &[v, ks] : out)
		std::sort(ks.begin(), ks.end());
	return out;
}

template <typename T> std::string describe(const T &x)
{
	std::ostringstream s;
	s << x;
	return s.str();
}

std::string describe(const Value &v)
{
	return std::visit(Overload{
		[](long x) { return "long " + describe(x); },
		[](double x) { return "double " + describe(x); },
		[](const std::string &x) { return "string " + x; },
		[](const std::vector<long> &x) {
			return "vector of " + describe(std::accumulate(x.begin(), x.end(), 0L));
		},
	}, v);
}

template <size_t I, typename Tuple> void each(const Tuple &t, std::vector<std::string> &out)
{
	if constexpr (I < std::tuple_size_v<Tuple>) {
		out.push_back(describe(std::get<I>(t)));
		each<I + 1>(t, out);
	}
}

#define INSTANCE(K, V, N)                                                           \\
	std::map<V, std::vector<K>> invert_##N(const std::unordered_map<K, V> &m)  \\
	{ return invert(m); }                                                      \\
	long fib_##N() { return Fib<N>::value; }

INSTANCE(int, long, 10)
INSTANCE(long, int, 11)
INSTANCE(std::string, int, 12)
INSTANCE(int, std::string, 13)
INSTANCE(short, double, 14)
INSTANCE(double, short, 15)
INSTANCE(std::string, std::string, 16)
INSTANCE(unsigned, std::string, 17)

struct Node {
	std::string name;
	std::vector<std::unique_ptr<Node>> children;
	std::unordered_map<std::string, Value> attributes;
};

size_t count(const Node &n)
{
	size_t c = 1;
	for (const auto &ch : n.children)
		c += count(*ch);
	return c;
}

int main()
{
	std::unordered_map<int, long> a{{1, 2}, {3, 4}};
	std::unordered_map<std::string, std::string> b{{"x", "y"}};
	auto t = std::make_tuple(1, 2.5, std::string("three"), 4L, 'c');
	std::vector<std::string> out;
	each<0>(t, out);
	Node root{"root", {}, {{"size", Value{3L}}, {"ratio", Value{0.5}}}};
	root.children.push_back(std::make_unique<Node>(Node{"leaf", {}, {}}));
	std::vector<Value> values{Value{1L}, Value{2.0}, Value{std::string("s")}, Value{std::vector<long>{1, 2}}};
	for (const auto &v : values)
		out.push_back(describe(v));
	return (int)(invert(a).size() + invert(b).size() + count(root) + out.size() + fib_16());
}
"""


def progress(*what):
    print("bench:", *what, file=sys.stderr, flush=True)


def write(tmp, name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def path_python():
    """The python3 that PATH finds, through pyenv's shims or the like: its executable."""
    r = subprocess.run(["python3", "-c", "import sys; print(sys.executable)"],
                       capture_output=True, text=True, check=True)
    return r.stdout.strip()


def load(name, tmp):
    """(commands, description, group) of a load; group: shell loops, killed as process groups."""
    if name in ("python", "python-stripped"):
        exe = path_python() if name == "python" else "/usr/bin/python3"
        script = write(tmp, "load.py", PY_LOAD)
        return [[exe, script]] * 2, f"2 × {exe} {os.path.basename(script)}", False
    if name == "node":
        script = write(tmp, "load.js", JS_LOAD)
        return ([["node", "--perf-basic-prof", script]] * 2,
                "2 × node --perf-basic-prof load.js", False)
    if name == "cxx":
        src = write(tmp, "load.cpp", CXX_SOURCE)
        cmds = [["sh", "-c", f"echo ready; while :; do g++ -O2 -c {shlex.quote(src)} "
                 f"-o {shlex.quote(os.path.join(tmp, f'load{i}.o'))}; done"]
                for i in range(os.cpu_count())]
        return cmds, f"{os.cpu_count()} × a loop of g++ -O2 -c load.cpp", True
    raise ValueError(name)


def fgd_recording(fgd, seconds, mode, out):
    """One whole-machine recording into out, removed after: ((fgd's CPU seconds over it from
    ticks, the same in ns from its threads' schedstat), the summary)."""
    before = fgbench.cpu_times(fgd.pid)
    r = fgd.fgctl("record", "-a", "-F", FREQUENCY, "-t", seconds, "--call-graph", mode,
                  "-o", out, "--json", timeout=seconds + 300)
    after = fgbench.cpu_times(fgd.pid)
    os.unlink(out)
    return (after[0] - before[0], after[1] - before[1]), json.loads(r.stdout)


def fgd_record(fgd, seconds, mode, tmp):
    """One whole-machine recording: (fgd's CPU seconds over it, the summary)."""
    (cpu, _), meta = fgd_recording(fgd, seconds, mode, os.path.join(tmp, "fgd.folded"))
    return cpu, meta


def us_per_sample(cpu, samples):
    return cpu * 1e6 / samples if samples else float("nan")


def lost_fraction(meta):
    return meta["lost"] / max(meta["samples_seen"] + meta["lost"], 1)


def compare(build, fgd_args, load_name, mode, seconds, warm, perf_dump, tmp, script=False):
    """fgd then perf on the running load: a row of figures, notes, and µs/sample as (fgd,
    perf, perf mid-run)."""
    with fgbench.Fgd(build, fgd_args) as fgd:
        progress(f"{load_name} {mode}: fgd warm-up, {warm} s")
        wcpu, wmeta = fgd_record(fgd, warm, mode, tmp)
        progress(f"{load_name} {mode}: fgd, {seconds} s")
        machine = fgbench.Machine()
        cpu, meta = fgd_record(fgd, seconds, mode, tmp)
        fgd_conditions = fgbench.conditions(machine)
    if mode == "fp":
        options, perf_what = ["-g"], "-g"
    else:
        size = meta["stack_dump"] if perf_dump is None else perf_dump
        options = ["--call-graph", f"dwarf,{size}" if size else "dwarf"]
        perf_what = f"--call-graph {options[1]}" + ("" if size else " (8192 bytes)")
    progress(f"{load_name} {mode}: perf record {perf_what}, {seconds} s")
    data = os.path.join(tmp, "perf.data")
    machine = fgbench.Machine()
    retried = None
    try:
        perf = fgbench.perf_record(seconds, data, options, FREQUENCY)
        if not perf["samples"]:
            # perf 6.1 can crash in its build-id pass after the recording (a buffer overflow
            # after "assertion failed at util/build-id.c", with some JIT maps on the machine):
            # once more without that pass.
            retried = perf
            options.append("--no-buildid")
            perf_what += " --no-buildid"
            progress(f"{load_name} {mode}: perf failed, once more with --no-buildid")
            machine = fgbench.Machine()
            perf = fgbench.perf_record(seconds, data, options, FREQUENCY)
        perf_conditions = fgbench.conditions(machine)
        stats = fgbench.perf_stats(data)
        perf_lost = stats and stats["lost"]
        if not perf["samples"] and stats:  # --no-buildid: perf's closing line does not count
            perf["samples"] = stats["samples"]
        data_mib = os.path.getsize(data) / 2**20
        if script:
            progress(f"{load_name} {mode}: perf script")
            script_cpu = fgbench.perf_script_cpu(data)
    finally:
        if os.path.exists(data):
            os.unlink(data)
    fgd_us = us_per_sample(cpu, meta["samples_seen"])
    perf_us = us_per_sample(perf["cpu"], perf["samples"])
    # perf's cost while it records, without its start and end: what another minute would cost.
    mid_us = (perf["mid"][0] / 1e3 / (perf["samples"] * perf["mid"][1])
              if perf["mid"] and perf["samples"] else float("nan"))
    row = [load_name, mode, f"{meta['samples_seen']} / {perf['samples']}", f"{fgd_us:.2f}",
           f"{us_per_sample(wcpu, wmeta['samples_seen']):.2f}", f"{perf_us:.2f}",
           f"{fgd_us / perf_us:.2f}", f"{mid_us:.2f}",
           f"{meta['lost']} ({100 * lost_fraction(meta):.2f}%)",
           "?" if perf_lost is None else
           f"{perf_lost} ({100 * perf_lost / max(perf['samples'] + perf_lost, 1):.2f}%)"]
    dump = f", stack copy {meta['stack_dump']} bytes" if mode == "dwarf" else ""
    polled = perf["polled"][0]
    notes = [f"{load_name} {mode}: fgd `--call-graph {mode}`{dump}: {cpu:.2f} s CPU, "
             f"warm-up {wcpu:.2f} s for {wmeta['samples_seen']} samples, stacks complete "
             f"{meta['stack_quality']['complete_pct']:.1f}%; {fgd_conditions}",
             f"{load_name} {mode}: `perf record -F {FREQUENCY} -a {perf_what}`: {perf['cpu']:.2f} s "
             f"CPU ({polled:.2f} s as last read while it ran: "
             f"{us_per_sample(polled, perf['samples']):.2f} µs/sample), "
             f"{data_mib:.0f} MiB written; {perf_conditions}"]
    if script:
        notes.append(f"{load_name} {mode}: `perf script` of that file: " +
                     ("failed" if script_cpu is None else
                      f"{script_cpu:.2f} s CPU, "
                      f"{us_per_sample(script_cpu, perf['samples']):.2f} µs/sample"))
    if retried:
        lines = [l.strip() for l in retried["stderr"].splitlines() if l.strip()]
        notes.append(f"{load_name} {mode}: perf record with its build-id pass exited "
                     f"{retried['returncode']} and wrote no samples ({len(lines)} lines on "
                     f"stderr, the last: `{lines[-1] if lines else ''}`); the figures are "
                     f"those of the run with --no-buildid")
    other = [l for l in perf["stderr"].splitlines() if l.strip() and not l.startswith("[ perf record:")]
    if other:
        notes.append(f"{load_name} {mode}: perf printed {len(other)} other lines, the first: "
                     f"`{' '.join(l.strip() for l in other[:3])}`")
    if not perf["samples"]:
        notes.append(f"{load_name} {mode}: perf wrote no samples: {perf['stderr'].strip()}")
    return row, notes, (fgd_us, perf_us, mid_us)


def loss_runs(build, fgd_args, load_name, runs, seconds, warm, tmp):
    """Dwarf recordings with fgd's defaults, repeated: rows of figures and the worst."""
    rows = []
    with fgbench.Fgd(build, fgd_args) as fgd:
        progress(f"{load_name} loss: fgd warm-up, {warm} s")
        fgd_record(fgd, warm, "dwarf", tmp)
        for i in range(1, runs + 1):
            progress(f"{load_name} loss: run {i}/{runs}, {seconds} s")
            _, meta = fgd_record(fgd, seconds, "dwarf", tmp)
            rows.append((i, meta))
    return rows


def table(header, rows):
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))
    for row in rows:
        print("| " + " | ".join(map(str, row)) + " |")


def main():
    ap = argparse.ArgumentParser(description="fgd against perf record: CPU per sample, loss.")
    ap.add_argument("--build", default="build", help="meson build directory (default build)")
    ap.add_argument("--seconds", type=int, default=20, help="each measured recording (default 20)")
    ap.add_argument("--warm", type=int, default=5, help="fgd's warm-up recording (default 5)")
    ap.add_argument("--load", action="append", choices=LOADS, help="repeatable; default all")
    ap.add_argument("--mode", action="append", choices=MODES, help="repeatable; default both")
    ap.add_argument("--perf-stack-dump", type=int, default=None, metavar="BYTES",
                    help="perf's dwarf stack copy (default: fgd's, 32768; 0: perf's own, 8192)")
    ap.add_argument("--always-on", action="store_true",
                    help="leave fgd's always-on sampling on (its CPU time is then counted too)")
    ap.add_argument("--rounds", type=int, default=1, metavar="N",
                    help="each load and mode compared N times in turn (default 1)")
    ap.add_argument("--perf-script", action="store_true",
                    help="also time `perf script` over each perf.data (the symbolizing step)")
    ap.add_argument("--loss", action="store_true",
                    help="also the worst loss over --loss-runs dwarf recordings of each load")
    ap.add_argument("--loss-runs", type=int, default=None, metavar="N",
                    help="how many (default 10; implies --loss)")
    args = ap.parse_args()
    loads = list(dict.fromkeys(args.load or LOADS))
    modes = list(dict.fromkeys(args.mode or MODES))
    loss = args.loss or args.loss_runs is not None
    runs = args.loss_runs if args.loss_runs is not None else 10
    fgbench.need_root()
    if not shutil.which("perf"):
        sys.exit("bench: perf is not installed")
    build = fgbench.Build(args.build)
    fgd_args = [] if args.always_on else ["--no-always-on"]
    # SIGTERM stops the benchmark as Ctrl-C does: through the cleanups.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    print("$ " + shlex.join([sys.argv[0]] + sys.argv[1:]))
    print(f"\nfgd {build.fgd} {' '.join(fgd_args)}; {FREQUENCY} Hz on all CPUs, "
          f"{args.seconds} s measured after a {args.warm} s warm-up; {os.cpu_count()} CPUs\n",
          flush=True)
    if args.rounds < 1:
        sys.exit("bench: --rounds must be at least 1")
    rows, notes, loss_rows, spreads = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="fgd-bench-vs-perf-") as tmp:
        for name in loads:
            cmds, what, group = load(name, tmp)
            notes.append(f"{name}: {what}")
            progress(f"{name}: starting {what}")
            pids = []
            try:
                with fgbench.workloads(cmds, group=group, cwd=tmp) as procs:
                    pids = [p.pid for p in procs]
                    for mode in modes:
                        pairs = []
                        for i in range(args.rounds):
                            if args.rounds > 1:
                                progress(f"{name} {mode}: round {i + 1}/{args.rounds}")
                            row, n, pair = compare(build, fgd_args, name, mode, args.seconds,
                                                   args.warm, args.perf_stack_dump, tmp,
                                                   args.perf_script)
                            rows.append(row)
                            notes += n
                            pairs.append(pair)
                        spreads.append((name, mode, pairs))
                    if loss:
                        loss_rows += [(name, i, meta) for i, meta in
                                      loss_runs(build, fgd_args, name, runs, args.seconds,
                                                args.warm, tmp)]
            finally:
                if name == "node":  # --perf-basic-prof's maps, ours to remove
                    for pid in pids:
                        with contextlib.suppress(FileNotFoundError):
                            os.unlink(f"/tmp/perf-{pid}.map")
    if rows:
        table(["load", "mode", "samples (fgd / perf)", "fgd µs/sample", "fgd warm-up µs/sample",
               "perf µs/sample", "fgd/perf", "perf mid-run µs/sample", "fgd lost", "perf lost"],
              rows)
        print()
        for n in notes:
            print(f"- {n}")
    if args.rounds > 1:
        print(f"\nOver {args.rounds} rounds (medians; the ratio's range):\n")
        table(["load", "mode", "fgd µs/sample", "perf µs/sample", "fgd/perf", "fgd/perf range",
               "perf mid-run µs/sample"],
              [(name, mode, f"{statistics.median(f for f, _, _ in pairs):.2f}",
                f"{statistics.median(p for _, p, _ in pairs):.2f}",
                f"{statistics.median(f / p for f, p, _ in pairs):.2f}",
                f"{min(f / p for f, p, _ in pairs):.2f} to {max(f / p for f, p, _ in pairs):.2f}",
                f"{statistics.median(m for _, _, m in pairs):.2f}")
               for name, mode, pairs in spreads])
    if loss_rows:
        print(f"\nLoss: dwarf, {FREQUENCY} Hz on all CPUs, fgd's defaults, {runs} × "
              f"{args.seconds} s\n")
        table(["load", "run", "samples read", "lost", "lost fraction", "stack copy"],
              [(name, i, m["samples_seen"], m["lost"], f"{100 * lost_fraction(m):.3f}%",
                m["stack_dump"]) for name, i, m in loss_rows])
        print()
        for name in loads:
            mine = [(i, m) for n, i, m in loss_rows if n == name]
            if not mine:
                continue
            fi, fm = max(mine, key=lambda x: lost_fraction(x[1]))
            ci, cm = max(mine, key=lambda x: x[1]["lost"])
            print(f"- {name}: worst lost fraction {100 * lost_fraction(fm):.3f}% (run {fi}), "
                  f"worst lost count {cm['lost']} (run {ci}) over {len(mine)} runs")


if __name__ == "__main__":
    main()
