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

from collections.abc import Iterable

import numpy as np
import pinocchio as pin

LOCAL_WORLD_ALIGNED = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
ACCELERATION = pin.KinematicLevel.ACCELERATION
# Pinocchio's frame getters, bound once (15 calls a step).
_classical_acceleration = pin.getFrameClassicalAcceleration
_frame_velocity = pin.getFrameVelocity
_frame_jacobian = pin.getFrameJacobian

_MIRROR_INDICES: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def _mirror_indices(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Flat indices (row-major, n x n) of the strictly lower triangle and of their transposes.

    ``flat[lower] = flat[upper]`` copies the upper triangle into the lower one (computed once
    per n).
    """
    if n not in _MIRROR_INDICES:
        lower = np.flatnonzero(np.tri(n, k=-1, dtype=bool))
        _MIRROR_INDICES[n] = (lower, (lower % n) * n + lower // n)
    return _MIRROR_INDICES[n]


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

    Attributes:
        q: Configuration.
        v: Velocity.
        com: CoM position in the world [m].
        com_velocity: CoM velocity [m/s].
        com_drift: CoM acceleration at zero joint acceleration (dJ_com/dt v) [m/s^2].
        placements: Frame id to its placement in the world.
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
    """

    def __init__(
        self,
        model: pin.Model,
        data: pin.Data,
        q: np.ndarray,
        v: np.ndarray,
        frame_ids: Iterable[int],
        *,
        dynamics: bool = True,
    ):
        self.q = q
        self.v = v
        frame_ids = sorted(set(frame_ids))
        self.velocities: dict[int, np.ndarray] = {}
        self.drifts: dict[int, np.ndarray] = {}
        self.jacobians: dict[int, np.ndarray] = {}
        self.com_jacobian: np.ndarray | None = None
        self.mass_matrix: np.ndarray | None = None
        self.bias_forces: np.ndarray | None = None
        if dynamics:
            # One pass: joint placements, velocities, accelerations at a = 0 (the drifts),
            # Jacobians, the CoM and its Jacobian, M (upper triangle), h = C v + g and h_G.
            pin.computeAllTerms(model, data, q, v)
        else:
            # One pass of the joint states; the momentum and the Jacobians read from it.
            pin.forwardKinematics(model, data, q, v, np.zeros(model.nv))
            pin.computeCentroidalMomentum(model, data)
            pin.computeJointJacobians(model, data)
        self.centroidal_momentum = data.hg.vector.copy()
        self.base_rotation = data.oMi[1].rotation.copy()
        # CoM position, velocity and acceleration at a = 0 from the joint states just computed.
        pin.centerOfMass(model, data, ACCELERATION, False)
        pin.updateFramePlacements(model, data)
        self.com = data.com[0].copy()
        self.com_velocity = data.vcom[0].copy()
        self.com_drift = data.acom[0].copy()
        oMf = data.oMf
        self.placements = {fid: oMf[fid].copy() for fid in frame_ids}
        if not dynamics:
            for fid in frame_ids:
                self.jacobians[fid] = pin.getFrameJacobian(model, data, fid, LOCAL_WORLD_ALIGNED)
            # From the joint Jacobians and the CoM just computed (no pass of its own).
            self.com_jacobian = pin.jacobianCenterOfMass(model, data, False).copy()
            return
        drifts, velocities, jacobians = self.drifts, self.velocities, self.jacobians
        for fid in frame_ids:
            drifts[fid] = _classical_acceleration(model, data, fid, LOCAL_WORLD_ALIGNED).vector
            velocities[fid] = _frame_velocity(model, data, fid, LOCAL_WORLD_ALIGNED).vector
            jacobians[fid] = _frame_jacobian(model, data, fid, LOCAL_WORLD_ALIGNED)
        self.com_jacobian = data.Jcom.copy()
        # M: Pinocchio fills its upper triangle; mirrored into the lower one (copies, no sums;
        # a gather and a scatter on precomputed indices, cheaper than copyto with a mask).
        M = data.M.copy()
        lower, upper = _mirror_indices(model.nv)
        flat = M.reshape(-1)  # a view: M is C-contiguous (a fresh copy)
        flat[lower] = flat[upper]
        self.mass_matrix = M
        self.bias_forces = data.nle.copy()
