"""Quintic time scaling of task targets (seed 004, section 8.4.6: fifth-order interpolation).

A quintic s(t) goes from 0 to 1 over a duration T with zero velocity and acceleration at both
ends: s(tau) = 10 tau^3 - 15 tau^4 + 6 tau^5 with tau = t / T.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pinocchio as pin

from wbm_control.exceptions import InputError


def quintic_time_scaling(t: float, duration: float) -> tuple[float, float, float]:
    """Rest-to-rest quintic time scaling.

    Args:
        t: Time since the start [s]; clamped to [0, duration].
        duration: Total duration T > 0 [s].

    Returns:
        (s, ds/dt [1/s], d2s/dt2 [1/s^2]) with s(0) = 0, s(T) = 1 and zero velocity and
        acceleration at both ends.
    """
    if not duration > 0.0:
        raise InputError("duration", "a positive duration [s]", duration)
    tau = min(max(t / duration, 0.0), 1.0)
    s = tau**3 * (10.0 - 15.0 * tau + 6.0 * tau**2)
    ds = 30.0 * tau**2 * (1.0 - tau) ** 2 / duration
    dds = 60.0 * tau * (1.0 - 3.0 * tau + 2.0 * tau**2) / duration**2
    return s, ds, dds


@dataclass(frozen=True)
class QuinticPointTrajectory:
    """Straight-line motion of a point from start to goal with quintic time scaling.

    Attributes:
        start: Start point (any dimension), e.g. a CoM position in the world [m].
        goal: Goal point, same shape.
        start_time: When the motion starts [s].
        duration: How long it lasts [s].
    """

    start: np.ndarray
    goal: np.ndarray
    start_time: float
    duration: float

    @cached_property
    def _delta(self) -> np.ndarray:
        """The goal minus the start (computed once: the fields are frozen)."""
        return np.asarray(self.goal, dtype=float) - np.asarray(self.start, dtype=float)

    def sample(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Position, velocity and acceleration at time t (held at the ends)."""
        s, ds, dds = quintic_time_scaling(t - self.start_time, self.duration)
        delta = self._delta
        return self.start + s * delta, ds * delta, dds * delta


@dataclass(frozen=True)
class QuinticPoseTrajectory:
    """Motion of a frame from one pose to another: a screw-free interpolation.

    The position moves on a straight line and the orientation on the geodesic
    R(s) = R_start exp(s log(R_start^T R_goal)), both with the same quintic s(t).

    Attributes:
        start: Start pose of the frame in the world.
        goal: Goal pose of the frame in the world.
        start_time: When the motion starts [s].
        duration: How long it lasts [s].
    """

    start: pin.SE3
    goal: pin.SE3
    start_time: float
    duration: float

    def sample(self, t: float) -> tuple[pin.SE3, np.ndarray, np.ndarray]:
        """Pose, mixed velocity and mixed acceleration at time t.

        Returns:
            (pose in the world, (linear, angular) velocity in world axes [m/s, rad/s],
            (linear, angular) acceleration in world axes [m/s^2, rad/s^2]). A trajectory from a
            pose to itself (the same object) gives that pose and zero velocity and acceleration.
        """
        if self.start is self.goal:
            # Holding a pose (FrameTask.start): the exact sample at any t, without the rounding
            # (about 1e-16) of log3(R^T R) of a rotation with itself.
            return self.start.copy(), np.zeros(6), np.zeros(6)
        s, ds, dds = quintic_time_scaling(t - self.start_time, self.duration)
        start_rotation, start_translation, delta_p, axis_angle_in_start, axis_angle_in_world = (
            self._constants
        )
        rotation = start_rotation @ pin.exp3(s * axis_angle_in_start)
        pose = pin.SE3(rotation, start_translation + s * delta_p)
        velocity = np.empty(6)
        np.multiply(ds, delta_p, out=velocity[:3])
        np.multiply(ds, axis_angle_in_world, out=velocity[3:])
        acceleration = np.empty(6)
        np.multiply(dds, delta_p, out=acceleration[:3])
        np.multiply(dds, axis_angle_in_world, out=acceleration[3:])
        return pose, velocity, acceleration

    @cached_property
    def _constants(self) -> tuple[np.ndarray, ...]:
        """What :meth:`sample` needs that does not depend on t (computed once: frozen fields).

        (R_start, p_start, p_goal - p_start, log3(R_start^T R_goal) in start axes, the same
        axis-angle in world axes.)
        """
        start_rotation = self.start.rotation
        axis_angle_in_start = pin.log3(start_rotation.T @ self.goal.rotation)
        return (
            start_rotation,
            self.start.translation,
            self.goal.translation - self.start.translation,
            axis_angle_in_start,
            start_rotation @ axis_angle_in_start,
        )
