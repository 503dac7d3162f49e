"""The controller node screens its joint_states: time going back, jumps, a restart (real process).

The unit test (``tests/reliability/test_joint_state_guard.py``) checks the guard's verdicts; this
one checks that the node acts on them. The test is the robot side (the first and only
``joint_states`` publisher, so the owner): it publishes a standing iCub's sensors, every input of
one sample with the same stamp (trigger ``inputs``: a complete sample is one control step), from
10 s of robot time on in 10 ms steps. Between two regular samples it slips in:

1. a sample stamped 0.2 s before the previous one (time going back, but not to near 0);
2. a sample 5 ms after the previous one with one joint 3 rad away (a jump: iCub's joints are
   limited to at most 10 rad/s here, and the guard allows that speed times the time since the
   last sample it took plus a 0.5 rad margin: 0.55 rad in 5 ms; 3 rad stays a jump even when the
   node's best-effort reader dropped the samples of the 250 ms before, as under load);
3. a sample stamped 20 ms (robot time restarted, as after a simulator ``reset``), after which
   the regular samples go on from there.

Expected, each from the node's own outputs: no ``joint_commands`` answers (carries the stamp of)
a rejected sample, the regular samples after it are answered, the log names the reason, and
``diagnostics`` report the rejections by kind; the restart is answered and logged as a reset of
the controller. Stamps are compared exactly (integer nanoseconds, as the node echoes them).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time

import numpy as np
import pytest
import rclpy
from control_helpers import CONTROLLER_YAML, REPO, interrupt_node, readings_from_state, spin_until
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import WrenchStamped
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Imu, JointState

from wbm_description.ros.messages import joint_state_message, time_from_seconds, wrench_message

pytestmark = [pytest.mark.process]

PERIOD = 0.01  # [s] between regular samples, of robot time and (by the timer) of wall time
START = 10.0  # [s] robot time of the first sample (far from the restart window near 0)


def nanoseconds(seconds: float) -> int:
    stamp = time_from_seconds(seconds)
    return stamp.sec * 1_000_000_000 + stamp.nanosec


class StampedRobotSide(Node):
    """Publishes a standing iCub's sensors with stamps; records commands and diagnostics."""

    def __init__(self, model):
        super().__init__("stamped_robot_side_of_test")
        self.model = model
        qos = QoSProfile(depth=5, reliability=ReliabilityPolicy.RELIABLE)
        self.joint_pub = self.create_publisher(JointState, "joint_states", qos)
        self.imu_pub = self.create_publisher(Imu, "imu", qos)
        self.ft_pubs = {
            s.name: self.create_publisher(WrenchStamped, f"ft/{s.name}", qos)
            for s in model.config.ft_sensors
        }
        self.sensor_frames = {s.name: s.frame for s in model.config.ft_sensors}
        self.answered: list[int] = []  # stamps of the commands received [ns]
        self.diagnostics: list[DiagnosticArray] = []
        self.create_subscription(JointState, "joint_commands", self._on_command, 100)
        self.create_subscription(DiagnosticArray, "diagnostics", self.diagnostics.append, 100)
        q = model.initial_configuration()
        _, wrenches = model.static_contact_torques(q, ["l_sole", "r_sole"])
        self.readings = readings_from_state(
            model, q, np.zeros(model.nv),
            {"left_foot": wrenches["l_sole"], "right_foot": wrenches["r_sole"]},
        )  # fmt: skip
        self.next_time = START
        self.paused = False
        self.published: list[int] = []  # stamps of the regular samples [ns]
        self.create_timer(PERIOD, self.publish_next)

    def _on_command(self, message: JointState) -> None:
        stamp = message.header.stamp
        self.answered.append(stamp.sec * 1_000_000_000 + stamp.nanosec)

    def slip_in(self, executor, t: float, positions: np.ndarray | None = None) -> None:
        """Publish one extra sample and no regular one for 1 s of wall time.

        The node's reader is best effort and takes the newest sample: a regular sample right
        behind the slipped one could replace it before it is taken (seen under load).
        """
        self.paused = True
        self.publish_sample(t, positions)
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.05)
        self.paused = False

    def publish_next(self) -> None:
        if self.paused:
            return
        self.publish_sample(self.next_time)
        self.published.append(nanoseconds(self.next_time))
        self.next_time += PERIOD

    def publish_sample(self, t: float, positions: np.ndarray | None = None) -> None:
        r = self.readings
        stamp = time_from_seconds(t)
        joints = joint_state_message(
            list(self.model.joint_names),
            r.joint_positions if positions is None else positions,
            r.joint_velocities,
            r.joint_efforts,
        )
        joints.header.stamp = stamp
        imu = Imu()
        imu.header.stamp = stamp
        x, y, z, w = r.imu.orientation_xyzw
        imu.orientation.x, imu.orientation.y, imu.orientation.z, imu.orientation.w = x, y, z, w
        imu.linear_acceleration.z = 9.81
        wrenches = []
        for name in self.ft_pubs:
            message = WrenchStamped()
            message.header.stamp = stamp
            message.header.frame_id = self.sensor_frames[name]
            message.wrench = wrench_message(r.wrenches[name])
            wrenches.append((name, message))
        # joint_states last: the inputs of one stamp complete when all have come, in any order.
        self.imu_pub.publish(imu)
        for name, message in wrenches:
            self.ft_pubs[name].publish(message)
        self.joint_pub.publish(joints)


