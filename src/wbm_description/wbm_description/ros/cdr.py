"""The robot contract's hot-path messages read from their serialized form (CDR), no objects built.

rclpy turns a received message into Python objects field by field, each nested message through
its class's checking ``__init__`` and setters, every fixed-size float64 array (covariances) into
a numpy array: on the 2-core machine a WrenchStamped costs about 58 us of CPU to take, an Imu
75-80 us, a JointState of iCub 50 us, an Odometry 140 us and a Clock 18 us, per message, for
every robot sample in every node on the loop. The readers here parse the serialized bytes
instead (the subscription is created with ``raw=True``): ``struct.unpack_from`` of the
fixed-size parts, the joint arrays as numpy arrays in one copy each, the joint names decoded
only when their bytes differ from the previous message's (a robot sends the same names every
time): 2-20 us per message.

Each reader returns a :class:`MessageView`: the fields the message type has, by the same names and
nesting (``view.header.stamp.sec``, ``view.wrench.force.x``, ``view.name``, ``view.position``),
so the converters of :mod:`wbm_description.ros.messages` and the nodes read a view exactly as
they read the message. The header's stamp is a real builtin_interfaces/Time (it can be put in a
message), the rest plain values: sequences of float64 are numpy arrays (float64, writable
copies), fixed arrays (covariances) too.

Format: the serialized message is a 4-byte encapsulation header (``00 01``: CDR, little endian)
then the fields in declaration order, each primitive aligned to its size (8 at most) from the
end of the encapsulation header; a string is a uint32 length (with the terminating NUL) then its
bytes; a sequence a uint32 count then its elements. Another encapsulation (big endian, XCDR2)
raises :class:`CdrError`; :func:`decoder` then falls back to rclpy's own deserialization.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.serialization import deserialize_message
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState

from wbm_description.exceptions import InputError

CDR_LITTLE_ENDIAN = b"\x00\x01"
"""The encapsulation identifier this module reads (rmw_fastrtps, rmw_cyclonedds on x86/ARM)."""

_ORIGIN = 4  # alignment is counted from the end of the encapsulation header
_U32 = struct.Struct("<I")
_STAMP = struct.Struct("<iI")
_IMU = struct.Struct("<37d")  # orientation 4, covariance 9, angular velocity 3 + 9, accel 3 + 9
_WRENCH = struct.Struct("<6d")
_ODOMETRY = struct.Struct("<85d")  # pose 7 + covariance 36, twist 6 + covariance 36


class CdrError(InputError):
    """Serialized bytes this module cannot read (another encapsulation, truncated data)."""


class MessageView(SimpleNamespace):
    """A message read from its serialized form: its fields as attributes (see the module)."""


class _Reader:
    """A position in the serialized bytes of one message."""

    __slots__ = ("data", "offset")

    def __init__(self, data: bytes, what: str):
        if data[:2] != CDR_LITTLE_ENDIAN:
            raise CdrError(what, "CDR little-endian encapsulation (00 01)", bytes(data[:2]).hex())
        self.data = data
        self.offset = _ORIGIN

    def align(self, size: int) -> None:
        self.offset += -(self.offset - _ORIGIN) % size

    def uint32(self) -> int:
        self.align(4)
        value = _U32.unpack_from(self.data, self.offset)[0]
        self.offset += 4
        return value

    def string(self) -> str:
        length = self.uint32()  # with the terminating NUL
        start = self.offset
        self.offset = start + length
        if length == 0 or self.offset > len(self.data):
            raise CdrError("string", "a NUL-terminated string within the message", length)
        return self.data[start : self.offset - 1].decode()

    def header(self) -> MessageView:
        self.align(4)
        sec, nanosec = _STAMP.unpack_from(self.data, self.offset)
        self.offset += 8
        # A real builtin_interfaces/Time: a node may put it in a message it publishes.
        return MessageView(stamp=Time(sec=sec, nanosec=nanosec), frame_id=self.string())

    def doubles(self, layout: struct.Struct) -> tuple[float, ...]:
        self.align(8)
        values = layout.unpack_from(self.data, self.offset)
        self.offset += layout.size
        return values

    def double_sequence(self) -> np.ndarray:
        count = self.uint32()
        if count:
            self.align(8)
        values = np.frombuffer(self.data, dtype="<f8", count=count, offset=self.offset)
        self.offset += 8 * count
        return values.astype(float)  # a writable copy, native order


def _vector(values: tuple[float, ...], start: int) -> MessageView:
    return MessageView(x=values[start], y=values[start + 1], z=values[start + 2])


def _quaternion(values: tuple[float, ...], start: int) -> MessageView:
    x, y, z, w = values[start : start + 4]
    return MessageView(x=x, y=y, z=z, w=w)


def _parse(what: str, read: Callable[[_Reader], MessageView], data: bytes) -> MessageView:
    reader = _Reader(data, what)
    try:
        return read(reader)
    except (struct.error, ValueError, UnicodeDecodeError) as error:
        raise CdrError(what, "a complete serialized message", str(error)) from None


class JointStateDecoder:
    """sensor_msgs/JointState from CDR; the names are decoded only when their bytes change.

    One reader per subscription: it keeps the bytes and the list of the last names.
    """

    def __init__(self) -> None:
        self._names_bytes = b""
        self._names: list[str] = []

    def __call__(self, data: bytes) -> MessageView:
        """The view of one serialized JointState (see the module)."""
        return _parse("joint_states", self._read, data)

    def _read(self, reader: _Reader) -> MessageView:
        header = reader.header()
        start = reader.offset
        count = reader.uint32()
        names = None
        # The same names in the same layout: their bytes match (alignment padding included,
        # which can differ between equal lists; they are then decoded and compared).
        length = len(self._names_bytes)
        if count == len(self._names) and reader.data[start : start + length] == self._names_bytes:
            names = self._names
            reader.offset = start + length
        else:
            names = [reader.string() for _ in range(count)]
            if names != self._names:
                self._names = names
            self._names_bytes = bytes(reader.data[start : reader.offset])
        position = reader.double_sequence()
        velocity = reader.double_sequence()
        effort = reader.double_sequence()
        return MessageView(
            header=header, name=names, position=position, velocity=velocity, effort=effort
        )


def read_imu(data: bytes) -> MessageView:
    """sensor_msgs/Imu from CDR (covariances as (9,) arrays)."""

    def read(reader: _Reader) -> MessageView:
        header = reader.header()
        v = reader.doubles(_IMU)
        return MessageView(
            header=header,
            orientation=_quaternion(v, 0),
            orientation_covariance=np.array(v[4:13]),
            angular_velocity=_vector(v, 13),
            angular_velocity_covariance=np.array(v[16:25]),
            linear_acceleration=_vector(v, 25),
            linear_acceleration_covariance=np.array(v[28:37]),
        )

    return _parse("imu", read, data)


def read_wrench_stamped(data: bytes) -> MessageView:
    """geometry_msgs/WrenchStamped from CDR."""

    def read(reader: _Reader) -> MessageView:
        header = reader.header()
        v = reader.doubles(_WRENCH)
        return MessageView(
            header=header, wrench=MessageView(force=_vector(v, 0), torque=_vector(v, 3))
        )

    return _parse("wrench", read, data)


def read_odometry(data: bytes) -> MessageView:
    """nav_msgs/Odometry from CDR (covariances as (36,) arrays)."""

    def read(reader: _Reader) -> MessageView:
        header = reader.header()
        child_frame_id = reader.string()
        v = reader.doubles(_ODOMETRY)
        pose = MessageView(position=_vector(v, 0), orientation=_quaternion(v, 3))
        twist = MessageView(linear=_vector(v, 43), angular=_vector(v, 46))
        return MessageView(
            header=header,
            child_frame_id=child_frame_id,
            pose=MessageView(pose=pose, covariance=np.array(v[7:43])),
            twist=MessageView(twist=twist, covariance=np.array(v[49:85])),
        )

    return _parse("odometry", read, data)


def read_clock(data: bytes) -> MessageView:
    """rosgraph_msgs/Clock from CDR (``clock`` a real builtin_interfaces/Time)."""

    def read(reader: _Reader) -> MessageView:
        sec, nanosec = _STAMP.unpack_from(reader.data, reader.offset)
        return MessageView(clock=Time(sec=sec, nanosec=nanosec))

    return _parse("clock", read, data)


# ---------------------------------------------------------------- values, no views
#
# A node's own callbacks may take the values they use straight from the bytes (no view, no
# Time message): ``(stamp_ns, frame_id, values)`` tuples. Bytes of another encapsulation are
# deserialized by rclpy and converted to the same tuple (:func:`values_decoder`).

_HEADER = struct.Struct("<iII")  # stamp sec, nanosec, frame_id length


def _header_values(data: bytes, what: str) -> tuple[int, str, int]:
    """(stamp [ns], frame_id, offset after the header) of a message starting with a Header."""
    if data[:2] != CDR_LITTLE_ENDIAN:
        raise CdrError(what, "CDR little-endian encapsulation (00 01)", bytes(data[:2]).hex())
    try:
        sec, nanosec, length = _HEADER.unpack_from(data, _ORIGIN)
    except struct.error as error:
        raise CdrError(what, "a complete serialized message", str(error)) from None
    start = _ORIGIN + 12
    end = start + length
    if length == 0 or end > len(data):
        raise CdrError("string", "a NUL-terminated string within the message", length)
    try:
        frame_id = data[start : end - 1].decode() if length > 1 else ""
    except UnicodeDecodeError as error:
        raise CdrError(what, "a complete serialized message", str(error)) from None
    return sec * 1_000_000_000 + nanosec, frame_id, end


def _doubles_at(data: bytes, offset: int, layout: struct.Struct, what: str) -> tuple[float, ...]:
    offset += -(offset - _ORIGIN) % 8
    try:
        return layout.unpack_from(data, offset)
    except struct.error as error:
        raise CdrError(what, "a complete serialized message", str(error)) from None


def wrench_stamped_values(data: bytes) -> tuple[int, str, tuple[float, ...]]:
    """geometry_msgs/WrenchStamped from CDR: (stamp [ns], frame_id, (force xyz, torque xyz))."""
    stamp, frame_id, offset = _header_values(data, "wrench")
    return stamp, frame_id, _doubles_at(data, offset, _WRENCH, "wrench")


def imu_values(data: bytes) -> tuple[int, str, tuple[float, ...]]:
    """sensor_msgs/Imu from CDR: (stamp [ns], frame_id, 37 floats).

    The floats: orientation xyzw [0:4], its covariance [4:13], angular velocity [13:16], its
    covariance [16:25], linear acceleration [25:28], its covariance [28:37].
    """
    stamp, frame_id, offset = _header_values(data, "imu")
    return stamp, frame_id, _doubles_at(data, offset, _IMU, "imu")


def _stamp_ns(stamp: Any) -> int:
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def _wrench_values_of(message: Any) -> tuple[int, str, tuple[float, ...]]:
    f, t = message.wrench.force, message.wrench.torque
    values = (f.x, f.y, f.z, t.x, t.y, t.z)
    return _stamp_ns(message.header.stamp), message.header.frame_id, values


def _imu_values_of(message: Any) -> tuple[int, str, tuple[float, ...]]:
    o, w, a = message.orientation, message.angular_velocity, message.linear_acceleration
    values = (
        (o.x, o.y, o.z, o.w, *map(float, message.orientation_covariance))
        + (w.x, w.y, w.z, *map(float, message.angular_velocity_covariance))
        + (a.x, a.y, a.z, *map(float, message.linear_acceleration_covariance))
    )
    return _stamp_ns(message.header.stamp), message.header.frame_id, values


class JointStateValues:
    """sensor_msgs/JointState from CDR: (stamp [ns], frame_id, names, position, velocity, effort).

    The arrays are read-only float64 views of the bytes (copy them to keep or change them);
    the names are decoded only when their bytes change (the same list object otherwise), as
    :class:`JointStateDecoder`. One per subscription.
    """

    def __init__(self) -> None:
        self._decoder = JointStateDecoder()

    def __call__(self, data: bytes) -> tuple[Any, ...]:
        """The values of one serialized JointState."""
        stamp, frame_id, offset = _header_values(data, "joint_states")
        reader = _Reader(data, "joint_states")
        reader.offset = offset
        decoder = self._decoder
        try:
            start = offset
            count = reader.uint32()
            length = len(decoder._names_bytes)
            if count == len(decoder._names) and data[start : start + length] == (
                decoder._names_bytes
            ):
                names = decoder._names
                reader.offset = start + length
            else:
                names = [reader.string() for _ in range(count)]
                if names != decoder._names:
                    decoder._names = names
                decoder._names_bytes = bytes(data[start : reader.offset])
            arrays = []
            for _ in range(3):
                count = reader.uint32()
                if count:
                    reader.align(8)
                arrays.append(np.frombuffer(data, "<f8", count, reader.offset))
                reader.offset += 8 * count
        except (struct.error, ValueError, UnicodeDecodeError) as error:
            raise CdrError("joint_states", "a complete serialized message", str(error)) from None
        return stamp, frame_id, names, arrays[0], arrays[1], arrays[2]


def _joint_state_values_of(message: Any) -> tuple[Any, ...]:
    return (
        _stamp_ns(message.header.stamp),
        message.header.frame_id,
        list(message.name),
        np.asarray(message.position, dtype=float),
        np.asarray(message.velocity, dtype=float),
        np.asarray(message.effort, dtype=float),
    )


_VALUES: dict[type, tuple[Callable[[], Callable[[bytes], Any]], Callable[[Any], Any]]] = {
    JointState: (JointStateValues, _joint_state_values_of),
    Imu: (lambda: imu_values, _imu_values_of),
    WrenchStamped: (lambda: wrench_stamped_values, _wrench_values_of),
}


def values_decoder(msg_type: type) -> Callable[[bytes], Any]:
    """The serialized bytes of a ``msg_type`` to its values tuple (a reader of its own per call).

    :func:`imu_values`-like tuples: JointState (:class:`JointStateValues`), Imu
    (:func:`imu_values`), WrenchStamped (:func:`wrench_stamped_values`). Bytes the reader cannot
    read are deserialized by rclpy and converted to the same tuple; :class:`CdrError` for bytes
    neither can read.
    """
    make, of_message = _VALUES[msg_type]
    read = make()

    def decode(data: bytes) -> Any:
        try:
            return read(data)
        except CdrError as error:
            try:
                message = deserialize_message(data, msg_type)
            except Exception:  # noqa: BLE001 - rclpy's errors of bad bytes have no common type
                raise error from None
            return of_message(message)

    return decode


_READERS: dict[type, Callable[[], Callable[[bytes], MessageView]]] = {
    Clock: lambda: read_clock,
    JointState: JointStateDecoder,
    Imu: lambda: read_imu,
    WrenchStamped: lambda: read_wrench_stamped,
    Odometry: lambda: read_odometry,
}


def has_reader(msg_type: type) -> bool:
    """Whether this module reads ``msg_type`` from its serialized form."""
    return msg_type in _READERS


def decoder(msg_type: type) -> Callable[[bytes], Any]:
    """The serialized bytes of a ``msg_type`` to its view (a reader of its own per call).

    Bytes the reader cannot read (another encapsulation) are deserialized by rclpy instead (a
    real message: it has the same fields). The decoder raises :class:`CdrError` for bytes
    neither can read.

    Raises:
        KeyError: No reader for ``msg_type`` (:func:`has_reader`).
    """
    read = _READERS[msg_type]()

    def decode(data: bytes) -> Any:
        try:
            return read(data)
        except CdrError as error:
            try:
                return deserialize_message(data, msg_type)
            except Exception:  # noqa: BLE001 - rclpy's errors of bad bytes have no common type
                raise error from None

    return decode


__all__ = [
    "CDR_LITTLE_ENDIAN",
    "CdrError",
    "JointStateDecoder",
    "JointStateValues",
    "MessageView",
    "decoder",
    "has_reader",
    "imu_values",
    "read_clock",
    "read_imu",
    "read_odometry",
    "read_wrench_stamped",
    "values_decoder",
    "wrench_stamped_values",
]
