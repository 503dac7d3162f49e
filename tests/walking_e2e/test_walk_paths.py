"""iCub walks a square footstep plan, turns 90 degrees in place and walks 1 m sideways.

One robot (torque mode, in-process: estimator and ankle F/T) does the three in a row, each judged
on its own part, with the same config and controller on our simulator's compliant contact and on
MuJoCo (issue 12; rigid contact: below):

- a square of 0.2 m sides as an explicit footstep plan (forward, left, back, right, the trunk
  facing +x; 16 steps of 0.1 m, one of them in place to change the leading foot): back within
  5 cm of the start and standing;
- a goal pose at the same place turned by 90 degrees: a turn in place, within 5 degrees and with
  the mid-feet point within 5 cm of where it started;
- 1 m sideways to its left (the turned robot's left) on a lateral cmd_vel, then the zero
  command: the mid-feet point at least 1 m away along that axis, the feet side by side.

Throughout: no fall, the held soles slide at most 5 mm, the F/T ZMP inside the loaded soles'
polygon within the base estimate's error (50 ms after each switch excluded), every touch-down
measured by the F/T, the estimate error reported.

Measured on this code (2 runs, both passed, 108-119 s wall): square back within 14.7 mm; turn
88.64 deg, the mid-feet point moved 3.2 mm; sideways 1.05 m in 22.1 s (closing steps placed
beside the held feet, none for a miss within the side-by-side tolerance: the sideways stop took
23.1 and 24.2 s before, and once was not standing 4 s after the zero command), the feet 0.5-1.0
mm apart along the trunk; slide <= 1.21 mm; estimate error <= 24 mm. On rigid contact and
MuJoCo (one run each, 96 and 119 s wall): square back within 7.2 / 14.4 mm; turn 89.98 / 90.03
deg, the mid-feet point moved 0.3 / 8.2 mm; sideways 1.016 / 1.051 m, the feet 0.2 / 1.2 mm apart
along the trunk; slide <= 0.18 / 2.19 mm; ZMP margin >= 2.1 / -0.6 mm (MuJoCo: within its 39 mm
estimate error, sideways); estimate error <= 1.8 / 39.1 mm (MuJoCo's sideways walk, 29
steps; its 3 m forward walk reports 13.8 mm: the drift on MuJoCo is not diagnosed).

NOT on rigid contact: the rigid run above passed, then the goal planner's lead foot changed (a
goal near the robot leads with the foot of the larger motion: the G1's turn) and the turn ended
1 mm and 0.03 deg elsewhere (89.95 deg, moved 1.1 mm); from there the sideways walk fell after
0.51 m (9 steps; without step timing after 0.38 m). A walk that a millimetre of start state
topples is not a pass: the rigid sideways walk is fragile, issue 12 stays open on it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from wbm_bringup.walking_rig import controller_settings, make_walking_rig
from wbm_control.walking.footsteps import Footstep

pytestmark = pytest.mark.slow

SIDE = 0.2  # square side [m]
SLIDE = 5e-3  # issue 12 [m]
RETURN = 0.05  # issue 12: back within 5 cm [m]


def square_plan(left: np.ndarray, right: np.ndarray) -> list[Footstep]:
    """Footsteps of a square walked without turning (16 steps, 0.1 m each), right foot first."""
    (xl, yl), (xr, yr) = left[:2], right[:2]
    xl = xr = 0.5 * (xl + xr)  # the feet side by side: each step within the limits exactly
    d = SIDE / 2
    steps = [("right", xr + d, yr), ("left", xl + SIDE, yl), ("right", xr + SIDE, yr)]
    # Left: the left foot leads, the right one follows.
    for k in (1, 2):
        steps += [("left", xl + SIDE, yl + k * d), ("right", xr + SIDE, yr + k * d)]
    # Back.
    for k in (1, 2):
        steps += [("left", xl + SIDE - k * d, yl + SIDE), ("right", xr + SIDE - k * d, yr + SIDE)]
    # Right: the right foot leads (the left one first steps in place).
    steps += [("left", xl, yl + SIDE)]
    for k in (1, 2):
        steps += [("right", xr, yr + SIDE - k * d), ("left", xl, yl + SIDE - k * d)]
    return [Footstep(side, x, y, 0.0) for side, x, y in steps]


def check_walk(rig, name: str) -> None:
    m = rig.metrics
    print(
        f"\n{name}: {m.steps} steps; slide {m.slide * 1e3:.2f} mm; ZMP margin "
        f"{m.zmp_margin * 1e3:.1f} mm at {m.zmp_margin_at}; estimate error "
        f"{m.estimate_error * 1e3:.1f} mm; placement error {m.placement_error * 1e3:.1f} mm; "
        f"touch-downs {m.touchdowns}"
    )
    assert not m.fallen and rig.standing(), name
    assert m.slide <= SLIDE, name
    assert m.steps > 0 and set(m.touchdowns) <= {"touchdown", "early_touchdown"}, m.touchdowns
    assert m.zmp_margin >= -m.estimate_error, name


@pytest.mark.parametrize("engine", ["compliant", "mujoco"])
def test_square_turn_in_place_and_sideways(icub, controller_yaml, engine):
    rig = make_walking_rig(icub, controller_settings(controller_yaml, "torque"), engine)
    start = rig.mid_feet()
    plan = square_plan(rig.sole_position("left_foot"), rig.sole_position("right_foot"))
    rig.command("set_footstep_plan", plan)
    rig.walk_until_standing(len(plan) * 0.7 + 3.0)
    back = float(np.linalg.norm((rig.mid_feet() - start)[:2]))
    print(f"\nsquare: back within {back * 1e3:.1f} mm of the start")
    check_walk(rig, "square")
    assert back <= RETURN

    turned, moved = rig.turn_on_goal(math.pi / 2, 12.0)
    print(f"\nturn: {math.degrees(turned):.2f} deg, mid-feet moved {moved * 1e3:.1f} mm")
    check_walk(rig, "turn in place")
    assert abs(turned - math.pi / 2) <= math.radians(5.0)
    assert moved <= RETURN

    rig.metrics = type(rig.metrics)()
    before, yaw = rig.mid_feet(), rig.mid_yaw()
    axis = np.array([-math.sin(yaw), math.cos(yaw)])  # the robot's left
    speed = rig.behaviour.walking.settings.max_lateral_velocity
    rig.command("set_velocity_command", 0.0, speed, 0.0)
    rig.run(1.0 / speed + 6.0, until=lambda: (rig.mid_feet() - before)[:2] @ axis >= 1.0)
    rig.behaviour.stop()
    rig.walk_until_standing(4.0)
    sideways = float((rig.mid_feet() - before)[:2] @ axis)
    left, right = rig.sole_position("left_foot"), rig.sole_position("right_foot")
    along = abs(float((left - right)[:2] @ np.array([math.cos(yaw), math.sin(yaw)])))
    print(
        f"\nsideways: {sideways:.3f} m in {rig.metrics.duration:.1f} s; feet "
        f"{along * 1e3:.1f} mm apart along the trunk"
    )
    check_walk(rig, "sideways")
    assert sideways >= 1.0
    assert along <= 0.01
