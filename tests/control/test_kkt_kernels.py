"""The KKT system solved by Cholesky factors and a Schur complement is the LU's solution.

:func:`wbm_control.jit.kkt_kernels.solve_structured` (issue 11, ninth pass) replaces, where H
is symmetric positive definite and the Schur complement G H^-1 G^T numerically so, the LU of
the whole KKT matrix (LAPACK's dgesv, :func:`~wbm_control.jit.active_set_kernels.solve_kkt_lu`,
kept as the fallback and as the reference here). Compared, relative to 1 + max |LU's|:

- random QPs with a dense and a diagonal block in H (the whole-body QP's shape), equalities
  and active rows: within 1e-9 (the rounding of two eliminations on systems whose condition
  number is at most ~1e6: measured below 1e-12);
- the whole-body QPs of the controller's regression sequence, on their polish's and their
  last active set's rows, as the controller calls the kernels: within 1e-9 (measured x 3.7e-11,
  y 4.2e-10 for Schur complements of condition number ~1e6; the degenerate active sets
  proxsuite leaves, rank-deficient G, go to the LU: the same bits);
- the fallbacks (non-symmetric, indefinite, singular or non-finite systems): reported, and
  :func:`~wbm_control.jit.active_set_kernels.solve_kkt` then gives the LU's bits;
- the same inputs at other addresses (other heap alignments): the same bits.
"""

from __future__ import annotations

import numpy as np
from controller_regression import contact_events, make_controller, readings_at

from wbm_control.jit import active_set_kernels
from wbm_control.jit.kkt_kernels import cholesky_upper, solve_structured

RELATIVE = 1e-9  # see the module docstring
NONE = np.zeros(0, dtype=np.int64)


def relative_error(new: np.ndarray, old: np.ndarray) -> float:
    return float(np.abs(new - old).max()) / (1.0 + float(np.abs(old).max())) if old.size else 0.0


def structured(arguments) -> np.ndarray | None:
    H, A, upper, lower = arguments[0], arguments[2], arguments[7], arguments[8]
    solution = np.empty(H.shape[0] + A.shape[0] + upper.size + lower.size)
    return solution if solve_structured(*arguments, solution) else None


