"""The G1 walking at 0.12 m/s takes 4 N s pushes: leftward, rightward, forward (issue 14).

Issue 14 takes the walking issue's criterion ("a push while walking: at least 4 N s sagittal and
4 N s lateral without a fall") to the G1, which walks at 0.12 m/s in our tests. Torque mode,
in-process (its estimator, no foot F/T: touch-downs from the joint torques), our compliant
simulator at 0.5 ms (test_g1_walk.py's docstring). One run per direction: 3 s of walking, then
4 N s (40 N for 0.1 s) on ``torso_link``, leftward at 3.0 s, rightward at 3.8 s or forward at
3.4 s, then 3 s more. No fall, and walking goes on: the mid-feet point advances more than 0.2 m
in the 3 s after the push (0.36 m undisturbed).

The lateral times are one phase and its mirror, half a stride (0.8 s) apart, the hardest phase
of each direction in the sweep (``python tools/walk_push_sweep.py --robot g1 --impulse 4 --start
3.0 --directions left,right,forward --phases 8 --jobs 1``: 8 of 8 phases walk on in each
direction; the largest DCM errors, 64.0 mm leftward at 3.0 s, just after the right foot's
lift-off, and 56.5 mm rightward at 3.8 s, at the end of the double support before the left
foot's; forward 26.3-27.6 mm at every phase). What makes 4 N s lateral hold are two settings of
config/g1 (README, "G1: lateral pushes while walking"): ``walking.zmp_inward_offset`` 0.015 m
(the single-support ZMP reference at the inner edge of its area: the walk's DCM stays inside the
stance sole, which a push towards the stance foot needs, the swing foot not crossing to catch
it) and step timing (``step_timing_weight`` 0.1: a DCM pushed out beyond the stance sole
shortens the swing). Without them, 6 s into the walk, 3 of 8 leftward and 3 of 8 rightward
pushes walked on (``--start 6.0``), with step timing alone 6 and 7 of 8, with the offset alone
3 and 4 of 8, with both 16 of 16; before, this test pushed 2 N s.

Measured (compliant, one run each, 49 s wall for the three, 49 s CPU, load 1-1.6; 52 s wall at
load 8-14, the same figures; the two cases at 2 N s took 40 s on a quiet machine): leftward /
rightward / forward advanced 0.402 / 0.400 / 0.308 m in the 3 s, slide 0.77 / 0.89 / 0.61 mm,
estimate error 1.8 / 2.3 / 2.0 mm, 7 / 8 / 7 touch-downs, all measured. Backward is not a case
here (the sweep from 6.0 s: 8 of 8 walk on, DCM errors 15.0-27.7 mm, as forward's). Compliant
only: on MuJoCo the sweep from 3 s walks on at 15 of 16 lateral pushes, but the leftward one at
3.0 s FELL (README, "G1: lateral pushes while walking").

Why 3 s (this test walked 6 s before the push at 2 N s, for the walk's start transient: the sway
on the side of the first step, decaying over ~5 steps, which made a 2 N s leftward push at 3 s
fall): with the two settings the sweep from 3.0 s walks on at every phase, so the three cases
cost the wall time the two cases of 6 s did.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from wbm_bringup.walking_rig import controller_settings, make_walking_rig
from wbm_control.walking import WalkingState
from wbm_description import WholeBodyModel, load_robot

pytestmark = pytest.mark.slow

G1_CONTROLLER = Path(__file__).resolve().parents[2] / "config" / "g1" / "controller.yaml"
DT = 5e-4  # engine step [s] (test_g1_walk.py)
SPEED = 0.12  # [m/s]
IMPULSE = 4.0  # [N s] (issue 12's criterion)
PUSH_DURATION = 0.1  # [s]
AFTER = 3.0  # walking after the push [s]
ADVANCE = 0.2  # [m] in AFTER: more than half of the undisturbed 0.36 m
PUSHES = {  # direction: (time after the start [s], unit direction (x, y) in the world)
    "left": (3.0, (0.0, 1.0)),
    "right": (3.8, (0.0, -1.0)),
    "forward": (3.4, (1.0, 0.0)),
}


@pytest.mark.parametrize("direction", sorted(PUSHES))
def test_g1_walking_takes_a_4_newton_second_push(direction):
    g1 = WholeBodyModel.from_config(load_robot("g1"))
    rig = make_walking_rig(g1, controller_settings(G1_CONTROLLER, "torque"), "compliant", dt=DT)
    rig.command("set_velocity_command", SPEED, 0.0, 0.0)
    when, unit = PUSHES[direction]
    rig.run(when)
    x_before = rig.mid_feet()[0]
    wrench = np.zeros(6)
    wrench[:2] = np.asarray(unit) * IMPULSE / PUSH_DURATION
    rig.engine.apply_wrench("torso_link", wrench, PUSH_DURATION)
    rig.run(AFTER)
    m = rig.metrics
    advanced = rig.mid_feet()[0] - x_before
    print(
        f"\nG1 {direction} {IMPULSE} N s at {when} s: fallen {m.fallen}, advanced {advanced:.3f} m"
        f" in {AFTER} s, slide {m.slide * 1e3:.2f} mm, estimate error"
        f" {m.estimate_error * 1e3:.1f} mm, {m.steps} steps {m.touchdowns}"
    )
    assert not m.fallen
    assert advanced > ADVANCE
    assert rig.behaviour.walking.state != WalkingState.STANDING
