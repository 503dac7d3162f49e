"""The whole-body QP's and the polish's numba kernels compute what their numpy code computed.

The numpy code the kernels replaced (wbm_control.whole_body_qp and wbm_control.qp at commit
8d68070) is kept below as the reference. Compared:

- the QP's assembly (H, g, A, b, C, l, u, the torque matrix and offset) and the torques read
  from a solution: on random well-posed QPs (random mass matrices, tasks with selection rows and
  dense rows, scalar and per-row weights, 0-2 contacts, fixed and floating base) and on every
  step of the controller regression sequence (``controller_regression.py``: one and two soles
  held), to 1e-12 relative (to 1 + the largest entry of the reference's array): the kernel
  adds the selection rows' terms to the diagonal and takes one BLAS product for the other rows,
  i.e. the same sums in another order (measured over the random QPs: H 2.2e-16, g 3.1e-16,
  the torques 6.9e-16 relative; A, b, C, l, u and the torque map bit-identical);
- the polish, the KKT solve on an active set and its optimality test: the same outcome (None or
  a solution; optimal or not) and the same solution as the LU of the whole KKT matrix (scipy's
  ``lapack.dgesv``, below) within ``KKT_RELATIVE`` (the kernels solve it by H's and the Schur
  complement's Cholesky factors since issue 11's ninth pass, :mod:`wbm_control.jit.kkt_kernels`,
  with the LU as their fallback: the same system by other eliminations, rounding apart), on
  random QPs solved by proxsuite, on the regression sequence's QPs, with wrong active sets,
  singular KKT systems and non-finite entries;
- numba's dgesv binding and scipy's ``lapack.dgesv``: the same bits;
- after the warm-up a torque-mode controller's steps compile nothing (the first step in a
  control cycle does not wait for numba).
"""

from __future__ import annotations

import math

import numpy as np
from controller_regression import contact_events, make_controller, readings_at
from scipy.linalg import lapack
from torque_qp_helpers import patch_fused_build

from wbm_control.jit import active_set_kernels, whole_body_qp_kernels
from wbm_control.qp import INFINITY, DenseQP, DenseQPSolver, active_set
from wbm_control.qp import is_optimal_on_active_set as kernel_is_optimal
from wbm_control.qp import polish_on_active_set as kernel_polish
from wbm_control.qp import solve_on_active_set as kernel_solve
from wbm_control.whole_body_qp import (
    AccelerationTask,
    ContactConstraint,
    WholeBodyQPWorkspace,
    build_whole_body_qp,
    read_solution,
)

RELATIVE = 1e-12  # see the module docstring
#: The KKT solutions [x; y] against the LU's, relative to 1 + max |LU's|: the rounding of two
#: eliminations of systems whose condition number reaches ~1e6 on the controller's QPs (its
#: Schur complement's: 1e-16 x 1e6 = 1e-10). Measured: x 3.7e-11, y 4.2e-10 on the regression
#: sequence; below 1e-12 on the random QPs.
KKT_RELATIVE = 1e-9
STEPS = 70  # the regression sequence (test_step_equivalence.py): one and two soles held


# ---------------------------------------------------------------- the numpy code (8d68070)


def fill_reference(qp, tasks, contacts, M, h, limits, base_dofs, eps):
    """_fill_cost and _fill_dynamics as they were, on a copy of the kernel's QP arrays (the
    constant blocks, written once by the workspace, are the kernel's)."""
    p = qp.problem.copy()
    H, g, A, b, C, lower, upper = p.H, p.g, p.A, p.b, p.C, p.l, p.u
    nv = qp.nv
    if tasks:
        J = np.concatenate([task.jacobian for task in tasks])
        w = np.concatenate(
            [np.broadcast_to(np.asarray(t.weight, float), (len(t.desired),)) for t in tasks]
        )
        residual = np.concatenate([task.desired for task in tasks])
        residual -= np.concatenate([task.drift for task in tasks])
        WJ = w[:, None] * J
        H[:nv, :nv] = J.T.dot(WJ)
        np.negative(WJ.T.dot(residual), out=g[:nv])
    else:
        H[:nv, :nv] = 0.0
        g[:nv] = 0.0
    n = H.shape[0]
    H.ravel()[: nv * (n + 1) : n + 1] += eps
    n_top = C.shape[0] - (nv - base_dofs)
    torque_rows = C[n_top:]
    A[:base_dofs, :nv] = M[:base_dofs]
    np.negative(h[:base_dofs], out=b[:base_dofs])
    torque_rows[:, :nv] = M[base_dofs:]
    if contacts:
        Jc = np.concatenate([c.jacobian for c in contacts])
        JcT = -Jc.T
        A[:base_dofs, nv:] = JcT[:base_dofs]
        A[base_dofs:, :nv] = Jc
        contact_rows = b[base_dofs:]
        contact_rows[:] = np.concatenate([c.desired for c in contacts])
        contact_rows -= np.concatenate([c.drift for c in contacts])
        torque_rows[:, nv:] = JcT[base_dofs:]
    offset = h[base_dofs:].copy()
    np.subtract(-limits, offset, out=lower[n_top:])
    np.subtract(limits, offset, out=upper[n_top:])
    return p, torque_rows.copy(), offset


