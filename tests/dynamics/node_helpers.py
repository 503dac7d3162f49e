"""Helpers of the robot-interface node tests: start the node as a process, talk to it."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.experimental import EventsExecutor
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState
from std_srvs.srv import Trigger

from wbm_description.ros.messages import seconds_from_time

ROOT = Path(__file__).resolve().parents[2]
PARAMS_FILE = ROOT / "config" / "icub" / "robot_interface.yaml"
RELIABLE = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)


def _format(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return "[" + ",".join(_format(v) for v in value) + "]"
    return str(value)


@contextlib.contextmanager
def node_process(
    log_path: Path, parameters: dict[str, Any] | None = None, *, params_file: Path | None = None
) -> Iterator[subprocess.Popen]:
    """The robot-interface node as a separate process; always terminated on exit."""
    command = [sys.executable, "-m", "wbm_dynamics.ros.robot_interface_node", "--ros-args"]
    if params_file is not None:
        command += ["--params-file", str(params_file)]
    for name, value in (parameters or {}).items():
        command += ["-p", f"{name}:={_format(value)}"]
    with open(log_path, "w") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=os.environ)
        try:
            yield process
        finally:
            process.terminate()
            try:
                process.wait(timeout=10.0)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


class Probe:
    """A test-side rclpy node recording everything the robot interface publishes."""

    TOPICS = {
        "/clock": Clock,
        "joint_states": JointState,
        "imu": Imu,
        "ft/left_foot": WrenchStamped,
        "ft/right_foot": WrenchStamped,
        "ground_truth/odom": Odometry,
    }

    def __init__(self, name: str = "probe"):
        self.node = Node(name)
        self.messages: dict[str, list] = {topic: [] for topic in self.TOPICS}
        for topic, message_type in self.TOPICS.items():
            self.node.create_subscription(
                message_type, topic, lambda m, t=topic: self.messages[t].append(m), RELIABLE
            )
        self.commands = self.node.create_publisher(JointState, "joint_commands", RELIABLE)
        self.wrenches = self.node.create_publisher(WrenchStamped, "apply_wrench", RELIABLE)
        self.services = {
            name: self.node.create_client(Trigger, name) for name in ("reset", "pause", "resume")
        }
        self.executor = EventsExecutor()
        self.executor.add_node(self.node)

    def spin(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.02)

    def spin_until(self, predicate: Callable[[], bool], timeout: float, what: str) -> None:
        end = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > end:
                raise AssertionError(f"timed out after {timeout} s waiting for {what}")
            self.executor.spin_once(timeout_sec=0.02)

    def wait_for_connection(self, timeout: float = 30.0) -> None:
        """Until the node publishes and has discovered our command publisher."""
        self.spin_until(lambda: self.messages["joint_states"], timeout, "joint_states")
        self.spin_until(
            lambda: self.commands.get_subscription_count() > 0, timeout, "joint_commands reader"
        )
        self.spin_until(
            lambda: self.wrenches.get_subscription_count() > 0, timeout, "apply_wrench reader"
        )

    def clock(self) -> float:
        return seconds_from_time(self.messages["/clock"][-1].clock)

    def call(self, service: str, timeout: float = 10.0) -> Trigger.Response:
        client = self.services[service]
        self.spin_until(lambda: client.service_is_ready(), timeout, f"service {service}")
        future = client.call_async(Trigger.Request())
        self.spin_until(future.done, timeout, f"{service} response")
        return future.result()

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()


def stamp(message) -> float:
    return seconds_from_time(message.header.stamp)


def read_log(path: Path) -> str:
    return path.read_text() if path.exists() else ""
