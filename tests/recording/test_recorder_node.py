"""The recorder node as its own process: what it writes is a rosbag2 with MCAP storage that
rosbags (the reader ros2 bag and Foxglove agree with) reads back message for message."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
import rclpy
from rclpy.qos import DurabilityPolicy, QoSProfile
from rosbags.highlevel import AnyReader
from rosbags.typesys import Stores, get_typestore
from sensor_msgs.msg import JointState
from std_msgs.msg import String

pytestmark = pytest.mark.process


def test_records_topics_into_mcap(tmp_path):
    bag = tmp_path / "bag"
    recorder = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "wbm_bringup.ros.recorder_node",
            "--ros-args",
            "-p",
            f"output:={bag}",
            "-p",
            "discovery_period:=0.1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    rclpy.init()
    node = rclpy.create_node("recorder_test_publisher")
    try:
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        description = node.create_publisher(String, "robot_description", latched)
        description.publish(String(data="<robot name='r'/>"))
        joints = node.create_publisher(JointState, "joint_states", 10)
        # Wait until the recorder subscribes to both topics.
        end = time.monotonic() + 20.0
        while time.monotonic() < end and (
            joints.get_subscription_count() == 0 or description.get_subscription_count() == 0
        ):
            rclpy.spin_once(node, timeout_sec=0.05)
        assert joints.get_subscription_count() > 0, "the recorder did not subscribe"
        assert description.get_subscription_count() > 0, "the recorder did not subscribe"
        time.sleep(0.3)
        for i in range(50):
            message = JointState(name=["a"], position=[float(i)])
            joints.publish(message)
            time.sleep(0.005)
        time.sleep(0.5)
    finally:
        node.destroy_node()
        rclpy.shutdown()
        recorder.send_signal(signal.SIGINT)
        output, _ = recorder.communicate(timeout=20)
    assert recorder.returncode == 0, output
    assert (bag / "metadata.yaml").is_file()
    mcap_files = [name for name in os.listdir(bag) if name.endswith(".mcap")]
    assert len(mcap_files) == 1
    with open(bag / mcap_files[0], "rb") as handle:
        assert handle.read(8) == b"\x89MCAP0\r\n"  # the MCAP magic
    typestore = get_typestore(Stores.ROS2_KILTED)
    with AnyReader([bag], default_typestore=typestore) as reader:
        by_topic = {}
        for connection, _, raw in reader.messages():
            by_topic.setdefault(connection.topic, []).append(
                reader.deserialize(raw, connection.msgtype)
            )
    positions = [m.position[0] for m in by_topic["/joint_states"]]
    assert positions == [float(i) for i in range(50)]
    assert by_topic["/robot_description"][0].data == "<robot name='r'/>"
