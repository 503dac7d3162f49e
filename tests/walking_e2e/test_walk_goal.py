"""iCub walking in closed loop (torque mode, our compliant simulator): a goal pose.

(The issue's 4 N s pushes while walking at 0.2 m/s do not pass yet: the robot falls; see the
issue's notes.)

- A goal pose (0.4 m ahead, 0.2 m left, turned 90 degrees): the robot stops in double support with
  the mid-feet frame within 5 cm and 5 degrees of it (issue 12), the feet side by side.
"""

from __future__ import annotations

import math

import pytest

from wbm_bringup.walking_rig import controller_settings, make_walking_rig

pytestmark = pytest.mark.slow

IMPULSE = 4.0  # [N s] issue 12
PUSH_DURATION = 0.1  # [s]
SLIDE = 5e-3  # [m] issue 12


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
