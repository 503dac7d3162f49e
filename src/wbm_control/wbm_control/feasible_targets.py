"""Targets the robot can reach while it keeps its balance: clamp them, or say why not (no rclpy).

A target on ``targets/com`` or ``targets/<task>`` may be anywhere (5 m away, under the floor);
the controller must never lose its balance because of one. The rules, one function each:

* CoM (:func:`clamp_com_target`): horizontally over the support polygon shrunk by a target
  margin (wider than the ZMP margin: the DCM feedback must still be able to put the ZMP beyond
  the CoM to stop it there), vertically within a band [-down, +up] around the initial CoM
  height (a stretched knee or a deep squat is not a place to balance from); the motion towards
  it is slowed down so that the ZMP it asks stays in the support polygon
  (:func:`com_motion_duration`).
* A frame task (:class:`ReachLimit`): within ``max_reach`` of the frame's initial position and
  within the reach of its own limb: a ball around the limb's root joint (the shoulder of a hand,
  the hip of a foot; computed once at start from the kinematics) whose radius is a fraction of
  the limb's length when stretched (0.99 by default: an elbow of two equal segments still bent
  by about 16 degrees, out of the singularity), never less than the frame's distance at start plus
  :data:`START_SLACK` (the start pose, and the pose where the limb settled, are accepted). A
  limb at full stretch is singular and drags the CoM; a fraction of it is a target the QP
  tracks without pulling the robot over.
* A sole held in contact: its target is rejected (it would break the contact; release the
  contact first).

Frames: world, z up; positions [m].
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from wbm_control.balance import project_into_polygon

START_SLACK = 0.01
"""A limb's reach is at least its frame's distance from the limb's root at start plus this [m]."""


@dataclass(frozen=True)
class Clamped:
    """A target after its clamp.

    Attributes:
        value: The accepted target (position [m], or pose).
        reasons: What moved it (empty: accepted as given).
    """

    value: object
    reasons: tuple[str, ...] = ()

    @property
    def clamped(self) -> bool:
        """Whether the target was moved."""
        return bool(self.reasons)

    @property
    def note(self) -> str:
        """The reasons in one line ("" when not clamped)."""
        return "; ".join(self.reasons)


def clamp_com_target(
    target: np.ndarray,
    support_polygon: np.ndarray,
    *,
    margin: float,
    home_height: float,
    height_up: float,
    height_down: float,
) -> Clamped:
    """A CoM target brought over the shrunk support polygon and into the height band.

    Args:
        target: Requested CoM position (3,) [m], world.
        support_polygon: (m, 2) counter-clockwise convex polygon of the held soles [m]; with
            fewer than 3 corners (one sole, a point) the horizontal position is not clamped.
        margin: The CoM stays this far inside the polygon's edges [m] (a margin larger than
            the polygon's inradius brings the target to the polygon's centroid).
        home_height: CoM height at the controller's start [m].
        height_up: Largest rise above ``home_height`` [m].
        height_down: Largest drop below ``home_height`` [m].
    """
    value = np.array(target, dtype=float)
    reasons = []
    if len(support_polygon) >= 3:
        inside = project_into_polygon(value, support_polygon, margin)
        if np.linalg.norm(inside[:2] - value[:2]) > 1e-9:
            reasons.append(f"over the support polygon shrunk by {margin:g} m")
            value = inside
    low, high = home_height - height_down, home_height + height_up
    if not low <= value[2] <= high:
        reasons.append(f"height within [{low:.3f}, {high:.3f}] m")
        value[2] = float(np.clip(value[2], low, high))
    return Clamped(value, tuple(reasons))


#: Peak |s''| of the quintic time scaling s(tau) = 10 tau^3 - 15 tau^4 + 6 tau^5 on [0, 1]:
#: 10 / sqrt(3), reached at tau = 1/2 -+ sqrt(3)/6.
QUINTIC_PEAK_ACCELERATION = 10.0 / np.sqrt(3.0)


def com_motion_duration(
    distance: float, duration: float, *, omega: float, zmp_allowance: float
) -> float:
    """The shortest duration [s] >= ``duration`` of a quintic CoM motion the feet can carry.

    In the linear inverted pendulum the ZMP is p = c - cdd / omega^2: a quintic over
    ``distance`` d in T seconds asks the ZMP to lead or trail the CoM by up to
    (10 / sqrt(3)) d / (omega^2 T^2). With the CoM kept ``target_margin`` inside the support
    polygon and the ZMP allowed up to ``zmp_margin`` from its edges, that offset must stay
    within ``zmp_allowance`` = target_margin - zmp_margin [m]:
    T >= sqrt((10 / sqrt(3)) d / (omega^2 zmp_allowance)).

    Args:
        distance: Horizontal distance of the motion [m].
        duration: Requested duration [s].
        omega: Natural frequency sqrt(g / z) of the pendulum [1/s].
        zmp_allowance: Largest ZMP offset from the CoM the motion may ask [m] (<= 0: no limit).
    """
    if zmp_allowance <= 0.0 or distance <= 0.0:
        return duration
    shortest = float(np.sqrt(QUINTIC_PEAK_ACCELERATION * distance / (omega**2 * zmp_allowance)))
    return max(duration, shortest)


