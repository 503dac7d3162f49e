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

Until a state arrives the robot shows in its initial posture. A mesh that cannot be loaded is
named in the log and left out. The page is refreshed on a wall-clock timer, so it keeps
answering while the simulation is paused. The work is in :mod:`wbm_bringup.viewer`.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
import pinocchio as pin
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PointStamped, PoseStamped, Twist, WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.clock import Clock, ClockType
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock as ClockMessage
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from visualization_msgs.msg import MarkerArray

from wbm_bringup.viewer.app import BrowserViewer, ViewerCallbacks
from wbm_bringup.viewer.markers_view import MarkerAction, MarkerItem
from wbm_bringup.viewer.settings import ViewerSettings
from wbm_bringup.viewer.status import (
    ControllerStatusView,
    RealTimeFactor,
    controller_status,
)
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
SERVICES = ("reset", "pause", "resume")
PLOT_PERIOD = 0.2  # [s] of wall time between plot redraws


def marker_items(message: MarkerArray, topic: str, frames: dict[str, object]) -> list[MarkerItem]:
    """Marker items (world frame) of a MarkerArray.

    Args:
        message: The message.
        topic: Its topic.
        frames: frame_id -> callable returning that frame's world pin.SE3 (the world frame maps
            to the identity).

    Raises:
        InputError: A marker in a frame the viewer does not know, or non-finite values.
    """
    items = []
    for marker in message.markers:
        action = MarkerAction.ADD if marker.action in (0, 1) else MarkerAction(marker.action)
        if action != MarkerAction.ADD:
            items.append(MarkerItem(topic, marker.ns, marker.id, action))
            continue
        placement = frames.get(marker.header.frame_id)
        if placement is None:
            raise InputError("header.frame_id", f"one of {sorted(frames)}", marker.header.frame_id)
        p, o = marker.pose.position, marker.pose.orientation
        position = np.array([p.x, p.y, p.z])
        quaternion = np.array([o.w, o.x, o.y, o.z])
        if not quaternion.any():
            quaternion = np.array([1.0, 0.0, 0.0, 0.0])
        points = np.array([[q.x, q.y, q.z] for q in marker.points]).reshape(-1, 3)
        scale = np.array([marker.scale.x, marker.scale.y, marker.scale.z])
        values = np.concatenate([position, quaternion, scale, points.ravel()])
        if not np.all(np.isfinite(values)):
            raise InputError(f"marker {marker.ns}/{marker.id}", "finite values (no NaN or inf)")
        quaternion = quaternion / np.linalg.norm(quaternion)
        world = placement()
        if world is not None:  # a robot frame: compose with its placement
            position = world.rotation @ position + world.translation
            rotation = world.rotation @ _rotation(quaternion)
            quaternion = _quaternion(rotation)
        c = marker.color
        items.append(
            MarkerItem(
                topic,
                marker.ns,
                marker.id,
                action,
                marker.type,
                position,
                quaternion,
                scale,
                (c.r, c.g, c.b, c.a),
                points,
                marker.text,
            )
        )
    return items


def _rotation(wxyz: np.ndarray) -> np.ndarray:
    w, x, y, z = wxyz
    return pin.Quaternion(w, x, y, z).toRotationMatrix()


def _quaternion(rotation: np.ndarray) -> np.ndarray:
    x, y, z, w = pin.Quaternion(rotation).coeffs()
    return np.array([w, x, y, z])


