"""Footstep algebra, sole rectangles and step limits against independent references."""

import math

import numpy as np
import pinocchio as pin
import pytest
from walking_helpers import (
    SPACING,
    assert_step_within_limits,
    rectangles_intersect_by_sampling,
    relative_with_pinocchio,
)

from wbm_control.walking import Footstep, StepLimits, integrate_twist
from wbm_description.exceptions import InputError


def random_step(rng, side="left", scale=1.0):
    x, y = rng.uniform(-scale, scale, 2)
    return Footstep(side, float(x), float(y), float(rng.uniform(-math.pi, math.pi)))


def test_relative_pose_and_composition_match_pinocchio_se3(rng):
    for _ in range(50):
        a, b = random_step(rng), random_step(rng, "right")
        # Pinocchio's SE3 product is the reference; only rounding differs.
        np.testing.assert_allclose(b.relative_to(a), relative_with_pinocchio(b, a), atol=1e-12)
        composed = a.compose(*b.relative_to(a), side="right")
        np.testing.assert_allclose(composed.pose(), b.pose(), atol=1e-12)


def test_from_placement_keeps_the_yaw_and_drops_roll_pitch_height():
    placement = pin.SE3(pin.rpy.rpyToMatrix(0.0, 0.0, 2.5), np.array([0.3, -0.2, 0.05]))
    step = Footstep.from_placement("right", placement)
    assert (step.x, step.y) == pytest.approx((0.3, -0.2), abs=1e-15)
    assert step.yaw == pytest.approx(2.5, abs=1e-12)
    np.testing.assert_allclose(step.placement().rotation, placement.rotation, atol=1e-12)


def test_integrate_twist_matches_a_numerical_integration():
    """The SE(2) exponential against RK4 of x' = R(yaw) v, yaw' = w (1e-4 s steps)."""
    for vx, vy, wz in [(0.3, 0.0, 0.0), (0.2, 0.05, 0.4), (-0.1, -0.06, -0.3), (0.0, 0.0, 0.4)]:
        duration, n = 0.8, 8000
        h = duration / n

        def f(state, vx=vx, vy=vy, wz=wz):
            c, s = math.cos(state[2]), math.sin(state[2])
            return np.array([c * vx - s * vy, s * vx + c * vy, wz])

        state = np.zeros(3)
        for _ in range(n):
            k1 = f(state)
            k2 = f(state + h / 2 * k1)
            k3 = f(state + h / 2 * k2)
            k4 = f(state + h * k3)
            state = state + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        # RK4's error at this step is ~ (w h)^4 ~ 1e-16 per step: 1e-10 is rounding headroom.
        np.testing.assert_allclose(integrate_twist(vx, vy, wz, duration), state, atol=1e-10)


def test_sole_rectangle_matches_the_config_corners_placed_by_pinocchio(feet, rng):
    for _ in range(10):
        step = random_step(rng)
        expected = np.array([step.placement().act(c)[:2] for c in feet.left.corners()])
        np.testing.assert_allclose(feet.rectangle(step), expected, atol=1e-12)
        np.testing.assert_allclose(feet.center(step), expected.mean(axis=0), atol=1e-12)
        shrunk = feet.rectangle(step, 0.01)
        # Shrinking by 1 cm: length 0.12 m and width 0.05 m, same centre.
        assert np.linalg.norm(shrunk[0] - shrunk[1]) == pytest.approx(0.12, abs=1e-12)
        assert np.linalg.norm(shrunk[1] - shrunk[2]) == pytest.approx(0.05, abs=1e-12)
    with pytest.raises(InputError):
        feet.rectangle(Footstep("left", 0, 0, 0), 0.035)


def test_overlap_agrees_with_a_sampled_reference(feet, rng):
    disagreements = 0
    for _ in range(200):
        a = random_step(rng, "left", 0.1)
        b = random_step(rng, "right", 0.1)
        if feet.overlap(a, b) != rectangles_intersect_by_sampling(feet, a, b):
            disagreements += 1
    # The sampled reference can miss intersections thinner than its 5 mm grid: allow 2 %.
    assert disagreements <= 4


@pytest.fixture()
def limits(settings):
    return StepLimits.from_settings(settings)


@pytest.mark.parametrize(
    ("relative", "words"),
    [
        ((0.26, SPACING, 0.0), "step length"),
        ((-0.11, SPACING, 0.0), "backward step"),
        ((0.0, 0.09, 0.0), "crossing feet"),
        ((0.0, -SPACING, 0.0), "crossing feet"),  # the left foot on the right of the stance
        ((0.0, 0.24, 0.0), "step width"),
        ((0.0, SPACING, 0.36), "step yaw"),
    ],
)
def test_violations_name_the_limit(limits, feet, relative, words):
    stance = Footstep("right", 0.3, -0.2, 0.4)
    step = stance.compose(*relative, side="left")
    assert words in limits.violation(step, stance, feet)


def test_overlapping_soles_are_crossing_feet_even_when_the_spacing_is_kept(feet):
    """With a yaw limit of 0.6 rad a toe-in left foot 0.10 m away reaches 2 cm over the stance
    sole's edge (0.09 sin 0.6 + 0.035 cos 0.6 = 0.080 m > 0.10 - 0.035 m)."""
    limits = StepLimits(0.25, 0.1, 0.10, 0.236, 0.6)
    stance = Footstep("right", 0.0, 0.0, 0.0)
    step = stance.compose(0.0, 0.10, -0.6, side="left")
    assert rectangles_intersect_by_sampling(feet, step, stance)
    assert "overlap" in limits.violation(step, stance, feet)


def test_a_step_on_the_same_foot_is_refused(limits, feet):
    stance = Footstep("right", 0.0, 0.0, 0.0)
    assert "alternate" in limits.violation(Footstep("right", 0.1, 0.0, 0.0), stance, feet)


def test_clamped_steps_obey_every_limit(limits, feet, settings, rng):
    for _ in range(300):
        stance = random_step(rng, "right")
        wanted = stance.compose(*rng.uniform([-0.5, -0.3, -1.5], [0.5, 0.5, 1.5]), side="left")
        clamped = limits.clamp(wanted, stance, feet)
        assert limits.violation(clamped, stance, feet) is None
        assert_step_within_limits(clamped, stance, settings)
        assert not rectangles_intersect_by_sampling(feet, clamped, stance, n=7)


def test_side_is_checked():
    with pytest.raises(InputError):
        Footstep("middle", 0.0, 0.0, 0.0)
