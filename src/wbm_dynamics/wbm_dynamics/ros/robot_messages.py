"""Messages of the robot contract built from the backends' plain values (the ROS edge).

Joint states, odometry and wrenches use :mod:`wbm_description.ros.messages`; this module adds the
IMU, the F/T sensors and the clock, the parsing of ``joint_commands``, and
:class:`RobotMessages`, the node's messages laid out once and written serialized per publication.
"""

from __future__ import annotations

import numpy as np
from geometry_msgs.msg import WrenchStamped
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState

from wbm_description.exceptions import InputError
from wbm_description.robot_io import ImuReading, RobotReadings
from wbm_description.ros.cdr_writer import FixedMessageWriter, JointStateWriter
from wbm_description.ros.messages import (
    joint_arrays_from_message,
    time_from_seconds,
    wrench_message,
)
from wbm_dynamics.backends.backend import BaseState
from wbm_dynamics.held_command import (
    EFFORT_LIMIT_TOLERANCE,
    CommandUpdate,
    check_effort_limits,
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


class CommandReader:
    """:func:`command_update` with the name check done once per list of names.

    A controller sends the same names in the same order in every command: when a message's
    names are those of the last valid one (the same list, as the views of
    :mod:`wbm_description.ros.cdr` hand them over, or an equal one), only the values are
    checked (lengths, finite, torque limits); any other list of names gets the full check.
    Same updates and errors as the function.

    Args:
        joint_index: Joint name to its index (model order).
        torque_limits: Torque limit per joint [N m] in that order; None: not checked.
    """

    def __init__(self, joint_index: dict[str, int], torque_limits: np.ndarray | None = None):
        self._joint_index = joint_index
        self._torque_limits = torque_limits
        self._names: list[str] | None = None
        self._indices = np.zeros(0, dtype=int)
        self._thresholds = np.zeros(0)
        self._names_in_order = [""] * len(joint_index)
        for name, index in joint_index.items():
            self._names_in_order[index] = name

    def __call__(self, message: JointState) -> CommandUpdate:
        """The command the message gives (see :func:`command_update`).

        Raises:
            InputError: As :func:`command_update`.
        """
        names = message.name
        if self._names is None or (names is not self._names and names != self._names):
            update = command_update(message, self._joint_index, self._torque_limits)
            self._names = names
            self._indices = update.indices
            if self._torque_limits is not None:
                limits = np.asarray(self._torque_limits, dtype=float)[update.indices]
                limited = np.isfinite(limits) & (limits > 0.0)
                self._thresholds = np.where(
                    limited, limits * (1.0 + EFFORT_LIMIT_TOLERANCE), np.inf
                )
            return update
        n = len(self._indices)
        arrays = []
        for field in ("position", "velocity", "effort"):
            values = getattr(message, field)
            if len(values) == 0:
                arrays.append(None)
                continue
            if len(values) != n:
                raise InputError(field, f"{n} values (one per name) or none", len(values))
            values = np.asarray(values, dtype=float)
            if not np.isfinite(values).all():
                raise InputError(field, "finite values (no NaN or inf)")
            arrays.append(values)
        update = CommandUpdate(self._indices, *arrays)
        effort = update.effort
        if self._torque_limits is not None and effort is not None:
            if (np.abs(effort) > self._thresholds).any():
                check_effort_limits(update, self._torque_limits, self._names_in_order)
        return update


class RobotMessages:
    """The robot contract's messages of one publication, written serialized (ready to publish).

    Names, frames and covariances are laid out once at construction
    (:mod:`wbm_description.ros.cdr_writer`); each :meth:`fill` packs the stamp and the values
    only, and leaves the serialized bytes of every message in the attributes below, which
    ``Publisher.publish`` sends as they are: the same bytes rclpy would serialize from the
    messages of :func:`clock_message`, :func:`~wbm_description.ros.messages.
    joint_state_message`, :func:`imu_message`, :func:`wrench_stamped_message` and
    :func:`~wbm_description.ros.messages.odometry_message`, without building or setting
    ~30 Python message objects per sample.

    Args:
        joint_names: Joint order of ``joint_states``.
        imu_frame: frame_id of ``imu`` (None: no IMU).
        ft_frames: Sensor name to the frame_id of its ``ft/<sensor>``.
        base_frame: child_frame_id of ``ground_truth/odom`` (None: fixed base).
        world_frame: header.frame_id of ``ground_truth/odom``.
        imu_variances: (orientation [rad^2], angular velocity [(rad/s)^2], linear
            acceleration [(m/s^2)^2]) on the covariance diagonals.

    Attributes:
        clock: rosgraph_msgs/Clock, serialized (after the first :meth:`fill`).
        joint_state: sensor_msgs/JointState, serialized.
        imu: sensor_msgs/Imu, serialized; None without an IMU (or its reading).
        wrenches: Sensor name to its geometry_msgs/WrenchStamped, serialized.
        odometry: nav_msgs/Odometry, serialized; None for a fixed base (or without a base state).
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
        self._clock = FixedMessageWriter()
        self._joint_state = JointStateWriter(joint_names)
        self._imu = FixedMessageWriter((imu_frame,), 37) if imu_frame else None
        self._imu_covariances = [
            [variance if i in (0, 4, 8) else 0.0 for i in range(9)] for variance in imu_variances
        ]
        self._wrenches = {
            name: FixedMessageWriter((frame,), 6) for name, frame in ft_frames.items()
        }
        self._odometry = FixedMessageWriter((world_frame, base_frame), 85) if base_frame else None
        self._zeros = [0.0] * 36
        self.clock = b""
        self.joint_state = b""
        self.imu: bytes | None = None
        self.wrenches: dict[str, bytes] = {}
        self.odometry: bytes | None = None

    def fill(self, seconds: float, readings: RobotReadings, base: BaseState | None) -> None:
        """Write one publication's stamp [s of robot time] and values into every message."""
        stamp_ns = round(float(seconds) * 1_000_000_000)  # as time_from_seconds
        self.clock = self._clock.write(stamp_ns)
        self.joint_state = self._joint_state.write(
            stamp_ns, readings.joint_positions, readings.joint_velocities, readings.joint_efforts
        )
        self.imu = None
        if self._imu is not None and readings.imu is not None:
            reading = readings.imu
            orientation, gyro, accel = self._imu_covariances
            self.imu = self._imu.write(
                stamp_ns,
                reading.orientation_xyzw.tolist()
                + orientation
                + reading.angular_velocity.tolist()
                + gyro
                + reading.linear_acceleration.tolist()
                + accel,
            )
        self.wrenches = {
            name: writer.write(stamp_ns, readings.wrenches[name].tolist())
            for name, writer in self._wrenches.items()
        }
        self.odometry = None
        if self._odometry is not None and base is not None:
            zeros = self._zeros
            self.odometry = self._odometry.write(
                stamp_ns,
                base.configuration.tolist() + zeros + base.velocity.tolist() + zeros,
            )
