"""The step's one kinematics pass, shared, gives what each user's own pass gave (issue 11).

The controller computes :class:`~wbm_control.robot_kinematics.RobotKinematics` once per step
(both modes) and the ZMP estimate reads the soles' Jacobians and the centroidal momentum from it
(the base velocity re-solved by 3 x 3 normal equations, its change added as m R dv) instead of
its own pass (``computeJointJacobians`` + ``computeCentroidalMomentum`` at the re-solved
velocity, least squares by ``lstsq``).
Reference: the estimator's own pass, fed the same estimates, over the regression sequence's
readings (tests/control/controller_regression.py: a crouch with waving arms, the right foot
unloaded and lifted, so the still soles change). Tolerance 1e-9 (m, N, N m), the regression
test's: both paths are exact, they differ by rounding in the momentum (measured 1e-14 kg m/s)
which the 2 ms finite difference turns into about 1e-11 N (measured: ZMP 2.2e-15 m apart in
mode "torque", 1.8e-15 m in mode "ik", momentum 1.4e-14). Since the controller passes the base
estimator's solution of the same least squares (``still_base_velocity``, issue 11's second
pass) the controller's side solves no normal equations of its own: measured ZMP 1.7e-15 m
("torque") and 2.0e-15 m ("ik") apart, momentum 1.6e-14 kg m/s.
"""

from __future__ import annotations

import numpy as np
import pytest
from controller_regression import make_controller, readings_at

from wbm_control.small_linalg import cross3, solve_3x3
from wbm_control.zmp_estimation import ZmpEstimator

TOLERANCE = 1e-9  # see the module docstring


@pytest.mark.parametrize("mode", ["torque", "ik"])
def test_zmp_from_the_shared_kinematics_is_the_own_pass(icub, mode):
    controller = make_controller(icub, mode)
    reference = ZmpEstimator(icub)
    compared = still_changed = 0
    previous_still = None
    for step in range(70):
        controller.step(readings_at(icub, step))
        status = controller.status
        estimate = status.estimate
        still = [controller.contacts.sole(name).frame for name in estimate.loaded_soles]
        expected = reference.update(
            estimate.q,
            estimate.v,
            status.time,
            ground_height=controller.contacts.ground_height(),
            still_frames=still,
        )
        shared = controller.zmp_estimator
        assert expected.zmp is not None and status.zmp_estimated is not None
        np.testing.assert_allclose(status.zmp_estimated, expected.zmp, rtol=0.0, atol=TOLERANCE)
        np.testing.assert_allclose(shared._momentum, reference._momentum, rtol=0.0, atol=TOLERANCE)
        np.testing.assert_allclose(shared._rate, reference._rate, rtol=0.0, atol=TOLERANCE)
        compared += 1
        still_changed += previous_still is not None and still != previous_still
        previous_still = still
    # The sequence moves (non-zero momentum rate) and changes the still soles.
    assert compared == 70 and still_changed >= 2
    assert np.max(np.abs(reference._rate)) > 1.0


def test_small_linalg_is_numpy_s():
    rng = np.random.default_rng(11)
    for _ in range(20):
        a, b = rng.normal(size=3), rng.normal(size=3)
        # The same products and differences: bit-identical.
        np.testing.assert_array_equal(cross3(a, b), np.cross(a, b))
        matrix = rng.normal(size=(3, 3)) + 3.0 * np.eye(3)
        # Cramer's rule against LAPACK: rounding of a well-conditioned 3 x 3 system.
        np.testing.assert_allclose(
            solve_3x3(matrix, a), np.linalg.solve(matrix, a), rtol=1e-12, atol=1e-12
        )


def test_feedforward_from_the_shared_kinematics_is_its_own_pass(icub):
    """Mode "ik": the contact-consistent torques read the CoM and the soles' Jacobians from the
    step's kinematics (its forwardKinematics pass) instead of computeJointJacobians at q: the
    same Pinocchio algorithms on the same joint placements, so the same numbers (measured
    bit-identical; tolerance 1e-9 N m as the regression test's)."""
    controller = make_controller(icub, "ik")
    mode = controller.mode
    assert controller.settings.ik.gravity_feedforward
    compared = 0
    for step in range(70):
        controller.step(readings_at(icub, step))
        estimate = controller.status.estimate
        kinematics = mode.kinematics(estimate, controller.tasks)
        acceleration = np.array([0.3, -0.2, 0.0])
        shared = mode.feedforward(
            estimate, controller.contacts, acceleration, controller.settings, kinematics
        )
        own = mode.feedforward(estimate, controller.contacts, acceleration, controller.settings)
        np.testing.assert_allclose(shared, own, rtol=0.0, atol=TOLERANCE)
        compared += 1
    assert compared == 70
