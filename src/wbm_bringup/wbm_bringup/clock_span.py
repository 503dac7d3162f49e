"""How fast robot time ran against the wall clock during a recording, from its ``/clock`` samples.

A demo's wall time includes its processes' start (imports, models, discovery: seconds) and their
stop. The pace while the robot runs, robot seconds per wall second, is what a simulator's
real-time factor means (Gazebo's, MuJoCo's). :class:`ClockSpan` keeps three ``/clock`` samples,
each as (receive time [ns, system clock], robot time it carries [ns]):

- ``first``: the first sample received;
- ``start``: the last sample received before robot time first advanced (in lockstep the robot
  interface republishes its initial state, same stamp, until the first command: the loop starts
  after the last of those);
- ``last``: the newest sample.

The recorder writes them into the bag's ``custom_data`` (:meth:`ClockSpan.custom_data`, keys
``wbm.clock.<sample>_received_ns`` and ``wbm.clock.<sample>_sim_ns``), so a recording says how fast
it ran; :meth:`ClockSpan.from_custom_data` reads them back.

No ROS here: plain numbers in, plain numbers out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

Sample = tuple[int, int]
"""(receive time [ns, system clock], robot time [ns])."""

_SAMPLES = ("first", "start", "last")
_PREFIX = "wbm.clock."


@dataclass
class ClockSpan:
    """The first, start and last ``/clock`` samples of a recording (module docstring)."""

    first: Sample | None = None
    start: Sample | None = None
    last: Sample | None = None

    def add(self, received: int, sim_time: int) -> None:
        """A ``/clock`` sample, in reception order: receive time, robot time [ns]."""
        sample = (int(received), int(sim_time))
        if self.first is None:
            self.first = self.start = sample
        elif self.last is not None and self.start == self.last and sim_time == self.start[1]:
            self.start = sample  # robot time has not advanced yet: the loop starts later
        self.last = sample

    @property
    def running_wall(self) -> float | None:
        """Wall time from ``start`` to ``last`` [s] (None before robot time advanced)."""
        if self.start is None or self.last is None or self.last[1] == self.start[1]:
            return None
        return (self.last[0] - self.start[0]) * 1e-9

    @property
    def running_simulated(self) -> float | None:
        """Robot time from ``start`` to ``last`` [s] (None before robot time advanced)."""
        if self.running_wall is None:
            return None
        return (self.last[1] - self.start[1]) * 1e-9

    @property
    def pace(self) -> float | None:
        """Robot seconds per wall second from ``start`` to ``last`` (None before any advance)."""
        wall = self.running_wall
        if wall is None or wall <= 0.0:
            return None
        return self.running_simulated / wall

    def custom_data(self) -> dict[str, str]:
        """The samples as a bag's ``custom_data`` entries (strings; none before a sample)."""
        data = {}
        for name in _SAMPLES:
            sample = getattr(self, name)
            if sample is not None:
                data[f"{_PREFIX}{name}_received_ns"] = str(sample[0])
                data[f"{_PREFIX}{name}_sim_ns"] = str(sample[1])
        return data

    @classmethod
    def from_custom_data(cls, data: Mapping[str, str] | None) -> ClockSpan | None:
        """The span a bag's ``custom_data`` holds (None if it holds none).

        Raises:
            ValueError: An entry is there but is not an integer, or a sample is half there.
        """
        data = data or {}
        samples = {}
        for name in _SAMPLES:
            keys = (f"{_PREFIX}{name}_received_ns", f"{_PREFIX}{name}_sim_ns")
            present = [key in data for key in keys]
            if not any(present):
                continue
            if not all(present):
                raise ValueError(f"custom_data has one of {keys} but not the other")
            try:
                samples[name] = (int(data[keys[0]]), int(data[keys[1]]))
            except ValueError as error:
                raise ValueError(f"custom_data {keys}: expected integers [ns]: {error}") from None
        if not samples:
            return None
        return cls(**samples)


__all__ = ["ClockSpan", "Sample"]