def torques_reference(torque_matrix, torque_offset, x):
    torques = torque_matrix.dot(x)
    torques += torque_offset
    return torques


def solve_reference(problem, upper, lower):
    H, A, C = problem.H, problem.A, problem.C
    n, n_eq = H.shape[0], A.shape[0]
    m = n_eq + upper.size + lower.size
    kkt = np.zeros((n + m, n + m), order="F")
    kkt[:n, :n] = H
    kkt[n : n + n_eq, :n] = A
    rhs = np.empty(n + m)
    np.negative(problem.g, out=rhs[:n])
    rhs[n : n + n_eq] = problem.b
    if upper.size:
        kkt[n + n_eq : n + n_eq + upper.size, :n] = C[upper]
        rhs[n + n_eq : n + n_eq + upper.size] = problem.u[upper]
    if lower.size:
        kkt[n + n_eq + upper.size :, :n] = C[lower]
        rhs[n + n_eq + upper.size :] = problem.l[lower]
    kkt[:n, n:] = kkt[n:, :n].T
    _, _, result, info = lapack.dgesv(kkt, rhs, overwrite_a=1, overwrite_b=0)
    if info != 0:
        return None
    return result[:n], result[n:], rhs


def polish_reference(problem, x, z, tolerance=1e-6):
    solved = solve_reference(problem, *active_set(z))
    if solved is None:
        return None
    solution, _, rhs = solved
    n, n_eq = problem.H.shape[0], problem.A.shape[0]
    if not float(np.abs(solution - x).max()) <= 1e-3 * (1.0 + float(np.abs(x).max())):
        return None
    eq = float(np.abs(problem.A @ solution - problem.b).max()) if n_eq else 0.0
    Cx = problem.C @ solution
    ineq = 0.0
    if Cx.size:
        ineq = max(float((Cx - problem.u).max()), float((problem.l - Cx).max()), 0.0)
    h = rhs[n:]
    scale = 1.0 + (float(np.abs(h).max()) if h.size else 0.0)
    if max(eq, ineq) > tolerance * scale:
        return None
    return solution


def all_finite_reference(vector):
    return math.isfinite(sum(vector.tolist())) or bool(np.isfinite(vector).all())


def is_optimal_reference(problem, upper, lower, solution, multipliers, rhs, tolerance=1e-9):
    n_eq = problem.A.shape[0]
    n_up = upper.size
    if not all_finite_reference(solution):
        return False
    if n_up or lower.size:
        z = multipliers[n_eq:]
        threshold = 1e-7 * (1.0 + float(np.abs(z).max()))
        if n_up and not float(z[:n_up].min()) > threshold:
            return False
        if lower.size and not float(z[n_up:].max()) < -threshold:
            return False
    h = rhs[solution.size :]
    bound = tolerance * (1.0 + (float(np.abs(h).max()) if h.size else 0.0))
    if n_eq:
        residual = problem.A.dot(solution)
        residual -= problem.b
        if not float(np.abs(residual).max()) <= bound:
            return False
    Cx = problem.C.dot(solution)
    if Cx.size and not (
        float((Cx - problem.u).max()) <= bound and float((problem.l - Cx).max()) <= bound
    ):
        return False
    return True


# ---------------------------------------------------------------- helpers


def assert_relative(new, old, what):
    new, old = np.asarray(new), np.asarray(old)
    assert new.shape == old.shape, what
    if old.size:
        scale = 1.0 + float(np.abs(old).max())
        error = float(np.abs(new - old).max())
        assert error <= RELATIVE * scale, f"{what}: {error:.3g} (scale {scale:.3g})"


