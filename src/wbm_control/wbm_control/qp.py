"""A thin wrapper of proxsuite's dense QP that keeps its workspace between control steps.

The problem is

    minimize    1/2 x^T H x + g^T x
    subject to  A x = b,  l <= C x <= u

(proxsuite's form; -inf bounds are passed as -1e20).

Reproducibility: proxsuite 0.8's dense solver returns solutions that differ in the last digits
(measured 4.3e-12 on the whole-body QP) with the heap alignment of its workspace, i.e. with what
the process allocated before; a closed loop amplifies that into different runs of the same code.
``DenseQPSolver(polish=True)`` removes it: the solution is replaced by the exact solution of the
equality-constrained QP on proxsuite's active set (a symmetric KKT system solved by Cholesky
factors of H and of its Schur complement, or by LAPACK's LU where those are not numerically
positive definite: a result that depends on the problem's values only), kept only if it
satisfies the constraints.

Active set first: a control loop's QP changes little from one step to the next, and so does its
active set. ``DenseQPSolver(polish=True, active_set_first=True)`` first solves the KKT system on
the last polished active set (:func:`solve_on_active_set`, the polish's KKT solve) and keeps
that solution, without calling proxsuite, when it satisfies the QP's optimality conditions
(:func:`is_optimal_on_active_set`: every constraint within 1e-9 (scaled), every active row's
multiplier clearly of its sign). The QP is strictly convex (positive definite Hessian), so a
point that satisfies them is its unique solution: the polish of proxsuite's solution on the same
active set, the same KKT system solved by the same kernel, gives it to the bit. Otherwise (the
active set changed) proxsuite solves the QP and its solution is polished, as without it.

Compiled: the polish, the KKT solve on the last active set with its optimality test, and the
solution's finiteness test are each one numba kernel (:mod:`wbm_control.jit.active_set_kernels`:
the KKT solve (:mod:`wbm_control.jit.kkt_kernels`, LAPACK's dgesv as its fallback), the checks;
deterministic, as the numpy code they replaced, which tests/control/test_jit_qp_kernels.py keeps
as their reference). A solver
compiles them or loads them from numba's cache when it is created, not in a control cycle.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import proxsuite

from wbm_control.exceptions import NoSolutionFound
from wbm_control.jit import active_set_kernels as kernels

INFINITY = 1e20
"""What stands for an infinite bound in proxsuite [-]."""

SOLVED = proxsuite.proxqp.QPSolverOutput.PROXQP_SOLVED
WARM_START = proxsuite.proxqp.InitialGuess.WARM_START_WITH_PREVIOUS_RESULT

OPTIMALITY_TOLERANCE = 1e-9
"""How far a constraint may be violated by a solution on a guessed active set [-, scaled]."""

POLISH_TOLERANCE = 1e-6
"""How far a polished solution may violate a constraint [units of the constraints, scaled]."""


@dataclass
class DenseQP:
    """A QP in proxsuite's dense form, inspectable before it is solved.

    Attributes:
        H: Hessian (n x n), symmetric positive semi-definite.
        g: Linear cost (n,).
        A: Equality matrix (n_eq x n).
        b: Equality vector (n_eq,).
        C: Inequality matrix (n_in x n).
        l: Inequality lower bounds (n_in,).
        u: Inequality upper bounds (n_in,).
    """

    H: np.ndarray
    g: np.ndarray
    A: np.ndarray
    b: np.ndarray
    C: np.ndarray
    l: np.ndarray  # noqa: E741 (proxsuite's name)
    u: np.ndarray

    def copy(self) -> DenseQP:
        """A copy with arrays of its own (to keep a QP built in a reused workspace)."""
        arrays = (self.H, self.g, self.A, self.b, self.C, self.l, self.u)
        return DenseQP(*[array.copy() for array in arrays])

    @property
    def dimensions(self) -> tuple[int, int, int]:
        """(n variables, n equalities, n inequalities)."""
        return self.H.shape[0], self.A.shape[0], self.C.shape[0]

    def residuals(self, x: np.ndarray) -> tuple[float, float]:
        """(max |A x - b|, max inequality violation) of a candidate solution."""
        eq = float(np.max(np.abs(self.A @ x - self.b))) if self.A.shape[0] else 0.0
        Cx = self.C @ x
        ineq = float(max(np.max(Cx - self.u, initial=0.0), np.max(self.l - Cx, initial=0.0)))
        return eq, ineq


class DenseQPSolver:
    """proxsuite dense solver that re-uses its workspace while the dimensions do not change.

    Args:
        eps_abs: Absolute primal/dual tolerance of proxsuite [units of the problem].
        max_iterations: Iteration limit: a control loop cannot wait for a hard problem
            (proxsuite's default is 10000).
        name: Problem name used in errors.
        polish: Replace proxsuite's solution by the exact one on its active set (see the module
            docstring: a reproducible solution); ``polished`` counts the steps it was kept,
            ``polish_time`` is the wall time [s] the last solve spent polishing.
        active_set_first: With ``polish``, try the last polished active set before proxsuite
            (see the module docstring); ``active_set_hits`` counts the solves it answered.
    """

    def __init__(
        self,
        *,
        eps_abs: float = 1e-7,
        max_iterations: int = 1000,
        name: str = "qp",
        polish: bool = False,
        active_set_first: bool = False,
    ):
        self.eps_abs = eps_abs
        self.max_iterations = max_iterations
        self.name = name
        self.polish = polish
        self.polished = 0
        self._solver = None
        self._dimensions: tuple[int, int, int] | None = None
        self._x = np.zeros(0)
        self.cold_retries = 0
        self.polish_time = 0.0
        self.active_set_first = active_set_first
        self.active_set_hits = 0
        # The last polished active set (upper rows, lower rows), while the dimensions hold.
        self._active_set: tuple[np.ndarray, np.ndarray] | None = None
        # Whether ``self._solver``'s initial guess is the warm start already (set once per
        # solver: proxsuite's settings setter costs ~1 us a step).
        self._warm_guess = False
        kernels.warm_up()  # compiled or loaded from the cache now, not in a control cycle

    def _cold_solver(self, problem: DenseQP):
        solver = proxsuite.proxqp.dense.QP(*problem.dimensions)
        solver.settings.eps_abs = self.eps_abs
        solver.settings.eps_rel = 0.0
        solver.settings.verbose = False
        solver.settings.max_iter = self.max_iterations
        solver.settings.max_iter_in = 100  # inner (semi-smooth Newton) iterations per outer one
        # The default (equality-constrained) initial guess: proxsuite 0.8 reports feasible
        # problems as infeasible when started from zero.
        solver.init(problem.H, problem.g, problem.A, problem.b, problem.C, problem.l, problem.u)
        self._warm_guess = False
        return solver

    def solve(self, problem: DenseQP) -> np.ndarray:
        """Solve the problem, warm-started from the previous solution when dimensions match.

        A warm-started solve that fails is retried cold once (proxsuite 0.8's warm start
        sometimes declares feasible problems infeasible).

        Raises:
            NoSolutionFound: The solver did not reach its tolerances (infeasible, unbounded or
                out of iterations).
        """
        self.polish_time = 0.0
        dims = problem.dimensions
        if self.polish and self.active_set_first and self._active_set is not None:
            if dims == self._dimensions:
                start = time.perf_counter()
                optimal, x = kernels.optimal_on_active_set(
                    problem.H, problem.g, problem.A, problem.b, problem.C, problem.l,
                    problem.u, *self._active_set, OPTIMALITY_TOLERANCE,
                )  # fmt: skip
                if optimal:
                    self._x = x
                    self.active_set_hits += 1
                    self.polish_time = time.perf_counter() - start
                    return x
            self._active_set = None
        warm = self._solver is not None and dims == self._dimensions
        if warm:
            self._solver.update(
                problem.H, problem.g, problem.A, problem.b, problem.C, problem.l, problem.u
            )
        else:
            self._solver, self._dimensions = self._cold_solver(problem), dims
        self._solver.solve()
        solved = self._solved()
        if warm and not solved:
            self.cold_retries += 1
            self._solver = self._cold_solver(problem)
            self._solver.solve()
            solved = self._solved()
        if not solved:
            status = str(self._solver.results.info.status)
            self._solver = None
            raise NoSolutionFound(self.name, status)
        if not self._warm_guess:
            self._solver.settings.initial_guess = WARM_START
            self._warm_guess = True
        if self.polish:
            start = time.perf_counter()
            z = np.array(self._solver.results.z)
            status, polished, upper, lower = kernels.polish(
                problem.H, problem.g, problem.A, problem.b, problem.C, problem.l, problem.u,
                self._x, z, POLISH_TOLERANCE,
            )  # fmt: skip
            if status == kernels.POLISHED:
                self._x = polished
                self.polished += 1
                self._active_set = (upper, lower)
            self.polish_time = time.perf_counter() - start
        return self._x

    def _solved(self) -> bool:
        """Whether the last solve succeeded (its solution, copied, in ``self._x``)."""
        results = self._solver.results
        self._x = np.array(results.x)
        return results.info.status == SOLVED and kernels.all_finite(self._x)


def all_finite(vector: np.ndarray) -> bool:
    """Whether every entry of a 1-D float array is finite.

    The sum of its entries as Python floats (a NaN or an infinite entry makes it NaN or
    infinite; Python's float arithmetic raises no warning) instead of numpy's isfinite and all;
    a finite array whose sum overflows goes to numpy's test.
    """
    return math.isfinite(sum(vector.tolist())) or bool(np.isfinite(vector).all())


def polish_on_active_set(
    problem: DenseQP, x: np.ndarray, z: np.ndarray, tolerance: float = POLISH_TOLERANCE
) -> np.ndarray | None:
    """The exact solution of the QP with its active inequalities as equalities, or None.

    The active set is read from the inequality multipliers ``z`` (:func:`active_set`). The KKT
    system [[H, G^T], [G, 0]] [x; y] = [-g; h] (G: the equalities and the active rows) is
    solved by H's and the Schur complement's Cholesky factors, or LAPACK's LU (``dgesv``) of the
    whole matrix where they are not numerically positive definite (the result depends on the
    problem's values only). None
    when it is singular, when its solution violates a constraint by more than ``tolerance``
    times (1 + max |h|) [units of the constraints], or when it leaves ``x`` by more than 1e-3
    relative (a degenerate or wrong active set: the caller keeps proxsuite's solution).

    One compiled call (:func:`wbm_control.jit.active_set_kernels.polish`).
    """
    status, solution, _, _ = kernels.polish(
        *_arrays(problem), _vector(x), _vector(z), float(tolerance)
    )
    return solution if status == kernels.POLISHED else None


def active_set(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The inequality rows active at the upper and at the lower bound, from multipliers ``z``.

    proxsuite's sign: > 0 at the upper bound, < 0 at the lower one; below 1e-7 of the largest
    one (plus 1e-7) counts as zero: proxsuite leaves its last digits (and +-1e-14 on inactive
    rows) to the heap, which a threshold at 0 would turn into flips.
    """
    threshold = 1e-7 * (1.0 + (float(np.abs(z).max()) if z.size else 0.0))
    return np.flatnonzero(z > threshold), np.flatnonzero(z < -threshold)


def solve_on_active_set(
    problem: DenseQP, upper: np.ndarray, lower: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The KKT solution of the QP with the rows ``upper`` and ``lower`` as equalities.

    The KKT system [[H, G^T], [G, 0]] [x; y] = [-g; h] (G: the equalities, then the rows at
    their upper bound, then those at their lower bound) solved by Cholesky factors or LAPACK's
    LU (``dgesv``; the result depends on the problem's values only;
    :func:`wbm_control.jit.active_set_kernels.solve_kkt`).

    Returns:
        (x (n,), the multipliers y (m,) in G's row order, the right-hand side [-g; h]), or None
        when the system is singular. With them H x + g + G^T y = 0: an upper row's multiplier
        is >= 0 and a lower row's <= 0 at the QP's optimum (proxsuite's sign of z).
    """
    info, result, rhs = kernels.solve_kkt(*_arrays(problem), _rows(upper), _rows(lower))
    if info != 0:
        return None
    n = problem.H.shape[0]
    return result[:n], result[n:], rhs


def is_optimal_on_active_set(
    problem: DenseQP,
    upper: np.ndarray,
    lower: np.ndarray,
    solution: np.ndarray,
    multipliers: np.ndarray,
    rhs: np.ndarray,
    tolerance: float = OPTIMALITY_TOLERANCE,
) -> bool:
    """Whether a KKT solution of :func:`solve_on_active_set` is the QP's optimum.

    Primal: every equality and inequality holds within ``tolerance`` times (1 + the largest
    right-hand side entry) (the KKT solve makes the equality and active rows exact to
    rounding). Dual: every active row's multiplier is of its sign and clearly non-zero (beyond
    the threshold of :func:`active_set`: the polish of proxsuite's solution would take the same
    rows as active). Stationarity holds by construction. For a convex QP these conditions are
    sufficient; with a positive definite Hessian its optimum is unique.
    (:func:`wbm_control.jit.active_set_kernels.is_optimal`.)
    """
    _, A, b, C, lower_bounds, upper_bounds = _arrays(problem)[1:]  # (g unused)
    x = _vector(solution)
    return bool(
        kernels.is_optimal(
            A, b, C, lower_bounds, upper_bounds, len(upper), len(lower),
            x, _vector(multipliers), _vector(rhs)[x.size :], float(tolerance),
        )
    )  # fmt: skip


def _arrays(problem: DenseQP) -> tuple[np.ndarray, ...]:
    """(H, g, A, b, C, l, u) as contiguous float64 arrays (no copy when they are)."""
    arrays = (problem.H, problem.g, problem.A, problem.b, problem.C, problem.l, problem.u)
    return tuple([np.ascontiguousarray(array, dtype=float) for array in arrays])


def _vector(values: np.ndarray) -> np.ndarray:
    """A contiguous float64 vector (no copy when it is)."""
    return np.ascontiguousarray(values, dtype=float)


def _rows(rows: np.ndarray) -> np.ndarray:
    """Row indices as a contiguous int64 vector (no copy when they are)."""
    return np.ascontiguousarray(rows, dtype=np.int64)
