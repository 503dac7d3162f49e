"""Converters from wbm's marker shapes and frame transforms to ROS messages."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, TransformStamped
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray

from wbm_description.markers import MarkerKind, MarkerScene
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
        marker = Marker()
        marker.header.frame_id = frame_id
        marker.header.stamp = stamp
        marker.ns = shape.namespace
        marker.id = shape.marker_id
        marker.type = _MARKER_TYPES[shape.kind]
        marker.pose.orientation.w = 1.0
        if not shape.visible:
            marker.action = Marker.DELETE
            array.markers.append(marker)
            continue
        marker.action = Marker.ADD
        marker.scale.x, marker.scale.y, marker.scale.z = (float(s) for s in shape.scale)
        marker.color.r, marker.color.g, marker.color.b, marker.color.a = (
            float(c) for c in shape.color_rgba
        )
        if shape.kind == MarkerKind.SPHERE:
            p = marker.pose.position
            p.x, p.y, p.z = (float(x) for x in shape.points[0])
        else:
            marker.points = [Point(x=float(x), y=float(y), z=float(z)) for x, y, z in shape.points]
        array.markers.append(marker)
    return array


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


class MovingTransformMessages:
    """The ``tf`` message of a tree's moving edges, allocated once and refilled in place.

    The state publisher sends one per joint_states message (up to kilohertz rates), so the
    TransformStamped messages are built once and only their stamps and values change.

    Args:
        transforms: The moving edges' transforms at some configuration (frames and order).
        base_last: The last edge is world -> base (a floating base), left out while no base
            pose is known.
    """

    def __init__(self, transforms: Sequence[FrameTransform], *, base_last: bool):
        self.transforms = transform_stamped_messages(transforms, stamp=Time())
        self._with_base = TFMessage(transforms=self.transforms)
        joints_only = self.transforms[:-1] if base_last else self.transforms
        self._joints_only = TFMessage(transforms=joints_only)

    def fill(
        self, translations: np.ndarray, rotations: np.ndarray, stamp: Time, *, with_base: bool
    ) -> TFMessage:
        """The message with new values, in the order of the transforms given at construction.

        Args:
            translations: (n, 3) translations [m].
            rotations: (n, 4) rotations as (x, y, z, w) quaternions.
            stamp: Stamp of every transform.
            with_base: Include the world -> base edge (ignored without one).
        """
        for message, (tx, ty, tz), (rx, ry, rz, rw) in zip(
            self.transforms, translations.tolist(), rotations.tolist(), strict=True
        ):
            message.header.stamp = stamp
            t = message.transform.translation
            t.x, t.y, t.z = tx, ty, tz
            r = message.transform.rotation
            r.x, r.y, r.z, r.w = rx, ry, rz, rw
        return self._with_base if with_base else self._joints_only
