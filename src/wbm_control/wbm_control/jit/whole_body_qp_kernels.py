r"""Compiled kernels of the whole-body QP's assembly and of reading its solution (issue 11).

:func:`fill_whole_body_qp` writes, in one call, what
:func:`wbm_control.whole_body_qp.build_whole_body_qp` wrote with about forty numpy operations:
the cost (the tasks' weighted least squares H = J^T W J + diag(eps), g = -J^T W (a* - drift)),
the equalities (the floating-base rows of the equations of motion, the contacts held) and the
torque rows with their bounds. :func:`split_solution` is :func:`read_solution`'s arithmetic:
a, f and tau = T x + offset. Variables, frames and units are those of
:mod:`wbm_control.whole_body_qp`: x = (a, f), a (nv,) [m/s^2, rad/s^2] in Pinocchio's
layout, f (6 k,) the contact wrenches [N, N m] (world axes, at each contact frame origin).

Arithmetic: the same operations as the numpy code they replace, except for two exact
rearrangements, so the results agree to rounding (tests/control/test_jit_qp_kernels.py: 1e-12
relative):

- a task row that selects one velocity coordinate (one entry 1.0, the others 0.0: the posture
  task's rows) contributes w e_k e_k^T to H and -w r e_k to g exactly; its contribution is added
  to the diagonal instead of going through the product, which the other rows go through (BLAS
  dgemm via numba: a 60 x 47 product of iCub's tasks becomes an 18 x 47 one);
- H's upper triangle is the product's and the lower one its mirror (H exactly symmetric).

The matrix-vector products (the torques) are loops in a fixed order (four rows at a time):
their results do not depend on the arrays' memory alignment, which the closed loop's
determinism needs (:mod:`wbm_control.qp`).
"""

from __future__ import annotations

import numpy as np

from wbm_control.jit import kernel


@kernel
def fill_whole_body_qp(
    H: np.ndarray,
    g: np.ndarray,
    A: np.ndarray,
    b: np.ndarray,
    C: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    torque_offset: np.ndarray,
    jacobians: np.ndarray,
    weights: np.ndarray,
    desired: np.ndarray,
    drift: np.ndarray,
    regularization: np.ndarray,
    M: np.ndarray,
    h: np.ndarray,
    limits: np.ndarray,
    base_dofs: int,
) -> None:
    """Write the whole-body QP's cost, equalities and torque rows (in place).

    The constant blocks (the zeros of A and H, the wrenches' diagonal of H, the cone and
    normal-force rows of C and their bounds) are the caller's, written once. The tasks' rows
    and the contacts' are stacked in one array each (the tasks' m rows first, m the number of
    weights, then the contacts' 6 k).

    Args:
        H: Hessian (n x n), n = nv + 6 k; its (nv x nv) block is written.
        g: Linear cost (n,); its first nv entries are written.
        A: Equalities (base_dofs + 6 k x n): [M_b, -J_c,b^T; J_c, 0] written.
        b: (base_dofs + 6 k,): [-h_b; a*_c - drift_c] written.
        C: Inequalities (n_in x n); its last nv - base_dofs rows (the torque rows
            [M_j, -J_c,j^T]) are written.
        lower: (n_in,); the torque rows' lower bounds -tau_max - h_j written [N m].
        upper: (n_in,); the torque rows' upper bounds tau_max - h_j written [N m].
        torque_offset: (nv - base_dofs,): h_j written [N m].
        jacobians: The tasks' Jacobians J then the contacts' J_c, stacked (m + 6 k x nv).
        weights: The tasks' row weights stacked (m,) [-].
        desired: The tasks' a* then the contacts' a*_c, stacked (m + 6 k,).
        drift: The tasks' dJ/dt v then the contacts' dJ_c/dt v, stacked (m + 6 k,).
        regularization: The Hessian's regularization diagonal (n,); its first nv entries
            (eps) are added to H's acceleration block.
        M: Mass matrix (nv x nv).
        h: Bias forces (nv,) [N, N m].
        limits: tau_max (nv - base_dofs,) [N m].
        base_dofs: Rows of the floating base (6, or 0 for a fixed base).
    """
    nv = M.shape[0]
    m = weights.size
    _fill_cost(H, g, jacobians, weights, desired, drift, regularization, nv)
    _fill_dynamics(
        A, b, C, lower, upper, torque_offset, jacobians[m:], desired[m:], drift[m:], M, h,
        limits, base_dofs,
    )  # fmt: skip


