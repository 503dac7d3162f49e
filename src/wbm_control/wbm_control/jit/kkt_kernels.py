r"""The KKT system of an equality-constrained QP solved by its structure (issue 11).

The system (:mod:`wbm_control.jit.active_set_kernels`)

    [[H, G^T], [G, 0]] [x; y] = [-g; h],    H (n x n), G (m x n)

with H symmetric positive definite is solved by a Cholesky factorization of H and one of the
Schur complement S = G H^-1 G^T (the range-space method):

    H = U^T U,  X = U^-T [G^T, -g]  (n x (m + 1)),
    S = X_G^T X_G,  S y = X_G^T X_g - h,  x = U^-1 (X_g - X_G y)

(X_G: X's first m columns, X_g its last). About n^3 / 6 + n^2 m / 2 + n m^2 / 2 + m^3 / 6
multiply-adds instead of the (n + m)^3 / 3 of an LU of the whole KKT matrix, and less than that
on the whole-body QP: its Hessian is block diagonal (a dense acceleration block, a diagonal
wrench block) and its cone rows are zero on the accelerations; the loops skip the exact zeros of
the factors (a product by an exact zero adds nothing to a finite sum).

Arithmetic: loops in a fixed order (row operations over contiguous rows, which LLVM may
vectorize without changing any element's operations), no BLAS: the same inputs give the same
bits wherever the arrays are in memory (:mod:`wbm_control.qp`'s determinism). Its results agree
with the LU's to rounding (tests/control/test_kkt_kernels.py). :func:`solve_structured` reports
failure (False) instead of a solution when H or S is not numerically positive definite: a pivot
not above :data:`PIVOT_RATIO` of its diagonal entry before elimination (a singular or nearly
singular system, an indefinite or non-symmetric H, a non-finite entry); the caller then solves
the whole KKT matrix by LU as before.
"""

from __future__ import annotations

import numpy as np

from wbm_control.jit import kernel

#: A Cholesky pivot at or below this fraction of its diagonal entry before elimination means
#: that more than 8 of the 16 digits cancelled (a nearly rank-deficient G, such as the
#: redundant active rows proxsuite may leave: ratios 1e-16 to 1e-26 measured on the regression
#: sequence, against 1e-5 and up on its well-posed systems): the structured solve gives up and
#: the LU solves the whole system.
PIVOT_RATIO = 1e-8


@kernel
def cholesky_upper(a: np.ndarray, size: int) -> bool:
    """Factor a[:size, :size] = U^T U in place (upper triangle of rows; lower one not read).

    Right-looking, one row at a time: row j of U, then the trailing rows minus its outer
    product (contiguous row updates, skipped where U's entry is exactly zero).

    Returns:
        False when a pivot is not above :data:`PIVOT_RATIO` times its diagonal entry before
        elimination (or is NaN): ``a`` is then partly overwritten.
    """
    end = np.uint64(size)
    for j in range(size):
        pivot = a[j, j]
        if not pivot > 0.0:
            return False
        d = np.sqrt(pivot)
        row = a[j]
        row[j] = d
        for c in range(np.uint64(j + 1), end):
            row[c] /= d
        for i in range(j + 1, size):
            f = row[i]
            if f != 0.0:
                _subtract_multiple(a[i], row, f, np.uint64(i), end)
    return True


@kernel
def _subtract_multiple(target: np.ndarray, row: np.ndarray, f: float, start, end) -> None:
    """target[start:end] -= f row[start:end] (unsigned indices: a loop LLVM vectorizes)."""
    for c in range(start, end):
        target[c] -= f * row[c]


@kernel
def _pivots_kept(a: np.ndarray, diagonal: np.ndarray) -> bool:
    """Whether every pivot U_jj^2 of a factor is above :data:`PIVOT_RATIO` of its A_jj."""
    for j in range(diagonal.size):
        if not a[j, j] * a[j, j] > PIVOT_RATIO * diagonal[j]:
            return False
    return True


