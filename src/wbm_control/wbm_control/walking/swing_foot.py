"""Swing-foot trajectory: from the lift-off pose to the touch-down pose over a clearance apex.

With tau = (t - t_0) / T in [0, 1] and the quintic s(tau) = 10 tau^3 - 15 tau^4 + 6 tau^5 (zero
velocity and acceleration at both ends, :func:`~wbm_control.trajectories.quintic_time_scaling`):

- position: p(tau) = p_0 + s(tau) (p_1 - p_0) + e_z b h(tau) with the clearance bump
  h(tau) = 64 tau^3 (1 - tau)^3, which is 1 at tau = 1/2 and has zero value, velocity and
  acceleration at both ends; b = swing_height + |z_1 - z_0| / 2, so that at mid-swing the foot is
  ``swing_height`` above the higher of the lift-off and touch-down heights (on flat ground this is
  the apex);
- orientation: on the geodesic R(tau) = R_0 exp(s(tau) log(R_0^T R_1)) (a slerp in quintic time).

So the foot leaves and lands with zero velocity and zero acceleration, and its horizontal progress
towards the target is monotone. With a ``horizontal_fraction`` f < 1 the horizontal motion and the
turn use the quintic over f T only (s(t / (f T)), then 1): the foot reaches the footstep's x, y
and yaw first and descends vertically onto it, so a touch-down earlier than planned (in the last
1 - f of the swing) still lands on the footstep. Seed 002 section 6.1 (pymanoid's ``SwingFoot``)
interpolates the same way: polynomial in position, spherical interpolation in orientation.

After the planned touch-down the foot can keep going down (a late touch-down: the ground is lower
than planned): by ``late_depth`` over ``late_duration``, again with a quintic.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from wbm_control.exceptions import InputError
from wbm_control.trajectories import quintic_time_scaling


@dataclass(frozen=True)
class SwingFootSample:
    """A swing-foot reference at one time.

    Attributes:
        pose: Sole frame placement in the world.
        velocity: (linear [m/s], angular [rad/s]) velocity of the sole frame origin, world axes.
        acceleration: (linear [m/s^2], angular [rad/s^2]) acceleration, world axes.
    """

    pose: pin.SE3
    velocity: np.ndarray
    acceleration: np.ndarray


def clearance_bump(tau: float) -> tuple[float, float, float]:
    """h(tau) = 64 tau^3 (1 - tau)^3 and its first two tau-derivatives (tau clamped to [0, 1])."""
    tau = min(max(tau, 0.0), 1.0)
    one = 1.0 - tau
    value = 64.0 * tau**3 * one**3
    first = 192.0 * tau**2 * one**2 * (1.0 - 2.0 * tau)
    second = 384.0 * tau * one * ((1.0 - 2.0 * tau) ** 2 - tau * one)
    return value, first, second


def late_touchdown_sample(
    end: pin.SE3, late: float, late_duration: float, late_depth: float
) -> SwingFootSample:
    """The swing reference ``late`` seconds after its planned touch-down [s].

    A foot that has not touched down yet goes on straight down from ``end`` by ``late_depth``
    [m] over ``late_duration`` [s] (quintic, at rest at both ends), then stays there; with either
    zero it stays at ``end``. Velocity and acceleration in the world frame (linear, angular).
    """
    if late_duration <= 0.0 or late_depth <= 0.0:
        return SwingFootSample(end.copy(), np.zeros(6), np.zeros(6))
    s, ds, dds = quintic_time_scaling(late, late_duration)
    pose = end.copy()
    pose.translation = end.translation - np.array([0.0, 0.0, s * late_depth])
    velocity, acceleration = np.zeros(6), np.zeros(6)
    velocity[2], acceleration[2] = -ds * late_depth, -dds * late_depth
    return SwingFootSample(pose, velocity, acceleration)


@dataclass(frozen=True)
class SwingFootTrajectory:
    """A swing from a lift-off pose to a touch-down pose (see the module docstring).

    Attributes:
        start: Lift-off placement of the sole frame in the world.
        end: Planned touch-down placement.
        start_time: Lift-off time [s].
        duration: Planned swing duration T [s].
        height: Clearance over the higher end at mid-swing [m].
        late_depth: How far below ``end`` the foot goes after T, while waiting for contact [m].
        late_duration: Over how long [s] (0: the foot holds ``end``).
        horizontal_fraction: Fraction f of the duration over which the foot moves horizontally
            and turns (see the module docstring) [-].
    """

    start: pin.SE3
    end: pin.SE3
    start_time: float
    duration: float
    height: float
    late_depth: float = 0.0
    late_duration: float = 0.0
    horizontal_fraction: float = 1.0

    def __post_init__(self) -> None:
        if not self.duration > 0.0:
            raise InputError("duration", "a positive swing duration [s]", self.duration)
        if not 0.0 < self.horizontal_fraction <= 1.0:
            raise InputError(
                "horizontal_fraction", "a fraction in (0, 1]", self.horizontal_fraction
            )
        if not self.height >= 0.0:
            raise InputError("height", "a clearance >= 0 [m]", self.height)
        for name in ("start", "end"):
            if not np.all(np.isfinite(getattr(self, name).homogeneous)):
                raise InputError(name, "a finite placement", getattr(self, name))

    @property
    def end_time(self) -> float:
        """Planned touch-down time [s]."""
        return self.start_time + self.duration

    def sample(self, t: float) -> SwingFootSample:
        """The reference at time t (held at lift-off before; lowering, then held, after)."""
        if t > self.end_time:
            return self._after_touchdown(t - self.end_time)
        elapsed = t - self.start_time
        s, ds, dds = quintic_time_scaling(elapsed, self.duration * self.horizontal_fraction)
        sz, dsz, ddsz = quintic_time_scaling(elapsed, self.duration)
        bump, dbump, ddbump = clearance_bump(elapsed / self.duration)
        p0, p1 = self.start.translation, self.end.translation
        rise = self.height + 0.5 * abs(p1[2] - p0[2])
        delta = p1 - p0
        scaling = np.array([s, s, sz])
        position = p0 + scaling * delta
        position[2] += rise * bump
        linear_velocity = np.array([ds, ds, dsz]) * delta
        linear_velocity[2] += rise * dbump / self.duration
        linear_acceleration = np.array([dds, dds, ddsz]) * delta
        linear_acceleration[2] += rise * ddbump / self.duration**2
        axis_in_start = pin.log3(self.start.rotation.T @ self.end.rotation)
        rotation = self.start.rotation @ pin.exp3(s * axis_in_start)
        axis_in_world = self.start.rotation @ axis_in_start
        return SwingFootSample(
            pin.SE3(rotation, position),
            np.concatenate([linear_velocity, ds * axis_in_world]),
            np.concatenate([linear_acceleration, dds * axis_in_world]),
        )

    def _after_touchdown(self, late: float) -> SwingFootSample:
        return late_touchdown_sample(self.end, late, self.late_duration, self.late_depth)
