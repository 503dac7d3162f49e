"""The Unitree G1 walks without foot F/T sensors (torque mode, our compliant simulator, MuJoCo).

One run per engine, every assertion on it: 2 m forward on cmd_vel, the stop with the feet side by
side, then a 90 degree turn in place on a goal pose (issue 14: "walks 2 m forward, turns 90 degrees
and stops"), within 5 degrees and 5 cm of the spot (issue 12's turn and goal accuracy). Issue 12's
criteria, on the walk and on the turn: no fall, the held soles slide at most 5 mm, the ZMP (the
true centre of pressure: the G1 has no F/T sensors) inside the support polygon where the estimate
puts the soles, known to within the estimate's error, outside the 50 ms after a contact switch; the
base estimate within 2 cm of the truth; every touch-down measured (the sole's load from the joint
torques, near the ground by the estimated kinematics: never the clock nor a timeout).

The turn used to fall 15-50 degrees into it: after 2 m the estimate stands ~5 mm to the right of
the truth, the goal (the true spot) then lay 5 mm to the robot's right, and the planner led
with the right foot (toe-in first) on a left turn. A goal near the robot now leads with the foot
of the larger motion counted in steps (FootstepPlanner.goal_lead_side): the left foot here.
Measured then (compliant, 1 passed, 138 s wall loaded): 90.22 degrees, the mid-feet 2.6 mm from
the spot, slide 0.31 mm, ZMP margin 3.4 mm, estimate error 14.0 mm. Not a knife edge: after the
same walk the turn with the goal 5 mm left, right or ahead, commanded 0.1 or 0.25 s later, and
turning right instead: 7 of 7 turned 90.2 degrees within 12.3 mm of the spot, slide <= 0.31 mm, ZMP
margin >= -1.9 mm (the right turn, the estimate then 14.9 mm off). On MuJoCo (then outside the
suite; 0.5 ms, 223 s wall loaded) the same 7 turns: 89.8-90.1 degrees
within 17.7 mm, slide <= 3.05 mm, ZMP margin >= -0.3 mm, but the estimate 25.7-26.8 mm off
(its height rises ~0.8 mm a step on MuJoCo: 18.7 mm of it vertical after the 2 m).

That height drift was the ground's give: a sole is anchored at its first estimated load above
40 N, then sinks a further 1.1 mm into MuJoCo's soft contact (0.5 mm into the compliant one) as
the weight comes onto it, and the estimate rose by that much less the old sole's rise, ~0.9 mm
a step (0.45 mm on compliant). config/g1's estimator.flat_ground now anchors a newly loaded
sole with its lowest corner on the plane the robot started on (wbm_control.base_estimator).
Measured, one run each (pytest -s, load 3.5-6.6 on 2 cores), walk / turn:

- compliant, 0.5 ms: 90.13 degrees, moved 7.2 mm, slide 0.41 / 0.54 mm, ZMP margin 3.6 / 5.0 mm,
  estimate error 8.3 / 8.5 mm (without flat_ground: 11.9 / 13.7 mm, 90.22 degrees, 2.6 mm);
  80.7 s CPU, 108 s wall;
- MuJoCo, 1 ms: 2.000 m in 17.89 s, feet 3.7 mm apart, 90.14 degrees, moved 14.2 mm, slide
  3.04 / 3.36 mm, ZMP margin 2.9 / -0.3 mm, estimate error 13.3 / 14.3 mm (without flat_ground
  the walk failed here: estimate error 22.4 mm); 65.2 s CPU, 84 s wall. At 0.5 ms it passed as
  well (estimate error 11.8 / 12.6 mm, 90.15 degrees, slide 2.82 / 2.96 mm) for about the same
  CPU (66.7 s: the 500 Hz controller dominates, not the engine): 1 ms is kept, the cheaper.
  Not a knife edge (tools/g1_turn_sweep.py --engine mujoco --dt 1e-3, the 7 variants above):
  7 of 7 turned 90.14-90.22 degrees (the right turn -90.14) within 17.6 mm of the spot, slide
  <= 3.37 mm, ZMP margin >= -4.2 mm (the right turn), estimate error <= 14.3 mm.

The walk before it (tools/g1_turn_sweep.py --distance D, /tmp scripts for the traces): with
the stop's final double support at 0.6 s the turn held after 1.0 and 2.0 m only (after 0.3 and
0.5 m a sole slid 34 / 19 mm once standing, after 1.5 m it fell in the turn's first double
support): the stop held the CoM over the last stance sole, the planned ZMP at its 1 cm margin,
for those 0.6 s, and on the G1's 5 cm wide soles it drifted off the outer edge or not depending
on where the last step put it. config/g1's final_double_support_duration is now 0.3 s: the turn
after 0.3 / 0.5 / 1.0 / 1.5 / 2.0 m held on compliant (90.0-90.3 degrees, slide <= 0.63 mm,
ZMP margin >= -0.7 mm), and after 2.0 m on MuJoCo (90.04 degrees, 6.2 mm, slide 2.81 mm); the
7-variant sweeps above were measured with 0.6 s.

Our simulator steps 0.5 ms: at 1 ms the G1's light feet rock on the compliant ground at ~250 Hz
in single support (semi-implicit Euler's limit), at 0.5 ms they rest (the walking rig's
docstring). MuJoCo steps 1 ms (above).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from wbm_bringup.walking_rig import controller_settings, make_walking_rig
from wbm_description import WholeBodyModel, load_robot

pytestmark = pytest.mark.slow

G1_CONTROLLER = Path(__file__).resolve().parents[2] / "config" / "g1" / "controller.yaml"
DT = {"compliant": 5e-4, "mujoco": 1e-3}  # engine step [s] by engine (module docstring)
SPEED = 0.12  # commanded forward velocity [m/s]
DISTANCE = 2.0  # [m] issue 14
SLIDE = 5e-3  # [m] issue 12
ESTIMATE = 0.02  # [m], as iCub's walking tests
SIDE_BY_SIDE = 0.01  # [m] the feet's offset along the walking direction after a stop
TURN_TOLERANCE = math.radians(5.0)  # [rad] issue 12's goal accuracy
SPOT = 0.05  # [m] a turn in place stays within this of its spot (issue 12's goal accuracy)


def feet_offset_along(rig, yaw: float) -> float:
    """The left sole's offset from the right one along the direction ``yaw`` [m] (true)."""
    delta = rig.sole_position("left_foot") - rig.sole_position("right_foot")
    return float(math.cos(yaw) * delta[0] + math.sin(yaw) * delta[1])


