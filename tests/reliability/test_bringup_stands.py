"""The default simulation bringup stands, launch after launch, beside a CPU load (realtime).

Each launch is ``wbm launch launch/sim.launch.yaml`` with its defaults (realtime pacing, torque
mode), on our simulator or on MuJoCo, while a second process spins one of the machine's cores. The
robot side holds the initial posture from the first simulated instant (``hold_posture_at_start``)
until the controller's first command, which starts from the measured state; when the loaded
controller falls behind it answers the newest sample, and a command that does not come within
``command_timeout`` (20 ms) of the sample it answers hands back to the posture hold. Reference: the
true base height at t = 0, the initial posture standing on the ground (the initial state of the
same backend built in the test process: equal to the t = 0 pose of the launches, but known even
when the probe joins late). Standing means the base stays within 1 cm of it (the issue's figure)
over 2.5 s of simulated time from the first pose the probe hears: the controller's first command
comes at 0-0.8 s on a loaded machine, so from t = 0 this covers the hand-over and more than a
second of control after it (before the fix the falls started 0.2-1.2 s after the hand-over).
Under load the probe's DDS discovery of the new nodes can take seconds of wall time while the
realtime simulation runs on (a volatile probe heard its first pose at 2.2 s once, and at 2.94 s in
a fresh-clone run beside other work): the probe asks for the ground truth's transient-local
history (its last second), and the window starts at the first pose heard, at most
FIRST_POSE_LIMIT after t = 0, and a robot that had fallen or sagged before it would show at that
first pose (the reference is t = 0's height).
Three launches (our simulator twice, MuJoCo once) keep the wall time down;
``wbm_benchmark_launches`` runs the same check 20 times in a row.
"""

from __future__ import annotations

import numpy as np
import pytest
from reliability_helpers import Probe, assert_no_traceback, cpu_load, wbm_launch

from wbm_bringup.ros.benchmark_launches import initial_height

pytestmark = [pytest.mark.process, pytest.mark.slow]

SIM_SECONDS = 2.5
TOLERANCE = 0.01  # [m], the figure
WALL_TIMEOUT = 120.0  # [s] for start-up and 2.5 s of simulated time on a loaded 2-core machine
FIRST_POSE_LIMIT = 2.5  # [s] of simulated time: the latest first pose the window may start at


def launch_and_measure(robot_side: str) -> float:
    """Largest base height deviation from t = 0 over SIM_SECONDS from the first pose [m]."""
    probe = Probe()  # first, so that it hears the robot from t = 0
    launch = wbm_launch("sim.launch.yaml", f"robot_side:={robot_side}")
    try:
        probe.spin_until(
            lambda: bool(probe.poses) and probe.sim_time >= probe.poses[0][0] + SIM_SECONDS,
            WALL_TIMEOUT,
            f"{SIM_SECONDS} s of simulated time",
            launch,
        )
    finally:
        probe.close()
        code = launch.stop()
    assert code == 0, launch.output[-3000:]
    assert_no_traceback(launch.output)
    poses = np.array(probe.poses)
    # The probe may match the publisher late under load (module docstring); the reference is
    # the t = 0 state itself, built in process.
    first = poses[0, 0]
    assert first < FIRST_POSE_LIMIT, f"first pose at t = {first} s: missed the start"
    heights = poses[poses[:, 0] <= first + SIM_SECONDS, 3]
    return float(np.abs(heights - initial_height(robot_side)).max())


@pytest.mark.parametrize("robot_side", ["simulator", "mujoco", "simulator"])
def test_the_default_bringup_stands_within_1_cm_under_cpu_load(robot_side):
    with cpu_load():
        deviation = launch_and_measure(robot_side)
    assert deviation < TOLERANCE, f"base height moved {deviation * 100:.2f} cm"
