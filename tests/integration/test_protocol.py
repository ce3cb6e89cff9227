# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every request gets exactly one reply, whatever state its connection is in
(docs/PROTOCOL.md, "One reply per request"). Each command is sent by hand, as
a raw JSON line, to a connection that is idle, recording, streaming a result
or closing, and the replies are read back in order, each with a deadline, so
that a missing reply fails the test instead of hanging it. (A connection
admitted past a full client table is tested by test_client_slots.py.)"""

import json
import socket

from fgdtest import Daemon, check, require_root, run, wait_for, workload

STATUS = {"cmd": "status"}
TOP = {"cmd": "top", "limit": 5}
SNAPSHOT = {"cmd": "snapshot", "format": "folded"}
STOP = {"cmd": "stop"}


def line(request):
    return (json.dumps(dict({"fgd": 1}, **request)) + "\n").encode()


def expect(c, kind, what):
    msg = c.reply(what)
    check(msg is not None, f"{what}: the connection ended instead of a {kind} reply")
    check(msg["type"] == kind, f"{what}: expected {kind}, got {msg}")
    return msg


def expect_error(c, code, what):
    msg = expect(c, "error", what)
    check(msg["error"] == code, f"{what}: expected {code}, got {msg}")
    return msg


def expect_result(c, reason, what):
    msg = expect(c, "result", what)
    check(msg["reason"] == reason, f"{what}: result for {msg['reason']}, expected {reason}")
    data, _ = c.result(what)
    return data


def expect_end_of_connection(c, what):
    msg = c.message(what)
    check(msg is None, f"{what}: a reply after the connection's last one: {msg}")


def idle(d, w):
    with d.conn() as c:
        c.send(STATUS)
        expect(c, "status", "status on an idle connection")
        c.send(TOP)
        expect(c, "top", "top on an idle connection")
        c.send(SNAPSHOT)
        expect_result(c, "snapshot", "snapshot on an idle connection")
        # Nothing to stop: an error that says so, not silence.
        c.send(STOP)
        err = expect_error(c, "ENOENT", "stop on an idle connection")
        check("idle" in err["message"], f"the error does not name the state: {err}")
        c.send({"cmd": "record", "pids": [w.pid], "duration_ms": 300})
        expect(c, "started", "record on an idle connection")
        expect_result(c, "completed", "a 300 ms recording")
        # A stop that comes just after the recording completed is answered after its result.
        c.send(STOP)
        err = expect_error(c, "ENOENT", "stop after the recording completed")
        check("completed" in err["message"], f"the error does not say the recording ended: {err}")
        c.send(b"not json\n")
        expect_error(c, "EBADMSG", "a malformed request")


def recording(d, w):
    with d.conn() as c:
        c.send({"cmd": "record", "pids": [w.pid]})
        expect(c, "started", "record")
        # One-message replies come at once, between the progress messages.
        c.send(STATUS)
        st = expect(c, "status", "status while recording")
        check(len(st["recordings"]) >= 1, f"status does not show the recording: {st['recordings']}")
        c.send(TOP)
        expect(c, "top", "top while recording")
        # A second result cannot interleave with the recording's own.
        c.send(SNAPSHOT)
        expect_error(c, "EBUSY", "snapshot while recording")
        c.send({"cmd": "record", "pids": [w.pid]})
        expect_error(c, "EBUSY", "a second record while recording")
        # stop ends it: the result is the reply to the record and to the stop.
        c.send(STOP)
        expect_result(c, "stopped", "stop while recording")
        c.send(STATUS)
        expect(c, "status", "status once the recording's result was sent")


def streaming(d, w):
    with workload("fgtest-stackstorm") as storm, d.conn(timeout=60) as c:
        # An SVG of unique stacks: megabytes, far more than fgd queues (256 KiB) and
        # the socket holds, so it is still streaming while nothing of it is read.
        c.send({"cmd": "record", "pids": [storm.pid], "duration_ms": 2000, "frequency": 2999,
                "call_graph": "fp", "format": "svg"})
        expect(c, "started", "record of the SVG")
        expect(c, "result", "the SVG recording's result")
        for request in (STATUS, STOP, SNAPSHOT, TOP, {"cmd": "record", "pids": [w.pid]}, STOP):
            c.send(request)
        svg, _ = c.result("the SVG")
        print(f"the SVG: {len(svg)} bytes")
        check(len(svg) > 2 << 20, f"the SVG is {len(svg)} bytes: too small to have still been "
                                  "streaming when the requests were sent")
        # Then each request in turn, as on an idle connection.
        expect(c, "status", "status sent while streaming")
        err = expect_error(c, "ENOENT", "stop sent while streaming a completed recording")
        check("completed" in err["message"], f"the error does not say the recording ended: {err}")
        expect_result(c, "snapshot", "snapshot sent while streaming")
        expect(c, "top", "top sent while streaming")
        expect(c, "started", "record sent while streaming")
        expect_result(c, "stopped", "the stop after that record")


def closing(d):
    # An oversized request closes the connection: what follows it is never read.
    with d.conn() as c:
        try:
            c.send(b"{" + b" " * 70000 + b"\n" + line(STATUS))
        except OSError:
            pass  # fgd may have closed already
        expect_error(c, "EMSGSIZE", "an oversized request")
        expect_end_of_connection(c, "after EMSGSIZE")
    # Requests sent before the end of the input are all answered, then the connection closes.
    with d.conn() as c:
        c.send(line(STATUS) + line(STATUS) + line(TOP))
        c.sock.shutdown(socket.SHUT_WR)
        expect(c, "status", "the first of two pipelined status requests")
        expect(c, "status", "the second of two pipelined status requests")
        expect(c, "top", "top before the end of the input")
        expect_end_of_connection(c, "after the end of the input")
    # A request cut short by the end of the input gets an error, not silence.
    with d.conn() as c:
        c.send(line(STATUS)[:-1])
        c.sock.shutdown(socket.SHUT_WR)
        expect_error(c, "EBADMSG", "a request without its newline at the end of the input")
        expect_end_of_connection(c, "after the cut request")


def test():
    require_root()
    with Daemon(["--always-on-frequency", "99", "--slice-seconds", "1"]) as d, \
            workload("fgtest-burn") as w:
        wait_for(lambda: d.fgctl("top").returncode == 0, "always-on samples to query")
        idle(d, w)
        recording(d, w)
        streaming(d, w)
        closing(d)
        st = d.status()["server"]
        check(st["recordings_active"] == 0, f"a recording was left running: {st}")


run(test)