@kernel
def _fill_dynamics(
    A: np.ndarray,
    b: np.ndarray,
    C: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    torque_offset: np.ndarray,
    contact_jacobians: np.ndarray,
    contact_desired: np.ndarray,
    contact_drift: np.ndarray,
    M: np.ndarray,
    h: np.ndarray,
    limits: np.ndarray,
    base_dofs: int,
) -> None:
    """Write the equalities and the torque rows (as :func:`fill_whole_body_qp`).

    Its arguments, with the contacts' J_c (6 k x nv), a*_c and drift_c (6 k,) on their own.
    """
    nv = M.shape[0]
    ndof = nv - base_dofs
    n_top = C.shape[0] - ndof
    k6 = contact_desired.shape[0]
    for i in range(base_dofs):
        for j in range(nv):
            A[i, j] = M[i, j]
        for r in range(k6):
            A[i, nv + r] = -contact_jacobians[r, i]
        b[i] = -h[i]
    for r in range(k6):
        for j in range(nv):
            A[base_dofs + r, j] = contact_jacobians[r, j]
        b[base_dofs + r] = contact_desired[r] - contact_drift[r]
    for i in range(ndof):
        row = n_top + i
        for j in range(nv):
            C[row, j] = M[base_dofs + i, j]
        for r in range(k6):
            C[row, nv + r] = -contact_jacobians[r, base_dofs + i]
        offset = h[base_dofs + i]
        torque_offset[i] = offset
        lower[row] = -limits[i] - offset
        upper[row] = limits[i] - offset


@kernel
def fill_whole_body_qp_from_rows(
    H: np.ndarray,
    g: np.ndarray,
    A: np.ndarray,
    b: np.ndarray,
    C: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    torque_offset: np.ndarray,
    source: np.ndarray,
    jacobian_rows: np.ndarray,
    drift_rows: np.ndarray,
    jacobians: np.ndarray,
    drift: np.ndarray,
    weights: np.ndarray,
    desired: np.ndarray,
    regularization: np.ndarray,
    M: np.ndarray,
    h: np.ndarray,
    limits: np.ndarray,
    base_dofs: int,
) -> None:
    """:func:`fill_whole_body_qp` with the rows' Jacobians and drifts read from ``source``.

    The torque mode's fused build (:mod:`wbm_control.torque_qp`): every task row's and
    contact row's Jacobian row and drift are entries of the step's kinematics array
    (:attr:`~wbm_control.robot_kinematics.RobotKinematics.buffer`). The tasks' rows are read
    there (a selection row is not written out: its column goes to the diagonal; the other rows
    straight into the product's factors), the contacts' rows gathered into the first 6 k rows
    of ``jacobians`` and ``drift`` (the caller's scratch, overwritten): the same operations,
    in the same order, as :func:`fill_whole_body_qp` on the stacked rows (bit for bit).

    Args:
        H: Hessian (n x n), as :func:`fill_whole_body_qp`'s.
        g: Linear cost (n,), as :func:`fill_whole_body_qp`'s.
        A: Equalities, as :func:`fill_whole_body_qp`'s.
        b: Their right-hand side, as :func:`fill_whole_body_qp`'s.
        C: Inequalities, as :func:`fill_whole_body_qp`'s.
        lower: Their lower bounds, as :func:`fill_whole_body_qp`'s [N m].
        upper: Their upper bounds, as :func:`fill_whole_body_qp`'s [N m].
        torque_offset: h_j (nv - base_dofs,) written [N m].
        source: The step's kinematics array (flat).
        jacobian_rows: Per row (m + 6 k,) int64: the offset in ``source`` of its Jacobian row
            (nv values), or -1 - c for the unit row e_c (a joint selection: the posture's).
        drift_rows: Per row (m + 6 k,) int64: the offset in ``source`` of its drift, or -1
            for a zero drift.
        jacobians: Scratch (6 k x nv, or more rows): the contacts' rows written.
        drift: Scratch (6 k, or more): the contacts' drifts written.
        weights: The tasks' row weights stacked (m,) [-].
        desired: The tasks' a* then the contacts' a*_c (m + 6 k,).
        regularization: The Hessian's regularization diagonal (n,).
        M: Mass matrix (nv x nv) (a view of ``source``).
        h: Bias forces (nv,) [N, N m] (a view of ``source``).
        limits: tau_max (nv - base_dofs,) [N m].
        base_dofs: Rows of the floating base (6, or 0 for a fixed base).
    """
    nv = M.shape[0]
    m = weights.size
    k6 = jacobian_rows.shape[0] - m
    for r in range(k6):
        start = jacobian_rows[m + r]
        if start >= 0:
            for j in range(nv):
                jacobians[r, j] = source[start + j]
        else:
            for j in range(nv):
                jacobians[r, j] = 0.0
            jacobians[r, -1 - start] = 1.0
        at = drift_rows[m + r]
        drift[r] = source[at] if at >= 0 else 0.0
    _fill_cost_from_rows(
        H, g, source, jacobian_rows, drift_rows, weights, desired, regularization, nv
    )
    _fill_dynamics(
        A, b, C, lower, upper, torque_offset, jacobians[:k6], desired[m:], drift[:k6], M, h,
        limits, base_dofs,
    )  # fmt: skip


