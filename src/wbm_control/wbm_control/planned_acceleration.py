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
(nv x nv, positive definite for damping > 0): H = A^T A by numpy's BLAS, the rest assembled and
solved (LAPACK's LU) in one compiled call
(:func:`wbm_control.jit.feedforward_kernels.planned_acceleration_solve`).

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

from wbm_control.exceptions import InputError
from wbm_control.jit import feedforward_kernels

_LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


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


class PlannedAccelerationWorkspace:
    """The arrays of :func:`solve_planned_acceleration` for nv velocities and a task count.

    Rows: the CoM's three (zero weights without a CoM term), then six per frame, in order.

    Attributes:
        jacobians: (rows, nv) the rows' Jacobians (LOCAL_WORLD_ALIGNED), filled per solve.
        costs: (rows,) their weights.
        targets: (rows,) their planned accelerations; ``frame_targets`` (frames, 6) and
            ``frame_costs`` (frames, 6) are views of the frames' rows.
        drifts: (rows,) Jd v, filled per solve.
        acceleration: (nv,) the solution of the last solve.
    """

    def __init__(self, nv: int, frames: int):
        rows = 3 + 6 * frames
        self.jacobians = np.zeros((rows, nv))
        self.costs = np.zeros(rows)
        self.targets = np.zeros(rows)
        self.drifts = np.zeros(rows)
        self.frame_targets = self.targets[3:].reshape(frames, 6)
        self.frame_costs = self.costs[3:].reshape(frames, 6)
        self.acceleration = np.zeros(nv)


def solve_planned_acceleration(
    model: pin.Model,
    data: pin.Data,
    q: np.ndarray,
    v: np.ndarray,
    frame_ids: Sequence[int],
    workspace: PlannedAccelerationWorkspace,
    *,
    com_acceleration: np.ndarray | None,
    joint_cost: float,
    damping: float,
    root_rows: int,
    jacobians: Mapping[int, np.ndarray] | None = None,
    com_jacobian: np.ndarray | None = None,
) -> np.ndarray:
    """:func:`planned_acceleration` on a workspace whose costs and frame targets are set.

    ``workspace.costs`` (the CoM's first three) and ``workspace.frame_targets`` are read;
    the Jacobians, the drifts and the CoM target are filled here (one kinematics pass at
    (q, v, 0), Pinocchio's classical accelerations), then one compiled call
    (:func:`wbm_control.jit.feedforward_kernels.planned_acceleration_solve`). Returns
    ``workspace.acceleration`` (overwritten by the next solve). The other arguments are
    :func:`planned_acceleration`'s (damping > 0 and the sizes unchecked).
    """
    nv = model.nv
    ws = workspace
    rows, drifts = ws.jacobians, ws.drifts
    pin.forwardKinematics(model, data, q, v, np.zeros(nv))
    given = jacobians is not None and com_jacobian is not None
    if not given:
        pin.computeJointJacobians(model, data, q)
    if com_acceleration is not None:
        pin.centerOfMass(model, data, pin.KinematicLevel.ACCELERATION, True)
        rows[:3] = com_jacobian if given else pin.jacobianCenterOfMass(model, data, False)
        drifts[:3] = data.acom[0]
        ws.targets[:3] = com_acceleration
    else:
        ws.costs[:3] = 0.0
        rows[:3] = 0.0
        drifts[:3] = 0.0
        ws.targets[:3] = 0.0
    if frame_ids:
        pin.updateFramePlacements(model, data)
        row = 3
        for frame_id in frame_ids:
            rows[row : row + 6] = (
                jacobians[frame_id] if given else pin.getFrameJacobian(model, data, frame_id, _LWA)
            )
            drifts[row : row + 6] = pin.getFrameClassicalAcceleration(
                model, data, frame_id, _LWA
            ).vector
            row += 6
    # The weighted rows and H = A^T A by numpy (BLAS syrk: the normal equations' condition
    # number is ~3e10, their solution follows H's last bits), the rest compiled.
    np.multiply(rows, ws.costs[:, None], out=rows)
    H = rows.T.dot(rows)
    info = feedforward_kernels.planned_acceleration_solve(
        rows, H, ws.costs, ws.targets, drifts, damping, joint_cost, root_rows, ws.acceleration
    )
    if info != 0:
        raise np.linalg.LinAlgError("singular normal equations")
    return ws.acceleration


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
    workspace = PlannedAccelerationWorkspace(model.nv, len(frames))
    for k, target in enumerate(frames):
        workspace.frame_targets[k] = target.acceleration
        workspace.frame_costs[k] = target.cost
    workspace.costs[:3] = com_cost
    if root_rows is None:  # the free-flyer's rows
        root_rows = 6 if model.njoints > 1 and model.joints[1].nq == 7 else 0
    return solve_planned_acceleration(
        model,
        data,
        q,
        v,
        [target.frame_id for target in frames],
        workspace,
        com_acceleration=com_acceleration,
        joint_cost=joint_cost,
        damping=damping,
        root_rows=root_rows,
        jacobians=jacobians,
        com_jacobian=com_jacobian,
    ).copy()
