"""Messages of the robot contract built from the backends' plain values (the ROS edge).

Joint states, odometry and wrenches use :mod:`wbm_description.ros.messages`; this module adds the
IMU, the F/T sensors and the clock, and the command parsing of ``joint_commands``.
"""

from __future__ import annotations

import numpy as np
from geometry_msgs.msg import WrenchStamped
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState

from wbm_description.robot_io import ImuReading, JointCommand
from wbm_description.ros.messages import (
    joint_arrays_from_message,
    time_from_seconds,
    wrench_message,
)


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


class CommandAccumulator:
    """Merges joint_commands messages (any subset of joints) into one held command.

    Joints named in a message take its values; a field sent empty means "not commanded" for the
    joints it names; joints not named keep what they had.

    Args:
        joint_names: The model's joints, in model order.
    """

    def __init__(self, joint_names: tuple[str, ...]):
        self.joint_names = joint_names
        self.joint_index = {name: i for i, name in enumerate(joint_names)}
        self.clear()

    def clear(self) -> None:
        """No joint commanded."""
        n = len(self.joint_names)
        self.position = np.full(n, np.nan)
        self.velocity = np.full(n, np.nan)
        self.effort = np.full(n, np.nan)

    def merge(self, message: JointState) -> JointCommand:
        """Merge a message; returns the resulting held command.

        Raises:
            InputError: Unknown or repeated joint, array length mismatch, NaN or inf; the held
                command is then unchanged.
        """
        arrays = joint_arrays_from_message(message, self.joint_index, require_all=False)
        for field in ("position", "velocity", "effort"):
            values = getattr(arrays, field)
            held = getattr(self, field)
            held[arrays.indices] = np.nan if values is None else values
        return self.command()

    def command(self) -> JointCommand:
        """The held command (NaN: not commanded)."""
        return JointCommand(self.position.copy(), self.velocity.copy(), self.effort.copy())
