# SPDX-License-Identifier: LGPL-2.1-or-later
"""fgd under systemd's protocols, with the real tools that work without systemd as PID 1:
socket activation through systemd-socket-activate, sd_notify messages read from a
datagram NOTIFY_SOCKET this test owns, and SIGHUP reloads of fgd.conf."""

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from fgdtest import FGD, FGCTL, TestFailure, check, require_root, run, skip, wait_for, workload


class Notify:
    """A datagram socket standing in for systemd's notification socket."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.messages = []  # every datagram so far, split into assignments

    def wait_for(self, pred, what, timeout=30, proc=None, log=None):
        """Reads datagrams until pred(assignments of one datagram) holds; returns them."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc is not None and proc.poll() is not None:
                raise TestFailure(f"fgd exited ({proc.returncode}) waiting for {what}:\n{log()}")
            self.sock.settimeout(max(0.05, min(0.5, deadline - time.monotonic())))
            try:
                data = self.sock.recv(4096).decode()
            except socket.timeout:
                continue
            fields = dict(line.split("=", 1) for line in data.split("\n") if "=" in line)
            self.messages.append(fields)
            if pred(fields):
                return fields
        raise TestFailure(f"no {what} within {timeout} s; got {self.messages}")

    def close(self):
        self.sock.close()


class Fgd:
    """fgd with a NOTIFY_SOCKET we read, optionally behind systemd-socket-activate."""

    def __init__(self, tmp, args, env=None, activate_socket=None):
        self.tmp = tmp
        self.notify = Notify(os.path.join(tmp, "notify"))
        self.log_path = os.path.join(tmp, "fgd.log")
        self.log = open(self.log_path, "w")
        env = dict(os.environ, NOTIFY_SOCKET=self.notify.path, **(env or {}))
        cmd = [FGD] + args
        if activate_socket:
            # It binds the socket, waits for the first client, then execs fgd in its place.
            cmd = ["systemd-socket-activate", "-l", activate_socket,
                   "-E", "NOTIFY_SOCKET"] + [a for k in (env or {}) for a in ("-E", k)] + cmd
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, env=env)

    def logs(self):
        self.log.flush()
        with open(self.log_path) as f:
            return f.read()

    def wait_for(self, pred, what, timeout=30):
        return self.notify.wait_for(pred, what, timeout, self.proc, self.logs)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise TestFailure(f"fgd did not exit on SIGTERM:\n{self.logs()}")
        return self.proc.returncode

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.notify.close()
        self.log.close()


def status(sock):
    r = subprocess.run([FGCTL, "--socket", sock, "status", "--json"], capture_output=True,
                       timeout=60)
    check(r.returncode == 0, f"fgctl status failed: {r.stderr.decode(errors='replace')}")
    return json.loads(r.stdout)


def wait_path(path, proc, timeout=30):
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        check(proc.poll() is None, f"exited with {proc.returncode} before {path} appeared")
        check(time.monotonic() < deadline, f"{path} did not appear within {timeout} s")
        time.sleep(0.05)


def test_socket_activation(tmp):
    if not shutil.which("systemd-socket-activate"):
        raise TestFailure("systemd-socket-activate is missing: scripts/install-deps.sh --tests")
    sock = os.path.join(tmp, "activated.sock")
    unused = os.path.join(tmp, "unused.sock")
    f = Fgd(tmp, ["--config", os.devnull, "--socket", unused], activate_socket=sock)
    try:
        wait_path(sock, f.proc)
        # The first client is what makes systemd-socket-activate exec fgd.
        st = status(sock)
        check(st["socket"] == sock, f"status reports socket {st['socket']}, not {sock}")
        check(st["pid"] == f.proc.pid, "status came from another process than the activated fgd")
        check(not os.path.exists(unused), "fgd bound its own socket despite the passed one")
        f.wait_for(lambda m: m.get("READY") == "1", "READY=1")
        check(f.stop() == 0, f"fgd exited with {f.proc.returncode}:\n{f.logs()}")
        # The passed socket's file belongs to whoever passed it.
        check(os.path.exists(sock), "fgd removed the socket systemd passed it")
    finally:
        f.close()
    print("socket activation: ok")


