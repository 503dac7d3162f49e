"""What a reader in another process costs the publisher of a robot topic.

``wbm_benchmark_bringup --reader-costs`` publishes one serialized JointState of iCub's size (32
joints) 2000 times a second from this process, with 0, 1 or 3 reader processes (best effort or
reliable, each taking the messages serialized on a wait-set thread of its own,
:class:`~wbm_description.ros.input_thread.InputThread`), and times the publishing thread's CPU
per ``publish`` call (``time.thread_time``: the middleware's delivery to every reader made in
the caller's thread, Fast DDS publishing synchronously). Every process that reads a topic of the
robot's sample adds its delivery to the robot interface's publication, which is on the control
loop's path: the figure says what a state publisher, a recorder or RViz costs the loop for
each topic it reads. The variants alternate within each repeat, so they see the same load.

Run a reader alone: ``python -m wbm_bringup.ros.benchmark_readers best_effort|reliable``.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import time

import numpy as np
import rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState

from wbm_description.ros.input_thread import InputThread

TOPIC = "benchmark/reader_costs"
JOINTS = 32
RATE = 2000.0  # [Hz] publications
VARIANTS = (("no reader", 0, ""), ("1 best effort", 1, "best_effort"))
VARIANTS += (("1 reliable", 1, "reliable"), ("3 reliable", 3, "reliable"))
"""(label, readers, their reliability)."""


def _reader(reliability: str) -> None:
    """A reader process: takes every message serialized until SIGINT or SIGTERM."""
    rclpy.init()
    node = rclpy.create_node("reader_costs_reader")
    qos = QoSProfile(
        depth=10,
        reliability=(
            ReliabilityPolicy.RELIABLE
            if reliability == "reliable"
            else ReliabilityPolicy.BEST_EFFORT
        ),
    )
    inputs = InputThread(node)
    inputs.subscribe(JointState, TOPIC, lambda _: None, qos, decode=bytes)
    inputs.start()
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    with contextlib.suppress(KeyboardInterrupt):
        while not stop:
            time.sleep(0.05)
    inputs.stop()
    node.destroy_node()
    rclpy.try_shutdown()


def _publish_costs(publisher, data: bytes, readers: int, calls: int) -> np.ndarray:
    """CPU per publish call [s] of ``calls`` calls at :data:`RATE`, once ``readers`` matched."""
    deadline = time.monotonic() + 30.0
    while publisher.get_subscription_count() != readers:
        if time.monotonic() > deadline:
            raise RuntimeError(f"reader costs: {readers} readers did not match in 30 s")
        time.sleep(0.05)
    time.sleep(0.5)  # discovery both ways
    costs = np.empty(calls)
    period = 1.0 / RATE
    next_call = time.perf_counter()
    for i in range(calls):
        next_call += period
        start = time.thread_time()
        publisher.publish(data)
        costs[i] = time.thread_time() - start
        delay = next_call - time.perf_counter()
        if delay > 0.0:
            time.sleep(delay)
    return costs


def reader_costs(repeats: int = 3, calls: int = 4000) -> dict[str, list[float]]:
    """Per variant, the median CPU per publish call [s] of each repeat."""
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("reader_costs_publisher", context=context)
    publisher = node.create_publisher(JointState, TOPIC, QoSProfile(depth=10))
    message = JointState(name=[f"joint_{i}" for i in range(JOINTS)])
    message.position = message.velocity = message.effort = [0.1] * JOINTS
    data = serialize_message(message)
    results: dict[str, list[float]] = {label: [] for label, _, _ in VARIANTS}
    try:
        for _ in range(repeats):
            for label, readers, reliability in VARIANTS:
                processes = [
                    subprocess.Popen([sys.executable, "-m", __name__, reliability])
                    for _ in range(readers)
                ]
                try:
                    costs = _publish_costs(publisher, data, readers, calls)
                finally:
                    for process in processes:
                        process.send_signal(signal.SIGTERM)
                    for process in processes:
                        try:
                            process.wait(timeout=10.0)
                        except subprocess.TimeoutExpired:
                            process.kill()
                            process.wait()
                results[label].append(float(np.median(costs)))
    finally:
        node.destroy_node()
        rclpy.try_shutdown(context=context)
    return results


def print_reader_costs(repeats: int = 3) -> None:
    """The table of :func:`reader_costs`: median over repeats and spread (max - min)."""
    print(
        f"one serialized JointState ({JOINTS} joints) published {RATE:g} times a second; the "
        f"publishing thread's CPU per call; {repeats} repeats"
    )
    results = reader_costs(repeats)
    base = np.median(results["no reader"])
    for label, values in results.items():
        median = np.median(values)
        print(
            f"{label:<16}{1e6 * median:>9.1f} us (spread {1e6 * np.ptp(values):.1f})"
            f"{'':>4}{1e6 * (median - base):>+8.1f} us beside no reader"
        )


if __name__ == "__main__":
    _reader(sys.argv[1] if len(sys.argv) > 1 else "reliable")
