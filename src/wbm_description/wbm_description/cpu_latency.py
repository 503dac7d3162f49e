"""A CPU wake-up latency request while a loop node runs (Linux's ``/dev/cpu_dma_latency``).

An idle CPU enters an idle state its driver chooses; leaving a deep one delays the thread that
wakes it. On the 2-core virtual machine we measure on the idle driver is haltpoll: an idle
virtual CPU halts (it polls 0 ns first, ``guest_halt_poll_ns``), and waking it takes an
interrupt and a return to the guest. A realtime loop idles between its cycles, so each cycle's
hand-overs (robot interface to controller and back, through the middleware's threads) start on
halted CPUs. Holding a request of 0 us on ``/dev/cpu_dma_latency`` (the kernel's PM QoS CPU
latency, the setting realtime guides and ``cyclictest`` use) keeps idle CPUs in their polling
state: a pipe ping-pong between two processes on two CPUs took 11 us round trip with it against
66 us without, and the realtime-500 bringup's p99 from readings to command fell from 2.3-2.7 ms
to 1.0-1.3 ms ("Tenth pass" in the README).

The request holds while its file stays open and applies to every CPU of the machine (idle CPUs
poll instead of halting: more power, no CPU time taken from running threads). Writing it needs
root (the device is the root's, mode 0600); without it the caller is told why and nothing
changes. Linux only; no rclpy.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field

from wbm_description.settings import setting

DEVICE = "/dev/cpu_dma_latency"
"""The kernel's PM QoS CPU latency request device."""

NONE = -1
"""``cpu_dma_latency`` value that asks for nothing."""


@dataclass
class LatencyRequest:
    """What :func:`request_cpu_latency` did; the request holds until :meth:`release`.

    Attributes:
        microseconds: The latency asked for [us] (:data:`NONE`: nothing asked).
        error: Why it was not applied ("" when applied or not asked).
    """

    microseconds: int
    error: str = ""
    _fd: int | None = field(default=None, repr=False)

    @property
    def applied(self) -> bool:
        """Whether a request was asked for and holds."""
        return self._fd is not None

    def describe(self) -> str:
        """One line for the node's log."""
        if self.microseconds == NONE:
            return "cpu_dma_latency -1: no CPU latency request"
        if self.applied:
            return f"cpu_dma_latency {self.microseconds} us: requested on {DEVICE} while it runs"
        return f"cpu_dma_latency {self.microseconds} us not applied: {self.error}"

    def release(self) -> None:
        """End the request (closing the device ends it; idempotent)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


def request_cpu_latency(microseconds: int, device: str = DEVICE) -> LatencyRequest:
    """Ask the kernel to keep CPU wake-ups within ``microseconds`` [us] (:data:`NONE`: nothing).

    Raises:
        ValueError: ``microseconds`` is not an integer >= -1.
    """
    if isinstance(microseconds, bool) or not isinstance(microseconds, int) or microseconds < NONE:
        raise ValueError(f"cpu_dma_latency: expected an integer >= -1, got {microseconds!r}")
    if microseconds == NONE:
        return LatencyRequest(NONE)
    try:
        fd = os.open(device, os.O_WRONLY)
    except OSError as error:
        return LatencyRequest(microseconds, f"cannot open {device}: {error.strerror} (needs root)")
    try:
        os.write(fd, struct.pack("i", microseconds))
    except OSError as error:
        os.close(fd)
        return LatencyRequest(microseconds, f"cannot write {device}: {error.strerror}")
    return LatencyRequest(microseconds, _fd=fd)


def cpu_latency_setting() -> int:
    """The ``cpu_dma_latency`` field of a loop node's settings (default: :data:`NONE`)."""
    return setting(
        NONE,
        ge=NONE,
        unit="us",
        doc="CPU wake-up latency requested on /dev/cpu_dma_latency while the node runs, where "
        "permitted (root): 0 keeps idle CPUs polling instead of halting; -1: no request",
    )


__all__ = ["DEVICE", "NONE", "LatencyRequest", "cpu_latency_setting", "request_cpu_latency"]
