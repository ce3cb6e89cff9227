#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""fgctl push: always-on profiles to a Pyroscope-compatible ingest API.

A fake ingest server of the test's own (http.server in a thread) records
every request; fgtest-burn (hot_a 75%, hot_b 25%) is the only process
pushed (--comm), so nothing else on the machine matters.
  - --once --every 2s --last 6s: one POST per period for the application
    fgtest-burn, the query as Pyroscope's API has it (name with host= and
    --label, from/until on 2 s boundaries, format=pprof, sampleRate=199,
    spyName, units, aggregationType), the bearer token from --token-file
    and X-Scope-OrgID from --tenant; the profile in a multipart part named
    "profile", which Go's pprof reads (when installed): hot_a and hot_b.
    Sample for sample, the periods add up to a snapshot of their range. The
    window holds 4 s, so what push reads of the last 6 s comes from memory
    and from the history on disk alike.
  - Run again with the cursor: no period twice, the next ones continue
    exactly where the cursor was.
  - The server down (503): --once exits non-zero after its retries, the
    failures are counted, the cursor does not move; back up, the missed
    periods go once, with no gap. A 400 is refused for good: reported,
    counted, not retried, non-zero.
  - A cursor older than --catch-up: the gap is reported, non-zero.
  - --format folded: text/plain, stacks without the process frame.
  - --name {unit}: a second fgtest-burn in a cgroup of its own,
    fgd-push-test-PID.service, is an application of that name, its samples
    labelled with its cgroup and comm.
  - --every: runs until SIGTERM, which ends it with success.
  - --basic-auth-file sends basic auth; a server that never answers costs
    one --timeout, not a try per --retries, and the push fails with curl's
    "timed out" (test_push_failures.py: outages, backoff, Retry-After,
    redirects and a cursor from the future).
  - https with --ca-file (a self-signed CA made by openssl); without it,
    the certificate is refused.
  - Bad arguments get clear errors.
  - --config FILE: push.conf's "key = value" lines are push's long options;
    the command line wins over the file (--url, and a --label of the same
    key), labels repeat and add up, yes/no for an option without a value,
    and an unknown key or a bad line is an error that names FILE:LINE.
