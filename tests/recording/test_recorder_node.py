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

from wbm_bringup.demo.report import read_clock_span

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


def recorder_process(*parameters: str) -> subprocess.Popen:
    arguments = [item for parameter in parameters for item in ("-p", parameter)]
    return subprocess.Popen(
        [sys.executable, "-m", "wbm_bringup.ros.recorder_node", "--ros-args", *arguments],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.mark.parametrize("case", ["no_output", "existing_output", "bad_period"])
def test_bad_parameters_stop_it_at_start(tmp_path, case):
    if case == "no_output":
        recorder = recorder_process()
        fragments = ["key 'output'", "a directory to create"]
    elif case == "existing_output":
        recorder = recorder_process(f"output:={tmp_path}")
        fragments = ["key 'output'", str(tmp_path)]
    else:
        recorder = recorder_process(f"output:={tmp_path / 'bag'}", "discovery_period:=0.0")
        fragments = ["key 'discovery_period'", "a number > 0"]
    output, _ = recorder.communicate(timeout=60)
    assert recorder.returncode == 2, output
    lines = [line for line in output.splitlines() if line.startswith("wbm_recorder: error:")]
    assert len(lines) == 1 and "Traceback" not in output, output
    for fragment in fragments:
        assert fragment in lines[0], output
    assert not (tmp_path / "bag").exists()


def test_sigterm_closes_the_bag(tmp_path):
    bag = tmp_path / "bag"
    recorder = recorder_process(f"output:={bag}", "discovery_period:=0.1")
    try:
        end = time.monotonic() + 30.0
        while time.monotonic() < end and not bag.exists():
            time.sleep(0.05)
        assert bag.exists(), "the recorder did not open the bag"
        time.sleep(0.5)
    finally:
        recorder.send_signal(signal.SIGTERM)
        output, _ = recorder.communicate(timeout=20)
    assert recorder.returncode == 0, output
    assert "Traceback" not in output, output
    assert f"wbm_recorder: wrote {bag}" in output
    assert (bag / "metadata.yaml").is_file()


def test_sim_time_log_times_and_nothing_lost_at_the_stop(tmp_path):
    """Under use_sim_time each message's log time is the /clock published just before it (the
    sim time the recorder's clock read when it arrived), and a burst published just before
    SIGINT, still queued (one wake-up per 2 s), is written before the bag closes."""
    from rosgraph_msgs.msg import Clock

    bag = tmp_path / "bag"
    recorder = recorder_process(
        f"output:={bag}",
        "discovery_period:=0.1",
        "batch_period:=0.5",
        "use_sim_time:=true",
        "topics:=['/chatter']",
    )
    rclpy.init()
    node = rclpy.create_node("recorder_sim_time_test")
    burst = 300
    try:
        clock = node.create_publisher(Clock, "/clock", 10)
        chatter = node.create_publisher(String, "chatter", 10)
        end = time.monotonic() + 20.0
        while time.monotonic() < end and (
            chatter.get_subscription_count() == 0 or clock.get_subscription_count() == 0
        ):
            rclpy.spin_once(node, timeout_sec=0.05)
        assert chatter.get_subscription_count() > 0, "the recorder did not subscribe"
        time.sleep(0.3)
        for i in range(1, 41):  # clock i ms, then message i; 4 ms of wall time apart
            message = Clock()
            message.clock.nanosec = i * 1_000_000
            clock.publish(message)
            time.sleep(0.002)
            chatter.publish(String(data=str(i)))
            time.sleep(0.002)
        time.sleep(1.2)  # written by the thread
        for i in range(burst):  # no clock meanwhile: stamped 40 ms
            chatter.publish(String(data=f"burst {i}"))
        time.sleep(0.1)
    finally:
        recorder.send_signal(signal.SIGINT)
        output, _ = recorder.communicate(timeout=20)
        node.destroy_node()
        rclpy.shutdown()
    assert recorder.returncode == 0, output
    assert "Traceback" not in output, output
    typestore = get_typestore(Stores.ROS2_KILTED)
    with AnyReader([bag], default_typestore=typestore) as reader:
        samples = [
            (log_time, reader.deserialize(raw, connection.msgtype).data)
            for connection, log_time, raw in reader.messages()
        ]
    assert [data for _, data in samples[:40]] == [str(i) for i in range(1, 41)], output
    # Exact: the clock sample received before message i carries i ms (4 ms of wall time apart,
    # far more than a local delivery's jitter).
    assert [log_time for log_time, _ in samples[:40]] == [i * 1_000_000 for i in range(1, 41)]
    assert [data for _, data in samples[40:]] == [f"burst {i}" for i in range(burst)], output
    assert {log_time for log_time, _ in samples[40:]} == {40_000_000}
    # The clock's span in metadata.yaml: robot time exact; the 39 intervals between the first
    # and last clock sample are at least 4 ms of wall time each (the sleeps above), and less
    # than the test's own 20 s of discovery timeout plus sending.
    span = read_clock_span(bag)
    assert span.first == span.start and span.first[1] == 1_000_000
    assert span.last[1] == 40_000_000
    assert span.running_simulated == pytest.approx(0.039, abs=1e-12)
    assert 39 * 0.004 <= span.running_wall < 30.0


def test_topics_found_while_writing_leave_a_readable_bag(tmp_path):
    """New topics are added to the bag (on the executor's thread) while the recording thread
    writes a 2 kHz stream: the bag reads back whole, every message of every topic in order."""
    bag = tmp_path / "bag"
    recorder = recorder_process(f"output:={bag}", "discovery_period:=0.02", "batch_period:=0.005")
    rclpy.init()
    node = rclpy.create_node("recorder_discovery_test")
    topics = 30
    try:
        stream = node.create_publisher(String, "stream", 1000)
        end = time.monotonic() + 20.0
        while time.monotonic() < end and stream.get_subscription_count() == 0:
            rclpy.spin_once(node, timeout_sec=0.05)
        assert stream.get_subscription_count() > 0, "the recorder did not subscribe"
        publishers = []
        sent = 0
        for k in range(topics):
            publishers.append(node.create_publisher(String, f"extra_{k}", 10))
            start = time.monotonic()
            while time.monotonic() - start < 0.06:  # ~2 kHz for 60 ms per new topic
                stream.publish(String(data=str(sent)))
                sent += 1
                time.sleep(0.0005)
        deadline = time.monotonic() + 10.0
        while time.monotonic() < deadline and any(
            p.get_subscription_count() == 0 for p in publishers
        ):
            time.sleep(0.05)
        for k, publisher in enumerate(publishers):
            publisher.publish(String(data=f"extra {k}"))
        time.sleep(0.5)
    finally:
        recorder.send_signal(signal.SIGINT)
        output, _ = recorder.communicate(timeout=20)
        node.destroy_node()
        rclpy.shutdown()
    assert recorder.returncode == 0, output
    typestore = get_typestore(Stores.ROS2_KILTED)
    with AnyReader([bag], default_typestore=typestore) as reader:
        by_topic: dict[str, list[str]] = {}
        strings = [c for c in reader.connections if c.msgtype == "std_msgs/msg/String"]
        for connection, _, raw in reader.messages(connections=strings):
            by_topic.setdefault(connection.topic, []).append(
                reader.deserialize(raw, connection.msgtype).data
            )
    assert by_topic["/stream"] == [str(i) for i in range(len(by_topic["/stream"]))]
    assert len(by_topic["/stream"]) == sent  # every one: depth 1000, nothing dropped
    for k in range(topics):
        assert by_topic[f"/extra_{k}"] == [f"extra {k}"], output
