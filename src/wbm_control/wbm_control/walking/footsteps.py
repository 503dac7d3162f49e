"""Footsteps: where a sole is put on the (flat) ground, and planar pose algebra.

A :class:`Footstep` is the pose of a sole frame on the ground plane z = 0 in the world: position
(x, y) [m] and yaw [rad] about the vertical. Poses compose as planar rigid transforms (SE(2)):
``a.compose(d)`` is the pose d expressed in the frame of a, ``b.relative_to(a)`` its inverse.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pinocchio as pin

from wbm_control.exceptions import InputError

Side = Literal["left", "right"]
SIDES: tuple[Side, Side] = ("left", "right")


def other_side(side: Side) -> Side:
    """The other foot."""
    return "right" if side == "left" else "left"


def side_sign(side: Side) -> float:
    """+1 for the left foot (world y is left), -1 for the right foot."""
    return 1.0 if side == "left" else -1.0


def wrap_angle(angle: float) -> float:
    """The angle in [-pi, pi) [rad]."""
    return (angle + math.pi) % (2.0 * math.pi) - math.pi


def integrate_twist(
    vx: float, vy: float, wz: float, duration: float
) -> tuple[float, float, float]:
    """Planar displacement after moving at a constant body twist (the SE(2) exponential).

    Args:
        vx: Forward velocity in the moving frame [m/s].
        vy: Lateral velocity in the moving frame [m/s].
        wz: Yaw rate [rad/s].
        duration: How long [s].

    Returns:
        (dx, dy, dyaw) in the initial frame [m, m, rad]: a circular arc for wz != 0.
    """
    theta = wz * duration
    if abs(theta) < 1e-9:
        return vx * duration, vy * duration, theta
    s, c = math.sin(theta), math.cos(theta)
    return (vx * s - vy * (1.0 - c)) / wz, (vx * (1.0 - c) + vy * s) / wz, theta


@dataclass(frozen=True)
class Footstep:
    """Where a sole frame is put on the ground, in the world.

    Values are not checked here (a plan holding NaN is rejected by
    :meth:`~wbm_control.walking.footstep_planner.FootstepPlanner.validate_plan` with the step's
    index); only the side is.

    Attributes:
        side: Which foot, ``"left"`` or ``"right"``.
        x: Sole frame origin along world x [m].
        y: Sole frame origin along world y [m].
        yaw: Sole frame's yaw about world z [rad].
    """

    side: Side
    x: float
    y: float
    yaw: float

    def __post_init__(self) -> None:
        if self.side not in SIDES:
            raise InputError("side", "'left' or 'right'", self.side)

    @classmethod
    def from_placement(cls, side: Side, placement: pin.SE3) -> Footstep:
        """The footstep of a sole placement (its height, roll and pitch are dropped)."""
        rotation = placement.rotation
        yaw = math.atan2(rotation[1, 0], rotation[0, 0])
        return cls(side, float(placement.translation[0]), float(placement.translation[1]), yaw)

    def placement(self, z: float = 0.0) -> pin.SE3:
        """The sole frame's placement in the world, at height z [m], z axis up."""
        return pin.SE3(pin.rpy.rpyToMatrix(0.0, 0.0, self.yaw), np.array([self.x, self.y, z]))

    def pose(self) -> np.ndarray:
        """(x [m], y [m], yaw [rad])."""
        return np.array([self.x, self.y, self.yaw])

    def is_finite(self) -> bool:
        """Whether x, y and yaw are all finite."""
        return all(math.isfinite(value) for value in (self.x, self.y, self.yaw))

    def compose(self, dx: float, dy: float, dyaw: float, *, side: Side | None = None) -> Footstep:
        """The pose (dx, dy, dyaw) given in this footstep's frame, in the world.

        Args:
            dx: Forward offset in this sole's frame [m].
            dy: Leftward offset in this sole's frame [m].
            dyaw: Yaw offset [rad].
            side: Side of the result (default: this footstep's).
        """
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        return Footstep(
            self.side if side is None else side,
            self.x + c * dx - s * dy,
            self.y + s * dx + c * dy,
            wrap_angle(self.yaw + dyaw),
        )

    def relative_to(self, frame: Footstep) -> tuple[float, float, float]:
        """This pose in the frame of another footstep: (dx [m], dy [m], dyaw [rad])."""
        c, s = math.cos(frame.yaw), math.sin(frame.yaw)
        ex, ey = self.x - frame.x, self.y - frame.y
        return c * ex + s * ey, -s * ex + c * ey, wrap_angle(self.yaw - frame.yaw)

    def distance_to(self, other: Footstep) -> tuple[float, float]:
        """(position distance [m], absolute yaw difference [rad]) to another footstep."""
        return math.hypot(self.x - other.x, self.y - other.y), abs(
            wrap_angle(self.yaw - other.yaw)
        )