"""

import base64
import email.policy
import http.server
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.parse
from email.parser import BytesParser

from fgdtest import (FGCTL, Daemon, check, parse_folded, program, require_root, run, wait_for,
                     workload)

EVERY_S = 2


class Ingest:
    """A fake Pyroscope: records requests, answers with the statuses it is told."""

    def __init__(self, tls=None):
        self.requests = []
        self.status = 200
        self.headers = {}  # sent with status
        self.script = []  # (status, {header: value}) for the next requests, before status
        self.stall = None  # a threading.Event the handler waits for before it answers
        self.silent = False  # takes requests and never answers them (kept in unanswered)
        self.unanswered = []
        self.closing = threading.Event()
        self.lock = threading.Lock()
        ingest = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                req = {"path": self.path, "headers": dict(self.headers), "body": body,
                       "time": time.monotonic()}
                with ingest.lock:
                    silent = ingest.silent
                    (ingest.unanswered if silent else ingest.requests).append(req)
                    status, headers = (ingest.script.pop(0) if ingest.script and not silent
                                       else (ingest.status, ingest.headers))
                    stall = ingest.stall
                if silent:
                    # Nothing, ever: the connection stays open until the server closes.
                    ingest.closing.wait()
                    self.close_connection = True
                    return
                if stall:
                    stall.wait(60)
                self.send_response(status)
                reply = b"bad profile" if status >= 400 else b""
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if tls:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.closing.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()

    def take(self):
        with self.lock:
            reqs, self.requests = self.requests, []
        return reqs


def query(req):
    return {k: v[0] for k, v in urllib.parse.parse_qs(urllib.parse.urlsplit(req["path"]).query).items()}


def profile_part(req):
    """The multipart part named profile."""
    ctype = req["headers"].get("Content-Type", "")
    check(ctype.startswith("multipart/form-data"), f"not multipart: {ctype}")
    msg = BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {ctype}\r\n\r\n".encode() + req["body"])
    parts = {p.get_param("name", header="content-disposition"): p.get_payload(decode=True)
             for p in msg.iter_parts()}
    check("profile" in parts, f"no part named profile: {list(parts)}")
    data = parts["profile"]
    check(data[:2] == b"\x1f\x8b", "the profile is not gzipped")
    return data


def pprof_stacks(data, tmp, labels=False):
    """{leaf-last stack: samples} as Go's pprof reads the profile (with labels: the
    labels line first, "key:[value] ..."); None without go."""
    if not shutil.which("go"):
        return None
    path = os.path.join(tmp, "part.pb.gz")
    with open(path, "wb") as f:
        f.write(data)
    r = subprocess.run(["go", "tool", "pprof", "-raw", path], capture_output=True, text=True,
                       timeout=120)
    check(r.returncode == 0, f"go tool pprof: {r.stderr}")
    locs = dict(re.findall(r"^\s+(\d+): 0x[0-9a-f]+(?: M=\d+)? (.*) \S*:-?\d+ s=-?\d+$",
                           r.stdout, re.M))
    stacks = {}
    for count, ids, tags in re.findall(r"^\s+(\d+)\s+\d+: ((?:\d+ )+)\n(?:\s+(\w+:\[.*))?$",
                                       r.stdout, re.M):
        key = ";".join(locs[i] for i in reversed(ids.split()))
        if labels:
            key = f"{tags} {key}"
        stacks[key] = stacks.get(key, 0) + int(count)
    return stacks


def push(d, *args, check_rc=None):
    return d.fgctl("push", "--comm", "^fgtest-burn$", "--every", f"{EVERY_S}s", "--delay", "1s",
                   *args, check_rc=check_rc)


def check_periods(reqs, host):
    """The requests' periods: aligned, one each, consecutive; returns [(from, until)]."""
    periods = []
    for req in reqs:
        q = query(req)
        check(q["name"] == f"fgtest-burn.cpu{{host={host},env=test}}", f"name {q['name']}")
        for key, want in (("format", "pprof"), ("sampleRate", "199"), ("spyName", "fgd"),
                          ("units", "samples"), ("aggregationType", "sum")):
            check(q.get(key) == want, f"{key}={q.get(key)}, not {want}")
        frm, until = int(q["from"]), int(q["until"])
        check(frm % EVERY_S == 0 and until == frm + EVERY_S, f"period {frm}-{until}")
        periods.append((frm, until))
    check(len(set(periods)) == len(periods), f"a period sent twice: {periods}")
    periods.sort()
    for a, b in zip(periods, periods[1:]):
        check(a[1] == b[0], f"a hole between {a} and {b}")
    return periods


