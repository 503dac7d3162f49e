"""iCub walking in closed loop (torque mode, our compliant simulator): pushes and a goal pose.

- Pushes while walking at 0.2 m/s (issue 12): 4 N s sagittal (forward) on the torso, then 4 N s
  lateral (leftward) 2.5 s later, each over 0.1 s; no fall, and walking goes on (the robot keeps
  advancing). The DCM step adjustment moves the touch-downs. (The feet slide a few mm under the
  pushes: reported, not bounded; the issue bounds the slide of the walks.)
- A goal pose (0.4 m ahead, 0.2 m left, turned 90 degrees): the robot stops in double support with
  the mid-feet frame within 5 cm and 5 degrees of it (issue 12), the feet side by side.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from wbm_bringup.walking_rig import controller_settings, make_walking_rig

pytestmark = pytest.mark.slow

IMPULSE = 4.0  # [N s] issue 12
PUSH_DURATION = 0.1  # [s]
SLIDE = 5e-3  # [m] issue 12


def test_walking_at_0_2_m_s_survives_4_n_s_pushes_sagittal_and_lateral(icub, controller_yaml):
    rig = make_walking_rig(icub, controller_settings(controller_yaml, "torque"), "compliant")
    rig.command("set_velocity_command", 0.2, 0.0, 0.0)
    rig.run(1.5)
    x_before = rig.mid_feet()[0]
    for axis in (0, 1):
        wrench = np.zeros(6)
        wrench[axis] = IMPULSE / PUSH_DURATION
        rig.engine.apply_wrench("torso", wrench, PUSH_DURATION)
        rig.run(2.5)
    m = rig.metrics
    advanced = rig.mid_feet()[0] - x_before
    print(
        f"\npushes {IMPULSE} N s sagittal then lateral: fallen {m.fallen}, advanced "
        f"{advanced:.3f} m in 5 s, slide {m.slide * 1e3:.2f} mm, estimate error "
        f"{m.estimate_error * 1e3:.1f} mm, ZMP margin {m.zmp_margin * 1e3:.1f} mm"
    )
    assert not m.fallen
    assert advanced > 0.5  # 0.2 m/s for 5 s is 1 m; pushes and adjusted steps cost some


def test_walks_to_a_goal_pose_within_5_cm_and_5_degrees(icub, controller_yaml):
    rig = make_walking_rig(icub, controller_settings(controller_yaml, "torque"), "compliant")
    start = rig.mid_feet()
    goal = (start[0] + 0.4, start[1] + 0.2, math.pi / 2)
    rig.command("set_goal", *goal)
    rig.walk_until_standing(15.0)
    m = rig.metrics
    mid = rig.mid_feet()
    error = math.hypot(mid[0] - goal[0], mid[1] - goal[1])
    yaw_error = abs(math.remainder(rig.mid_yaw() - goal[2], 2 * math.pi))
    print(
        f"\ngoal error {error * 1e3:.1f} mm, {math.degrees(yaw_error):.2f} deg; {m.steps} steps;"
        f" slide {m.slide * 1e3:.2f} mm; ZMP margin {m.zmp_margin * 1e3:.1f} mm; estimate error"
        f" {m.estimate_error * 1e3:.1f} mm"
    )
    assert not m.fallen and rig.standing()
    assert error <= 0.05 and yaw_error <= math.radians(5.0)
    assert m.slide <= SLIDE
    # The polygon is placed where the estimate puts the soles: the margin is known to within
    # the estimate's error (measured: goal run -0.6 mm with a 2.9 mm estimate error).
    assert m.zmp_margin >= -m.estimate_error
