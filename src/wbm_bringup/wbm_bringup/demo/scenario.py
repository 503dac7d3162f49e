"""The demo scenario: stand, move the left hand (seed 004's example), take a push, recover.

Timeline (simulated time from the first state received):

- 0 to ``hand_start``: stand still;
- ``hand_start`` to ``hand_start + hand_duration``: the hand target moves by ``hand_offset``
  (seed 004: after 0.5 s, 3 cm forward and 3 cm sideways over 2 s) along the controller's
  quintic time scaling;
- ``push_time``: a push of ``push_force`` for the simulator's push duration on ``push_frame``;
- ``end_time``: the scenario ends (the demo launch then shuts down).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from wbm_control.trajectories import quintic_time_scaling
from wbm_description.exceptions import ConfigError


@dataclass(frozen=True)
class DemoScenario:
    """Times [s] and amplitudes of the demo.

    Attributes:
        hand_task: Controller frame task moved (its target topic is ``targets/<hand_task>``).
        hand_frame: Model frame of that task.
        hand_start: When the hand starts moving [s].
        hand_duration: Duration of the hand motion [s].
        hand_offset: Hand displacement in the world (x forward, y left, z up) [m].
        push_time: When the push starts [s].
        push_frame: Link pushed.
        push_force: Force of the push in world axes [N].
        push_duration: How long the push acts [s] (the simulator's push_duration).
        end_time: When the scenario ends [s].
    """

    hand_task: str = "left_hand"
    hand_frame: str = "l_hand"
    hand_start: float = 0.5
    hand_duration: float = 2.0
    hand_offset: tuple[float, float, float] = (0.03, 0.03, 0.0)
    push_time: float = 4.0
    push_frame: str = "chest"
    push_force: tuple[float, float, float] = (40.0, 0.0, 0.0)
    push_duration: float = 0.1
    end_time: float = 8.0

    def __post_init__(self) -> None:
        source = "demo scenario"
        if self.hand_start < 0.0 or not self.hand_duration > 0.0:
            raise ConfigError(
                source,
                "hand_start, hand_duration",
                "hand_start >= 0 and hand_duration > 0 [s]",
                (self.hand_start, self.hand_duration),
            )
        if not self.hand_start + self.hand_duration <= self.push_time < self.end_time:
            raise ConfigError(
                source,
                "push_time",
                "after the hand motion ends and before end_time",
                self.push_time,
            )
        if not self.push_duration > 0.0:
            raise ConfigError(source, "push_duration", "a duration > 0 [s]", self.push_duration)

    @property
    def push_impulse(self) -> np.ndarray:
        """Impulse of the push [N s], world axes."""
        return np.asarray(self.push_force) * self.push_duration

    def hand_reference(self, start_position: np.ndarray, t: float) -> np.ndarray:
        """Hand position reference at time t [s], from its position at ``hand_start``."""
        s, _, _ = quintic_time_scaling(t - self.hand_start, self.hand_duration)
        return np.asarray(start_position) + s * np.asarray(self.hand_offset)
