"""A swing re-timed in flight: C2 at the switch, zero touch-down velocity and acceleration at the
new time (finite differences), the apex, derivatives consistent with the pose."""

import numpy as np
import pinocchio as pin
import pytest

from wbm_control.walking import SwingFootTrajectory
from wbm_control.walking.swing_retiming import RetimedSwing
from wbm_description.exceptions import InputError

START = pin.SE3(pin.rpy.rpyToMatrix(0.0, 0.0, 0.1), np.array([0.0, -0.068, 0.0]))
END = pin.SE3(pin.rpy.rpyToMatrix(0.0, 0.0, 0.2), np.array([0.14, -0.068, 0.0]))
NEW_END = pin.SE3(pin.rpy.rpyToMatrix(0.0, 0.0, 0.15), np.array([0.10, -0.03, 0.0]))
T0, T, H = 1.0, 0.5, 0.04


@pytest.fixture()
def swing():
    return SwingFootTrajectory(START, END, T0, T, H, late_depth=0.02, late_duration=0.1)


def retime(swing, now, end_time, end=NEW_END):
    return RetimedSwing.from_sample(swing, swing.sample(now), now, end, end_time)


@pytest.mark.parametrize("now", [T0 + 0.1, T0 + 0.3])  # before and after the apex
def test_the_reference_is_continuous_in_pose_velocity_and_acceleration_at_the_switch(swing, now):
    retimed = retime(swing, now, T0 + 0.4)
    before, after = swing.sample(now), retimed.sample(now)
    assert after.pose.isApprox(before.pose, 1e-12)
    np.testing.assert_allclose(after.velocity, before.velocity, atol=1e-12)
    np.testing.assert_allclose(after.acceleration, before.acceleration, atol=1e-12)


@pytest.mark.parametrize("end_time", [T0 + 0.35, T0 + 0.6])  # shortened and lengthened
def test_the_foot_lands_on_the_new_step_at_the_new_time_at_rest(swing, end_time):
    retimed = retime(swing, T0 + 0.15, end_time)
    assert retimed.end_time == pytest.approx(end_time)
    landing = retimed.sample(end_time)
    assert landing.pose.isApprox(NEW_END, 1e-9)
    np.testing.assert_allclose(landing.velocity, 0.0, atol=1e-9)
    np.testing.assert_allclose(landing.acceleration, 0.0, atol=1e-7)
    # Finite difference: zero velocity and acceleration make p(T) - p(T - e) = O(e^3), the
    # quotient O(e^2) = 1e-8 at e = 1e-4 (times the quintic's third derivative, < 100 m/s^3).
    e = 1e-4
    quotient = (landing.pose.translation - retimed.sample(end_time - e).pose.translation) / e
    np.testing.assert_allclose(quotient, 0.0, atol=1e-5)
    # The apex still ahead at the switch: the foot passes over it at the middle of the swing.
    middle = 0.5 * (T0 + end_time)
    assert retimed.sample(middle).pose.translation[2] == pytest.approx(H, abs=1e-12)
    # Then the late lowering, as the original swing.
    late = retimed.sample(end_time + 0.1).pose.translation
    np.testing.assert_allclose(late, NEW_END.translation - [0, 0, 0.02], atol=1e-12)


def test_velocity_and_acceleration_are_the_derivatives_and_a_second_retiming_chains(swing):
    once = retime(swing, T0 + 0.1, T0 + 0.4)
    twice = RetimedSwing.from_sample(once, once.sample(T0 + 0.2), T0 + 0.2, END, T0 + 0.45)
    e = 1e-5
    for trajectory, times in ((once, (T0 + 0.15, T0 + 0.3)), (twice, (T0 + 0.25, T0 + 0.4))):
        for t in times:
            s0, s1 = trajectory.sample(t - e), trajectory.sample(t + e)
            linear = (s1.pose.translation - s0.pose.translation) / (2 * e)
            angular = pin.log3(s1.pose.rotation @ s0.pose.rotation.T) / (2 * e)
            sample = trajectory.sample(t)
            # Central differences: O(e^2) = 1e-10 times the third derivatives (< 1e3 m/s^3).
            np.testing.assert_allclose(linear, sample.velocity[:3], atol=1e-6)
            np.testing.assert_allclose(angular, sample.velocity[3:], atol=1e-6)
            accel = (s1.velocity[:3] - s0.velocity[:3]) / (2 * e)
            np.testing.assert_allclose(accel, sample.acceleration[:3], atol=1e-5)
    assert twice.sample(T0 + 0.45).pose.isApprox(END, 1e-9)
    assert twice.start_time == T0 and twice.start.isApprox(START)


def test_a_new_end_not_after_now_is_refused(swing):
    with pytest.raises(InputError, match="end_time"):
        retime(swing, T0 + 0.2, T0 + 0.2)
