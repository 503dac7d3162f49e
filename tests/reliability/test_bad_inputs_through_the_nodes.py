"""Well-formed but wrong inputs, through the nodes of the simulation bringup (lockstep).

One launch of ``sim.launch.yaml`` in lockstep (deterministic: the simulator advances one control
period per command), then, from outside as any other node would:

1. one ``joint_commands`` message of 1e9 N m on every joint: the robot interface rejects it with
   a log naming the joint and its torque limit (no control period at full torque);
2. a second ``joint_states`` publisher sending plausible positions (the initial posture bent by
   0.1 rad) with current stamps for 1 s of wall time: the controller ignores it (publisher GID),
   says so in a log and in ``diagnostics``;
3. a push that knocks iCub over, then the simulator's ``reset``: the controller sees time go
   back to 0, resets its estimator and references, and the robot stands again.

Reference: the true base height at t = 0 (initial posture on the ground). Standing: within 3 cm
of it (a fall drops it by tens of centimetres; balance keeps it within millimetres).
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from geometry_msgs.msg import WrenchStamped
from rclpy.qos import QoSProfile, ReliabilityPolicy
from reliability_helpers import Probe, assert_no_traceback, wbm_launch
from sensor_msgs.msg import JointState

from wbm_description.registry import load_robot
from wbm_description.ros.messages import time_from_seconds
from wbm_description.whole_body_model import WholeBodyModel

pytestmark = [pytest.mark.process, pytest.mark.slow]

STANDING = 0.03  # [m], see the module docstring
WALL_TIMEOUT = 150.0  # [s] per phase on a loaded 2-core machine


def heights_between(probe: Probe, start: float, end: float) -> np.ndarray:
    poses = np.array(probe.poses)
    return poses[(poses[:, 0] >= start) & (poses[:, 0] <= end), 3]


def test_a_1e9_effort_a_rogue_publisher_and_a_reset_leave_icub_standing():
    model = WholeBodyModel.from_config(load_robot("icub"))
    probe = Probe()
    launch = wbm_launch("sim.launch.yaml", "pacing:=lockstep")
    reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
    commands = probe.node.create_publisher(JointState, "joint_commands", reliable)
    rogue = probe.node.create_publisher(JointState, "joint_states", reliable)
    pushes = probe.node.create_publisher(WrenchStamped, "apply_wrench", reliable)
    try:
        # The poses too: under load the odometry subscription can match after /clock's, and
        # then its transient local history (the last second) arrives later than 1 s of clock.
        probe.spin_until(
            lambda: probe.sim_time >= 1.0 and probe.poses, WALL_TIMEOUT, "1 s and a pose", launch
        )
        z0 = probe.poses[0][3]

        # 1. One message of 1e9 N m on every joint.
        message = JointState(name=list(model.joint_names), effort=[1e9] * model.ndof)
        commands.publish(message)
        launch.wait_for_output(r"joint_commands rejected.*effort\[\w+\].*torque limit", 30)
        t1 = probe.sim_time
        probe.spin_until(lambda: probe.sim_time >= t1 + 1.0, WALL_TIMEOUT, "1 s more", launch)
        assert np.abs(heights_between(probe, 0.0, probe.sim_time) - z0).max() < STANDING

        # 2. A rogue joint_states publisher for 1 s of wall time.
        bent = model.joint_positions(model.initial_configuration()) + 0.1
        t2 = probe.sim_time
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            sample = JointState(
                name=list(model.joint_names),
                position=bent.tolist(),
                velocity=[0.0] * model.ndof,
                effort=[0.0] * model.ndof,
            )
            sample.header.stamp = time_from_seconds(probe.sim_time)
            rogue.publish(sample)
            probe.spin_for(0.005)
        # The poses up to then too: a probe in normal scheduling beside a lockstep loop in
        # SCHED_FIFO (its hand-over threads) on a loaded machine takes the odometry's deeper
        # queue later than /clock's newest sample.
        probe.spin_until(
            lambda: probe.sim_time >= t2 + 1.5 and probe.poses[-1][0] >= t2 + 1.5,
            WALL_TIMEOUT,
            "1.5 s more",
            launch,
        )
        assert np.abs(heights_between(probe, t2, probe.sim_time) - z0).max() < STANDING
        # The log and the diagnostics reach this process through pipes and topics read by
        # normal-priority threads, which may lag the loop's SCHED_FIFO threads under load.
        launch.wait_for_output(r"joint_states from a second publisher", 30)

        def reports() -> list:
            return [
                status
                for array in probe.diagnostics
                for status in array.status
                if status.name == "wbm_controller/joint_states"
            ]

        probe.spin_until(lambda: reports(), WALL_TIMEOUT, "the joint_states diagnostics", launch)
        reports = reports()
        assert reports and "second publisher" in reports[0].message
        assert any(v.key == "rejected/second publisher" for v in reports[0].values)

        # 3. Knocked over, then reset: the controller starts again and the robot stands.
        t3 = probe.sim_time
        push = WrenchStamped()
        push.header.frame_id = "chest"
        push.wrench.force.x = 600.0  # 60 N s in 0.1 s: far beyond what balance catches
        pushes.publish(push)
        probe.spin_until(
            lambda: probe.poses[-1][0] > t3 and probe.poses[-1][3] < z0 - 0.1,
            WALL_TIMEOUT,
            "the fall",
            launch,
        )
        answer = probe.call_trigger("reset")
        assert answer.success, answer.message
        probe.poses.clear()
        probe.spin_until(
            lambda: probe.poses and probe.poses[-1][0] >= 2.0 and probe.sim_time < t3,
            WALL_TIMEOUT,
            "2 s after the reset",
            launch,
        )
        launch.wait_for_output(r"robot time restarted", 10)
        after = heights_between(probe, 0.0, 2.0)
        assert len(after) > 10 and np.abs(after - z0).max() < STANDING, after.min()
    finally:
        probe.close()
        code = launch.stop()
    assert code == 0, launch.output[-3000:]
    assert_no_traceback(launch.output)
