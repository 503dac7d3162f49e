"""The same controller and walking on the other engines: 1 m forward, then stop.

Our simulator with rigid contact (Coulomb cones) and MuJoCo in torque mode (the compliant torque
mode walks 3 m in test_walk_forward.py). Each run: the command, 1 m of walking, the zero command;
no fall, the held soles slide at most 5 mm, the base estimate within 2 cm of the truth, every
touch-down measured by the ankle F/T, and the robot standing at the end with its feet side by
side. Measured on the loaded 2-core machine: rigid 1 m in 5.06 s, slide 0.31 mm, ZMP margin
5.4 mm, estimate error 1.2 mm (212 s wall); MuJoCo 1 m in 4.87 s, slide 2.34 mm, ZMP margin
5.8 mm, estimate error 8.3 mm (62 s wall).
"""

from __future__ import annotations

import pytest

from wbm_bringup.walking_rig import controller_settings, make_walking_rig

pytestmark = pytest.mark.slow

DISTANCE = 1.0  # [m]
SLIDE = 5e-3  # issue 12 [m]
ESTIMATE = 0.02  # [m], as in test_walk_forward.py


@pytest.mark.parametrize(
    ("engine", "mode", "speed"),
    [("rigid", "torque", 0.25), ("mujoco", "torque", 0.25)],
)
def test_walks_a_metre_and_stops(icub, controller_yaml, engine, mode, speed):
    rig = make_walking_rig(icub, controller_settings(controller_yaml, mode), engine)
    rig.command("set_velocity_command", speed, 0.0, 0.0)
    start = rig.engine.time
    rig.run(DISTANCE / speed + 3.0, until=lambda: rig.mid_feet()[0] >= DISTANCE)
    elapsed = rig.engine.time - start
    reached = rig.mid_feet()[0]
    rig.behaviour.stop()
    rig.walk_until_standing(4.0)
    m = rig.metrics
    left, right = rig.sole_position("left_foot"), rig.sole_position("right_foot")
    print(
        f"\n{engine} {mode}: {reached:.2f} m in {elapsed:.2f} s ({reached / elapsed:.3f} m/s); "
        f"slide {m.slide * 1e3:.2f} mm; ZMP margin {m.zmp_margin * 1e3:.1f} mm; estimate error "
        f"{m.estimate_error * 1e3:.1f} mm; placement error {m.placement_error * 1e3:.1f} mm; "
        f"touch-downs {m.touchdowns}"
    )
    assert not m.fallen
    assert reached >= DISTANCE
    assert m.slide <= SLIDE
    # Every touch-down measured by the ankle F/T sensors, none by the clock or a timeout.
    assert m.steps > 0 and set(m.touchdowns) <= {"touchdown", "early_touchdown"}, m.touchdowns
    assert m.estimate_error <= ESTIMATE
    assert rig.standing()
    assert abs(left[0] - right[0]) <= 0.01
