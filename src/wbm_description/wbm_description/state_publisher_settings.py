"""Settings of the state publisher and the browser viewer, typed and validated (no ROS).

The nodes read them with :func:`~wbm_description.ros.node_runtime.declare_settings`: one
read-only ROS parameter per field (same name, default, description, unit and range). The
documented parameters file is ``config/icub/state_publisher.yaml`` of wbm_bringup.
"""

from __future__ import annotations

from dataclasses import dataclass

from wbm_description.markers import MarkerOptions
from wbm_description.settings import Settings, setting


@dataclass(frozen=True)
class StatePublisherSettings(Settings):
    """Parameters of the state publisher (and of the viewer, which reads the same topics)."""

    robot: str = setting("icub", nonempty=True, doc="registered robot name or robot config file")
    base_pose_topic: str = setting(
        "ground_truth/odom",
        nonempty=True,
        doc="nav_msgs/Odometry of the base: ground_truth/odom (simulator) or odom (estimate); "
        "unused for a fixed base",
    )
    world_frame: str = setting(
        "world", nonempty=True, doc="TF frame of the world, root of the tree (never prefixed)"
    )
    frame_prefix: str = setting(
        "", doc="prefix of every link frame name, as robot_state_publisher's"
    )
    ft_topic_prefix: str = setting(
        "ft/", doc="F/T sensor s of the robot config is read on <prefix><s>"
    )
    resolve_package_uris: bool = setting(
        True, doc="publish robot_description with package:// URIs replaced by file:// paths"
    )
    publish_frequency: float = setting(
        50.0,
        ge=0.0,
        le=10000.0,
        unit="Hz",
        doc="TF publications per second of robot time (joint_states stamps), as "
        "robot_state_publisher's: the first joint_states at or after each 1/publish_frequency "
        "slot of stamps is published (the newest state; the rate asked for on average); 0 "
        "publishes every joint_states",
    )
    input_rate: float = setting(
        100.0,
        ge=0.0,
        le=10000.0,
        unit="Hz",
        doc="most wake-ups per second of wall time to take the inputs, each taking the newest "
        "message of every input topic (queues of depth 1); 0 takes every message as it arrives "
        "(queues of 100). TF and markers need only the newest state: at the default the node "
        "costs the control loop a few takes per 10 ms instead of one per message",
    )
    realtime_priority: int = setting(
        0,
        ge=0,
        le=99,
        doc="SCHED_FIFO priority of the node's threads (1-99), below the loop's: a watcher of the "
        "loop keeps its share of the cores when the loop runs in SCHED_FIFO; 0: normal scheduling",
    )
    marker_rate: float = setting(
        30.0,
        ge=0.0,
        le=1000.0,
        unit="Hz",
        doc="marker publications per wall second (steady clock, as a viewer refreshes, "
        "whatever the robot's pace); 0 disables markers",
    )
    ground_height: float = setting(0.0, unit="m", doc="height of the ground plane")
    min_normal_force: float = setting(
        5.0, ge=0.0, unit="N", doc="normal force above which a foot counts as loaded"
    )
    force_scale: float = setting(
        0.002, ge=0.0, unit="m/N", doc="contact force arrow length per newton"
    )
    invalid_input_log_period: float = setting(
        2.0, ge=0.0, unit="s", doc="at most one dropped-message report per topic per period"
    )
    viewer_rate: float = setting(
        30.0, gt=0.0, le=200.0, unit="Hz", doc="browser viewer refresh rate (viewer only)"
    )

    def marker_options(self) -> MarkerOptions:
        """The marker options these settings select."""
        return MarkerOptions(
            ground_height=self.ground_height,
            min_normal_force=self.min_normal_force,
            force_scale=self.force_scale,
        )


__all__ = ["StatePublisherSettings"]
