#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What pushing to a fleet store costs a host: `fgctl push` against a loopback
Pyroscope-compatible receiver, with fgd always-on at its defaults.

The load is the machine as it is plus two CPU-bound processes with different
names (a python3 loop and an sh loop), so several applications are pushed
each period. Then:

  1. with --baseline-minutes (default: as long as --minutes), fgd's CPU under
     that load without push, minute by minute, half of it before push runs
     and half after (to bracket the machine's drift): the reference;
  2. `fgctl push --url http://127.0.0.1:PORT --every SPAN` for --minutes; the
     receiver (http.server in a thread, answering 200 to every POST /ingest)
     counts requests, their bodies, the profile in each (the multipart part)
     and the wire bytes with the request line and headers (TCP/IP framing
     left out), by application and period;
  3. prints requests, applications per period, bytes per period and per day
     (extrapolated from the mean period, --every as measured), push's CPU
     (utime + stime from /proc/PID/stat) per period and per day, and fgd's
     CPU with push against the baseline minute by minute: the difference is
     what answering push's queries costs fgd, within the noise the minutes'
     spread shows; and, more precisely, fgd's CPU for 20 snapshots of the
     last period in a row after push (the query push makes each period),
     less fgd's own rate over the 10 s before.

  sudo python3 tests/bench/bench_push.py --build build --minutes 5
  sudo python3 tests/bench/bench_push.py --build build --minutes 2 --every 5s --format folded
"""

import argparse
import collections
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import fgbench

DAY = 86400


def span_seconds(span):
    """15s, 1m, 1m30s -> seconds."""
    total, num = 0.0, ""
    for ch in span:
        if ch.isdigit() or ch == ".":
            num += ch
        else:
            total += float(num) * {"s": 1, "m": 60, "h": 3600}[ch]
            num = ""
    return total + (float(num) if num else 0)


class Receiver:
    """A loopback ingest endpoint: every POST is counted and answered 200."""

    def __init__(self):
        self.lock = threading.Lock()
        self.requests = []  # dicts: name, period, wire, body, payload, gzip
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as libcurl would reuse the connection

            def do_POST(self):
                head = len(self.raw_requestline) + sum(
                    len(k) + 2 + len(v) + 2 for k, v in self.headers.items()) + 2
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    body, wire_body = self.read_chunked()
                else:
                    body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                    wire_body = len(body)
                q = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
                payload = receiver.payload(body, self.headers.get("Content-Type", ""))
                with receiver.lock:
                    receiver.requests.append({
                        "name": q.get("name", ["?"])[0],
                        "period": (q.get("from", ["?"])[0], q.get("until", ["?"])[0]),
                        "format": q.get("format", ["?"])[0],
                        "wire": head + wire_body, "body": len(body), "payload": len(payload),
                        "gzip": payload[:2] == b"\x1f\x8b"})
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def read_chunked(self):
                body, wire = b"", 0
                while True:
                    line = self.rfile.readline()
                    wire += len(line)
                    n = int(line.split(b";")[0], 16)
                    chunk = self.rfile.read(n + 2)
                    wire += len(chunk)
                    body += chunk[:n]
                    if n == 0:
                        return body, wire

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @staticmethod
    def payload(body, content_type):
        """The profile itself: the first part of a multipart form, else the body."""
        if "multipart/form-data" not in content_type or "boundary=" not in content_type:
            return body
        boundary = content_type.split("boundary=", 1)[1].split(";")[0].strip('"').encode()
        start = body.find(b"\r\n\r\n")
        end = body.find(b"\r\n--" + boundary, start)
        return body[start + 4:end] if start >= 0 and end >= 0 else body

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
        return False

    def snapshot(self):
        with self.lock:
            return list(self.requests)


def load(tmp):
    """Two CPU-bound processes with different comms: python3 and sh."""
    return fgbench.workloads([
        [sys.executable, "-c", "print('ready', flush=True)\nwhile True: pass"],
        ["sh", "-c", "echo ready; while :; do :; done"],
    ], group=True, cwd=tmp)


def fgd_minutes(fgd, minutes, on_minute=None):
    """fgd's CPU seconds in each whole minute of `minutes` (a last part minute scaled)."""
    per, left = [], minutes * 60
    while left > 0:
        span = min(60, left)
        c0, t0 = fgbench.cpu_seconds(fgd.pid), time.monotonic()
        time.sleep(span)
        c1, t1 = fgbench.cpu_seconds(fgd.pid), time.monotonic()
        per.append((c1 - c0) * 60 / (t1 - t0))
        left -= span
        if on_minute:
            on_minute(len(per), per[-1])
    return per


def query_cost(fgd, every, n=20):
    """fgd's CPU for one snapshot of the last period as folded text, what push asks it each
    period: n of them one after the other, less fgd's own rate over the 10 s before.
    (CPU s, wall s, bytes) per snapshot."""
    c0, t0 = fgbench.cpu_times(fgd.pid)[1], time.monotonic()
    time.sleep(10)
    c1, t1 = fgbench.cpu_times(fgd.pid)[1], time.monotonic()
    rate = (c1 - c0) / 1e9 / (t1 - t0)
    size = 0
    for _ in range(n):
        size += len(fgd.fgctl("snapshot", "--last", every, "-o", "-").stdout)
    c2, t2 = fgbench.cpu_times(fgd.pid)[1], time.monotonic()
    return ((c2 - c1) / 1e9 - rate * (t2 - t1)) / n, (t2 - t1) / n, size / n


def spread(xs):
    if len(xs) < 2:
        return f"{xs[0]:.2f}" if xs else "-"
    return (f"mean {statistics.mean(xs):.2f}, sd {statistics.stdev(xs):.2f}, "
            f"min {min(xs):.2f}, max {max(xs):.2f}")


def kib(n):
    return f"{n / 1024:.1f} KiB"


def mib(n):
    return f"{n / 2**20:.1f} MiB"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--minutes", type=float, default=5, help="how long push runs (default 5)")
    ap.add_argument("--baseline-minutes", type=float, default=None,
                    help="fgd without push, half before push and half after "
                         "(default: as long as --minutes; 0: none)")
    ap.add_argument("--every", default="15s", help="push's period (its --every)")
    ap.add_argument("--format", choices=("pprof", "folded"), default="pprof")
    ap.add_argument("--name", default=None, help="push's --name template")
    ap.add_argument("fgd_args", nargs="*", help="options for fgd (after --)")
    args = ap.parse_args()
    baseline = args.minutes if args.baseline_minutes is None else args.baseline_minutes
    period = span_seconds(args.every)
    fgbench.need_root()
    build = fgbench.Build(args.build)
    print("$ " + shlex.join([sys.executable] + sys.argv))
    print(f"date: {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}; "
          f"fgd {' '.join(args.fgd_args) or '(defaults: always-on)'}; push --every {args.every} "
          f"--format {args.format}" + (f" --name {args.name}" if args.name else ""))

    with tempfile.TemporaryDirectory(prefix="fgd-bench-push-") as tmp, \
            fgbench.Fgd(build, args.fgd_args) as fgd, load(tmp), Receiver() as rx:
        ao = fgd.status()["always_on"]
        print(f"fgd always-on: {'on' if ao['enabled'] else 'OFF'}"
              + (f", {ao.get('frequency', '?')} Hz" if ao["enabled"] else "")
              + "; load: the machine as it is, plus a python3 loop and an sh loop")
        time.sleep(30)  # the load's binaries read, the first slices written

        base = []

        def without_push(minutes, when):
            if minutes > 0:
                m = fgbench.Machine()
                xs = fgd_minutes(fgd, minutes, lambda i, s: print(
                    f"  {when} push, minute {i}: fgd {s:.2f} s CPU", flush=True))
                print(f"{when} push, {minutes:g} min: fgd CPU s/min {spread(xs)}; "
                      f"{fgbench.conditions(m)}", flush=True)
                base.extend(xs)

        without_push(baseline / 2, "before")

        cmd = [build.fgctl, "--socket", fgd.socket, "push", "--url",
               f"http://127.0.0.1:{rx.port}", "--every", args.every, "--format", args.format]
        if args.name:
            cmd += ["--name", args.name]
        print("push: " + shlex.join(cmd), flush=True)
        err_path = os.path.join(tmp, "push.err")
        m = fgbench.Machine()
        with open(err_path, "w") as err:
            push = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        t0 = time.monotonic()
        try:
            pushed = fgd_minutes(fgd, args.minutes, lambda i, s: print(
                f"  push minute {i}: fgd {s:.2f} s CPU, {len(rx.requests)} requests so far",
                flush=True))
            elapsed = time.monotonic() - t0
            push_cpu = fgbench.cpu_seconds(push.pid) if push.poll() is None else None
            push_ns = fgbench.cpu_times(push.pid)[1] if push.poll() is None else 0
            push_rss = fgbench.status_kib(push.pid, "VmHWM") if push.poll() is None else 0
        finally:
            if push.poll() is None:
                push.terminate()
            try:
                push.wait(timeout=60)
            except subprocess.TimeoutExpired:
                push.kill()
                push.wait()
        conds = fgbench.conditions(m)
        reqs = rx.snapshot()
        try:
            query = query_cost(fgd, args.every)
        except SystemExit as e:  # fgd.fgctl() exits on failure: keep the rest
            print(f"snapshot timing failed: {e}")
            query = None
        without_push(baseline / 2, "after")
        with open(err_path, errors="replace") as f:
            err_lines = f.read().splitlines()

    print(f"push ran {elapsed:.0f} s, exit status {push.returncode}; {conds}")
    if push_cpu is None:
        print("push exited early:\n" + "\n".join(err_lines[-10:]))
        return
    print("push's last line: " + (err_lines[-1] if err_lines else "(none)"))
    periods = collections.OrderedDict()
    for r in reqs:
        periods.setdefault(r["period"], []).append(r)
    n = max(len(periods), 1)
    apps = [len({r["name"] for r in rs}) for rs in periods.values()]
    wire = sum(r["wire"] for r in reqs)
    body = sum(r["body"] for r in reqs)
    payload = sum(r["payload"] for r in reqs)
    per_day = DAY / period
    print(f"\nperiod {period:g} s ({per_day:.0f} periods a day); {len(periods)} periods pushed, "
          f"{len(reqs)} requests ({len(reqs) / n:.1f} per period), format "
          f"{reqs[0]['format'] if reqs else '?'}, profile gzipped: "
          f"{sum(r['gzip'] for r in reqs)} of {len(reqs)}")
    if apps:
        print(f"applications per period: mean {statistics.mean(apps):.1f}, min {min(apps)}, "
              f"max {max(apps)}")
    names = collections.Counter()
    size = collections.Counter()
    for r in reqs:
        app = r["name"].split("{")[0]
        names[app] += 1
        size[app] += r["wire"]
    print("applications (periods seen, mean wire bytes per request): " + ", ".join(
        f"{a} ({names[a]}, {size[a] / names[a]:.0f} B)" for a, _ in size.most_common(12))
          + (f", ... {len(names) - 12} more" if len(names) > 12 else ""))
    if reqs:
        print(f"a request's name: {reqs[-1]['name']}")
    print(f"\n{'':28} {'per period':>12} {'per day':>12}")
    print(f"{'wire bytes (HTTP, no TCP)':28} {kib(wire / n):>12} {mib(wire / n * per_day):>12}")
    print(f"{'request bodies':28} {kib(body / n):>12} {mib(body / n * per_day):>12}")
    print(f"{'profiles in them':28} {kib(payload / n):>12} {mib(payload / n * per_day):>12}")
    # push's CPU by its run time (its first period pushed a period after its start)
    print(f"{'fgctl push CPU':28} {push_cpu / elapsed * period * 1000:>9.1f} ms "
          f"{push_cpu / elapsed * DAY:>10.1f} s   ({push_cpu:.2f} s in {elapsed:.0f} s, "
          f"on-CPU {push_ns / 1e9:.3f} s by schedstat; peak RSS {push_rss / 1024:.1f} MiB)")
    if query:
        print(f"{'fgd, one snapshot a period':28} {query[0] * 1000:>9.1f} ms "
              f"{query[0] * per_day:>10.1f} s   (snapshot --last {args.every} -o -, 20 in a row "
              f"after push, less fgd's rate before: {query[1] * 1000:.1f} ms wall, "
              f"{query[2] / 1024:.0f} KiB folded each)")
    if base:
        extra = statistics.mean(pushed) - statistics.mean(base)  # s per minute
        print(f"{'fgd extra CPU (with - without)':28} {extra / 60 * period * 1000:>9.1f} ms "
              f"{extra / 60 * DAY:>10.1f} s")
        print(f"  fgd CPU s/min without push: {spread(base)}")
        print(f"  fgd CPU s/min with push:    {spread(pushed)}")
        noise = statistics.stdev(base) if len(base) > 1 else float("nan")
        print(f"  (the minutes' spread without push is {noise:.2f} s/min, "
              f"{noise / 60 * DAY:.0f} s a day: a difference smaller than that is noise)")
    else:
        print(f"  fgd CPU s/min with push: {spread(pushed)} (no baseline)")


main()