@pytest.mark.parametrize("engine", ["compliant", "mujoco"])
def test_g1_walks_two_metres_stops_and_turns_90_degrees(engine):
    g1 = WholeBodyModel.from_config(load_robot("g1"))
    settings = controller_settings(G1_CONTROLLER, "torque")
    rig = make_walking_rig(g1, settings, engine, dt=DT[engine])
    rig.command("set_velocity_command", SPEED, 0.0, 0.0)
    start = rig.engine.time
    rig.run(DISTANCE / SPEED * 1.5, until=lambda: rig.mid_feet()[0] >= DISTANCE)
    elapsed = rig.engine.time - start
    reached = rig.mid_feet()[0]
    rig.behaviour.stop()
    rig.walk_until_standing(4.0)
    m = rig.metrics
    forward_offset = feet_offset_along(rig, 0.0)
    step_time = np.asarray(m.step_times)
    print(
        f"\nG1 {engine} torque: {reached:.3f} m in {elapsed:.2f} s ({reached / elapsed:.3f} m/s);"
        f" stop: feet {forward_offset * 1e3:.1f} mm apart along x; {m.steps} steps, touch-downs"
        f" {m.touchdowns}; slide {m.slide * 1e3:.2f} mm; ZMP margin {m.zmp_margin * 1e3:.1f} mm"
        f" at {m.zmp_margin_at}; estimate error {m.estimate_error * 1e3:.1f} mm; placement error"
        f" {m.placement_error * 1e3:.1f} mm; controller step median"
        f" {np.median(step_time) * 1e3:.2f} ms, p99 {np.percentile(step_time, 99) * 1e3:.2f} ms"
    )
    assert not m.fallen
    assert reached >= DISTANCE
    assert rig.standing() and abs(forward_offset) <= SIDE_BY_SIDE
    assert m.slide <= SLIDE
    # Every touch-down measured (estimated load near the ground), none by the clock or timeout.
    assert m.steps > 0 and set(m.touchdowns) <= {"touchdown", "early_touchdown"}, m.touchdowns
    assert m.estimate_error <= ESTIMATE
    # The polygon is placed where the estimate puts the soles: known to within its error.
    assert m.zmp_margin >= -m.estimate_error

    # The turn in place, to the left, on a goal pose at the spot.
    turned, moved = rig.turn_on_goal(math.pi / 2, 12.0)
    t = rig.metrics
    print(
        f"turn: {math.degrees(turned):.2f} deg, mid-feet moved {moved * 1e3:.1f} mm; {t.steps}"
        f" steps, touch-downs {t.touchdowns}; slide {t.slide * 1e3:.2f} mm; ZMP margin"
        f" {t.zmp_margin * 1e3:.1f} mm at {t.zmp_margin_at}; estimate error"
        f" {t.estimate_error * 1e3:.1f} mm; placement error {t.placement_error * 1e3:.1f} mm"
    )
    assert not t.fallen and rig.standing()
    assert abs(turned - math.pi / 2) <= TURN_TOLERANCE
    assert moved <= SPOT
    assert t.slide <= SLIDE
    assert t.steps > 0 and set(t.touchdowns) <= {"touchdown", "early_touchdown"}, t.touchdowns
    assert t.estimate_error <= ESTIMATE
    assert t.zmp_margin >= -t.estimate_error
