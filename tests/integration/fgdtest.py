# SPDX-License-Identifier: LGPL-2.1-or-later
"""The integration-test harness: a real fgd on a temporary socket, real workloads.

Every process a test starts is stopped by it (context managers), and readiness
is awaited through sd_notify (a NOTIFY_SOCKET the harness owns) or a line the
workload prints, never through a fixed sleep.
"""

import contextlib
import grp
import json
import os
import pwd
import re
import select
import signal
import shutil
import socket
import subprocess
import sys
import tempfile
import time

FGD = os.environ.get("FGD", "fgd")
FGCTL = os.environ.get("FGCTL", "fgctl")
PROGRAMS = os.environ.get("FG_TEST_PROGRAMS", ".")
SKIP = 77


class TestFailure(Exception):
    pass


def skip(reason):
    print(f"SKIP: {reason}")
    sys.exit(SKIP)


def require_root():
    if os.geteuid() != 0:
        skip("integration tests need root (perf_event_open system-wide)")


def check(cond, message):
    if not cond:
        raise TestFailure(message)


def sanitized():
    """Whether fgd is built with AddressSanitizer: its memory is then redzones and a
    quarantine of freed blocks, so RSS says nothing about what fgd itself holds."""
    with open(FGD if os.path.isabs(FGD) else shutil.which(FGD), "rb") as f:
        return b"__asan_init" in f.read()


def program(name):
    path = os.path.join(PROGRAMS, name)
    check(os.access(path, os.X_OK), f"test program {path} is missing: build with meson first")
    return path


