"""Messages of the robot contract built from the backends' plain values (the ROS edge).

Joint states, odometry and wrenches use :mod:`wbm_description.ros.messages`; this module adds the
IMU, the F/T sensors and the clock, and the parsing of ``joint_commands``.
"""

from __future__ import annotations

import numpy as np
from geometry_msgs.msg import WrenchStamped
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState

from wbm_description.robot_io import ImuReading
from wbm_description.ros.messages import (
    joint_arrays_from_message,
    time_from_seconds,
    wrench_message,
)
from wbm_dynamics.held_command import CommandUpdate, check_effort_limits


def clock_message(seconds: float) -> Clock:
    """rosgraph_msgs/Clock at a simulated time [s]."""
    return Clock(clock=time_from_seconds(seconds))


def imu_message(
    reading: ImuReading,
    *,
    frame: str,
    stamp_seconds: float,
    orientation_variance: float = 0.0,
    angular_velocity_variance: float = 0.0,
    linear_acceleration_variance: float = 0.0,
) -> Imu:
    """sensor_msgs/Imu in the IMU frame; covariances diagonal (all zero: unknown)."""
    message = Imu()
    message.header.stamp = time_from_seconds(stamp_seconds)
    message.header.frame_id = frame
    o = message.orientation
    o.x, o.y, o.z, o.w = (float(x) for x in reading.orientation_xyzw)
    w = message.angular_velocity
    w.x, w.y, w.z = (float(x) for x in reading.angular_velocity)
    a = message.linear_acceleration
    a.x, a.y, a.z = (float(x) for x in reading.linear_acceleration)
    for field, variance in (
        ("orientation_covariance", orientation_variance),
        ("angular_velocity_covariance", angular_velocity_variance),
        ("linear_acceleration_covariance", linear_acceleration_variance),
    ):
        covariance = np.zeros(9)
        covariance[[0, 4, 8]] = variance
        setattr(message, field, covariance)
    return message


def wrench_stamped_message(
    wrench: np.ndarray, *, frame: str, stamp_seconds: float
) -> WrenchStamped:
    """geometry_msgs/WrenchStamped of an F/T reading, in the sensor frame."""
    message = WrenchStamped()
    message.header.stamp = time_from_seconds(stamp_seconds)
    message.header.frame_id = frame
    message.wrench = wrench_message(wrench)
    return message


def command_update(
    message: JointState,
    joint_index: dict[str, int],
    torque_limits: np.ndarray | None = None,
) -> CommandUpdate:
    """The command a ``joint_commands`` message gives (any subset of joints, by name).

    An array sent empty means "not commanded" for the joints the message names (see
    :class:`~wbm_dynamics.held_command.HeldCommand`).

    Args:
        message: The message.
        joint_index: Joint name to its index (model order).
        torque_limits: Torque limit per joint [N m] in that order; None: not checked.

    Raises:
        InputError: Unknown or repeated joint, array length mismatch, NaN or inf, or an effort
            beyond a joint's torque limit (:func:`~wbm_dynamics.held_command.
            check_effort_limits`).
    """
    arrays = joint_arrays_from_message(message, joint_index, require_all=False)
    update = CommandUpdate(arrays.indices, arrays.position, arrays.velocity, arrays.effort)
    if torque_limits is not None:
        names = [""] * len(joint_index)
        for name, index in joint_index.items():
            names[index] = name
        check_effort_limits(update, torque_limits, names)
    return update
