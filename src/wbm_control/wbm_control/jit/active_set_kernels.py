r"""Compiled kernels of the QP solution on an active set: the polish and its checks (issue 11).

The QP (proxsuite's form, :mod:`wbm_control.qp`): minimize 1/2 x^T H x + g^T x subject to
A x = b and l <= C x <= u, H (n x n), A (n_eq x n), C (n_in x n). On an active set (the rows
``upper`` at their upper bound, then ``lower`` at their lower one) its solution is that of the
KKT system

    [[H, G^T], [G, 0]] [x; y] = [-g; h],
    G = [A; C[upper]; C[lower]],  h = [b; u[upper]; l[lower]]

solved by its structure where H is symmetric positive definite (the whole-body QP's): H's
Cholesky factor and the Schur complement's (:mod:`wbm_control.jit.kkt_kernels`, issue 11's
ninth pass: about a third of the LU's arithmetic on the controller's systems), else, and where
that complement is nearly singular (redundant active rows), by LAPACK's LU with partial
pivoting of the whole KKT matrix (``dgesv``: the same routine of scipy's LAPACK that
``scipy.linalg.lapack.dgesv`` calls, here through numba's binding of it, on the same matrix:
the same bits; :func:`solve_kkt_lu`). The two agree to rounding (1e-9 relative on the
controller's systems, tests/control/test_kkt_kernels.py). Each kernel does in one call what
:mod:`wbm_control.qp` did with numpy: the active set read from proxsuite's multipliers, the KKT
system's solve, and the checks of the solution (:func:`polish`, :func:`optimal_on_active_set`).

Arithmetic: the checks' matrix-vector products are loops in a fixed order
(:func:`~wbm_control.jit.whole_body_qp_kernels.matrix_vector`), within rounding of numpy's
BLAS products; they decide against tolerances (1e-9 and up, scaled) only. Maxima follow numpy's
(a NaN propagates) and Python's ``max`` (the first NaN argument kept) as the code they replace:
the decisions on non-finite values are the same.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.np.linalg import _LAPACK, F_INT_nptype

from wbm_control.jit import kernel
from wbm_control.jit.kkt_kernels import solve_structured
from wbm_control.jit.whole_body_qp_kernels import matrix_vector

#: numba's binding of LAPACK's dgesv (what numba's ``np.linalg.solve`` calls: scipy's
#: ``cython_lapack`` routine): (kind, n, nrhs, a, lda, ipiv, b, ldb) -> info. numba's internal
#: API (``numba.np.linalg._LAPACK``, numba 0.68): unlike a ctypes pointer, the kernels that call
#: it can be cached; its ``np.linalg.solve`` would copy the matrix, reject non-finite inputs and
#: raise on a singular one. tests/control/test_jit_qp_kernels.py compares it with scipy's dgesv.
_xgesv = _LAPACK().numba_xgesv(types.float64)
_DOUBLE = ord("d")

#: :func:`polish`'s outcomes.
POLISHED, SINGULAR, FAR, VIOLATED = 0, 1, 2, 3


@kernel
def all_finite(vector: np.ndarray) -> bool:
    """Whether every entry of a 1-D float array is finite."""
    for value in vector:
        if not np.isfinite(value):
            return False
    return True


@kernel
def active_rows(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows active at the upper and at the lower bound from multipliers z (n_in,).

    proxsuite's sign: > 0 at the upper bound, < 0 at the lower one; below 1e-7 (1 + max |z|)
    counts as zero (:func:`wbm_control.qp.active_set`).
    """
    threshold = 1e-7 * (1.0 + (_max_abs(z) if z.size else 0.0))
    return np.flatnonzero(z > threshold), np.flatnonzero(z < -threshold)


