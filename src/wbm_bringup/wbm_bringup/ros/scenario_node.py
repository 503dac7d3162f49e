"""The demo scenario as a node: sends the hand target and the push on sim time, then exits.

It uses only what a user has: ``joint_states`` and the controller's estimated ``odom`` to find
where the hand is, ``targets/<hand_task>`` (PoseStamped) to move it, and the simulator's
``apply_wrench`` to push. Parameters: :class:`~wbm_bringup.demo.scenario.ScenarioNodeSettings`
(``robot``, ``world_frame``, and the timeline and amplitudes as ``scenario.<name>``, e.g.
``scenario.end_time``). Which event is due when: :class:`~wbm_bringup.demo.scenario.DemoTimeline`.
The node needs the robot's state only at its two events: ``joint_states``, ``odom`` and
``/clock`` are taken on an input thread (:class:`~wbm_description.ros.input_thread.InputThread`)
at most :data:`INPUT_RATE` times per wall second, the newest message of each (queues of depth
1, read from the serialized bytes), instead of one executor wake-up and message conversion per
message at the robot's 500 Hz (it cost the demo's 2 cores 0.3 s of CPU per wall second).
At ``scenario.end_time`` it shuts down (exit code 0), which ends a launch that marks it
``on_exit: shutdown``. :func:`check_parameters` makes its start-up checks of the parameters
without starting it (``wbm launch`` runs it before starting anything).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PoseStamped, WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.exceptions import InvalidTopicNameException
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.validate_topic_name import validate_topic_name
from sensor_msgs.msg import JointState

from wbm_bringup.demo.scenario import DemoTimeline, ScenarioNodeSettings
from wbm_description.conventions import quaternion_xyzw_from_rotation
from wbm_description.exceptions import ConfigError, InputError, NameNotFound
from wbm_description.registry import load_robot
from wbm_description.ros.input_thread import InputThread
from wbm_description.ros.messages import (
    base_from_odometry,
    joint_arrays_from_message,
    pose_message,
    wrench_message,
)
from wbm_description.ros.node_runtime import (
    ROS_PARAMETERS,
    WbmNode,
    declare_settings,
    run_node,
)
from wbm_description.settings import nest
from wbm_description.whole_body_model import WholeBodyModel

#: Reliable, transient local (the last message kept): a subscriber that matched late, as the
#: demo's recorder under load, still receives the one target and the one push. The nodes they
#: act on (controller, robot interface) subscribe volatile, so a late or restarted one is never
#: handed an old push.
LAST_KEPT = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)

INPUT_RATE = 50.0
"""Most wake-ups per wall second of the input thread [Hz]: the events' times are resolved to
the newest ``/clock`` taken, and the timer ticks every 10 ms of sim time."""

NEWEST = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)


class ScenarioNode(WbmNode):
    """Publishes the demo's hand target and push at their times."""

    def __init__(self, **kwargs) -> None:
        super().__init__("scenario", **kwargs)
        self.settings = declare_settings(self, ScenarioNodeSettings)
        self.scenario = self.settings.scenario
        self.model = WholeBodyModel.from_config(load_robot(self.settings.robot))
        self.model.frame_id(self.scenario.hand_frame)  # unknown frames stop the node here
        self.model.frame_id(self.scenario.push_frame)
        self.timeline = DemoTimeline(self.scenario)
        self.joints: np.ndarray | None = None
        self.base: np.ndarray | None = None
        self.target_publisher = self.create_publisher(
            PoseStamped, f"targets/{self.scenario.hand_task}", LAST_KEPT
        )
        self.push_publisher = self.create_publisher(WrenchStamped, "apply_wrench", LAST_KEPT)
        self.input_thread = InputThread(self, min_period=1.0 / INPUT_RATE)
        self.input_thread.subscribe(JointState, "joint_states", self._on_joint_states, NEWEST)
        self.input_thread.subscribe(Odometry, "odom", self._on_odom, NEWEST)
        self.input_thread.take_clock()
        self.create_timer(0.01, self._tick, callback_group=self.input_thread.core_group)

    def start(self) -> None:
        """Start the input thread (once the node is complete), then apply the priority."""
        self.input_thread.start()
        self.apply_realtime_priority(self.settings.realtime_priority)

    def stop(self) -> None:
        """Stop the input thread."""
        self.input_thread.stop()

    def _on_joint_states(self, message: JointState) -> None:
        try:
            arrays = joint_arrays_from_message(message, self.model.joint_indices, require_all=True)
        except InputError as error:
            self.throttled.warning("joint_states", f"joint_states ignored: {error}")
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
            self.throttled.warning("odom", f"odom ignored: {error}")

    def _tick(self) -> None:
        if self.joints is None or self.base is None:
            return
        now = self.get_clock().now()
        seconds = now.nanoseconds * 1e-9
        for event in self.timeline.advance(seconds):
            t = self.timeline.elapsed(seconds)
            if event == "start":
                self.get_logger().info(f"scenario started at t = {seconds:.3f} s (sim time)")
            elif event == "hand":
                self._send_hand_target(t, now.to_msg())
            elif event == "push":
                self._send_push(t, now.to_msg())
            else:
                self.get_logger().info(f"t = {t:.2f} s: scenario finished")
                self.context.try_shutdown()  # ends the spin: exit code 0

    def _send_hand_target(self, t: float, stamp: Time) -> None:
        """The hand target: where the hand is now, moved by the scenario's offset."""
        scenario = self.scenario
        hand = self.model.frame_placement(
            np.concatenate([self.base, self.joints]), scenario.hand_frame
        )
        target = hand.translation + np.asarray(scenario.hand_offset)
        message = PoseStamped()
        message.header.frame_id = self.settings.world_frame
        message.header.stamp = stamp
        message.pose = pose_message(target, quaternion_xyzw_from_rotation(hand.rotation))
        self.target_publisher.publish(message)
        self.get_logger().info(
            f"t = {t:.2f} s: {scenario.hand_task} from {np.round(hand.translation, 4)} "
            f"to {np.round(target, 4)} over {scenario.hand_duration} s"
        )

    def _send_push(self, t: float, stamp: Time) -> None:
        """The push on the simulator's apply_wrench."""
        scenario = self.scenario
        message = WrenchStamped()
        message.header.frame_id = scenario.push_frame
        message.header.stamp = stamp
        message.wrench = wrench_message(np.concatenate([scenario.push_force, np.zeros(3)]))
        self.push_publisher.publish(message)
        self.get_logger().info(
            f"t = {t:.2f} s: push {list(scenario.push_force)} N on {scenario.push_frame} "
            f"for {scenario.push_duration} s ({np.linalg.norm(scenario.push_impulse):.2f} N s)"
        )


