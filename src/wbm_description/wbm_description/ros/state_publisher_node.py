"""The state publisher node: robot_description, TF (world -> base -> links) and markers.

Run::

    wbm_state_publisher --ros-args --params-file config/icub/state_publisher.yaml

Publishes:

- ``robot_description`` (std_msgs/String, reliable, transient local): the URDF, once.
- ``tf_static`` (tf2_msgs/TFMessage, transient local): fixed and locked joints, tool frames.
- ``tf`` (tf2_msgs/TFMessage): for every valid ``joint_states`` message, the actuated joints'
  transforms and (floating base, once a base pose arrived) world -> base, stamped with the
  joint_states stamp.
- ``markers`` (visualization_msgs/MarkerArray) at ``marker_rate``: CoM and its ground projection,
  CoP/ZMP from the F/T sensors, support polygon, contact forces
  (:mod:`wbm_description.markers`), stamped with the latest joint_states stamp.

Subscribes to ``joint_states``, the base pose topic and the F/T topics
(:mod:`wbm_description.ros.state_inputs`). The work is done by :mod:`wbm_description.tf_tree`
and :mod:`wbm_description.markers`; this module only converts. A bad parameter, robot config or
URDF stops the node at start with a message naming it (exit code 2).
"""

from __future__ import annotations

import sys

import rclpy
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.exceptions import ParameterException
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

from wbm_description.exceptions import WbmError
from wbm_description.ft_ground_reaction import FootForceSensors
from wbm_description.markers import marker_scene
from wbm_description.package_paths import resolve_package_uris_in_text
from wbm_description.registry import load_robot
from wbm_description.ros.marker_messages import (
    marker_array_message,
    transform_stamped_messages,
)
from wbm_description.ros.state_inputs import RobotStateInputs
from wbm_description.state_publisher_settings import StatePublisherSettings
from wbm_description.tf_tree import TfTree
from wbm_description.whole_body_model import WholeBodyModel

LATCHED_QOS = QoSProfile(
    depth=1,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
)
TF_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)

_DESCRIPTIONS = {
    "robot": "registered robot name or robot config file",
    "base_pose_topic": "nav_msgs/Odometry of the base: ground_truth/odom or odom",
    "world_frame": "TF frame of the world, root of the tree (not prefixed)",
    "frame_prefix": "prefix of every link frame name, as robot_state_publisher's",
    "ft_topic_prefix": "F/T sensor s of the robot config is read on <prefix><s>",
    "resolve_package_uris": "publish robot_description with package:// replaced by file://",
    "marker_rate": "marker publication rate [Hz], 0 disables markers",
    "ground_height": "height of the ground plane [m]",
    "min_normal_force": "normal force above which a foot is loaded [N]",
    "force_scale": "contact force arrow length per newton [m/N]",
    "invalid_input_log_period": "at most one dropped-message report per topic per period [s]",
    "viewer_rate": "browser viewer refresh rate [Hz] (viewer only)",
}


def declare_settings(node: Node) -> StatePublisherSettings:
    """Declare the settings as read-only ROS parameters and return them validated.

    Raises:
        ConfigError: A parameter has a wrong type or value (named in the message).
    """
    defaults = StatePublisherSettings()
    values = {}
    for name, description in _DESCRIPTIONS.items():
        descriptor = ParameterDescriptor(
            description=description, read_only=True, dynamic_typing=True
        )
        parameter = node.declare_parameter(name, getattr(defaults, name), descriptor)
        values[name] = parameter.value
    return StatePublisherSettings.from_mapping(
        values, source=f"parameters of node '{node.get_name()}'"
    )


def load_model(robot: str) -> WholeBodyModel:
    """The whole-body model of a registered robot name or a robot config path."""
    return WholeBodyModel.from_config(load_robot(robot))