@kernel
def solve_kkt(
    H: np.ndarray,
    g: np.ndarray,
    A: np.ndarray,
    b: np.ndarray,
    C: np.ndarray,
    lower_bounds: np.ndarray,
    upper_bounds: np.ndarray,
    upper: np.ndarray,
    lower: np.ndarray,
) -> tuple[int, np.ndarray, np.ndarray]:
    """Solve the KKT system on the active set (module docstring).

    By H's and the Schur complement's Cholesky factors
    (:func:`~wbm_control.jit.kkt_kernels.solve_structured`) when H is symmetric and both are
    numerically positive definite, else by LAPACK's LU of the whole KKT matrix
    (:func:`solve_kkt_lu`).

    Returns:
        (0 solved, > 0 singular (LAPACK's info); the solution [x; y] (n + m,), y in G's row
        order; the right-hand side [-g; h] (n + m,)).
    """
    size = H.shape[0] + A.shape[0] + upper.size + lower.size
    solution = np.empty(size)
    if solve_structured(H, g, A, b, C, lower_bounds, upper_bounds, upper, lower, solution):
        return 0, solution, _right_hand_side(g, A, b, lower_bounds, upper_bounds, upper, lower)
    return solve_kkt_lu(H, g, A, b, C, lower_bounds, upper_bounds, upper, lower)


@kernel
def _right_hand_side(
    g: np.ndarray,
    A: np.ndarray,
    b: np.ndarray,
    lower_bounds: np.ndarray,
    upper_bounds: np.ndarray,
    upper: np.ndarray,
    lower: np.ndarray,
) -> np.ndarray:
    """The KKT system's right-hand side [-g; h] (n + m,) (module docstring)."""
    n, n_eq, n_up = g.size, A.shape[0], upper.size
    rhs = np.empty(n + n_eq + n_up + lower.size)
    for i in range(n):
        rhs[i] = -g[i]
    for r in range(n_eq):
        rhs[n + r] = b[r]
    for r in range(n_up):
        rhs[n + n_eq + r] = upper_bounds[upper[r]]
    for r in range(lower.size):
        rhs[n + n_eq + n_up + r] = lower_bounds[lower[r]]
    return rhs


@kernel
def solve_kkt_lu(
    H: np.ndarray,
    g: np.ndarray,
    A: np.ndarray,
    b: np.ndarray,
    C: np.ndarray,
    lower_bounds: np.ndarray,
    upper_bounds: np.ndarray,
    upper: np.ndarray,
    lower: np.ndarray,
) -> tuple[int, np.ndarray, np.ndarray]:
    """:func:`solve_kkt` by LAPACK's LU (dgesv) of the whole KKT matrix (module docstring).

    Returns:
        (LAPACK's info: 0 solved, > 0 singular; the solution [x; y] (n + m,), y in G's row
        order; the right-hand side [-g; h] (n + m,)).
    """
    n, n_eq = H.shape[0], A.shape[0]
    n_up = upper.size
    size = n + n_eq + n_up + lower.size
    # transposed[j, i] = KKT[i, j]: C order of the transpose is LAPACK's Fortran order.
    transposed = np.zeros((size, size))
    for i in range(n):
        for j in range(n):
            transposed[j, i] = H[i, j]
    for r in range(n_eq):
        _put_row(transposed, n, r, A[r])
    for r in range(n_up):
        _put_row(transposed, n, n_eq + r, C[upper[r]])
    for r in range(lower.size):
        _put_row(transposed, n, n_eq + n_up + r, C[lower[r]])
    rhs = _right_hand_side(g, A, b, lower_bounds, upper_bounds, upper, lower)
    solution = rhs.copy()
    pivots = np.empty(size, dtype=F_INT_nptype)
    a, ipiv, b_x = transposed.ctypes, pivots.ctypes, solution.ctypes
    info = _xgesv(_DOUBLE, size, 1, a, size, ipiv, b_x, size)
    _keep_alive(transposed[0, 0], pivots[0])  # (the arrays LAPACK wrote through pointers)
    return info, solution, rhs


@kernel
def _put_row(transposed: np.ndarray, n: int, r: int, row: np.ndarray) -> None:
    """Constraint row r of G into the transposed KKT matrix: its row n + r and column n + r."""
    for j in range(n):
        transposed[n + r, j] = row[j]
        transposed[j, n + r] = row[j]


