# SPDX-License-Identifier: LGPL-2.1-or-later
"""Nobody can lock others out by holding connections (docs/PROTOCOL.md,
"Connections"): when the client table is full, a newcomer closes the oldest
idle connection, which reads an EUSERS error saying why; a user at their own
cap closes their own oldest idle connection, never someone else's; and when
every connection is busy, status still gets through on a short-request slot,
which takes status or top and nothing else. Evictions and short requests
are counted in status."""

import fcntl
import json
import socket
import struct
import subprocess
import sys
import termios
import time

from fgdtest import TEST_GROUP, Daemon, as_user, check, require_root, run, test_user, wait_for

MAX_CLIENTS = 64
MAX_CLIENTS_PER_USER = 8

# Holds connections for another user: opens N (sending DATA on each), prints "connected",
# then answers "read I" (what connection I received until its end, as JSON) and "peek I"
# (whether anything came on I yet) from stdin, one line each.
HOLDER = r"""
import json, socket, sys
path, n, data = sys.argv[1], int(sys.argv[2]), sys.argv[3].encode()
socks = []
for _ in range(n):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    if data:
        s.sendall(data)
    socks.append(s)
print("connected", flush=True)
for line in sys.stdin:
    cmd, i = line.split()
    s = socks[int(i)]
    if cmd == "read":
        s.settimeout(10)
        got = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
        except (socket.timeout, ConnectionResetError) as e:
            got += ("<%s>" % type(e).__name__).encode()
        print(json.dumps(got.decode(errors="replace")), flush=True)
    else:
        s.setblocking(False)
        try:
            print(json.dumps(s.recv(65536).decode(errors="replace")), flush=True)
        except BlockingIOError:
            print(json.dumps(None), flush=True)
"""


class Holder:
    def __init__(self, d, user, n, data=b""):
        self.p = subprocess.Popen(as_user(user, [sys.executable, "-c", HOLDER, d.socket, str(n),
                                                 data.decode()]),
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        check(self.p.stdout.readline().strip() == "connected", f"{user} could not connect")

    def ask(self, cmd, i):
        self.p.stdin.write(f"{cmd} {i}\n")
        self.p.stdin.flush()
        return json.loads(self.p.stdout.readline())

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)
        self.p.stdout.close()


def evicted_line(text, who):
    """The error line an evicted connection reads, then the end of the connection."""
    check(text is not None and text.endswith("\n"), f"{who}: no complete line, then the end: {text!r}")
    msg = json.loads(text.splitlines()[0])
    check(msg["type"] == "error" and msg["error"] == "EUSERS" and "idle" in msg["message"],
          f"{who} was closed without saying why: {msg}")
    check(len(text.splitlines()) == 1, f"{who} read more than the one line: {text!r}")


def timed_status(d, user=None):
    start = time.monotonic()
    r = d.fgctl("status", "--json", user=user, timeout=30)
    elapsed = time.monotonic() - start
    check(r.returncode == 0, f"status failed for {user or 'root'}: {r.stderr!r}")
    check(elapsed < 5, f"status took {elapsed:.1f} s")
    return json.loads(r.stdout)


def readable(s):
    buf = fcntl.ioctl(s.fileno(), termios.FIONREAD, struct.pack("i", 0))
    return struct.unpack("i", buf)[0]


def root_fills_the_table_with_idle_connections(d):
    conns = []
    for _ in range(MAX_CLIENTS):
        s = socket.socket(socket.AF_UNIX)
        s.connect(d.socket)
        conns.append(s)
    try:
        # All 64 are root's and idle (fgd accepts in order): the next one closes the oldest.
        st = timed_status(d)
        check(st["server"]["clients"] == MAX_CLIENTS,
              f"{st['server']['clients']} clients while 63 idle ones and fgctl were connected")
        conns[0].settimeout(10)
        text = b""
        while True:
            chunk = conns[0].recv(65536)
            if not chunk:
                break
            text += chunk
        evicted_line(text.decode(), "the oldest idle connection")
        for s in conns[1:]:
            s.setblocking(False)
            try:
                check(False, f"a younger idle connection was closed or written to: {s.recv(100)!r}")
            except BlockingIOError:
                pass
        st = d.status()["server"]
        check(st["clients_evicted"] == 1, f"evictions: {st}")
    finally:
        for s in conns:
            s.close()
    wait_for(lambda: d.status()["server"]["clients"] == 1, "the idle connections to close")


def every_slot_busy(d):
    # A connection that asks for much more than it reads has requests in flight: not idle.
    burst = b'{"fgd":1,"cmd":"status"}\n' * 1000
    conns = []
    try:
        for _ in range(MAX_CLIENTS):
            s = socket.socket(socket.AF_UNIX)
            s.connect(d.socket)
            s.sendall(burst)
            conns.append(s)

        # Each stops being answered once its replies fill the socket and fgd's queue.
        def all_stuck():
            sizes = [readable(s) for s in conns]
            time.sleep(0.5)
            return all(n > 64 << 10 and readable(s) == n for n, s in zip(sizes, conns))
        wait_for(all_stuck, "64 connections to be busy with unread replies", timeout=60)
        st = timed_status(d)["server"]
        check(st["clients"] == MAX_CLIENTS and st["clients_evicted"] == 1,
              f"a busy connection was evicted, or status took a regular slot: {st}")
        check(st["short_requests"] >= 1, f"short requests not counted: {st}")
        # The short slot is for status and top, not for work.
        r = d.fgctl("record", "-a", "-t", "1", "-o", "-", timeout=30)
        check(r.returncode != 0 and b"status or top" in r.stderr,
              f"a recording on a short-request slot: rc {r.returncode}, {r.stderr!r}")
        r = d.fgctl("top", timeout=30)
        check(r.returncode == 0, f"top on a short-request slot failed: {r.stderr!r}")
    finally:
        for s in conns:
            s.close()
    wait_for(lambda: d.status()["server"]["clients"] == 1, "the busy connections to close")


def user_at_their_cap(d, user):
    # Root's idle connections are the oldest, but a user's newcomer may not take them.
    roots = [socket.socket(socket.AF_UNIX) for _ in range(2)]
    for s in roots:
        s.connect(d.socket)
    holder = Holder(d, user, MAX_CLIENTS_PER_USER)
    try:
        before = d.status()["server"].get("clients_evicted", 0)
        st = timed_status(d, user=user)["server"]
        check(st["clients_evicted"] == before + 1, f"the user's newcomer evicted {st}")
        evicted_line(holder.ask("read", 0), "the user's oldest idle connection")
        for i in range(1, MAX_CLIENTS_PER_USER):
            check(holder.ask("peek", i) is None, f"the user's connection {i} was touched")
        for s in roots:
            s.setblocking(False)
            try:
                check(False, f"a user's newcomer closed root's connection: {s.recv(100)!r}")
            except BlockingIOError:
                pass
    finally:
        holder.close()
        for s in roots:
            s.close()


def test():
    require_root()
    with test_user() as user, Daemon(["--socket-group", TEST_GROUP, "--always-on-frequency", "99",
                                      "--slice-seconds", "1"]) as d:
        wait_for(lambda: d.fgctl("top").returncode == 0, "always-on samples for top")
        root_fills_the_table_with_idle_connections(d)
        every_slot_busy(d)
        user_at_their_cap(d, user)


run(test)
