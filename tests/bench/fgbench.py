# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the always-on benchmarks share: a real fgd on a temporary socket and
state directory, awaited through sd_notify; workloads built by meson; a
process's CPU time and memory from /proc; and the machine's conditions
(load, forks, other CPU use), which the figures are meaningless without.

Benchmarks print figures and assert nothing; they need root and a build
(`meson setup build --buildtype=release`)."""

import contextlib
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

TICK = os.sysconf("SC_CLK_TCK")


def need_root():
    if os.geteuid() != 0:
        sys.exit("bench: needs root (system-wide perf events)")


def cpu_seconds(pid):
    """utime + stime of a process (all its threads), in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def cpu_times(pid):
    """(utime + stime in s, on-CPU ns from schedstat) of a process, all its threads."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])
    ns = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        ns += int(open(f"/proc/{pid}/task/{tid}/schedstat").read().split()[0])
    return ticks / TICK, ns


def status_kib(pid, key):
    """A /proc/PID/status figure in KiB (VmRSS, VmHWM, ...), 0 if absent."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def rss_split(pid):
    """A process's RSS in KiB by kind of mapping, from smaps: heap and other anonymous memory,
    files; and the size of its perf rings, which RSS leaves out (the kernel's pages)."""
    split = {"anon": 0, "file": 0, "rings": 0}
    kind = "anon"
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            fields = line.split()
            if not fields[0].endswith(":"):  # a mapping's header: range perms offset dev inode [path]
                path = fields[5] if len(fields) > 5 else ""
                kind = ("rings" if "perf_event" in path else
                        "anon" if not path or path.startswith("[") else "file")
            elif fields[0] == ("Size:" if kind == "rings" else "Rss:"):
                split[kind] += int(fields[1])
    return split


def memory(fgd):
    """fgd's RSS by kind, and what status says it holds that RSS is made of."""
    st = fgd.status()
    ao, sy, uw, pr = st["always_on"], st["symbols"], st["unwinding"], st["processes"]
    split = rss_split(fgd.pid)
    return (f"RSS {mib(status_kib(fgd.pid, 'VmRSS'))} MiB (heap and anonymous "
            f"{mib(split['anon'])}, files {mib(split['file'])}; peak "
            f"{mib(status_kib(fgd.pid, 'VmHWM'))}; perf rings, not in RSS, {mib(split['rings'])}); "
            + (f"window {ao['bytes'] >> 10} KiB in {ao['slices']} slices, memo "
               f"{ao['memo_bytes'] >> 10} KiB; " if ao["enabled"] else "always-on off; ")
            + f"{pr['generations']} process generations, "
            f"{pr['maps']} maps; {sy['binaries']} binaries ({sy['binaries_loaded']} symbol tables "
            f"read, {sy['binaries_dwarf']} DWARF, {sy['dwarf_bytes'] >> 20} MiB held); CFI of "
            f"{uw['binaries']} binaries, {uw['bytes'] >> 20} MiB")


def mib(kib):
    return f"{kib / 1024:.0f}"


class Machine:
    """The machine's counters from /proc/stat, to report what else ran during a measurement."""

    def __init__(self):
        self.t = time.monotonic()
        self.jiffies, self.forks = self._read()

    @staticmethod
    def _read():
        with open("/proc/stat") as f:
            lines = f.read().splitlines()
        cpu = [int(x) for x in lines[0].split()[1:]]
        forks = next(int(l.split()[1]) for l in lines if l.startswith("processes "))
        return cpu, forks

    def since(self):
        """Busy share of all CPUs, steal share, forks/s and the load average since __init__."""
        jiffies, forks = self._read()
        d = [b - a for a, b in zip(self.jiffies, jiffies)]
        total = sum(d[:8])  # user nice system idle iowait irq softirq steal (guest is in user)
        busy = total - d[3] - d[4]
        with open("/proc/loadavg") as f:
            load = f.read().split()[:3]
        elapsed = time.monotonic() - self.t
        return {"busy_pct": 100 * busy / max(total, 1), "steal_pct": 100 * d[7] / max(total, 1),
                "forks_per_s": (forks - self.forks) / elapsed, "loadavg": " ".join(load)}


