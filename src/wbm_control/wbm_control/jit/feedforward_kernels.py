"""Compiled kernels of the IK mode's motion feed-forward (planned accelerations, net wrench).

- :func:`planned_acceleration_solve`: the normal equations of
  :func:`wbm_control.planned_acceleration.planned_acceleration` (H = A^T A, numpy's, + damping I
  + w_j^2 on the joints, g = A^T b) and their solution by LAPACK's LU with partial pivoting
  (numba's ``np.linalg.solve``: ``dgesv``, what the numpy path called).
- :func:`base_wrench`: the base rows of ``pin.rnea`` (the net contact wrench at the base
  origin, base axes) moved to the CoM in world axes (:func:`wbm_control.motion_feedforward.
  motion_torques`), with the free flyer's placement from q (Eigen's quaternion to rotation).
- :func:`subtract_contact_torques`: tau_joints -= J_joints^T w for one sole.
- :func:`friction_compensated_effort`: the IK command's effort, tau_ff minus the model's joint
  friction, clipped to the torque limits (:class:`wbm_control.ik_mode.IkMode`'s step).
- :func:`equality_wrench_distribution`: the wrench distribution's minimizer with no cone
  active (its equality constraint only, closed form) and whether it lies in the cones
  (:func:`wbm_control.wrench_distribution.distribute_net_wrench`).

Units: accelerations [m/s^2, rad/s^2] (Pinocchio's layout, the free flyer's in the base frame),
wrenches [N, N m]. Outputs are written into arrays the caller passes. The numpy code they
replace is kept in ``tests/control/test_ik_step_speedups.py``; ``tests/control/test_jit_ik.py``
compares the two.
"""

from __future__ import annotations

import numpy as np

from wbm_control.jit import kernel


@kernel
def planned_acceleration_solve(
    rows: np.ndarray,
    H: np.ndarray,
    costs: np.ndarray,
    targets: np.ndarray,
    drifts: np.ndarray,
    damping: float,
    joint_cost: float,
    root: int,
    out: np.ndarray,
) -> int:
    """The planned acceleration (nv,) into ``out``; 0, or 1 when H is singular (out NaN).

    Args:
        rows: (rows, nv) the weighted task rows A = W J (CoM, frames).
        H: (nv, nv) A^T A (numpy's, BLAS syrk: the normal equations are ill-conditioned,
            ~3e10 on iCub, and their solution moves by 1e-7 with H's last bits); the damping
            and the joint weight are added to its diagonal here (in place).
        costs: (rows,) the rows' weights W.
        targets: (rows,) the planned accelerations xdd.
        drifts: (rows,) the drifts Jd v (the accelerations at a = 0).
        damping: weight of ||a||^2 (> 0).
        joint_cost: weight of the joints' accelerations (rows from ``root``).
        root: the root joint's velocity rows.
        out: (nv,) the acceleration.
    """
    n, nv = rows.shape
    b = np.empty(n)
    for r in range(n):
        b[r] = costs[r] * (targets[r] - drifts[r])
    g = np.dot(rows.T, b)  # BLAS gemv, as numpy's A.T.dot(b)
    for i in range(nv):
        H[i, i] += damping
    for i in range(root, nv):
        H[i, i] += joint_cost * joint_cost
    try:
        solution = np.linalg.solve(H, g)
    except Exception:  # noqa: BLE001 - numba raises LinAlgError for a singular matrix
        out[:] = np.nan
        return 1
    out[:] = solution
    return 0