def basic(d, tmp, srv, host):
    token = os.path.join(tmp, "token")
    with open(token, "w") as f:
        f.write("s3cret\n")
    cursor = os.path.join(tmp, "cursor")
    r = push(d, "--url", f"http://127.0.0.1:{srv.port}", "--once", "--last", "6s",
             "--cursor", cursor, "--label", "env=test", "--token-file", token,
             "--tenant", "acme", check_rc=0)
    reqs = srv.take()
    check(len(reqs) >= 2, f"{len(reqs)} requests for 6 s in 2 s periods: "
          f"{r.stderr.decode()}")
    periods = check_periods(reqs, host)
    for req in reqs:
        h = req["headers"]
        check(h.get("Authorization") == "Bearer s3cret", f"authorization: {h.get('Authorization')}")
        check(h.get("X-Scope-OrgID") == "acme", f"tenant: {h.get('X-Scope-OrgID')}")
    total = {}
    # Each profile says where it comes from (go tool pprof -comments).
    part = os.path.join(tmp, "comments.pb.gz")
    with open(part, "wb") as f:
        f.write(profile_part(reqs[0]))
    if shutil.which("go"):
        r = subprocess.run(["go", "tool", "pprof", "-comments", part], capture_output=True,
                           text=True, timeout=120)
        check(re.search(r"fgd always-on: \S+ at \d+ Hz, (fp|dwarf) stacks; \d+ samples", r.stdout),
              f"the pushed profile's comments: {r.stdout!r} {r.stderr!r}")
    for req in reqs:
        stacks = pprof_stacks(profile_part(req), tmp)
        for k, v in (stacks or {}).items():
            total[k] = total.get(k, 0) + v
    if total:
        n = sum(total.values())
        a = sum(v for k, v in total.items() if k.endswith("main;hot_a"))
        check(n > 100 and abs(a / n - 0.75) < 0.1, f"hot_a {a} of {n}: {total}")
        # Sample for sample: the periods make up a snapshot of their range.
        snap = d.fgctl("snapshot", "--comm", "^fgtest-burn$", "--since",
                       f"@{periods[0][0]}", "--until", f"@{periods[-1][1]}", "-o", "-",
                       "-f", "folded", check_rc=0)
        want = {}
        for k, v in parse_folded(snap.stdout.decode()).items():
            # pprof names kernel frames without their suffix (the mapping says kernel).
            key = k.split(";", 1)[1].replace("_[k]", "")
            want[key] = want.get(key, 0) + v
        check(want == total, f"pushed {sum(total.values())} samples, the snapshot of the "
              f"same range has {sum(want.values())}")
        print(f"basic: {len(reqs)} periods, {n} samples, hot_a {a / n:.0%}, as the snapshot")
    with open(cursor) as f:
        text = f.read()
    check(text == f"fgd-push 1\nuntil={periods[-1][1] * 1000}\n", f"cursor: {text!r}")

    # Again: only what is new, from exactly where the cursor was.
    time.sleep(EVERY_S)
    push(d, "--url", f"http://127.0.0.1:{srv.port}", "--once", "--cursor", cursor,
         "--label", "env=test", check_rc=0)
    again = check_periods(srv.take(), host)
    check(again and again[0][0] == periods[-1][1], f"after {periods[-1]}: {again}")
    return cursor


def outage(d, tmp, srv, host, cursor):
    with open(cursor) as f:
        before = f.read()
    time.sleep(EVERY_S)
    srv.status = 503
    r = push(d, "--url", f"http://127.0.0.1:{srv.port}", "--once", "--cursor", cursor,
             "--label", "env=test", "--retries", "1")
    err = r.stderr.decode()
    check(r.returncode != 0, f"--once succeeded with the server down: {err}")
    check("HTTP 503" in err and "2 failed requests, 1 retries" in err, f"stderr: {err}")
    check(len(srv.take()) == 2, "not one try and one retry")
    with open(cursor) as f:
        check(f.read() == before, "the cursor moved past a period that was not sent")
    srv.status = 200
    push(d, "--url", f"http://127.0.0.1:{srv.port}", "--once", "--cursor", cursor,
         "--label", "env=test", check_rc=0)
    periods = check_periods(srv.take(), host)
    until = int(before.split("until=")[1]) // 1000
    check(periods and periods[0][0] == until, f"caught up from {periods[:1]}, cursor {until}")
    print(f"outage: caught up {len(periods)} periods from the cursor")

    # Refused for good: not retried, counted, the cursor moves on.
    time.sleep(EVERY_S)
    srv.status = 400
    r = push(d, "--url", f"http://127.0.0.1:{srv.port}", "--once", "--cursor", cursor,
             "--label", "env=test", "--retries", "3")
    err = r.stderr.decode()
    refused = srv.take()
    check(r.returncode != 0 and "bad profile" in err and len(refused) >= 1 and
          re.search(r"\b[1-9]\d* refused", err), f"400: rc {r.returncode}, {err}")
    check(len(refused) == len(set(query(q)["from"] for q in refused)), "a 400 was retried")
    srv.status = 200


def catch_up_limit(d, tmp, srv):
    cursor = os.path.join(tmp, "old-cursor")
    old = (int(time.time()) - 3600) // EVERY_S * EVERY_S
    with open(cursor, "w") as f:
        f.write(f"fgd-push 1\nuntil={old * 1000}\n")
    r = push(d, "--url", f"http://127.0.0.1:{srv.port}", "--once", "--cursor", cursor,
             "--catch-up", "6s")
    err = r.stderr.decode()
    check(r.returncode != 0 and "not catching up" in err and "older than --catch-up" in err,
          f"a stale cursor: rc {r.returncode}, {err}")
    check(all(int(query(q)["from"]) >= time.time() - 12 for q in srv.take()),
          "pushed a period older than --catch-up")
    with open(cursor, "w") as f:
        f.write("not a cursor\n")
    r = push(d, "--url", f"http://127.0.0.1:{srv.port}", "--once", "--cursor", cursor)
    check(r.returncode != 0 and b"damaged" in r.stderr, f"a damaged cursor: {r.stderr}")


