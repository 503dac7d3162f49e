"""Swing-foot trajectory: boundary values, zero end velocities and accelerations (checked by
finite differences), apex height, monotone progress, late lowering."""

import math

import numpy as np
import pinocchio as pin
import pytest

from wbm_control.walking import SwingFootTrajectory
from wbm_control.walking.swing_foot import clearance_bump
from wbm_description.exceptions import InputError

START = pin.SE3(pin.rpy.rpyToMatrix(0.0, 0.0, 0.1), np.array([0.0, 0.068, 0.0]))
END = pin.SE3(pin.rpy.rpyToMatrix(0.0, 0.0, 0.5), np.array([0.5, 0.1, 0.0]))
T0, T, H = 1.0, 0.6, 0.04


@pytest.fixture()
def swing():
    return SwingFootTrajectory(START, END, T0, T, H, late_depth=0.02, late_duration=0.1)


def position(swing, t):
    return swing.sample(t).pose.translation


def test_boundary_poses(swing):
    assert swing.sample(T0).pose.isApprox(START, 1e-12)
    assert swing.sample(T0 + T).pose.isApprox(END, 1e-12)
    assert swing.sample(T0 - 0.5).pose.isApprox(START, 1e-12)  # held before lift-off


def test_zero_velocity_and_acceleration_at_lift_off_and_touch_down(swing):
    for t in (T0, T0 + T):
        sample = swing.sample(t)
        np.testing.assert_allclose(sample.velocity, 0.0, atol=1e-12)
        np.testing.assert_allclose(sample.acceleration, 0.0, atol=1e-12)
    # Finite differences, one-sided inside the swing: p(t0 + e) - p(t0) = O(e^3) for a curve
    # with zero velocity and acceleration, so the difference quotient is O(e^2) = 1e-8 at e=1e-4.
    e = 1e-4
    lift_off = (position(swing, T0 + e) - position(swing, T0)) / e
    touch_down = (position(swing, T0 + T) - position(swing, T0 + T - e)) / e
    np.testing.assert_allclose(lift_off, 0.0, atol=1e-6)
    np.testing.assert_allclose(touch_down, 0.0, atol=1e-6)


def test_velocity_and_acceleration_are_the_derivatives_of_the_pose(swing):
    e = 1e-5
    for t in np.linspace(T0 + 0.01, T0 + T - 0.01, 13):
        before, now, after = swing.sample(t - e), swing.sample(t), swing.sample(t + e)
        linear = (after.pose.translation - before.pose.translation) / (2 * e)
        angular = pin.log3(after.pose.rotation @ before.pose.rotation.T) / (2 * e)  # world axes
        # Central differences: truncation O(e^2 p''') ~ 1e-10 m/s; 1e-7 covers rounding / e.
        np.testing.assert_allclose(now.velocity[:3], linear, atol=1e-7)
        np.testing.assert_allclose(now.velocity[3:], angular, atol=1e-7)
        # Central difference of velocities: truncation e^2 |v'''| / 6 ~ 1e-9; 1e-6 is headroom.
        acceleration = (after.velocity - before.velocity) / (2 * e)
        np.testing.assert_allclose(now.acceleration, acceleration, atol=1e-6)


def test_apex_is_the_clearance_height_at_mid_swing_on_flat_ground(swing):
    heights = [position(swing, t)[2] for t in np.linspace(T0, T0 + T, 601)]
    assert position(swing, T0 + T / 2)[2] == pytest.approx(H, abs=1e-15)
    assert max(heights) == pytest.approx(H, abs=1e-12)
    assert min(heights) >= -1e-15


def test_apex_is_above_the_higher_end_when_stepping_up():
    up = pin.SE3(END.rotation, END.translation + np.array([0.0, 0.0, 0.05]))
    swing = SwingFootTrajectory(START, up, 0.0, T, H)
    assert swing.sample(T / 2).pose.translation[2] == pytest.approx(0.05 + H, abs=1e-15)