@kernel
def base_wrench(
    tau: np.ndarray, q: np.ndarray, root_placement: np.ndarray, com: np.ndarray, out: np.ndarray
) -> bool:
    """The net contact wrench about the CoM, world axes, from rnea's base rows, into ``out``.

    The free flyer's placement is ``root_placement`` (4 x 4, the joint's placement in its
    parent) times (R(quaternion q[3:7]), q[:3]) (``pin.XYZQUATToSE3``: Eigen's formula, the
    quaternion as given); force R tau[:3], moment R tau[3:6] + (p_base - com) x force.

    Returns:
        Whether tau (the base rows and the joints) is finite.
    """
    x, y, z, w = q[3], q[4], q[5], q[6]
    tx, ty, tz = 2.0 * x, 2.0 * y, 2.0 * z
    twx, twy, twz = tx * w, ty * w, tz * w
    txx, txy, txz = tx * x, ty * x, tz * x
    tyy, tyz, tzz = ty * y, tz * y, tz * z
    rq = np.empty((3, 3))
    rq[0, 0], rq[0, 1], rq[0, 2] = 1.0 - (tyy + tzz), txy - twz, txz + twy
    rq[1, 0], rq[1, 1], rq[1, 2] = txy + twz, 1.0 - (txx + tzz), tyz - twx
    rq[2, 0], rq[2, 1], rq[2, 2] = txz - twy, tyz + twx, 1.0 - (txx + tyy)
    rotation = np.empty((3, 3))
    position = np.empty(3)
    for i in range(3):
        for j in range(3):
            rotation[i, j] = (
                root_placement[i, 0] * rq[0, j]
                + root_placement[i, 1] * rq[1, j]
                + root_placement[i, 2] * rq[2, j]
            )
        position[i] = (
            root_placement[i, 0] * q[0]
            + root_placement[i, 1] * q[1]
            + root_placement[i, 2] * q[2]
            + root_placement[i, 3]
        )
    for i in range(3):
        out[i] = rotation[i, 0] * tau[0] + rotation[i, 1] * tau[1] + rotation[i, 2] * tau[2]
    r0, r1, r2 = position[0] - com[0], position[1] - com[1], position[2] - com[2]
    f0, f1, f2 = out[0], out[1], out[2]
    out[3] = (
        rotation[0, 0] * tau[3]
        + rotation[0, 1] * tau[4]
        + rotation[0, 2] * tau[5]
        + (r1 * f2 - r2 * f1)
    )
    out[4] = (
        rotation[1, 0] * tau[3]
        + rotation[1, 1] * tau[4]
        + rotation[1, 2] * tau[5]
        + (r2 * f0 - r0 * f2)
    )
    out[5] = (
        rotation[2, 0] * tau[3]
        + rotation[2, 1] * tau[4]
        + rotation[2, 2] * tau[5]
        + (r0 * f1 - r1 * f0)
    )
    total = 0.0
    for i in range(tau.size):
        total += tau[i]
    return np.isfinite(total)


@kernel
def subtract_contact_torques(joints: np.ndarray, jacobian: np.ndarray, wrench: np.ndarray) -> None:
    """Subtract J[:, root:]^T wrench from ``joints`` (J 6 x nv; joints: the last velocities)."""
    nv = jacobian.shape[1]
    root = nv - joints.size
    for j in range(joints.size):
        value = 0.0
        for i in range(6):
            value += jacobian[i, root + j] * wrench[i]
        joints[j] -= value


