"""The robot's contact points: where they are on the robot and how they move.

A contact point is fixed on a frame of the robot. The default set (:func:`points_from_config`) is
seed 004's sample-point contact model: the corners of every sole of the robot config, plus the
config's extra ``contact_points`` (hands, knees, ...).

:class:`ContactPointSet` evaluates their world positions and velocities from Pinocchio's joint
placements and twists, grouped by parent joint, after a broad phase that skips the joints whose
points cannot be near any surface, and maps forces at the points back to Pinocchio's per-joint
external forces. Everything is batched over the points (this runs at every step).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from wbm_description.exceptions import InputError
from wbm_description.robot_config import RobotConfig
from wbm_dynamics.environment import Environment
from wbm_dynamics.external_forces import ExternalForces


def cross_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross product a x b of (n, 3) arrays, or of (3,) vectors.

    Written out because ``np.cross`` costs ~10 us per call on small arrays.
    """
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    out = np.empty(np.broadcast_shapes(np.shape(a), np.shape(b)))
    out[..., 0] = a1 * b2 - a2 * b1
    out[..., 1] = a2 * b0 - a0 * b2
    out[..., 2] = a0 * b1 - a1 * b0
    return out


def skew(vector: np.ndarray) -> np.ndarray:
    """The matrix [p]x with [p]x f = p x f, 3 x 3."""
    x, y, z = vector
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


@dataclass(frozen=True)
class ContactPointSpec:
    """A point on the robot that can touch the environment.

    Attributes:
        name: Unique name (``"left_foot/0"`` for a sole corner, the config's name otherwise).
        frame: Frame of the robot model the point is fixed on.
        position: Position in that frame [m].
    """

    name: str
    frame: str
    position: tuple[float, float, float]


def points_from_config(config: RobotConfig) -> list[ContactPointSpec]:
    """Sole corners (``"<sole>/<k>"``, k = 0..3 counter-clockwise) and the config's points."""
    points = []
    for sole in config.soles:
        for k, corner in enumerate(sole.corners()):
            points.append(ContactPointSpec(f"{sole.name}/{k}", sole.frame, tuple(corner)))
    for point in config.contact_points:
        points.append(ContactPointSpec(point.name, point.frame, tuple(point.position)))
    return points


@dataclass(frozen=True)
class _Selection:
    """The points of a set of joint groups, with constant matrices of the batched maths (cached).

    With the g selected joints' placements stacked as h = (H_1[:3, :], ..., H_g[:3, :]) raveled
    (12 g), their twists in their own frames as t = (v_1, w_1, ..., v_g, w_g) (6 g), and the m
    points' joint-frame positions p_i:

    - world positions: ``position_map @ h`` (3 m), since x_i = H_g[:3, :] (p_i, 1);
    - velocities in the joint frames: ``velocity_map @ t`` (3 m), v_i = v_g + w_g x p_i;
    - joint wrenches from joint-frame forces: ``wrench_map @ f`` (6 g), sum of (f_i, p_i x f_i).
    """

    joints: tuple[int, ...]
    groups: tuple[int, ...]  # positions of ``joints`` in ``ContactPointSet.group_joints``
    index: np.ndarray  # point indices, grouped by joint
    rows: slice | np.ndarray  # ``index`` as a slice when contiguous (views instead of copies)
    group_of_point: np.ndarray  # position of each point's joint in ``joints``
    position_map: np.ndarray  # (3 m, 12 g)
    velocity_map: np.ndarray  # (3 m, 6 g)
    wrench_map: np.ndarray  # (6 g, 3 m)
    # Scratch for h, (g, 3, 4) (only read within one kinematics call), with its raveled view and
    # per selected joint the views of its rotation and translation columns.
    placements: np.ndarray
    placements_flat: np.ndarray
    placement_views: tuple[tuple[np.ndarray, np.ndarray], ...]