def folded(d, srv):
    push(d, "--url", f"http://127.0.0.1:{srv.port}/", "--once", "--format", "folded",
         "--last", "4s", check_rc=0)
    reqs = srv.take()
    check(reqs, "no folded request")
    for req in reqs:
        check(query(req)["format"] == "folded", f"format {query(req)['format']}")
        check(req["headers"].get("Content-Type", "").startswith("text/plain"),
              f"content type {req['headers'].get('Content-Type')}")
        check(req["path"].startswith("/ingest?"), f"path {req['path']}")
        stacks = parse_folded(req["body"].decode())
        check(stacks and all(not k.startswith("fgtest-burn;") for k in stacks),
              f"the process frame is the application's name, not a frame: {list(stacks)[:2]}")


def cgroup2_mount():
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            if fields[fields.index("-") + 1] == "cgroup2":
                return fields[4]
    return None


def by_unit(d, srv, tmp):
    """--name {unit}: a process in a cgroup of its own is an application named by its unit."""
    mount = cgroup2_mount()
    if not mount:
        print("by_unit: no cgroup v2 hierarchy mounted here")
        return
    unit = f"fgd-push-test-{os.getpid()}.service"
    path = os.path.join(mount, unit)
    os.mkdir(path)

    def enter():
        with open(os.path.join(path, "cgroup.procs"), "w") as f:
            f.write("0")
    proc = subprocess.Popen([program("fgtest-burn")], stdout=subprocess.PIPE, text=True,
                            preexec_fn=enter)
    try:
        check(proc.stdout.readline().strip() == "ready", "fgtest-burn did not start")
        start = time.time()
        wait_for(lambda: time.time() - start >= 2 * EVERY_S + 1.5, "two periods of it")
        srv.take()
        push(d, "--url", f"http://127.0.0.1:{srv.port}", "--once", "--last", f"{2 * EVERY_S}s",
             "--name", "{unit}", check_rc=0)
        reqs = [q for q in srv.take() if query(q)["name"].startswith(unit + ".cpu{")]
        check(reqs, f"no application named {unit}")
        stacks = pprof_stacks(profile_part(reqs[-1]), tmp, labels=True)
        if stacks is not None:
            check(any(f"cgroup:[/{unit}]" in k and "comm:[fgtest-burn]" in k for k in stacks),
                  f"labels of {unit}'s profile: {list(stacks)[:3]}")
        print(f"by_unit: {len(reqs)} profiles of {unit}")
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
        wait_for(lambda: open(os.path.join(path, "cgroup.procs")).read().strip() == "",
                 f"{path} to empty")
        os.rmdir(path)


def every(d, srv):
    cmd = [FGCTL, "--socket", d.socket, "push", "--comm", "^fgtest-burn$", "--url",
           f"http://127.0.0.1:{srv.port}", "--every", "1s", "--delay", "1s", "-q"]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: len(srv.requests) >= 3, "three periods pushed by --every", timeout=30)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    check(proc.returncode == 0, f"--every ended with {proc.returncode} on SIGTERM: {err}")
    periods = sorted(int(query(q)["from"]) for q in srv.take())
    check(len(set(periods)) == len(periods), f"--every sent a period twice: {periods}")
    check(b"profiles sent" in err, f"no report at the end: {err}")