def assert_kkt_close(new, old, what):
    """A KKT solution (or part) within ``KKT_RELATIVE`` of the LU's (module docstring)."""
    new, old = np.asarray(new), np.asarray(old)
    assert new.shape == old.shape, what
    if old.size:
        scale = 1.0 + float(np.abs(old).max())
        error = float(np.abs(new - old).max())
        assert error <= KKT_RELATIVE * scale, f"{what}: {error:.3g} (scale {scale:.3g})"


def compare_build(qp, tasks, contacts, M, h, limits, base_dofs, eps):
    problem, torque_matrix, offset = fill_reference(
        qp, tasks, contacts, M, h, limits, base_dofs, eps
    )
    for name in ("H", "g", "A", "b", "C", "l", "u"):
        assert_relative(getattr(qp.problem, name), getattr(problem, name), name)
    assert_relative(qp.torque_matrix, torque_matrix, "torque matrix")
    assert_relative(qp.torque_offset, offset, "torque offset")
    assert np.array_equal(qp.problem.H, qp.problem.H.T)  # the mirrored triangle


def random_build_inputs(rng, base_dofs, n_contacts):
    nv = base_dofs + int(rng.integers(3, 12))
    X = rng.normal(size=(nv, nv))
    M = X @ X.T + nv * np.eye(nv)
    M = 0.5 * (M + M.T)
    h = rng.normal(size=nv) * 10.0
    tasks = []
    for t in range(int(rng.integers(0, 5))):
        m = int(rng.integers(1, 7))
        if t % 2 and nv - base_dofs >= m:  # selection rows (a posture-like task)
            J = np.zeros((m, nv))
            J[np.arange(m), base_dofs + rng.choice(nv - base_dofs, m, replace=False)] = 1.0
        else:
            J = rng.normal(size=(m, nv))
            J[:, rng.random(nv) < 0.3] = 0.0
        weight = float(rng.uniform(0.1, 10.0)) if t % 3 else rng.uniform(0.1, 10.0, m)
        tasks.append(AccelerationTask(f"t{t}", J, rng.normal(size=m), rng.normal(size=m), weight))
    contacts = []
    for i in range(n_contacts):
        cone = rng.normal(size=(int(rng.integers(4, 9)), 6))
        cone.flags.writeable = False
        contacts.append(
            ContactConstraint(
                f"c{i}", rng.normal(size=(6, nv)), rng.normal(size=6), rng.normal(size=6), cone
            )
        )
    limits = rng.uniform(10.0, 100.0, nv - base_dofs)
    return M, h, contacts, tasks, limits


# ---------------------------------------------------------------- the assembly


def test_assembly_is_the_numpy_assembly_on_random_qps():
    rng = np.random.default_rng(11)
    workspace = WholeBodyQPWorkspace()
    for trial in range(200):
        base_dofs = 6 if trial % 4 else 0
        n_contacts = int(rng.integers(0, 3)) if base_dofs else 0
        M, h, contacts, tasks, limits = random_build_inputs(rng, base_dofs, n_contacts)
        eps, wrench_weight = 10.0 ** rng.uniform(-8, -4), 10.0 ** rng.uniform(-6, -3)
        kwargs = dict(
            base_dofs=base_dofs,
            wrench_weight=wrench_weight,
            acceleration_regularization=eps,
            min_normal_force=float(rng.uniform(0.0, 5.0)),
        )
        for space in (None, workspace):
            qp = build_whole_body_qp(M, h, contacts, tasks, limits, workspace=space, **kwargs)
            compare_build(qp, tasks, contacts, M, h, limits, base_dofs, eps)
            x = rng.normal(size=qp.problem.H.shape[0])
            solution = read_solution(qp, x)
            assert_relative(
                solution.torques,
                torques_reference(qp.torque_matrix, qp.torque_offset, x),
                "torques",
            )
            assert np.array_equal(solution.acceleration, x[: qp.nv])
            for i, name in enumerate(qp.contact_names):
                assert np.array_equal(
                    solution.wrenches[name], x[qp.nv + 6 * i : qp.nv + 6 * i + 6]
                )


def polished_controller(icub):
    """The regression sequence's torque controller with the shipped polish (its record's
    settings have none: proxsuite's own solutions were recorded)."""
    controller = make_controller(icub, "torque")
    settings = controller.settings
    controller.settings = settings.replace(torque=settings.torque.replace(polish=True))
    return controller