class BrowserViewerNode(WbmNode):
    """Mirrors one robot into a browser page and publishes its controls (see the module doc)."""

    def __init__(self, **kwargs):
        super().__init__("viewer", **kwargs)
        self.settings = declare_settings(self, ViewerSettings)
        self.throttled.period = self.settings.invalid_input_log_period
        settings = self.settings
        self.model = WholeBodyModel.from_config(load_robot(settings.robot))
        for frame in settings.target_frames:
            self.model.frame_id(frame)  # an unknown frame stops the start with its name
        visuals = load_visuals(self.model.urdf_text or "", self.model.urdf_path)
        for problem in visuals.problems:
            self.get_logger().error(f"cannot load a visual, left out: {problem}")
        self._joint_index = self.model.joint_indices
        self._joints: np.ndarray | None = None
        self._base: np.ndarray | None = None
        self._shown: np.ndarray | None = None
        self._status: ControllerStatusView | None = None
        self._status_time: float | None = None
        self._sim_time: float | None = None
        self._rtf = RealTimeFactor(settings.rtf_window)
        self._last_plot = 0.0
        self._push_link_default = settings.push_link or self.model.config.base_link

        world = settings.world_frame
        self._pose_publishers = {
            task: self.create_publisher(PoseStamped, f"targets/{task}", COMMAND_QOS)
            for task in settings.target_tasks
        }
        self._com_publisher = self.create_publisher(PointStamped, "targets/com", COMMAND_QOS)
        self._wrench_publisher = self.create_publisher(WrenchStamped, "apply_wrench", COMMAND_QOS)
        self._cmd_vel_publisher = self.create_publisher(Twist, "cmd_vel", COMMAND_QOS)
        self._goal_publisher = self.create_publisher(PoseStamped, "goal_pose", COMMAND_QOS)
        self._trigger_clients = {name: self.create_client(Trigger, name) for name in SERVICES}
        self._world = world

        self.viewer = BrowserViewer(
            self.model,
            visuals,
            settings,
            ViewerCallbacks(
                on_pose_target=self._publish_pose_target,
                on_com_target=self._publish_com_target,
                on_push=self._publish_push,
                on_cmd_vel=self._publish_cmd_vel,
                on_goal=self._publish_goal,
                on_service=self._call_service,
            ),
        )
        try:
            self.create_subscription(JointState, "joint_states", self._on_joint_states, INPUT_QOS)
            if self.model.floating_base:
                self.create_subscription(
                    Odometry, settings.base_pose_topic, self._on_odometry, INPUT_QOS
                )
            for topic in settings.marker_topics:
                self.create_subscription(
                    MarkerArray, topic, lambda m, t=topic: self._on_markers(m, t), 10
                )
            self.create_subscription(DiagnosticArray, "diagnostics", self._on_diagnostics, 10)
            self.create_subscription(ClockMessage, "/clock", self._on_clock, INPUT_QOS)
            steady = Clock(clock_type=ClockType.STEADY_TIME)
            self.create_timer(1.0 / settings.refresh_rate, self._refresh, clock=steady)
        except BaseException:
            self.viewer.close()
            raise
        print(f"wbm_viewer: open {self.viewer.url}", flush=True)
        print(f"wbm_viewer: camera {self.viewer.camera.describe()}", flush=True)
        self.get_logger().info(
            f"browser viewer of '{self.model.config.name}' at {self.viewer.url}; base pose from "
            f"'{settings.base_pose_topic}', markers from {list(settings.marker_topics)}"
        )

    # ------------------------------------------------------------------ inputs

    def _on_joint_states(self, message: JointState) -> None:
        try:
            arrays = joint_arrays_from_message(message, self._joint_index, require_all=True)
            if arrays.position is None:
                raise InputError("position", f"{self.model.ndof} joint positions", "none")
        except InputError as error:
            self.throttled.warning("joint_states", f"dropped a joint_states message: {error}")
            return
        positions = np.empty(self.model.ndof)
        positions[arrays.indices] = arrays.position
        self._joints = positions

    def _on_odometry(self, message: Odometry) -> None:
        try:
            self._base, _ = base_from_odometry(message)
        except InputError as error:
            topic = self.settings.base_pose_topic
            self.throttled.warning(topic, f"dropped a message on '{topic}': {error}")

    def _configuration(self) -> np.ndarray | None:
        if self._joints is None:
            return None
        if not self.model.floating_base:
            return self._joints.copy()
        if self._base is None:
            return None
        return np.concatenate([self._base, self._joints])

    def _frames(self) -> dict[str, object]:
        frames: dict[str, object] = {"": lambda: None, self._world: lambda: None}
        q = self._configuration()
        if q is not None:
            for link in self.viewer.robot.visuals.links():
                frames.setdefault(link, lambda f=link: self.model.frame_placement(q, f))
        return frames

    def _on_markers(self, message: MarkerArray, topic: str) -> None:
        try:
            items = marker_items(message, topic, self._frames())
        except (InputError, ValueError) as error:
            self.throttled.warning(f"markers:{topic}", f"dropped a message on '{topic}': {error}")
            return
        for problem in self.viewer.apply_markers(items):
            self.throttled.warning(f"markers:{topic}:draw", f"on '{topic}': {problem}")

    def _on_diagnostics(self, message: DiagnosticArray) -> None:
        for entry in message.status:
            values = {kv.key: kv.value for kv in entry.values}
            if "mode" not in values:
                continue
            status = controller_status(values, entry.message)
            stamp = seconds_from_time(message.header.stamp)
            self._status, self._status_time = status, stamp
            self.viewer.add_tracking_errors(stamp, status.task_errors)
            self.viewer.add_balance_sample(stamp, status.com, status.zmp)
            return

    def _on_clock(self, message: ClockMessage) -> None:
        self._sim_time = seconds_from_time(message.clock)
        self._rtf.add(self._sim_time, time.monotonic())

    # ------------------------------------------------------------------ page refresh

    def _refresh(self) -> None:
        q = self._configuration()
        if q is not None and (self._shown is None or not np.array_equal(q, self._shown)):
            try:
                self.viewer.show(q)
                self._shown = q
            except InputError as error:
                self.throttled.warning("show", f"cannot show the state: {error}")
        now = time.monotonic()
        if now - self._last_plot < PLOT_PERIOD:
            return
        self._last_plot = now
        if q is None:
            state = "waiting for joint_states" + (
                f" and '{self.settings.base_pose_topic}'" if self.model.floating_base else ""
            )
        else:
            state = "live"
        self.viewer.set_status(self._status, self._rtf.value(now), self._sim_time, state)
        self.viewer.refresh_plots(self._support_polygon())

    def _support_polygon(self) -> np.ndarray | None:
        for key, item in list(self.viewer.markers.items.items()):
            if key[1] == "support_polygon" and item.points is not None and len(item.points):
                return item.points[:, :2]
        return None

    # ------------------------------------------------------------------ controls

    def _stamp(self):
        return self.get_clock().now().to_msg()

    def _publish_pose_target(self, task: str, position: np.ndarray, wxyz: np.ndarray) -> None:
        message = PoseStamped()
        message.header.stamp = self._stamp()
        message.header.frame_id = self._world
        p, o = message.pose.position, message.pose.orientation
        p.x, p.y, p.z = (float(v) for v in position)
        o.w, o.x, o.y, o.z = (float(v) for v in wxyz)
        self._pose_publishers[task].publish(message)

    def _publish_com_target(self, position: np.ndarray) -> None:
        message = PointStamped()
        message.header.stamp = self._stamp()
        message.header.frame_id = self._world
        message.point.x, message.point.y, message.point.z = (float(v) for v in position)
        self._com_publisher.publish(message)

    def _publish_push(self, force: np.ndarray, link: str) -> None:
        message = WrenchStamped()
        message.header.stamp = self._stamp()
        message.header.frame_id = link or self._push_link_default
        f = message.wrench.force
        f.x, f.y, f.z = (float(v) for v in force)
        self._wrench_publisher.publish(message)
        self.get_logger().info(
            f"push on '{message.header.frame_id}': force {np.round(force, 3).tolist()} N "
            f"for {self.settings.push_duration:g} s"
        )

    def _publish_cmd_vel(self, forward: float, sideways: float, turning: float) -> None:
        message = Twist()
        message.linear.x, message.linear.y, message.angular.z = forward, sideways, turning
        self._cmd_vel_publisher.publish(message)

    def _publish_goal(self, x: float, y: float, yaw: float) -> None:
        message = PoseStamped()
        message.header.stamp = self._stamp()
        message.header.frame_id = self._world
        message.pose.position.x, message.pose.position.y = x, y
        message.pose.orientation.z = math.sin(yaw / 2.0)
        message.pose.orientation.w = math.cos(yaw / 2.0)
        self._goal_publisher.publish(message)

    def _call_service(self, name: str) -> None:
        client = self._trigger_clients[name]
        if not client.service_is_ready():
            self.viewer.set_service_result(f"`{name}`: no robot interface offers it")
            return
        future = client.call_async(Trigger.Request())
        future.add_done_callback(lambda f, n=name: self._service_done(n, f))

    def _service_done(self, name: str, future) -> None:
        try:
            response = future.result()
        except Exception as error:  # the call failed (the server went away)
            self.viewer.set_service_result(f"`{name}` failed: {error}")
            return
        outcome = "done" if response.success else "refused"
        self.viewer.set_service_result(f"`{name}` {outcome}: {response.message}")

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
    """Entry point of the browser viewer (``wbm_viewer`` once the integrator swaps it in)."""
    return run_node(BrowserViewerNode, "wbm_viewer", args)


if __name__ == "__main__":
    sys.exit(main())
