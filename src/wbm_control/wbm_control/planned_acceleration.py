"""The accelerations a motion plan asks for: weighted least squares on task accelerations.

The IK mode's servos track positions; their feed-forward torques need the acceleration of the
motion they track (:mod:`wbm_control.motion_feedforward`). Differentiating the IK's velocity
gives it with the IK's feedback in it: a re-planned swing target or a contact switch makes the
velocity jump and its difference ask for torques at the limits. The plan's own accelerations (the
swing foot's, the CoM's, zero for the held soles and the base orientation) give it without:

    minimize  sum_i || W_i (J_i a + Jd_i v - xdd_i) ||^2 + || W_c (J_c a + Jd_c v - cdd) ||^2
              + w_j^2 || a_joints ||^2 + damping || a ||^2,

with J_i the frames' LOCAL_WORLD_ALIGNED Jacobians, Jd_i v their classical acceleration at a = 0
(the drift), xdd_i their planned classical accelerations (linear [m/s^2], angular [rad/s^2]),
J_c the CoM Jacobian and Jd_c v the CoM's acceleration at a = 0. Solved by its normal equations
(nv x nv, positive definite for damping > 0).

Velocities and accelerations in Pinocchio's layout (the free-flyer's in the base frame). On
return ``data`` holds the joint Jacobians and frame placements at q (``computeJointJacobians``):
:func:`~wbm_control.motion_feedforward.motion_torques` at the same q reads them
(``jacobians_at_q``). Given the frames' and the CoM's Jacobians at q (the step's kinematics
at the same q: ``jacobians``, ``com_jacobian``) no Jacobian is computed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from scipy.linalg import lapack

from wbm_control.exceptions import InputError

_LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
_GESV = lapack.dgesv  # LU with partial pivoting (what np.linalg.solve calls)


@dataclass(frozen=True)
class AccelerationTarget:
    """A frame's planned classical acceleration.

    Attributes:
        frame_id: Frame of the model.
        acceleration: (6,) linear [m/s^2] and angular [rad/s^2], world axes.
        cost: (6,) weights of its rows [s^2/m, s^2/rad] (0: row ignored).
    """

    frame_id: int
    acceleration: np.ndarray
    cost: np.ndarray


def planned_acceleration(
    model: pin.Model,
    data: pin.Data,
    q: np.ndarray,
    v: np.ndarray,
    frames: Sequence[AccelerationTarget],
    *,
    com_acceleration: np.ndarray | None = None,
    com_cost: float | np.ndarray = 0.0,
    joint_cost: float = 0.0,
    damping: float = 1e-9,
    root_rows: int | None = None,
    jacobians: Mapping[int, np.ndarray] | None = None,
    com_jacobian: np.ndarray | None = None,
) -> np.ndarray:
    """The acceleration (nv,) that best realizes the planned task accelerations (see module).

    Args:
        model: Pinocchio model.
        data: Scratch data of ``model`` (overwritten).
        q: Configuration (nq,).
        v: Velocity (nv,).
        frames: Frame acceleration targets.
        com_acceleration: Planned CoM acceleration (3,) [m/s^2], world (None: no CoM term).
        com_cost: Weight of the CoM rows [s^2/m], scalar or (3,).
        joint_cost: Weight of the joint accelerations [s^2/rad] (the regularization).
        damping: Weight of ||a||^2 [-], > 0.
        root_rows: Velocity rows of the root joint, which ``joint_cost`` leaves out (6 for a
            free flyer); None: read from the model.
        jacobians: Frame id to its LOCAL_WORLD_ALIGNED Jacobian (6 x nv) at q, for every frame
            of ``frames`` (e.g. the step's
            :class:`~wbm_control.robot_kinematics.RobotKinematics` at the same q): read instead
            of computed, with ``com_jacobian`` (``data`` then does not hold the joint Jacobians
            on return).
        com_jacobian: The CoM Jacobian (3 x nv) at q, given with ``jacobians``.

    Raises:
        InputError: damping not positive, or q, v of the wrong size.
    """
    if not damping > 0.0:
        raise InputError("damping", "a damping > 0", damping)
    q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
    if q.shape != (model.nq,) or v.shape != (model.nv,):
        raise InputError("q, v", f"({model.nq},) and ({model.nv},)", (q.shape, v.shape))
    nv = model.nv
    # The weighted rows W J (stacked) and targets W (xdd - Jd v): one product for the normal
    # equations instead of one per task.
    rows = 6 * len(frames) + (3 if com_acceleration is not None else 0)
    A = np.empty((rows, nv))
    b = np.empty(rows)
    # One kinematics pass at (q, v, 0) gives the drifts; the Jacobians at q from it.
    pin.forwardKinematics(model, data, q, v, np.zeros(nv))
    given = jacobians is not None and com_jacobian is not None
    if not given:
        pin.computeJointJacobians(model, data, q)
    row = 0
    if com_acceleration is not None:
        pin.centerOfMass(model, data, pin.KinematicLevel.ACCELERATION, True)
        cost = com_cost if isinstance(com_cost, float) else np.asarray(com_cost, dtype=float)
        if not isinstance(cost, float) and cost.shape != (3,):
            cost = np.broadcast_to(cost, (3,))
        np.multiply(
            com_jacobian if given else pin.jacobianCenterOfMass(model, data, False),
            cost if isinstance(cost, float) else cost[:, None],
            out=A[:3],
        )
        b[:3] = cost * (np.asarray(com_acceleration, dtype=float) - data.acom[0])
        row = 3
    if frames:
        pin.updateFramePlacements(model, data)
        for target in frames:
            block = slice(row, row + 6)
            cost = np.asarray(target.cost, dtype=float)
            jacobian = (
                jacobians[target.frame_id]
                if given
                else pin.getFrameJacobian(model, data, target.frame_id, _LWA)
            )
            np.multiply(jacobian, cost[:, None], out=A[block])  # the weighted rows, in place
            drift = pin.getFrameClassicalAcceleration(model, data, target.frame_id, _LWA).vector
            b[block] = cost * (np.asarray(target.acceleration, dtype=float) - drift)
            row += 6
    # ndarray.dot: the BLAS calls of @ (syrk, gemv), without the operator's dispatch.
    H = A.T.dot(A)
    g = A.T.dot(b)
    diagonal = H.reshape(-1)[:: nv + 1]  # a view of the diagonal (H is C-contiguous)
    diagonal += damping
    if root_rows is None:  # the free-flyer's rows
        root_rows = 6 if model.njoints > 1 and model.joints[1].nq == 7 else 0
    root = root_rows
    diagonal[root:] += joint_cost * joint_cost
    # LAPACK's LU (what np.linalg.solve calls, without its wrapper): the same numbers.
    _, _, solution, info = _GESV(H, g, overwrite_a=1, overwrite_b=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"singular normal equations (dgesv info {info})")
    return solution