class Conn:
    """One connection speaking the protocol by hand: request lines out, messages in.

    Every read has a deadline: a reply that never comes fails the test instead of
    hanging it."""

    def __init__(self, path, timeout=20):
        self.timeout = timeout
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.buf = b""

    def send(self, request):
        """A request: a dict of the members after "fgd" (with "cmd"), or raw bytes."""
        if isinstance(request, dict):
            request = (json.dumps(dict({"fgd": 1}, **request)) + "\n").encode()
        self.sock.sendall(request)

    def _fill(self, what):
        self.sock.settimeout(self.timeout)
        try:
            chunk = self.sock.recv(1 << 20)
        except socket.timeout:
            raise TestFailure(f"{what}: no reply from fgd within {self.timeout} s")
        except ConnectionResetError:
            chunk = b""
        return chunk

    def message(self, what="reply"):
        """The next message, or None at the end of the connection. A "data" message
        comes with its bytes, as its "bytes" member."""
        while b"\n" not in self.buf:
            chunk = self._fill(what)
            if not chunk:
                check(not self.buf, f"the connection ended inside a message: {self.buf[:200]!r}")
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        msg = json.loads(line)
        if msg.get("type") == "data":
            while len(self.buf) < msg["length"]:
                chunk = self._fill("data")
                check(chunk, "the connection ended inside a data chunk")
                self.buf += chunk
            msg["bytes"], self.buf = self.buf[:msg["length"]], self.buf[msg["length"]:]
        return msg

    def reply(self, what="reply"):
        """The next message that is not progress news."""
        while True:
            msg = self.message(what)
            if msg is None or msg.get("type") != "progress":
                return msg

    def result(self, what="result"):
        """After a "result" message: its data, up to "end"; returns (bytes, end message)."""
        data = bytearray()
        while True:
            msg = self.message(what)
            check(msg is not None, f"the connection ended inside a {what}")
            if msg["type"] == "end":
                check(msg["bytes"] == len(data), f"end says {msg['bytes']} bytes, {len(data)} came")
                return bytes(data), msg
            check(msg["type"] == "data", f"{msg['type']} inside a {what}: {msg}")
            data += msg["bytes"]

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class Daemon:
    """fgd started for one test, ready once it sent READY=1."""

    def __init__(self, extra_args=(), timeout=60, prefix=()):
        """prefix: a command fgd is run under (setpriv ...)."""
        self.extra_args = list(extra_args)
        self.prefix = list(prefix)
        self.timeout = timeout
        self.proc = None

    def __enter__(self):
        self.dir = tempfile.mkdtemp(prefix="fgd-test-")
        # Other users must reach the socket (the access-control test).
        os.chmod(self.dir, 0o755)
        self.socket = os.path.join(self.dir, "fgd.sock")
        notify_path = self.notify_path = os.path.join(self.dir, "notify")
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.notify.bind(notify_path)
        self.log_path = os.path.join(self.dir, "fgd.log")
        self.log = open(self.log_path, "w+")
        env = dict(os.environ, NOTIFY_SOCKET=notify_path)
        args = ["--socket", self.socket]
        # The history goes with the test, not into the machine's /var/lib/fgd.
        if not any(a.startswith("--state-directory") for a in self.extra_args):
            args += ["--state-directory", os.path.join(self.dir, "state")]
        self.proc = subprocess.Popen(self.prefix + [FGD] + args + self.extra_args,
                                     stdout=self.log, stderr=subprocess.STDOUT, env=env)
        self._wait_ready()
        return self

    def _wait_ready(self):
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise TestFailure(f"fgd exited with {self.proc.returncode} before READY=1:\n{self.logs()}")
            ready, _, _ = select.select([self.notify], [], [], 0.5)
            if ready:
                msg = self.notify.recv(4096).decode()
                if "READY=1" in msg.split("\n"):
                    check(os.path.exists(self.socket), "READY=1 sent before the socket exists")
                    # Nobody reads it from here on: a socket left bound would fill up
                    # (net.unix.max_dgram_qlen, 10) with STATUS= every 5 s and block
                    # fgd's sd_notify() after about a minute. Gone, sends just fail.
                    self.notify.close()
                    os.unlink(self.notify_path)
                    return
        raise TestFailure(f"fgd not ready within {self.timeout} s:\n{self.logs()}")

    def logs(self):
        self.log.flush()
        with open(self.log_path) as f:
            return f.read()

    def fgctl(self, *args, user=None, timeout=120, input=None, check_rc=None):
        cmd = [FGCTL, "--socket", self.socket] + [str(a) for a in args]
        if user:
            cmd = as_user(user, cmd)
        r = subprocess.run(cmd, capture_output=True, timeout=timeout, input=input)
        if check_rc is not None and r.returncode != check_rc:
            raise TestFailure(f"{' '.join(cmd)} exited {r.returncode}, expected {check_rc}\n"
                              f"stderr: {r.stderr.decode(errors='replace')}\nfgd log:\n{self.logs()}")
        return r

    def record_raw(self, request, timeout=120, cmd="record"):
        """Sends a record (or snapshot) request over the protocol itself (fgctl
        shows only a summary).

        request holds the members after "fgd" and "cmd". Returns (result message,
        result bytes); the result message carries the recording's "meta".
        """
        msg = dict({"fgd": 1, "cmd": cmd}, **request)
        deadline = time.monotonic() + timeout
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(self.socket)
            s.sendall((json.dumps(msg) + "\n").encode())
            buf, result, data = b"", None, bytearray()
            while True:
                while b"\n" not in buf:
                    s.settimeout(max(0.1, deadline - time.monotonic()))
                    chunk = s.recv(65536)
                    check(chunk, f"fgd closed the connection mid-recording:\n{self.logs()}")
                    buf += chunk
                line, buf = buf.split(b"\n", 1)
                reply = json.loads(line)
                kind = reply.get("type")
                check(kind != "error", f"record failed: {reply}")
                if kind == "result":
                    result = reply
                elif kind == "data":
                    while len(buf) < reply["length"]:
                        s.settimeout(max(0.1, deadline - time.monotonic()))
                        chunk = s.recv(65536)
                        check(chunk, "fgd closed the connection mid-result")
                        buf += chunk
                    data += buf[:reply["length"]]
                    buf = buf[reply["length"]:]
                elif kind == "end":
                    check(result is not None, "end without a result")
                    return result, bytes(data)

    def query_raw(self, cmd, request, timeout=60, user=None, raw=False):
        """Sends a one-reply request (e.g. "top") over the protocol; returns the reply message.

        request holds the members after "fgd" and "cmd". With user, the request
        is sent by a process of that user (the daemon answers by SO_PEERCRED).
        With raw, the reply line's bytes are returned, undecoded."""
        msg = dict({"fgd": 1, "cmd": cmd}, **request)
        if user:
            script = ("import socket, sys\n"
                      "s = socket.socket(socket.AF_UNIX)\n"
                      "s.settimeout(float(sys.argv[2]))\n"
                      "s.connect(sys.argv[1])\n"
                      "s.sendall(sys.stdin.buffer.read())\n"
                      "buf = b''\n"
                      "while b'\\n' not in buf:\n"
                      "    chunk = s.recv(65536)\n"
                      "    if not chunk:\n"
                      "        break\n"
                      "    buf += chunk\n"
                      "sys.stdout.buffer.write(buf.split(b'\\n', 1)[0])\n")
            r = subprocess.run(["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups", "--",
                                sys.executable, "-c", script, self.socket, str(timeout)],
                               input=(json.dumps(msg) + "\n").encode(), capture_output=True,
                               timeout=timeout + 10)
            check(r.returncode == 0 and r.stdout, f"{cmd} as {user} got no answer: {r.stderr!r}")
            return r.stdout if raw else json.loads(r.stdout)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(self.socket)
            s.sendall((json.dumps(msg) + "\n").encode())
            buf = b""
            while b"\n" not in buf:
                chunk = s.recv(65536)
                check(chunk, f"fgd closed the connection before answering {cmd}")
                buf += chunk
            line = buf.split(b"\n", 1)[0]
            return line if raw else json.loads(line)

    def conn(self, timeout=20):
        return Conn(self.socket, timeout)

    def status(self):
        return json.loads(self.fgctl("status", "--json", check_rc=0).stdout)

    def rss_kib(self):
        """fgd's resident memory now (VmRSS), in KiB."""
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise TestFailure("fgd has no VmRSS")

    def fd_count(self, kind=""):
        """fgd's open fds whose target contains kind (e.g. "perf_event"), or all."""
        fd_dir = f"/proc/{self.proc.pid}/fd"
        n = 0
        for fd in os.listdir(fd_dir):
            try:
                n += kind in os.readlink(os.path.join(fd_dir, fd))
            except FileNotFoundError:
                pass
        return n

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise TestFailure(f"fgd did not exit on SIGTERM:\n{self.logs()}")
        return self.proc.returncode

    def kill(self):
        """SIGKILL, as a crash would: the exit status is then not a failure."""
        self.proc.kill()
        self.proc.wait()
        self.killed = True

    def __exit__(self, exc_type, exc, tb):
        rc = self.stop()
        if getattr(self, "killed", False):
            rc = 0
        self.notify.close()
        logs = self.logs()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        if exc_type is None and rc != 0:
            raise TestFailure(f"fgd exited with {rc} on SIGTERM:\n{logs}")
        if exc_type is not None:
            print(f"--- fgd log ---\n{logs}", file=sys.stderr)
        return False


