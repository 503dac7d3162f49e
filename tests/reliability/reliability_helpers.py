"""Helpers of the reliability tests: processes with their output, a CPU load, an rclpy probe."""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
import time
from collections.abc import Iterator

import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from nav_msgs.msg import Odometry
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from std_srvs.srv import Trigger

from tests.bringup.bringup_helpers import LAUNCH, ROOT, Process, wbm_launch  # noqa: F401

CONFIG = ROOT / "config" / "icub"

#: What a traceback or an unhandled callback error looks like in a node's output.
TRACEBACK = re.compile(r"Traceback \(most recent call last\)|Exception in '|FATAL")


def assert_no_traceback(output: str) -> None:
    match = TRACEBACK.search(output)
    assert match is None, f"{match.group(0)!r} in the output:\n{output[-5000:]}"


@contextlib.contextmanager
def cpu_load() -> Iterator[subprocess.Popen]:
    """A second process spinning one core (``while True: pass``) for the duration."""
    load = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield load
    finally:
        load.kill()
        load.wait()


class Probe:
    """An rclpy node following /clock, the true base pose and the diagnostics."""

    def __init__(self, name: str = "reliability_probe"):
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.sim_time = 0.0
        self.clock_seen = False
        self.poses: list[tuple[float, float, float, float]] = []  # (t, x, y, z)
        self.diagnostics: list[DiagnosticArray] = []
        qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
        self.node.create_subscription(Clock, "/clock", self._on_clock, qos)
        # Transient local: a probe that matches the robot interface late (DDS discovery under
        # load) still hears the last GROUND_TRUTH_HISTORY (1 s) of poses, t = 0 when it matched
        # within 1 s; the depth holds all of them (500 per second at the default publish rate).
        late_joiner = QoSProfile(
            depth=2000,
            reliability=ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.TRANSIENT_LOCAL,
        )
        self.node.create_subscription(Odometry, "ground_truth/odom", self._on_odom, late_joiner)
        self.node.create_subscription(DiagnosticArray, "diagnostics", self.diagnostics.append, qos)

    def _on_clock(self, message: Clock) -> None:
        self.sim_time = message.clock.sec + 1e-9 * message.clock.nanosec
        self.clock_seen = True

    def _on_odom(self, message: Odometry) -> None:
        stamp = message.header.stamp.sec + 1e-9 * message.header.stamp.nanosec
        p = message.pose.pose.position
        self.poses.append((stamp, p.x, p.y, p.z))

    def spin_until(self, predicate, timeout: float, what: str, process: Process) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            assert time.monotonic() < deadline, (
                f"no {what} within {timeout} s:\n" + process.output[-4000:]
            )
            assert process.popen.poll() is None, (
                f"ended while waiting for {what}:\n" + (process.output[-4000:])
            )
            self.executor.spin_once(timeout_sec=0.05)

    def spin_for(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.02)

    def call_trigger(self, service: str, timeout: float = 20.0) -> Trigger.Response:
        client = self.node.create_client(Trigger, service)
        assert client.wait_for_service(timeout_sec=timeout), f"no {service} service"
        future = client.call_async(Trigger.Request())
        deadline = time.monotonic() + timeout
        while not future.done():
            assert time.monotonic() < deadline, f"{service} did not answer"
            self.executor.spin_once(timeout_sec=0.05)
        return future.result()

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)
