"""Running a launch plan: one process per node, output prefixed, clean shutdown.

Each process runs in its own process group. Ctrl-C (SIGINT) or SIGTERM to the launcher is
forwarded as SIGINT to every process; those still alive after ``grace`` seconds get SIGTERM, then
SIGKILL. Processes start with SIGINT ignored (:func:`_ignore_interrupts`): a Python node only
handles it once rclpy installs its handler (``rclpy.init``), so a Ctrl-C that lands while it is
still importing its modules does not print a ``KeyboardInterrupt`` traceback; it ends at the
SIGTERM that follows. The launch ends when every process has exited, or when a required process
(``on_exit: shutdown``) exits, which shuts the others down the same way.

The launch's exit code: 0 after Ctrl-C or SIGTERM, or when a required process ended with 0 (the
demo's scenario at its end); otherwise the exit status of the first process that ended on its own
with a failure (a node that refused to start exits with 2; one killed by signal N counts as
128 + N, as a shell reports it). Processes stopped by the launcher's shutdown do not count.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import TextIO

from wbm_bringup.launching.description import ProcessSpec


def exit_status(code: int) -> int:
    """A process return code as a shell exit status: killed by signal N gives 128 + N."""
    return 128 - code if code < 0 else code


def describe_exit(code: int) -> str:
    """``exited with code 2`` or ``was killed by SIGKILL``."""
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"was killed by {name}"
    return f"exited with code {code}"


def _ignore_interrupts() -> None:
    """In a child before it executes its program: start with SIGINT ignored (module docstring)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class LaunchRunner:
    """Starts and supervises the processes of a launch plan.

    Args:
        processes: What to start.
        grace: Seconds a process gets to exit after SIGINT, then again after SIGTERM [s].
        stream: Where process output (prefixed with ``[label]``) and launcher messages go.
    """

    def __init__(
        self, processes: Sequence[ProcessSpec], *, grace: float = 5.0, stream: TextIO | None = None
    ):
        self.specs = list(processes)
        self.grace = grace
        self.stream = stream or sys.stdout
        self.children: list[subprocess.Popen] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._stream_closed = False

    def say(self, message: str) -> None:
        """Write a launcher message."""
        self._write(f"[wbm launch] {message}\n")

    def _write(self, text: str) -> None:
        """Write to the stream; once its reader is gone, nothing more is written.

        ``wbm launch ... | head`` closes the pipe early: the processes' output is still read
        (:meth:`_pump`), or a process would block writing to its full pipe and not stop.
        """
        with self._lock:
            if self._stream_closed:
                return
            try:
                self.stream.write(text)
                self.stream.flush()
            except (OSError, ValueError):  # BrokenPipeError, or the stream closed
                self._stream_closed = True

    def _pump(self, spec: ProcessSpec, child: subprocess.Popen) -> None:
        assert child.stdout is not None
        for line in child.stdout:
            if spec.output in ("screen", "both"):
                self._write(f"[{spec.label}] {line}")

    def start(self) -> None:
        """Start every process."""
        for spec in self.specs:
            environment = {**os.environ, **spec.environment, "PYTHONUNBUFFERED": "1"}
            child = subprocess.Popen(
                spec.command,
                env=environment,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                text=True,
                errors="replace",  # bytes that are not UTF-8 must not stop the reading
                bufsize=1,
                start_new_session=True,
                preexec_fn=_ignore_interrupts,
            )
            self.children.append(child)
            self.say(f"started {spec.label} [pid {child.pid}]")
            thread = threading.Thread(target=self._pump, args=(spec, child), daemon=True)
            thread.start()
            self._threads.append(thread)

    def request_stop(self, *_: object) -> None:
        """Ask the supervision loop to shut everything down (signal-handler safe)."""
        self._stop.set()

    def wait(self, timeout: float | None = None) -> int:
        """Supervise until the launch ends; returns the launch's exit code.

        0 when every process exited with 0 or the launch was stopped on request; otherwise the
        exit status of the first process that ended on its own with a failure (see the module
        docstring).
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        exit_code = 0
        reported: set[int] = set()
        while not self._stop.is_set():
            alive = 0
            for spec, child in zip(self.specs, self.children, strict=True):
                code = child.poll()
                if code is None:
                    alive += 1
                    continue
                if child.pid in reported:
                    continue
                reported.add(child.pid)
                self.say(f"{spec.label} {describe_exit(code)}")
                if code != 0 and exit_code == 0:
                    exit_code = exit_status(code)
                if spec.required:
                    self.say(f"{spec.label} is required: shutting the launch down")
                    if code != 0:
                        self.say(
                            f"the launch ends because {spec.label} failed "
                            f"(exit code {exit_status(code)}); its output above says why"
                        )
                    self._stop.set()
            if alive == 0:
                break
            if deadline is not None and time.monotonic() > deadline:
                self.say("launch duration reached: shutting down")
                break
            self._stop.wait(0.05)
        self.shutdown()
        return exit_code

    def shutdown(self) -> None:
        """SIGINT every live process group, then SIGTERM, then SIGKILL after grace periods."""
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
            live = [child for child in self.children if child.poll() is None]
            if not live:
                break
            for child in live:
                try:
                    os.killpg(child.pid, sig)
                except ProcessLookupError:
                    pass
            end = time.monotonic() + (self.grace if sig != signal.SIGKILL else 5.0)
            while time.monotonic() < end and any(child.poll() is None for child in live):
                time.sleep(0.02)
            still = [
                spec.label
                for spec, child in zip(self.specs, self.children, strict=False)
                if child in live and child.poll() is None
            ]
            if still:
                waited = f"{self.grace:g} s" if sig != signal.SIGKILL else "5 s"
                self.say(f"still alive {waited} after {sig.name}: {', '.join(still)}")
        for child in self.children:
            try:
                child.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                pass
        for thread in self._threads:
            thread.join(timeout=1.0)


def run_launch(
    processes: Sequence[ProcessSpec], *, duration: float | None = None, grace: float = 5.0
) -> int:
    """Start the processes and supervise them until the launch ends (Ctrl-C stops it)."""
    runner = LaunchRunner(processes, grace=grace)
    previous = {
        sig: signal.signal(sig, runner.request_stop) for sig in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        runner.start()
        return runner.wait(timeout=duration)
    finally:
        runner.shutdown()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
