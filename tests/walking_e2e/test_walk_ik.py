"""Walking in mode "ik" (position-controlled servos), in-process on our simulator.

What holds today, on compliant and rigid contact: 1 m forward at 0.1 m/s, then the zero command.
Issue 12 asks for at least 0.2 m/s: there the IK mode still falls, after 6-7 steps (0.87 m
compliant, 0.62 m rigid; before the motion feed-forward after 2-3 steps, 0.26 / 0.42 m): a step
adjustment late in a swing moves the touch-down 5-8 cm forward, the foot meets the ground
short of it (README, "Walking in mode ik"). One run:

- no fall, every touch-down measured by the ankle F/T sensors, standing at the end with the feet
  side by side within 1 cm (measured 4.6 mm compliant, 3.2 mm rigid);
- each touch-down within 15 mm of its planned footstep (measured 7.1 / 7.5 mm; with the
  quasi-static feed-forward, before ``ik.motion_feedforward``, 41 / 44 mm: the servos supplied
  the swing's inertial torques from their error, and the swing foot lagged its reference);
- the ZMP (F/T) inside the support polygon outside the stated transients (measured 9.4 / 6.3 mm
  inside);
- each held sole's anchor on the ground: within 3 mm of the true sole height (a held foot rolls
  onto its edge late in stance, which lifts the sole frame: measured 0.75 mm on compliant
  contact, 0.84 mm on rigid); before, the anchor took the swing reference's height at
  touch-down, 7-15 mm below the ground after a late touch-down, and the servos lifted the robot
  by as much (it fell at 0.42 m);
- the held soles slide at most 5 mm (issue 12), the base estimate within 2 cm of the truth.

Printed beside them: speed, CoM command's largest distance from the plan, the controller step
time.
"""

from __future__ import annotations

import numpy as np
import pytest

from wbm_bringup.walking_rig import controller_settings, make_walking_rig

pytestmark = pytest.mark.slow

SPEED = 0.1  # [m/s]
DISTANCE = 1.0  # [m]
SLIDE = 5e-3  # [m] issue 12
ESTIMATE = 0.02  # [m], as in test_walk_forward.py
ANCHOR_HEIGHT = 3e-3  # [m] (see the module docstring)
FEET = 0.01  # [m] feet side by side at the end (see the module docstring)
PLACEMENT = 0.015  # [m] touch-down from its planned footstep (see the module docstring)


@pytest.mark.parametrize("engine", ["compliant", "rigid"])
def test_walks_a_metre_and_stops_in_ik_mode(icub, controller_yaml, engine):
    settings = controller_settings(controller_yaml, "ik")
    rig = make_walking_rig(icub, settings, engine)
    rig.command("set_velocity_command", SPEED, 0.0, 0.0)
    controller = rig.controller
    checks = {"anchor": 0.0, "offset": 0.0}

    def check(_t: float) -> None:
        for contact in controller.contacts.active():
            error = abs(contact.placement.translation[2] - rig.sole_position(contact.sole.name)[2])
            checks["anchor"] = max(checks["anchor"], error)
        references = rig.behaviour.references
        command = controller.mode.com_controller.position
        if references is not None and command is not None:
            offset = float(np.linalg.norm(command - references.com[:2]))
            checks["offset"] = max(checks["offset"], offset)

    start = rig.engine.time
    limit = start + DISTANCE / SPEED + 4.0
    while rig.engine.time < limit and rig.mid_feet()[0] < DISTANCE and not rig.fallen():
        rig.run(0.05, until=lambda: rig.mid_feet()[0] >= DISTANCE)
        check(rig.engine.time)
    elapsed = rig.engine.time - start
    reached = rig.mid_feet()[0]
    if not rig.fallen():
        rig.behaviour.stop()
        rig.walk_until_standing(4.0)
    m = rig.metrics
    left, right = rig.sole_position("left_foot"), rig.sole_position("right_foot")
    step_times = np.array(m.step_times) * 1e3
    print(
        f"\n{engine} ik: {reached:.3f} m in {elapsed:.2f} s ({reached / elapsed:.3f} m/s), "
        f"{m.steps} touch-downs {m.touchdowns}; slide {m.slide * 1e3:.2f} mm; ZMP margin "
        f"{m.zmp_margin * 1e3:.1f} mm; estimate error {m.estimate_error * 1e3:.1f} mm; "
        f"placement error {m.placement_error * 1e3:.1f} mm; anchor height error "
        f"{checks['anchor'] * 1e3:.2f} mm; CoM command offset {checks['offset'] * 1e3:.1f} mm; "
        f"step time median {np.median(step_times):.2f} ms, p99 "
        f"{np.percentile(step_times, 99):.2f} ms; feet "
        f"{abs(left[0] - right[0]) * 1e3:.1f} mm apart"
    )
    assert not m.fallen
    assert reached >= DISTANCE
    assert m.steps > 0 and set(m.touchdowns) <= {"touchdown", "early_touchdown"}, m.touchdowns
    assert checks["anchor"] <= ANCHOR_HEIGHT
    assert m.slide <= SLIDE
    assert m.placement_error <= PLACEMENT
    assert m.zmp_margin >= 0.0
    assert m.estimate_error <= ESTIMATE
    assert rig.standing()
    assert abs(left[0] - right[0]) <= FEET
