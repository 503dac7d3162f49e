"""Benchmark of the state publisher: the joint_states rates it keeps up with, its latency and CPU.

Run (``source .venv/wbm_env.sh`` first)::

    wbm_benchmark_state_publisher [--robot icub] [--rates 250 500 1000 1500 2000] [--seconds 2]

Starts the state publisher as its own process, publishes iCub joint_states (every joint, a
fresh random posture each time) at each rate for a few seconds, and receives its ``tf``.
Each joint_states stamp is the wall-clock send time, which the node copies to its transforms, so
latency = receive time - stamp (joint_states -> FK -> tf, over DDS both ways). Two
configurations of the node, each in a process of its own:

- ``every message`` (``publish_frequency`` 0, ``input_rate`` 0): a TF for each joint_states;
  it keeps up at a rate when it delivers at least 99 % of the messages (its throughput);
- ``defaults`` (the parameters file's: TF at ``publish_frequency`` per second of robot time,
  inputs taken ``input_rate`` times per wall second, markers): it keeps up when it delivers at
  least 90 % of ``min(rate, publish_frequency)`` TF per second (its wake-ups are ``1 /
  input_rate`` apart, so a TF period of ``1 / publish_frequency`` is met one wake-up late now and
  then).

Beside each row, the node process's CPU time per wall second of the row (user + system, from
``/proc``): what it costs the machine's cores at that rate. The reference row is DDS alone: the
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

from wbm_description.process_cpu import process_cpu_seconds
from wbm_description.registry import load_robot
from wbm_description.ros.messages import odometry_message
from wbm_description.state_publisher_settings import StatePublisherSettings

KEEP_UP_RATIO = 0.99
"""Share of the messages a node that answers every message must answer."""

DECIMATED_KEEP_UP_RATIO = 0.9
"""Share of ``min(rate, publish_frequency)`` TF per second the decimated node must publish."""

EVERY_MESSAGE = ["-p", "publish_frequency:=0.0", "-p", "input_rate:=0.0"]
CONFIGURATIONS = {"every message": EVERY_MESSAGE, "defaults": []}
"""The node's configurations benchmarked (ROS arguments beside the parameters file); the DDS
reference rows are printed with the first."""


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


def _row(
    label: str,
    rate: float,
    sent: int,
    latencies: np.ndarray,
    expected: float,
    ratio_needed: float,
    cpu: float | None = None,
) -> str:
    """One table row; ``expected`` messages back, ``cpu`` the node's CPU share (None: no node)."""
    received = len(latencies)
    ratio = received / expected if expected else 0.0
    if received:
        p10, median, p90 = np.percentile(latencies * 1e3, [10, 50, 90])
        latency = f"{median:8.2f} {p10:8.2f} {p90:8.2f}"
    else:
        latency = f"{'-':>8} {'-':>8} {'-':>8}"
    keeps_up = "yes" if ratio >= ratio_needed else "no"
    load = f"{100.0 * cpu:7.1f}" if cpu is not None else f"{'-':>7}"
    return (
        f"{label:<24}{rate:>8.0f}{sent:>8d}{received:>8d}{expected:>9.0f}{ratio:>7.3f} "
        f"{latency} {load}  {keeps_up}"
    )


def _start_node(robot: str, arguments: list[str]) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "wbm_description.ros.state_publisher_node",
            "--ros-args",
            "-p",
            f"robot:={robot}",
            "-p",
            "invalid_input_log_period:=10.0",
            *arguments,
        ],
        stdout=subprocess.DEVNULL,
    )


def _stop_node(process: subprocess.Popen) -> None:
    process.send_signal(2)
    try:
        process.wait(timeout=10.0)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``wbm_benchmark_state_publisher``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robot", default="icub")
    parser.add_argument("--rates", type=float, nargs="+", default=[250, 500, 1000, 1500, 2000])
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args(argv)
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    config = load_robot(args.robot)
    frequency = StatePublisherSettings().publish_frequency

    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("benchmark_state_publisher", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    rng = np.random.default_rng(0)
    node_process = None
    try:
        probe = _Probe(node, config.joints, "tf", TFMessage)
        reference = _Probe(node, config.joints, "benchmark/joint_states_loopback", JointState)
        odom = node.create_publisher(Odometry, "ground_truth/odom", 10)
        header = (
            f"{'path':<24}{'rate Hz':>8}{'sent':>8}{'recv':>8}{'expected':>9}{'ratio':>7} "
            f"{'lat ms':>8} {'p10':>8} {'p90':>8} {'CPU %':>7}  keeps up"
        )
        print(
            f"state publisher benchmark: {config.name}, {len(config.joints)} joints, "
            f"{args.seconds} s per rate; defaults: TF at {frequency:g} Hz of robot time"
        )
        print(header)
        print("-" * len(header))
        best: dict[str, float] = {}
        for index, (name, arguments) in enumerate(CONFIGURATIONS.items()):
            node_process = _start_node(args.robot, arguments)
            deadline = time.monotonic() + 60.0
            while (
                probe.publisher.get_subscription_count() < 1
                or probe.subscription.get_publisher_count() < 1
                or odom.get_subscription_count() < 1
            ):
                if time.monotonic() > deadline or node_process.poll() is not None:
                    raise RuntimeError("the state publisher did not come up")
                time.sleep(0.1)
            time.sleep(0.5)  # discovery both ways
            base = np.array([0.0, 0.0, 0.6, 0.0, 0.0, 0.0, 1.0])
            odom.publish(
                odometry_message(
                    base,
                    np.zeros(6),
                    world_frame="world",
                    base_frame="base_link",
                    stamp_seconds=0.0,
                )
            )
            probe.run(100.0, 1.0, rng)  # warm-up
            best[name] = 0.0
            for rate in args.rates:
                if index == 0:
                    sent, latencies = reference.run(rate, args.seconds, rng)
                    print(
                        _row("DDS only (ref)", rate, sent, latencies, sent, KEEP_UP_RATIO),
                        flush=True,
                    )
                cpu_before, wall_before = process_cpu_seconds(node_process.pid), time.monotonic()
                sent, latencies = probe.run(rate, args.seconds, rng)
                cpu = (process_cpu_seconds(node_process.pid) - cpu_before) / (
                    time.monotonic() - wall_before
                )
                if arguments is EVERY_MESSAGE:
                    expected, needed = float(sent), KEEP_UP_RATIO
                else:
                    expected, needed = sent * min(1.0, frequency / rate), DECIMATED_KEEP_UP_RATIO
                print(
                    _row(f"node, {name}", rate, sent, latencies, expected, needed, cpu),
                    flush=True,
                )
                if len(latencies) >= needed * expected:
                    best[name] = max(best[name], rate)
            _stop_node(node_process)
            node_process = None
        for name, rate in best.items():
            print(f"largest joint_states rate kept up with, {name}: {rate:.0f} Hz")
    finally:
        if node_process is not None:
            _stop_node(node_process)
        executor.shutdown()
        spinner.join(timeout=5.0)
        node.destroy_node()
        rclpy.shutdown(context=context)
    return 0


if __name__ == "__main__":
    sys.exit(main())
