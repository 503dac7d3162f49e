"""A benchmark owns the processes it launched: they end with it, on every exit path.

The launch runner starts each node in a session of its own (so that a Ctrl-C in the terminal
reaches the runner, which stops the nodes in order), so nothing stops them when the benchmark
process itself ends abnormally: SIGTERM's default action ends the benchmark without running its
``finally`` blocks, and the nodes lived on. :func:`owned_processes` closes that hole for the
time a launch runs:

- SIGTERM and SIGHUP raise :class:`SystemExit` (exit code 128 + signal number) in the main
  thread, so the ``finally`` blocks that stop the launch run, as they do on Ctrl-C
  (``KeyboardInterrupt``) and on an exception;
- an ``atexit`` hook shuts the runner down (SIGINT, SIGTERM, then SIGKILL of each node's process
  group) if the process ends with the launch still running;
- extra processes (CPU load spinners) are killed with it.

Only SIGKILL of the benchmark itself escapes (nothing can run then).
"""

from __future__ import annotations

import atexit
import contextlib
import signal
import subprocess
import threading
from collections.abc import Iterator, Sequence
from typing import Protocol

HANDLED = (signal.SIGTERM, signal.SIGHUP)
"""Signals turned into :class:`SystemExit` while a launch runs."""


class Stoppable(Protocol):
    """What :func:`owned_processes` needs of a launch runner."""

    def shutdown(self) -> None:
        """Stop every live process (process groups: SIGINT, SIGTERM, SIGKILL)."""


def _exit_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def owned_processes(
    runner: Stoppable | None = None, extra: Sequence[subprocess.Popen] = ()
) -> Iterator[None]:
    """Make ``runner``'s nodes and the ``extra`` processes end with this process.

    Args:
        runner: The launch runner (its :meth:`shutdown` is called at exit if still needed).
        extra: More child processes, killed at exit.
    """

    def cleanup() -> None:
        if runner is not None:
            runner.shutdown()
        for process in extra:
            if process.poll() is None:
                process.kill()
                process.wait()

    main = threading.current_thread() is threading.main_thread()
    previous = {sig: signal.signal(sig, _exit_on_signal) for sig in HANDLED} if main else {}
    atexit.register(cleanup)
    try:
        yield
    finally:
        cleanup()
        atexit.unregister(cleanup)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


__all__ = ["HANDLED", "owned_processes"]
