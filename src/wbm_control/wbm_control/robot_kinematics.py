"""One control step's kinematics of the robot, computed once and then only read.

Like pink's ``Configuration``, a :class:`RobotKinematics` promises that the quantities the tasks
read (frame placements, velocities, Jacobians, drifts, CoM, mass matrix, bias forces) belong to
the state (q, v) it was built from: the tasks and the QP builders query it, never a
``pin.Data`` left in some state by an earlier call.

Frames: placements in the world; frame velocities, drifts and Jacobians LOCAL_WORLD_ALIGNED
(at the frame origin, world axes), linear part first; q and v in Pinocchio's layout (base
twist in base axes).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable

import numpy as np
import pinocchio as pin

from wbm_control.jit.kinematics_kernels import frame_kinematics, output_size
from wbm_control.pinocchio_views import DataViews

LOCAL_WORLD_ALIGNED = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
ACCELERATION = pin.KinematicLevel.ACCELERATION


class _KernelInputs:
    """What the frame kinematics kernel reads of a model and its data, made once per data.

    (:func:`~wbm_control.jit.kinematics_kernels.frame_kinematics`; :func:`_kernel_inputs`.)

    Attributes:
        views: Pinocchio's placements, joint velocities and accelerations (in place, or the
            copying fallback, :class:`~wbm_control.pinocchio_views.DataViews`).
        parent_joints: Each frame's parent joint (nframes,) int64.
        local_translations: Each frame's translation in its parent joint (nframes x 3) [m].
        supports: (njoints x nv) uint8, 1 where a velocity column moves the joint.
        layouts: Sorted frame ids (a tuple) to the kernel's output layout (memo).
    """

    def __init__(self, model: pin.Model, data: pin.Data, in_place: bool):
        self.model = model
        self.views = DataViews(model, data, in_place=in_place)
        frames = model.frames
        self.parent_joints = np.array([frame.parentJoint for frame in frames], dtype=np.int64)
        self.local_translations = np.array([frame.placement.translation for frame in frames])
        self.supports = np.zeros((model.njoints, model.nv), dtype=np.uint8)
        for joint in range(1, model.njoints):
            for support in model.supports[joint]:
                if support > 0:
                    start = model.joints[support].idx_v
                    self.supports[joint, start : start + model.joints[support].nv] = 1
        self.layouts: dict[tuple[int, ...], _OutputLayout] = {}


class _OutputLayout:
    """Where each quantity lies in the kernel's output for these frames (its docstring)."""

    def __init__(self, rows: tuple[int, ...], nv: int):
        n = len(rows)
        self.nv = nv
        #: Frame id to its index in the output's frame blocks (Jacobians, twists, drifts).
        self.frame_index = {frame_id: i for i, frame_id in enumerate(rows)}
        self.frame_ids = np.array(rows, dtype=np.int64)
        self.size = output_size(n, nv)
        self.velocities = 6 * n * nv
        self.drifts = self.velocities + 6 * n
        self.mass = self.drifts + 6 * n
        self.com_jacobian = self.mass + nv * nv
        self.bias = self.com_jacobian + 3 * nv
        self.rest = self.bias + nv


#: The kernel inputs of the last datas used (id -> inputs holding the data: an id stays that
#: data's while it is here). Bounded: the controller uses one or two datas; tests make many.
_INPUTS: OrderedDict[tuple[int, bool], tuple[pin.Data, _KernelInputs]] = OrderedDict()
_INPUTS_KEPT = 8


def _kernel_inputs(model: pin.Model, data: pin.Data, in_place: bool) -> _KernelInputs:
    """The kernel inputs of (model, data), made at the first call for that data.

    Keyed by the data's identity (``pin.Data.__eq__`` compares values: no dict of datas).
    """
    key = (id(data), in_place)
    entry = _INPUTS.get(key)
    if entry is not None and entry[0] is data and entry[1].model is model:
        return entry[1]
    inputs = _KernelInputs(model, data, in_place)
    _INPUTS[key] = (data, inputs)
    if len(_INPUTS) > _INPUTS_KEPT:
        _INPUTS.popitem(last=False)
    return inputs


#: The last frame set given (immutable: a frozenset or a tuple, kept referenced so that its id
#: stays its own) and its sorted ids: the tasks' frame set is the same object at every step.
_last_frames: list[tuple[object, tuple[int, ...]]] = []


def _sorted_frames(frame_ids: Iterable[int]) -> tuple[int, ...]:
    """The frame ids sorted, without repeats (kept for the last immutable frame set)."""
    if _last_frames and _last_frames[0][0] is frame_ids:
        return _last_frames[0][1]
    rows = tuple(sorted(set(frame_ids)))
    if isinstance(frame_ids, (frozenset, tuple)):
        _last_frames[:] = [(frame_ids, rows)]
    return rows