def basic_auth_and_timeout(d, tmp, srv):
    """Basic auth from a file; a server that does not answer costs --timeout, no more."""
    creds = os.path.join(tmp, "basic")
    with open(creds, "w") as f:
        f.write("pusher:pa:ss\n")
    push(d, "--url", f"http://127.0.0.1:{srv.port}", "--once", "--last", "4s",
         "--basic-auth-file", creds, check_rc=0)
    reqs = srv.take()
    want = "Basic " + base64.b64encode(b"pusher:pa:ss").decode()
    check(reqs and all(q["headers"].get("Authorization") == want for q in reqs),
          f"basic auth: {[q['headers'].get('Authorization') for q in reqs]}")
    srv.stall = threading.Event()
    try:
        start = time.monotonic()
        # Four seconds back: at least one period of 2 s is due, whatever the time now.
        r = push(d, "--url", f"http://127.0.0.1:{srv.port}", "--once", "--last", "4s",
                 "--timeout", "1s", "--retries", "1")
        took = time.monotonic() - start
    finally:
        srv.stall.set()
        srv.stall = None
    err = r.stderr.decode()
    check(r.returncode != 0 and "imed out" in err and "1 failed requests" in err,
          f"a stalled server: rc {r.returncode}, {err}")
    # One try of 1 s: no answer is not tried again at once (test_push_failures.py).
    check(took < 3, f"a stalled server held push for {took:.1f} s")
    srv.take()
    print(f"basic auth sent; a stalled server cost {took:.1f} s (--timeout 1s)")


def tls(d, tmp):
    key, crt = os.path.join(tmp, "key.pem"), os.path.join(tmp, "crt.pem")
    r = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days",
                        "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                        "-keyout", key, "-out", crt], capture_output=True)
    if r.returncode != 0:
        print(f"tls: openssl cannot make a certificate here: {r.stderr.decode()}")
        return
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(crt, key)
    with Ingest(tls=ctx) as srv:
        url = f"https://127.0.0.1:{srv.port}"
        push(d, "--url", url, "--once", "--last", "4s", "--ca-file", crt, check_rc=0)
        check(srv.take(), "nothing came over https")
        r = push(d, "--url", url, "--once", "--last", "4s", "--retries", "0")
        check(r.returncode != 0 and b"certificate" in r.stderr.lower(),
              f"an unknown CA was trusted: {r.stderr}")
        check(not srv.take(), "a request went through without the CA")
    print("tls: --ca-file trusted, the system's CAs refused the self-signed one")


def bad_args(d, tmp):
    url = "http://127.0.0.1:1"
    cases = [
        (["--once"], "needs --url"),
        (["--url", "ftp://x", "--once"], "http:// or https://"),
        (["--url", url, "--once", "--token-file", "/dev/null", "--basic-auth-file",
          "/dev/null"], "is empty"),
        (["--url", url, "--once", "--label", "1x=y"], "invalid --label"),
        (["--url", url, "--once", "--label", "host=y"], "push's own labels"),
        (["--url", url, "--once", "--label", "a=b,c"], "invalid --label"),
        (["--url", url, "--once", "--name", "{nope}"], "invalid --name"),
        (["--url", url, "--once", "--since", "-1m"], "cuts its own periods"),
        (["--url", url, "--once", "--token-file", os.path.join(tmp, "none")], "cannot read"),
        (["--url", url, "--once", "--format", "json"], "pprof or folded"),
        (["--url", url, "--once", "--every", "0s"], "invalid --every"),
        # Said before anything is sent, not when the first period is done.
        (["--url", url, "--once", "--ca-file", os.path.join(tmp, "none.pem")],
         "cannot read --ca-file"),
        (["--url", url, "--once", "--cursor", os.path.join(tmp, "no-dir", "cursor")],
         "cannot write the cursor"),
    ]
    for args, want in cases:
        r = d.fgctl("push", *args)
        check(r.returncode != 0 and want in r.stderr.decode(),
              f"push {args}: rc {r.returncode}, {r.stderr.decode()!r}, wanted {want!r}")
    # A server that is not there: a clear failure, not a hang.
    r = push(d, "--url", url, "--once", "--last", "4s", "--retries", "0")
    check(r.returncode != 0 and b"push of fgtest-burn failed" in r.stderr, f"{r.stderr}")