@kernel
def is_optimal(
    A: np.ndarray,
    b: np.ndarray,
    C: np.ndarray,
    lower_bounds: np.ndarray,
    upper_bounds: np.ndarray,
    n_up: int,
    n_low: int,
    x: np.ndarray,
    multipliers: np.ndarray,
    rhs_h: np.ndarray,
    tolerance: float,
) -> bool:
    """Whether a KKT solution x (n,), y (m,) of :func:`solve_kkt` is the QP's optimum.

    As :func:`wbm_control.qp.is_optimal_on_active_set`: x finite; each active row's multiplier
    (y's last ``n_up`` + ``n_low`` entries) of its sign beyond 1e-7 (1 + max |z|); every
    constraint within ``tolerance`` (1 + max |h|), h (m,) the right-hand side's constraint
    part.
    """
    n_eq = A.shape[0]
    if not all_finite(x):
        return False
    if n_up or n_low:
        z = multipliers[n_eq:]
        threshold = 1e-7 * (1.0 + _max_abs(z))
        if n_up and not _min(z[:n_up]) > threshold:
            return False
        if n_low and not _max(z[n_up:]) < -threshold:
            return False
    bound = tolerance * (1.0 + (_max_abs(rhs_h) if rhs_h.size else 0.0))
    if n_eq:
        residual = np.empty(n_eq)
        matrix_vector(A, x, residual)
        for i in range(n_eq):
            residual[i] -= b[i]
        if not _max_abs(residual) <= bound:
            return False
    n_in = C.shape[0]
    if n_in:
        Cx = np.empty(n_in)
        matrix_vector(C, x, Cx)
        above, below = _bound_violations(Cx, lower_bounds, upper_bounds)
        if not (above <= bound and below <= bound):
            return False
    return True


@kernel
def optimal_on_active_set(
    H: np.ndarray,
    g: np.ndarray,
    A: np.ndarray,
    b: np.ndarray,
    C: np.ndarray,
    lower_bounds: np.ndarray,
    upper_bounds: np.ndarray,
    upper: np.ndarray,
    lower: np.ndarray,
    tolerance: float,
) -> tuple[bool, np.ndarray]:
    """(whether the KKT solution on the active set is the QP's optimum, its x (n,)).

    :func:`wbm_control.qp.solve_on_active_set` then
    :func:`wbm_control.qp.is_optimal_on_active_set` in one call (False when singular).
    """
    n = H.shape[0]
    info, solution, rhs = solve_kkt(H, g, A, b, C, lower_bounds, upper_bounds, upper, lower)
    x = solution[:n].copy()
    if info != 0:
        return False, x
    optimal = is_optimal(
        A, b, C, lower_bounds, upper_bounds, upper.size, lower.size,
        x, solution[n:], rhs[n:], tolerance,
    )  # fmt: skip
    return optimal, x