def test_kernels_on_the_controller_sequence(icub, monkeypatch):
    """Every step's QP fill, torques and polish or active-set answer against the references."""
    controller = polished_controller(icub)
    settings = controller.settings.torque
    counts = {"qp": 0, "torques": 0, "polish": 0, "polished": 0, "active set": 0}
    contact_counts = set()

    def compared_build(qp, args, kwargs, task_errors, status):
        # The step's fused build against the reference on the task and contact objects the
        # step built before it (torque_qp_helpers.py).
        M, h, contacts, tasks, limits = args
        compare_build(qp, tasks, contacts, M, h, limits, 6, settings.acceleration_regularization)
        counts["qp"] += 1
        contact_counts.add(len(contacts))

    split = whole_body_qp_kernels.split_solution

    def compared_split(torque_matrix, torque_offset, x, nv):
        acceleration, wrenches, torques = split(torque_matrix, torque_offset, x, nv)
        assert np.array_equal(acceleration, x[:nv]) and np.array_equal(wrenches, x[nv:])
        assert_relative(torques, torques_reference(torque_matrix, torque_offset, x), "torques")
        counts["torques"] += 1
        return acceleration, wrenches, torques

    polish = active_set_kernels.polish

    def compared_polish(H, g, A, b, C, lower, upper, x, z, tolerance):
        result = polish(H, g, A, b, C, lower, upper, x, z, tolerance)
        problem = DenseQP(H, g, A, b, C, lower, upper)
        expected = polish_reference(problem, x, z, tolerance)
        assert (result[0] == active_set_kernels.POLISHED) == (expected is not None)
        if expected is not None:
            assert_kkt_close(result[1], expected, "polished x")
            counts["polished"] += 1
        counts["polish"] += 1
        return result

    optimal_on_active_set = active_set_kernels.optimal_on_active_set

    def compared_optimal(H, g, A, b, C, lower, upper, up, low, tolerance):
        optimal, x = optimal_on_active_set(H, g, A, b, C, lower, upper, up, low, tolerance)
        problem = DenseQP(H, g, A, b, C, lower, upper)
        solved = solve_reference(problem, up, low)
        assert solved is not None
        assert_kkt_close(x, solved[0], "x on the last active set")
        assert optimal == is_optimal_reference(problem, up, low, *solved, tolerance)
        counts["active set"] += 1
        return optimal, x

    patch_fused_build(monkeypatch, compared_build)
    monkeypatch.setattr("wbm_control.whole_body_qp.split_solution", compared_split)
    monkeypatch.setattr(active_set_kernels, "polish", compared_polish)
    monkeypatch.setattr(active_set_kernels, "optimal_on_active_set", compared_optimal)
    for step in range(STEPS):
        controller.step(readings_at(icub, step))
        contact_events(controller, step)
    assert counts["qp"] == STEPS and counts["torques"] == STEPS, counts
    assert counts["polished"] > 0 and counts["active set"] > 0, counts
    assert contact_counts == {1, 2}, contact_counts


# ---------------------------------------------------------------- the polish


def random_qp(rng):
    n = int(rng.integers(2, 15))
    n_eq = int(rng.integers(0, min(n, 4)))
    n_in = int(rng.integers(0, 2 * n))
    X = rng.normal(size=(n, n))
    H = X @ X.T + 0.1 * np.eye(n)
    H = 0.5 * (H + H.T)
    A = rng.normal(size=(n_eq, n))
    C = rng.normal(size=(n_in, n))
    feasible = rng.normal(size=n)  # a point inside every constraint: a feasible QP
    Cx = C @ feasible
    lower = Cx - rng.uniform(0.0, 1.0, n_in)
    upper = Cx + rng.uniform(0.0, 1.0, n_in)
    lower[rng.random(n_in) < 0.3] = -INFINITY
    upper[rng.random(n_in) < 0.3] = INFINITY
    return DenseQP(H, rng.normal(size=n) * 5.0, A, A @ feasible, C, lower, upper)