def as_user(user, cmd):
    """cmd (a list) run as user, with the user's groups."""
    return ["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups", "--"] + list(cmd)


@contextlib.contextmanager
def ready_process(cmd, what, **popen):
    """Starts cmd (a list; popen: more of subprocess.Popen's arguments), waits for the "ready"
    line it prints, and kills it after."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, **popen)
    try:
        line = proc.stdout.readline()
        check(line.strip() == "ready", f"{what} did not start: {line!r}")
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()


@contextlib.contextmanager
def workload(name, *args, user=None):
    """Starts a test program and waits for the "ready" line it prints."""
    cmd = [program(name)] + [str(a) for a in args]
    if user:
        cmd = as_user(user, cmd)
    with ready_process(cmd, name) as proc:
        yield proc


TEST_USER = "fgd-test-user"
TEST_GROUP = "fgd-test-group"


@contextlib.contextmanager
def test_user(user=TEST_USER, group=TEST_GROUP):
    """An unprivileged user in group (give fgd --socket-group group), created for the test if
    missing and removed after it if it was. Tests that may run at the same time as others
    on the machine (other checkouts' test_access) had better use names of their own."""
    created = []
    try:
        try:
            grp.getgrnam(group)
        except KeyError:
            subprocess.run(["groupadd", "--system", group], check=True)
            created.append("group")
        try:
            pwd.getpwnam(user)
        except KeyError:
            subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                            "--groups", group, user], check=True)
            created.append("user")
        subprocess.run(["usermod", "-a", "-G", group, user], check=True)
        yield user
    finally:
        # A process of the user killed a moment ago may still be on its way out: userdel
        # refuses while it is (exit status 8), so it gets a few seconds.
        deadline = time.monotonic() + 10
        while "user" in created:
            r = subprocess.run(["userdel", user], capture_output=True, text=True)
            if r.returncode != 8 or time.monotonic() > deadline:
                if r.returncode != 0:
                    print(f"userdel {user}: {r.stderr.strip()}", file=sys.stderr)
                break
            time.sleep(0.2)
        if "group" in created:
            subprocess.run(["groupdel", group], check=False)


