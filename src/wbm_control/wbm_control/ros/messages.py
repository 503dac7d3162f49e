"""Message converters of the controller node (joints, IMU, targets, commands, diagnostics).

The shared ones (JointState, Odometry, Wrench, Time) are in :mod:`wbm_description.ros.messages`.
"""

from __future__ import annotations

import array
import math
from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
import pinocchio as pin
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import PointStamped, PoseStamped
from sensor_msgs.msg import Imu, JointState

from wbm_control.controller_status import ControllerStatus
from wbm_description.exceptions import InputError
from wbm_description.robot_io import ImuReading, JointCommand
from wbm_description.ros.cdr_writer import JointStateWriter
from wbm_description.ros.messages import (
    joint_arrays_from_message,
    joint_state_message,
    time_from_seconds,
)

_NANOSECONDS = 1_000_000_000


def stamp_nanoseconds(stamp: Any) -> int:
    """A builtin_interfaces/Time as integer nanoseconds (exact: stamps are compared)."""
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def joint_state_from_message(
    message: JointState, joint_index: Mapping[str, int], ndof: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Positions [rad], velocities [rad/s] and efforts [N m] (or None) in model order.

    Raises:
        InputError: Unknown, repeated or missing joints, lengths that differ, NaN/inf values,
            or no position or velocity.
    """
    arrays = joint_arrays_from_message(message, joint_index, require_all=True)
    if arrays.position is None or arrays.velocity is None:
        raise InputError("joint_states", "position and velocity of every joint")
    positions = np.empty(ndof)
    velocities = np.empty(ndof)
    positions[arrays.indices] = arrays.position
    velocities[arrays.indices] = arrays.velocity
    efforts = None
    if arrays.effort is not None:
        efforts = np.empty(ndof)
        efforts[arrays.indices] = arrays.effort
    return positions, velocities, efforts


class JointStateReader:
    """:func:`joint_state_from_message` with the name check done once per list of names.

    A robot sends the same names in the same order in every message: when a message's names
    are those of the last valid one, only the values are checked (lengths, finite); any other
    list of names gets the full check. Same results and errors as the function.

    Args:
        joint_index: Joint name to model index.
        ndof: Number of joints of the model.
    """

    def __init__(self, joint_index: Mapping[str, int], ndof: int):
        self._joint_index = joint_index
        self._ndof = ndof
        self._names: list[str] | None = None
        self._indices: np.ndarray | None = None
        self._identity = False

    def read(self, message: JointState) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Positions [rad], velocities [rad/s] and efforts [N m] (or None) in model order.

        Raises:
            InputError: As :func:`joint_state_from_message`.
        """
        return self.read_values(message.name, message.position, message.velocity, message.effort)

    def read_values(
        self, names: Sequence[str], position: Any, velocity: Any, effort: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """:meth:`read` of a message's fields (names and the three value arrays).

        E.g. from :class:`~wbm_description.ros.cdr.JointStateValues`. The arrays are not
        changed (read-only views are fine): the results are new arrays.

        Raises:
            InputError: As :func:`joint_state_from_message`.
        """
        if self._names is None or names != self._names:
            message = SimpleNamespace(
                name=names, position=position, velocity=velocity, effort=effort
            )
            arrays = joint_arrays_from_message(message, self._joint_index, require_all=True)
            if arrays.position is None or arrays.velocity is None:
                raise InputError("joint_states", "position and velocity of every joint")
            self._names = list(names)
            self._indices = arrays.indices
            self._identity = bool(np.array_equal(arrays.indices, np.arange(self._ndof)))
        n = self._ndof
        out = []
        for field, values in (("position", position), ("velocity", velocity), ("effort", effort)):
            if len(values) == 0:
                if field != "effort":
                    raise InputError("joint_states", "position and velocity of every joint")
                out.append(None)
                continue
            if len(values) != n:
                raise InputError(field, f"{n} values (one per name) or none", len(values))
            if isinstance(values, array.array):
                values = np.frombuffer(values, dtype=float)
            elif type(values) is not np.ndarray or values.dtype != np.float64:
                values = np.asarray(values, dtype=float)
            if not np.isfinite(values).all():
                raise InputError(field, "finite values (no NaN or inf)")
            if self._identity:
                out.append(values.copy())
            else:
                ordered = np.empty(n)
                ordered[self._indices] = values
                out.append(ordered)
        return out[0], out[1], out[2]


def imu_from_message(message: Imu) -> ImuReading:
    """sensor_msgs/Imu to an ImuReading (orientation xyzw, angular velocity, acceleration).

    The orientation is normalized; a linear acceleration with a non-finite component is read
    as all zeros (no accelerometer reading: the base estimator then does not fuse it). Checked
    and normalized on Python floats (numpy's per-call cost is most of the work on 10 values).

    Raises:
        InputError: NaN/inf orientation or angular velocity, or an orientation far from a unit
            quaternion.
    """
    o, w, a = message.orientation, message.angular_velocity, message.linear_acceleration
    return imu_from_values(
        (float(o.x), float(o.y), float(o.z), float(o.w)),
        (float(w.x), float(w.y), float(w.z)),
        (float(a.x), float(a.y), float(a.z)),
    )


def imu_from_values(
    orientation: Sequence[float], angular_velocity: Sequence[float], acceleration: Sequence[float]
) -> ImuReading:
    """:func:`imu_from_message` of the fields as Python floats (xyzw, xyz, xyz); same checks."""
    x, y, z, qw = orientation
    gx, gy, gz = angular_velocity
    if not all(map(math.isfinite, (x, y, z, qw, gx, gy, gz))):
        raise InputError("imu", "finite orientation and angular velocity")
    norm = math.sqrt(x * x + y * y + z * z + qw * qw)
    if abs(norm - 1.0) > 1e-3:
        raise InputError("imu.orientation", "a unit quaternion", f"norm {norm:.6g}")
    accel = acceleration
    if not all(map(math.isfinite, accel)):
        accel = (0.0, 0.0, 0.0)
    return ImuReading(
        np.array((x / norm, y / norm, z / norm, qw / norm)),
        np.array((gx, gy, gz)),
        np.array(accel),
    )


def point_from_message(message: PointStamped) -> np.ndarray:
    """(x, y, z) of a PointStamped [m] (frame_id is checked by the caller)."""
    p = message.point
    point = np.array([p.x, p.y, p.z])
    if not np.all(np.isfinite(point)):
        raise InputError("point", "finite coordinates (no NaN or inf)", point)
    return point


def pose_from_message(message: PoseStamped) -> pin.SE3:
    """pin.SE3 of a PoseStamped (quaternion x, y, z, w).

    Raises:
        InputError: NaN/inf values or a quaternion far from unit norm.
    """
    p, o = message.pose.position, message.pose.orientation
    position = np.array([p.x, p.y, p.z])
    quaternion = np.array([o.x, o.y, o.z, o.w])
    if not (np.all(np.isfinite(position)) and np.all(np.isfinite(quaternion))):
        raise InputError("pose", "finite position and orientation (no NaN or inf)")
    norm = np.linalg.norm(quaternion)
    if abs(norm - 1.0) > 1e-3:
        raise InputError("pose.orientation", "a unit quaternion", f"norm {norm:.6g}")
    rotation = pin.Quaternion(*(quaternion[[3, 0, 1, 2]] / norm)).toRotationMatrix()
    return pin.SE3(rotation, position)


def command_message(
    names: Sequence[str], command: JointCommand, stamp_seconds: float
) -> JointState:
    """joint_commands message of a JointCommand (None arrays sent empty: not commanded)."""
    return joint_state_message(
        names, command.position, command.velocity, command.effort, stamp_seconds=stamp_seconds
    )


class CommandMessage:
    """The ``joint_commands`` message, laid out once (names set), written serialized per command.

    :meth:`fill` returns the serialized bytes of the message :func:`command_message` builds
    (``Publisher.publish`` sends them as they are; :mod:`wbm_description.ros.cdr_writer`).
    """

    def __init__(self, names: Sequence[str]):
        self._writer = JointStateWriter(names)
        self._n = len(names)

    def fill(self, command: JointCommand, stamp_ns: int) -> bytes:
        """The serialized message of ``command`` at ``stamp_ns`` [ns] (None arrays sent empty).

        Raises:
            InputError: An array that is not one value per joint.
        """
        shape = (self._n,)
        arrays = []
        for field, values in (
            ("position", command.position),
            ("velocity", command.velocity),
            ("effort", command.effort),
        ):
            if values is not None:
                values = np.ascontiguousarray(values, dtype=float)
                if values.shape != shape:
                    raise InputError(field, f"{self._n} values (one per name)", values.shape)
            arrays.append(values)
        return self._writer.write(stamp_ns, arrays[0], arrays[1], arrays[2])


def diagnostics_message(
    status: ControllerStatus, stamp_seconds: float, *, name: str = "wbm_controller"
) -> DiagnosticArray:
    """DiagnosticArray of the controller status: solve time, task errors, contacts, ZMP, DCM."""
    values: dict[str, str] = {
        "mode": status.mode,
        "safe": str(status.safe).lower(),
        "solve_time_ms": f"{status.solve_time * 1e3:.4f}",
        "step_time_ms": f"{status.step_time * 1e3:.4f}",
        "active_contacts": ",".join(status.active_contacts),
        "fallback": status.fallback or "none",
    }
    if status.fallback:
        values["fallback_reason"] = status.fallback_reason
    if status.static_margin is not None:
        values["static_margin_m"] = f"{status.static_margin:.6g}"
    for task, error in status.task_errors.items():
        values[f"task_error/{task}"] = f"{error:.6g}"
    for key, vector in (
        ("com", status.com),
        ("dcm", status.dcm),
        ("zmp_measured", status.zmp_measured),
        ("zmp_estimated", status.zmp_estimated),
        ("zmp_command", status.zmp_command),
    ):
        if vector is not None:
            values[key] = " ".join(f"{x:.6g}" for x in vector)
    if status.safe:
        level, message = DiagnosticStatus.WARN, status.reason
    elif status.fallback:
        level, message = DiagnosticStatus.WARN, f"controlling with fallback {status.fallback}"
    else:
        level, message = DiagnosticStatus.OK, "controlling"
    return diagnostics_array(
        name,
        level,
        message,
        values,
        stamp_seconds,
    )


def diagnostics_array(
    name: str, level: bytes, message: str, values: Mapping[str, str], stamp_seconds: float
) -> DiagnosticArray:
    """A DiagnosticArray with one status."""
    array = DiagnosticArray()
    array.header.stamp = time_from_seconds(stamp_seconds)
    entry = DiagnosticStatus(level=level, name=name, message=message, hardware_id="")
    entry.values = [KeyValue(key=k, value=v) for k, v in values.items()]
    array.status = [entry]
    return array


def diagnostic_values(message: DiagnosticArray) -> dict[str, str]:
    """Key -> value of the first status of a DiagnosticArray (for tests and tools)."""
    if not message.status:
        return {}
    return {kv.key: kv.value for kv in message.status[0].values}
