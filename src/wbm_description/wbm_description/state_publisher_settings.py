"""Settings of the state publisher and the browser viewer, typed and validated (no ROS).

The nodes declare one ROS parameter per field (same name, same default) and build these with
:meth:`StatePublisherSettings.from_mapping`, which names the bad parameter in its error. The
documented parameters file is ``config/icub/state_publisher.yaml``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from wbm_description.exceptions import ConfigError
from wbm_description.markers import MarkerOptions


@dataclass(frozen=True)
class StatePublisherSettings:
    """Parameters of the state publisher (and of the viewer, which reads the same topics).

    Attributes:
        robot: Registered robot name or robot config path.
        base_pose_topic: nav_msgs/Odometry of the base: ``ground_truth/odom`` (the simulator's)
            or ``odom`` (the controller's estimate). Unused for a fixed-base robot.
        world_frame: TF frame of the world (root of the tree, never prefixed).
        frame_prefix: Prepended to every link frame name, as robot_state_publisher's.
        ft_topic_prefix: F/T sensor ``s`` of the robot config is read on ``<prefix><s>``.
        resolve_package_uris: Publish robot_description with ``package://`` URIs replaced by
            ``file://`` paths (for RViz on this machine without the package in its index).
        marker_rate: Marker publication rate [Hz]; 0 disables the markers.
        ground_height: Height of the ground plane [m].
        min_normal_force: Normal force above which a foot counts as loaded [N].
        force_scale: Contact force arrow length per newton [m/N].
        invalid_input_log_period: At most one report per topic per period of dropped messages
            [s].
        viewer_rate: Browser viewer refresh rate [Hz] (viewer only).
    """

    robot: str = "icub"
    base_pose_topic: str = "ground_truth/odom"
    world_frame: str = "world"
    frame_prefix: str = ""
    ft_topic_prefix: str = "ft/"
    resolve_package_uris: bool = True
    marker_rate: float = 30.0
    ground_height: float = 0.0
    min_normal_force: float = 5.0
    force_scale: float = 0.002
    invalid_input_log_period: float = 2.0
    viewer_rate: float = 30.0

    @classmethod
    def from_mapping(
        cls, values: Mapping[str, Any], *, source: str = "parameters"
    ) -> StatePublisherSettings:
        """Settings from a name -> value mapping (missing names keep their defaults).

        Raises:
            ConfigError: An unknown name, a wrong type or an out-of-range value; ``source`` (the
                parameters file or "parameters") is named in the message.
        """
        known = {f.name: f for f in fields(cls)}
        defaults = cls()
        checked: dict[str, Any] = {}
        for name, value in values.items():
            if name not in known:
                raise ConfigError(source, name, f"one of {sorted(known)}")
            default = getattr(defaults, name)
            if isinstance(default, bool):
                if not isinstance(value, bool):
                    raise ConfigError(source, name, "true or false", value)
            elif isinstance(default, float):
                if isinstance(value, bool) or not isinstance(value, int | float):
                    raise ConfigError(source, name, "a number", value)
                value = float(value)
                if not math.isfinite(value):
                    raise ConfigError(source, name, "a finite number", value)
            elif not isinstance(value, str):
                raise ConfigError(source, name, "a string", value)
            checked[name] = value
        settings = cls(**checked)
        for name in ("robot", "base_pose_topic", "world_frame"):
            if not getattr(settings, name):
                raise ConfigError(source, name, "a non-empty string", getattr(settings, name))
        if not 0.0 <= settings.marker_rate <= 1000.0:
            raise ConfigError(
                source, "marker_rate", "a rate in [0, 1000] Hz", settings.marker_rate
            )
        if not 0.0 < settings.viewer_rate <= 200.0:
            raise ConfigError(source, "viewer_rate", "a rate in (0, 200] Hz", settings.viewer_rate)
        for name in ("min_normal_force", "force_scale", "invalid_input_log_period"):
            if getattr(settings, name) < 0.0:
                raise ConfigError(source, name, "a number >= 0", getattr(settings, name))
        return settings

    def marker_options(self) -> MarkerOptions:
        """The marker options these settings select."""
        return MarkerOptions(
            ground_height=self.ground_height,
            min_normal_force=self.min_normal_force,
            force_scale=self.force_scale,
        )
