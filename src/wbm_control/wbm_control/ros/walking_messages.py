"""Message converters of the controller node's walking topics.

- ``cmd_vel`` (geometry_msgs/Twist): linear.x forward [m/s], linear.y leftward [m/s],
  angular.z yaw rate [rad/s], in the walking frame (between the feet, x forward); the other
  fields are ignored.
- footstep plan (nav_msgs/Path): ``header.frame_id`` is the world frame (or empty); each pose is
  a sole frame's placement on the ground in the world: x, y and the yaw of its orientation (z,
  roll and pitch are ignored). A pose's ``header.frame_id`` names its foot: ``left``/``right``
  or the sole frame (``l_sole``/``r_sole`` on iCub); when every pose leaves it empty the sides
  alternate starting with the foot the robot swings next (the left one from standing). The
  plan is checked whole (feet alternate, first step on the right foot, every step within the
  step limits, no crossing) and rejected whole.
- ``goal_pose`` (geometry_msgs/PoseStamped, RViz's "2D Goal Pose"): where the walking frame
  (mid-feet) should end, x, y and yaw, in the world frame (empty frame_id: the world frame);
  another frame is rejected.
- ``walking/markers`` (visualization_msgs/MarkerArray): the remaining footsteps as flat cubes
  the size of the soles (left green, right red, the swing target brighter), the planned CoM (blue),
  ZMP (orange) and DCM (magenta) over the pattern generator's horizon as line strips.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
from builtin_interfaces.msg import Duration
from geometry_msgs.msg import Point, PoseStamped, Twist
from nav_msgs.msg import Path
from visualization_msgs.msg import Marker, MarkerArray

from wbm_control.walking import Feet, Footstep, WalkingController, WalkingReferences
from wbm_description.exceptions import InputError
from wbm_description.ros.messages import time_from_seconds

#: Marker colours (r, g, b, a).
COLORS = {
    "left": (0.2, 0.8, 0.2, 0.6),
    "right": (0.9, 0.2, 0.2, 0.6),
    "com": (0.2, 0.4, 1.0, 1.0),
    "zmp": (1.0, 0.6, 0.0, 1.0),
    "dcm": (0.9, 0.2, 0.9, 1.0),
}
PLAN_SAMPLES = 40  # points of each planned line strip
SOLE_THICKNESS = 0.005  # [m], the footstep cubes' height


def _yaw(x: float, y: float, z: float, w: float) -> float:
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def _frame_ok(frame_id: str, world_frame: str) -> bool:
    return frame_id in ("", world_frame)


def velocity_from_twist(message: Twist) -> tuple[float, float, float]:
    """(vx [m/s], vy [m/s], wz [rad/s]) of a cmd_vel message.

    Raises:
        InputError: NaN or inf.
    """
    values = (message.linear.x, message.linear.y, message.angular.z)
    if not all(math.isfinite(v) for v in values):
        raise InputError("cmd_vel", "finite linear.x, linear.y, angular.z", values)
    return tuple(float(v) for v in values)


def goal_from_pose(message: PoseStamped, world_frame: str) -> tuple[float, float, float]:
    """(x [m], y [m], yaw [rad]) of a goal_pose message in the world frame.

    Raises:
        InputError: Another frame, NaN or inf, or a zero quaternion.
    """
    if not _frame_ok(message.header.frame_id, world_frame):
        raise InputError(
            "goal_pose.header.frame_id", f"'{world_frame}' (or empty)", message.header.frame_id
        )
    p, o = message.pose.position, message.pose.orientation
    values = (p.x, p.y, o.x, o.y, o.z, o.w)
    if not all(math.isfinite(v) for v in values):
        raise InputError("goal_pose.pose", "finite values", values)
    if o.x * o.x + o.y * o.y + o.z * o.z + o.w * o.w < 1e-12:
        raise InputError("goal_pose.pose.orientation", "a non-zero quaternion", values[2:])
    return float(p.x), float(p.y), _yaw(o.x, o.y, o.z, o.w)


def footsteps_from_path(
    message: Path,
    world_frame: str,
    sole_frames: Mapping[str, str],
    first_side: str = "left",
) -> list[Footstep]:
    """The footsteps of a plan (see the module docstring for the convention).

    Args:
        message: The plan.
        world_frame: The frame the poses must be in.
        sole_frames: Side to sole frame name (``{"left": "l_sole", "right": "r_sole"}``).
        first_side: The side of the first step when the poses do not name their foot.

    Raises:
        InputError: Another frame, an unknown foot name, a mix of named and unnamed poses,
            NaN or inf, an empty plan.
    """
    if not _frame_ok(message.header.frame_id, world_frame):
        raise InputError(
            "footstep_plan.header.frame_id", f"'{world_frame}' (or empty)", message.header.frame_id
        )
    if not message.poses:
        raise InputError("footstep_plan.poses", "at least one footstep", 0)
    names = {side: side for side in ("left", "right")}
    names.update({frame: side for side, frame in sole_frames.items()})
    named = [pose.header.frame_id for pose in message.poses]
    if any(named) and not all(named):
        raise InputError(
            "footstep_plan.poses[].header.frame_id",
            "every pose naming its foot, or none (sides alternate)",
            named,
        )
    steps = []
    side = first_side
    for i, pose in enumerate(message.poses):
        if named[i]:
            if named[i] not in names:
                raise InputError(
                    f"footstep_plan.poses[{i}].header.frame_id",
                    f"one of {sorted(names)}",
                    named[i],
                )
            side = names[named[i]]
        p, o = pose.pose.position, pose.pose.orientation
        values = (p.x, p.y, o.x, o.y, o.z, o.w)
        if not all(math.isfinite(v) for v in values):
            raise InputError(f"footstep_plan.poses[{i}]", "finite values", values)
        steps.append(Footstep(side, float(p.x), float(p.y), _yaw(o.x, o.y, o.z, o.w)))
        side = "right" if side == "left" else "left"
    return steps


def _color(marker: Marker, rgba: tuple[float, float, float, float]) -> None:
    marker.color.r, marker.color.g, marker.color.b, marker.color.a = rgba


def _footstep_marker(
    feet: Feet, step: Footstep, marker_id: int, frame: str, stamp, *, bright: bool
) -> Marker:
    sole = feet.sole(step.side)
    marker = Marker(type=Marker.CUBE, action=Marker.ADD, id=marker_id, ns="footsteps")
    marker.header.frame_id, marker.header.stamp = frame, stamp
    center = feet.center(step)
    marker.pose.position.x, marker.pose.position.y = float(center[0]), float(center[1])
    marker.pose.position.z = 0.5 * SOLE_THICKNESS
    marker.pose.orientation.z = math.sin(0.5 * step.yaw)
    marker.pose.orientation.w = math.cos(0.5 * step.yaw)
    marker.scale.x, marker.scale.y, marker.scale.z = sole.length, sole.width, SOLE_THICKNESS
    r, g, b, a = COLORS[step.side]
    _color(marker, (r, g, b, 1.0 if bright else a))
    marker.lifetime = Duration(sec=1)
    return marker


def walking_markers(
    walking: WalkingController | None,
    references: WalkingReferences | None,
    world_frame: str,
    stamp_seconds: float,
) -> MarkerArray:
    """The plan as markers (see the module docstring); a DELETEALL first clears old ones.

    Before walking starts (``walking`` None) the array holds the DELETEALL alone: the topic is
    live from the start (recorders and viewers see it) and shows no plan.
    """
    stamp = time_from_seconds(stamp_seconds)
    clear = Marker(action=Marker.DELETEALL)
    clear.header.frame_id, clear.header.stamp = world_frame, stamp
    markers = [clear]
    if walking is None:
        return MarkerArray(markers=markers)
    feet = walking.geometry.feet
    sm = walking.state_machine
    target = sm.swing_target
    steps = ([target] if target is not None else []) + list(sm.footsteps)
    for i, step in enumerate(steps):
        markers.append(_footstep_marker(feet, step, i, world_frame, stamp, bright=step is target))
    plan = walking.plan
    if plan is not None and references is not None:
        times = np.linspace(references.time, float(plan.times[-1]), PLAN_SAMPLES)
        samples = [plan.sample(float(t)) for t in times]
        for j, key in enumerate(("com", "zmp", "dcm")):
            strip = Marker(type=Marker.LINE_STRIP, action=Marker.ADD, id=j, ns=f"planned_{key}")
            strip.header.frame_id, strip.header.stamp = world_frame, stamp
            strip.pose.orientation.w = 1.0
            strip.scale.x = 0.005
            _color(strip, COLORS[key])
            strip.points = [
                Point(x=float(getattr(s, key)[0]), y=float(getattr(s, key)[1]), z=0.0)
                for s in samples
            ]
            strip.lifetime = Duration(sec=1)
            markers.append(strip)
    return MarkerArray(markers=markers)


def walking_values(
    walking: WalkingController | None, references: WalkingReferences | None
) -> dict[str, str]:
    """The walking state for the diagnostics: phase, next footstep, command, plan mode."""
    if walking is None:
        return {"walking/phase": "inactive"}
    sm = walking.state_machine
    values = {
        "walking/phase": references.phase_name if references is not None else walking.state.value,
        "walking/mode": walking.mode,
        "walking/command": " ".join(f"{v:.4g}" for v in walking.command),
        "walking/remaining_steps": str(len(sm.footsteps) + (sm.swing_target is not None)),
    }
    upcoming = sm.swing_target or (sm.footsteps[0] if sm.footsteps else None)
    if upcoming is not None:
        values["walking/next_footstep"] = (
            f"{upcoming.side} {upcoming.x:.4f} {upcoming.y:.4f} {upcoming.yaw:.4f}"
        )
    return values
