"""Footstep planning: limits by construction, step counts, goal accuracy, rejected plans."""

import math

import numpy as np
import pytest
from walking_helpers import (
    SPACING,
    assert_step_within_limits,
    rectangles_intersect_by_sampling,
    standing_feet,
)

from wbm_control.walking import Footstep, FootstepPlanner, FootstepPlanRejected, GoalRejected
from wbm_description.exceptions import InputError


@pytest.fixture()
def planner(settings, feet):
    return FootstepPlanner(settings, feet)


def walk_is_valid(planner, steps, left, right, settings):
    """Every step within the raw limits w.r.t. the previous foot, soles never intersecting."""
    where = {"left": left, "right": right}
    for step in steps:
        stance = where["right" if step.side == "left" else "left"]
        assert_step_within_limits(step, stance, settings)
        assert not rectangles_intersect_by_sampling(planner.feet, step, stance, n=9)
        where[step.side] = step
    return where


def assert_side_by_side_at(where, x, y, yaw, *, position_tolerance=1e-3, yaw_tolerance=1e-3):
    """The brief's goal accuracy by default: 1 mm, and 1e-3 rad (0.057 deg)."""
    left, right = standing_feet(x, y, yaw)
    for expected in (left, right):
        distance, angle = where[expected.side].distance_to(expected)
        assert distance <= position_tolerance, (where[expected.side], expected)
        assert angle <= yaw_tolerance, (where[expected.side], expected)


def test_forward_velocity_steps_are_the_distance_walked_in_a_step(planner, settings):
    left, right = standing_feet()
    steps = planner.plan_from_velocity((0.3, 0.0, 0.0), stance=right, swing_foot=left, n_steps=6)
    assert [s.side for s in steps] == ["left", "right"] * 3
    walk_is_valid(planner, steps, left, right, settings)
    # Each step moves the walking frame by v T = 0.3 * 0.8 = 0.24 m: feet at 0.24 k (planar
    # algebra only: 1e-12 m is rounding).
    np.testing.assert_allclose([s.x for s in steps], 0.24 * np.arange(1, 7), atol=1e-12)


def test_three_metres_forward_goal_takes_ceil_distance_over_max_length_steps_plus_closing(
    planner, settings
):
    left, right = standing_feet()
    steps = planner.plan_to_goal((3.0, 0.0, 0.0), left=left, right=right)
    # 3 / 0.25 = 12 steps advance the walking frame, one more brings the feet side by side.
    assert len(steps) == math.ceil(3.0 / settings.max_step_length) + 1
    where = walk_is_valid(planner, steps, left, right, settings)
    assert_side_by_side_at(where, 3.0, 0.0, 0.0, position_tolerance=1e-9, yaw_tolerance=1e-9)


def test_turn_in_place_90_degrees(planner, settings):
    left, right = standing_feet()
    steps = planner.plan_to_goal((0.0, 0.0, math.pi / 2), left=left, right=right)
    # Each step turns the walking frame by at most max_step_yaw (feet alternate toe-out and
    # toe-in), then one closing step: ceil(90 deg / 20.05 deg) + 1 = 6.
    assert len(steps) == math.ceil((math.pi / 2) / settings.max_step_yaw) + 1
    assert steps[0].side == "left"  # turning left: the left foot opens first
    where = walk_is_valid(planner, steps, left, right, settings)
    assert_side_by_side_at(where, 0.0, 0.0, math.pi / 2, yaw_tolerance=math.radians(0.1))


@pytest.mark.parametrize("offset", [-0.005, 0.005])
@pytest.mark.parametrize("turn", [math.pi / 2, -math.pi / 2])
def test_turn_in_place_leads_with_the_turn_side_whatever_millimetres_aside(
    planner, settings, offset, turn
):
    """A goal a few mm to one side (an estimate's drift) does not choose the first foot.

    The G1 turning 90 degrees after a 2 m walk: the estimate 5.5 mm to the right of the truth
    gave the goal 5.5 mm to the right, the right foot stepped first (toe-in) on a left turn and
    the robot fell (compliant and MuJoCo); led with the left foot (toe-out) it turned.
    """
    left, right = standing_feet()
    steps = planner.plan_to_goal((0.002, offset, turn), left=left, right=right)
    assert steps[0].side == ("left" if turn > 0 else "right")
    where = walk_is_valid(planner, steps, left, right, settings)
    assert_side_by_side_at(where, 0.002, offset, turn, yaw_tolerance=math.radians(0.1))