def test_progress_towards_the_target_is_monotone_and_yaw_is_a_slerp(swing):
    distances = [
        np.linalg.norm((END.translation - position(swing, t))[:2])
        for t in np.linspace(T0, T0 + T, 301)
    ]
    assert np.all(np.diff(distances) <= 1e-15)
    # The quintic is symmetric: half the rotation at mid-swing.
    mid = swing.sample(T0 + T / 2).pose.rotation
    assert pin.rpy.matrixToRpy(mid)[2] == pytest.approx(0.3, abs=1e-12)


def test_late_touch_down_keeps_lowering_the_foot_smoothly(swing):
    after = swing.sample(T0 + T + 0.05)
    assert after.pose.translation[2] == pytest.approx(-0.01, abs=1e-12)  # quintic at half
    assert after.velocity[2] < 0.0
    assert swing.sample(T0 + T + 0.2).pose.translation[2] == pytest.approx(-0.02, abs=1e-15)
    held = SwingFootTrajectory(START, END, T0, T, H)
    assert held.sample(T0 + T + 0.05).pose.isApprox(END, 1e-12)


def test_clearance_bump_derivatives_by_finite_differences():
    e = 1e-6
    for tau in np.linspace(0.05, 0.95, 10):
        value, first, second = clearance_bump(tau)
        assert value == pytest.approx(64 * tau**3 * (1 - tau) ** 3, abs=1e-15)
        assert first == pytest.approx(
            (clearance_bump(tau + e)[0] - clearance_bump(tau - e)[0]) / (2 * e), abs=1e-7
        )
        assert second == pytest.approx(
            (clearance_bump(tau + e)[1] - clearance_bump(tau - e)[1]) / (2 * e), abs=1e-6
        )
    assert clearance_bump(0.0) == (0.0, 0.0, 0.0)
    assert clearance_bump(1.0) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize(
    "kwargs",
    [{"duration": 0.0}, {"height": -0.01}, {"end": pin.SE3(np.eye(3), np.full(3, math.nan))}],
)
def test_bad_arguments_are_rejected(kwargs):
    arguments = {"start": START, "end": END, "start_time": 0.0, "duration": T, "height": H}
    arguments.update(kwargs)
    with pytest.raises(InputError):
        SwingFootTrajectory(**arguments)


def test_horizontal_fraction_reaches_the_footstep_first_then_descends_vertically():
    """f = 0.8: x, y and yaw are the footstep's from 0.8 T on (closed form: the quintic over
    0.8 T), the height still follows the bump; derivatives by central differences (O(e^2))."""
    swing = SwingFootTrajectory(START, END, T0, T, H, horizontal_fraction=0.8)
    tau = 0.5
    expected_s = 10 * (tau / 0.8) ** 3 - 15 * (tau / 0.8) ** 4 + 6 * (tau / 0.8) ** 5
    np.testing.assert_allclose(
        position(swing, T0 + tau * T)[:2],
        START.translation[:2] + expected_s * (END.translation - START.translation)[:2],
        rtol=0,
        atol=1e-12,
    )
    for t in (T0 + 0.8 * T, T0 + 0.9 * T):
        sample = swing.sample(t)
        np.testing.assert_allclose(sample.pose.translation[:2], END.translation[:2], atol=1e-12)
        np.testing.assert_allclose(sample.pose.rotation, END.rotation, atol=1e-12)
        np.testing.assert_allclose(sample.velocity[[0, 1, 3, 4, 5]], 0.0, atol=1e-12)
    bump = clearance_bump(0.9)[0]
    assert position(swing, T0 + 0.9 * T)[2] == pytest.approx(H * bump, abs=1e-12)
    e = 1e-5
    for t in (T0 + 0.3 * T, T0 + 0.79 * T, T0 + 0.95 * T):
        fd = (position(swing, t + e) - position(swing, t - e)) / (2 * e)
        np.testing.assert_allclose(swing.sample(t).velocity[:3], fd, atol=1e-6)
    assert swing.sample(T0 + T).pose.isApprox(END, 1e-12)
    with pytest.raises(InputError, match="horizontal_fraction"):
        SwingFootTrajectory(START, END, T0, T, H, horizontal_fraction=0.0)
