"""The robot-state inputs shared by the state publisher and the viewer: validated, latest values.

Subscribes to ``joint_states`` (sensor_msgs/JointState), the base pose topic (nav_msgs/Odometry,
floating base only) and ``<ft_topic_prefix><sensor>`` (geometry_msgs/WrenchStamped) for every F/T
sensor of the robot config. Malformed messages (unknown or missing joints, length mismatch,
NaN/inf, a non-unit quaternion, a wrong frame) are dropped and reported at most once per
``invalid_input_log_period`` per topic; the last good values are kept.

Inputs use best-effort QoS, which matches both reliable and best-effort publishers. A node that
takes every message (``newest_only`` false) has a 100-message queue: 0.1 s of joint_states at
1 kHz, so that a node the scheduler holds back for a few milliseconds catches up instead of
dropping messages. A node that samples its inputs at its own rate (``newest_only``, the state
publisher's ``input_rate``) has queues of depth 1: it takes only the newest message of each topic.
Within one wake-up of the input thread, joint_states is taken after the base pose and the
wrenches (subscription order), so a TF published on it uses the base pose of the same wake-up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from wbm_description.exceptions import InputError
from wbm_description.ros.messages import (
    base_from_odometry,
    joint_arrays_from_message,
    seconds_from_time,
    wrench_from_message,
)
from wbm_description.ros.node_runtime import ThrottledLog
from wbm_description.state_publisher_settings import StatePublisherSettings
from wbm_description.whole_body_model import WholeBodyModel

INPUT_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.BEST_EFFORT)
NEWEST_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)


class DroppedInputReporter:
    """Counts dropped messages per topic and logs at most one report per period and topic."""

    def __init__(self, node: Node, period: float):
        self._log = ThrottledLog(node.get_logger(), period)
        self._dropped: dict[str, int] = {}
        self.total_dropped = 0

    def drop(self, topic: str, error: Exception) -> None:
        """Record a dropped message on ``topic`` and report it if the period has passed."""
        self.total_dropped += 1
        self._dropped[topic] = self._dropped.get(topic, 0) + 1
        if self._log.due(topic):
            count = self._dropped.pop(topic)
            self._log.logger.warning(
                f"dropped {count} message(s) on '{topic}', keeping the last good values: {error}"
            )


class RobotStateInputs:
    """Latest valid joint positions, base configuration and F/T readings of one robot.

    Args:
        node: The node that owns the subscriptions.
        model: The whole-body model (joint names, F/T sensors, base type).
        settings: Topic names and the report period.
        on_joint_state: Called after every valid joint_states message with its stamp [s].
        subscribe: Creates the subscriptions, as ``node.create_subscription(type, topic,
            callback, qos)`` (the default), e.g. an
            :meth:`~wbm_description.ros.input_thread.InputThread.subscribe`.
        newest_only: Queues of depth 1 (a node that samples its inputs at its own rate).

    Attributes:
        joint_positions: Latest joint positions in model order [rad], or None.
        stamp: Header stamp of the latest valid joint_states (builtin_interfaces/Time), or None.
        base_configuration: Latest base (x, y, z, qx, qy, qz, qw) in the world; None until a
            valid odometry message arrived, and always for a fixed base.
        readings: Latest (force, torque) per F/T sensor name, sensor frame.
    """

    def __init__(
        self,
        node: Node,
        model: WholeBodyModel,
        settings: StatePublisherSettings,
        on_joint_state: Callable[[], None] | None = None,
        subscribe: Callable[..., Any] | None = None,
        newest_only: bool = False,
    ):
        self._model = model
        self._joint_index = model.joint_indices
        self._on_joint_state = on_joint_state
        self._base_names = {model.config.base_link, settings.frame_prefix + model.config.base_link}
        self.reporter = DroppedInputReporter(node, settings.invalid_input_log_period)
        self.joint_positions: np.ndarray | None = None
        self.stamp = None
        self.stamp_seconds = 0.0
        self.base_configuration: np.ndarray | None = None
        self.readings: dict[str, np.ndarray] = {}
        subscribe = subscribe or node.create_subscription
        qos = NEWEST_QOS if newest_only else INPUT_QOS
        if model.floating_base:
            self._odom_topic = settings.base_pose_topic
            subscribe(Odometry, settings.base_pose_topic, self._odometry, qos)
        for sensor in model.config.ft_sensors:
            frames = {sensor.frame, settings.frame_prefix + sensor.frame}
            topic = f"{settings.ft_topic_prefix}{sensor.name}"
            subscribe(
                WrenchStamped,
                topic,
                lambda message, s=sensor.name, f=frames, t=topic: self._wrench(message, s, f, t),
                qos,
            )
        subscribe(JointState, "joint_states", self._joint_state, qos)  # last: see the module

    def _joint_state(self, message: JointState) -> None:
        try:
            arrays = joint_arrays_from_message(message, self._joint_index, require_all=True)
            if arrays.position is None:
                raise InputError("position", f"{self._model.ndof} joint positions", "none")
        except InputError as error:
            self.reporter.drop("joint_states", error)
            return
        positions = np.empty(self._model.ndof)
        positions[arrays.indices] = arrays.position
        self.joint_positions = positions
        self.stamp = message.header.stamp
        self.stamp_seconds = seconds_from_time(message.header.stamp)
        if self._on_joint_state is not None:
            self._on_joint_state()

    def _odometry(self, message: Odometry) -> None:
        try:
            if message.child_frame_id and message.child_frame_id not in self._base_names:
                raise InputError(
                    "child_frame_id",
                    f"the base link {sorted(self._base_names)}",
                    message.child_frame_id,
                )
            configuration, _ = base_from_odometry(message)
        except InputError as error:
            self.reporter.drop(self._odom_topic, error)
            return
        self.base_configuration = configuration

    def _wrench(self, message: WrenchStamped, sensor: str, frames: set[str], topic: str) -> None:
        try:
            if message.header.frame_id and message.header.frame_id not in frames:
                raise InputError(
                    "header.frame_id",
                    f"the sensor frame {sorted(frames)}",
                    message.header.frame_id,
                )
            self.readings[sensor] = wrench_from_message(message.wrench)
        except InputError as error:
            self.reporter.drop(topic, error)

    def configuration(self) -> np.ndarray | None:
        """The latest full configuration q, or None until joints (and the base) are known."""
        if self.joint_positions is None:
            return None
        if not self._model.floating_base:
            return self.joint_positions.copy()
        if self.base_configuration is None:
            return None
        return np.concatenate([self.base_configuration, self.joint_positions])
