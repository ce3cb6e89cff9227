# SPDX-License-Identifier: LGPL-2.1-or-later
"""A minimal W3C WebDriver client for browser tests, Python 3 stdlib only.

    with webdriver.chromium_session() as s:
        s.navigate("file:///tmp/x.svg")
        s.find("#search").click()
        s.send_alert_text("^foo")
        s.accept_alert()

chromium_session() starts chromedriver on a free port with a fresh profile
directory and always tears everything down: it deletes the session, then
ends chromedriver's process group (chromium runs inside it) and removes the
profile. Without chromium or chromedriver the calling test exits 77 (skip).
"""

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

CHROMIUM = os.environ.get("FG_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("FG_CHROMEDRIVER", "/usr/bin/chromedriver")
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]

# The W3C key under which an element reference travels.
ELEMENT_KEY = "element-6066-11e4-a52e-4f735466cecf"

# Key codes from the WebDriver spec's keyboard table.
KEY_CONTROL = "\ue009"
KEY_ESCAPE = "\ue00c"

SKIP = 77


class WebDriverError(Exception):
    """An error response from the driver: its W3C error code and message."""

    def __init__(self, error, message, status=None):
        super().__init__(f"{error}: {message}")
        self.error = error
        self.message = message
        self.status = status


def skip(reason):
    print(f"SKIP: {reason}", file=sys.stderr)
    sys.exit(SKIP)


def _require_browser():
    for path, what in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromedriver")):
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            skip(f"{what} not found at {path} (set FG_CHROMIUM / FG_CHROMEDRIVER)")


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(port, proc, timeout):
    """Polls until chromedriver accepts connections; fails early if it died."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"chromedriver exited with status {proc.returncode} before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"chromedriver did not listen on port {port} within {timeout} s")
        time.sleep(0.05)


class Element:
    def __init__(self, session, element_id):
        self.session = session
        self.id = element_id

    def to_json(self):
        return {ELEMENT_KEY: self.id}

    def _path(self, suffix=""):
        return f"/element/{self.id}{suffix}"

    def click(self):
        self.session.request("POST", self._path("/click"), {})

    def text(self):
        return self.session.request("GET", self._path("/text"))

    def attribute(self, name):
        return self.session.request("GET", self._path(f"/attribute/{name}"))

    def is_displayed(self):
        return self.session.request("GET", self._path("/displayed"))

    def send_keys(self, text):
        self.session.request("POST", self._path("/value"), {"text": text})

    def find(self, css):
        return self.session._element(
            self.session.request("POST", self._path("/element"), {"using": "css selector", "value": css}))

    def find_all(self, css):
        found = self.session.request("POST", self._path("/elements"), {"using": "css selector", "value": css})
        return [self.session._element(e) for e in found]


class Session:
    def __init__(self, base_url, timeout=60):
        self.base_url = base_url
        self.timeout = timeout
        self.id = None
        # Never route localhost requests through a proxy from the environment.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def _raw(self, method, path, body):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base_url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json; charset=utf-8"})
        try:
            with self._opener.open(req, timeout=self.timeout) as resp:
                payload = resp.read()
        except urllib.error.HTTPError as e:
            payload = e.read()
            try:
                value = json.loads(payload)["value"]
                raise WebDriverError(value.get("error", "unknown error"), value.get("message", ""),
                                     e.code) from None
            except (ValueError, KeyError, TypeError, AttributeError):
                raise WebDriverError("unknown error", f"HTTP {e.code}: {payload[:200]!r}", e.code) from None
        return json.loads(payload)["value"] if payload else None

    def request(self, method, path, body=None):
        """A command within the session; path is relative to /session/<id>."""
        return self._raw(method, f"/session/{self.id}{path}", body)

    def start(self, capabilities):
        value = self._raw("POST", "/session", {"capabilities": {"alwaysMatch": capabilities}})
        self.id = value["sessionId"]
        return value

    def delete(self):
        if self.id is not None:
            try:
                self._raw("DELETE", f"/session/{self.id}", None)
            finally:
                self.id = None

    def _element(self, value):
        return Element(self, value[ELEMENT_KEY])

    def _unwrap(self, value):
        if isinstance(value, dict) and ELEMENT_KEY in value:
            return self._element(value)
        if isinstance(value, list):
            return [self._unwrap(v) for v in value]
        if isinstance(value, dict):
            return {k: self._unwrap(v) for k, v in value.items()}
        return value

    def _wrap(self, value):
        if isinstance(value, Element):
            return value.to_json()
        if isinstance(value, (list, tuple)):
            return [self._wrap(v) for v in value]
        return value

    def navigate(self, url):
        self.request("POST", "/url", {"url": url})

    def title(self):
        return self.request("GET", "/title")

    def set_window_size(self, width, height):
        self.request("POST", "/window/rect", {"width": width, "height": height})

    def find(self, css):
        return self._element(self.request("POST", "/element", {"using": "css selector", "value": css}))

    def find_all(self, css):
        found = self.request("POST", "/elements", {"using": "css selector", "value": css})
        return [self._element(e) for e in found]

    def execute(self, script, *args):
        """Runs script (a function body; use `return`) with arguments; elements round-trip."""
        value = self.request("POST", "/execute/sync", {"script": script, "args": self._wrap(list(args))})
        return self._unwrap(value)

    def alert_text(self):
        return self.request("GET", "/alert/text")

    def send_alert_text(self, text):
        self.request("POST", "/alert/text", {"text": text})

    def accept_alert(self):
        self.request("POST", "/alert/accept", {})

    def dismiss_alert(self):
        self.request("POST", "/alert/dismiss", {})

    def wait_for_alert(self, timeout=10):
        """Returns the open prompt's text, polling until one is open."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self.alert_text()
            except WebDriverError as e:
                if e.error != "no such alert" or time.monotonic() > deadline:
                    raise
            time.sleep(0.05)

    def perform_actions(self, actions):
        self.request("POST", "/actions", {"actions": actions})

    def release_actions(self):
        self.request("DELETE", "/actions")

    def press_keys(self, *keys):
        """Presses keys down in order and releases them in reverse: a chord such as Ctrl-F."""
        steps = [{"type": "keyDown", "value": k} for k in keys]
        steps += [{"type": "keyUp", "value": k} for k in reversed(keys)]
        self.perform_actions([{"type": "key", "id": "keyboard", "actions": steps}])

    def hover(self, element):
        self.perform_actions([{
            "type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
            "actions": [{"type": "pointerMove", "duration": 0, "origin": element.to_json(),
                         "x": 0, "y": 0}],
        }])