def guard_counts(robot: StampedRobotSide) -> dict[str, str]:
    """The last joint_states report's values (``rejected/<kind>`` -> count)."""
    for array in reversed(robot.diagnostics):
        for status in array.status:
            if status.name == "wbm_controller/joint_states":
                return {v.key: v.value for v in status.values}
    return {}


def test_the_node_ignores_time_going_back_and_jumps_and_restarts_on_a_reset(icub, tmp_path):
    env = dict(os.environ)
    env.setdefault("ROS_DOMAIN_ID", str(random.randint(1, 200)))
    env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    os.environ["ROS_DOMAIN_ID"] = env["ROS_DOMAIN_ID"]
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    log_path = tmp_path / "controller.log"
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            [
                sys.executable, "-m", "wbm_control.ros.controller_node", "--ros-args",
                "--params-file", str(CONTROLLER_YAML),
                "-p", "control_rate:=100.0", "-p", "stale_timeout:=2.0", "-p", "mode:=torque",
                "-p", "trigger:=inputs",
            ],
            env=env, stdout=log, stderr=subprocess.STDOUT, cwd=REPO,
        )  # fmt: skip
    rclpy.init()
    try:
        robot = StampedRobotSide(icub)
        executor = rclpy.executors.SingleThreadedExecutor()
        executor.add_node(robot)
        assert spin_until(executor, lambda: len(robot.answered) > 20, 60.0), log_path.read_text()
        # The diagnostics reader is matched too (volatile: a report published before the match
        # is lost; under load the match came after the rejections' reports, and the test failed).
        assert spin_until(executor, lambda: robot.diagnostics, 30.0), "no diagnostics heard"
        # Every command answers a sample that was published (the node echoes its stamp).
        assert set(robot.answered) <= set(robot.published)

        def answered_after(stamp_ns: int, count: int = 5) -> bool:
            return sum(s > stamp_ns for s in robot.answered) >= count

        # 1. Time going back by 0.2 s (the regular sample of that time may have been answered
        # 20 samples ago: the slipped one must not add an answer of its stamp).
        last = robot.next_time - PERIOD
        back = last - 0.2
        answers_of_back = robot.answered.count(nanoseconds(back))
        robot.slip_in(executor, back)
        assert spin_until(executor, lambda: answered_after(nanoseconds(last)), 10.0)
        assert robot.answered.count(nanoseconds(back)) == answers_of_back
        # The previous stamp the node names is the last sample it took (under load its
        # best-effort reader may have dropped the latest regular ones).
        going_back = f"joint_states stamp {back:.3f} s before the previous"

        # 2. A 3 rad jump of one joint, 5 ms after the last regular sample (a new stamp).
        positions = robot.readings.joint_positions.copy()
        positions[0] += 3.0
        jump = robot.next_time - PERIOD + 0.005
        robot.slip_in(executor, jump, positions)
        assert spin_until(executor, lambda: answered_after(nanoseconds(jump)), 10.0)
        assert nanoseconds(jump) not in robot.answered

        # 3. Robot time restarts at 20 ms: the controller starts again and answers the regular
        # samples from there (the restart sample itself completes no sample: the inputs forget
        # the stamps that came before its joint_states).
        robot.next_time = 0.02
        restarted = nanoseconds(START / 2)  # stamps after the restart stay below it for 5 s
        assert spin_until(
            executor, lambda: sum(s < restarted for s in robot.answered) >= 5, 4.0
        ), log_path.read_text()[-3000:]

        # Diagnostics report the rejections by kind (every 0.5 s at most, on a rejection).
        assert spin_until(
            executor,
            lambda: {"rejected/time going back", "rejected/jump"} <= set(guard_counts(robot)),
            5.0,
        ), "\n".join(
            [
                repr((s.message, [(v.key, v.value) for v in s.values]))
                for a in robot.diagnostics
                for s in a.status
                if s.name == "wbm_controller/joint_states"
            ]
            + [str(sum(s < restarted for s in robot.answered))]
            + log_path.read_text().splitlines()
        )
        counts = guard_counts(robot)
        assert counts["rejected/time going back"] == "1"
        assert counts["rejected/jump"] == "1"
        assert process.poll() is None
    finally:
        rclpy.shutdown()
        interrupt_node(process)
    output = log_path.read_text()
    assert going_back in output, output[-3000:]
    assert f"joint_states jump: {icub.joint_names[0]} moved 3.000 rad in" in output, output[-3000:]
    assert "robot time restarted" in output and "controller reset" in output, output[-3000:]
    assert process.returncode == 0, output[-3000:]
