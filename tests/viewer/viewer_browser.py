"""Headless chromium driven over the DevTools protocol: open, shoot, click, type, read errors.

A copy of tests/state_publisher/browser.py (which goes away with the old viewer) with what the
browser-viewer tests need beside it: a fixed viewport, JavaScript evaluation, real mouse and
keyboard input events, and console errors from Runtime and Log events.
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
        deadline = time.monotonic() + 30.0
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

        self._socket = self._run(connect())
        target = self._call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self._session = self._call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]

    def _run(self, awaitable):
        return self._loop.run_until_complete(awaitable)

    def _call(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        message_id = next(self._ids)
        message = {"id": message_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session

        async def send():
            await self._socket.write_message(json.dumps(message))

        async def receive():
            return await asyncio.wait_for(self._socket.read_message(), 30.0)

        self._run(send())
        while True:
            reply = self._run(receive())
            if reply is None:
                raise RuntimeError("chromium closed the DevTools connection")
            data = json.loads(reply)
            if "method" in data:
                self.events.append(data)
            if data.get("id") == message_id:
                if "error" in data:
                    raise RuntimeError(f"{method}: {data['error']}")
                return data["result"]

    def open(self, url: str) -> None:
        self._call("Page.enable", session=self._session)
        self._call("Runtime.enable", session=self._session)
        self._call("Log.enable", session=self._session)
        self._call(
            "Emulation.setDeviceMetricsOverride",
            {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False},
            session=self._session,
        )
        self._call("Page.navigate", {"url": url}, session=self._session)

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (JSON-serializable)."""
        result = self._call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            session=self._session,
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def mouse(self, kind: str, x: float, y: float, buttons: int = 0) -> None:
        """One mouse event at page pixel (x, y): kind mousePressed, mouseReleased, mouseMoved."""
        params = {"type": kind, "x": x, "y": y, "button": "left", "buttons": buttons}
        if kind != "mouseMoved":
            params["clickCount"] = 1
        self._call("Input.dispatchMouseEvent", params, session=self._session)

    def click(self, x: float, y: float) -> None:
        """A left click at page pixel (x, y)."""
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y, buttons=1)
        self.mouse("mouseReleased", x, y)

    def drag(self, start, end, steps: int = 20, pause: float = 0.03) -> None:
        """Press at ``start``, move in steps to ``end``, release (page pixels)."""
        self.mouse("mouseMoved", *start)
        time.sleep(pause)
        self.mouse("mousePressed", *start, buttons=1)
        for i in range(1, steps + 1):
            x = start[0] + (end[0] - start[0]) * i / steps
            y = start[1] + (end[1] - start[1]) * i / steps
            time.sleep(pause)
            self.mouse("mouseMoved", x, y, buttons=1)
        time.sleep(pause)
        self.mouse("mouseReleased", *end)

    def type_text(self, text: str) -> None:
        """Type text into the focused element."""
        self._call("Input.insertText", {"text": text}, session=self._session)

    def key(self, key: str, code: str, key_code: int) -> None:
        """Press and release one key (e.g. "Enter", "Enter", 13)."""
        for kind in ("keyDown", "keyUp"):
            self._call(
                "Input.dispatchKeyEvent",
                {"type": kind, "key": key, "code": code, "windowsVirtualKeyCode": key_code},
                session=self._session,
            )

    def pump(self, seconds: float) -> None:
        """Read DevTools events for a while (console messages arrive as events)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.evaluate("1")
            time.sleep(0.1)

    def screenshot(self, path: Path) -> Path:
        result = self._call("Page.captureScreenshot", {"format": "png"}, session=self._session)
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