@kernel
def solve_structured(
    H: np.ndarray,
    g: np.ndarray,
    A: np.ndarray,
    b: np.ndarray,
    C: np.ndarray,
    lower_bounds: np.ndarray,
    upper_bounds: np.ndarray,
    upper: np.ndarray,
    lower: np.ndarray,
    solution: np.ndarray,
) -> bool:
    """Solve the KKT system on an active set by H's and the Schur complement's Cholesky.

    G = [A; C[upper]; C[lower]], h = [b; u[upper]; l[lower]] (module
    :mod:`wbm_control.jit.active_set_kernels`).

    Args:
        H: Hessian (n x n), symmetric positive definite (else False).
        g: Linear cost (n,).
        A: Equalities (n_eq x n).
        b: Their right-hand side (n_eq,).
        C: Inequalities (n_in x n).
        lower_bounds: l (n_in,).
        upper_bounds: u (n_in,).
        upper: The rows of C at their upper bound (int64).
        lower: The rows of C at their lower bound (int64).
        solution: (n + m,) written with [x; y] when solved (y in G's row order).

    Returns:
        Whether solved (False: H not symmetric, H or S not numerically positive definite;
        ``solution`` then holds nothing of use).
    """
    n, n_eq = H.shape[0], A.shape[0]
    n_up = upper.size
    m = n_eq + n_up + lower.size
    U = np.empty((n, n))
    diagonal = np.empty(n)
    for i in range(n):
        diagonal[i] = H[i, i]
        for j in range(i, n):
            value = H[i, j]
            if value != H[j, i]:
                return False
            U[i, j] = value
    if not (cholesky_upper(U, n) and _pivots_kept(U, diagonal)):
        return False
    # X = [G^T, -g] (n x (m + 1)), then U^-T X by forward substitution (row operations).
    X = np.empty((n, m + 1))
    for i in range(n):
        for r in range(n_eq):
            X[i, r] = A[r, i]
        for r in range(n_up):
            X[i, n_eq + r] = C[upper[r], i]
        for r in range(lower.size):
            X[i, n_eq + n_up + r] = C[lower[r], i]
        X[i, m] = -g[i]
    zero, width = np.uint64(0), np.uint64(m + 1)
    for p in range(n):
        d = U[p, p]
        row = X[p]
        for c in range(zero, width):
            row[c] /= d
        for i in range(p + 1, n):
            f = U[p, i]
            if f != 0.0:
                _subtract_multiple(X[i], row, f, zero, width)
    # S = X_G^T X_G (upper triangle) and its last column X_G^T X_g - h.
    S = np.zeros((m, m + 1))
    for i in range(n):
        row = X[i]
        for a in range(m):
            f = row[a]
            if f != 0.0:
                _subtract_multiple(S[a], row, -f, np.uint64(a), width)
    for r in range(n_eq):
        S[r, m] -= b[r]
    for r in range(n_up):
        S[n_eq + r, m] -= upper_bounds[upper[r]]
    for r in range(lower.size):
        S[n_eq + n_up + r, m] -= lower_bounds[lower[r]]
    schur_diagonal = np.empty(m)
    for a in range(m):
        schur_diagonal[a] = S[a, a]
    if not (cholesky_upper(S, m) and _pivots_kept(S, schur_diagonal)):
        return False
    # y: U_S^T z = t, then U_S y = z.
    y = solution[n:]
    for a in range(m):
        y[a] = S[a, m]
    for p in range(m):
        y[p] /= S[p, p]
        f = y[p]
        for i in range(p + 1, m):
            y[i] -= S[p, i] * f
    _back_substitute(S, y)
    # x = U^-1 (X_g - X_G y).
    x = solution[:n]
    for i in range(n):
        s = X[i, m]
        for r in range(m):
            s -= X[i, r] * y[r]
        x[i] = s
    _back_substitute(U, x)
    return True


@kernel
def _back_substitute(U: np.ndarray, v: np.ndarray) -> None:
    """Replace v by U^-1 v, U upper triangular (its leading v.size x v.size block used)."""
    size = v.size
    for i in range(size - 1, -1, -1):
        s = v[i]
        for c in range(i + 1, size):
            s -= U[i, c] * v[c]
        v[i] = s / U[i, i]


_warmed_up = False


def warm_up() -> None:
    """Compile (or load from the cache) the kernels for the solver's argument types.

    Those of :func:`wbm_control.jit.active_set_kernels.solve_kkt`: contiguous float64 arrays,
    int64 rows. Once per process (the next calls return at once).
    """
    global _warmed_up
    if _warmed_up:
        return
    H, g = np.eye(2), np.zeros(2)
    A, b = np.ones((1, 2)), np.ones(1)
    C, bounds = np.eye(2), np.ones(2)
    rows, none = np.array([1], dtype=np.int64), np.zeros(0, dtype=np.int64)
    solve_structured(H, g, A, b, C, bounds, bounds, rows, none, np.empty(4))
    _warmed_up = True