def test_notify(tmp):
    sock = os.path.join(tmp, "notify-test.sock")
    f = Fgd(tmp, ["--config", os.devnull, "--socket", sock], env={"WATCHDOG_USEC": "1000000"})
    try:
        ready = f.wait_for(lambda m: "READY" in m, "READY=1")
        check(ready["READY"] == "1", f"READY={ready['READY']}")
        check(os.path.exists(sock), "READY=1 before the socket exists")
        st = f.wait_for(lambda m: "samples/s" in m.get("STATUS", ""), "a STATUS= summary")
        for word in ("Hz", "samples/s", "lost", "RSS"):
            check(word in st["STATUS"], f"STATUS= lacks {word}: {st['STATUS']}")
        # Two pings: WATCHDOG=1 keeps coming, not once.
        for n in range(2):
            f.wait_for(lambda m: m.get("WATCHDOG") == "1", f"WATCHDOG=1 #{n + 1}", timeout=10)
        check(f.stop() == 0, f"fgd exited with {f.proc.returncode} on SIGTERM:\n{f.logs()}")
        check(any(m.get("STOPPING") == "1" for m in f.notify.messages[-5:]) or
              _drain_for_stopping(f), "no STOPPING=1 after SIGTERM")
    finally:
        f.close()
    print("sd_notify: ok")


def _drain_for_stopping(f):
    try:
        f.notify.wait_for(lambda m: m.get("STOPPING") == "1", "STOPPING=1", timeout=5)
        return True
    except TestFailure:
        return False


def write(path, text):
    with open(path, "w") as fp:
        fp.write(text)


def burn_samples(sock, *args):
    """fgtest-burn's always-on samples over the last 10 minutes, and fgctl's stderr."""
    r = subprocess.run([FGCTL, "--socket", sock, "snapshot", "--last", "10m", "--comm", "^fgtest-burn$",
                        "-o", "-", *args], capture_output=True, timeout=60)
    if r.returncode != 0:
        return 0, r.stderr.decode(errors="replace")
    return sum(int(line.rsplit(" ", 1)[1]) for line in r.stdout.decode().splitlines()), \
        r.stderr.decode(errors="replace")


