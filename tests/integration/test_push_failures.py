#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""fgctl push when the store fails it: silent, overloaded, redirecting, or
behind a cursor from the future.

Three copies of fgtest-burn (burn-a, burn-b, burn-c) are three
applications, so a period is three requests; test_push.py's fake ingest
server answers, or takes requests and never answers (silent).
  - Silent, --once --timeout 3s: push gives up the period at its first
    request, within twice --timeout, says the store did not answer, exits
    non-zero, and the cursor stays.
  - Silent, as a service (--every, --timeout 1s): each try is one request,
    the waits between them grow (backoff with jitter); the server then
    answers, on the same cursor: every period from the cursor on arrives
    exactly once, oldest first.
  - Retry-After (seconds, then an HTTP date) is waited for; one that is
    neither is said and ignored.
  - A 429 storm: --once stops the period when its first application has
    used its retries (retries + 1 requests, not applications x that); as a
    service, the waits grow.
  - A 307: not followed (the redirect's target gets nothing, the token
    included), the message names it, the period stays due and is pushed
    once the server takes it.
  - A cursor after now: --once says so and exits non-zero; as a service it
    is said at start and every period, and the first period pushed is the
    cursor's once the clock passes it.
"""

import collections
import email.utils
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time

from fgdtest import FGCTL, Daemon, check, program, require_root, run, wait_for
from test_push import EVERY_S, Ingest, query

APPS = ("burn-a", "burn-b", "burn-c")


def push_args(*args):
    return ["push", "--comm", "^burn-[abc]$", "--every", f"{EVERY_S}s", "--delay", "1s", *args]


def push(d, *args):
    return d.fgctl(*push_args(*args))


class Pusher:
    """push as a service (--every), its stderr read as it comes."""

    def __init__(self, d, *args):
        self.lines = []
        self.proc = subprocess.Popen([FGCTL, "--socket", d.socket, *push_args(*args)],
                                     stderr=subprocess.PIPE, text=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self.reader.join()
            self.proc.stderr.close()
        return self.proc.returncode

    def err(self):
        return "\n".join(self.lines)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def period_start(t):
    return int(t) // EVERY_S * EVERY_S


def write_cursor(path, until_s):
    with open(path, "w") as f:
        f.write(f"fgd-push 1\nuntil={until_s * 1000}\n")


def read_cursor(path, with_sent=False):
    """The cursor's end, Unix seconds (with_sent: and the applications sent of the next)."""
    with open(path) as f:
        text = f.read()
    until = int(re.search(r"^until=(\d+)$", text, re.M).group(1)) // 1000
    return (until, re.findall(r"^sent=(.*)$", text, re.M)) if with_sent else until


def fresh_cursor(tmp, name, back_s):
    """A cursor whose periods from back_s ago on are due."""
    path = os.path.join(tmp, name)
    write_cursor(path, period_start(time.time() - back_s))
    return path


def app_period(req):
    q = query(req)
    return q["name"].split(".cpu{", 1)[0], int(q["from"])


def silent_once(d, tmp, srv, url):
    cursor = fresh_cursor(tmp, "silent-cursor", 8)
    before = read_cursor(cursor)
    srv.silent = True
    start = time.monotonic()
    r = push(d, "--url", url, "--once", "--cursor", cursor, "--timeout", "3s")
    took = time.monotonic() - start
    err = r.stderr.decode()
    check(r.returncode != 0 and "did not answer" in err,
          f"--once against a silent store: rc {r.returncode}, {err}")
    check(took < 2 * 3, f"--once against a silent store took {took:.1f} s (--timeout 3s): {err}")
    # No application after the first, nor the first again: the store did not answer.
    check(len(srv.unanswered) == 1, f"{len(srv.unanswered)} requests to a silent store: {err}")
    check(read_cursor(cursor) == before, "the cursor moved on a silent store")
    print(f"silent, --once: gave up in {took:.1f} s (--timeout 3s), one request")
    return cursor


