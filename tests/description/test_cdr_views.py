"""Hot-path messages read from their serialized form (wbm_description.ros.cdr) against rclpy.

Reference: rclpy's own deserialization of the same bytes (``rclpy.serialization``), compared
field by field over the message type's field list, exactly (a value is copied, never computed:
the same bits). Messages are filled at random: strings of different lengths (alignment padding
of every length), empty and full arrays, NaN. Decoding through a subscription is covered by
``test_input_thread.py`` (real rclpy).
"""

from __future__ import annotations

import struct

import numpy as np
import pytest
from builtin_interfaces.msg import Time
from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.serialization import deserialize_message, serialize_message
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState

from wbm_description.ros import cdr


def _same(view, message, path: str = "") -> None:
    """Every field of ``message`` (a real message) equals the view's, recursively."""
    fields = getattr(message, "get_fields_and_field_types", None)
    if fields is None:
        if isinstance(message, (str, int)):
            assert view == message, path
            assert type(view) is type(message), path
            return
        if isinstance(message, float):
            assert isinstance(view, float), path
            assert view == message or (np.isnan(view) and np.isnan(message)), path
            return
        if isinstance(message, list):  # sequence<string>
            assert list(view) == message, path
            return
        expected = np.asarray(message, dtype=float)
        got = np.asarray(view)
        assert got.dtype == np.float64 and got.shape == expected.shape, path
        np.testing.assert_array_equal(got, expected, err_msg=path)  # NaN equal to NaN
        return
    for name in fields():
        _same(getattr(view, name), getattr(message, name), f"{path}.{name}")


def _header(message, rng) -> None:
    message.header.stamp.sec = int(rng.integers(-(2**31), 2**31 - 1))
    message.header.stamp.nanosec = int(rng.integers(0, 10**9))
    message.header.frame_id = "f" * int(rng.integers(0, 9)) + "é"[: int(rng.integers(0, 2))]


def _random_joint_state(rng, names: list[str]) -> JointState:
    message = JointState()
    _header(message, rng)
    message.name = names
    n = len(names)
    for field in ("position", "velocity", "effort"):
        if rng.random() < 0.25:
            continue  # an empty array: "not given"
        values = rng.normal(size=n)
        values[rng.random(n) < 0.1] = np.nan
        setattr(message, field, values.tolist())
    return message


def _fill_doubles(message, rng) -> None:
    """Every float64 field (and fixed array) of ``message`` at random, recursively."""
    for name, kind in message.get_fields_and_field_types().items():
        value = getattr(message, name)
        if kind == "double":
            setattr(message, name, float(rng.normal()))
        elif kind.startswith("double["):
            setattr(message, name, rng.normal(size=len(value)))
        elif hasattr(value, "get_fields_and_field_types") and name != "header":
            _fill_doubles(value, rng)


def test_views_equal_rclpys_messages_field_by_field():
    rng = np.random.default_rng(3)
    joints = [f"joint_{i}_" + "x" * (i % 5) for i in range(32)]
    decode = cdr.decoder(JointState)
    # Different name lists in turn, and the same list again: the cache of names never serves
    # another message's names.
    name_lists = [joints, joints, joints[:7], joints, ["a", "bb", "ccc"], joints[::-1], joints]
    for names in name_lists * 3:
        message = _random_joint_state(rng, names)
        data = serialize_message(message)
        view = decode(data)
        _same(view, deserialize_message(data, JointState))
        assert isinstance(view.header.stamp, Time)  # can be put in a published message
    for msg_type, read in (
        (Imu, cdr.read_imu),
        (WrenchStamped, cdr.read_wrench_stamped),
        (Odometry, cdr.read_odometry),
        (Clock, cdr.read_clock),
    ):
        for _ in range(20):
            message = msg_type()
            if msg_type is Clock:
                message.clock.sec, message.clock.nanosec = int(rng.integers(2**31)), 999_999_999
            else:
                _header(message, rng)
            _fill_doubles(message, rng)
            if msg_type is Odometry:
                message.child_frame_id = "b" * int(rng.integers(0, 6))
            data = serialize_message(message)
            _same(read(data), deserialize_message(data, msg_type))
            _same(cdr.decoder(msg_type)(data), message)


