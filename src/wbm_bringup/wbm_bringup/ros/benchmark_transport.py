"""The cost of taking one sample's messages in a node: rclpy's executor beside the input thread.

``wbm_benchmark_bringup --executor-costs`` runs it in one process (no launch): a publisher node
sends one robot sample (joint_states of iCub's 32 joints, imu, two ft) per cycle and waits until
a node of the controller's size (those four subscriptions, eight target and walking
subscriptions, a timer, the parameter services) has called back for all four; the node takes
them either on rclpy's SingleThreadedExecutor (the code before issue 11's transport work) or on
an :class:`~wbm_description.ros.input_thread.InputThread`. Per variant and repeat: CPU time of the
process per cycle (both sides: publish, take, deserialize, dispatch) and the wall time from the
first publish to the last callback (median, p99).
"""

from __future__ import annotations

import threading
import time

import numpy as np
import rclpy
from geometry_msgs.msg import PointStamped, PoseStamped, Twist, WrenchStamped
from nav_msgs.msg import Path
from rclpy.clock import Clock, ClockType
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Imu, JointState

from wbm_description.ros.input_thread import InputThread

JOINTS = 32


def _one_run(threaded: bool, cycles: int) -> tuple[float, float, float]:
    """(CPU per cycle [s], wall median [s], wall p99 [s]) of one variant."""
    context = rclpy.Context()
    rclpy.init(context=context)
    publisher_node = rclpy.create_node("transport_publisher", context=context)
    node = rclpy.create_node("transport_controller", context=context)
    sensor = QoSProfile(depth=5, reliability=ReliabilityPolicy.BEST_EFFORT)
    reliable = QoSProfile(depth=10)
    arrived = threading.Event()
    count = [0]

    def on_input(_message) -> None:
        count[0] += 1
        if count[0] % 4 == 0:
            arrived.set()

    inputs = InputThread(node) if threaded else None
    subscribe = inputs.subscribe if inputs else node.create_subscription
    topics = (("joint_states", JointState), ("imu", Imu))
    topics += (("ft/left_foot", WrenchStamped), ("ft/right_foot", WrenchStamped))
    for topic, message_type in topics:
        subscribe(message_type, topic, on_input, sensor)
    group = inputs.core_group if inputs else None
    for topic, message_type in (
        ("targets/com", PointStamped),
        *((f"targets/{t}", PoseStamped) for t in ("left_hand", "right_hand", "l", "r")),
        ("cmd_vel", Twist),
        ("footstep_plan", Path),
        ("goal_pose", PoseStamped),
    ):
        node.create_subscription(message_type, topic, on_input, reliable, callback_group=group)
    steady = Clock(clock_type=ClockType.STEADY_TIME)
    node.create_timer(0.1, lambda: None, callback_group=group, clock=steady)
    publishers = [publisher_node.create_publisher(t, topic, reliable) for topic, t in topics]
    joint_state = JointState()
    joint_state.name = [f"joint_{i}" for i in range(JOINTS)]
    joint_state.position = joint_state.velocity = joint_state.effort = [0.0] * JOINTS
    messages = [joint_state, Imu(), WrenchStamped(), WrenchStamped()]
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    if inputs:
        inputs.start()

    def cycle() -> float:
        arrived.clear()
        start = time.perf_counter()
        for publisher, message in zip(publishers, messages, strict=True):
            publisher.publish(message)
        arrived.wait(1.0)
        return time.perf_counter() - start

    try:
        deadline = time.monotonic() + 10.0
        while any(p.get_subscription_count() == 0 for p in publishers):
            if time.monotonic() > deadline:
                raise RuntimeError("the transport benchmark's subscriptions did not match")
            time.sleep(0.05)
        for _ in range(50):
            cycle()
        cpu = time.process_time()
        walls = [cycle() for _ in range(cycles)]
        cpu = (time.process_time() - cpu) / cycles
    finally:
        if inputs:
            inputs.stop()
        executor.shutdown(timeout_sec=2.0)
        spinner.join(2.0)
        node.destroy_node()
        publisher_node.destroy_node()
        rclpy.try_shutdown(context=context)
    return cpu, float(np.median(walls)), float(np.percentile(walls, 99))


def executor_costs(repeats: int = 3, cycles: int = 1000) -> list[tuple[str, list[float]]]:
    """Per variant (executor, input thread) the figures of :func:`_one_run` per repeat.

    The variants alternate within each repeat, so both see the same machine load.
    Returns (label, [cpu, wall median, wall p99 per repeat, flattened]).
    """
    rows: dict[str, list[float]] = {"executor": [], "input thread": []}
    for _ in range(repeats):
        for label, threaded in (("executor", False), ("input thread", True)):
            rows[label].extend(_one_run(threaded, cycles))
    return list(rows.items())


def print_executor_costs(repeats: int = 3, cycles: int = 1000) -> None:
    """The table of :func:`executor_costs` (medians over repeats, and their spread)."""
    print(
        f"one sample's 4 messages (joint_states {JOINTS} joints, imu, 2 ft) into a node of the "
        f"controller's size; {repeats} repeats x {cycles} cycles"
    )
    print(f"{'taken by':<14}{'CPU/cycle [ms]':>22}{'wall median [ms]':>22}{'wall p99 [ms]':>20}")
    for label, values in executor_costs(repeats, cycles):
        table = np.array(values).reshape(-1, 3) * 1e3
        cells = "".join(
            f"{np.median(table[:, i]):>12.3f} ({np.ptp(table[:, i]):.3f})" for i in range(3)
        )
        print(f"{label:<14}{cells}")
    print("(median over repeats, spread max - min in brackets; CPU of both sides)")
