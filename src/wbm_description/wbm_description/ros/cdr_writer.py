"""The robot contract's hot-path messages written in their serialized form (CDR) for publishing.

``Publisher.publish`` takes the serialized bytes of a message as well as the message: the bytes
are handed to the middleware as they are, the same bytes rclpy's serialization would have made
(the subscribers see no difference). Writing them here costs a few microseconds: the constant
parts (encapsulation, frame ids, joint names) are laid out once, and each publication packs only
the stamp and the values (``struct.pack_into`` of the fixed-size parts, one ``tobytes`` per
joint array); rclpy's way sets each field of a Python message through its checking setter and
then serializes the object (on the 2-core machine 20-30 us per JointState, Imu or Odometry).

The format is the one :mod:`wbm_description.ros.cdr` reads (CDR, little endian: a 4-byte
encapsulation header, then the fields in declaration order, each primitive aligned to its size
from the end of that header, strings and sequences preceded by a uint32 length).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np

_ENCAPSULATION = b"\x00\x01\x00\x00"  # CDR, little endian, no options
_ORIGIN = len(_ENCAPSULATION)
_U32 = struct.Struct("<I")
_STAMP = struct.Struct("<iI")
_NANOSECONDS = 1_000_000_000
_PADDING = (b"", b"\x00", b"\x00\x00", b"\x00\x00\x00", b"\x00" * 4, b"\x00" * 5, b"\x00" * 6)


def _pad(buffer: bytearray, size: int) -> None:
    buffer += bytes(-(len(buffer) - _ORIGIN) % size)


def _string(buffer: bytearray, text: str) -> None:
    data = text.encode() + b"\x00"
    _pad(buffer, 4)
    buffer += _U32.pack(len(data)) + data


def split_stamp(stamp_ns: int) -> tuple[int, int]:
    """(sec, nanosec) of a builtin_interfaces/Time at ``stamp_ns`` [ns] (floor division)."""
    return divmod(int(stamp_ns), _NANOSECONDS)


class FixedMessageWriter:
    """A message of a stamp, strings set once, then a fixed number of float64 values.

    The layout of rosgraph_msgs/Clock (no string, no value), geometry_msgs/WrenchStamped (the
    frame id, 6 values), sensor_msgs/Imu (the frame id, 37 values: orientation, covariance,
    angular velocity, covariance, linear acceleration, covariance) and nav_msgs/Odometry
    (frame id and child frame id, 85 values: pose, covariance, twist, covariance).

    Args:
        strings: The strings after the stamp (header.frame_id, then child_frame_id).
        count: Number of float64 values after them.
    """

    def __init__(self, strings: Sequence[str] = (), count: int = 0):
        buffer = bytearray(_ENCAPSULATION) + bytes(_STAMP.size)
        for text in strings:
            _string(buffer, text)
        if count:
            _pad(buffer, 8)
        self._values_at = len(buffer)
        self._values = struct.Struct(f"<{count}d")
        buffer += bytes(self._values.size)
        self._buffer = buffer
        self.count = count

    def write(self, stamp_ns: int, values: Sequence[float] = ()) -> bytes:
        """The serialized message at ``stamp_ns`` [ns] with ``values`` (``count`` floats)."""
        buffer = self._buffer
        _STAMP.pack_into(buffer, _ORIGIN, *split_stamp(stamp_ns))
        if self.count:
            self._values.pack_into(buffer, self._values_at, *values)
        return bytes(buffer)


class JointStateWriter:
    """sensor_msgs/JointState of fixed names (and frame id); the arrays per publication.

    Args:
        names: The joint names, in the order of the arrays.
        frame_id: header.frame_id.
    """

    def __init__(self, names: Sequence[str], frame_id: str = ""):
        buffer = bytearray()
        buffer += _ENCAPSULATION
        buffer += bytes(_STAMP.size)
        _string(buffer, frame_id)
        _pad(buffer, 4)
        buffer += _U32.pack(len(names))
        for name in names:
            _string(buffer, name)
        self._after_stamp = bytes(buffer[_ORIGIN + _STAMP.size :])
        self._end = len(buffer) - _ORIGIN  # where the arrays start, from the origin
        self.size = len(names)
        # The bytes before each array, per combination of array lengths (laid out once).
        self._layouts: dict[tuple[int, int, int], tuple[bytes, bytes, bytes]] = {}

    def write(
        self,
        stamp_ns: int,
        position: np.ndarray | None,
        velocity: np.ndarray | None,
        effort: np.ndarray | None,
    ) -> bytes:
        """The serialized message; an array that is None (or empty) is sent empty.

        Raises:
            ValueError: An array that is neither empty nor one value per name.
        """
        counts = (
            0 if position is None else len(position),
            0 if velocity is None else len(velocity),
            0 if effort is None else len(effort),
        )
        prefixes = self._layouts.get(counts)
        if prefixes is None:
            prefixes = self._layouts[counts] = self._layout(counts)
        pieces = [_ENCAPSULATION, _STAMP.pack(*divmod(int(stamp_ns), _NANOSECONDS))]
        pieces.append(self._after_stamp)
        pieces.append(prefixes[0])
        if counts[0]:
            pieces.append(np.ascontiguousarray(position, dtype="<f8").tobytes())
        pieces.append(prefixes[1])
        if counts[1]:
            pieces.append(np.ascontiguousarray(velocity, dtype="<f8").tobytes())
        pieces.append(prefixes[2])
        if counts[2]:
            pieces.append(np.ascontiguousarray(effort, dtype="<f8").tobytes())
        return b"".join(pieces)

    def _layout(self, counts: tuple[int, int, int]) -> tuple[bytes, bytes, bytes]:
        """The bytes before each array (padding, count, padding) for these array lengths."""
        prefixes = []
        offset = self._end
        for count in counts:
            if count not in (0, self.size):
                raise ValueError(f"{self.size} values (one per name) or none, got {count}")
            pad = -offset % 4
            prefix = _PADDING[pad] + _U32.pack(count)
            offset += pad + 4
            if count:
                pad = -offset % 8
                prefix += _PADDING[pad]
                offset += pad + 8 * count
            prefixes.append(prefix)
        return prefixes[0], prefixes[1], prefixes[2]


class TfMessageWriter:
    """tf2_msgs/TFMessage of fixed edges (parent, child); one stamp and the values per publication.

    Each TransformStamped is its header (stamp, frame_id: the parent), child_frame_id, then
    translation (3 float64) and rotation (4 float64, x y z w). The strings are laid out once; a
    publication writes the stamp into every header and the 7 values of every edge through two
    numpy index assignments into the buffer (rclpy's way filled 30 TransformStamped objects
    field by field and serialized them: 0.12-0.21 ms a message for iCub on the 2-core machine,
    in-process, two runs).

    Args:
        edges: (parent frame, child frame) of each transform, in message order.
    """

    def __init__(self, edges: Sequence[tuple[str, str]]):
        buffer = bytearray(_ENCAPSULATION)
        buffer += _U32.pack(len(edges))
        stamps = []
        values = []
        for parent, child in edges:
            _pad(buffer, 4)
            stamps.append((len(buffer) - _ORIGIN) // 4)
            buffer += bytes(_STAMP.size)
            _string(buffer, parent)
            _string(buffer, child)
            _pad(buffer, 8)
            values.append((len(buffer) - _ORIGIN) // 8)
            buffer += bytes(7 * 8)
        self.size = len(edges)
        self._buffer = buffer
        body = memoryview(buffer)[_ORIGIN:]
        self._seconds = np.frombuffer(body, dtype="<i4")
        self._nanoseconds = np.frombuffer(body, dtype="<u4")
        self._floats = np.frombuffer(body[: 8 * (len(body) // 8)], dtype="<f8")
        self._stamp_index = np.array(stamps, dtype=np.intp)
        self._value_index = (np.array(values, dtype=np.intp)[:, np.newaxis] + np.arange(7)).ravel()

    def write(self, stamp_ns: int, translations: np.ndarray, rotations: np.ndarray) -> bytes:
        """The serialized message at ``stamp_ns`` [ns].

        Args:
            stamp_ns: Stamp of every transform [ns].
            translations: (size, 3) translations [m], parent to child in the parent frame.
            rotations: (size, 4) rotations as (x, y, z, w) quaternions.
        """
        seconds, nanoseconds = split_stamp(stamp_ns)
        self._seconds[self._stamp_index] = seconds
        self._nanoseconds[self._stamp_index + 1] = nanoseconds
        self._floats[self._value_index] = np.hstack((translations, rotations)).ravel()
        return bytes(self._buffer)


__all__ = ["FixedMessageWriter", "JointStateWriter", "TfMessageWriter", "split_stamp"]
