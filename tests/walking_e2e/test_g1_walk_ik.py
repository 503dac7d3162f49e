"""The Unitree G1 walks in mode "ik" (position-controlled servos) without foot F/T sensors.

Issue 14: ``robot:=g1`` works in both controller modes; its walking test (`test_g1_walk.py`)
runs mode "torque" on both engines. This one walks the G1 1 m forward at 0.12 m/s in mode
"ik" on our compliant simulator (0.5 ms engine step, as `test_g1_walk.py` says why) and stops,
against issue 12's criteria: no fall, every touch-down measured (the sole's load from the joint
torques, near the ground by the estimated kinematics), the held soles slide at most 5 mm, the
true centre of pressure inside the support polygon where the estimate puts the soles (known to
within the estimate's error), the base estimate within 2 cm of the truth, standing at the end
with the feet side by side within 1 cm.

Measured (one run each, quiet machine, main 12722fe): 1.000 m in 9.64 s (0.104 m/s), 15
touch-downs measured (13 + 2 early), slide 3.41 mm, ZMP margin 4.5 mm, estimate error 1.4 mm,
placement error 21.9 mm, feet 6.0 mm apart; 34 s wall. On MuJoCo (1 ms step; not run here) the
same walk holds and stops (0.096 m/s, 14 touch-downs, ZMP margin 0.3 mm, estimate 8.3 mm, feet
9.8 mm apart) but a held sole slides 7.19 mm, above issue 12's 5 mm: at each lift-off the swing
leg's forward acceleration moves the motion feed-forward's ZMP ~35 mm forward, the stance sole's
centre of pressure reaches its toe edge, the heel unloads and the swing's yaw reaction spins the
sole about its toe (tools/g1_ik_slide.py). ``ik.sagittal_momentum_compensation`` (off in
config/g1) cancels that shift: with it, compliant 0.94 mm and MuJoCo 4.96 mm, but the placement
error doubles (44.8 mm), the walk slows to 0.089 m/s and MuJoCo's stop no longer settles (README,
the "ik" rows): the G1's IK walk on MuJoCo is not there yet.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from wbm_bringup.walking_rig import controller_settings, make_walking_rig
from wbm_description import WholeBodyModel, load_robot

pytestmark = pytest.mark.slow

G1_CONTROLLER = Path(__file__).resolve().parents[2] / "config" / "g1" / "controller.yaml"
DT = 5e-4  # engine step [s] (test_g1_walk.py)
SPEED = 0.12  # [m/s]
DISTANCE = 1.0  # [m]
SLIDE = 5e-3  # [m] issue 12
ESTIMATE = 0.02  # [m], as the other walking tests
FEET = 0.01  # [m] feet side by side along x after the stop


def test_g1_walks_a_metre_and_stops_in_ik_mode():
    g1 = WholeBodyModel.from_config(load_robot("g1"))
    rig = make_walking_rig(g1, controller_settings(G1_CONTROLLER, "ik"), "compliant", dt=DT)
    rig.command("set_velocity_command", SPEED, 0.0, 0.0)
    start = rig.engine.time
    rig.run(DISTANCE / SPEED * 1.5, until=lambda: rig.mid_feet()[0] >= DISTANCE)
    elapsed = rig.engine.time - start
    reached = rig.mid_feet()[0]
    if not rig.fallen():
        rig.behaviour.stop()
        rig.walk_until_standing(4.0)
    m = rig.metrics
    left, right = rig.sole_position("left_foot"), rig.sole_position("right_foot")
    print(
        f"\nG1 compliant ik: {reached:.3f} m in {elapsed:.2f} s ({reached / elapsed:.3f} m/s); "
        f"{m.steps} touch-downs {m.touchdowns}; slide {m.slide * 1e3:.2f} mm; ZMP margin "
        f"{m.zmp_margin * 1e3:.1f} mm at {m.zmp_margin_at}; estimate error "
        f"{m.estimate_error * 1e3:.1f} mm; placement error {m.placement_error * 1e3:.1f} mm; "
        f"feet {abs(left[0] - right[0]) * 1e3:.1f} mm apart"
    )
    assert not m.fallen
    assert reached >= DISTANCE
    assert m.steps > 0 and set(m.touchdowns) <= {"touchdown", "early_touchdown"}, m.touchdowns
    assert m.slide <= SLIDE
    assert m.estimate_error <= ESTIMATE
    # The polygon is placed where the estimate puts the soles: known to within its error.
    assert m.zmp_margin >= -m.estimate_error
    assert rig.standing()
    assert abs(left[0] - right[0]) <= FEET