@pytest.mark.parametrize("lateral", [-0.3, 0.3])
def test_sideways_goal_leads_with_the_foot_on_that_side_despite_a_small_turn(
    planner, settings, lateral
):
    """The lateral motion (3 steps of max_step_width) outweighs a 0.1 rad turn (< 1 step)."""
    left, right = standing_feet()
    steps = planner.plan_to_goal((0.0, lateral, -0.1 * np.sign(lateral)), left=left, right=right)
    assert steps[0].side == ("left" if lateral > 0 else "right")
    where = walk_is_valid(planner, steps, left, right, settings)
    assert_side_by_side_at(where, 0.0, lateral, -0.1 * np.sign(lateral))


@pytest.mark.parametrize("seed", range(8))
def test_goal_pose_plans_end_side_by_side_at_the_goal(planner, settings, seed):
    rng = np.random.default_rng(seed)
    start = rng.uniform([-1, -1, -math.pi], [1, 1, math.pi])
    goal = rng.uniform([-2.5, -2.5, -math.pi], [2.5, 2.5, math.pi])
    left, right = standing_feet(*start)
    steps = planner.plan_to_goal(tuple(goal), left=left, right=right)
    where = walk_is_valid(planner, steps, left, right, settings)
    assert_side_by_side_at(where, *goal, yaw_tolerance=math.radians(0.1))


def test_goal_plan_from_a_committed_swing_starts_with_the_required_foot(planner, settings):
    left, right = standing_feet()
    steps = planner.plan_to_goal((1.0, 0.5, 0.0), left=left, right=right, next_swing_side="right")
    assert steps[0].side == "right"
    where = walk_is_valid(planner, steps, left, right, settings)
    assert_side_by_side_at(where, 1.0, 0.5, 0.0)


def test_lateral_velocity_leads_with_the_foot_on_that_side(planner, settings):
    left, right = standing_feet()
    vy = settings.max_lateral_velocity
    for direction, lead in ((1.0, "left"), (-1.0, "right")):
        stance, swing = (right, left) if lead == "left" else (left, right)
        steps = planner.plan_from_velocity(
            (0.0, direction * vy, 0.0), stance=stance, swing_foot=swing, n_steps=4
        )
        assert steps[0].side == lead
        walk_is_valid(planner, steps, left, right, settings)
        # Two steps (lead, closing) move the frame by 2 vy T sideways; the closing step comes
        # back to the nominal spacing.
        np.testing.assert_allclose(
            steps[1].y - stance.y, direction * 2 * vy * settings.step_duration, atol=1e-12
        )
        assert abs(steps[1].relative_to(steps[0])[1]) == pytest.approx(SPACING, abs=1e-12)


def test_turning_velocity_yaws_every_step_by_the_rate_times_the_step_duration(planner, settings):
    left, right = standing_feet()
    wz = settings.max_yaw_rate
    steps = planner.plan_from_velocity((0.0, 0.0, wz), stance=right, swing_foot=left, n_steps=6)
    walk_is_valid(planner, steps, left, right, settings)
    np.testing.assert_allclose(
        [s.yaw for s in steps], wz * settings.step_duration * np.arange(1, 7), atol=1e-12
    )


@pytest.mark.parametrize(
    "command", [(0.3, 0.06, 0.4), (0.3, -0.06, -0.4), (-0.1, 0.06, -0.4), (0.3, 0.0, 0.4)]
)
def test_combined_velocity_commands_obey_every_limit(planner, settings, command):
    left, right = standing_feet()
    steps = planner.plan_from_velocity(command, stance=right, swing_foot=left, n_steps=20)
    walk_is_valid(planner, steps, left, right, settings)


def test_velocity_commands_are_clamped_and_nan_rejected(planner, settings):
    (vx, vy, wz), clamped = planner.clamp_command(2.0, -1.0, 9.0)
    assert clamped
    assert (vx, vy, wz) == (
        settings.max_forward_velocity,
        -settings.max_lateral_velocity,
        settings.max_yaw_rate,
    )
    assert planner.clamp_command(0.1, 0.0, 0.0) == ((0.1, 0.0, 0.0), False)
    for bad in (float("nan"), float("inf")):
        with pytest.raises(InputError):
            planner.clamp_command(bad, 0.0, 0.0)


