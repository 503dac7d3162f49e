"""Benchmark of the state publisher: the largest joint_states rate it keeps up with, and latency.

Run (``source .venv/wbm_env.sh`` first)::

    wbm_benchmark_state_publisher [--robot icub] [--rates 250 500 1000 1500 2000] [--seconds 2]

Starts the state publisher as its own process, publishes iCub joint_states (every joint, a
fresh random posture each time) at each rate for a few seconds, and receives its ``tf``.
Each joint_states stamp is the wall-clock send time, which the node copies to its transforms, so
latency = receive time - stamp (joint_states -> FK -> tf, over DDS both ways). The node keeps up
at a rate when it delivers at least 99 % of the messages. The reference row is DDS alone: the
same joint_states published and received back in this process, without the node.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time

import numpy as np
import rclpy
from nav_msgs.msg import Odometry
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from wbm_description.registry import load_robot
from wbm_description.ros.messages import odometry_message

KEEP_UP_RATIO = 0.99


class _Probe:
    """Publishes joint_states and collects the latency of what comes back on one topic."""

    def __init__(self, node, joint_names, topic: str, message_type):
        self.publisher = node.create_publisher(
            JointState, "joint_states" if topic == "tf" else topic, 100
        )
        self.joint_names = list(joint_names)
        self.latencies: list[float] = []
        self._lock = threading.Lock()
        qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
        stamp_of = (
            (lambda m: m.transforms[0].header.stamp)
            if message_type is TFMessage
            else (lambda m: m.header.stamp)
        )
        self.subscription = node.create_subscription(
            message_type, topic, lambda m: self._received(stamp_of(m)), qos
        )

    def _received(self, stamp) -> None:
        now = time.time_ns()
        with self._lock:
            self.latencies.append((now - (stamp.sec * 1_000_000_000 + stamp.nanosec)) * 1e-9)

    def run(self, rate: float, seconds: float, rng: np.random.Generator) -> tuple[int, np.ndarray]:
        with self._lock:
            self.latencies = []
        count = int(rate * seconds)
        postures = rng.uniform(-0.3, 0.3, (64, len(self.joint_names)))
        message = JointState()
        message.name = self.joint_names
        period = 1.0 / rate
        start = time.perf_counter()
        for i in range(count):
            target = start + i * period
            while (delay := target - time.perf_counter()) > 0.0:
                time.sleep(delay if delay > 2e-4 else 0.0)
            message.position = postures[i % 64].tolist()
            message.header.stamp.sec, message.header.stamp.nanosec = divmod(
                time.time_ns(), 1_000_000_000
            )
            self.publisher.publish(message)
        time.sleep(0.5)  # stragglers
        with self._lock:
            return count, np.array(self.latencies)


def _row(label: str, rate: float, sent: int, latencies: np.ndarray) -> str:
    received = len(latencies)
    ratio = received / sent if sent else 0.0
    if received:
        p10, median, p90 = np.percentile(latencies * 1e3, [10, 50, 90])
        latency = f"{median:8.2f} {p10:8.2f} {p90:8.2f}"
    else:
        latency = f"{'-':>8} {'-':>8} {'-':>8}"
    keeps_up = "yes" if ratio >= KEEP_UP_RATIO else "no"
    return f"{label:<16}{rate:>8.0f}{sent:>8d}{received:>8d}{ratio:>8.3f} {latency}  {keeps_up}"


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``wbm_benchmark_state_publisher``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robot", default="icub")
    parser.add_argument("--rates", type=float, nargs="+", default=[250, 500, 1000, 1500, 2000])
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args(argv)
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    config = load_robot(args.robot)

    node_process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "wbm_description.ros.state_publisher_node",
            "--ros-args",
            "-p",
            f"robot:={args.robot}",
            "-p",
            "invalid_input_log_period:=10.0",
        ],
        stdout=subprocess.DEVNULL,
    )
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("benchmark_state_publisher", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    rng = np.random.default_rng(0)
    try:
        probe = _Probe(node, config.joints, "tf", TFMessage)
        reference = _Probe(node, config.joints, "benchmark/joint_states_loopback", JointState)
        odom = node.create_publisher(Odometry, "ground_truth/odom", 10)
        deadline = time.monotonic() + 60.0
        while (
            probe.publisher.get_subscription_count() < 1
            or probe.subscription.get_publisher_count() < 1
        ):
            if time.monotonic() > deadline or node_process.poll() is not None:
                raise RuntimeError("the state publisher did not come up")
            time.sleep(0.1)
        base = np.array([0.0, 0.0, 0.6, 0.0, 0.0, 0.0, 1.0])
        odom.publish(
            odometry_message(
                base, np.zeros(6), world_frame="world", base_frame="base_link", stamp_seconds=0.0
            )
        )
        probe.run(100.0, 1.0, rng)  # warm-up
        header = (
            f"{'path':<16}{'rate Hz':>8}{'sent':>8}{'recv':>8}{'ratio':>8} "
            f"{'lat ms':>8} {'p10':>8} {'p90':>8}  keeps up"
        )
        print(
            f"state publisher benchmark: {config.name}, {len(config.joints)} joints, "
            f"{args.seconds} s per rate"
        )
        print(header)
        print("-" * len(header))
        best = 0.0
        for rate in args.rates:
            sent, latencies = reference.run(rate, args.seconds, rng)
            print(_row("DDS only (ref)", rate, sent, latencies), flush=True)
            sent, latencies = probe.run(rate, args.seconds, rng)
            print(_row("state publisher", rate, sent, latencies), flush=True)
            if len(latencies) >= KEEP_UP_RATIO * sent:
                best = max(best, rate)
        print(f"largest joint_states rate kept up with: {best:.0f} Hz (goal >= 1000 Hz)")
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=context)
        node_process.send_signal(2)
        try:
            node_process.wait(timeout=10.0)
        except subprocess.TimeoutExpired:
            node_process.kill()
            node_process.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
