"""The controller node's threads: robot inputs on the input thread, the rest under its lock.

The node is built in this process (real rclpy, real model, no spin). What is checked is the
wiring, exactly: the topics the input thread serves, and that every other subscription and
timer of the node (those added later included, e.g. walking commands) runs in the input thread's
core group, whose callbacks hold the lock of the input thread's callbacks, so two callbacks never
touch the controller core at once. Only rclpy's own entities (the time source's, the parameter
services) are exempt.
"""

from __future__ import annotations

import time

import numpy as np
import rclpy
from control_helpers import CONTROLLER_YAML
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from wbm_control.ros.controller_node import ControllerNode
from wbm_description.ros.messages import joint_state_message


def test_inputs_on_the_input_thread_and_every_other_callback_under_its_lock():
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = ControllerNode(
            context=context,
            cli_args=[
                "--ros-args", "--params-file", str(CONTROLLER_YAML),
                "-p", "use_sim_time:=true", "-p", "use_ground_truth:=true",
            ],
        )  # fmt: skip
        thread = node.input_thread
        served = {s.topic_name for s, _ in thread._subscriptions}
        namespace = node.get_namespace().rstrip("/")
        expected = {"joint_states", "imu", "ft/left_foot", "ft/right_foot", "ground_truth/odom"}
        assert served == {f"{namespace}/{topic}" for topic in expected} | {"/clock"}
        others = [s for s in node.subscriptions if s.topic_name not in served]
        assert {s.topic_name.rsplit("/", 1)[-1] for s in others} >= {
            "com", "left_hand", "right_hand", "cmd_vel", "footstep_plan", "goal_pose",
        }  # fmt: skip
        unlocked = [s.topic_name for s in others if s.callback_group is not thread.core_group]
        assert unlocked == [], f"subscriptions outside the core group: {unlocked}"
        timers = list(node.timers)
        assert timers, "the watchdog timer"
        assert all(timer.callback_group is thread.core_group for timer in timers)
        assert not thread.running  # started by run_node's start(), not by the constructor
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)


def test_the_input_thread_hands_over_the_newest_queued_sample_of_each_publisher():
    """Samples queued before the input thread runs: only each publisher's newest is handled.

    A controller that fell behind answers the robot's newest state (the ``newest`` inputs of
    :class:`~wbm_description.ros.input_thread.InputThread`): the older samples of the queue are
    taken but neither decoded nor handled. A second publisher's newest sample is still handed
    over (the joint state guard must see it to reject it): a queue of depth 1 would let it push
    the robot's samples out. Robot samples stamped 1, 2 and 3 ms and a second publisher's 2.5 ms
    are queued; the guard must screen exactly the 2.5 and 3 ms samples, in the order of their
    arrival. Taking every queued sample (the previous behaviour) screens all four: this test
    fails on it. The node is built in this process, the samples come from two more nodes of the
    same context over DDS (best effort, as a robot driver publishes them).
    """
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = ControllerNode(
            context=context,
            cli_args=["--ros-args", "--params-file", str(CONTROLLER_YAML)],
        )
        screened: list[int] = []
        screen = node.joint_state_guard.screen

        def record(*args, **kwargs):
            screened.append(kwargs["stamp"])
            return screen(*args, **kwargs)

        node.joint_state_guard.screen = record
        qos = QoSProfile(depth=5, reliability=ReliabilityPolicy.BEST_EFFORT)
        sides = [Node(name, context=context) for name in ("queued_robot", "second_publisher")]
        robot, second = (side.create_publisher(JointState, "joint_states", qos) for side in sides)
        deadline = time.monotonic() + 10.0
        while (
            time.monotonic() < deadline
            and min(robot.get_subscription_count(), second.get_subscription_count()) < 1
        ):
            time.sleep(0.02)
        assert robot.get_subscription_count() >= 1, "the controller's reader never matched"
        assert second.get_subscription_count() >= 1, "the controller's reader never matched"
        model = node.model
        for publisher, microseconds in (
            (robot, 1000),
            (robot, 2000),
            (second, 2500),
            (robot, 3000),
        ):
            message = joint_state_message(
                model.joint_names, model.initial_posture, np.zeros(model.ndof), None
            )
            message.header.stamp.nanosec = microseconds * 1000
            publisher.publish(message)
            time.sleep(0.05)  # queued in this order
        time.sleep(0.5)  # delivered into the reader's queue (one process: well under 0.5 s)
        node.start()
        deadline = time.monotonic() + 5.0
        while len(screened) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)  # anything else queued would be handled by now
        node.stop()
        assert screened == [2_500_000, 3_000_000]
        for side in sides:
            side.destroy_node()
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
