"""The walking facade on an ideal LIP: commands in, references and contact commands out."""

import math

import numpy as np
import pytest
from walking_helpers import IdealLip

from wbm_control.walking import (
    ActivateContact,
    Footstep,
    FootstepPlanRejected,
    GoalRejected,
    ReleaseContact,
    WalkingController,
    WalkingGeometry,
    WalkingState,
)
from wbm_description.exceptions import ConfigError, InputError


@pytest.fixture()
def controller(icub_geometry):
    return WalkingController(icub_geometry)


def landed_footstep(activation):
    return Footstep.from_placement(activation.side, activation.placement)


def commands_of(log, kind):
    return [c for r in log for c in r.contact_commands if isinstance(c, kind)]


def side_by_side(controller):
    sm = controller.state_machine
    left, right = sm.foot("left"), sm.foot("right")
    return left.relative_to(right)


def test_from_model_measures_the_icub(icub):
    """The brief's numbers: feet about 0.136 m apart, CoM about 0.48-0.49 m high."""
    controller = WalkingController.from_model(icub)
    assert controller.settings.nominal_foot_spacing == pytest.approx(0.1362, abs=1e-4)
    assert controller.settings.com_height == pytest.approx(0.4814, abs=1e-4)
    with pytest.raises(ConfigError, match="soles.left"):
        WalkingGeometry.from_model(icub, left_sole="left")


def test_standing_with_no_command_stays_standing(controller):
    sim = IdealLip(controller)
    start = sim.com.copy()
    log = sim.run(1.0)
    assert all(r.state == WalkingState.STANDING for r in log)
    assert not any(r.contact_commands for r in log)
    np.testing.assert_allclose(sim.com, start, atol=1e-9)  # the ZMP stays under the CoM
    assert log[-1].phase_name == "standing"


@pytest.mark.parametrize(
    ("command", "lead"),
    [((0.0, 0.05, 0.0), "left"), ((0.0, -0.05, 0.0), "right"), ((0.0, 0.0, -0.3), "right")],
)
def test_walking_starts_with_the_lead_foot_after_the_initial_double_support(
    controller, command, lead
):
    controller.set_velocity_command(*command)
    log = IdealLip(controller).run(0.8)
    release = commands_of(log, ReleaseContact)[0]
    assert release.side == lead
    assert release.time == pytest.approx(
        controller.settings.initial_double_support_duration, abs=1e-9
    )
    assert log[-1].phase_name == f"single_support_{'right' if lead == 'left' else 'left'}"


def test_a_new_command_shapes_the_next_step_after_the_one_in_progress(controller):
    """Walking at 0.2 m/s, the command drops to 0.05 m/s mid-swing: the swing in progress keeps
    its target, the next step to lift off is 0.05 * 0.8 = 0.04 m long."""
    controller.set_velocity_command(0.2, 0.0, 0.0)
    sim = IdealLip(controller)
    sim.run(2.5)  # the third swing: 2.2 s to 2.8 s
    assert controller.state == WalkingState.SINGLE_SUPPORT
    committed = controller.state_machine.swing_target
    controller.set_velocity_command(0.05, 0.0, 0.0)
    log = sim.run(5.0)
    landed = [landed_footstep(a) for a in commands_of(log, ActivateContact)]
    assert landed[0].distance_to(committed)[0] < 1e-9
    stance = landed[0]
    step = landed[1]
    assert step.relative_to(stance)[0] == pytest.approx(0.05 * 0.8, abs=1e-9)


def test_stop_ends_standing_with_the_feet_side_by_side(controller):
    controller.set_velocity_command(0.2, 0.0, 0.1)
    sim = IdealLip(controller)
    sim.run(3.1)
    controller.stop()
    log = sim.run(6.5)
    assert controller.state == WalkingState.STANDING
    dx, dy, dyaw = side_by_side(controller)
    assert (dx, dy, dyaw) == pytest.approx(
        (0.0, controller.settings.nominal_foot_spacing, 0.0), abs=1e-9
    )
    assert log[-1].support.keys() == {"left", "right"}


def test_goal_is_reached_within_a_millimetre_and_a_tenth_of_a_degree(controller, icub_geometry):
    x0 = 0.5 * (icub_geometry.left.x + icub_geometry.right.x)
    y0 = 0.5 * (icub_geometry.left.y + icub_geometry.right.y)
    goal = (x0 + 0.6, y0 + 0.3, math.radians(45))
    steps = controller.set_goal(*goal)
    sim = IdealLip(controller)
    sim.run(0.6 + 0.8 * len(steps) + 1.0)
    assert controller.state == WalkingState.STANDING
    sm = controller.state_machine
    left, right = sm.foot("left"), sm.foot("right")
    frame_x, frame_y = 0.5 * (left.x + right.x), 0.5 * (left.y + right.y)
    assert math.hypot(frame_x - goal[0], frame_y - goal[1]) < 1e-3
    assert abs(left.yaw - goal[2]) < math.radians(0.1) and abs(right.yaw - goal[2]) < math.radians(
        0.1
    )


def test_an_explicit_plan_is_walked_as_given(controller, icub_geometry):
    plan = controller.planner.plan_to_goal(
        (0.3, -0.068, 0.0), left=icub_geometry.left, right=icub_geometry.right
    )
    controller.set_footstep_plan(plan)
    log = IdealLip(controller).run(0.6 + 0.8 * len(plan) + 0.2)
    landed = [landed_footstep(a) for a in commands_of(log, ActivateContact)]
    assert len(landed) == len(plan)
    for step, target in zip(landed, plan, strict=True):
        assert step.side == target.side and step.distance_to(target)[0] < 1e-9