class ContactKinematics:
    """Positions and velocities of the points that passed the broad phase.

    Attributes:
        index: Indices of the points in the set, (m,).
        rows: The same as a slice when contiguous (indexing with it gives views).
        position: World positions [m], (m, 3).
        rotation: Orientation of each point's joint frame in the world, (m, 3, 3).
        selection: The cached selection these points belong to.

    Args:
        index, rows, position, rotation, selection: The attributes.
        velocity: The points' world velocities [m/s], (m, 3); None: evaluated from ``twists``
            when first read (the rigid contact never reads them).
        twists: The selected joints' twists in their own frames, (v_1, w_1, ..., v_g, w_g).
    """

    __slots__ = ("index", "rows", "position", "rotation", "selection", "_velocity", "_twists")

    def __init__(
        self,
        index: np.ndarray,
        rows: slice | np.ndarray,
        position: np.ndarray,
        velocity: np.ndarray | None,
        rotation: np.ndarray,
        selection: _Selection | None,
        twists: np.ndarray | None = None,
    ):
        self.index = index
        self.rows = rows
        self.position = position
        self.rotation = rotation
        self.selection = selection
        self._velocity = velocity
        self._twists = twists

    @property
    def velocity(self) -> np.ndarray:
        """Velocities of the points (fixed on the robot) in the world [m/s], (m, 3)."""
        if self._velocity is None:
            # R (v + w x p) per point.
            local = (self.selection.velocity_map @ self._twists).reshape(-1, 3, 1)
            self._velocity = (self.rotation @ local)[:, :, 0]
        return self._velocity


class _JointViews:
    """Live numpy views on one Pinocchio data's joint placements and twists (no copies).

    Reading ``data.oMi[j].homogeneous`` or ``data.v[j].vector`` from Python costs a few
    microseconds per access (a proxy object, then a new array); these views are taken once and
    always show the data's current values (Pinocchio never reallocates them).
    """

    def __init__(self, data: pin.Data, joints: Sequence[int]):
        self.data = data
        self.rotation = [data.oMi[j].rotation for j in joints]
        self.translation = [data.oMi[j].translation for j in joints]
        self.twist = [data.v[j].vector for j in joints]


