"""The demo scenario as a node: sends the hand target and the push on sim time, then exits.

It uses only what a user has: ``joint_states`` and the controller's estimated ``odom`` to find
where the hand is, ``targets/<hand_task>`` (PoseStamped) to move it, and the simulator's
``apply_wrench`` to push. Timeline and amplitudes: :class:`wbm_bringup.demo.scenario.DemoScenario`,
overridable by parameters of the same names. It exits (code 0) at ``end_time``, which ends a
launch that marks it ``on_exit: shutdown``.
"""

from __future__ import annotations

import sys

import numpy as np
import rclpy
from geometry_msgs.msg import PoseStamped, WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from wbm_bringup.demo.scenario import DemoScenario
from wbm_description.conventions import quaternion_xyzw_from_rotation
from wbm_description.exceptions import InputError, WbmError
from wbm_description.registry import load_robot
from wbm_description.ros.messages import (
    base_from_odometry,
    joint_arrays_from_message,
    pose_message,
    wrench_message,
)
from wbm_description.whole_body_model import WholeBodyModel


class ScenarioNode(Node):
    """Publishes the demo's hand target and push at their times."""

    def __init__(self) -> None:
        super().__init__("scenario")
        defaults = DemoScenario()
        values = {}
        for name, default in vars(defaults).items():
            value = self.declare_parameter(
                name, list(default) if isinstance(default, tuple) else default
            ).value
            values[name] = tuple(value) if isinstance(default, tuple) else value
        self.scenario = DemoScenario(**values)
        self.world_frame = self.declare_parameter("world_frame", "world").value
        robot = self.declare_parameter("robot", "icub").value
        self.model = WholeBodyModel.from_config(load_robot(robot))
        self.model.frame_id(self.scenario.hand_frame)
        self.model.frame_id(self.scenario.push_frame)
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self.target_publisher = self.create_publisher(
            PoseStamped, f"targets/{self.scenario.hand_task}", reliable
        )
        self.push_publisher = self.create_publisher(WrenchStamped, "apply_wrench", reliable)
        self.create_subscription(JointState, "joint_states", self._on_joint_states, 10)
        self.create_subscription(Odometry, "odom", self._on_odom, 10)
        self.joints: np.ndarray | None = None
        self.base: np.ndarray | None = None
        self.start_time: float | None = None
        self.target_sent = False
        self.push_sent = False
        self.finished = False
        self.create_timer(0.01, self._tick)

    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _on_joint_states(self, message: JointState) -> None:
        try:
            arrays = joint_arrays_from_message(message, self.model.joint_indices, require_all=True)
        except InputError as error:
            self.get_logger().warning(f"joint_states ignored: {error}", throttle_duration_sec=2.0)
            return
        if arrays.position is None:
            return
        joints = np.empty(self.model.ndof)
        joints[arrays.indices] = arrays.position
        self.joints = joints

    def _on_odom(self, message: Odometry) -> None:
        try:
            self.base, _ = base_from_odometry(message)
        except InputError as error:
            self.get_logger().warning(f"odom ignored: {error}", throttle_duration_sec=2.0)

    def _tick(self) -> None:
        if self.joints is None or self.base is None:
            return
        now = self._now()
        if self.start_time is None:
            self.start_time = now
            self.get_logger().info(f"scenario started at t = {now:.3f} s (sim time)")
        t = now - self.start_time
        scenario = self.scenario
        if not self.target_sent and t >= scenario.hand_start:
            q = np.concatenate([self.base, self.joints])
            hand = self.model.frame_placement(q, scenario.hand_frame)
            target = hand.translation + np.asarray(scenario.hand_offset)
            message = PoseStamped()
            message.header.frame_id = self.world_frame
            message.header.stamp = self.get_clock().now().to_msg()
            message.pose = pose_message(target, quaternion_xyzw_from_rotation(hand.rotation))
            self.target_publisher.publish(message)
            self.target_sent = True
            self.get_logger().info(
                f"t = {t:.2f} s: {scenario.hand_task} from {np.round(hand.translation, 4)} "
                f"to {np.round(target, 4)} over {scenario.hand_duration} s"
            )
        if not self.push_sent and t >= scenario.push_time:
            message = WrenchStamped()
            message.header.frame_id = scenario.push_frame
            message.header.stamp = self.get_clock().now().to_msg()
            message.wrench = wrench_message(np.concatenate([scenario.push_force, np.zeros(3)]))
            self.push_publisher.publish(message)
            self.push_sent = True
            self.get_logger().info(
                f"t = {t:.2f} s: push {list(scenario.push_force)} N on {scenario.push_frame} "
                f"for {scenario.push_duration} s ({np.linalg.norm(scenario.push_impulse):.2f} N s)"
            )
        if t >= scenario.end_time:
            self.get_logger().info(f"t = {t:.2f} s: scenario finished")
            self.finished = True


def main(args: list[str] | None = None) -> int:
    """Entry point of ``wbm_scenario``."""
    rclpy.init(args=args)
    try:
        node = ScenarioNode()
    except WbmError as error:
        print(f"wbm_scenario: error: {error}", file=sys.stderr)
        rclpy.try_shutdown()
        return 2
    try:
        while rclpy.ok() and not node.finished:
            rclpy.spin_once(node, timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
