"""Decimation of a stream of stamped samples to a maximum rate (no ROS).

The state publisher publishes TF this way, as robot_state_publisher's ``publish_frequency``
does: a sample is published when at least one period of its own time (the message stamps, robot
time) has passed since the last published one, so the newest state is always the one published
and nothing is computed for the samples in between.
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


__all__ = ["Decimator"]
