"""Decimation of a stream of stamped samples to a maximum rate, and a polled timer (no ROS).

The state publisher publishes TF this way, as robot_state_publisher's ``publish_frequency``
does: a sample is published when at least one period of its own time (the message stamps, robot
time) has passed since the last published one, so the newest state is always the one published
and nothing is computed for the samples in between. Its markers follow a :class:`Ticker`: the
ticks of a timer of the node's clock, checked by the input thread after each of its wake-ups.
"""

from __future__ import annotations

import math

_NANOSECONDS = 1_000_000_000


class Decimator:
    """Lets a sample through when one period of stamp time passed since the last one let through.

    Args:
        rate: Most samples let through per second of stamp time [Hz]; 0 lets every sample through.

    Raises:
        ValueError: A negative or non-finite rate.
    """

    def __init__(self, rate: float):
        if not (math.isfinite(rate) and rate >= 0.0):
            raise ValueError(f"rate: expected a finite number >= 0 [Hz], got {rate!r}")
        self.rate = float(rate)
        self.period_ns = round(_NANOSECONDS / rate) if rate > 0.0 else 0
        self._last_ns: int | None = None

    def due(self, stamp_ns: int) -> bool:
        """Whether the sample stamped ``stamp_ns`` [ns] goes through (and note it if so).

        A stamp earlier than the last one let through (time went back: a reset) goes through and
        restarts the count from it.
        """
        last = self._last_ns
        if last is None or stamp_ns < last or stamp_ns - last >= self.period_ns:
            self._last_ns = stamp_ns
            return True
        return False

    def reset(self) -> None:
        """Let the next sample through, whatever its stamp."""
        self._last_ns = None


class Ticker:
    """A timer that is polled: due once per period, on the grid of its first tick.

    :meth:`due` is asked at instants of a clock (more often than the period, irregularly: a
    thread's wake-ups); it answers True once per period, at the first instant at or after each
    tick, as a timer's callback would run. Ticks missed by more than a period are dropped (no
    burst of catch-up ticks: the grid restarts from the late instant), and a clock going back
    (a simulation reset) restarts it.

    Args:
        rate: Ticks per second of the clock [Hz], > 0.

    Raises:
        ValueError: A rate that is not a finite number > 0.
    """

    def __init__(self, rate: float):
        if not (math.isfinite(rate) and rate > 0.0):
            raise ValueError(f"rate: expected a finite number > 0 [Hz], got {rate!r}")
        self.rate = float(rate)
        self.period_ns = max(1, round(_NANOSECONDS / rate))
        self._next_ns: int | None = None

    def due(self, now_ns: int) -> bool:
        """Whether a tick is due at ``now_ns`` [ns of the clock] (and consume it if so)."""
        following = self._next_ns
        period = self.period_ns
        if following is None or now_ns < following - period:
            self._next_ns = now_ns + period
            return True
        if now_ns < following:
            return False
        following += period
        self._next_ns = following if following > now_ns else now_ns + period
        return True


__all__ = ["Decimator", "Ticker"]