def config(d, tmp, srv, host):
    path = os.path.join(tmp, "push.conf")
    with open(path, "w") as f:
        f.write("# fgd-push's settings\n"
                "url = http://127.0.0.1:1\n"
                "\n"
                "comm = ^fgtest-burn$\n"
                "every = 2s\n"
                "delay=1s\n"
                "label = env=file\n"
                "label = team=perf\n"
                "format = folded\n"
                "once = yes\n"
                "quiet = no\n")
    # The command line's --url and env= win; team= stays; --last only here.
    r = d.fgctl("push", "--config", path, "--url", f"http://127.0.0.1:{srv.port}",
                "--label", "env=test", "--last", "4s", check_rc=0)
    reqs = srv.take()
    check(reqs, f"no request with --config: {r.stderr.decode()}")
    for req in reqs:
        q = query(req)
        check(q["name"] == f"fgtest-burn.cpu{{host={host},env=test,team=perf}}",
              f"--config's labels: name {q['name']}")
        check(q["format"] == "folded", f"--config's format: {q['format']}")
        frm, until = int(q["from"]), int(q["until"])
        check(until - frm == EVERY_S, f"--config's every: {frm}-{until}")
    # Per period a line (quiet = no), and the last line.
    check(r.stderr.count(b"\n") >= 2, f"quiet = no was quiet: {r.stderr!r}")

    cases = [
        ("url = http://127.0.0.1:1\nonce = yes\nbogus = 1\n", ":3: unknown key bogus"),
        ("url = http://127.0.0.1:1\n# ok\nonce = maybe\n", ":3: once=maybe: expected yes or no"),
        ("url = http://127.0.0.1:1\nconfig = /etc/x\n", ":2: unknown key config"),
        ("[push]\nurl = http://127.0.0.1:1\n", ":2: url= is in section [push]"),
        ("url\n", ":1: expected Key=Value"),
        ("url = http://127.0.0.1:1\nevery = 0s\n", "invalid --every '0s'"),
    ]
    for text, want in cases:
        with open(path, "w") as f:
            f.write(text)
        r = d.fgctl("push", "--config", path, "--once")
        err = r.stderr.decode()
        check(r.returncode == 2 and want in err and (want.startswith("invalid") or path in err),
              f"push.conf {text!r}: rc {r.returncode}, {err!r}, wanted {want!r}")
    r = d.fgctl("push", "--config", os.path.join(tmp, "none.conf"), "--once")
    check(r.returncode == 2 and b"cannot read" in r.stderr, f"a missing --config: {r.stderr!r}")
    # The template installed for fgd-push.service reads as it is, and with every option
    # uncommented: the file's options are checked before --help is reached (the secrets'
    # files, which do not exist here, are read after).
    example = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "systemd",
                           "push.conf.example")
    with open(example) as f:
        text = f.read()
    uncommented = re.sub(r"^#(\S+ = )", r"\1", text, flags=re.M)
    check(uncommented != text, "push.conf.example has no commented-out option")
    for name, content in (("example.conf", text), ("uncommented.conf", uncommented)):
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            f.write(content)
        r = d.fgctl("push", "--config", path, "--help")
        check(r.returncode == 0, f"push.conf.example ({name}): {r.stderr.decode()!r}")
    print(f"config: {len(reqs)} periods with the file's settings and the command line's")


def test():
    require_root()
    host = socket.gethostname()
    with tempfile.TemporaryDirectory() as tmp, \
            Daemon(["--always-on-frequency", "199", "--slice-seconds", "1",
                    "--window-seconds", "4"]) as d, \
            workload("fgtest-burn"), Ingest() as srv:
        # Enough of the workload in the window for the first periods.
        start = time.time()
        wait_for(lambda: time.time() - start >= 7 and
                 d.fgctl("snapshot", "--last", "7s", "--comm", "^fgtest-burn$", "-o", "-",
                         "-f", "folded").returncode == 0,
                 "7 s of fgtest-burn in the window", timeout=30)
        bad_args(d, tmp)
        config(d, tmp, srv, host)
        cursor = basic(d, tmp, srv, host)
        outage(d, tmp, srv, host, cursor)
        catch_up_limit(d, tmp, srv)
        folded(d, srv)
        by_unit(d, srv, tmp)
        basic_auth_and_timeout(d, tmp, srv)
        every(d, srv)
        tls(d, tmp)


if __name__ == "__main__":
    run(test)