def test_reload(tmp):
    sock = os.path.join(tmp, "reload.sock")
    conf = os.path.join(tmp, "fgd.conf")
    state = os.path.join(tmp, "state")
    # The socket comes from the file here, so that a reload can try to move it.
    base = f"StateDirectory={state}\nSliceSec=1\n"
    write(conf, f"[fgd]\nSocket={sock}\nFrequency=123\nCallGraph=fp\nAlwaysOnFrequency=99\n{base}")
    f = Fgd(tmp, ["--config", conf])
    try:
        f.wait_for(lambda m: m.get("READY") == "1", "READY=1")
        st = status(sock)
        check(st["default_frequency"] == 123, f"default_frequency {st['default_frequency']}, not 123")
        check(st["call_graph"] == "fp", f"call_graph {st['call_graph']}")
        always_on = st["always_on"]
        check(always_on["call_graph"] == "fp" and always_on["frequency"] == 99, f"always-on: {always_on}")

        with workload("fgtest-burn"):
            before = wait_for(lambda: (n := burn_samples(sock)[0]) > 200 and n,
                              "fgtest-burn in the always-on window")

            # Recording defaults apply at once, and so do the always-on settings: a new sampler,
            # the old one's slices on disk.
            write(conf, f"[fgd]\nFrequency=321\nCallGraph=dwarf\nSocket={sock}.elsewhere\n"
                        f"AlwaysOnFrequency=49\n{base}")
            f.proc.send_signal(signal.SIGHUP)
            f.wait_for(lambda m: m.get("RELOADING") == "1", "RELOADING=1")
            f.wait_for(lambda m: m.get("READY") == "1", "READY=1 after the reload")
            st = status(sock)
            check(st["default_frequency"] == 321, f"after reload: default_frequency {st['default_frequency']}")
            check(st["call_graph"] == "dwarf", f"after reload: call_graph {st['call_graph']}")
            check(st["socket"] == sock, "the socket moved on reload")
            check(not os.path.exists(sock + ".elsewhere"), "a reload bound the new Socket=")
            check("socket cannot move" in f.logs(), f"no word on the refused Socket=:\n{f.logs()}")
            now_on = st["always_on"]
            check(now_on["frequency"] == 49 and now_on["call_graph"] == "dwarf",
                  f"after reload the always-on sampling is {now_on}")
            check(now_on["history"]["directory"] == state, f"after reload: {now_on['history']}")
            # Nothing sampled before the reload is lost: it is read from the history, at its rate.
            after, err = burn_samples(sock)
            print(f"fgtest-burn: {before} samples before the reload, {after} after")
            check(after >= before, f"{before} samples before the reload, {after} after:\n{err}")
            check("another sampling rate than 49 Hz" in err, f"no word on the 99 Hz history: {err}")

        # A state directory fgd cannot use: it samples on without a history, as at start. Then,
        # with no history, applying new always-on settings would lose the window: kept, and said.
        blocker = os.path.join(tmp, "not-a-directory")
        write(blocker, "")
        broken = (f"[fgd]\nSocket={sock}\nFrequency=321\nCallGraph=dwarf\nSliceSec=1\n"
                  f"StateDirectory={blocker}/state\n")
        slices = 0
        for more in ("AlwaysOnFrequency=49\n", "AlwaysOnFrequency=19\nStackDump=16384\n"):
            write(conf, broken + more)
            f.proc.send_signal(signal.SIGHUP)
            f.wait_for(lambda m: m.get("RELOADING") == "1", "RELOADING=1")
            f.wait_for(lambda m: m.get("READY") == "1", "READY=1 after the reload")
            if not slices:
                slices = wait_for(lambda: (n := status(sock)["always_on"]["slices"]) >= 3 and n,
                                  "a few 1 s slices in the window")
        now_on = status(sock)["always_on"]
        check("history" not in now_on and now_on["frequency"] == 49 and now_on["slices"] >= slices,
              f"with no history to hand the window to, a reload replaced it: {now_on}, "
              f"{slices} slices before")
        check("would lose the window in memory" in f.logs(), f"no word on the kept settings:\n{f.logs()}")

        # A broken file: everything stays as it was, and the log names the line.
        write(conf, "[fgd]\nFrequency=999\nNoSuchKey=1\nCallGraph=sideways\n")
        f.proc.send_signal(signal.SIGHUP)
        f.wait_for(lambda m: m.get("RELOADING") == "1", "RELOADING=1")
        f.wait_for(lambda m: m.get("READY") == "1", "READY=1 after the failed reload")
        st = status(sock)
        check(st["default_frequency"] == 321, f"a broken config changed the frequency to {st['default_frequency']}")
        check(st["call_graph"] == "dwarf", "a broken config changed the call graph")
        logs = f.logs()
        check(f"{conf}:3: unknown key NoSuchKey" in logs, f"no file:line for the unknown key:\n{logs}")
        check(f"{conf}:4: CallGraph=sideways" in logs, f"no file:line for the bad value:\n{logs}")

        check(f.stop() == 0, f"fgd exited with {f.proc.returncode}:\n{f.logs()}")
    finally:
        f.close()

    # The command line wins over the file, at start and on reload.
    for name in ("notify", "fgd.log"):
        os.unlink(os.path.join(tmp, name))
    write(conf, "[fgd]\nFrequency=500\n")
    f = Fgd(tmp, ["--config", conf, "--socket", sock, "-F", "77"])
    try:
        f.wait_for(lambda m: m.get("READY") == "1", "READY=1")
        check(status(sock)["default_frequency"] == 77, "-F did not override Frequency=")
        f.proc.send_signal(signal.SIGHUP)
        f.wait_for(lambda m: m.get("RELOADING") == "1", "RELOADING=1")
        f.wait_for(lambda m: m.get("READY") == "1", "READY=1 after the reload")
        check(status(sock)["default_frequency"] == 77, "-F lost to Frequency= on reload")
        check(f.stop() == 0, f"fgd exited with {f.proc.returncode}:\n{f.logs()}")
    finally:
        f.close()
    print("reload: ok")


def test_bad_config_at_start(tmp):
    sock = os.path.join(tmp, "bad.sock")
    conf = os.path.join(tmp, "bad.conf")
    write(conf, "Frequency=0\n")
    r = subprocess.run([FGD, "--config", conf, "--socket", sock], capture_output=True, timeout=60)
    check(r.returncode == 2, f"fgd with a bad config exited {r.returncode}, expected 2")
    check(f"{conf}:1: Frequency=0" in r.stderr.decode(), f"no file:line: {r.stderr.decode()}")
    r = subprocess.run([FGD, "--config", os.path.join(tmp, "missing.conf"), "--socket", sock],
                       capture_output=True, timeout=60)
    check(r.returncode == 2, f"fgd with a missing --config exited {r.returncode}, expected 2")
    check(not os.path.exists(sock), "a failed start left a socket")
    print("bad config at start: ok")


def main():
    require_root()
    tmp = tempfile.mkdtemp(prefix="fgd-systemd-")
    try:
        test_bad_config_at_start(tmp)
        test_socket_activation(tmp)
        for name in os.listdir(tmp):
            os.unlink(os.path.join(tmp, name))
        test_notify(tmp)
        for name in os.listdir(tmp):
            os.unlink(os.path.join(tmp, name))
        test_reload(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


run(main)
