"""The base estimator (IMU + leg kinematics) against ground truth built independently."""

import numpy as np
import pinocchio as pin
import pytest
from control_helpers import readings_from_state

from wbm_control.base_estimator import BaseEstimator
from wbm_description.exceptions import InputError

STANCE_FORCE = np.array([0.0, 0.0, 140.0, 0.0, 0.0, 0.0])  # ~half of iCub's weight [N]


def state_with_sole_fixed(model, rng, sole_frame, *, base_rpy=(0.05, -0.08, 0.3)):
    """A configuration with the sole frame at the world origin and a velocity that keeps it fixed.

    The velocity is a random vector projected on the null space of the sole's 6D Jacobian (SVD),
    a different computation from the estimator's (gyro inversion + 3D least squares).
    """
    q = model.initial_configuration()
    q[7:] += rng.normal(0, 0.05, model.ndof)
    q[3:7] = pin.Quaternion(pin.rpy.rpyToMatrix(*base_rpy)).coeffs()
    placement = model.frame_placement(q, sole_frame)
    q[:3] -= placement.translation  # sole origin at the world origin
    J = model.frame_jacobian(q, sole_frame, representation="body")
    _, singular, vt = np.linalg.svd(J)
    null_space = vt[np.sum(singular > 1e-10) :].T
    v = null_space @ rng.normal(0, 0.5, null_space.shape[1])
    return q, v


def test_single_support_state_is_recovered(icub):
    rng = np.random.default_rng(1)
    q, v = state_with_sole_fixed(icub, rng, "l_sole")
    np.testing.assert_allclose(icub.frame_velocity(q, v, "l_sole"), 0, atol=1e-12)
    estimator = BaseEstimator(icub)  # anchors the left sole at the world origin at start
    readings = readings_from_state(icub, q, v, {"left_foot": STANCE_FORCE * 2})
    estimate = estimator.update(readings)
    # Exact kinematics on both sides: only rounding (1e-12 on values of order 1).
    np.testing.assert_allclose(estimate.q[:3], q[:3], atol=1e-12)
    np.testing.assert_allclose(
        pin.Quaternion(estimate.q[3:7]).toRotationMatrix(),
        pin.Quaternion(q[3:7]).toRotationMatrix(),
        atol=1e-12,
    )
    np.testing.assert_allclose(estimate.q[7:], q[7:], atol=0)
    np.testing.assert_allclose(estimate.v, v, atol=1e-10)
    assert estimate.loaded_soles == ("left_foot",)


def test_double_support_and_transfer_to_the_other_foot(icub):
    rng = np.random.default_rng(2)
    q = icub.initial_configuration()  # both soles flat on the ground, left at the origin
    estimator = BaseEstimator(icub)
    both = {"left_foot": STANCE_FORCE, "right_foot": STANCE_FORCE}
    estimate = estimator.update(readings_from_state(icub, q, np.zeros(icub.nv), both))
    np.testing.assert_allclose(estimate.q, q, atol=1e-12)
    right_anchor = estimator.anchors["right_foot"]
    np.testing.assert_allclose(
        right_anchor, icub.frame_placement(q, "r_sole").translation, atol=1e-12
    )
    # Lift the left foot: single support on the right, moving with the right sole fixed.
    q2 = q.copy()
    q2[7:] += rng.normal(0, 0.03, icub.ndof)
    q2[3:7] = pin.Quaternion(pin.rpy.rpyToMatrix(0.02, 0.03, -0.1)).coeffs()
    q2[:3] += right_anchor - icub.frame_placement(q2, "r_sole").translation
    J = icub.frame_jacobian(q2, "r_sole", representation="body")
    _, singular, vt = np.linalg.svd(J)
    v2 = vt[6:].T @ rng.normal(0, 0.5, icub.nv - 6)
    readings = readings_from_state(
        icub, q2, v2, {"left_foot": np.zeros(6), "right_foot": 2 * STANCE_FORCE}, time=0.1
    )
    estimate = estimator.update(readings)
    assert estimate.loaded_soles == ("right_foot",)
    np.testing.assert_allclose(estimate.q[:3], q2[:3], atol=1e-12)
    np.testing.assert_allclose(estimate.v, v2, atol=1e-10)


def test_estimator_needs_an_imu(icub):
    q = icub.initial_configuration()
    readings = readings_from_state(icub, q, np.zeros(icub.nv), {"left_foot": STANCE_FORCE})
    from dataclasses import replace

    with pytest.raises(InputError, match="imu"):
        BaseEstimator(icub).update(replace(readings, imu=None))
    with pytest.raises(InputError, match="joint_positions"):
        BaseEstimator(icub).update(replace(readings, joint_positions=np.full(icub.ndof, np.nan)))
