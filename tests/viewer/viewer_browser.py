"""Headless chromium driven over the DevTools protocol: open, shoot, click, type, read the page.

A fixed viewport, JavaScript evaluation, real mouse and keyboard input events, and console
errors from Runtime and Log events.

Waits are built for a loaded machine (2 cores shared by several test runs, load average 5 to
8), where one software-WebGL frame of the whole robot has taken more than 30 s:

- every command waits up to :data:`COMMAND_TIMEOUT` for its reply (a reply that comes later is
  recognised by its id and dropped);
- idempotent commands (reading the page, screenshots, enabling domains) are sent again when
  their reply does not come in time, up to :data:`ATTEMPTS` times; input events and navigation
  are never repeated (a repeated click would be a second click);
- :meth:`HeadlessBrowser.wait_for` polls a condition in the page until it holds, instead of
  sleeping for a guessed time.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from tornado.websocket import websocket_connect

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--enable-unsafe-swiftshader",  # software WebGL (chromium >= 128 needs the opt-in)
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-port=0",
]
#: Longest wait for one DevTools reply [s] (a screenshot waits for a rendered frame).
COMMAND_TIMEOUT = 120.0
#: How often an idempotent command is sent before its timeout is an error.
ATTEMPTS = 3
#: Longest wait for chromium to start and print its DevTools address [s].
START_TIMEOUT = 90.0


class DevToolsTimeout(RuntimeError):
    """A DevTools command got no reply in time."""


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


class HeadlessBrowser:
    """One headless chromium process with a fresh profile, and one page in it."""

    def __init__(self, width: int = 800, height: int = 600):
        self.width, self.height = width, height
        self._profile = tempfile.mkdtemp(prefix="wbm_chromium_")
        self.process = subprocess.Popen(
            [
                CHROMIUM,
                *FLAGS,
                f"--user-data-dir={self._profile}",
                f"--window-size={width},{height}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # /usr/bin/chromium is a wrapper: stop its whole group
        )
        self._loop = asyncio.new_event_loop()
        self._ids = itertools.count(1)
        self.events: list[dict] = []
        deadline = time.monotonic() + START_TIMEOUT
        url = None
        while url is None and time.monotonic() < deadline:
            line = self.process.stderr.readline()
            if not line and self.process.poll() is not None:
                break
            match = re.search(r"DevTools listening on (ws://\S+)", line)
            url = match.group(1) if match else None
        if url is None:
            self.close()
            raise RuntimeError("chromium did not open its DevTools endpoint")
        # Drain stderr so chromium never blocks on a full pipe.
        self._drain = subprocess.Popen(
            ["cat"], stdin=self.process.stderr, stdout=subprocess.DEVNULL
        )

        async def connect():
            return await websocket_connect(url, max_message_size=64 * 2**20)

        self._socket = self._run(asyncio.wait_for(connect(), COMMAND_TIMEOUT))
        target = self._command("Target.createTarget", {"url": "about:blank"}, retry=False)
        self._session = self._command(
            "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}
        )["sessionId"]

    def _run(self, awaitable):
        return self._loop.run_until_complete(awaitable)

    def _call(self, method: str, params: dict, session: str | None, timeout: float) -> dict:
        """Send one command and read messages until its reply (events are kept)."""
        message_id = next(self._ids)
        message = {"id": message_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session

        async def send():
            await self._socket.write_message(json.dumps(message))

        async def receive(seconds: float):
            # tornado's read queue survives a cancelled read: no message is lost.
            return await asyncio.wait_for(self._socket.read_message(), seconds)

        self._run(send())
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            try:
                if remaining <= 0.0:
                    raise TimeoutError
                reply = self._run(receive(remaining))
            except TimeoutError:
                raise DevToolsTimeout(f"{method}: no reply within {timeout:g} s") from None
            if reply is None:
                raise RuntimeError("chromium closed the DevTools connection")
            data = json.loads(reply)
            if "method" in data:
                self.events.append(data)
            if data.get("id") == message_id:
                if "error" in data:
                    raise RuntimeError(f"{method}: {data['error']}")
                return data["result"]

    def _command(
        self,
        method: str,
        params: dict | None = None,
        *,
        session: str | None = None,
        retry: bool = True,
        timeout: float = COMMAND_TIMEOUT,
    ) -> dict:
        """A command; an idempotent one (``retry``) is sent again when its reply is late."""
        attempts = ATTEMPTS if retry else 1
        for attempt in range(1, attempts + 1):
            try:
                return self._call(method, params or {}, session, timeout)
            except DevToolsTimeout:
                if attempt == attempts:
                    raise

    def _page(self, method: str, params: dict | None = None, *, retry: bool = True) -> dict:
        return self._command(method, params, session=self._session, retry=retry)

    def open(self, url: str) -> None:
        """Load ``url`` in the page, then wait until the document has loaded."""
        for domain in ("Page", "Runtime", "Log"):
            self._page(f"{domain}.enable")
        self._page(
            "Emulation.setDeviceMetricsOverride",
            {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False},
        )
        self._page("Page.navigate", {"url": url}, retry=False)
        self.wait_for(
            f"location.href === {url!r} && document.readyState === 'complete'",
            what=f"{url} to load",
        )

    def evaluate(self, expression: str, *, retry: bool = True):
        """The value of a JavaScript expression in the page (JSON-serializable).

        Args:
            expression: The expression (a promise is awaited).
            retry: Whether it may be evaluated again when the reply is late: only for
                expressions without side effects.
        """
        result = self._page(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            retry=retry,
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, *, timeout: float = 120.0, what: str = ""):
        """Poll a side-effect-free expression until its value is truthy; returns the value.

        Raises:
            AssertionError: It did not hold within ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        value = None
        while True:
            try:
                value = self.evaluate(expression)
            except RuntimeError as error:  # e.g. the page is still navigating
                value = None
                last_error = str(error)
            else:
                last_error = ""
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"waited {timeout:g} s for {what or expression}; last value {value!r}"
                    + (f", last error {last_error}" if last_error else "")
                )
            time.sleep(0.2)

    def mouse(self, kind: str, x: float, y: float, buttons: int = 0) -> None:
        """One mouse event at page pixel (x, y): kind mousePressed, mouseReleased, mouseMoved."""
        params = {"type": kind, "x": x, "y": y, "button": "left", "buttons": buttons}
        if kind != "mouseMoved":
            params["clickCount"] = 1
        self._page("Input.dispatchMouseEvent", params, retry=False)

    def click(self, x: float, y: float) -> None:
        """A left click at page pixel (x, y)."""
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y, buttons=1)
        self.mouse("mouseReleased", x, y)

    def type_text(self, text: str) -> None:
        """Type text into the focused element."""
        self._page("Input.insertText", {"text": text}, retry=False)

    def key(self, key: str, code: str, key_code: int) -> None:
        """Press and release one key (e.g. "Enter", "Enter", 13)."""
        for kind in ("keyDown", "keyUp"):
            self._page(
                "Input.dispatchKeyEvent",
                {"type": kind, "key": key, "code": code, "windowsVirtualKeyCode": key_code},
                retry=False,
            )

    def pump(self, seconds: float) -> None:
        """Read DevTools events for a while (console messages arrive as events)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.evaluate("1")
            time.sleep(0.1)

    def screenshot(self, path: Path) -> Path:
        """Save a PNG of the page (sent again when the frame is late)."""
        result = self._page("Page.captureScreenshot", {"format": "png"})
        path.write_bytes(base64.b64decode(result["data"]))
        return path

    def console_errors(self) -> list[str]:
        """Exceptions, console errors and error log entries the page reported so far."""
        errors = []
        for event in self.events:
            params = event.get("params", {})
            if event["method"] == "Runtime.exceptionThrown":
                errors.append(json.dumps(params.get("exceptionDetails", {}))[:500])
            elif event["method"] == "Runtime.consoleAPICalled" and params.get("type") in (
                "error",
                "assert",
            ):
                errors.append(json.dumps(params.get("args", []))[:500])
            elif (
                event["method"] == "Log.entryAdded"
                and params.get("entry", {}).get("level") == "error"
            ):
                errors.append(json.dumps(params.get("entry", {}))[:500])
        return errors

    def close(self) -> None:
        """Stop every process of the browser (its own process group) and drop the profile."""
        group = self.process.pid
        for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(group, sig)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and _group_alive(group):
                self.process.poll()  # reap the wrapper so it does not count as alive
                time.sleep(0.1)
            if not _group_alive(group):
                break
        self.process.wait(timeout=5.0)
        drain = getattr(self, "_drain", None)
        if drain is not None:
            drain.wait(timeout=5.0)
        self._loop.close()
        shutil.rmtree(self._profile, ignore_errors=True)
