"""The controller node's threads: robot inputs on the input thread, the rest under its lock.

The node is built in this process (real rclpy, real model, no spin). What is checked is the
wiring, exactly: the topics the input thread serves, and that every other subscription and
timer of the node (those added later included, e.g. walking commands) runs in the input thread's
core group, whose callbacks hold the lock of the input thread's callbacks, so two callbacks never
touch the controller core at once. Only rclpy's own entities (the time source's, the parameter
services) are exempt.
"""

from __future__ import annotations

import rclpy
from control_helpers import CONTROLLER_YAML

from wbm_control.ros.controller_node import ControllerNode


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