@kernel
def polish(
    H: np.ndarray,
    g: np.ndarray,
    A: np.ndarray,
    b: np.ndarray,
    C: np.ndarray,
    lower_bounds: np.ndarray,
    upper_bounds: np.ndarray,
    x: np.ndarray,
    z: np.ndarray,
    tolerance: float,
) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`wbm_control.qp.polish_on_active_set` in one call.

    Args:
        H: Hessian (n x n).
        g: Linear cost (n,).
        A: Equalities (n_eq x n).
        b: Equalities' right-hand side (n_eq,).
        C: Inequalities (n_in x n).
        lower_bounds: l (n_in,).
        upper_bounds: u (n_in,).
        x: proxsuite's solution (n,).
        z: proxsuite's inequality multipliers (n_in,).
        tolerance: Largest constraint violation kept [units of the constraints], times
            (1 + max |h|).

    Returns:
        (:data:`POLISHED`, or why not: :data:`SINGULAR` KKT matrix, solution :data:`FAR` from
        x (more than 1e-3 relative, or not finite), constraints :data:`VIOLATED`; the solution
        x (n,); the active rows at the upper and at the lower bound).
    """
    n, n_eq = H.shape[0], A.shape[0]
    upper, lower = active_rows(z)
    info, solved, rhs = solve_kkt(H, g, A, b, C, lower_bounds, upper_bounds, upper, lower)
    solution = solved[:n].copy()
    if info != 0:
        return SINGULAR, solution, upper, lower
    distance = np.empty(n)
    for i in range(n):
        distance[i] = solution[i] - x[i]
    # Not "<=": a NaN or an infinite entry fails it (the solution is not finite).
    if not _max_abs(distance) <= 1e-3 * (1.0 + _max_abs(x)):
        return FAR, solution, upper, lower
    eq = 0.0
    if n_eq:
        residual = np.empty(n_eq)
        matrix_vector(A, solution, residual)
        for i in range(n_eq):
            residual[i] -= b[i]
        eq = _max_abs(residual)
    ineq = 0.0
    n_in = C.shape[0]
    if n_in:
        Cx = np.empty(n_in)
        matrix_vector(C, solution, Cx)
        above, below = _bound_violations(Cx, lower_bounds, upper_bounds)
        ineq = _python_max(_python_max(above, below), 0.0)
    h = rhs[n:]
    scale = 1.0 + (_max_abs(h) if h.size else 0.0)
    if _python_max(eq, ineq) > tolerance * scale:
        return VIOLATED, solution, upper, lower
    return POLISHED, solution, upper, lower


@kernel
def _bound_violations(
    Cx: np.ndarray, lower_bounds: np.ndarray, upper_bounds: np.ndarray
) -> tuple[float, float]:
    """(max(Cx - u), max(l - Cx)) of non-empty vectors, numpy's max of each (NaN propagates)."""
    above = Cx[0] - upper_bounds[0]
    below = lower_bounds[0] - Cx[0]
    for i in range(1, Cx.size):
        above = _numpy_max(above, Cx[i] - upper_bounds[i])
        below = _numpy_max(below, lower_bounds[i] - Cx[i])
    return above, below


@kernel
def _max_abs(vector: np.ndarray) -> float:
    """The max |v| of a non-empty vector, NaN if an entry is (numpy's ``np.abs(v).max()``)."""
    result = abs(vector[0])
    for i in range(1, vector.size):
        result = _numpy_max(result, abs(vector[i]))
    return result


@kernel
def _max(vector: np.ndarray) -> float:
    """The max v of a non-empty vector, NaN if an entry is (numpy's ``v.max()``)."""
    result = vector[0]
    for i in range(1, vector.size):
        result = _numpy_max(result, vector[i])
    return result


@kernel
def _min(vector: np.ndarray) -> float:
    """The min v of a non-empty vector, NaN if an entry is (numpy's ``v.min()``)."""
    result = vector[0]
    for i in range(1, vector.size):
        result = -_numpy_max(-result, -vector[i])
    return result


@kernel
def _numpy_max(first: float, second: float) -> float:
    """The maximum of two floats as numpy's: NaN if either is."""
    if first != first:
        return first
    if second != second or second > first:
        return second
    return first


@kernel
def _python_max(first: float, second: float) -> float:
    """Python's ``max(first, second)``: ``second`` only if it is larger (a NaN first is kept)."""
    return second if second > first else first


@kernel
def _keep_alive(first: float, second: int) -> None:
    """Uses its arguments: the arrays they were read from stay alive until here."""


_warmed_up = False


def warm_up() -> None:
    """Compile (or load from the cache) the kernels for the solver's argument types.

    The types :class:`~wbm_control.qp.DenseQPSolver` passes: contiguous writable float64
    arrays of the problem, proxsuite's solution and multipliers (copies), the active rows
    (int64). Call it while a node starts: a kernel's first call in a process compiles it or
    loads it from numba's cache. Once per process (the next calls return at once).
    """
    global _warmed_up
    if _warmed_up:
        return
    H, g = np.eye(2), np.zeros(2)
    A, b = np.ones((1, 2)), np.ones(1)
    C, lower_bounds, upper_bounds = np.eye(2), np.zeros(2), np.ones(2)
    z = np.array([0.0, 1.0])
    polish(H, g, A, b, C, lower_bounds, upper_bounds, np.zeros(2), z, 1e-6)
    upper, lower = active_rows(z)
    optimal_on_active_set(H, g, A, b, C, lower_bounds, upper_bounds, upper, lower, 1e-9)
    all_finite(g)
    _warmed_up = True