def check_parameters(parameters: Mapping[str, Any]) -> None:
    """The checks this node makes of its parameters at start, without starting it.

    The settings (ranges, the order of the timeline), the robot config, the model frames the
    scenario names and its target topic. ``wbm launch`` calls it for its pre-flight checks.

    Args:
        parameters: The node's parameters by dotted name, typed as the node receives them;
            ROS's own (``use_sim_time``) are left to the caller.

    Raises:
        ConfigError: A value the node would refuse; the key is the parameter's name (an error
            in the robot config file keeps that file's path and key).
        WbmError: The robot's URDF cannot be read into a model.
    """
    values = {name: value for name, value in parameters.items() if name not in ROS_PARAMETERS}
    settings = ScenarioNodeSettings.from_mapping(nest(values))
    model = WholeBodyModel.from_config(load_robot(settings.robot))
    scenario = settings.scenario
    for key, frame in (("hand_frame", scenario.hand_frame), ("push_frame", scenario.push_frame)):
        try:
            model.frame_id(frame)
        except NameNotFound as error:
            expected = f"a frame of the robot ({error})"
            raise ConfigError(None, f"scenario.{key}", expected, frame) from None
    try:
        validate_topic_name(f"targets/{scenario.hand_task}")
    except InvalidTopicNameException:
        raise ConfigError(
            None, "scenario.hand_task", "a task name that makes a valid topic", scenario.hand_task
        ) from None


def main(args: list[str] | None = None) -> int:
    """Entry point of ``wbm_scenario``."""
    return run_node(ScenarioNode, "wbm_scenario", args)


if __name__ == "__main__":
    sys.exit(main())
