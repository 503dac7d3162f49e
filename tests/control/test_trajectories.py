import numpy as np
import pinocchio as pin
import pytest

from wbm_control.exceptions import InputError
from wbm_control.trajectories import (
    QuinticPointTrajectory,
    QuinticPoseTrajectory,
    quintic_time_scaling,
)


def test_quintic_boundary_values_and_midpoint():
    T = 2.0
    assert quintic_time_scaling(0.0, T) == (0.0, 0.0, 0.0)
    s, ds, dds = quintic_time_scaling(T, T)
    assert (s, ds, dds) == (1.0, 0.0, 0.0)
    s, ds, dds = quintic_time_scaling(T / 2, T)
    # Closed forms at tau = 1/2: s = 1/2, ds = 30/16 / T, dds = 0.
    assert s == pytest.approx(0.5, abs=1e-15)
    assert ds == pytest.approx(30 / 16 / T, abs=1e-15)
    assert dds == pytest.approx(0.0, abs=1e-14)


def test_quintic_derivatives_match_finite_differences():
    T, h = 2.0, 1e-6
    for t in np.linspace(0.1, 1.9, 7):
        s, ds, dds = quintic_time_scaling(t, T)
        sp, dsp, _ = quintic_time_scaling(t + h, T)
        sm, dsm, _ = quintic_time_scaling(t - h, T)
        # Central differences: O(h^2) truncation + 1e-16/h rounding ~ 1e-10.
        assert ds == pytest.approx((sp - sm) / (2 * h), abs=1e-8)
        assert dds == pytest.approx((dsp - dsm) / (2 * h), abs=1e-7)


def test_seed_004_hand_motion():
    """Seed 004: after 0.5 s still, 3 cm forward and 3 cm to the side over 2 s."""
    start = np.array([0.22, 0.12, 0.59])
    goal = start + [0.03, -0.03, 0.0]
    trajectory = QuinticPointTrajectory(start, goal, 0.5, 2.0)
    np.testing.assert_allclose(trajectory.sample(0.2)[0], start)
    np.testing.assert_allclose(trajectory.sample(1.5)[0], start + [0.015, -0.015, 0], atol=1e-15)
    np.testing.assert_allclose(trajectory.sample(3.0)[0], goal)
    np.testing.assert_allclose(trajectory.sample(3.0)[1], 0.0)


def test_pose_trajectory_follows_the_geodesic():
    start = pin.SE3(np.eye(3), np.zeros(3))
    goal = pin.SE3(pin.rpy.rpyToMatrix(0.0, 0.0, 0.8), np.array([0.1, 0.0, 0.0]))
    trajectory = QuinticPoseTrajectory(start, goal, 0.0, 1.0)
    pose, velocity, _ = trajectory.sample(0.5)
    np.testing.assert_allclose(pose.rotation, pin.rpy.rpyToMatrix(0, 0, 0.4), atol=1e-14)
    np.testing.assert_allclose(velocity[5], 0.8 * 30 / 16, atol=1e-14)
    np.testing.assert_allclose(trajectory.sample(1.0)[0].homogeneous, goal.homogeneous, atol=1e-14)


def test_duration_must_be_positive():
    with pytest.raises(InputError, match="duration"):
        quintic_time_scaling(0.1, 0.0)