@kernel
def _fill_cost_from_rows(
    H: np.ndarray,
    g: np.ndarray,
    source: np.ndarray,
    jacobian_rows: np.ndarray,
    drift_rows: np.ndarray,
    weights: np.ndarray,
    desired: np.ndarray,
    regularization: np.ndarray,
    nv: int,
) -> None:
    """:func:`_fill_cost` of the rows in ``source`` (:func:`fill_whole_body_qp_from_rows`).

    The same operations in the same order: a row is a selection row when its plan says so
    (-1 - c) or when its values in ``source`` are exactly a unit row (as
    :func:`_selected_column` finds on the stacked rows).
    """
    m = weights.size
    dense = np.empty(m, dtype=np.int64)
    n_dense = 0
    diagonal = np.zeros(nv)
    linear = np.zeros(nv)
    residuals = np.empty(m)
    for i in range(m):
        start = jacobian_rows[i]
        column = -1 - start if start < 0 else _selected_in(source, start, nv)
        at = drift_rows[i]
        residuals[i] = desired[i] - (source[at] if at >= 0 else 0.0)
        if column < 0:
            dense[n_dense] = i
            n_dense += 1
        else:
            w = weights[i]
            diagonal[column] += w
            linear[column] += w * residuals[i]
    if n_dense:
        Jd = np.empty((n_dense, nv))
        WJd = np.empty((n_dense, nv))
        for r in range(n_dense):
            i = dense[r]
            w = weights[i]
            start = jacobian_rows[i]
            for j in range(nv):
                value = source[start + j]
                Jd[r, j] = value
                WJd[r, j] = w * value
        product = np.dot(Jd.T, WJd)  # BLAS dgemm (nv x nv)
        for i in range(nv):
            H[i, i] = product[i, i]
            for j in range(i + 1, nv):
                H[i, j] = product[i, j]
                H[j, i] = product[i, j]
        for r in range(n_dense):
            residual = residuals[dense[r]]
            for j in range(nv):
                linear[j] += WJd[r, j] * residual
    else:
        for i in range(nv):
            for j in range(nv):
                H[i, j] = 0.0
    for i in range(nv):
        H[i, i] += diagonal[i] + regularization[i]
        g[i] = -linear[i]


@kernel
def _selected_in(source: np.ndarray, start: int, nv: int) -> int:
    """:func:`_selected_column` of the row source[start:start + nv]."""
    column = -1
    for j in range(nv):
        value = source[start + j]
        if value != 0.0:
            if value != 1.0 or column >= 0:
                return -1
            column = j
    return column


@kernel
def _fill_cost(
    H: np.ndarray,
    g: np.ndarray,
    J: np.ndarray,
    weights: np.ndarray,
    desired: np.ndarray,
    drift: np.ndarray,
    regularization: np.ndarray,
    nv: int,
) -> None:
    """H[:nv, :nv] = J^T W J + diag(eps), g[:nv] = -(W J)^T (a* - drift) (module docstring).

    J: the first m = weights.size rows of ``J`` (the tasks'; the contacts' follow).
    """
    m = weights.size
    # The selection rows' diagonal and linear terms, the other rows into a dense block.
    dense = np.empty(m, dtype=np.int64)
    n_dense = 0
    diagonal = np.zeros(nv)
    linear = np.zeros(nv)
    for i in range(m):
        column = _selected_column(J, i)
        if column < 0:
            dense[n_dense] = i
            n_dense += 1
        else:
            w = weights[i]
            diagonal[column] += w
            linear[column] += w * (desired[i] - drift[i])
    if n_dense:
        Jd = np.empty((n_dense, nv))
        WJd = np.empty((n_dense, nv))
        for r in range(n_dense):
            i = dense[r]
            w = weights[i]
            for j in range(nv):
                Jd[r, j] = J[i, j]
                WJd[r, j] = w * J[i, j]
        product = np.dot(Jd.T, WJd)  # BLAS dgemm (nv x nv)
        for i in range(nv):
            H[i, i] = product[i, i]
            for j in range(i + 1, nv):
                H[i, j] = product[i, j]
                H[j, i] = product[i, j]
        # g's dense part: -(W J)^T r, a column sum over the dense rows in row order.
        for r in range(n_dense):
            i = dense[r]
            residual = desired[i] - drift[i]
            for j in range(nv):
                linear[j] += WJd[r, j] * residual
    else:
        for i in range(nv):
            for j in range(nv):
                H[i, j] = 0.0
    for i in range(nv):
        H[i, i] += diagonal[i] + regularization[i]
        g[i] = -linear[i]


@kernel
def _selected_column(J: np.ndarray, row: int) -> int:
    """The column k when J's row is the unit row e_k (exactly), else -1."""
    column = -1
    for j in range(J.shape[1]):
        value = J[row, j]
        if value != 0.0:
            if value != 1.0 or column >= 0:
                return -1
            column = j
    return column


