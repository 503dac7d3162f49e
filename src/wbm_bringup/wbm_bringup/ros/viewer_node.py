"""The browser viewer node: the robot, its markers and controls in a viser page on localhost.

Run::

    wbm_viewer --ros-args -p robot:=icub

and open the URL it prints (``wbm_viewer: open http://127.0.0.1:<port>/``); it also prints the
default camera (``wbm_viewer: camera position=... look_at=... up=... fov_deg=...``).

Subscribes to ``joint_states`` (sensor_msgs/JointState) and the base pose topic
(nav_msgs/Odometry, parameter ``base_pose_topic``), every MarkerArray topic of
``marker_topics`` (drawn by namespace), ``diagnostics`` (diagnostic_msgs/DiagnosticArray: the
controller's mode, safe hold and reason, tracking errors, CoM and ZMP) and ``/clock``
(rosgraph_msgs/Clock: the real-time factor against wall time). Publishes what the page's
controls ask: ``targets/<task>`` (geometry_msgs/PoseStamped, frame_id the world frame),
``targets/com`` (geometry_msgs/PointStamped), ``apply_wrench`` (geometry_msgs/WrenchStamped,
frame_id the pushed link, force = impulse / ``push_duration``), ``cmd_vel``
(geometry_msgs/Twist) and ``goal_pose`` (geometry_msgs/PoseStamped); calls the robot
interface's ``reset``, ``pause`` and ``resume`` services (std_srvs/Trigger).

Wiring only: each callback converts a message to plain values and calls the core
(:class:`~wbm_bringup.viewer.live_view.LiveView` for what comes in,
:class:`~wbm_bringup.viewer.app.BrowserViewer` for the page, whose controls call back here to
publish). The page is refreshed on a wall-clock timer, so it keeps answering while the
simulation is paused.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PointStamped, PoseStamped, Twist, WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.clock import Clock, ClockType
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock as ClockMessage
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from visualization_msgs.msg import Marker, MarkerArray

from wbm_bringup.viewer.app import BrowserViewer, ViewerCallbacks
from wbm_bringup.viewer.live_view import LiveView
from wbm_bringup.viewer.markers_view import MarkerAction, MarkerItem
from wbm_bringup.viewer.settings import ViewerSettings
from wbm_bringup.viewer.urdf_visuals import load_visuals
from wbm_description.exceptions import ConfigError, InputError
from wbm_description.registry import load_robot
from wbm_description.ros.messages import (
    base_from_odometry,
    joint_arrays_from_message,
    seconds_from_time,
)
from wbm_description.ros.node_runtime import (
    ROS_PARAMETERS,
    WbmNode,
    declare_settings,
    run_node,
)
from wbm_description.settings import nest
from wbm_description.whole_body_model import WholeBodyModel

INPUT_QOS = QoSProfile(depth=20, reliability=ReliabilityPolicy.BEST_EFFORT)
COMMAND_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)


def marker_item(marker: Marker, topic: str) -> tuple[str, MarkerItem]:
    """(header frame, item in that frame) of one visualization_msgs/Marker."""
    action = MarkerAction.ADD if marker.action in (0, 1) else MarkerAction(marker.action)
    p, o, s, c = marker.pose.position, marker.pose.orientation, marker.scale, marker.color
    item = MarkerItem(
        topic,
        marker.ns,
        marker.id,
        action,
        marker.type,
        np.array([p.x, p.y, p.z]),
        np.array([o.w, o.x, o.y, o.z]),
        np.array([s.x, s.y, s.z]),
        (c.r, c.g, c.b, c.a),
        np.array([[q.x, q.y, q.z] for q in marker.points]).reshape(-1, 3),
        marker.text,
    )
    return marker.header.frame_id, item


class BrowserViewerNode(WbmNode):
    """Mirrors one robot into a browser page and publishes its controls (see the module doc)."""

    def __init__(self, **kwargs):
        super().__init__("viewer", **kwargs)
        settings = self.settings = declare_settings(self, ViewerSettings)
        self.throttled.period = settings.invalid_input_log_period
        model = self.model = WholeBodyModel.from_config(load_robot(settings.robot))
        for frame in settings.target_frames:
            model.frame_id(frame)  # an unknown frame stops the start with its name
        visuals = load_visuals(model.urdf_text or "", model.urdf_path)
        for problem in visuals.problems:
            self.get_logger().error(f"cannot load a visual, left out: {problem}")
        self.pose_publishers = {
            task: self.create_publisher(PoseStamped, f"targets/{task}", COMMAND_QOS)
            for task in settings.target_tasks
        }
        self.pose_publishers["goal"] = self.create_publisher(PoseStamped, "goal_pose", COMMAND_QOS)
        self.com_publisher = self.create_publisher(PointStamped, "targets/com", COMMAND_QOS)
        self.wrench_publisher = self.create_publisher(WrenchStamped, "apply_wrench", COMMAND_QOS)
        self.cmd_vel_publisher = self.create_publisher(Twist, "cmd_vel", COMMAND_QOS)
        self.trigger_clients = {
            name: self.create_client(Trigger, name) for name in ("reset", "pause", "resume")
        }
        callbacks = ViewerCallbacks(
            on_pose_target=self._publish_pose,
            on_com_target=self._publish_com_target,
            on_push=self._publish_push,
            on_cmd_vel=self._publish_cmd_vel,
            on_goal=lambda position, wxyz: self._publish_pose("goal", position, wxyz),
            on_service=self._call_service,
        )
        self.viewer = BrowserViewer(model, visuals, settings, callbacks)
        try:
            self.live = LiveView(self.viewer)
            self.create_subscription(JointState, "joint_states", self._on_joint_states, INPUT_QOS)
            if model.floating_base:
                topic = settings.base_pose_topic
                self.create_subscription(Odometry, topic, self._on_odometry, INPUT_QOS)
            for topic in settings.marker_topics:
                self.create_subscription(
                    MarkerArray, topic, lambda m, t=topic: self._on_markers(m, t), 10
                )
            self.create_subscription(DiagnosticArray, "diagnostics", self._on_diagnostics, 50)
            self.create_subscription(ClockMessage, "/clock", self._on_clock, INPUT_QOS)
            steady = Clock(clock_type=ClockType.STEADY_TIME)
            self.create_timer(1.0 / settings.refresh_rate, self._refresh, clock=steady)
        except BaseException:
            self.viewer.close()
            raise
        print(f"wbm_viewer: open {self.viewer.url}", flush=True)
        print(f"wbm_viewer: camera {self.viewer.camera.describe()}", flush=True)
        self.get_logger().info(
            f"browser viewer of '{model.config.name}' at {self.viewer.url}; base pose from "
            f"'{settings.base_pose_topic}', markers from {list(settings.marker_topics)}"
        )

    # ------------------------------------------------------------------ inputs

    def _dropped(self, topic: str, error: Exception) -> None:
        self.throttled.warning(topic, f"dropped a message on '{topic}': {error}")

    def _on_joint_states(self, message: JointState) -> None:
        try:
            arrays = joint_arrays_from_message(message, self.model.joint_indices, require_all=True)
            self.live.set_joint_positions(arrays.indices, arrays.position)
        except InputError as error:
            self._dropped("joint_states", error)

    def _on_odometry(self, message: Odometry) -> None:
        try:
            self.live.set_base(base_from_odometry(message)[0])
        except InputError as error:
            self._dropped(self.settings.base_pose_topic, error)

    def _on_markers(self, message: MarkerArray, topic: str) -> None:
        try:
            problems = self.live.add_markers(marker_item(m, topic) for m in message.markers)
        except (InputError, ValueError) as error:
            self._dropped(topic, error)
            return
        for problem in problems:
            self.throttled.warning(f"{topic}:draw", f"on '{topic}': {problem}")

    def _on_diagnostics(self, message: DiagnosticArray) -> None:
        entries = [({kv.key: kv.value for kv in s.values}, s.message) for s in message.status]
        self.live.add_diagnostics(entries, seconds_from_time(message.header.stamp))

    def _on_clock(self, message: ClockMessage) -> None:
        self.live.add_clock(seconds_from_time(message.clock), time.monotonic())

    def _refresh(self) -> None:
        for problem in self.live.refresh(time.monotonic()):
            self.throttled.warning("show", problem)

    # ------------------------------------------------------------------ controls

    def _publish_pose(self, name: str, position: np.ndarray, wxyz: np.ndarray) -> None:
        message = PoseStamped()
        message.header.stamp = self.get_clock().now().to_msg()
        message.header.frame_id = self.settings.world_frame
        p, o = message.pose.position, message.pose.orientation
        p.x, p.y, p.z = (float(v) for v in position)
        o.w, o.x, o.y, o.z = (float(v) for v in wxyz)
        self.pose_publishers[name].publish(message)

    def _publish_com_target(self, position: np.ndarray) -> None:
        message = PointStamped()
        message.header.stamp = self.get_clock().now().to_msg()
        message.header.frame_id = self.settings.world_frame
        message.point.x, message.point.y, message.point.z = (float(v) for v in position)
        self.com_publisher.publish(message)

    def _publish_push(self, force: np.ndarray, link: str) -> None:
        message = WrenchStamped()
        message.header.stamp = self.get_clock().now().to_msg()
        message.header.frame_id = link or self.settings.push_link or self.model.config.base_link
        f = message.wrench.force
        f.x, f.y, f.z = (float(v) for v in force)
        self.wrench_publisher.publish(message)
        self.get_logger().info(
            f"push on '{message.header.frame_id}': force {np.round(force, 3).tolist()} N "
            f"for {self.settings.push_duration:g} s"
        )

    def _publish_cmd_vel(self, forward: float, sideways: float, turning: float) -> None:
        message = Twist()
        message.linear.x, message.linear.y, message.angular.z = forward, sideways, turning
        self.cmd_vel_publisher.publish(message)

    def _call_service(self, name: str) -> None:
        client = self.trigger_clients[name]
        if not client.service_is_ready():
            self.live.service_unavailable(name)
            return
        future = client.call_async(Trigger.Request())
        future.add_done_callback(lambda f: self._service_done(name, f))

    def _service_done(self, name: str, future) -> None:
        try:
            response = future.result()
        except Exception as error:  # the call failed (the server went away)
            self.live.service_failed(name, str(error))
            return
        self.live.service_answered(name, response.success, response.message)

    def stop(self) -> None:
        """Stop the page's server with the node."""
        self.viewer.close()


def check_parameters(parameters: Mapping[str, Any]) -> None:
    """The checks of this node's parameters, without starting it (``wbm launch`` pre-flight).

    Raises:
        ConfigError: A value the node would refuse; the key is the parameter's name.
    """
    values = {name: value for name, value in parameters.items() if name not in ROS_PARAMETERS}
    settings = ViewerSettings.from_mapping(nest(values))
    try:
        load_robot(settings.robot)
    except ConfigError as error:
        raise ConfigError(None, "robot", f"a robot config ({error})", settings.robot) from None


def main(args: list[str] | None = None) -> int:
    """Entry point of ``wbm_viewer``."""
    return run_node(BrowserViewerNode, "wbm_viewer", args)


if __name__ == "__main__":
    sys.exit(main())