def conditions(m):
    c = m.since()
    return (f"machine: {os.cpu_count()} CPUs {c['busy_pct']:.0f}% busy ({c['steal_pct']:.1f}% "
            f"stolen), {c['forks_per_s']:.1f} new processes/s, load average {c['loadavg']}")


class Build:
    def __init__(self, path):
        self.path = path
        self.fgd = os.path.join(path, "daemon", "fgd")
        self.fgctl = os.path.join(path, "cli", "fgctl")
        for exe in (self.fgd, self.fgctl):
            if not os.access(exe, os.X_OK):
                sys.exit(f"bench: {exe} is missing: build first")

    def program(self, name):
        path = os.path.join(self.path, "tests", "programs", name)
        if not os.access(path, os.X_OK):
            sys.exit(f"bench: {path} is missing: build first")
        return path


class Fgd:
    """fgd with the given options, on a socket and state directory of its own, ready once it
    sent READY=1; stopped with SIGTERM on exit (a non-zero exit status is reported)."""

    def __init__(self, build, args=()):
        self.build = build
        self.args = [str(a) for a in args]

    def __enter__(self):
        self.dir = tempfile.mkdtemp(prefix="fgd-bench-")
        self.socket = os.path.join(self.dir, "fgd.sock")
        notify_path = os.path.join(self.dir, "notify")
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        notify.bind(notify_path)
        self.log_path = os.path.join(self.dir, "fgd.log")
        with open(self.log_path, "w") as log:
            self.proc = subprocess.Popen(
                [self.build.fgd, "--socket", self.socket,
                 "--state-directory", os.path.join(self.dir, "state")] + self.args,
                stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ, NOTIFY_SOCKET=notify_path))
        try:
            deadline = time.monotonic() + 120
            notify.settimeout(1)
            while True:
                if self.proc.poll() is not None:
                    sys.exit(f"bench: fgd exited with {self.proc.returncode}:\n{self.logs()}")
                if time.monotonic() > deadline:
                    self.proc.kill()
                    sys.exit(f"bench: fgd not ready in 120 s:\n{self.logs()}")
                try:
                    if b"READY=1" in notify.recv(4096).split(b"\n"):
                        break
                except socket.timeout:
                    pass
        finally:
            notify.close()
        return self

    @property
    def pid(self):
        return self.proc.pid

    def alive(self):
        return self.proc.poll() is None

    def logs(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def fgctl(self, *args, timeout=300):
        """fgctl's result; exits the benchmark with its stderr if it failed."""
        r = subprocess.run([self.build.fgctl, "--socket", self.socket] + [str(a) for a in args],
                           capture_output=True, timeout=timeout)
        if r.returncode != 0:
            sys.exit(f"bench: fgctl {' '.join(map(str, args))} exited {r.returncode}: "
                     f"{r.stderr.decode(errors='replace')}")
        return r

    def status(self):
        return json.loads(self.fgctl("status", "--json").stdout)

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                print("bench: fgd did not stop on SIGTERM; killed", file=sys.stderr)
        if self.proc.returncode != 0:
            print(f"bench: fgd exited with {self.proc.returncode}; its log:\n{self.logs()}",
                  file=sys.stderr)
        shutil.rmtree(self.dir, ignore_errors=True)
        return False


def wait_recording(fgd, timeout=30):
    """Until fgd's status counts a recording as active (one just asked for has started)."""
    deadline = time.monotonic() + timeout
    while fgd.status()["server"]["recordings_active"] < 1:
        if time.monotonic() > deadline:
            sys.exit("bench: the recording did not start")
        time.sleep(0.05)


@contextlib.contextmanager
def workloads(cmds, cpus=None, group=False, cwd=None):
    """Starts each command (pinned to cpus[i] if given), waits for the "ready" line each
    prints, yields the processes, and stops them all. With group, each command runs in a
    process group of its own, killed whole at the end (a shell loop and what it started).
    cwd: where they run (and leave any files they write there)."""
    procs = []
    try:
        for i, cmd in enumerate(cmds):
            pin = (lambda c=cpus[i]: os.sched_setaffinity(0, {c})) if cpus else None
            procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, preexec_fn=pin,
                                          start_new_session=group, cwd=cwd))
        for p, cmd in zip(procs, cmds):
            line = p.stdout.readline()
            if line.strip() != "ready":
                sys.exit(f"bench: {cmd[0]} did not start: {line!r}")
        yield procs
    finally:
        for p in procs:
            if group:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGKILL)  # its group: p.pid is not reaped yet
            if p.poll() is None:
                p.kill()
            p.wait()
            p.stdout.close()


