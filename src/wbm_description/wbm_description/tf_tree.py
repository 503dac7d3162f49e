"""The TF tree of a robot: world -> base -> every URDF link, from Pinocchio forward kinematics.

What robot_state_publisher does, plus the floating base: one transform per URDF joint, from the
joint's parent link to its child link (frame names are the URDF's, with an optional prefix), and
one from the world to the base link. Transforms of fixed joints (and of joints the robot config
locks) never change: they go to ``tf_static``. Those of the actuated joints and of the floating
base go to ``tf``. Tool frames of the robot config are static children of their link.

Pure numpy and Pinocchio (no ROS): the state publisher node turns :class:`FrameTransform` values
into ``geometry_msgs/TransformStamped``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from wbm_description.exceptions import InputError
from wbm_description.rotation_quaternion import quaternion_of_rotation
from wbm_description.whole_body_model import WholeBodyModel

_BODY = pin.FrameType.BODY
_JOINT = pin.FrameType.JOINT
_FIXED_JOINT = pin.FrameType.FIXED_JOINT
_OP_FRAME = pin.FrameType.OP_FRAME


@dataclass(frozen=True)
class FrameTransform:
    """The placement of a child frame in its parent frame (a TF edge).

    Attributes:
        parent: Parent frame name (TF ``header.frame_id``), prefix applied.
        child: Child frame name (TF ``child_frame_id``), prefix applied.
        translation: Child origin in parent axes [m], (3,).
        rotation_xyzw: Orientation of the child in the parent, unit quaternion (x, y, z, w).
    """

    parent: str
    child: str
    translation: np.ndarray
    rotation_xyzw: np.ndarray


@dataclass(frozen=True)
class TfEdge:
    """One edge of the tree: Pinocchio frame ids of its parent and child frames.

    Attributes:
        parent: Parent frame name (prefix applied; the world frame is not prefixed).
        child: Child frame name (prefix applied).
        parent_frame_id: Pinocchio frame id of the parent, or -1 for the world.
        child_frame_id: Pinocchio frame id of the child.
        joint: The URDF joint (or "" for a tool frame).
    """

    parent: str
    child: str
    parent_frame_id: int
    child_frame_id: int
    joint: str


def _quaternion_xyzw(rotation: np.ndarray) -> np.ndarray:
    """Unit quaternion (x, y, z, w) with w >= 0 of a rotation matrix."""
    coeffs = quaternion_of_rotation(rotation).normalized().coeffs()
    return -coeffs if coeffs[3] < 0.0 else coeffs.copy()


class TfTree:
    """The TF edges of a whole-body model and their transforms for a configuration.

    Args:
        model: The whole-body model (its Pinocchio model holds the URDF's links as BODY frames
            and its joints as JOINT / FIXED_JOINT frames).
        world_frame: Name of the world frame, the root of the tree (never prefixed).
        frame_prefix: Prepended to every link and tool frame name, as robot_state_publisher's
            ``frame_prefix`` (e.g. ``"robot1/"``).

    Attributes:
        static_edges: Edges that never move (fixed and locked joints, tools, and the world to a
            fixed base).
        moving_edges: Edges of the actuated joints, then world -> base for a floating base.
        base_link: The URDF root link (unprefixed).
    """

    def __init__(
        self, model: WholeBodyModel, *, world_frame: str = "world", frame_prefix: str = ""
    ):
        if not world_frame:
            raise InputError("world_frame", "a non-empty frame name", repr(world_frame))
        self.model = model
        self.world_frame = world_frame
        self.frame_prefix = frame_prefix
        frames = model.model.frames
        children: dict[int, list[int]] = {}
        for frame_id, frame in enumerate(frames):
            if frame_id != 0:
                children.setdefault(frame.parentFrame, []).append(frame_id)

        root_joint_frame = 1 if model.floating_base else 0
        base_ids = [c for c in children.get(root_joint_frame, []) if frames[c].type == _BODY]
        if len(base_ids) != 1:
            raise InputError("model", "one root link under the base joint", len(base_ids))
        self._base_frame_id = base_ids[0]
        self.base_link = frames[self._base_frame_id].name

        static: list[TfEdge] = []
        moving: list[TfEdge] = []
        for frame_id, frame in enumerate(frames):
            if frame_id <= root_joint_frame:
                continue
            if frame.type in (_JOINT, _FIXED_JOINT):
                parent_id = frame.parentFrame
                for child_id in children.get(frame_id, []):
                    if frames[child_id].type != _BODY:
                        continue
                    edge = TfEdge(
                        self.prefixed(frames[parent_id].name),
                        self.prefixed(frames[child_id].name),
                        parent_id,
                        child_id,
                        frame.name,
                    )
                    (moving if frame.type == _JOINT else static).append(edge)
            elif frame.type == _OP_FRAME:
                parent_id = frame.parentFrame
                static.append(
                    TfEdge(
                        self.prefixed(frames[parent_id].name),
                        self.prefixed(frame.name),
                        parent_id,
                        frame_id,
                        "",
                    )
                )
        base_edge = TfEdge(
            self.world_frame, self.prefixed(self.base_link), -1, self._base_frame_id, ""
        )
        if model.floating_base:
            moving.append(base_edge)
        else:
            static.insert(0, base_edge)
        self.static_edges: tuple[TfEdge, ...] = tuple(static)
        self.moving_edges: tuple[TfEdge, ...] = tuple(moving)
        self._data = model.model.createData()
        self._moving_pairs = [(e.parent_frame_id, e.child_frame_id) for e in self.moving_edges]
        self._moving_xyzquat = np.zeros((len(self.moving_edges), 7))

    def prefixed(self, name: str) -> str:
        """A link or tool frame name with the frame prefix."""
        return f"{self.frame_prefix}{name}"

    @property
    def frame_names(self) -> list[str]:
        """Every child frame of the tree (prefixed), static then moving."""
        return [edge.child for edge in (*self.static_edges, *self.moving_edges)]

    def _transforms(self, q: np.ndarray, edges: tuple[TfEdge, ...]) -> list[FrameTransform]:
        data = self._data
        pin.framesForwardKinematics(self.model.model, data, q)
        placements = data.oMf
        result = []
        for edge in edges:
            child = placements[edge.child_frame_id]
            relative = (
                child
                if edge.parent_frame_id < 0
                else placements[edge.parent_frame_id].actInv(child)
            )
            result.append(
                FrameTransform(
                    edge.parent,
                    edge.child,
                    relative.translation.copy(),
                    _quaternion_xyzw(relative.rotation),
                )
            )
        return result

    def static_transforms(self) -> list[FrameTransform]:
        """Transforms of the static edges (independent of the configuration)."""
        return self._transforms(self.model.initial_configuration(), self.static_edges)

    def moving_transform_arrays(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Translations (n, 3) [m] and rotations (n, 4) (x, y, z, w) of the moving edges.

        The allocation-light path of :meth:`moving_transforms` (same values, same order), for
        a state publisher fed at kilohertz rates. The arrays are reused by the next call.

        Args:
            q: Configuration in Pinocchio's layout, (nq,) (checked: finite, unit quaternion).
        """
        q = self.model.check_configuration(q)
        data = self._data
        pin.framesForwardKinematics(self.model.model, data, q)
        placements = data.oMf
        out = self._moving_xyzquat
        for row, (parent_id, child_id) in enumerate(self._moving_pairs):
            child = placements[child_id]
            relative = child if parent_id < 0 else placements[parent_id].actInv(child)
            out[row] = pin.SE3ToXYZQUAT(relative)
        rotation = out[:, 3:7]
        rotation[rotation[:, 3] < 0.0] *= -1.0  # w >= 0, as the other transforms
        return out[:, 0:3], rotation

    def moving_transforms(self, q: np.ndarray) -> list[FrameTransform]:
        """Transforms of the moving edges for a configuration.

        Args:
            q: Configuration in Pinocchio's layout, (nq,) (checked: finite, unit quaternion).

        Returns:
            One transform per moving edge, in :attr:`moving_edges` order.
        """
        return self._transforms(self.model.check_configuration(q), self.moving_edges)
