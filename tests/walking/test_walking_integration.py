"""Planner + pattern generator + state machine + stabilizer on an ideal LIP, no robot.

The ideal LIP realises the commanded ZMP exactly; contact forces come from the support and the
swing feet's reference heights over the ground (see walking_helpers.IdealLip), so touch-downs are
detected from forces, not from the clock.
"""

import math

import numpy as np
import pytest
from walking_helpers import IdealLip, assert_step_within_limits, rectangles_intersect_by_sampling

from wbm_control.walking import (
    ActivateContact,
    Footstep,
    ReleaseContact,
    WalkingController,
    WalkingState,
)
from wbm_description.support_geometry import polygon_margin

pytestmark = pytest.mark.slow


def walk_three_metres(geometry, ground=None):
    """0.3 m/s forward; once the committed feet are within a metre of 3 m, a goal at 3 m."""
    controller = WalkingController(geometry)
    sim = IdealLip(controller, ground=ground)
    x0 = 0.5 * (geometry.left.x + geometry.right.x)
    y0 = 0.5 * (geometry.left.y + geometry.right.y)
    controller.set_velocity_command(0.3, 0.0, 0.0)
    targets, goal_set = {}, []

    def tick(t, references):
        sm = controller.state_machine
        for command in references.contact_commands:
            if isinstance(command, ReleaseContact):
                targets[command.time] = sm.swing_target  # planned at lift-off
        if not goal_set and max(sm.committed_foot(s).x for s in ("left", "right")) > x0 + 2.0:
            goal_set.append(controller.set_goal(x0 + 3.0, y0, 0.0))

    standing = []

    def settled(references):  # 1.5 s after the robot is standing again
        if goal_set and references.state == WalkingState.STANDING:
            standing.append(references.time)
        return bool(standing) and references.time > standing[0] + 1.5

    log = sim.run(20.0, on_tick=tick, stop=settled)
    return controller, sim, log, targets, (x0 + 3.0, y0)


@pytest.fixture(scope="module")
def flat_walk(icub_geometry):
    return walk_three_metres(icub_geometry)


def test_the_com_ends_over_the_goal(flat_walk, icub_geometry):
    controller, sim, log, _, (gx, gy) = flat_walk
    assert controller.state == WalkingState.STANDING
    # The CoM settles over the middle of the sole rectangles' centres (0.02 m ahead of the sole
    # frames): the goal plus that offset. 1 mm: the LIP has had seconds to settle.
    feet = icub_geometry.feet
    sm = controller.state_machine
    middle = 0.5 * (feet.center(sm.foot("left")) + feet.center(sm.foot("right")))
    np.testing.assert_allclose(middle, (gx + 0.02, gy), atol=1e-6)
    np.testing.assert_allclose(sim.com[:2], middle, atol=1e-3)
    assert np.linalg.norm(sim.com_velocity) < 1e-3
    last = max(c.time for c in (c for r in log for c in r.contact_commands))
    print(f"3 m in {last:.2f} s to the last touch-down: {3.0 / last:.3f} m/s on average")


def test_the_zmp_stays_in_the_support_polygon_with_the_margin(flat_walk):
    controller, _, log, _, _ = flat_walk
    margin = controller.settings.zmp_margin
    planned = min(polygon_margin(r.zmp, r.support_polygon) for r in log)
    commanded = min(polygon_margin(r.zmp_command, r.support_polygon) for r in log)
    print(f"ZMP margins: planned {planned * 1e3:.2f} mm, commanded {commanded * 1e3:.2f} mm")
    # The polygon of each tick is that of the feet in contact after the tick's switches; 1e-6 m
    # covers the MPC's solver tolerance.
    assert planned >= margin - 1e-6
    assert commanded >= margin - 1e-6


def test_feet_never_cross(flat_walk):
    controller, _, log, _, _ = flat_walk
    settings, feet = controller.settings, controller.geometry.feet
    where = {"left": controller.geometry.left, "right": controller.geometry.right}
    for step in controller.state_machine.landed:
        stance = where["right" if step.side == "left" else "left"]
        assert_step_within_limits(step, stance, settings)
        where[step.side] = step
    # During the swings too: the swing sole never intersects the stance sole.
    for references in log[::10]:
        for side, swing in references.swing.items():
            stance_side = "right" if side == "left" else "left"
            stance = Footstep.from_placement(stance_side, references.support[stance_side])
            moving = Footstep.from_placement(side, swing.pose)
            assert not rectangles_intersect_by_sampling(feet, moving, stance, n=7)


def test_swing_feet_touch_down_at_the_planned_steps(flat_walk):
    _, _, log, targets, _ = flat_walk
    activations = [c for r in log for c in r.contact_commands if isinstance(c, ActivateContact)]
    releases = sorted(targets)
    assert len(activations) == len(releases) >= 13
    for release_time, activation in zip(releases, activations, strict=True):
        planned = targets[release_time]
        landed = Footstep.from_placement(activation.side, activation.placement)
        assert activation.reason == "touchdown"  # measured force, on time on flat ground
        assert landed.side == planned.side
        assert landed.distance_to(planned)[0] < 1e-9
        assert activation.placement.translation[2] == pytest.approx(0.0, abs=1e-12)


def test_the_com_tracks_the_commanded_velocity(flat_walk):
    controller, _, log, _, _ = flat_walk
    # Velocity mode runs until the goal takes over; average over two strides in between.
    stride = 2 * controller.settings.step_duration
    t0 = 2.2
    com = {round(r.time, 3): r.com[0] for r in log}
    speed = (com[round(t0 + 2 * stride, 3)] - com[t0]) / (2 * stride)
    assert speed == pytest.approx(0.3, abs=3e-3)


def test_uneven_ground_gives_early_and_late_touch_downs_and_walking_goes_on(icub_geometry):
    """A 1 cm bump under the third step and a 1 cm hole under the fifth."""
    third_x, fifth_x = 0.3 * 0.8 * 3, 0.3 * 0.8 * 5

    def ground(x, y):
        if abs(x - third_x) < 0.06:
            return 0.01
        if abs(x - fifth_x) < 0.06:
            return -0.01
        return 0.0

    controller, sim, log, _, _ = walk_three_metres(icub_geometry, ground=ground)
    activations = [c for r in log for c in r.contact_commands if isinstance(c, ActivateContact)]
    reasons = [a.reason for a in activations]
    assert reasons[2] == "early_touchdown" and reasons[4] == "touchdown"
    # The contact is anchored at the swing reference when the force is read, one control period
    # after the reference met the ground: the foot descends at most ~0.35 m/s, so < 1 mm off.
    assert activations[2].placement.translation[2] == pytest.approx(0.01, abs=1e-3)
    # Late: the foot went on down past the plan and found the ground 1 cm lower.
    assert activations[4].placement.translation[2] == pytest.approx(-0.01, abs=1e-3)
    assert controller.state == WalkingState.STANDING
    margin = controller.settings.zmp_margin
    assert min(polygon_margin(r.zmp_command, r.support_polygon) for r in log) >= margin - 1e-6
    assert math.hypot(*(sim.com[:2] - log[-1].zmp[:2])) < 1e-3