@contextlib.contextmanager
def sysctl(path, value):
    """Sets /proc/sys/PATH to value if it differs, and puts the old value back after."""
    full = os.path.join("/proc/sys", path)
    with open(full) as f:
        old = f.read().strip()
    if old != str(value):
        with open(full, "w") as f:
            f.write(str(value))
    try:
        yield old
    finally:
        if old != str(value):
            with open(full, "w") as f:
                f.write(old)


@contextlib.contextmanager
def jit_program(cmd):
    """Runs cmd, which execs fgtest-jit (possibly through sh, setpriv or unshare), and reads
    its greeting: yields (proc, start, size), the (start, size) of the code it runs in
    anonymous executable memory. Skips the test where it cannot run (not x86-64). On the
    way out, stops it and removes /tmp/perf-PID.map of proc's pid if a test wrote one."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().strip()
        if line == "unsupported":
            skip("fgtest-jit runs only on x86-64")
        check(line == "ready", f"fgtest-jit did not start: {line!r}")
        start, size = (int(x, 16) for x in proc.stdout.readline().split())
        yield proc, start, size
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"/tmp/perf-{proc.pid}.map")


def wait_for(cond, what, timeout=30):
    """Calls cond until it returns something true, and returns that; fails after timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = cond()
        if value:
            return value
        time.sleep(0.2)
    check(False, f"timed out waiting for {what}")


def parse_folded(text):
    """Folded text to {stack: count}; fails on any malformed line."""
    stacks = {}
    for n, line in enumerate(text.splitlines(), 1):
        m = re.fullmatch(r"(.+) (\d+)", line)
        check(m is not None, f"line {n} is not folded format: {line!r}")
        check(m.group(1) not in stacks, f"line {n} repeats a stack: {line!r}")
        stacks[m.group(1)] = int(m.group(2))
    return stacks


def past_snapshots(d, outs, *args):
    """Runs fgtest-syscall and fgtest-burn until always-on holds 200 samples of the first,
    then writes one past range of the window, of those two processes only (the rest of the
    machine is not the test's), to each file of outs, its format by its extension, with the
    snapshot options args: the same samples in each format. Returns the two pids."""
    with workload("fgtest-syscall") as w1, workload("fgtest-burn") as w2:
        since = time.time()
        time.sleep(0.1)

        def enough():
            r = d.fgctl("snapshot", "--since", f"{since:.3f}", "-p", w1.pid, "-o", "-",
                        "-f", "folded")
            return r.returncode == 0 and sum(parse_folded(r.stdout.decode()).values()) > 200
        wait_for(enough, "200 samples of fgtest-syscall in the window", timeout=30)
        until = time.time() - 0.5
        for out in outs:
            d.fgctl("snapshot", "--since", f"{since:.3f}", "--until", f"{until:.3f}", "-o", out,
                    "--comm", "^fgtest-(syscall|burn)$", *args, check_rc=0)
        return w1.pid, w2.pid


def run(test):
    """Runs a test function: exit 0, 1 on failure, 77 on skip."""
    try:
        test()
    except TestFailure as e:
        print(f"FAIL: {e}", file=sys.stderr)
        sys.exit(1)
    print("PASS")
    sys.exit(0)