def burners(build):
    """One fgtest-burn per CPU: the "busy machine" of the issue's targets."""
    return workloads([[build.program("fgtest-burn")] for _ in range(os.cpu_count())])


def perf_samples(stderr):
    """The samples perf record wrote, from its closing line "[ perf record: Captured and
    wrote 1.2 MB perf.data (12345 samples) ]"; 0 if it has none."""
    samples = 0
    for line in stderr.splitlines():
        if "samples" in line and "(" in line:
            samples = int(line.split("(")[1].split()[0])
    return samples


def perf_record(seconds, out, options=("-g",), frequency=999):
    """Runs `perf record -F FREQUENCY -a OPTIONS -o OUT -- sleep SECONDS` and returns a dict:
    samples (perf_samples()), cpu (perf's utime + stime in s from rusage, its processing of the
    file after the recording included), polled ((s, ns) of cpu_times() as last read while perf
    ran, up to 0.2 s before it exited), mid ((ns, fraction): perf's on-CPU ns between the
    readings nearest a quarter and 85% of the way through the recording, and the fraction of
    the recording between them; None if there were not two), stderr and returncode. perf is
    stopped if this is interrupted."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    # stderr to a file, not a pipe: perf can write more than a pipe holds before it exits
    # (an "assertion failed at util/build-id.c" per JIT map entry of node's, in perf 6.1).
    stderr = tempfile.TemporaryFile()
    p = subprocess.Popen(["perf", "record", "-F", str(frequency), "-a", *options, "-o", out, "--",
                          "sleep", str(seconds)], stdout=subprocess.DEVNULL, stderr=stderr)
    start = time.monotonic()
    readings = []  # (s since start, cpu_times())
    try:
        # perf's own CPU time, sampled until just before it exits.
        last = (0.0, 0)
        while p.poll() is None:
            try:
                last = cpu_times(p.pid)
            except (FileNotFoundError, ProcessLookupError):
                break
            readings.append((time.monotonic() - start, last))
            time.sleep(0.2)
        p.wait()
        stderr.seek(0)
        err = stderr.read().decode(errors="replace")
    finally:
        stderr.close()
        if p.poll() is None:
            p.send_signal(signal.SIGINT)  # perf record's own way to stop
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    # Away from perf's start (it reads every process's maps) and its end (the build-id pass).
    mid = None
    if len(readings) >= 2:
        a = min(readings, key=lambda r: abs(r[0] - 0.25 * seconds))
        b = min(readings, key=lambda r: abs(r[0] - 0.85 * seconds))
        if b[0] > a[0]:
            mid = (b[1][1] - a[1][1], (b[0] - a[0]) / seconds)
    return {"samples": perf_samples(err), "cpu": cpu, "polled": last, "mid": mid, "stderr": err,
            "returncode": p.returncode}


def perf_script_cpu(path):
    """The CPU time (utime + stime, s) `perf script -i PATH` takes to write the samples out as
    text, symbolized, its output thrown away: the step after perf record that a flame graph
    needs. perf's addr2line helpers count only if perf reaps them, which perf 6.1 does not
    always do: a lower bound. None if perf script failed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(["perf", "script", "-i", path], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        return None
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def perf_stats(path, event="cpu-clock"):
    """{"samples", "lost"} of EVENT from `perf report --stats`: the SAMPLE and LOST_SAMPLES
    counts of the event's own section (perf reads each event's lost count at the end); None if
    perf report failed."""
    r = subprocess.run(["perf", "report", "--stats", "-i", path], capture_output=True, text=True)
    if r.returncode != 0:
        return None
    stats, section = {"samples": 0, "lost": 0}, None
    for line in r.stdout.splitlines():
        words = line.split()
        if line.rstrip().endswith("stats:"):
            section = words[0].split(":")[0]
        elif section == event and len(words) > 2 and words[1] == "events:":
            key = {"SAMPLE": "samples", "LOST_SAMPLES": "lost"}.get(words[0])
            if key:
                stats[key] = int(words[2])
    return stats


def percentile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]
