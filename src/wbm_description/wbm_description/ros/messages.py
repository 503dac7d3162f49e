"""Converters between ROS 2 messages and wbm's numpy conventions (the ROS edge).

Only this module and the nodes touch message types. Conventions on the ROS side:

- sensor_msgs/JointState: by name, position [rad], velocity [rad/s], effort [N m]; an empty array
  means "not given" (for joint_commands: "not commanded").
- nav_msgs/Odometry of the base: pose of ``child_frame_id`` (the base link) in ``header.frame_id``
  (the world), quaternion (x, y, z, w); twist expressed in ``child_frame_id`` (the base frame),
  which is Pinocchio's base velocity v[:6].
- geometry_msgs/Wrench: force [N] and torque [N m], in the frame of the header.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Pose, Transform, Twist, Wrench
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState

from wbm_description.exceptions import InputError

_NANOSECONDS = 1_000_000_000


def time_from_seconds(seconds: float) -> Time:
    """builtin_interfaces/Time from seconds (rounded to the nanosecond)."""
    total = round(float(seconds) * _NANOSECONDS)
    return Time(sec=total // _NANOSECONDS, nanosec=total % _NANOSECONDS)


def seconds_from_time(stamp: Time) -> float:
    """Seconds of a builtin_interfaces/Time."""
    return stamp.sec + stamp.nanosec * 1e-9


def joint_state_message(
    names: Sequence[str],
    position: np.ndarray | None = None,
    velocity: np.ndarray | None = None,
    effort: np.ndarray | None = None,
    *,
    stamp_seconds: float = 0.0,
) -> JointState:
    """A JointState; arrays left None are sent empty."""
    message = JointState()
    message.header.stamp = time_from_seconds(stamp_seconds)
    message.name = list(names)
    for field, values in (("position", position), ("velocity", velocity), ("effort", effort)):
        if values is not None:
            array = np.asarray(values, dtype=float)
            if array.shape != (len(names),):
                raise InputError(field, f"{len(names)} values (one per name)", array.shape)
            setattr(message, field, array.tolist())
    return message


@dataclass(frozen=True)
class JointArrays:
    """Joint values of a JointState, reordered to a model's joint order.

    Attributes:
        indices: Model indices of the joints the message named, in message order.
        position: (n,) or None when the message's position array was empty.
        velocity: (n,) or None.
        effort: (n,) or None.
    """

    indices: np.ndarray
    position: np.ndarray | None
    velocity: np.ndarray | None
    effort: np.ndarray | None


def joint_arrays_from_message(
    message: JointState, joint_index: dict[str, int], *, require_all: bool
) -> JointArrays:
    """Validate a JointState against a model's joints and extract its arrays.

    Args:
        message: The message.
        joint_index: Joint name to model index.
        require_all: Whether every model joint must be named (joint_states) or a subset is fine
            (joint_commands).

    Raises:
        InputError: Unknown or repeated names, missing joints, array lengths that differ from the
            number of names (other than empty), NaN or inf values.
    """
    names = list(message.name)
    unknown = [name for name in names if name not in joint_index]
    if unknown:
        raise InputError("name", f"joints of the model ({len(joint_index)} known)", unknown)
    if len(set(names)) != len(names):
        raise InputError(
            "name", "each joint once", sorted({n for n in names if names.count(n) > 1})
        )
    if require_all and len(names) != len(joint_index):
        missing = [name for name in joint_index if name not in set(names)]
        raise InputError("name", "every joint of the model", f"missing {missing}")
    arrays: dict[str, np.ndarray | None] = {}
    for field in ("position", "velocity", "effort"):
        values = getattr(message, field)
        if len(values) == 0:
            arrays[field] = None
            continue
        if len(values) != len(names):
            raise InputError(field, f"{len(names)} values (one per name) or none", len(values))
        array = np.asarray(values, dtype=float)
        if not np.all(np.isfinite(array)):
            raise InputError(field, "finite values (no NaN or inf)")
        arrays[field] = array
    indices = np.array([joint_index[name] for name in names], dtype=int)
    return JointArrays(indices, arrays["position"], arrays["velocity"], arrays["effort"])


def pose_message(position: np.ndarray, quaternion_xyzw: np.ndarray) -> Pose:
    """geometry_msgs/Pose from a position [m] and a quaternion (x, y, z, w)."""
    pose = Pose()
    pose.position.x, pose.position.y, pose.position.z = (float(x) for x in position)
    o = pose.orientation
    o.x, o.y, o.z, o.w = (float(x) for x in quaternion_xyzw)
    return pose


def transform_message(position: np.ndarray, quaternion_xyzw: np.ndarray) -> Transform:
    """geometry_msgs/Transform from a translation [m] and a quaternion (x, y, z, w)."""
    transform = Transform()
    t = transform.translation
    t.x, t.y, t.z = (float(x) for x in position)
    r = transform.rotation
    r.x, r.y, r.z, r.w = (float(x) for x in quaternion_xyzw)
    return transform


def twist_message(twist: np.ndarray) -> Twist:
    """geometry_msgs/Twist from (linear [m/s], angular [rad/s])."""
    message = Twist()
    message.linear.x, message.linear.y, message.linear.z = (float(x) for x in twist[:3])
    message.angular.x, message.angular.y, message.angular.z = (float(x) for x in twist[3:6])
    return message


def wrench_message(wrench: np.ndarray) -> Wrench:
    """geometry_msgs/Wrench from (force [N], torque [N m])."""
    message = Wrench()
    message.force.x, message.force.y, message.force.z = (float(x) for x in wrench[:3])
    message.torque.x, message.torque.y, message.torque.z = (float(x) for x in wrench[3:6])
    return message


def wrench_from_message(message: Wrench) -> np.ndarray:
    """(force, torque) of a geometry_msgs/Wrench, checked finite."""
    f, t = message.force, message.torque
    wrench = np.array([f.x, f.y, f.z, t.x, t.y, t.z])
    if not np.all(np.isfinite(wrench)):
        raise InputError("wrench", "finite values (no NaN or inf)")
    return wrench


def wrench_from_values(values: Sequence[float]) -> np.ndarray:
    """:func:`wrench_from_message` of (force xyz, torque xyz) as Python floats; same check."""
    if not math.isfinite(sum(values)) and not all(map(math.isfinite, values)):
        # (A finite sum has finite terms; an infinite one may be an overflow of finite ones.)
        raise InputError("wrench", "finite values (no NaN or inf)")
    return np.array(values)


def odometry_message(
    base_configuration: np.ndarray,
    base_velocity_in_base: np.ndarray,
    *,
    world_frame: str,
    base_frame: str,
    stamp_seconds: float,
) -> Odometry:
    """nav_msgs/Odometry of the base from Pinocchio's q[:7] and v[:6].

    Args:
        base_configuration: (x, y, z, qx, qy, qz, qw), base in the world.
        base_velocity_in_base: (v, omega) of the base in base axes (Pinocchio's v[:6]).
        world_frame: header.frame_id.
        base_frame: child_frame_id.
        stamp_seconds: header stamp [s].
    """
    message = Odometry()
    message.header.stamp = time_from_seconds(stamp_seconds)
    message.header.frame_id = world_frame
    message.child_frame_id = base_frame
    message.pose.pose = pose_message(base_configuration[:3], base_configuration[3:7])
    message.twist.twist = twist_message(base_velocity_in_base)
    return message


class OdometryMessage:
    """A nav_msgs/Odometry allocated once (frames set) and filled in place per publication.

    The same message as :func:`odometry_message` (covariances zero), without building its
    sub-messages anew at every control step; the stamp is exact integer nanoseconds.

    Args:
        world_frame: header.frame_id.
        base_frame: child_frame_id.
    """

    def __init__(self, *, world_frame: str, base_frame: str):
        self.message = Odometry()
        self.message.header.frame_id = world_frame
        self.message.child_frame_id = base_frame

    def fill(
        self,
        base_configuration: np.ndarray,
        base_velocity_in_base: np.ndarray,
        stamp_ns: int,
    ) -> Odometry:
        """The message of Pinocchio's q[:7] and v[:6] at ``stamp_ns`` [ns] (see the class)."""
        message = self.message
        message.header.stamp.sec, message.header.stamp.nanosec = divmod(stamp_ns, _NANOSECONDS)
        q = np.asarray(base_configuration, dtype=float)[:7].tolist()
        pose = message.pose.pose
        pose.position.x, pose.position.y, pose.position.z = q[:3]
        o = pose.orientation
        o.x, o.y, o.z, o.w = q[3:7]
        v = np.asarray(base_velocity_in_base, dtype=float)[:6].tolist()
        twist = message.twist.twist
        twist.linear.x, twist.linear.y, twist.linear.z = v[:3]
        twist.angular.x, twist.angular.y, twist.angular.z = v[3:6]
        return message


def base_from_odometry(message: Odometry) -> tuple[np.ndarray, np.ndarray]:
    """Pinocchio's q[:7] and v[:6] of the base from an Odometry (inverse of odometry_message).

    Raises:
        InputError: NaN or inf values, or a quaternion far from unit norm.
    """
    p, o = message.pose.pose.position, message.pose.pose.orientation
    lin, ang = message.twist.twist.linear, message.twist.twist.angular
    configuration = np.array([p.x, p.y, p.z, o.x, o.y, o.z, o.w])
    velocity = np.array([lin.x, lin.y, lin.z, ang.x, ang.y, ang.z])
    if not (np.all(np.isfinite(configuration)) and np.all(np.isfinite(velocity))):
        raise InputError("odometry", "finite values (no NaN or inf)")
    norm = np.linalg.norm(configuration[3:7])
    if abs(norm - 1.0) > 1e-3:
        raise InputError("odometry.pose.orientation", "a unit quaternion", f"norm {norm:.6g}")
    configuration[3:7] /= norm
    return configuration, velocity