class RobotKinematics:
    """The kinematics (and, with ``dynamics``, the dynamics) of the robot at (q, v).

    Args:
        model: Pinocchio model (floating base).
        data: Its scratch data (overwritten).
        q: Configuration (nq,).
        v: Velocity (nv,).
        frame_ids: The frames the tasks will query.
        dynamics: Also compute frame velocities and drifts, the mass matrix and the bias
            forces (mode "torque"); without it only the CoM state, Jacobian and momentum, the
            frame placements and Jacobians are computed (mode "ik").
        in_place: With ``dynamics``, the kernel reads Pinocchio's placements and motions in
            place where their layout allows (the default); False: copied first (tests of the
            fallback, :class:`~wbm_control.pinocchio_views.DataViews`).

    Attributes:
        q: Configuration.
        v: Velocity.
        com: CoM position in the world [m].
        com_velocity: CoM velocity [m/s].
        com_drift: CoM acceleration at zero joint acceleration (dJ_com/dt v) [m/s^2].
        placements: Frame id to its placement in the world.
        rotations: Frame id to its rotation in the world (3 x 3, Fortran order as
            Pinocchio's).
        translations: Frame id to its position in the world (3,) [m].
        poses: With ``dynamics``, the frames' placements (n x 12), in the order of
            ``layout.frame_index``: the rotation column-major then the translation [m] (None
            without). The per-frame dicts above are made when first read.
        velocities: Frame id to its twist (6,) [m/s, rad/s] (dynamics only).
        drifts: Frame id to dJ/dt v (6,), its classical acceleration at a = 0 [m/s^2, rad/s^2]
            (dynamics only).
        jacobians: Frame id to its Jacobian (6 x nv).
        com_jacobian: (3 x nv).
        mass_matrix: M (nv x nv), symmetric (dynamics only).
        bias_forces: h = C(q, v) v + g(q) (nv,) [N, N m] (dynamics only).
        centroidal_momentum: h_G (6,) at (q, v): linear [kg m/s] and angular about the CoM
            [kg m^2/s], world axes (the ZMP estimate reads it, :mod:`wbm_control.zmp_estimation`).
        base_rotation: Rotation of the floating base in the world (3 x 3).
        buffer: With ``dynamics``, the kernel's one array the attributes above are views of
            (None without): the torque mode's QP reads its rows there by offset
            (:mod:`wbm_control.torque_qp`).
        layout: With ``dynamics``, where each quantity lies in :attr:`buffer`
            (:class:`_OutputLayout`; None without).

    The arrays are this object's own (C order). With ``dynamics`` they are views of one array
    the kernel :func:`~wbm_control.jit.kinematics_kernels.frame_kinematics` fills from
    Pinocchio's pass (the frames' twists and drifts equal Pinocchio's getters' to rounding, the
    rest bit for bit; tests/control/test_jit_kinematics.py).
    """

    @property
    def placements(self) -> dict[int, pin.SE3]:
        """Frame id to its placement in the world.

        With ``dynamics`` made at the first access, from :attr:`poses` (the step itself reads
        :attr:`poses` by row).
        """
        placements = self._placements
        if placements is None:
            placements = self._placements = {
                fid: pin.SE3(rotation, self.translations[fid])
                for fid, rotation in self.rotations.items()
            }
        return placements

    @property
    def rotations(self) -> dict[int, np.ndarray]:
        """Frame id to its rotation in the world (3 x 3, Fortran order as Pinocchio's)."""
        rotations = self._rotations
        if rotations is None:
            if self.poses is None:  # without dynamics: the placements'
                rotations = {fid: p.rotation for fid, p in self.placements.items()}
            else:  # column-major rows: each (3 x 3) of the transposed reshape
                n = self.poses.shape[0]
                matrices = self.poses[:, :9].reshape(n, 3, 3).transpose(0, 2, 1)
                rotations = dict(zip(self.layout.frame_index, matrices, strict=True))
            self._rotations = rotations
        return rotations

    @property
    def translations(self) -> dict[int, np.ndarray]:
        """Frame id to its position in the world (3,) [m]."""
        translations = self._translations
        if translations is None:
            if self.poses is None:
                translations = {fid: p.translation for fid, p in self.placements.items()}
            else:
                translations = dict(zip(self.layout.frame_index, self.poses[:, 9:], strict=True))
            self._translations = translations
        return translations

    @property
    def jacobians(self) -> dict[int, np.ndarray]:
        """Frame id to its Jacobian (6 x nv), LOCAL_WORLD_ALIGNED (views of :attr:`buffer`)."""
        jacobians = self._jacobians
        if jacobians is None:
            layout = self.layout
            n = layout.frame_ids.shape[0]
            blocks = self.buffer[: layout.velocities].reshape(n, 6, layout.nv)
            jacobians = self._jacobians = dict(zip(layout.frame_index, blocks, strict=True))
        return jacobians

    @property
    def velocities(self) -> dict[int, np.ndarray]:
        """Frame id to its twist (6,) [m/s, rad/s] (dynamics only; views of :attr:`buffer`)."""
        velocities = self._velocities
        if velocities is None:
            layout = self.layout
            twists = self.buffer[layout.velocities : layout.drifts].reshape(-1, 6)
            velocities = self._velocities = dict(zip(layout.frame_index, twists, strict=True))
        return velocities

    @property
    def drifts(self) -> dict[int, np.ndarray]:
        """Frame id to dJ/dt v (6,) [m/s^2, rad/s^2] (dynamics only; views of :attr:`buffer`)."""
        drifts = self._drifts
        if drifts is None:
            layout = self.layout
            values = self.buffer[layout.drifts : layout.mass].reshape(-1, 6)
            drifts = self._drifts = dict(zip(layout.frame_index, values, strict=True))
        return drifts

    def __init__(
        self,
        model: pin.Model,
        data: pin.Data,
        q: np.ndarray,
        v: np.ndarray,
        frame_ids: Iterable[int],
        *,
        dynamics: bool = True,
        in_place: bool = True,
    ):
        self.q = q
        self.v = v
        rows = _sorted_frames(frame_ids)
        self.com_jacobian: np.ndarray | None = None
        self.mass_matrix: np.ndarray | None = None
        self.bias_forces: np.ndarray | None = None
        self.buffer: np.ndarray | None = None
        self.layout: _OutputLayout | None = None
        if dynamics:
            # One pass: joint placements, velocities, accelerations at a = 0 (the drifts),
            # Jacobians, the CoM and its Jacobian, M (upper triangle), h = C v + g and h_G.
            pin.computeAllTerms(model, data, q, v)
        else:
            # One pass of the joint states; the momentum and the Jacobians read from it.
            pin.forwardKinematics(model, data, q, v, np.zeros(model.nv))
            pin.computeCentroidalMomentum(model, data)
            pin.computeJointJacobians(model, data)
        # CoM position, velocity and acceleration at a = 0 from the joint states just computed.
        pin.centerOfMass(model, data, ACCELERATION, False)
        pin.updateFramePlacements(model, data)
        self._rotations = self._translations = None
        if not dynamics:
            oMf = data.oMf
            self._placements = {fid: oMf[fid].copy() for fid in rows}
            self.poses = None
            self.centroidal_momentum = data.hg.vector.copy()
            self.base_rotation = data.oMi[1].rotation.copy()
            self.com = data.com[0].copy()
            self.com_velocity = data.vcom[0].copy()
            self.com_drift = data.acom[0].copy()
            self._velocities: dict[int, np.ndarray] | None = {}
            self._drifts: dict[int, np.ndarray] | None = {}
            self._jacobians = {
                fid: pin.getFrameJacobian(model, data, fid, LOCAL_WORLD_ALIGNED) for fid in rows
            }
            # From the joint Jacobians and the CoM just computed (no pass of its own).
            self.com_jacobian = pin.jacobianCenterOfMass(model, data, False).copy()
            return
        # The frames' Jacobians, twists and drifts, M mirrored and the copies: one kernel over
        # Pinocchio's arrays (jit/kinematics_kernels.py) into one array of this object's own.
        inputs = _kernel_inputs(model, data, in_place)
        layout = inputs.layouts.get(rows)
        if layout is None:
            layout = inputs.layouts[rows] = _OutputLayout(rows, model.nv)
        views = inputs.views
        if views.copied:
            views.refresh()
        out = np.empty(layout.size)
        # The frames' placements copied by the kernel ((n x 12): the rotation column-major, then
        # the translation). The per-frame dicts (and the SE3 objects) are made when first read:
        # the torque step reads the arrays by offset (a view per frame costs about 0.5 us).
        self.poses = np.empty((len(rows), 12))
        frame_kinematics(
            layout.frame_ids,
            inputs.parent_joints,
            inputs.local_translations,
            inputs.supports,
            views.joint_placements,
            views.frame_placements,
            views.joint_velocities,
            views.joint_accelerations,
            views.joint_jacobians,
            views.mass_upper,
            views.com_jacobian,
            views.bias_forces,
            views.com,
            views.com_velocity,
            views.com_acceleration,
            views.momentum,
            out,
            self.poses,
        )
        self.buffer, self.layout = out, layout
        nv = model.nv
        self._placements = self._jacobians = self._velocities = self._drifts = None
        self.mass_matrix = out[layout.mass : layout.com_jacobian].reshape(nv, nv)
        self.com_jacobian = out[layout.com_jacobian : layout.bias].reshape(3, nv)
        rest = layout.rest
        self.bias_forces = out[layout.bias : rest]
        self.com = out[rest : rest + 3]
        self.com_velocity = out[rest + 3 : rest + 6]
        self.com_drift = out[rest + 6 : rest + 9]
        self.centroidal_momentum = out[rest + 9 : rest + 15]
        self.base_rotation = out[rest + 15 : rest + 24].reshape(3, 3)