def test_same_names_with_other_padding_bytes_and_arrays_are_writable_copies():
    rng = np.random.default_rng(4)
    names = ["a", "bc", "def", "ghij", "k"]
    decode = cdr.decoder(JointState)
    first = serialize_message(_random_joint_state(rng, names))
    decode(first)
    # The padding after "a\0" and "bc\0" (bytes not part of any value) differs in the next
    # message: the names are decoded again and are still right.
    message = _random_joint_state(rng, names)
    data = bytearray(serialize_message(message))
    start = data.index(b"a\x00") + 2
    data[start : start + 2] = b"\xaa\xbb"
    view = decode(bytes(data))
    _same(view, message)
    if len(view.position):
        view.position[0] = 1.0  # writable, and not the buffer of the bytes
    assert decode(bytes(data)).name == names


def test_big_endian_bytes_fall_back_to_rclpy_and_bad_bytes_raise():
    # A WrenchStamped in big-endian CDR (encapsulation 00 00), written by hand.
    frame = b"l_foot\x00"
    body = struct.pack(">iII", 5, 7, len(frame)) + frame
    body += b"\x00" * (-len(body) % 8) + struct.pack(">6d", 1.0, 2.0, 3.0, 4.0, 5.0, 6.0)
    data = b"\x00\x00\x00\x00" + body
    with pytest.raises(cdr.CdrError, match="little-endian"):
        cdr.read_wrench_stamped(data)
    message = cdr.decoder(WrenchStamped)(data)
    assert isinstance(message, WrenchStamped)  # rclpy's deserialization
    assert (message.header.stamp.sec, message.header.stamp.nanosec) == (5, 7)
    assert message.header.frame_id == "l_foot"
    assert [message.wrench.force.x, message.wrench.torque.z] == [1.0, 6.0]
    good = serialize_message(_random_joint_state(np.random.default_rng(5), ["a", "b"]))
    for bad in (good[:-9], good[:20]):
        with pytest.raises(cdr.CdrError):
            cdr.decoder(JointState)(bad)
    assert cdr.has_reader(JointState) and not cdr.has_reader(Time)


def _values_of(message) -> tuple:
    """The values tuple of cdr.values_decoder, computed from a real message."""
    stamp = message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec
    if isinstance(message, JointState):
        return (stamp, message.header.frame_id, list(message.name),
                np.asarray(message.position, dtype=float),
                np.asarray(message.velocity, dtype=float),
                np.asarray(message.effort, dtype=float))  # fmt: skip
    if isinstance(message, Imu):
        o, w, a = message.orientation, message.angular_velocity, message.linear_acceleration
        values = [o.x, o.y, o.z, o.w, *message.orientation_covariance,
                  w.x, w.y, w.z, *message.angular_velocity_covariance,
                  a.x, a.y, a.z, *message.linear_acceleration_covariance]  # fmt: skip
    else:
        f, t = message.wrench.force, message.wrench.torque
        values = [f.x, f.y, f.z, t.x, t.y, t.z]
    return stamp, message.header.frame_id, tuple(float(v) for v in values)


def _same_values(got: tuple, expected: tuple) -> None:
    assert len(got) == len(expected)
    assert got[:2] == expected[:2] and type(got[0]) is int and type(got[1]) is str
    for g, e in zip(got[2:], expected[2:], strict=True):
        if isinstance(e, np.ndarray):
            assert isinstance(g, np.ndarray) and g.dtype == np.float64
            np.testing.assert_array_equal(g, e)  # NaN equal to NaN
        elif isinstance(e, list):
            assert list(g) == e
        else:
            assert len(g) == len(e) and all(type(x) is float for x in g)
            np.testing.assert_array_equal(np.array(g), np.array(e))


