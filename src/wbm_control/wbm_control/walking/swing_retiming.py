"""A swing re-timed in flight: from the reference's current state to a new touch-down and time.

When the step timing (:mod:`~wbm_control.walking.step_timing`) moves a swing's touch-down place
and time, the reference continues from its current position, velocity and acceleration (so it
stays C2 at the switch) with quintic polynomials that end at the new footstep with zero velocity
and zero acceleration at the new touch-down time:

- horizontally (x, y) one quintic from (p, v, a) now to (p_1, 0, 0) at the new end;
- orientation: R(t) = R_now exp(theta(t)), theta a quintic from (0, omega_now, alpha_now) to
  (log(R_now^T R_1), 0, 0) (angular velocity and acceleration in the R_now frame; exact for a
  turn about one axis, as the walking yaw is);
- vertically through the clearance apex (z_apex = the higher of lift-off and touch-down plus the
  swing height, zero velocity there) at the middle of the new swing if that is still ahead and
  the foot below it, else straight down to (z_1, 0, 0) at the new end.

After the new end the foot keeps going down for a late touch-down, as
:class:`~wbm_control.walking.swing_foot.SwingFootTrajectory` does. A re-timed swing can itself
be re-timed (each time from its own current state).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from wbm_control.exceptions import InputError
from wbm_control.walking.swing_foot import SwingFootSample, late_touchdown_sample

_APEX_LEAD = 0.02
"""The apex is aimed at only if it is at least this far ahead [s]."""


def quintic_coefficients(start: np.ndarray, end: np.ndarray, duration: float) -> np.ndarray:
    """Coefficients c_0..c_5 (6, n) of the quintic from (p, v, a) at 0 to (p, v, a) at T.

    Args:
        start: (3, n) position, velocity, acceleration at t = 0.
        end: (3, n) the same at t = duration.
        duration: T > 0 [s].
    """
    if not duration > 0.0:
        raise InputError("duration", "a positive duration [s]", duration)
    p0, v0, a0 = start
    p1, v1, a1 = end
    t = duration
    c0, c1, c2 = p0, v0, 0.5 * a0
    # The remaining three from the end conditions.
    matrix = np.array(
        [[t**3, t**4, t**5], [3 * t**2, 4 * t**3, 5 * t**4], [6 * t, 12 * t**2, 20 * t**3]]
    )
    rhs = np.stack([p1 - (c0 + c1 * t + c2 * t**2), v1 - (c1 + 2 * c2 * t), a1 - 2 * c2])
    c345 = np.linalg.solve(matrix, rhs)
    return np.vstack([c0, c1, c2, c345])


def evaluate_quintic(coefficients: np.ndarray, t: float) -> np.ndarray:
    """(3, n) position, velocity and acceleration of a quintic at time t."""
    c = coefficients
    powers = np.array([1.0, t, t**2, t**3, t**4, t**5])
    position = powers @ c
    velocity = np.array([0.0, 1.0, 2 * t, 3 * t**2, 4 * t**3, 5 * t**4]) @ c
    acceleration = np.array([0.0, 0.0, 2.0, 6 * t, 12 * t**2, 20 * t**3]) @ c
    return np.stack([position, velocity, acceleration])


@dataclass(frozen=True)
class RetimedSwing:
    """A swing continued from a sample to a new end pose and time (see the module docstring).

    Built with :meth:`from_sample`. The attributes mirror :class:`~wbm_control.walking.
    swing_foot.SwingFootTrajectory` (``start``/``start_time``: the lift-off).

    Attributes:
        start: Lift-off placement.
        end: Touch-down placement.
        start_time: Lift-off time [s].
        duration: Lift-off to the new touch-down [s].
        height: Clearance over the higher end [m].
        late_depth: Lowering after the end while waiting for contact [m].
        late_duration: Over how long [s].
        horizontal_fraction: Kept for the interface (the re-timed horizontal motion ends at the
            new end) [-].
        origin_time: When the continuation starts [s].
        origin_rotation: The reference's orientation then.
        horizontal: Quintic of x, y (6, 2) from origin_time.
        rotation: Quintic of the rotation vector (6, 3) from origin_time, in origin_rotation.
        vertical: Quintic segments of z: ((t_start, t_end, coefficients (6, 1)), ...).
    """

    start: pin.SE3
    end: pin.SE3
    start_time: float
    duration: float
    height: float
    late_depth: float
    late_duration: float
    horizontal_fraction: float
    origin_time: float
    origin_rotation: np.ndarray
    horizontal: np.ndarray
    rotation: np.ndarray
    vertical: tuple[tuple[float, float, np.ndarray], ...]

    @property
    def end_time(self) -> float:
        """The new touch-down time [s]."""
        return self.start_time + self.duration

    @classmethod
    def from_sample(
        cls,
        swing,
        sample: SwingFootSample,
        time: float,
        end: pin.SE3,
        end_time: float,
    ) -> RetimedSwing:
        """Continue ``swing`` (a swing trajectory) from its ``sample`` at ``time``.

        Args:
            swing: The swing in progress (:class:`~wbm_control.walking.swing_foot.
                SwingFootTrajectory` or :class:`RetimedSwing`): lift-off, clearance, late
                touch-down settings.
            sample: Its reference at ``time``.
            time: Now [s].
            end: The new touch-down placement.
            end_time: The new touch-down time [s] (> time).

        Raises:
            InputError: end_time not after time, or a non-finite end.
        """
        if not end_time > time:
            raise InputError("end_time", f"a time after {time} [s]", end_time)
        if not np.all(np.isfinite(end.homogeneous)):
            raise InputError("end", "a finite placement", end)
        remaining = end_time - time
        p, v, a = sample.pose.translation, sample.velocity[:3], sample.acceleration[:3]
        horizontal = quintic_coefficients(
            np.stack([p[:2], v[:2], a[:2]]),
            np.stack([end.translation[:2], np.zeros(2), np.zeros(2)]),
            remaining,
        )
        r0 = sample.pose.rotation
        theta_end = pin.log3(r0.T @ end.rotation)
        rotation = quintic_coefficients(
            np.stack([np.zeros(3), r0.T @ sample.velocity[3:], r0.T @ sample.acceleration[3:]]),
            np.stack([theta_end, np.zeros(3), np.zeros(3)]),
            remaining,
        )
        z_end = end.translation[2]
        apex = max(swing.start.translation[2], z_end) + swing.height
        middle = 0.5 * (swing.start_time + end_time)
        z_now = np.array([[p[2]], [v[2]], [a[2]]])
        if middle - time >= _APEX_LEAD and p[2] < apex - 1e-4:
            up = quintic_coefficients(z_now, np.array([[apex], [0.0], [0.0]]), middle - time)
            down = quintic_coefficients(
                np.array([[apex], [0.0], [0.0]]),
                np.array([[z_end], [0.0], [0.0]]),
                end_time - middle,
            )
            vertical = ((time, middle, up), (middle, end_time, down))
        else:
            down = quintic_coefficients(z_now, np.array([[z_end], [0.0], [0.0]]), remaining)
            vertical = ((time, end_time, down),)
        return cls(
            start=swing.start,
            end=end,
            start_time=swing.start_time,
            duration=end_time - swing.start_time,
            height=swing.height,
            late_depth=swing.late_depth,
            late_duration=swing.late_duration,
            horizontal_fraction=swing.horizontal_fraction,
            origin_time=time,
            origin_rotation=r0.copy(),
            horizontal=horizontal,
            rotation=rotation,
            vertical=vertical,
        )

    def sample(self, t: float) -> SwingFootSample:
        """The reference at time t (held at the continuation's start before it)."""
        if t > self.end_time:
            return self._after_touchdown(t - self.end_time)
        elapsed = max(t - self.origin_time, 0.0)
        xy = evaluate_quintic(self.horizontal, elapsed)
        for begin, finish, coefficients in self.vertical:
            if t <= finish or finish == self.vertical[-1][1]:
                z = evaluate_quintic(coefficients, max(t - begin, 0.0))
                break
        theta = evaluate_quintic(self.rotation, elapsed)
        r0 = self.origin_rotation
        rotation = r0 @ pin.exp3(theta[0])
        position = np.array([xy[0, 0], xy[0, 1], z[0, 0]])
        velocity = np.concatenate([[xy[1, 0], xy[1, 1], z[1, 0]], r0 @ theta[1]])
        acceleration = np.concatenate([[xy[2, 0], xy[2, 1], z[2, 0]], r0 @ theta[2]])
        return SwingFootSample(pin.SE3(rotation, position), velocity, acceleration)

    def _after_touchdown(self, late: float) -> SwingFootSample:
        return late_touchdown_sample(self.end, late, self.late_duration, self.late_depth)
