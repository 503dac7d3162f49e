"""Converters from wbm's marker shapes and frame transforms to ROS messages."""

from __future__ import annotations

from collections.abc import Sequence

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, TransformStamped
from visualization_msgs.msg import Marker, MarkerArray

from wbm_description.markers import MarkerKind, MarkerScene, MarkerShape
from wbm_description.tf_tree import FrameTransform

_MARKER_TYPES = {
    MarkerKind.SPHERE: Marker.SPHERE,
    MarkerKind.LINE_STRIP: Marker.LINE_STRIP,
    MarkerKind.ARROW: Marker.ARROW,
}


def marker_array_message(scene: MarkerScene, *, frame_id: str, stamp: Time) -> MarkerArray:
    """visualization_msgs/MarkerArray of a marker scene.

    Spheres are placed by their pose; lines and arrows by their points (world frame, identity
    pose). A hidden slot becomes a DELETE of its (namespace, id), so a display drops it.
    """
    array = MarkerArray()
    for shape in scene.markers:
        marker = _slot_marker(shape, frame_id)
        _fill_marker(marker, shape, stamp)
        array.markers.append(marker)
    return array


class MarkerArrayMessages:
    """The ``markers`` message of a scene, allocated once and refilled in place.

    A scene's slots are the same (namespace, id, kind) in the same order from one scene to the
    next (:func:`~wbm_description.markers.marker_scene`), so the Marker messages are built once
    and only their stamp, action, shape and points change; constructing them (each with its
    header, pose, colour and texture sub-messages) was the largest part of the state publisher's
    Python time in a profiled lockstep run. The message equals :func:`marker_array_message`'s,
    field for field; it is rebuilt when the slots change.

    Args:
        frame_id: header.frame_id of every marker (the world frame).
    """

    def __init__(self, frame_id: str):
        self.frame_id = frame_id
        self._slots: tuple[tuple[str, int, MarkerKind], ...] = ()
        self._array = MarkerArray()

    def fill(self, scene: MarkerScene, stamp: Time) -> MarkerArray:
        """The message of ``scene`` stamped ``stamp`` (the same object every time)."""
        slots = tuple((shape.namespace, shape.marker_id, shape.kind) for shape in scene.markers)
        if slots != self._slots:
            self._array = MarkerArray(
                markers=[_slot_marker(shape, self.frame_id) for shape in scene.markers]
            )
            self._slots = slots
        for marker, shape in zip(self._array.markers, scene.markers, strict=True):
            _fill_marker(marker, shape, stamp)
        return self._array


def _slot_marker(shape: MarkerShape, frame_id: str) -> Marker:
    """A Marker of a scene slot: what does not change from one scene to the next."""
    marker = Marker()
    marker.header.frame_id = frame_id
    marker.ns = shape.namespace
    marker.id = shape.marker_id
    marker.type = _MARKER_TYPES[shape.kind]
    marker.pose.orientation.w = 1.0
    return marker


def _fill_marker(marker: Marker, shape: MarkerShape, stamp: Time) -> None:
    """Write a shape into its slot's Marker: ADD with its shape, or a DELETE (zero fields)."""
    marker.header.stamp = stamp
    p = marker.pose.position
    if not shape.visible:
        marker.action = Marker.DELETE
        marker.scale.x = marker.scale.y = marker.scale.z = 0.0
        c = marker.color
        c.r = c.g = c.b = c.a = 0.0
        p.x = p.y = p.z = 0.0
        if marker.points:
            marker.points = []
        return
    marker.action = Marker.ADD
    marker.scale.x, marker.scale.y, marker.scale.z = (float(s) for s in shape.scale)
    marker.color.r, marker.color.g, marker.color.b, marker.color.a = (
        float(c) for c in shape.color_rgba
    )
    if shape.kind == MarkerKind.SPHERE:
        p.x, p.y, p.z = (float(x) for x in shape.points[0])
    else:
        marker.points = [Point(x=x, y=y, z=z) for x, y, z in shape.points.tolist()]


def transform_stamped_messages(
    transforms: Sequence[FrameTransform], *, stamp: Time
) -> list[TransformStamped]:
    """geometry_msgs/TransformStamped of frame transforms, all with one stamp."""
    messages = []
    for transform in transforms:
        message = TransformStamped()
        message.header.stamp = stamp
        message.header.frame_id = transform.parent
        message.child_frame_id = transform.child
        fill_transform(message, transform)
        messages.append(message)
    return messages


def fill_transform(message: TransformStamped, transform: FrameTransform) -> None:
    """Write a transform's translation and rotation into an existing message (no allocation)."""
    t = message.transform.translation
    tx, ty, tz = transform.translation.tolist()
    t.x, t.y, t.z = tx, ty, tz
    r = message.transform.rotation
    rx, ry, rz, rw = transform.rotation_xyzw.tolist()
    r.x, r.y, r.z, r.w = rx, ry, rz, rw