def silent_then_good(d, tmp, srv, url, cursor):
    """The same cursor, as a service: silent for three tries, then answering."""
    first = read_cursor(cursor)
    srv.unanswered.clear()
    with Pusher(d, "--url", url, "--cursor", cursor, "--timeout", "1s") as p:
        wait_for(lambda: len(srv.unanswered) >= 3, "three tries at a silent store")
        switched = time.time()
        srv.silent = False
        # Every period due when the store came back: ends 1 s (--delay) before.
        target = period_start(switched - 1)
        wait_for(lambda: read_cursor(cursor) >= target and srv.requests, "catching up",
                 timeout=60)
        rc = p.stop()
    err = p.err()
    check(rc == 0, f"--every ended with {rc}: {err}")
    waits = [float(w) for w in re.findall(r"^fgctl: push \S+: trying again in ([\d.]+) s",
                                          err, re.M)]
    # One request a try, a wait after each; each wait at least the last (doubling, jitter in
    # the upper half).
    check(len(waits) >= 2 and len(waits) == len(srv.unanswered),
          f"{len(srv.unanswered)} requests unanswered, {len(waits)} waits: {err}")
    check(all(a <= b for a, b in zip(waits, waits[1:])), f"waits between tries: {waits}: {err}")
    reqs = srv.take()
    sent = [app_period(q) for q in reqs]
    twice = [k for k, n in collections.Counter(sent).items() if n > 1]
    check(not twice, f"sent twice: {twice}")
    froms = [f for _, f in sent]
    check(froms == sorted(froms), f"not oldest first: {froms}")
    # Stopped between two applications, the cursor says which of the next period went.
    last, partly = read_cursor(cursor, with_sent=True)
    check(sorted(partly) == sorted(a for a, f in sent if f == last),
          f"the cursor says {partly} of {last} went: {sent}")
    want = list(range(first, last + (EVERY_S if partly else 0), EVERY_S))
    check(sorted(set(froms)) == want, f"periods {sorted(set(froms))}, wanted {want}")
    for app in APPS:
        n = sum(1 for a, _ in sent if a == app)
        check(n >= len(want) // 2, f"{app} in {n} of {len(want)} periods")
    print(f"silent then good: {len(waits)} waits {waits}, then {len(want)} periods "
          f"({len(reqs)} profiles) each once, oldest first")


def retry_after(d, tmp, srv, url):
    for value, least, most in (("3", 2.9, None), (None, 3, None), ("soon", None, 2.5)):
        # An HTTP date 6 s ahead: 5 to 6 s from here (whole seconds), less push's start.
        value = value or email.utils.formatdate(time.time() + 6, usegmt=True)
        srv.take()
        srv.script = [(503, {"Retry-After": value})]
        cursor = fresh_cursor(tmp, "retry-after-cursor", 4)
        r = push(d, "--url", url, "--once", "--cursor", cursor, "--retries", "1")
        err = r.stderr.decode()
        reqs = srv.take()
        check(r.returncode == 0 and len(reqs) >= 2,
              f"Retry-After {value}: rc {r.returncode}, {len(reqs)} requests: {err}")
        waited = reqs[1]["time"] - reqs[0]["time"]
        if least is not None:
            check(waited >= least and "as the server asked (Retry-After)" in err,
                  f"Retry-After {value}: tried again after {waited:.1f} s: {err}")
        else:
            check(waited < most and "neither seconds nor an HTTP date" in err,
                  f"Retry-After {value}: tried again after {waited:.1f} s: {err}")
        print(f"Retry-After {value!r}: tried again after {waited:.1f} s")


def storm(d, tmp, srv, url):
    srv.take()
    srv.status = 429
    try:
        cursor = fresh_cursor(tmp, "storm-cursor", 4)
        before = read_cursor(cursor)
        r = push(d, "--url", url, "--once", "--cursor", cursor, "--retries", "2")
        err = r.stderr.decode()
        n = len(srv.take())
        # The first application's 3 tries; not 3 for each of the three.
        check(r.returncode != 0 and n == 3, f"429, --once --retries 2: {n} requests: {err}")
        check(read_cursor(cursor) == before, "the cursor moved in a 429 storm")
        # As a service, 10 s: tries after 0.5-1, 1-2, 2-4, 4-8 s; at most 5 requests.
        with Pusher(d, "--url", url, "--cursor", cursor, "--retries", "0") as p:
            start = time.monotonic()
            wait_for(lambda: time.monotonic() - start >= 10, "10 s of 429s", timeout=20)
            as_service = len(srv.take())
            p.stop()
        check(2 <= as_service <= 5, f"429 for 10 s as a service: {as_service} requests: "
              f"{p.err()}")
        print(f"429 storm: {n} requests --once (--retries 2, 3 applications), "
              f"{as_service} in 10 s as a service")
    finally:
        srv.status = 200


def redirect(d, tmp, srv, url):
    token = os.path.join(tmp, "token")
    with open(token, "w") as f:
        f.write("s3cret\n")
    with Ingest() as elsewhere:
        target = f"http://127.0.0.1:{elsewhere.port}/ingest"
        for location, named in ((target, target), ("/v2", f"{url}/v2")):
            srv.take()
            srv.status, srv.headers = 307, {"Location": location}
            cursor = fresh_cursor(tmp, "redirect-cursor", 4)
            before = read_cursor(cursor)
            try:
                r = push(d, "--url", url, "--once", "--cursor", cursor, "--token-file", token)
            finally:
                srv.status, srv.headers = 200, {}
            err = r.stderr.decode()
            check(r.returncode != 0 and f"a redirect to {named}," in err,
                  f"307 to {location}: rc {r.returncode}, {err}")
            check(len(srv.take()) == 1, f"a 307 was tried again at once: {err}")
            check(not elsewhere.take(), "the redirect was followed")
            check(read_cursor(cursor) == before, f"the cursor moved past a 307: {err}")
            # Still due: pushed once the server takes it.
            r = push(d, "--url", url, "--once", "--cursor", cursor, "--token-file", token)
            reqs = srv.take()
            check(r.returncode == 0 and reqs and
                  min(app_period(q)[1] for q in reqs) == before,
                  f"after the 307: rc {r.returncode}, "
                  f"{sorted(app_period(q) for q in reqs)}, cursor was {before}")
    print("307: not followed, its target named, the period pushed later")


def future_cursor(d, tmp, srv, url):
    srv.take()
    cursor = os.path.join(tmp, "future-cursor")
    write_cursor(cursor, period_start(time.time()) + 3600)
    r = push(d, "--url", url, "--once", "--cursor", cursor)
    err = r.stderr.decode()
    check(r.returncode != 0 and "after now" in err and "set back" in err,
          f"--once, a cursor an hour ahead: rc {r.returncode}, {err}")
    check(not srv.take(), "something was pushed from a cursor ahead of the clock")
    # 6 to 8 s ahead: said at start and every period (2 s), then its period is pushed.
    until = period_start(time.time()) + 8
    write_cursor(cursor, until)
    with Pusher(d, "--url", url, "--cursor", cursor) as p:
        wait_for(lambda: srv.requests, "the first period after the cursor", timeout=30)
        rc = p.stop()
    said = [line for line in p.lines if "after now" in line]
    check(rc == 0 and len(said) >= 3, f"a cursor 6 to 8 s ahead said {len(said)} times: "
          f"{p.err()}")
    first = min(app_period(q)[1] for q in srv.take())
    check(first == until, f"the first period pushed starts at {first}, the cursor at {until}")
    print(f"future cursor: said {len(said)} times, then pushed from it")


def burn_copies(tmp):
    """Three processes of three names: three applications."""
    procs = []
    for name in APPS:
        path = os.path.join(tmp, name)
        shutil.copy(program("fgtest-burn"), path)
        procs.append(subprocess.Popen([path], stdout=subprocess.PIPE, text=True))
    for proc in procs:
        check(proc.stdout.readline().strip() == "ready", "a copy of fgtest-burn did not start")
    return procs


def test():
    require_root()
    with tempfile.TemporaryDirectory() as tmp, \
            Daemon(["--always-on-frequency", "199", "--slice-seconds", "1",
                    "--window-seconds", "4"]) as d, Ingest() as srv:
        procs = burn_copies(tmp)
        try:
            url = f"http://127.0.0.1:{srv.port}"
            start = time.time()
            wait_for(lambda: time.time() - start >= 9 and
                     all(d.fgctl("snapshot", "--last", "8s", "--comm", f"^{a}$", "-o", "-",
                                 "-f", "folded").returncode == 0 for a in APPS),
                     "8 s of the three applications", timeout=40)
            cursor = silent_once(d, tmp, srv, url)
            silent_then_good(d, tmp, srv, url, cursor)
            retry_after(d, tmp, srv, url)
            storm(d, tmp, srv, url)
            redirect(d, tmp, srv, url)
            future_cursor(d, tmp, srv, url)
        finally:
            for proc in procs:
                proc.kill()
                proc.wait()
                proc.stdout.close()


if __name__ == "__main__":
    run(test)