def test_bad_input_is_rejected_and_changes_nothing(controller):
    controller.set_velocity_command(0.2, 0.0, 0.0)
    sim = IdealLip(controller)
    sim.run(1.0)  # single support, right stance: the right foot steps next
    before = (controller.mode, controller.command, controller.state_machine.footsteps)
    wrong_foot = [controller.state_machine.footsteps[1]]  # a left step first
    with pytest.raises(FootstepPlanRejected, match="wrong foot"):
        controller.set_footstep_plan(wrong_foot)
    with pytest.raises(InputError):
        controller.set_velocity_command(math.nan, 0.0, 0.0)
    with pytest.raises(GoalRejected):
        controller.set_goal(math.inf, 0.0, 0.0)
    assert (controller.mode, controller.command, controller.state_machine.footsteps) == before
    with pytest.raises(InputError):
        controller.update(1.0, np.array([np.nan, 0.0, 0.5]), np.zeros(3))


def test_replanning_every_tick_from_the_measured_state_also_walks(icub_geometry):
    from wbm_control.walking import WalkingSettings
    from wbm_description.support_geometry import polygon_margin

    settings = WalkingSettings(replan_period=0.002, replan_from_measured_state=True)
    controller = WalkingController(icub_geometry, settings)
    controller.set_velocity_command(0.3, 0.0, 0.0)
    log = IdealLip(controller).run(3.0)
    assert len(commands_of(log, ActivateContact)) == 3  # at 1.2, 2.0 and 2.8 s
    margin = min(polygon_margin(r.zmp_command, r.support_polygon) for r in log)
    assert margin >= settings.zmp_margin - 1e-6


def test_commands_are_clamped_to_the_limits(controller):
    command, clamped = controller.set_velocity_command(1.0, 0.0, 0.0)
    assert clamped and command == (controller.settings.max_forward_velocity, 0.0, 0.0)


def test_references_carry_swing_feet_contacts_and_the_plan(controller):
    controller.set_velocity_command(0.2, 0.0, 0.0)
    log = IdealLip(controller).run(1.0)
    last = log[-1]
    assert last.state == WalkingState.SINGLE_SUPPORT
    assert set(last.swing) == {"left"} and set(last.support) == {"right"}
    assert last.footsteps and last.footsteps[0].side == "right"
    assert last.com.shape == last.zmp.shape == last.dcm.shape == (3,)
    assert last.com[2] == pytest.approx(controller.settings.com_height)


def test_a_stop_closes_beside_where_the_feet_are_held_not_where_they_were_planned(
    controller, icub_geometry
):
    """The controller holds a landed sole where the estimate measured it (an early touch-down
    lands ~1 cm short of its reference). Standing, with the left foot measured 20 mm behind its
    footstep and 0.05 rad turned, a stop closes with one left step beside the right foot as it
    is held; the left foot measured within the side-by-side tolerance (1 cm, 0.02 rad) takes no
    step; a measurement of the wrong side or not finite is rejected."""
    tolerant = WalkingController(
        icub_geometry,
        controller.settings.replace(side_by_side_tolerance=0.01, side_by_side_yaw_tolerance=0.02),
    )
    sm = tolerant.state_machine
    left, right = sm.foot("left"), sm.foot("right")
    with pytest.raises(InputError, match="measured"):
        tolerant.correct_landing("left", right)
    with pytest.raises(InputError, match="measured"):
        tolerant.correct_landing("left", Footstep("left", math.nan, 0.0, 0.0))
    measured_right = right.compose(0.004, 0.0, 0.01)
    tolerant.correct_landing("right", measured_right)
    tolerant.correct_landing("left", left.compose(-0.005, 0.0, 0.012))
    tolerant.stop()
    sim = IdealLip(tolerant)
    sim.run(0.1)
    assert tolerant.state == WalkingState.STANDING and sm.footsteps == ()
    tolerant.correct_landing("left", left.compose(-0.02, 0.0, 0.05))
    tolerant.stop()
    sim.run(0.2)  # (until t = 0.2 s)
    assert tolerant.state == WalkingState.DOUBLE_SUPPORT
    (step,) = sm.footsteps
    assert step.side == "left"
    np.testing.assert_allclose(
        step.relative_to(measured_right),
        (0.0, tolerant.settings.nominal_foot_spacing, 0.0),
        atol=1e-12,
    )


def test_a_periodic_replan_the_solver_does_not_finish_keeps_the_previous_plan(controller):
    """Walking at 0.2 m/s on the ideal LIP, the MPC's solver failing on every periodic re-plan
    (same contact schedule) for 0.3 s mid-swing: each failure keeps the previous plan (the
    references are that plan's samples), and the walk goes on; a failure on a new schedule (a
    footstep switch) is still raised."""
    from wbm_control.exceptions import NoSolutionFound

    controller.set_velocity_command(0.2, 0.0, 0.0)
    sim = IdealLip(controller)
    sim.run(2.3)  # in the third swing (2.2 s to 2.8 s)
    assert controller.state == WalkingState.SINGLE_SUPPORT
    generator = controller.pattern_generator
    solve = generator._solver.solve

    def failing(problem):
        raise NoSolutionFound("walking_mpc", "PROXQP_MAX_ITER_REACHED (forced)")

    generator._solver.solve = failing
    kept = generator.plan
    log = sim.run(2.6)  # run() takes the end time
    assert len(log) > 100 and controller.failed_replans > 10
    assert generator.plan is kept
    for references in log:
        np.testing.assert_allclose(references.com, kept.sample(references.time).com, atol=1e-12)
    assert controller.state == WalkingState.SINGLE_SUPPORT  # the swing went on (until 2.8 s)
    with pytest.raises(NoSolutionFound):
        sim.run(3.3)  # the touchdown at 2.8 s switches the schedule: re-raised
    generator._solver.solve = solve
