# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every failure a user can meet gets a clear message and its own exit code, and
affects only that client: no daemon, no such pid, a pid that exits mid-way, an
unwritable output, bad usage, malformed and oversized requests, a client that
vanishes mid-recording, Ctrl-C."""

import json
import os
import pty
import re
import signal
import socket
import subprocess
import tempfile
import time

from fgdtest import FGCTL, Daemon, check, parse_folded, require_root, run, workload


def unused_pid():
    """A pid no process has, nor will have during the test: above pid_max when the protocol
    allows it, else half the pid space away from the last one given out (a pid just freed
    may be given to another test's process running meanwhile)."""
    with open("/proc/sys/kernel/pid_max") as f:
        pid_max = int(f.read())
    if pid_max < 4194304:
        return pid_max + 1
    with open("/proc/sys/kernel/ns_last_pid") as f:
        pid = (int(f.read()) + pid_max // 2) % pid_max
    while pid < 2 or os.path.exists(f"/proc/{pid}"):
        pid = (pid + 1) % pid_max
    return pid


def raw(sock_path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock_path)
    s.settimeout(20)
    return s


def read_message(s, buf=b""):
    while b"\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            return None, buf
        buf += chunk
    line, rest = buf.split(b"\n", 1)
    return json.loads(line), rest


def status(d):
    return json.loads(d.fgctl("status", "--json", check_rc=0).stdout)


def wait_for(cond, what, timeout=15):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.05)
    check(False, f"timed out waiting for {what}")


def test():
    require_root()
    # No daemon.
    r = subprocess.run([FGCTL, "--socket", "/nonexistent/fgd.sock", "status"], capture_output=True)
    check(r.returncode == 3 and b"not running" in r.stderr, f"no-daemon: {r.returncode} {r.stderr!r}")
    r = subprocess.run([FGCTL, "status"], capture_output=True,
                       env=dict(os.environ, FGD_SOCKET="/nonexistent/env.sock"))
    check(r.returncode == 3 and b"/nonexistent/env.sock" in r.stderr, "FGD_SOCKET not honoured")

    with tempfile.TemporaryDirectory() as tmp, Daemon() as d:
        # A second daemon on the same socket refuses to steal it.
        r = subprocess.run([os.environ["FGD"], "--socket", d.socket], capture_output=True, timeout=30)
        check(r.returncode != 0 and b"already" in r.stderr, f"second fgd: {r.returncode} {r.stderr!r}")
        check(os.path.exists(d.socket), "the second fgd removed the first one's socket")

        pid = unused_pid()
        r = d.fgctl("record", "-p", pid, "-t", "1", "-o", "-", check_rc=5)
        check(f"no such process: {pid}".encode() in r.stderr, f"bad-pid message: {r.stderr!r}")

        # Usage errors never reach the daemon.
        for args in (["record", "-t", "1", "-o", "-"], ["record", "-a", "-F", "0", "-o", "-"],
                     ["record", "-a", "-o", os.path.join(tmp, "x.png")], ["record", "-p", "12x", "-o", "-"],
                     ["record", "-a", "-t", "-3", "-o", "-"], ["frobnicate"]):
            r = d.fgctl(*args, check_rc=2)
            check(r.stderr.strip(), f"no message for {args}")
        # Both given: the message says they exclude each other, not that one is missing.
        r = d.fgctl("record", "-p", "1", "-a", "-t", "1", "-o", "-", check_rc=2)
        check(b"-p and -a exclude each other" in r.stderr, f"-p with -a: {r.stderr!r}")
        r = d.fgctl("record", "-t", "1", "-o", "-", check_rc=2)
        check(b"say what to record" in r.stderr, f"neither -p nor -a: {r.stderr!r}")

        # Without -o on a terminal: fgd-record-TIME.svg here, named on stderr.
        here = os.path.join(tmp, "here")
        os.mkdir(here)
        master, slave = pty.openpty()
        try:
            r = subprocess.run([FGCTL, "--socket", d.socket, "record", "-a", "-t", "0.5"],
                               stdout=slave, stderr=subprocess.PIPE, cwd=here, timeout=60)
        finally:
            os.close(master)
            os.close(slave)
        m = re.search(rb"writing (fgd-record-\d{8}-\d{6}\.svg)\n", r.stderr)
        check(r.returncode == 0 and m and os.listdir(here) == [m.group(1).decode()],
              f"record without -o on a terminal: rc {r.returncode}, {r.stderr!r}, "
              f"{os.listdir(here)}")

        # Unwritable outputs fail before recording and leave nothing behind.
        r = d.fgctl("record", "-a", "-t", "1", "-o", "/nonexistent-dir/x.svg", check_rc=6)
        check(b"cannot write /nonexistent-dir/x.svg" in r.stderr, f"unwritable: {r.stderr!r}")
        r = d.fgctl("record", "-a", "-t", "1", "-o", tmp, check_rc=6)
        check(b"directory" in r.stderr, f"directory output: {r.stderr!r}")

        # A process exiting mid-recording ends it early; its samples are kept.
        # At 999 Hz even a share of a busy machine's CPU gives far more than 100.
        with workload("fgtest-burn", 1.5) as w:
            start = time.monotonic()
            r = d.fgctl("record", "-p", w.pid, "-t", "30", "-F", "999", "-o", "-", check_rc=0)
            elapsed = time.monotonic() - start
        check(elapsed < 15, f"recording did not end when the process exited ({elapsed:.1f} s)")
        check(b"exited" in r.stderr, f"exit not reported: {r.stderr!r}")
        stacks = parse_folded(r.stdout.decode())
        check(sum(c for s, c in stacks.items() if "hot_a" in s) > 100, "samples before the exit lost")

        # Only the tracking and the always-on events are open between recordings: one each per CPU.
        baseline_events = d.fd_count("perf_event")
        check(baseline_events == 2 * os.cpu_count(), f"{baseline_events} perf events open while idle")
        # Malformed requests get an error; the connection and the daemon carry on.
        s = raw(d.socket)
        s.sendall(b"this is not json\n")
        msg, buf = read_message(s)
        check(msg["type"] == "error" and msg["error"] == "EBADMSG", f"garbage: {msg}")
        s.sendall(b'{"fgd":1,"cmd":"record","pids":[1],"frequency":"fast"}\n')
        msg, buf = read_message(s, buf)
        check(msg["type"] == "error" and "frequency" in msg["message"], f"bad field: {msg}")
        s.sendall(b'{"fgd":99,"cmd":"status"}\n')
        msg, buf = read_message(s, buf)
        check(msg["type"] == "error" and msg["error"] == "EPROTO", f"bad version: {msg}")
        s.sendall(b'{"fgd":1,"cmd":"status"}\n')
        msg, buf = read_message(s, buf)
        check(msg["type"] == "status", f"status after errors: {msg}")
        s.close()
        # Oversized: refused, connection closed.
        s = raw(d.socket)
        try:
            s.sendall(b"{" + b" " * 200000)
        except OSError:
            pass
        msg, _ = read_message(s)
        check(msg is None or msg["error"] == "EMSGSIZE", f"oversized: {msg}")
        s.close()

        # A client vanishing mid-recording releases everything it held.
        s = raw(d.socket)
        s.sendall(b'{"fgd":1,"cmd":"record","all":true,"duration_ms":60000,"frequency":999}\n')
        msg, _ = read_message(s)
        check(msg["type"] == "started", f"record: {msg}")
        check(status(d)["server"]["recordings_active"] == 1, "recording not active")
        s.close()
        wait_for(lambda: status(d)["server"]["recordings_active"] == 0, "the recording to be released")
        check(status(d)["server"]["recordings_aborted"] >= 1, "abort not counted")
        wait_for(lambda: d.fd_count("perf_event") == baseline_events, "the recording's perf events to close")
        # The only client left is the status query asking.
        wait_for(lambda: status(d)["server"]["clients"] == 1, "the vanished client's socket to close")

        # Ctrl-C stops early and still writes what was collected.
        with workload("fgtest-burn") as w:
            out = os.path.join(tmp, "ctrlc.folded")
            p = subprocess.Popen([FGCTL, "--socket", d.socket, "record", "-p", str(w.pid), "-o", out],
                                 stderr=subprocess.PIPE)
            line = p.stderr.readline()
            check(b"recording" in line, f"no start line: {line!r}")
            wait_for(lambda: any(a["samples"] > 20 for a in status(d)["recordings"]),
                     "the interrupted recording to collect samples")
            p.send_signal(signal.SIGINT)
            _, err = p.communicate(timeout=30)
            check(p.returncode == 0, f"fgctl after Ctrl-C exited {p.returncode}: {err!r}")
            stacks = parse_folded(open(out).read())
            check(sum(stacks.values()) > 10, "Ctrl-C lost the samples")

        # Two recordings at once do not disturb each other.
        with workload("fgtest-burn") as w:
            a = subprocess.Popen([FGCTL, "--socket", d.socket, "record", "-a", "-t", "2", "-o", "-"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            r = d.fgctl("record", "-p", w.pid, "-t", "2", "-o", "-", check_rc=0)
            out_a, _ = a.communicate(timeout=60)
            check(a.returncode == 0, "the whole-machine recording failed")
            mine = parse_folded(r.stdout.decode())
            check(mine and all(s.startswith("fgtest-burn;") for s in mine), "-p recording has other processes")
            everything = parse_folded(out_a.decode())
            check(any(s.startswith("fgtest-burn;") for s in everything), "-a recording lacks the workload")

        st = status(d)
        check(st["event"] in ("cycles", "cpu-clock"), f"event: {st['event']}")
        check(len(st["cpus"]) == os.cpu_count(), f"cpus: {st['cpus']}")
        check(st["server"]["bad_requests"] >= 3, "bad requests not counted")
        text = d.fgctl("status", check_rc=0).stdout.decode()
        check("event:" in text and "lost" in text, f"status text: {text}")
    check(not os.path.exists(d.socket), "socket left behind after SIGTERM")


run(test)
