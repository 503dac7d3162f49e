"""The demo scenario: stand, move the left hand (seed 004's example), take a push, recover.

Timeline (simulated time from the first state received):

- 0 to ``hand_start``: stand still;
- ``hand_start`` to ``hand_start + hand_duration``: the hand target moves by ``hand_offset``
  (seed 004: after 0.5 s, 3 cm forward and 3 cm sideways over 2 s) along the controller's
  quintic time scaling;
- ``push_time``: a push of ``push_force`` for the simulator's push duration on ``push_frame``;
- ``end_time``: the scenario ends (the demo launch then shuts down).

:class:`DemoScenario` holds the timeline and amplitudes, :class:`DemoTimeline` says which event
is due at a given time, and :class:`ScenarioNodeSettings` are the scenario node's parameters.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from wbm_control.trajectories import quintic_time_scaling
from wbm_description.exceptions import ConfigError
from wbm_description.settings import Settings, setting


@dataclass(frozen=True)
class DemoScenario(Settings):
    """Times [s] (from the first state received, simulated time) and amplitudes of the demo."""

    hand_task: str = setting(
        "left_hand", nonempty=True, doc="controller frame task moved (topic targets/<hand_task>)"
    )
    hand_frame: str = setting("l_hand", nonempty=True, doc="model frame of that task")
    hand_start: float = setting(0.5, ge=0.0, unit="s", doc="when the hand starts moving")
    hand_duration: float = setting(2.0, gt=0.0, unit="s", doc="duration of the hand motion")
    hand_offset: tuple[float, float, float] = setting(
        (0.03, 0.03, 0.0), unit="m", doc="hand displacement in the world (x forward, y left, z up)"
    )
    push_time: float = setting(4.0, ge=0.0, unit="s", doc="when the push starts")
    push_frame: str = setting("chest", nonempty=True, doc="link pushed")
    push_force: tuple[float, float, float] = setting(
        (40.0, 0.0, 0.0), unit="N", doc="force of the push in world axes"
    )
    push_duration: float = setting(
        0.1, gt=0.0, unit="s", doc="how long the push acts (the simulator's push_duration)"
    )
    end_time: float = setting(8.0, gt=0.0, unit="s", doc="when the scenario ends")

    def check(self) -> None:
        """The push comes after the hand motion and before the end."""
        if not self.hand_start + self.hand_duration <= self.push_time < self.end_time:
            raise ConfigError(
                None,
                "push_time",
                "after the hand motion ends (hand_start + hand_duration) and before end_time",
                self.push_time,
            )

    @property
    def push_impulse(self) -> np.ndarray:
        """Impulse of the push [N s], world axes."""
        return np.asarray(self.push_force) * self.push_duration

    def hand_reference(self, start_position: np.ndarray, t: float) -> np.ndarray:
        """Hand position reference at time t [s], from its position at ``hand_start``."""
        s, _, _ = quintic_time_scaling(t - self.hand_start, self.hand_duration)
        return np.asarray(start_position) + s * np.asarray(self.hand_offset)


#: The events of the demo, in the order they happen.
EVENTS = ("start", "hand", "push", "end")


class DemoTimeline:
    """Which events of a scenario are due, each once, as (simulated) time goes on.

    The clock starts at the first call of :meth:`advance` (the first state received).

    Args:
        scenario: The times of the events.
    """

    def __init__(self, scenario: DemoScenario):
        self.scenario = scenario
        self.start_time: float | None = None
        self.done: list[str] = []

    def elapsed(self, now: float) -> float:
        """Time since the start [s] (0 before it)."""
        return 0.0 if self.start_time is None else now - self.start_time

    def advance(self, now: float) -> list[str]:
        """The events that became due at ``now`` [s] and had not happened, in order."""
        if self.start_time is None:
            self.start_time = now
        t = now - self.start_time
        times = {
            "start": 0.0,
            "hand": self.scenario.hand_start,
            "push": self.scenario.push_time,
            "end": self.scenario.end_time,
        }
        due = [event for event in EVENTS if event not in self.done and t >= times[event]]
        self.done.extend(due)
        return due

    @property
    def finished(self) -> bool:
        """Whether the end has been reached."""
        return "end" in self.done


@dataclass(frozen=True)
class ScenarioNodeSettings(Settings):
    """Parameters of the scenario node (``wbm_scenario``)."""

    robot: str = setting("icub", nonempty=True, doc="registered robot name or robot config file")
    world_frame: str = setting("world", nonempty=True, doc="frame_id of the hand target pose")
    realtime_priority: int = setting(
        0,
        ge=0,
        le=99,
        doc="SCHED_FIFO priority of the node's threads (1-99), below the loop's; 0: normal "
        "scheduling",
    )
    scenario: DemoScenario = setting(default_factory=DemoScenario)
