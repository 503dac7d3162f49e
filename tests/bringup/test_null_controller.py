"""The null controller of ``wbm_benchmark_bringup --controller-loop`` (a real process over DDS).

It is the benchmark's floor only if it answers exactly as the controller node does in trigger
``inputs``: one ``joint_commands`` per complete sample, with the sample's stamp, after every
robot topic of that stamp arrived, and none for a sample with a topic missing.
"""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np
import rclpy
from geometry_msgs.msg import WrenchStamped
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Imu, JointState

NAMES = ["hip", "knee", "ankle"]


def _stamped(message, stamp_ns: int):
    message.header.stamp.sec, message.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
    return message


def test_answers_each_complete_sample_with_its_stamp_and_positions():
    child = subprocess.Popen(
        [sys.executable, "-m", "wbm_bringup.ros.null_controller", "--ft", "l", "r"],
        stdin=subprocess.DEVNULL,
    )
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("null_controller_probe", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    try:
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        joint_states = node.create_publisher(JointState, "joint_states", reliable)
        imu = node.create_publisher(Imu, "imu", reliable)
        ft = {s: node.create_publisher(WrenchStamped, f"ft/{s}", reliable) for s in "lr"}
        commands: list[JointState] = []
        node.create_subscription(JointState, "joint_commands", commands.append, reliable)
        publishers = [joint_states, imu, *ft.values()]

        def spin_until(condition, timeout: float) -> bool:
            end = time.monotonic() + timeout
            while time.monotonic() < end and not condition():
                executor.spin_once(timeout_sec=0.05)
            return condition()

        matched = spin_until(
            lambda: (
                all(p.get_subscription_count() == 1 for p in publishers)
                and node.count_publishers("joint_commands") == 1
            ),
            60.0,
        )
        assert matched, "the null controller's subscriptions and publisher never matched"

        def sample(stamp_ns: int, positions, skip: str = "") -> None:
            state = JointState(name=NAMES, position=list(positions))
            state.velocity = [0.0] * 3
            state.effort = [0.0] * 3
            joint_states.publish(_stamped(state, stamp_ns))
            imu.publish(_stamped(Imu(), stamp_ns))
            for name, publisher in ft.items():
                if name != skip:
                    publisher.publish(_stamped(WrenchStamped(), stamp_ns))

        sample(1_000_000_000, [0.1, -0.2, 0.3])
        assert spin_until(lambda: len(commands) == 1, 20.0)
        sample(1_002_000_000, [0.4, 0.5, 0.6], skip="r")  # incomplete: no answer
        sample(1_004_000_000, [0.7, 0.8, -0.9])
        assert spin_until(lambda: len(commands) >= 2, 20.0)
        spin_until(lambda: False, 0.5)  # an answer to the incomplete sample would come now
        stamps = [c.header.stamp.sec * 1_000_000_000 + c.header.stamp.nanosec for c in commands]
        assert stamps == [1_000_000_000, 1_004_000_000]
        for command, positions in zip(commands, ([0.1, -0.2, 0.3], [0.7, 0.8, -0.9]), strict=True):
            assert list(command.name) == NAMES
            np.testing.assert_array_equal(command.position, positions)  # copied, bit for bit
            np.testing.assert_array_equal(command.velocity, np.zeros(3))
            np.testing.assert_array_equal(command.effort, np.zeros(3))
    finally:
        child.send_signal(2)
        try:
            _, err = child.communicate(timeout=10.0)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown(context=context)
    assert child.returncode == 0
