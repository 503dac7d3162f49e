"""DenseQPSolver(polish=True): the exact solution on the active set, whatever the heap.

Reference: the Euclidean projection of p onto the probability simplex {x >= 0, sum x = 1} in
closed form (sort p, threshold theta; Held et al. 1974): x_i = max(p_i - theta, 0). proxsuite
alone reaches it within its tolerance (1e-9 asked) and, measured, differs in its last digits
with the heap alignment of its workspace; the polished solution is the closed form to rounding
(1e-14) and the same to the last bit however the heap was perturbed between solves.
"""

from __future__ import annotations

import numpy as np

from wbm_control.qp import DenseQP, DenseQPSolver, polish_on_active_set


def simplex_projection(p: np.ndarray) -> np.ndarray:
    u = np.sort(p)[::-1]
    cumulative = np.cumsum(u) - 1.0
    k = np.nonzero(u - cumulative / np.arange(1, len(p) + 1) > 0)[0][-1]
    return np.maximum(p - cumulative[k] / (k + 1), 0.0)


def projection_qp(p: np.ndarray) -> DenseQP:
    n = len(p)
    return DenseQP(
        H=np.eye(n),
        g=-p,
        A=np.ones((1, n)),
        b=np.ones(1),
        C=np.eye(n),
        l=np.zeros(n),
        u=np.full(n, 1e20),
    )


def test_polished_solution_is_the_closed_form_and_does_not_depend_on_the_heap():
    rng = np.random.default_rng(3)
    p = rng.normal(0.0, 0.5, 30)
    expected = simplex_projection(p)
    assert 0 < np.count_nonzero(expected) < len(p)  # some bounds active, some not
    problem = projection_qp(p)
    solutions, keep = [], []
    for k in range(8):
        keep.append(np.empty(5 + 17 * k))  # perturb the heap between the solvers' allocations
        solver = DenseQPSolver(eps_abs=1e-9, polish=True)
        solutions.append(solver.solve(problem).copy())
        assert solver.polished == 1
    for x in solutions:
        assert np.array_equal(x, solutions[0])
    np.testing.assert_allclose(solutions[0], expected, rtol=0, atol=1e-14)
    raw = DenseQPSolver(eps_abs=1e-9).solve(problem)
    np.testing.assert_allclose(raw, expected, rtol=0, atol=1e-7)


def test_a_wrong_active_set_is_not_polished():
    p = np.array([0.9, 0.3, -0.2])
    problem = projection_qp(p)
    x = simplex_projection(p)
    # Claiming the (inactive) lower bound of x_0 active makes the KKT solution leave the
    # solution by more than the guard: proxsuite's solution is kept (None).
    assert polish_on_active_set(problem, x, np.array([-1.0, 0.0, -1.0])) is None
    # The true active set (x_2 at its lower bound) gives the closed form.
    polished = polish_on_active_set(problem, x, np.array([0.0, 0.0, -0.5]))
    np.testing.assert_allclose(polished, x, rtol=0, atol=1e-15)