def test_zero_command_closes_the_feet_side_by_side(planner, settings):
    left, right = standing_feet()
    ahead = left.compose(0.2, 0.0, 0.0)
    steps = planner.plan_from_velocity((0, 0, 0), stance=ahead, swing_foot=right)
    assert len(steps) == 1 and steps[0].side == "right"
    where = walk_is_valid(planner, steps, ahead, right, settings)
    np.testing.assert_allclose(where["right"].relative_to(ahead), (0.0, -SPACING, 0.0), atol=1e-12)
    assert planner.plan_from_velocity((0, 0, 0), stance=right, swing_foot=left) == []


@pytest.fixture()
def feet_now():
    return standing_feet()


def forward_plan(planner, left, right):
    return planner.plan_from_velocity((0.2, 0.0, 0.0), stance=right, swing_foot=left, n_steps=4)


def test_a_valid_plan_passes(planner, feet_now):
    left, right = feet_now
    planner.validate_plan(forward_plan(planner, left, right), left=left, right=right)
    planner.validate_plan([], left=left, right=right)


@pytest.mark.parametrize(
    ("index", "change", "words"),
    [
        (0, lambda s: Footstep("left", float("nan"), s.y, s.yaw), "not finite"),
        (2, lambda s: Footstep("left", s.x, math.inf, s.yaw), "not finite"),
        (1, lambda s: Footstep("right", s.x + 0.2, s.y, s.yaw), "step length"),
        (1, lambda s: Footstep("right", s.x, s.y - 0.2, s.yaw), "step width"),
        (1, lambda s: Footstep("right", s.x, s.y + 0.2, s.yaw), "crossing feet"),
        (2, lambda s: Footstep("left", s.x, s.y, s.yaw + 0.5), "step yaw"),
        (3, lambda s: Footstep("left", s.x, s.y, s.yaw), "same foot"),
    ],
)
def test_bad_plans_are_rejected_with_the_step_index(planner, feet_now, index, change, words):
    left, right = feet_now
    steps = forward_plan(planner, left, right)
    steps[index] = change(steps[index])
    with pytest.raises(FootstepPlanRejected) as error:
        planner.validate_plan(steps, left=left, right=right)
    assert error.value.index == index
    assert words in error.value.reason


def test_first_step_on_the_wrong_foot_is_rejected(planner, feet_now):
    left, right = feet_now
    steps = forward_plan(planner, left, right)
    with pytest.raises(FootstepPlanRejected, match="wrong foot") as error:
        planner.validate_plan(steps, left=left, right=right, next_swing_side="right")
    assert error.value.index == 0


def test_first_step_out_of_reach_of_the_current_feet_is_rejected(planner, feet_now):
    left, right = feet_now
    with pytest.raises(FootstepPlanRejected, match="out of reach") as error:
        planner.validate_plan([Footstep("left", 1.0, 0.068, 0.0)], left=left, right=right)
    assert error.value.index == 0


def test_bad_goals_are_rejected(planner, feet_now):
    left, right = feet_now
    with pytest.raises(GoalRejected, match="not finite"):
        planner.plan_to_goal((math.nan, 0.0, 0.0), left=left, right=right)
    with pytest.raises(GoalRejected, match="not reached"):
        planner.plan_to_goal((3.0, 0.0, 0.0), left=left, right=right, max_steps=5)


def test_a_stop_takes_no_closing_step_for_a_miss_within_the_side_by_side_tolerance(
    planner, settings, feet
):
    """A foot that landed 8 mm behind and 0.015 rad off its closing step is side by side within
    the configured 10 mm / 0.02 rad (no step: a step lands no better than the ~1 cm landing
    accuracy); 12 mm behind is not (one closing step, beside the stance foot exactly). The
    default (0.1 mm, 1 mrad) steps for both."""
    left, right = standing_feet()
    tolerant = FootstepPlanner(
        settings.replace(side_by_side_tolerance=0.01, side_by_side_yaw_tolerance=0.02), feet
    )
    near = left.compose(-0.008, 0.0, 0.015)
    assert tolerant.plan_from_velocity((0, 0, 0), stance=right, swing_foot=near) == []
    assert len(planner.plan_from_velocity((0, 0, 0), stance=right, swing_foot=near)) == 1
    far = left.compose(-0.012, 0.0, 0.0)
    (step,) = tolerant.plan_from_velocity((0, 0, 0), stance=right, swing_foot=far)
    np.testing.assert_allclose(step.relative_to(right), (0.0, SPACING, 0.0), atol=1e-12)
