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


def _minimum_jerk(s: float) -> tuple[float, float]:
    """The minimum-jerk profile 10 s^3 - 15 s^4 + 6 s^5 and its derivative d/ds, s in [0, 1]."""
    s = min(max(s, 0.0), 1.0)
    return s**3 * (10.0 + s * (-15.0 + 6.0 * s)), 30.0 * s**2 * (1.0 - s) ** 2


class PostureReturn:
    """The posture hold of a watchdog trip, reached smoothly from the references it replaces.

    The posture hold of the start (``hold``: the initial posture's position references and
    the static torques of standing there as feed-forward) applied at once pulls every joint
    from wherever the controller had it to the initial posture at full servo stiffness, with
    the torques of another posture: an arm the controller holds 0.4 rad from it (a hand
    target) is slammed at the torque limit (the realtime soak recorded iCub's shoulder yaw at
    22 rad/s within 2 ms of a trip, the servo saturated and so undamped, and the robot fell).
    Instead the position references start where the replaced command had them (the joints'
    measured positions where it gave none: torque control) and reach the hold's over
    ``duration`` of robot time on a minimum-jerk profile, the velocity references its
    derivative; the feed-forward is the hold's from the trip on. (Starting the feed-forward at
    the replaced command's effort instead, blended to the hold's, fell in the loop benchmark's
    slow loop 18:15:1 ms within 5.5 s where this stood 20 s: the torques a late controller
    computed for an old state are a worse start than the static ones.) A trip
    while an earlier return is still under way continues it (same start): trips in quick
    succession (a loop that misses most of its cycles) converge to the hold instead of
    holding each one where the last one left it, which let a sagging robot sink further at
    every trip (measured: a fall within 2 s).

    Args:
        hold: The posture hold (position references and feed-forward effort), (ndof,) each.
        duration: Robot time to reach it [s]; 0: at once (the hold itself).
    """

    def __init__(self, hold: JointCommand, duration: float):
        if not (duration >= 0.0 and np.isfinite(duration)):
            raise InputError("duration", "a finite duration >= 0 [s]", duration)
        self.hold = hold
        self.duration = float(duration)
        self._start_time: float | None = None
        self._start_position = np.zeros(0)

    def reset(self) -> None:
        """Forget the return under way (a reset of the robot)."""
        self._start_time = None

    def trip(
        self,
        time: float,
        positions: np.ndarray,
        last: JointCommand | None = None,
    ) -> JointCommand:
        """A trip at robot time ``time`` [s]: the command to apply.

        Starts a return unless one is still under way (then continued).

        Args:
            time: Robot time [s].
            positions: The joints' measured positions [rad], (ndof,).
            last: The command the trip replaces (its position references, NaN or None where
                not commanded), or None.
        """
        if self._start_time is None or time - self._start_time >= self.duration:
            position = np.asarray(positions, dtype=float).copy()
            if last is not None and last.position is not None:
                commanded = ~np.isnan(last.position)
                position[commanded] = last.position[commanded]
            self._start_time = float(time)
            self._start_position = position
        return self.command(time)

    def command(self, time: float) -> JointCommand:
        """The command at robot time ``time`` [s] (after a :meth:`trip`)."""
        target = np.asarray(self.hold.position, dtype=float)
        if self._start_time is None or self.duration == 0.0:
            return JointCommand(position=target.copy(), effort=self.hold.effort)
        s, ds = _minimum_jerk((time - self._start_time) / self.duration)
        change = target - self._start_position
        return JointCommand(
            position=self._start_position + s * change,
            velocity=(ds / self.duration) * change,
            effort=self.hold.effort,
        )

    def returning(self, time: float) -> bool:
        """Whether the references still move at robot time ``time`` [s]."""
        return self._start_time is not None and time - self._start_time < self.duration
