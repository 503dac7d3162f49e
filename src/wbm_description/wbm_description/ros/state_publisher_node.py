"""The state publisher node: robot_description, TF (world -> base -> links) and markers.

Run::

    wbm_state_publisher --ros-args --params-file config/icub/state_publisher.yaml

Publishes:

- ``robot_description`` (std_msgs/String, reliable, transient local): the URDF, once.
- ``tf_static`` (tf2_msgs/TFMessage, transient local): fixed and locked joints, tool frames.
- ``tf`` (tf2_msgs/TFMessage): ``publish_frequency`` times per second of robot time (as
  robot_state_publisher's, on average: one per slot of stamps; 0: for every valid
  ``joint_states`` message), the actuated joints' transforms of the newest joint_states and
  (floating base, once a base pose arrived) world -> base, stamped with that joint_states
  stamp. The samples in between cost no kinematics
  (:class:`~wbm_description.decimation.Decimator`), so a 1 kHz robot loop does not pay for TF.
- ``markers`` (visualization_msgs/MarkerArray) ``marker_rate`` times per wall second (on the
  input thread, :meth:`~wbm_description.ros.input_thread.InputThread.every`, as a viewer
  refreshes, whatever the robot's pace): CoM and its ground projection,
  CoP/ZMP from the F/T sensors, support polygon, contact forces
  (:mod:`wbm_description.markers`), stamped with the latest joint_states stamp.

Subscribes to ``joint_states``, the base pose topic and the F/T topics
(:mod:`wbm_description.ros.state_inputs`), taken with ``/clock`` on the node's input thread
(:class:`~wbm_description.ros.input_thread.InputThread`; TF is published from it). The thread
wakes up at most ``input_rate`` times per wall second and takes the newest message of each topic
(queues of depth 1): at 500 Hz or 1 kHz of robot samples the node costs a few takes per period
instead of one per message (``input_rate`` 0: every message, as it arrives). The work
is done by :mod:`wbm_description.tf_tree` and :mod:`wbm_description.markers`; this module only
converts. A bad parameter, robot config or URDF stops the node at start with a message naming it
(exit code 2, see
:func:`~wbm_description.ros.node_runtime.run_node`); :func:`check_parameters` makes the same
parameter checks without starting the node (``wbm launch`` runs it before starting anything).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from rclpy.exceptions import InvalidTopicNameException
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.validate_topic_name import validate_topic_name
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

from wbm_description.decimation import Decimator
from wbm_description.exceptions import ConfigError, WbmError
from wbm_description.ft_ground_reaction import FootForceSensors
from wbm_description.markers import marker_scene
from wbm_description.package_paths import resolve_package_uris_in_text
from wbm_description.registry import load_robot
from wbm_description.ros.cdr_writer import TfMessageWriter
from wbm_description.ros.input_thread import InputThread, quiet_publisher_events
from wbm_description.ros.marker_messages import (
    MarkerArrayMessages,
    transform_stamped_messages,
)
from wbm_description.ros.node_runtime import (
    ROS_PARAMETERS,
    WbmNode,
    declare_settings,
    run_node,
)
from wbm_description.ros.state_inputs import RobotStateInputs
from wbm_description.settings import nest
from wbm_description.state_publisher_settings import StatePublisherSettings
from wbm_description.tf_tree import TfTree
from wbm_description.whole_body_model import WholeBodyModel

LATCHED_QOS = QoSProfile(
    depth=1,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
)
TF_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)


class StatePublisherNode(WbmNode):
    """robot_description, TF and markers of one robot (see the module docstring)."""

    def __init__(self, **kwargs):
        super().__init__("state_publisher", **kwargs)
        self.settings = declare_settings(self, StatePublisherSettings)
        self.model = WholeBodyModel.from_config(load_robot(self.settings.robot))
        self.tree = TfTree(
            self.model,
            world_frame=self.settings.world_frame,
            frame_prefix=self.settings.frame_prefix,
        )
        self.sensors = FootForceSensors(self.model)
        self.marker_options = self.settings.marker_options()
        # The inputs (and /clock) on the input thread: a wait set of their own instead of an
        # executor wake-up of every entity per message; the markers are drawn there too.
        rate = self.settings.input_rate
        self.input_thread = InputThread(self, min_period=1.0 / rate if rate > 0.0 else 0.0)
        self.inputs = RobotStateInputs(
            self,
            self.model,
            self.settings,
            self._publish_tf,
            subscribe=self.input_thread.subscribe,
            newest_only=rate > 0.0,
        )
        self.input_thread.take_clock()

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

        self._tf_publisher = self.create_publisher(
            TFMessage, "tf", TF_QOS, event_callbacks=quiet_publisher_events()
        )
        # Written serialized (the moving edges' layout once; the base edge last, left out
        # while no base pose is known).
        edges = [
            (transform.parent, transform.child)
            for transform in self.tree.moving_transforms(self.model.neutral_configuration())
        ]
        self._tf_with_base = TfMessageWriter(edges)
        self._tf_joints_only = (
            TfMessageWriter(edges[:-1]) if self.model.floating_base else self._tf_with_base
        )
        self._markers = MarkerArrayMessages(self.settings.world_frame)
        self._q = self.model.neutral_configuration()
        self._tf_decimator = Decimator(self.settings.publish_frequency)
        self.published_tf = 0

        self._marker_publisher = self.create_publisher(MarkerArray, "markers", 10)
        if self.settings.marker_rate > 0.0:
            # On the input thread (no executor wake-up of every entity per array), per wall
            # second, as a viewer refreshes (not per robot second: a lockstep run at 2x would
            # draw twice as often for nobody).
            self.input_thread.every(1.0 / self.settings.marker_rate, self._publish_markers)
        self.get_logger().info(
            f"robot '{self.model.config.name}': {len(self.tree.static_edges)} static and "
            f"{len(self.tree.moving_edges)} moving transforms, base pose from "
            f"'{self.settings.base_pose_topic if self.model.floating_base else 'fixed base'}', "
            f"TF at {self.settings.publish_frequency:g} Hz"
        )

    def start(self) -> None:
        """Start taking the inputs (the input thread), then apply the priority."""
        self.input_thread.start()
        self.apply_realtime_priority(self.settings.realtime_priority)

    def stop(self) -> None:
        """Stop the input thread."""
        self.input_thread.stop()

    def _publish_tf(self) -> None:
        """After a valid joint_states, when due: the moving transforms (world -> base if known)."""
        stamp = self.inputs.stamp
        stamp_ns = stamp.sec * 1_000_000_000 + stamp.nanosec
        if not self._tf_decimator.due(stamp_ns):
            return
        base = self.inputs.base_configuration
        q = self._q
        q[7 if self.model.floating_base else 0 :] = self.inputs.joint_positions
        if base is not None:
            q[:7] = base
        translations, rotations = self.tree.moving_transform_arrays(q)
        if base is None and self.model.floating_base:
            message = self._tf_joints_only.write(stamp_ns, translations[:-1], rotations[:-1])
        else:
            message = self._tf_with_base.write(stamp_ns, translations, rotations)
        self._tf_publisher.publish(message)
        self.published_tf += 1

    def _publish_markers(self) -> None:
        """The markers of the newest state."""
        q = self.inputs.configuration()
        if q is None:
            return
        try:
            scene = marker_scene(self.sensors, q, dict(self.inputs.readings), self.marker_options)
        except WbmError as error:  # a state that passed the input checks but not the model's
            self.inputs.reporter.drop("markers", error)
            return
        self._marker_publisher.publish(self._markers.fill(scene, self.inputs.stamp))


def check_parameters(parameters: Mapping[str, Any]) -> None:
    """The checks this node makes of its parameters at start, without starting it.

    ``wbm launch`` calls it for its pre-flight checks (the viewer, which reads the same
    parameters, too).

    Args:
        parameters: The node's parameters by dotted name, typed as the node receives them;
            ROS's own (``use_sim_time``) are left to the caller.

    Raises:
        ConfigError: A value the node would refuse; the key is the parameter's name (an error
            in the robot config file keeps that file's path and key).
    """
    values = {name: value for name, value in parameters.items() if name not in ROS_PARAMETERS}
    settings = StatePublisherSettings.from_mapping(nest(values))
    config = load_robot(settings.robot)
    _check_topic("base_pose_topic", settings.base_pose_topic)
    for sensor in config.ft_sensors:
        _check_topic("ft_topic_prefix", f"{settings.ft_topic_prefix}{sensor.name}")


def _check_topic(key: str, topic: str) -> None:
    try:
        validate_topic_name(topic)
    except InvalidTopicNameException as error:
        reason = str(error).splitlines()[0].removeprefix("Invalid topic name: ").rstrip(":")
        raise ConfigError(None, key, f"a valid ROS topic name ({reason})", topic) from None


def main(args: list[str] | None = None) -> int:
    """Entry point of ``wbm_state_publisher``."""
    return run_node(StatePublisherNode, "wbm_state_publisher", args)


if __name__ == "__main__":
    sys.exit(main())