def test_values_equal_rclpys_messages_and_fall_back_like_the_views():
    rng = np.random.default_rng(6)
    joints = [f"joint_{i}_" + "x" * (i % 5) for i in range(32)]
    decode = cdr.values_decoder(JointState)
    name_lists = [joints, joints, joints[:7], joints, ["a", "bb", "ccc"], joints[::-1], joints]
    for names in name_lists * 3:
        message = _random_joint_state(rng, names)
        data = serialize_message(message)
        _same_values(decode(data), _values_of(deserialize_message(data, JointState)))
    for msg_type in (Imu, WrenchStamped):
        for _ in range(20):
            message = msg_type()
            _header(message, rng)
            _fill_doubles(message, rng)
            data = serialize_message(message)
            expected = _values_of(deserialize_message(data, msg_type))
            _same_values(cdr.values_decoder(msg_type)(data), expected)
    # Big-endian bytes: rclpy's deserialization, converted to the same values.
    frame = b"l_foot\x00"
    body = struct.pack(">iII", 5, 7, len(frame)) + frame
    body += b"\x00" * (-len(body) % 8) + struct.pack(">6d", 1.0, 2.0, 3.0, 4.0, 5.0, 6.0)
    data = b"\x00\x00\x00\x00" + body
    with pytest.raises(cdr.CdrError, match="little-endian"):
        cdr.wrench_stamped_values(data)
    assert cdr.values_decoder(WrenchStamped)(data) == (
        5_000_000_007,
        "l_foot",
        (1.0, 2.0, 3.0, 4.0, 5.0, 6.0),
    )
    good = serialize_message(_random_joint_state(np.random.default_rng(5), ["a", "b"]))
    for bad in (good[:-9], good[:20], good[:10]):
        with pytest.raises(cdr.CdrError):
            cdr.values_decoder(JointState)(bad)
    wrench = serialize_message(WrenchStamped())
    for bad in (wrench[:-1], wrench[:14]):
        with pytest.raises(cdr.CdrError):
            cdr.values_decoder(WrenchStamped)(bad)


def test_joint_state_writer_makes_rclpys_bytes_for_every_combination_of_arrays():
    # The writer's per-combination layouts (cached) against rclpy's deserialization: the same
    # message, for names of every padding, every array given or empty, twice each (from the cache).
    from itertools import product

    from wbm_description.ros.cdr_writer import JointStateWriter

    rng = np.random.default_rng(7)
    for names in (
        ["a"],
        ["ab", "c"],
        ["abc", "d", "efghi"],
        [f"j{i}" * (i % 4 + 1) for i in range(23)],
    ):
        writer = JointStateWriter(names, frame_id="f" * len(names[0]))
        n = len(names)
        for given in list(product((False, True), repeat=3)) * 2:
            arrays = [rng.normal(size=n) if g else None for g in given]
            stamp_ns = int(rng.integers(0, 2**31 * 10**9))
            message = JointState()
            message.header.frame_id = "f" * len(names[0])
            message.header.stamp.sec, message.header.stamp.nanosec = divmod(stamp_ns, 10**9)
            message.name = names
            for field, values in zip(("position", "velocity", "effort"), arrays, strict=True):
                if values is not None:
                    setattr(message, field, values.tolist())
            # Compared read back: rclpy's bytes have padding bytes left as they were in its
            # buffer and may end with some more.
            assert deserialize_message(writer.write(stamp_ns, *arrays), JointState) == message
        with pytest.raises(ValueError, match="one per name"):
            writer.write(0, np.zeros(n + 1), None, None)


def test_tf_writer_makes_rclpys_message_for_frames_of_every_padding():
    # TFMessage written into its laid-out buffer against rclpy's deserialization: the same
    # message, for frame names of every length mod 8 (every padding before the values), twice
    # (the buffer reused), and for one edge and none.
    from geometry_msgs.msg import TransformStamped
    from tf2_msgs.msg import TFMessage

    from wbm_description.ros.cdr_writer import TfMessageWriter

    rng = np.random.default_rng(11)
    for edges in (
        [],
        [("world", "base")],
        [("p" * (k % 9 + 1), "c" * (k % 7 + 1)) for k in range(30)],
    ):
        writer = TfMessageWriter(edges)
        for _ in range(2):
            translations = rng.normal(size=(len(edges), 3))
            rotations = rng.normal(size=(len(edges), 4))
            stamp_ns = int(rng.integers(0, 2**31 * 10**9))
            expected = TFMessage()
            for (parent, child), t, r in zip(edges, translations, rotations, strict=True):
                transform = TransformStamped()
                transform.header.stamp.sec, transform.header.stamp.nanosec = divmod(
                    stamp_ns, 10**9
                )
                transform.header.frame_id = parent
                transform.child_frame_id = child
                v = transform.transform.translation
                v.x, v.y, v.z = t.tolist()
                q = transform.transform.rotation
                q.x, q.y, q.z, q.w = r.tolist()
                expected.transforms.append(transform)
            data = writer.write(stamp_ns, translations, rotations)
            assert deserialize_message(data, TFMessage) == expected