class ContactPointSet:
    """Contact points of a Pinocchio model, grouped by parent joint.

    Args:
        model: The Pinocchio model.
        points: The points.

    Raises:
        InputError: Repeated point names or an unknown frame.
    """

    def __init__(self, model: pin.Model, points: Sequence[ContactPointSpec]):
        names = [point.name for point in points]
        if len(set(names)) != len(names):
            raise InputError("contact points", "unique names", names)
        self.names = tuple(names)
        self.specs = tuple(points)
        frames = [frame.name for frame in model.frames]
        joints = []
        local = []
        for point in points:
            if point.frame not in frames:
                raise InputError(
                    f"contact point '{point.name}'.frame", "a frame of the model", point.frame
                )
            frame = model.frames[model.getFrameId(point.frame)]
            joints.append(frame.parentJoint)
            local.append(frame.placement.act(np.asarray(point.position, dtype=float)))
        self.joint = np.array(joints, dtype=int)
        self.position_in_joint = np.array(local, dtype=float).reshape(-1, 3)
        self.size = len(points)
        self.group_joints = tuple(sorted({int(j) for j in joints}))
        self.group_index = [np.flatnonzero(self.joint == j) for j in self.group_joints]
        self.group_radius = np.array(
            [
                float(np.linalg.norm(self.position_in_joint[index], axis=1).max())
                for index in self.group_index
            ]
        )
        self._radius = self.group_radius.tolist()
        self._selections: dict[tuple[bool, ...], _Selection] = {}
        self._views: _JointViews | None = None
        nothing = np.zeros(0, dtype=int)
        self._empty = ContactKinematics(
            nothing, nothing, np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3, 3)), None
        )

    def _selection(self, near: tuple[bool, ...]) -> _Selection:
        selection = self._selections.get(near)
        if selection is not None:
            return selection
        groups = tuple(k for k, keep in enumerate(near) if keep)
        joints = tuple(self.group_joints[k] for k in groups)
        parts = [self.group_index[k] for k in groups]
        index = np.concatenate(parts)
        group_of_point = np.concatenate([np.full(len(p), k) for k, p in enumerate(parts)])
        m, g = len(index), len(joints)
        position_map = np.zeros((3 * m, 12 * g))
        velocity_map = np.zeros((3 * m, 6 * g))
        for row, (point, group) in enumerate(zip(index, group_of_point, strict=True)):
            homogeneous = np.append(self.position_in_joint[point], 1.0)
            for axis in range(3):
                start = 12 * group + 4 * axis
                position_map[3 * row + axis, start : start + 4] = homogeneous
            block = slice(3 * row, 3 * row + 3)
            velocity_map[block, 6 * group : 6 * group + 3] = np.eye(3)
            velocity_map[block, 6 * group + 3 : 6 * group + 6] = -skew(
                self.position_in_joint[point]
            )
        contiguous = bool(np.all(np.diff(index) == 1))
        rows = slice(int(index[0]), int(index[-1]) + 1) if contiguous else index
        placements = np.empty((g, 3, 4))
        selection = _Selection(
            joints,
            groups,
            index,
            rows,
            group_of_point,
            position_map,
            velocity_map,
            velocity_map.T.copy(),
            placements,
            placements.reshape(-1),
            tuple((placements[k, :, :3], placements[k, :, 3]) for k in range(g)),
        )
        self._selections[near] = selection
        return selection

    def _joint_views(self, data: pin.Data) -> _JointViews:
        views = self._views
        if views is None or views.data is not data:
            views = self._views = _JointViews(data, self.group_joints)
        return views

    def kinematics(
        self, data: pin.Data, environment: Environment, margin: float
    ) -> ContactKinematics:
        """World positions and velocities of the points possibly within ``margin`` of a surface.

        ``data`` must hold forward kinematics with velocities (``pin.forwardKinematics(model,
        data, q, v)``).
        """
        if self.size == 0:
            return self._empty
        views = self._joint_views(data)
        if environment.has_boxes:
            centers = np.array(views.translation)
            key = tuple(environment.near(centers, self.group_radius, margin).tolist())
        else:  # the ground alone: a sphere is near when its centre is below radius + margin
            key = tuple(
                [
                    bool(t[2] <= radius + margin)
                    for t, radius in zip(views.translation, self._radius, strict=True)
                ]
            )
        if not any(key):
            return self._empty
        selection = self._selection(key)
        # h: the selected joints' top three rows of their homogeneous placements, (g, 3, 4).
        placements = selection.placements
        for (rotation, translation), group in zip(
            selection.placement_views, selection.groups, strict=True
        ):
            rotation[:] = views.rotation[group]
            translation[:] = views.translation[group]
        twists = np.concatenate([views.twist[group] for group in selection.groups])
        position = (selection.position_map @ selection.placements_flat).reshape(-1, 3)
        rotation = placements[selection.group_of_point, :, :3]
        return ContactKinematics(
            selection.index, selection.rows, position, None, rotation, selection, twists
        )

    def joint_wrenches(
        self, kinematics: ContactKinematics, forces_world: np.ndarray
    ) -> tuple[tuple[int, ...], np.ndarray]:
        """Total wrench of forces at the points of ``kinematics`` on each of their joints.

        Args:
            kinematics: The points and their joint orientations.
            forces_world: Force on the robot at each of its points, world axes [N], (m, 3).

        Returns:
            (joints, wrenches): the joints of the selection and, per joint, the wrench (force
            [N], torque about the joint origin [N m]) in the joint frame, (g, 6).
        """
        selection = kinematics.selection
        if selection is None:
            return (), np.zeros((0, 6))
        # R^T f per point: f as a column, rotation transposed.
        force_local = kinematics.rotation.transpose(0, 2, 1) @ forces_world[:, :, np.newaxis]
        return selection.joints, (selection.wrench_map @ force_local.ravel()).reshape(-1, 6)

    def point_wrenches(
        self, kinematics: ContactKinematics, forces_world: np.ndarray
    ) -> np.ndarray:
        """Wrench of the force at each point of ``kinematics`` in its joint's frame, (m, 6).

        Force [N] and torque about the joint origin [N m], joint axes.
        """
        force_local = (kinematics.rotation.transpose(0, 2, 1) @ forces_world[:, :, np.newaxis])[
            :, :, 0
        ]
        wrenches = np.empty((force_local.shape[0], 6))
        wrenches[:, :3] = force_local
        wrenches[:, 3:] = cross_rows(self.position_in_joint[kinematics.index], force_local)
        return wrenches

    def add_joint_forces(
        self, kinematics: ContactKinematics, forces_world: np.ndarray, out: ExternalForces
    ) -> np.ndarray:
        """Add forces at the points of ``kinematics`` to Pinocchio's per-joint external forces.

        Args:
            kinematics: The points and their joint orientations.
            forces_world: Force on the robot at each of its points, world axes [N], (m, 3).
            out: Per-joint forces in the joint frames (Pinocchio's ``fext``), added to.

        Returns:
            The wrench added on each joint of the selection (joint frame), (g, 6).
        """
        joints, totals = self.joint_wrenches(kinematics, forces_world)
        for joint, total in zip(joints, totals, strict=True):
            out.add(joint, total)
        return totals