def project_into_ball(point: np.ndarray, center: np.ndarray, radius: float) -> np.ndarray:
    """The closest point to ``point`` in the ball of ``radius`` [m] around ``center``."""
    point = np.asarray(point, dtype=float)
    offset = point - center
    distance = float(np.linalg.norm(offset))
    if distance <= radius:
        return point.copy()
    return center + offset * (radius / distance)


def project_into_balls(
    point: np.ndarray, balls: Sequence[tuple[np.ndarray, float]], *, iterations: int = 200
) -> np.ndarray:
    """The closest point to ``point`` in the intersection of balls (center [m], radius [m]).

    Dykstra's alternating projections (converge to the projection onto an intersection of
    convex sets). If the balls do not intersect, the result lies in the last ball, as close
    to the others as the iterations bring it.
    """
    x = np.asarray(point, dtype=float).copy()
    increments = [np.zeros(3) for _ in balls]
    for _ in range(iterations):
        previous = x.copy()
        for i, (center, radius) in enumerate(balls):
            y = project_into_ball(x + increments[i], center, radius)
            increments[i] = x + increments[i] - y
            x = y
        if np.linalg.norm(x - previous) < 1e-10:
            break
    return x


def limb_root_joint(model: pin.Model, frame_id: int, other_frame_ids: Sequence[int]) -> int:
    """The first joint of a frame's own limb: the joint just below where its chain branches.

    Walking up from the frame's parent joint, the limb's root is the highest joint that is
    not an ancestor of any of ``other_frame_ids`` (the other limbs' frames) and is not the
    floating base. E.g. a hand's shoulder, a foot's hip.
    """
    shared = set()
    for other in other_frame_ids:
        shared.update(model.supports[model.frames[other].parentJoint])  # root ... joint
    root = model.frames[frame_id].parentJoint
    for joint in reversed(list(model.supports[root])):
        if joint == 0 or joint in shared or model.joints[joint].nq >= 7:
            break
        root = joint
    return root


@dataclass(frozen=True)
class ReachLimit:
    """Where a frame task's target may be: the intersection of two balls (world, [m]).

    Attributes:
        home: The frame's position at start; the target stays within ``max_reach`` of it.
        max_reach: Radius around ``home`` [m] (the task's setting).
        limb_root: Position of the limb's root joint at start.
        limb_reach: Radius around ``limb_root`` [m] (a fraction of the stretched limb).
    """

    home: np.ndarray
    max_reach: float
    limb_root: np.ndarray
    limb_reach: float

    @classmethod
    def at_start(
        cls,
        model: pin.Model,
        data: pin.Data,
        frame_id: int,
        other_frame_ids: Sequence[int],
        *,
        max_reach: float,
        reach_fraction: float,
    ) -> ReachLimit:
        """The limit of a frame task, from the kinematics at start.

        ``data`` must hold the frame placements and joint placements of the configuration
        at start (``pin.framesForwardKinematics``). The limb's stretched length is the sum of
        the distances between successive joint origins from its root to the frame.

        Args:
            model: The Pinocchio model.
            data: Its data, at the start configuration.
            frame_id: The task's frame.
            other_frame_ids: The frames of the other limbs (to find where this one branches).
            max_reach: The task's ``max_reach`` [m].
            reach_fraction: Fraction (0, 1] of the stretched limb's length [-].
        """
        root = limb_root_joint(model, frame_id, other_frame_ids)
        support = list(model.supports[model.frames[frame_id].parentJoint])  # universe ... joint
        limb = support[support.index(root) :] if root in support else support[-1:]
        points = [data.oMf[frame_id].translation, *(data.oMi[j].translation for j in limb[::-1])]
        length = sum(
            float(np.linalg.norm(a - b)) for a, b in zip(points[:-1], points[1:], strict=True)
        )
        home = data.oMf[frame_id].translation.copy()
        limb_root = data.oMi[root].translation.copy()
        return cls(
            home=home,
            max_reach=max_reach,
            limb_root=limb_root,
            # Never less than where the frame is at start (the start is feasible).
            limb_reach=max(
                reach_fraction * length, float(np.linalg.norm(home - limb_root)) + START_SLACK
            ),
        )

    def clamp(self, pose: pin.SE3) -> Clamped:
        """The pose with its position brought into both balls (orientation unchanged)."""
        position = pose.translation
        reasons = []
        if np.linalg.norm(position - self.home) > self.max_reach + 1e-9:
            reasons.append(f"within max_reach {self.max_reach:g} m of the start position")
        if np.linalg.norm(position - self.limb_root) > self.limb_reach + 1e-9:
            reasons.append(f"within the limb's reach {self.limb_reach:.3f} m of its root joint")
        if not reasons:
            return Clamped(pose.copy())
        inside = project_into_balls(
            position, [(self.limb_root, self.limb_reach), (self.home, self.max_reach)]
        )
        target = pose.copy()
        target.translation = inside
        return Clamped(target, tuple(reasons))


def held_sole_rejection(task: str, sole: str) -> str:
    """Why the target of a held sole's task is rejected."""
    return (
        f"its sole '{sole}' is held in contact; a target would break the contact "
        "(release the contact first)"
    )
