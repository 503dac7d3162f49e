"""Messages of the robot contract built from the backends' plain values (the ROS edge).

Joint states, odometry and wrenches use :mod:`wbm_description.ros.messages`; this module adds the
IMU, the F/T sensors and the clock, the parsing of ``joint_commands``, and
:class:`RobotMessages`, the node's messages allocated once and filled in place per publication.
"""

from __future__ import annotations

import array

import numpy as np
from geometry_msgs.msg import Wrench, WrenchStamped
from nav_msgs.msg import Odometry
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState

from wbm_description.robot_io import ImuReading, RobotReadings
from wbm_description.ros.messages import (
    joint_arrays_from_message,
    time_from_seconds,
    wrench_message,
)
from wbm_dynamics.backends.backend import BaseState
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


def _doubles(values: np.ndarray) -> array.array:
    """A float64 array as the array.array a message's float64[] field stores (no per-item copy)."""
    return array.array("d", np.ascontiguousarray(values, dtype=float).tobytes())


class RobotMessages:
    """The robot contract's messages, allocated once and filled in place for each publication.

    Names, frames and covariances are set at construction; each :meth:`fill` writes the stamp
    and values only (message fields set from arrays in one copy each), so a 1 kHz loop does not
    build ~30 Python objects per message.

    Args:
        joint_names: Joint order of ``joint_states``.
        imu_frame: frame_id of ``imu`` (None: no IMU).
        ft_frames: Sensor name to the frame_id of its ``ft/<sensor>``.
        base_frame: child_frame_id of ``ground_truth/odom`` (None: fixed base).
        world_frame: header.frame_id of ``ground_truth/odom``.
        imu_variances: (orientation [rad^2], angular velocity [(rad/s)^2], linear
            acceleration [(m/s^2)^2]) on the covariance diagonals.
    """

    def __init__(
        self,
        joint_names: list[str],
        *,
        imu_frame: str | None,
        ft_frames: dict[str, str],
        base_frame: str | None,
        world_frame: str,
        imu_variances: tuple[float, float, float] = (0.0, 0.0, 0.0),
    ):
        self.clock = Clock()
        self.joint_state = JointState()
        self.joint_state.name = list(joint_names)
        self.imu = None
        if imu_frame:
            self.imu = Imu()
            self.imu.header.frame_id = imu_frame
            for field, variance in zip(
                (
                    "orientation_covariance",
                    "angular_velocity_covariance",
                    "linear_acceleration_covariance",
                ),
                imu_variances,
                strict=True,
            ):
                covariance = np.zeros(9)
                covariance[[0, 4, 8]] = variance
                setattr(self.imu, field, covariance)
        self.wrenches = {}
        for name, frame in ft_frames.items():
            message = WrenchStamped()
            message.header.frame_id = frame
            self.wrenches[name] = message
        self.odometry = None
        if base_frame:
            self.odometry = Odometry()
            self.odometry.header.frame_id = world_frame
            self.odometry.child_frame_id = base_frame

    def fill(self, seconds: float, readings: RobotReadings, base: BaseState | None) -> None:
        """Write one publication's stamp [s of robot time] and values into every message."""
        stamp = time_from_seconds(seconds)
        self.clock.clock = stamp
        joints = self.joint_state
        joints.header.stamp = stamp
        joints.position = _doubles(readings.joint_positions)
        joints.velocity = _doubles(readings.joint_velocities)
        joints.effort = (
            _doubles(readings.joint_efforts) if readings.joint_efforts is not None else _EMPTY
        )
        imu = self.imu
        if imu is not None and readings.imu is not None:
            imu.header.stamp = stamp
            reading = readings.imu
            o = imu.orientation
            o.x, o.y, o.z, o.w = reading.orientation_xyzw.tolist()
            w = imu.angular_velocity
            w.x, w.y, w.z = reading.angular_velocity.tolist()
            a = imu.linear_acceleration
            a.x, a.y, a.z = reading.linear_acceleration.tolist()
        for name, message in self.wrenches.items():
            message.header.stamp = stamp
            _fill_wrench(message.wrench, readings.wrenches[name])
        odometry = self.odometry
        if odometry is not None and base is not None:
            odometry.header.stamp = stamp
            q = base.configuration.tolist()
            pose = odometry.pose.pose
            pose.position.x, pose.position.y, pose.position.z = q[:3]
            o = pose.orientation
            o.x, o.y, o.z, o.w = q[3:7]
            v = base.velocity.tolist()
            twist = odometry.twist.twist
            twist.linear.x, twist.linear.y, twist.linear.z = v[:3]
            twist.angular.x, twist.angular.y, twist.angular.z = v[3:6]


_EMPTY = array.array("d")


def _fill_wrench(message: Wrench, wrench: np.ndarray) -> None:
    f = wrench.tolist()
    message.force.x, message.force.y, message.force.z = f[:3]
    message.torque.x, message.torque.y, message.torque.z = f[3:6]
