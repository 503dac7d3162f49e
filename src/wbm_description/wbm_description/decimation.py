"""Decimation of a stream of stamped samples to a maximum rate (no ROS).

The state publisher publishes TF this way (its ``publish_frequency``, as robot_state_publisher's):
the samples let through are the first at or after each slot of a grid one period apart in their
own time (the message stamps, robot time), so the newest state is always the one published,
nothing is computed for the samples in between, and the rate is the one asked for on average.

A rule of one period since the last sample let through (robot_state_publisher's) loses rate when
the samples are taken at a rate of their own: the state publisher takes the newest sample every
10 ms of wall time, two wake-ups are a little less than 20 ms of stamps apart now and then, and
50 Hz became 40-45 Hz (``wbm_benchmark_state_publisher``). A sample late for its slot does not
bring the next one closer than half a period; one more than a period late (a gap in the stream)
starts the grid again from it.
"""

from __future__ import annotations

import math

_NANOSECONDS = 1_000_000_000


class Decimator:
    """Lets through the first sample at or after each slot of a grid of one period of stamps.

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
        self._next_ns = 0

    def due(self, stamp_ns: int) -> bool:
        """Whether the sample stamped ``stamp_ns`` [ns] goes through (and note it if so).

        A stamp earlier than the last one let through (time went back: a reset) goes through and
        starts the grid again from it.
        """
        last, period = self._last_ns, self.period_ns
        if last is None or stamp_ns < last or stamp_ns - self._next_ns >= period:
            self._last_ns, self._next_ns = stamp_ns, stamp_ns + period  # (re)start the grid
            return True
        if stamp_ns < self._next_ns:
            return False
        self._last_ns = stamp_ns
        self._next_ns = max(self._next_ns + period, stamp_ns + period // 2)
        return True

    def reset(self) -> None:
        """Let the next sample through, whatever its stamp, and start the grid from it."""
        self._last_ns = None


__all__ = ["Decimator"]
