"""The IK's QP build before its kernel (numpy and Pinocchio, one frame task at a time), and an
exact QP solution (quadprog) as the reference of the closed-form wrench distribution.

:func:`build_arrays_before` is ``DifferentialIK._build_arrays`` as it was before
:func:`wbm_control.jit.ik_kernels.build_ik_qp` (kept as the tests' reference): pink's terms in
pink's order with pink's formulas (Pinocchio's ``log6``, ``Jlog6``, ``getFrameJacobian``).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import quadprog

from wbm_control.differential_ik import DifferentialIK

LOCAL = pin.ReferenceFrame.LOCAL
POSITION = pin.KinematicLevel.POSITION


def build_arrays_before(
    ik: DifferentialIK, q: np.ndarray, dt: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(P, c, h) of the IK's QP at q for a step dt, as the numpy build computed them."""
    q = np.asarray(q, dtype=float)
    ik._set_task_targets(dt)
    model = ik.model
    data = model.createData()
    pin.computeJointJacobians(model, data, q)
    pin.updateFramePlacements(model, data)
    nv = model.nv
    H = ik.damping * np.eye(nv)
    c = np.zeros(nv)
    weighted_jacobian = np.empty((6, nv))
    for task in ik.frame_tasks.values():
        frame_id = model.getFrameId(task.frame)
        frame_to_world = data.oMf[frame_id]
        target_to_world = task.transform_target_to_world
        error = pin.log(frame_to_world.actInv(target_to_world)).vector
        np.matmul(
            pin.Jlog6(target_to_world.actInv(frame_to_world)),
            pin.getFrameJacobian(model, data, frame_id, LOCAL),
            out=weighted_jacobian,
        )
        cost = task.cost
        weighted_jacobian *= cost[:, None]
        H += weighted_jacobian.T.dot(weighted_jacobian)
        c += (cost * (-task.gain * error)).dot(weighted_jacobian)
    posture = ik.posture_task
    root = ik._root_nv
    error = pin.difference(model, posture.target_q, q)[root:]
    cost = posture.cost
    weighted_error = cost * (-posture.gain * error)
    diagonal = H.reshape(-1)[root * (nv + 1) :: nv + 1]
    diagonal += cost * cost
    c[root:] += -weighted_error * cost
    if ik.com_task is not None:
        com = pin.centerOfMass(model, data, POSITION, True)
        jacobian = pin.jacobianCenterOfMass(model, data, False)
        error = com - ik.com_task.target_com
        cost = ik.com_task.cost
        weighted_jacobian = cost[:, None] * jacobian
        weighted_error = cost * (-ik.com_task.gain * error)
        H += weighted_jacobian.T.dot(weighted_jacobian)
        c += (-weighted_error).dot(weighted_jacobian)
    if ik._inequality_matrix is None:
        return H, c, None
    configuration_limit, velocity_limit = ik.limits
    parts = []
    if configuration_limit.projection_matrix is not None:
        gain, indices = configuration_limit.config_limit_gain, configuration_limit.indices
        parts.append(gain * pin.difference(model, q, model.upperPositionLimit)[indices])
        parts.append(-(gain * pin.difference(model, q, model.lowerPositionLimit)[indices]))
    if velocity_limit.projection_matrix is not None:
        v_max = dt * velocity_limit.velocity_limit[velocity_limit.indices]
        parts += [v_max, v_max]
    return H, c, np.concatenate(parts)


def exact_qp_solution(problem) -> np.ndarray:
    """The exact minimizer of a :class:`~wbm_control.qp.DenseQP` with one-sided rows C x <= u.

    quadprog (Goldfarb-Idnani, an exact dense active-set method) on (H, g, A = b, C x <= u):
    the reference of the wrench distribution's closed form, which proxsuite's iterates (1e-7
    absolute tolerance) cannot be to 1e-9. Rows with u = +inf are left out; l must be -inf.
    """
    upper = np.asarray(problem.u, dtype=float)
    assert np.all(np.asarray(problem.l) <= -1e19), "one-sided rows only"
    kept = upper < 1e19
    constraints = np.vstack([problem.A, -problem.C[kept]]).T
    bounds = np.concatenate([problem.b, -upper[kept]])
    return quadprog.solve_qp(
        np.array(problem.H), -np.asarray(problem.g, dtype=float), constraints, bounds,
        problem.A.shape[0],
    )[0]  # fmt: skip