@kernel
def torques_of_solution(
    torque_matrix: np.ndarray, torque_offset: np.ndarray, x: np.ndarray
) -> np.ndarray:
    """The torques tau = T x + offset (ndof,) [N m].

    T (ndof x n) and offset (ndof,) of the QP (:class:`~wbm_control.whole_body_qp.WholeBodyQP`),
    x its solution (n,).
    """
    torques = np.empty(torque_matrix.shape[0])
    matrix_vector(torque_matrix, x, torques)
    for i in range(torques.shape[0]):
        torques[i] += torque_offset[i]
    return torques


@kernel
def split_solution(
    torque_matrix: np.ndarray, torque_offset: np.ndarray, x: np.ndarray, nv: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The solution x (n,) split: (a (nv,), the wrenches f (n - nv,), tau (ndof,)), copies.

    a [m/s^2, rad/s^2] and f [N, N m] are x's entries; tau = T x + offset
    (:func:`torques_of_solution`).
    """
    return x[:nv].copy(), x[nv:].copy(), torques_of_solution(torque_matrix, torque_offset, x)


@kernel
def matrix_vector(matrix: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """The product out = matrix x (rows,), each row's sum in column order (four rows at a time).

    The order is fixed (no BLAS kernel chosen by size or alignment): the same inputs give the
    same bits wherever the arrays are in memory.
    """
    rows, columns = matrix.shape
    i = 0
    while i + 4 <= rows:
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        s3 = 0.0
        for j in range(columns):
            xj = x[j]
            s0 += matrix[i, j] * xj
            s1 += matrix[i + 1, j] * xj
            s2 += matrix[i + 2, j] * xj
            s3 += matrix[i + 3, j] * xj
        out[i] = s0
        out[i + 1] = s1
        out[i + 2] = s2
        out[i + 3] = s3
        i += 4
    while i < rows:
        s = 0.0
        for j in range(columns):
            s += matrix[i, j] * x[j]
        out[i] = s
        i += 1


_warmed_up = False


def warm_up() -> None:
    """Compile (or load from the cache) the kernels for the controller's argument types.

    The types are those :func:`~wbm_control.whole_body_qp.build_whole_body_qp` and
    :func:`~wbm_control.whole_body_qp.read_solution` pass: contiguous float64 arrays, the
    weights and the regularization read-only (:mod:`wbm_control.whole_body_qp`'s cached
    arrays), the others writable. Call it while a node starts: a kernel's
    first call in a process compiles it or loads it from numba's cache. Once per process (the
    next calls return at once).
    """
    global _warmed_up
    if _warmed_up:
        return
    nv, base_dofs, k6 = 8, 6, 6
    n, ndof = nv + k6, nv - base_dofs
    H, g, A, b = np.zeros((n, n)), np.zeros(n), np.zeros((base_dofs + k6, n)), np.zeros(6 + k6)
    C, lower, upper = np.zeros((3 + ndof, n)), np.zeros(3 + ndof), np.zeros(3 + ndof)
    jacobians = np.vstack([np.eye(nv)[:2], np.ones((2 + k6, nv))])
    weights, regularization = _read_only(np.ones(4)), _read_only(np.full(n, 1e-6))
    M, h, desired, drift = np.eye(nv), np.ones(nv), np.ones(4 + k6), np.zeros(4 + k6)
    fill_whole_body_qp(
        H, g, A, b, C, lower, upper, np.zeros(ndof), jacobians, weights, desired, drift,
        regularization, M, h, np.ones(ndof), base_dofs,
    )  # fmt: skip
    split_solution(C[3:], np.zeros(ndof), np.ones(n), nv)
    # The fused build's: M and h are views of the kinematics array (C-contiguous).
    rows = 4 + k6
    source = np.ones(nv * (rows + nv + 1))
    jacobian_rows = np.arange(rows, dtype=np.int64) * nv
    jacobian_rows[0] = -1 - 6
    drift_rows = np.full(rows, -1, dtype=np.int64)
    drift_rows[1] = 3
    M_view = source[rows * nv : rows * nv + nv * nv].reshape(nv, nv)
    h_view = source[rows * nv + nv * nv :]
    fill_whole_body_qp_from_rows(
        H, g, A, b, C, lower, upper, np.zeros(ndof), source, jacobian_rows, drift_rows,
        np.empty((rows, nv)), np.empty(rows), weights, desired, regularization, M_view, h_view,
        np.ones(ndof), base_dofs,
    )  # fmt: skip
    _warmed_up = True


def _read_only(array: np.ndarray) -> np.ndarray:
    """A read-only copy."""
    copy = array.copy()
    copy.flags.writeable = False
    return copy
