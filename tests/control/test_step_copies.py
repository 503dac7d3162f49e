"""The step's cheaper copies and checks give what the code they replace gave (exactly).

- :class:`~wbm_control.robot_kinematics.RobotKinematics` mirrors Pinocchio's upper triangle of
  M into the lower one by a gather and a scatter on precomputed flat indices instead of
  ``np.copyto`` with a mask: the same matrix, bit for bit, owned by the kinematics (a later
  pass on the same ``pin.Data`` does not change it).
- :class:`~wbm_control.qp.DenseQPSolver` tests its solution's finiteness with
  :func:`~wbm_control.qp.all_finite` and sets proxsuite's warm-start initial guess once per
  solver instead of after every solve: the same solutions as a solver that sets it every time.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
from test_qp_polish import projection_qp

from wbm_control.qp import WARM_START, DenseQPSolver, all_finite
from wbm_control.robot_kinematics import RobotKinematics
from wbm_control.wrench_distribution import all_finite as distribution_all_finite


def test_mass_matrix_mirror_is_the_masked_copy(icub, random_state):
    model = icub.model
    data = model.createData()
    frame_ids = [icub.frame_id(sole.frame) for sole in icub.config.soles]
    for _ in range(5):
        q, v = random_state(icub)
        kinematics = RobotKinematics(model, data, q, v, frame_ids)
        upper = np.triu(data.M)
        expected = data.M.copy()
        np.copyto(expected, expected.T, where=np.tri(model.nv, k=-1, dtype=bool))
        assert np.array_equal(kinematics.mass_matrix, expected)
        assert np.array_equal(kinematics.mass_matrix, kinematics.mass_matrix.T)
        assert np.array_equal(np.triu(kinematics.mass_matrix), upper)
        kept = kinematics.mass_matrix.copy()
        other_q, other_v = random_state(icub)
        pin.computeAllTerms(model, data, other_q, other_v)
        assert np.array_equal(kinematics.mass_matrix, kept)  # its own array


def test_all_finite_is_shared():
    assert distribution_all_finite is all_finite
    assert all_finite(np.array([1.0, -2.0]))
    assert not all_finite(np.array([1.0, np.nan]))
    assert not all_finite(np.array([np.inf, -np.inf]))
    assert all_finite(np.array([1e308, 1e308]))  # the sum overflows: numpy's test


class _AlwaysWarmSolver(DenseQPSolver):
    """The old behaviour: the warm-start initial guess set after every successful solve."""

    def solve(self, problem):
        x = super().solve(problem)
        self._solver.settings.initial_guess = WARM_START
        return x


def test_warm_guess_set_once_gives_the_same_solutions(rng):
    solver, reference = DenseQPSolver(name="new"), _AlwaysWarmSolver(name="old")
    for step in range(50):
        p = rng.normal(size=6 if step < 30 else 7)  # a dimension change: a cold solver
        x = solver.solve(projection_qp(p))
        assert np.array_equal(x, reference.solve(projection_qp(p)))
        assert solver._solver.settings.initial_guess == WARM_START
