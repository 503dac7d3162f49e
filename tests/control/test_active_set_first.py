"""DenseQPSolver(active_set_first=True): the KKT solve on the last active set, when it is optimal.

References:

- the Euclidean projection onto the probability simplex in closed form (Held et al. 1974,
  ``test_qp_polish.simplex_projection``) on a sequence of slowly moving points whose active set
  changes now and then: every answer is the closed form to 1e-14 (the KKT solve's rounding, as
  the polish's), whether it came from the last active set or from proxsuite and its polish;
- the previous path, proxsuite and its polish (``DenseQPSolver(polish=True)``, a second solver
  with its own warm start), on the controller's whole-body QPs of the regression sequence
  (double support, one sole released, lifted, unloaded and held again) and of the benchmark's
  standing robot: where the last active set answered, its solution is the polished one to
  1e-9 (the issue's rule for a changed numeric path; measured 0.0: the same KKT matrix solved by
  the same LU), and it answers only where the polish of proxsuite's solution succeeds too;
- an independent exact solver, quadprog (a dual active-set method, through qpsolvers), on the
  same QPs where the last active set answered: 1e-8 (N, m/s^2; entries up to ~800), the two
  solvers' rounding at this conditioning (the 1e-5 wrench regularization; measured 4.7e-10).

Measured once beyond this test (not a test: a closed loop is not added to the suite), 3 s of
walking at 0.2 m/s after 0.3 s standing (``wbm_bringup.walking_rig``, mode "torque"): the last
active set answered 1969 (compliant ground) and 1962 (rigid) of 2025 solves; where proxsuite's
polish succeeded too, its solution was the same to 9.9e-12 (0.0 on the rigid ground); in 8 and 4
solves it answered where the polish of proxsuite's solution was rejected by its guards (the
previous path then kept proxsuite's own solution, 9.9e-5 and 1.5e-7 from the optimum).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import qpsolvers
from control_helpers import CONTROLLER_YAML
from controller_regression import contact_events, make_controller, readings_at
from test_qp_polish import projection_qp, simplex_projection

from wbm_control.benchmark import standing_readings
from wbm_control.controller import WholeBodyController
from wbm_control.controller_settings import ControllerSettings
from wbm_control.qp import DenseQPSolver, is_optimal_on_active_set, solve_on_active_set

TOLERANCE = 1e-9  # the rule for a changed numeric path (module docstring)
QUADPROG_TOLERANCE = 1e-8  # two exact solvers' rounding at this conditioning (module docstring)


def test_every_answer_is_the_closed_form_projection():
    rng = np.random.default_rng(5)
    p = rng.normal(0.0, 0.5, 20)
    solver = DenseQPSolver(eps_abs=1e-9, polish=True, active_set_first=True)
    supports = set()
    for _ in range(60):
        p = p + rng.normal(0.0, 0.02, p.size)  # small moves: the active set mostly stays
        expected = simplex_projection(p)
        supports.add(tuple(np.flatnonzero(expected)))
        np.testing.assert_allclose(solver.solve(projection_qp(p)), expected, rtol=0, atol=1e-14)
    # Both paths were taken: the last active set, and proxsuite where the set changed.
    assert len(supports) > 1 and 0 < solver.active_set_hits < 60, solver.active_set_hits
    assert solver.polished + solver.active_set_hits == 60


def test_a_wrong_active_set_is_not_optimal():
    p = np.array([0.9, 0.3, -0.2])
    problem = projection_qp(p)
    none = np.zeros(0, dtype=int)
    # The true active set (x_2 at its lower bound, multiplier < 0): optimal.
    solved = solve_on_active_set(problem, none, np.array([2]))
    assert is_optimal_on_active_set(problem, none, np.array([2]), *solved)
    np.testing.assert_allclose(solved[0], simplex_projection(p), rtol=0, atol=1e-15)
    # No active row: x_2 < 0 violates its bound (primal). x_1 held at 0 as well: its multiplier
    # has the wrong sign (dual).
    assert not is_optimal_on_active_set(
        problem, none, none, *solve_on_active_set(problem, none, none)
    )
    both = np.array([1, 2])
    assert not is_optimal_on_active_set(
        problem, none, both, *solve_on_active_set(problem, none, both)
    )


def _compared_solver(solver: DenseQPSolver, counts: dict[str, int]):
    """``solver.solve`` that also solves each problem by proxsuite and its polish (the path
    before) and compares where the last active set answered."""
    reference = DenseQPSolver(name="reference", polish=True)
    solve = solver.solve

    def compared(problem):
        hits, polished = solver.active_set_hits, reference.polished
        x = solve(problem).copy()
        x_before = reference.solve(problem)
        if solver.active_set_hits > hits:
            counts["hits"] += 1
            assert reference.polished > polished  # the polish succeeds where it answers
            np.testing.assert_allclose(x, x_before, rtol=0, atol=TOLERANCE)
            exact = qpsolvers.solve_qp(
                problem.H,
                problem.g,
                np.vstack([problem.C, -problem.C]),
                np.concatenate([problem.u, -problem.l]),
                problem.A,
                problem.b,
                solver="quadprog",
            )
            np.testing.assert_allclose(x, exact, rtol=0, atol=QUADPROG_TOLERANCE)
            counts["largest difference"] = max(
                counts["largest difference"], float(np.abs(x - x_before).max())
            )
        counts["solves"] += 1
        return x

    return compared


def test_answers_are_the_polished_solutions_on_the_controller_s_qps(icub):
    counts = {"hits": 0, "solves": 0, "largest difference": 0.0}
    controller = make_controller(icub, "torque")
    # The shipped settings polish (make_controller turns it off for the recorded values).
    torque = controller.settings.torque.replace(polish=True)
    controller.settings = controller.settings.replace(torque=torque)
    solver = controller.mode.solver
    solver.solve = _compared_solver(solver, counts)
    for step in range(70):
        controller.step(readings_at(icub, step))
        contact_events(controller, step)
    regression_hits = counts["hits"]
    # The benchmark's robot standing still in double support.
    settings = ControllerSettings.from_yaml(CONTROLLER_YAML).replace(mode="torque")
    standing = WholeBodyController(icub, settings)
    standing.mode.solver.solve = _compared_solver(standing.mode.solver, counts)
    readings = standing_readings(icub)
    for i in range(30):
        standing.step(replace(readings, time=(i + 1) * settings.control_period))
    print(counts, "regression hits", regression_hits)
    # Measured: 25 of the sequence's 70 solves (single support) and 29 of the 30 standing
    # ones (the first solve is proxsuite's) answered by the last active set, 0.0 apart.
    assert regression_hits >= 10 and counts["hits"] - regression_hits >= 25, counts