@kernel
def equality_wrench_distribution(
    h_inverse: np.ndarray,
    origins: np.ndarray,
    com: np.ndarray,
    wrench: np.ndarray,
    cones: np.ndarray,
    out: np.ndarray,
) -> bool:
    """The sole wrenches minimizing 1/2 x^T H x subject to A x = wrench, into ``out`` (n,).

    A (6 x n) sums the sole wrenches (at the sole origins, world axes) about the CoM:
    [I 0; [o_k - c]x I] per sole (:func:`wbm_control.wrench_distribution.
    build_wrench_distribution`'s). Closed form x = H^-1 A^T (A H^-1 A^T)^-1 wrench (the KKT
    system with no inequality active; LAPACK's LU for the 6 x 6 solve).

    Args:
        h_inverse: (n, n) H^-1 (block diagonal, one 6 x 6 block per sole).
        origins: (soles, 3) the sole origins [m], world.
        com: (3,) the CoM [m], world.
        wrench: (6,) the net wrench about the CoM [N, N m], world axes.
        cones: (16 soles, n) the cones' rows C (in the cones: C x <= 0).
        out: (n,) the stacked wrenches.

    Returns:
        Whether every cone row holds, C x <= 0 (then x is the QP's minimizer: no inequality is
        active at the equality-constrained minimizer of a convex QP); False also when x is not
        finite or A H^-1 A^T is singular.
    """
    n = h_inverse.shape[0]
    A = np.zeros((6, n))
    for k in range(origins.shape[0]):
        column = 6 * k
        for i in range(6):
            A[i, column + i] = 1.0
        x = origins[k, 0] - com[0]
        y = origins[k, 1] - com[1]
        z = origins[k, 2] - com[2]
        A[3, column + 1], A[3, column + 2] = -z, y
        A[4, column], A[4, column + 2] = z, -x
        A[5, column], A[5, column + 1] = -y, x
    ha = np.dot(h_inverse, A.T)
    schur = np.dot(A, ha)
    try:
        multiplier = np.linalg.solve(schur, wrench)
    except Exception:  # noqa: BLE001 - numba raises LinAlgError for a singular matrix
        out[:] = np.nan
        return False
    for j in range(n):
        value = 0.0
        for i in range(6):
            value += ha[j, i] * multiplier[i]
        out[j] = value
    for r in range(cones.shape[0]):
        value = 0.0
        for j in range(n):
            value += cones[r, j] * out[j]
        if not value <= 0.0:  # NaN included
            return False
    return True


@kernel
def friction_compensated_effort(
    effort: np.ndarray,
    velocities: np.ndarray,
    viscous: np.ndarray,
    coulomb: np.ndarray,
    limits: np.ndarray,
    compensate: bool,
    out: np.ndarray,
) -> None:
    """min(max(effort - friction, -limits), limits) into ``out`` (ndof,) [N m].

    friction = -(viscous dq + coulomb sign(dq)) (``WholeBodyModel.friction_torques``' formula,
    the same operations), subtracted when ``compensate``; a NaN stays NaN (as np.minimum and
    np.maximum propagate it).
    """
    for i in range(effort.size):
        value = effort[i]
        if compensate:
            dq = velocities[i]
            friction = -(viscous[i] * dq + coulomb[i] * np.sign(dq))
            value = value - friction
        if value == value:
            if value < -limits[i]:
                value = -limits[i]
            if value > limits[i]:
                value = limits[i]
        out[i] = value


def warm_up() -> None:
    """Compile (or load from the cache) every kernel for the arrays the IK mode passes."""
    nv, rows = 8, 9
    planned_acceleration_solve(
        np.ones((rows, nv)), np.zeros((nv, nv)), np.ones(rows), np.zeros(rows), np.zeros(rows),
        1e-9, 1e-3, 6, np.empty(nv),
    )  # fmt: skip
    q = np.zeros(nv + 1)
    q[6] = 1.0
    base_wrench(np.zeros(nv), q, np.eye(4), np.zeros(3), np.empty(6))
    jacobian = np.zeros((6, nv))
    subtract_contact_torques(np.zeros(nv - 6), jacobian, np.zeros(6))
    subtract_contact_torques(np.zeros(nv - 6), np.asfortranarray(jacobian), np.zeros(6))
    friction_compensated_effort(
        np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3), np.ones(3), True, np.empty(3)
    )
    friction_compensated_effort(
        np.zeros(3), np.zeros(8)[5:], np.zeros(3), np.zeros(3), np.ones(3), True, np.empty(3)
    )
    for soles in (1, 2):
        n = 6 * soles
        equality_wrench_distribution(
            np.eye(n), np.zeros((soles, 3)), np.zeros(3), np.zeros(6), np.zeros((16 * soles, n)),
            np.empty(n),
        )  # fmt: skip