class StatePublisherNode(Node):
    """robot_description, TF and markers of one robot (see the module docstring)."""

    def __init__(self, **kwargs):
        super().__init__("state_publisher", **kwargs)
        self.settings = declare_settings(self)
        self.model = load_model(self.settings.robot)
        self.tree = TfTree(
            self.model,
            world_frame=self.settings.world_frame,
            frame_prefix=self.settings.frame_prefix,
        )
        self.sensors = FootForceSensors(self.model)
        self.marker_options = self.settings.marker_options()
        self.inputs = RobotStateInputs(self, self.model, self.settings, self._publish_tf)

        description = self.model.urdf_text
        if self.settings.resolve_package_uris:
            description, unresolved = resolve_package_uris_in_text(description)
            if unresolved:
                self.get_logger().warning(f"URIs left unresolved: {sorted(set(unresolved))}")
        self._description_publisher = self.create_publisher(
            String, "robot_description", LATCHED_QOS
        )
        self._description_publisher.publish(String(data=description))

        self._static_publisher = self.create_publisher(TFMessage, "tf_static", LATCHED_QOS)
        static = transform_stamped_messages(
            self.tree.static_transforms(), stamp=self.get_clock().now().to_msg()
        )
        self._static_publisher.publish(TFMessage(transforms=static))

        self._tf_publisher = self.create_publisher(TFMessage, "tf", TF_QOS)
        moving = self.tree.moving_transforms(self.model.neutral_configuration())
        self._tf_messages = transform_stamped_messages(
            moving, stamp=self.get_clock().now().to_msg()
        )
        joints_only = self._tf_messages[:-1] if self.model.floating_base else self._tf_messages
        self._tf_with_base = TFMessage(transforms=self._tf_messages)
        self._tf_joints_only = TFMessage(transforms=joints_only)
        self._q = self.model.neutral_configuration()
        self.published_tf = 0

        self._marker_publisher = self.create_publisher(MarkerArray, "markers", 10)
        if self.settings.marker_rate > 0.0:
            self.create_timer(1.0 / self.settings.marker_rate, self._publish_markers)
        self.get_logger().info(
            f"robot '{self.model.config.name}': {len(self.tree.static_edges)} static and "
            f"{len(self.tree.moving_edges)} moving transforms, base pose from "
            f"'{self.settings.base_pose_topic if self.model.floating_base else 'fixed base'}'"
        )

    def _publish_tf(self) -> None:
        inputs = self.inputs
        q = self._q
        floating = self.model.floating_base
        start = 7 if floating else 0
        q[start:] = inputs.joint_positions
        with_base = floating and inputs.base_configuration is not None
        if with_base:
            q[:7] = inputs.base_configuration
        stamp = inputs.stamp
        translations, rotations = self.tree.moving_transform_arrays(q)
        for message, (tx, ty, tz), (rx, ry, rz, rw) in zip(
            self._tf_messages, translations.tolist(), rotations.tolist(), strict=True
        ):
            message.header.stamp = stamp
            t = message.transform.translation
            t.x, t.y, t.z = tx, ty, tz
            r = message.transform.rotation
            r.x, r.y, r.z, r.w = rx, ry, rz, rw
        self._tf_publisher.publish(
            self._tf_with_base if with_base or not floating else self._tf_joints_only
        )
        self.published_tf += 1

    def _publish_markers(self) -> None:
        q = self.inputs.configuration()
        if q is None:
            return
        try:
            scene = marker_scene(self.sensors, q, dict(self.inputs.readings), self.marker_options)
        except WbmError as error:  # a state that passed the input checks but not the model's
            self.inputs.reporter.drop("markers", error)
            return
        self._marker_publisher.publish(
            marker_array_message(
                scene, frame_id=self.settings.world_frame, stamp=self.inputs.stamp
            )
        )


def run_node(node_class: type[Node], program: str, args: list[str] | None = None) -> int:
    """Start ``node_class`` and spin it until shutdown (SIGINT or SIGTERM).

    The single-threaded executor, not rclpy's EventsExecutor: the latter (rclpy 9.1) ignores
    SIGINT/SIGTERM and keeps a core busy while idle.

    Returns:
        0 after a clean shutdown, 2 when the node refused to start (message on stderr).
    """
    rclpy.init(args=args)
    try:
        node = node_class()
    except (WbmError, ParameterException) as error:
        print(f"{program}: error: {error}", file=sys.stderr, flush=True)
        rclpy.try_shutdown()
        return 2
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


def main(args: list[str] | None = None) -> int:
    """Entry point of ``wbm_state_publisher``."""
    return run_node(StatePublisherNode, "wbm_state_publisher", args)


if __name__ == "__main__":
    sys.exit(main())
