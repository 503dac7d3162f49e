"""The controller node with G1's parameter file, as a real process: which inputs it requires.

The G1 has no F/T sensors: the node requires ``joint_states`` and ``imu`` only (from the robot
config), controls with them (torques for all 29 joints, an estimated ZMP and no measured one in
its diagnostics), and when the IMU stops its safe-hold reason names ``imu`` and nothing else.
The robot side here publishes a G1 standing still: joint_states with the static joint torques of
both soles as effort (``static_contact_torques``), and the pelvis IMU's orientation.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys

import numpy as np
import pytest
import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Imu, JointState

from tests.control.control_helpers import interrupt_node, readings_from_state, spin_until
from wbm_bringup.share import config_directory
from wbm_control.ros.messages import diagnostic_values
from wbm_description.ros.messages import joint_state_message

pytestmark = [pytest.mark.process]

RATE = 100.0  # control rate of the node under test [Hz] (cheap on a shared 2-core machine)
STALE = 0.3  # its stale_timeout [s]


class StandingG1(Node):
    """Publishes joint_states and (while ``imu_on``) imu of a G1 standing still."""

    def __init__(self, model):
        super().__init__("standing_g1_of_test")
        qos = QoSProfile(depth=5, reliability=ReliabilityPolicy.BEST_EFFORT)
        self.model = model
        self.joint_pub = self.create_publisher(JointState, "joint_states", qos)
        self.imu_pub = self.create_publisher(Imu, "imu", qos)
        self.commands: list[JointState] = []
        self.diagnostics: list[DiagnosticArray] = []
        self.create_subscription(JointState, "joint_commands", self.commands.append, 10)
        self.create_subscription(DiagnosticArray, "diagnostics", self.diagnostics.append, 10)
        q = model.initial_configuration()
        self.efforts, _ = model.static_contact_torques(q, ["left_sole", "right_sole"])
        self.readings = readings_from_state(model, q, np.zeros(model.nv), {})
        self.imu_on = True
        self.create_timer(1.0 / RATE, self.publish)

    def publish(self):
        r = self.readings
        self.joint_pub.publish(
            joint_state_message(
                list(self.model.joint_names), r.joint_positions, r.joint_velocities, self.efforts
            )
        )
        if self.imu_on:
            imu = Imu()
            x, y, z, w = r.imu.orientation_xyzw
            imu.orientation.x, imu.orientation.y, imu.orientation.z, imu.orientation.w = x, y, z, w
            imu.linear_acceleration.z = 9.81
            self.imu_pub.publish(imu)


def test_g1_controller_requires_joint_states_and_imu_only(g1, tmp_path):
    env = dict(os.environ)
    env.setdefault("ROS_DOMAIN_ID", str(random.randint(1, 200)))
    env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    os.environ.update({k: env[k] for k in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE")})
    log_path = tmp_path / "controller.log"
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            [
                sys.executable, "-m", "wbm_control.ros.controller_node", "--ros-args",
                "--params-file", str(config_directory("g1") / "controller.yaml"),
                "-p", f"control_rate:={RATE}", "-p", f"stale_timeout:={STALE}",
            ],
            env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    rclpy.init()
    try:
        robot = StandingG1(g1)
        executor = rclpy.executors.SingleThreadedExecutor()
        executor.add_node(robot)

        def last_values():
            return diagnostic_values(robot.diagnostics[-1]) if robot.diagnostics else {}

        # Controls without any ft/* topic: torques for every joint, the ZMP estimated.
        assert spin_until(
            executor,
            lambda: robot.commands and len(robot.commands[-1].effort) == g1.ndof,
            60.0,
        ), log_path.read_text()
        assert spin_until(executor, lambda: "zmp_estimated" in last_values(), 10.0), sorted(
            last_values().items()
        )
        values = last_values()
        assert "zmp_measured" not in values
        zmp = np.array([float(x) for x in values["zmp_estimated"].split()])
        com = g1.com_position(g1.initial_configuration())
        # Standing still: the static closed form, the CoM's ground projection (0.1 mm: the
        # estimator's rounding of the IMU quaternion and the message's 6 digits).
        np.testing.assert_allclose(zmp[:2], com[:2], atol=1e-4)
        # The IMU stops: safe hold, and the reason names imu alone.
        robot.imu_on = False
        assert spin_until(
            executor,
            lambda: (
                robot.diagnostics
                and robot.diagnostics[-1].status[0].level == DiagnosticStatus.WARN
            ),
            10.0,
        )
        reason = robot.diagnostics[-1].status[0].message
        assert reason == "stale inputs: imu", reason
        robot.imu_on = True
        assert spin_until(
            executor,
            lambda: robot.diagnostics[-1].status[0].level == DiagnosticStatus.OK,
            10.0,
        )
        assert process.poll() is None
    finally:
        rclpy.shutdown()
        interrupt_node(process)
    assert process.returncode == 0, log_path.read_text()
