"""DCM step adjustment against the LIP integrated numerically, and the step limits."""

import math

import numpy as np
import pytest
from walking_helpers import assert_step_within_limits

from wbm_control.walking import Footstep
from wbm_control.walking.step_adjustment import StepAdjustment
from wbm_control.walking.step_limits import StepLimits
from wbm_description.exceptions import InputError


@pytest.fixture()
def adjustment(settings, feet):
    return StepAdjustment(StepLimits.from_settings(settings), feet, settings.omega, dead_band=0.0)


def integrate_lip(com, com_velocity, zmp, omega, duration, dt=1e-5):
    """c'' = omega^2 (c - z) with the ZMP held, by semi-implicit Euler (independent reference)."""
    c, v = np.array(com, float), np.array(com_velocity, float)
    for _ in range(round(duration / dt)):
        v = v + dt * omega**2 * (c - zmp)
        c = c + dt * v
    return c, v


def test_the_adjusted_step_keeps_the_dcm_where_the_plan_had_it_at_touch_down(adjustment, settings):
    omega = settings.omega
    stance = Footstep("right", 0.0, -0.068, 0.0)
    planned = Footstep("left", 0.15, 0.068, 0.0)
    zmp = np.array([0.02, -0.068])  # the stance sole's centre, where the ZMP stays
    com_ref, velocity_ref = np.array([0.0, -0.05]), np.array([0.25, 0.05])
    push = np.array([0.03, 0.04])  # a push changed the CoM velocity [m/s]
    duration = 0.4  # until touch-down [s]
    error = push / omega  # the DCM error the push made
    adjusted = adjustment.adjust(planned, stance, error, duration)
    c, v = integrate_lip(com_ref, velocity_ref + push, zmp, omega, duration)
    c_ref, v_ref = integrate_lip(com_ref, velocity_ref, zmp, omega, duration)
    dcm, dcm_ref = c + v / omega, c_ref + v_ref / omega
    # Relative to its footstep, the pushed DCM is where the planned one was relative to the
    # planned step; 1e-4 m: the Euler integration's error over 0.4 s at 10 us.
    np.testing.assert_allclose(
        dcm - (adjusted.x, adjusted.y), dcm_ref - (planned.x, planned.y), atol=1e-4
    )
    assert adjusted.yaw == planned.yaw
    np.testing.assert_allclose(
        (adjusted.x - planned.x, adjusted.y - planned.y), error * math.exp(omega * duration)
    )


def test_a_large_error_is_clamped_into_the_step_limits(adjustment, settings):
    stance = Footstep("right", 0.0, -0.068, 0.0)
    planned = Footstep("left", 0.15, 0.068, 0.0)
    for error in ([0.2, 0.0], [0.0, 0.2], [0.0, -0.2], [-0.2, -0.1], [0.1, 0.1]):
        adjusted = adjustment.adjust(planned, stance, np.array(error), 0.3)
        assert_step_within_limits(adjusted, stance, settings, tolerance=1e-9)


def test_small_errors_leave_the_plan_and_bad_values_are_refused(settings, feet):
    adjustment = StepAdjustment(StepLimits.from_settings(settings), feet, settings.omega)
    stance = Footstep("right", 0.0, -0.068, 0.0)
    planned = Footstep("left", 0.15, 0.068, 0.0)
    assert adjustment.adjust(planned, stance, np.array([1e-4, 0.0]), 0.3) == planned
    with pytest.raises(InputError, match="dcm_error"):
        adjustment.adjust(planned, stance, np.array([math.nan, 0.0]), 0.3)
    with pytest.raises(InputError, match="omega"):
        StepAdjustment(StepLimits.from_settings(settings), feet, 0.0)