def _stop(proc):
    """Ends chromedriver's process group, which holds the chromium it started."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
    # Browser processes may outlive chromedriver in its group.
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if proc.poll() is None:
        proc.wait(timeout=10)


@contextlib.contextmanager
def chromium_session(startup_timeout=30, extra_args=()):
    """Yields a Session in headless chromium; always cleans up."""
    _require_browser()
    tmp = tempfile.mkdtemp(prefix="fg-webdriver-")
    log_path = os.path.join(tmp, "chromedriver.log")
    port = _free_port()
    session = None
    with open(log_path, "wb") as log:
        # Its own process group, so teardown can reach chromium too.
        proc = subprocess.Popen([CHROMEDRIVER, f"--port={port}"], stdin=subprocess.DEVNULL,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            _wait_for_port(port, proc, startup_timeout)
            session = Session(f"http://127.0.0.1:{port}")
            try:
                session.start({
                    "browserName": "chrome",
                    # Leave prompts open for the test to answer, never auto-dismiss them.
                    "unhandledPromptBehavior": "ignore",
                    "goog:chromeOptions": {
                        "binary": CHROMIUM,
                        "args": CHROMIUM_ARGS + [f"--user-data-dir={os.path.join(tmp, 'profile')}"]
                        + list(extra_args),
                    },
                })
            except (WebDriverError, OSError) as e:
                log.flush()
                with open(log_path, "rb") as f:
                    tail = f.read()[-2000:].decode(errors="replace")
                raise RuntimeError(f"failed to start a chromium session: {e}\nchromedriver log:\n{tail}") from e
            yield session
        finally:
            if session is not None:
                try:
                    session.delete()
                except (WebDriverError, OSError):
                    pass
            _stop(proc)
            shutil.rmtree(tmp, ignore_errors=True)