def test_polish_is_the_numpy_polish_on_random_qps():
    rng = np.random.default_rng(12)
    outcomes = {"polished": 0, "none": 0, "optimal": 0, "not optimal": 0}
    for _ in range(300):
        problem = random_qp(rng)
        solver = DenseQPSolver(eps_abs=1e-9)
        x = solver.solve(problem)
        z = np.array(solver._solver.results.z)
        for multipliers in (z, -z, z + rng.normal(scale=0.1, size=z.size)):  # right and wrong
            new, old = (
                kernel_polish(problem, x, multipliers),
                polish_reference(problem, x, multipliers),
            )
            assert (new is None) == (old is None)
            if old is not None:
                assert_kkt_close(new, old, "polished x")
            outcomes["none" if old is None else "polished"] += 1
            upper, lower = active_set(multipliers)
            new_solved, old_solved = (
                kernel_solve(problem, upper, lower),
                solve_reference(problem, upper, lower),
            )
            assert (new_solved is None) == (old_solved is None)
            if old_solved is None:
                continue
            for a, b, what in zip(new_solved, old_solved, ("x", "y", "rhs"), strict=True):
                assert_kkt_close(a, b, what)
            optimal = is_optimal_reference(problem, upper, lower, *old_solved)
            assert kernel_is_optimal(problem, upper, lower, *new_solved) == optimal
            outcomes["optimal" if optimal else "not optimal"] += 1
    assert min(outcomes.values()) > 20, outcomes


def test_singular_and_non_finite_systems():
    n = 4
    problem = DenseQP(
        np.eye(n), np.ones(n), np.ones((2, n)), np.ones(2), np.eye(n), -np.ones(n), np.ones(n)
    )  # the two equality rows are the same: a singular KKT matrix
    none = np.zeros(0, dtype=np.int64)
    assert kernel_solve(problem, none, none) is None
    assert solve_reference(problem, none, none) is None
    assert kernel_polish(problem, np.zeros(n), np.zeros(n)) is None
    problem.A = problem.A[:1].copy()
    problem.b = problem.b[:1].copy()
    x = kernel_solve(problem, none, none)[0]
    assert kernel_polish(problem, x, np.zeros(n)) is not None
    for bad in (np.nan, np.inf):
        broken = problem.copy()
        broken.g[1] = bad
        assert kernel_polish(broken, x, np.zeros(n)) is None
        assert polish_reference(broken, x, np.zeros(n)) is None
        solved = kernel_solve(broken, none, none)
        assert not kernel_is_optimal(broken, none, none, *solved)
        far = x.copy()
        far[0] = bad  # NaN: not polished; inf: the 1e-3 relative test passes (inf <= inf)
        new, old = (
            kernel_polish(problem, far, np.zeros(n)),
            polish_reference(problem, far, np.zeros(n)),
        )
        assert (new is None) == (old is None) == (bad != np.inf)
        if old is not None:
            assert_kkt_close(new, old, "polished x")
    for vector in (np.array([1.0, np.nan]), np.array([np.inf]), np.array([1e308, 1e308])):
        assert active_set_kernels.all_finite(vector) == all_finite_reference(vector)


def test_dgesv_binding_is_scipys():
    rng = np.random.default_rng(13)
    none = np.zeros(0, dtype=np.int64)
    for _ in range(50):
        n = int(rng.integers(1, 70))
        H = rng.normal(size=(n, n))  # not symmetric: checks the Fortran order of the matrix
        problem = DenseQP(
            H, rng.normal(size=n), np.zeros((0, n)), np.zeros(0), np.zeros((0, n)),
            np.zeros(0), np.zeros(0),
        )  # fmt: skip
        info, solution, rhs = active_set_kernels.solve_kkt_lu(
            problem.H, problem.g, problem.A, problem.b, problem.C, problem.l, problem.u,
            none, none,
        )  # fmt: skip
        _, _, expected, expected_info = lapack.dgesv(
            np.asfortranarray(H), -problem.g, overwrite_a=0, overwrite_b=0
        )
        assert info == expected_info == 0
        assert np.array_equal(solution, expected)


# ---------------------------------------------------------------- compiled at start


def _signature_counts() -> dict[str, int]:
    counts = {}
    for module in (whole_body_qp_kernels, active_set_kernels):
        for name in dir(module):
            dispatcher = getattr(module, name)
            if hasattr(dispatcher, "signatures") and hasattr(dispatcher, "py_func"):
                # (the kernels called by kernels are compiled into them: their own count may
                # stay 0 when the callers come from the cache)
                counts[f"{module.__name__}.{name}"] = len(dispatcher.signatures)
    return counts


def test_the_controller_steps_compile_nothing_after_the_warm_up(icub):
    whole_body_qp_kernels.warm_up()
    active_set_kernels.warm_up()
    controller = polished_controller(icub)
    before = _signature_counts()
    called = ("fill_whole_body_qp", "split_solution", "polish", "optimal_on_active_set")
    assert all(before[name] >= 1 for name in before if name.endswith(called)), before
    for step in range(STEPS):
        controller.step(readings_at(icub, step))
        contact_events(controller, step)
    assert _signature_counts() == before
