"""The command watchdog of the robot-interface node (pure logic, no ROS).

Once a controller has sent a first command, the watchdog expects the next one within
``timeout`` seconds of robot time. When none comes, it trips: the joints go to a safe damping
mode (every joint tracks zero velocity with its servo damping: tau = -kd dq, no stiffness, no
feed-forward) until a command arrives again.
"""

from __future__ import annotations

import numpy as np

from wbm_description.exceptions import InputError
from wbm_description.robot_io import JointCommand


def damping_command(ndof: int) -> JointCommand:
    """The safe command: track zero joint velocity (pure damping)."""
    return JointCommand(velocity=np.zeros(ndof))


class CommandWatchdog:
    """Trips when commands stop arriving.

    Args:
        timeout: Longest accepted gap between commands [s]; 0 disables the watchdog.
    """

    def __init__(self, timeout: float):
        if not (timeout >= 0.0 and np.isfinite(timeout)):
            raise InputError("timeout", "a finite duration >= 0 [s]", timeout)
        self.timeout = float(timeout)
        self.last_command_time: float | None = None
        self.tripped = False

    def reset(self) -> None:
        """Forget every command (disarmed until the next one)."""
        self.last_command_time = None
        self.tripped = False

    def command_received(self, now: float) -> bool:
        """Note a command at time ``now``; True when it ends a tripped state (resume)."""
        resumed = self.tripped
        self.last_command_time = now
        self.tripped = False
        return resumed

    def check(self, now: float) -> bool:
        """True exactly when the watchdog trips at time ``now`` (a command is overdue)."""
        if self.timeout == 0.0 or self.last_command_time is None or self.tripped:
            return False
        if now - self.last_command_time > self.timeout:
            self.tripped = True
            return True
        return False
