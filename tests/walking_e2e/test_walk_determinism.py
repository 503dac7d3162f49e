"""Two walking rigs built the same way and run the same walk follow the same trajectory.

Measured before the fix: the same push test advanced 0.864 m in one run and 0.842 m in another.
The cause: proxsuite 0.8's dense solver returns solutions that differ by 4.3e-12 (the
whole-body QP of the first control step, solved again with the heap perturbed between solves:
5 of 12 solves differ) with the heap alignment of its workspace, i.e. with whatever the process
allocated before (another rig, another test, another hash seed). Two rigs in one process
differed by 5.5e-12 m after 2 s of walking, two processes with other hash seeds by 1.8e-12 m
from the first sample; the closed loop's contact switches and thresholds grow such differences
into different runs. The torque mode's and the pattern generator's QPs are now polished on
their active set (:func:`wbm_control.qp.polish_on_active_set`; the active set read with a
1e-7 relative threshold: reading it at 0 flipped and grew differences to 5e-5 m in 1 s); the
base estimator iterates the soles in the config's order rather than a set's.

After the fix, measured: two rigs in one process identical to the last bit; two processes with
different PYTHONHASHSEED within 5e-14 m over 3 s. The test runs the second rig after the first
(another heap) through the first touch-down and asks for 1e-12 m. 75 s wall loaded (25 s CPU).
"""

from __future__ import annotations

import numpy as np
import pytest

from wbm_bringup.walking_rig import controller_settings, make_walking_rig

pytestmark = pytest.mark.slow

WALK = 1.3  # [s] from the end of the CoM lowering: past the first touch-down (about 1.1 s)
TOLERANCE = 1e-12  # [m, rad]: rounding; what the heap did before the fix was 5e-12 in 2 s


def test_two_rigs_walk_the_same_trajectory(icub, controller_yaml):
    trajectories, touchdowns = [], []
    for _ in range(2):
        rig = make_walking_rig(
            icub, controller_settings(controller_yaml, "torque"), "compliant", stand=0.3
        )
        rig.record_trace = True
        rig.command("set_velocity_command", 0.2, 0.0, 0.0)
        rig.run(WALK)
        trajectories.append(np.array([sample["base"] for sample in rig.trace]))
        touchdowns.append(rig.metrics.steps)
    first, second = trajectories
    difference = float(np.max(np.abs(first - second)))
    print(f"\nbase trajectories: {len(first)} samples, largest difference {difference:.3e}")
    assert touchdowns[0] >= 1 and touchdowns == touchdowns[::-1]
    assert first.shape == second.shape
    assert difference <= TOLERANCE