def block_qp(rng: np.random.Generator, dense: int, diagonal: int, n_eq: int, n_in: int):
    """(H, g, A, b, C, l, u): H = [[J^T J + eps, 0], [0, d]] as the whole-body QP's."""
    n = dense + diagonal
    J = rng.normal(size=(dense + 3, dense))
    H = np.zeros((n, n))
    H[:dense, :dense] = J.T @ J + 1e-3 * np.eye(dense)
    H[:dense, :dense] = 0.5 * (H[:dense, :dense] + H[:dense, :dense].T)
    H[range(dense, n), range(dense, n)] = rng.uniform(1e-5, 1.0, diagonal)
    A = rng.normal(size=(n_eq, n))
    C = rng.normal(size=(n_in, n))
    if diagonal:
        C[: n_in // 2, :dense] = 0.0  # rows on the diagonal block only (the cone rows')
    bounds = rng.normal(size=n_in)
    return H, rng.normal(size=n), A, rng.normal(size=n_eq), C, bounds - 1.0, bounds + 1.0


def test_cholesky_factor_is_numpys():
    rng = np.random.default_rng(21)
    for size in (1, 2, 7, 35, 47):
        X = rng.normal(size=(size + 2, size))
        H = X.T @ X + 0.1 * np.eye(size)
        U = H.copy()
        assert cholesky_upper(U, size)
        expected = np.linalg.cholesky(H).T
        np.testing.assert_allclose(np.triu(U), expected, rtol=0.0, atol=1e-12 * np.abs(H).max())


def test_structured_solve_is_the_lu_on_random_block_qps():
    rng = np.random.default_rng(22)
    worst, fallbacks = 0.0, 0
    for _ in range(200):
        dense, diagonal = int(rng.integers(1, 40)), int(rng.integers(0, 13))
        n = dense + diagonal
        # G of at most n / 2 random rows: well conditioned (as the controller's, whose
        # equality and active rows are far fewer than its variables).
        n_eq = int(rng.integers(0, min(n // 3, 19) + 1))
        n_in = int(rng.integers(0, 30))
        qp = block_qp(rng, dense, diagonal, n_eq, n_in)
        free = n // 2 - n_eq
        rows = rng.permutation(n_in)[: int(rng.integers(0, max(min(n_in, free), 0) + 1))]
        split = int(rng.integers(0, rows.size + 1))
        upper, lower = np.sort(rows[:split]), np.sort(rows[split:])
        arguments = (*qp, upper.astype(np.int64), lower.astype(np.int64))
        info, expected, expected_rhs = active_set_kernels.solve_kkt_lu(*arguments)
        solution = structured(arguments)
        if solution is None:  # G rank-deficient (more active rows on the diagonal block
            # than its size): the LU's
            fallbacks += 1
            continue
        assert info == 0
        worst = max(worst, relative_error(solution, expected))
        info, solved, rhs = active_set_kernels.solve_kkt(*arguments)
        assert info == 0 and np.array_equal(solved, solution)
        assert np.array_equal(rhs, expected_rhs)
    print(f"largest relative difference to the LU: {worst:.3g}, {fallbacks} fallbacks")
    # Measured: 1.3e-13, 14 fallbacks of 200.
    assert worst <= RELATIVE and fallbacks <= 30


def test_fallbacks_are_the_lu():
    rng = np.random.default_rng(23)
    H, g, A, b, C, lower_bounds, upper_bounds = block_qp(rng, 6, 2, 2, 3)
    cases = {}
    asymmetric = H.copy()
    asymmetric[0, 1] += 1.0
    cases["not symmetric"] = (asymmetric, A)
    indefinite = H.copy()
    indefinite[0, 0] = -1.0
    cases["indefinite"] = (indefinite, A)
    cases["same equality twice"] = (H, np.vstack([A[:1], A[:1]]))
    nan = H.copy()
    nan[2, 2] = np.nan
    cases["NaN in H"] = (nan, A)
    for name, (hessian, equalities) in cases.items():
        arguments = (
            hessian, g, equalities, b[: equalities.shape[0]], C, lower_bounds, upper_bounds,
            NONE, NONE,
        )  # fmt: skip
        assert structured(arguments) is None, name
        new, old = (
            active_set_kernels.solve_kkt(*arguments),
            active_set_kernels.solve_kkt_lu(*arguments),
        )
        assert new[0] == old[0], name
        for a, b_ in zip(new[1:], old[1:], strict=True):
            np.testing.assert_array_equal(a, b_, err_msg=name)


def test_the_same_inputs_elsewhere_in_memory_give_the_same_bits():
    rng = np.random.default_rng(24)
    qp = block_qp(rng, 35, 12, 18, 20)
    arguments = (*qp, np.array([1, 4], dtype=np.int64), np.array([12], dtype=np.int64))
    first = structured(arguments)
    assert first is not None
    for shift in range(1, 8):  # copies at other offsets from a 64-byte line
        moved = []
        for array in arguments:
            buffer = np.empty(array.size + 8, dtype=array.dtype)
            view = buffer[shift : shift + array.size].reshape(array.shape)
            view[...] = array
            moved.append(view)
        np.testing.assert_array_equal(structured(tuple(moved)), first)


def test_structured_solve_on_the_controller_s_qps(icub):
    """Every KKT system the polished torque controller solves on the regression sequence."""
    controller = make_controller(icub, "torque")
    torque = controller.settings.torque.replace(polish=True)
    controller.settings = controller.settings.replace(torque=torque)
    systems = []
    polish, optimal = active_set_kernels.polish, active_set_kernels.optimal_on_active_set

    def recorded_polish(H, g, A, b, C, lower, upper, x, z, tolerance):
        systems.append((H.copy(), g.copy(), A.copy(), b.copy(), C.copy(), lower.copy(),
                        upper.copy(), *active_set_kernels.active_rows(z)))  # fmt: skip
        return polish(H, g, A, b, C, lower, upper, x, z, tolerance)

    def recorded_optimal(H, g, A, b, C, lower, upper, up, low, tolerance):
        systems.append((H.copy(), g.copy(), A.copy(), b.copy(), C.copy(), lower.copy(),
                        upper.copy(), up.copy(), low.copy()))  # fmt: skip
        return optimal(H, g, A, b, C, lower, upper, up, low, tolerance)

    active_set_kernels.polish = recorded_polish
    active_set_kernels.optimal_on_active_set = recorded_optimal
    try:
        for step in range(100):
            controller.step(readings_at(icub, step))
            contact_events(controller, step)
    finally:
        active_set_kernels.polish, active_set_kernels.optimal_on_active_set = polish, optimal
    worst_x, worst_y, solved = 0.0, 0.0, 0
    for arguments in systems:
        n = arguments[0].shape[0]
        info, expected, _ = active_set_kernels.solve_kkt_lu(*arguments)
        info_new, solution, _ = active_set_kernels.solve_kkt(*arguments)
        assert info_new == info
        if structured(arguments) is None:
            np.testing.assert_array_equal(solution, expected)  # the LU's, as before
            continue
        solved += 1
        worst_x = max(worst_x, relative_error(solution[:n], expected[:n]))
        worst_y = max(worst_y, relative_error(solution[n:], expected[n:]))
    print(f"{solved} of {len(systems)} structured; x {worst_x:.3g}, y {worst_y:.3g}")
    # Measured: 48 of 110 (the others: degenerate active sets of proxsuite's, to the LU).
    assert solved >= 30 and worst_x <= RELATIVE and worst_y <= RELATIVE
