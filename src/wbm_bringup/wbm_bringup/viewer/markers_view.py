"""Markers (visualization_msgs/Marker's shapes, without ROS types) drawn in a viser scene.

A :class:`MarkerItem` is one marker as the node converts it from a message: its key (topic,
namespace, id), action, type, pose, scale, colour and points. :func:`in_world` checks one and
places it in the world from the placement of its header frame. :class:`MarkersView`
keeps one scene node per key under ``/markers/<topic>/<namespace>/<id>``, so every namespace of
every marker topic shows (the state publisher's CoM, CoP, support polygon and contact forces,
and a walking node's footstep plan and planned CoM/ZMP alike). ADD replaces the node, DELETE
removes it, DELETEALL removes every marker of the topic (or of the namespace, when given).
Markers with a lifetime are not expired (the publishers wbm knows re-send or delete them).
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass

import numpy as np
import pinocchio as pin
import viser

from wbm_description.exceptions import InputError
from wbm_description.rotation_quaternion import quaternion_of_rotation


class MarkerType(enum.IntEnum):
    """visualization_msgs/Marker type constants."""

    ARROW = 0
    CUBE = 1
    SPHERE = 2
    CYLINDER = 3
    LINE_STRIP = 4
    LINE_LIST = 5
    CUBE_LIST = 6
    SPHERE_LIST = 7
    POINTS = 8
    TEXT_VIEW_FACING = 9
    MESH_RESOURCE = 10
    TRIANGLE_LIST = 11


class MarkerAction(enum.IntEnum):
    """visualization_msgs/Marker action constants."""

    ADD = 0
    DELETE = 2
    DELETEALL = 3


@dataclass(frozen=True)
class MarkerItem:
    """One marker, in its header frame or in the world.

    The node converts a message into an item in its header frame; :func:`in_world` places it
    in the world, which is what :class:`MarkersView` draws.

    Attributes:
        topic: The MarkerArray topic it came on.
        namespace: Marker namespace.
        marker_id: Marker id.
        action: ADD (also MODIFY), DELETE or DELETEALL.
        kind: The marker type.
        position: Marker pose origin [m], (3,).
        wxyz: Marker pose orientation, (w, x, y, z).
        scale: Marker scale [m], (3,) (meaning per type, as in visualization_msgs/Marker).
        rgba: Colour, components in [0, 1].
        points: (n, 3) points in the marker frame [m] (lines, lists, arrows by points).
        text: Text of TEXT_VIEW_FACING.
    """

    topic: str
    namespace: str
    marker_id: int
    action: MarkerAction
    kind: int = MarkerType.SPHERE
    position: np.ndarray | None = None
    wxyz: np.ndarray | None = None
    scale: np.ndarray | None = None
    rgba: tuple[float, float, float, float] = (1.0, 1.0, 1.0, 1.0)
    points: np.ndarray | None = None
    text: str = ""


def in_world(item: MarkerItem, frame: pin.SE3 | None) -> MarkerItem:
    """An ADD item given in its header frame, checked and placed in the world.

    Args:
        item: The item; its pose is in its header frame, a zero quaternion means identity
            (a default-constructed message's pose).
        frame: World placement of that frame; None for the world frame itself.

    Raises:
        InputError: Non-finite values, a quaternion of zero norm but not all zeros.
    """
    if item.action != MarkerAction.ADD:
        return item
    position = _position(item)
    wxyz = _orientation(item)
    if not wxyz.any():
        wxyz = np.array([1.0, 0.0, 0.0, 0.0])
    scale = np.zeros(3) if item.scale is None else np.asarray(item.scale, float)
    points = np.zeros((0, 3)) if item.points is None else np.asarray(item.points, float)
    values = np.concatenate([position, wxyz, scale, points.ravel(), item.rgba])
    if not np.all(np.isfinite(values)):
        raise InputError(
            f"marker {item.namespace}/{item.marker_id}", "finite values (no NaN or inf)"
        )
    wxyz = wxyz / np.linalg.norm(wxyz)
    if frame is not None:
        w, x, y, z = wxyz
        rotation = frame.rotation @ pin.Quaternion(w, x, y, z).toRotationMatrix()
        position = frame.rotation @ position + frame.translation
        x, y, z, w = quaternion_of_rotation(rotation).coeffs()
        wxyz = np.array([w, x, y, z])
    return dataclasses.replace(item, position=position, wxyz=wxyz)


def _equal(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return np.array_equal(a, b)


def _same_shape(a: MarkerItem, b: MarkerItem) -> bool:
    """Whether two items differ at most by their pose (then the node is only moved)."""
    return (
        a.kind == b.kind
        and a.rgba == b.rgba
        and a.text == b.text
        and _equal(a.scale, b.scale)
        and _equal(a.points, b.points)
    )


def _position(item: MarkerItem) -> np.ndarray:
    return np.zeros(3) if item.position is None else np.asarray(item.position, float)


def _orientation(item: MarkerItem) -> np.ndarray:
    return np.array([1.0, 0.0, 0.0, 0.0]) if item.wxyz is None else np.asarray(item.wxyz, float)


def _rotation(item: MarkerItem) -> np.ndarray:
    w, x, y, z = _orientation(item)
    return pin.Quaternion(w, x, y, z).toRotationMatrix()


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "_-" else "_" for c in name.strip("/")) or "_"


class MarkersView:
    """Draws marker items into a scene, one node per (topic, namespace, id).

    Args:
        scene: The viser scene.
        root: Scene path under which markers are drawn.
    """

    def __init__(self, scene: viser.SceneApi, root: str = "/markers"):
        self.scene = scene
        self.root = root
        self.handles: dict[tuple[str, str, int], object] = {}
        #: The latest ADDed item per key (what is shown), for plots and tests.
        self.items: dict[tuple[str, str, int], MarkerItem] = {}

    def path(self, item: MarkerItem) -> str:
        """Scene path of an item's node."""
        return f"{self.root}/{_safe(item.topic)}/{_safe(item.namespace)}/{item.marker_id}"

    def apply(self, items: list[MarkerItem]) -> list[str]:
        """Apply a MarkerArray's items in order.

        Returns:
            One problem line per item that could not be drawn (unknown type, bad sizes).
        """
        problems = []
        for item in items:
            key = (item.topic, item.namespace, item.marker_id)
            if item.action == MarkerAction.DELETEALL:
                for other in [k for k in self.handles if k[0] == item.topic]:
                    if not item.namespace or other[1] == item.namespace:
                        self._remove(other)
                continue
            if item.action == MarkerAction.DELETE:
                self._remove(key)
                continue
            old = self.items.get(key)
            if old is not None and _same_shape(old, item):
                if not (_equal(old.position, item.position) and _equal(old.wxyz, item.wxyz)):
                    handle = self.handles[key]
                    handle.position = _position(item)
                    handle.wxyz = _orientation(item)
                self.items[key] = item
                continue
            try:
                handle = self._draw(item)
            except ValueError as error:
                self._remove(key)
                problems.append(f"marker {item.namespace}/{item.marker_id}: {error}")
                continue
            self.handles[key] = handle
            self.items[key] = item
        return problems

    def support_polygon(self) -> np.ndarray | None:
        """(m, 2) world x-y vertices of the first ``support_polygon`` marker shown, or None."""
        for (_, namespace, _), item in list(self.items.items()):
            if namespace == "support_polygon" and item.points is not None and len(item.points):
                points = np.asarray(item.points, float)
                placed = points @ _rotation(item).T + _position(item)
                return placed[:, :2]
        return None

    def _remove(self, key: tuple[str, str, int]) -> None:
        handle = self.handles.pop(key, None)
        self.items.pop(key, None)
        if handle is not None:
            handle.remove()

    def _draw(self, item: MarkerItem):
        name = self.path(item)  # adding under an existing name replaces that node
        position, wxyz = _position(item), _orientation(item)
        scale = np.ones(3) if item.scale is None else np.asarray(item.scale, float)
        rgb = tuple(int(round(255 * float(np.clip(c, 0.0, 1.0)))) for c in item.rgba[:3])
        opacity = float(np.clip(item.rgba[3], 0.0, 1.0))
        opacity_arg = None if opacity >= 1.0 else opacity
        points = np.zeros((0, 3)) if item.points is None else np.asarray(item.points, float)
        pose = {"position": position, "wxyz": wxyz}
        kind = item.kind
        if kind == MarkerType.SPHERE:
            handle = self.scene.add_icosphere(
                name, radius=0.5, color=rgb, opacity=opacity_arg, cast_shadow=False, **pose
            )
            handle.scale = tuple(scale)  # an ellipsoid of diameters scale
            return handle
        if kind == MarkerType.CUBE:
            return self.scene.add_box(
                name, color=rgb, dimensions=tuple(scale), opacity=opacity_arg, **pose
            )
        if kind == MarkerType.CYLINDER:
            handle = self.scene.add_cylinder(
                name, radius=0.5, height=1.0, color=rgb, opacity=opacity_arg, **pose
            )
            handle.scale = tuple(scale)
            return handle
        if kind == MarkerType.ARROW:
            if len(points) >= 2:
                start, end = points[0], points[1]
                shaft, head, head_length = scale[0] / 2.0, scale[1] / 2.0, scale[2]
            else:  # pose form: along the pose's x axis, scale = (length, width, height)
                start, end = np.zeros(3), np.array([scale[0], 0.0, 0.0])
                shaft, head, head_length = scale[1] / 4.0, scale[1] / 2.0, 0.2 * scale[0]
            return self.scene.add_arrows(
                name,
                np.array([[start, end]]),
                colors=rgb,
                shaft_radius=max(shaft, 1e-4),
                head_radius=max(head, 1e-4),
                head_length=max(head_length, 1e-4),
                **pose,
            )
        if kind in (MarkerType.LINE_STRIP, MarkerType.LINE_LIST):
            if len(points) < 2:
                raise ValueError("a line needs at least 2 points")
            if kind == MarkerType.LINE_STRIP:
                segments = np.stack([points[:-1], points[1:]], axis=1)
            else:
                segments = points[: len(points) // 2 * 2].reshape(-1, 2, 3)
            return self.scene.add_line_segments(
                name, segments, colors=rgb, thickness=max(float(scale[0]), 1e-4), **pose
            )
        if kind in (MarkerType.SPHERE_LIST, MarkerType.CUBE_LIST, MarkerType.POINTS):
            if len(points) == 0:
                raise ValueError("a list marker needs points")
            return self.scene.add_point_cloud(
                name,
                points.astype(np.float32),
                colors=rgb,
                point_size=max(float(scale[0]), 1e-4),
                point_shape="circle" if kind != MarkerType.CUBE_LIST else "square",
                **pose,
            )
        if kind == MarkerType.TRIANGLE_LIST:
            if len(points) < 3:
                raise ValueError("a triangle list needs at least 3 points")
            count = len(points) // 3 * 3
            faces = np.arange(count, dtype=np.uint32).reshape(-1, 3)
            return self.scene.add_mesh_simple(
                name,
                points[:count].astype(np.float32),
                faces,
                color=rgb,
                side="double",
                opacity=opacity_arg,
                cast_shadow=False,
                **pose,
            )
        if kind == MarkerType.TEXT_VIEW_FACING:
            return self.scene.add_label(name, item.text, **pose)
        raise ValueError(f"marker type {kind} is not drawn (MESH_RESOURCE is not supported)")
