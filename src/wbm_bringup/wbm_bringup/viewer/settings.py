"""Settings of the browser viewer (the ``wbm_viewer`` node's parameters), typed and checked."""

from __future__ import annotations

from dataclasses import dataclass

from wbm_description.exceptions import ConfigError
from wbm_description.settings import Settings, setting


@dataclass(frozen=True)
class ViewerSettings(Settings):
    """What the browser viewer shows, where it serves the page, and what its controls send.

    ``push_duration`` must equal the robot interface's ``push_duration``: the push control
    sends ``force = impulse / push_duration`` on ``apply_wrench`` and the robot interface applies
    that force for ``push_duration``, so the robot receives the chosen impulse.
    """

    robot: str = setting("icub", doc="registered robot name or robot config file", nonempty=True)
    host: str = setting("127.0.0.1", doc="address the page is served on", nonempty=True)
    port: int = setting(0, doc="TCP port of the page; 0 picks a free one", ge=0, le=65535)
    base_pose_topic: str = setting(
        "ground_truth/odom",
        doc="nav_msgs/Odometry of the base: ground_truth/odom (simulator) or odom (estimate)",
        nonempty=True,
    )
    marker_topics: tuple[str, ...] = setting(
        ("markers", "walking/markers"),
        doc="visualization_msgs/MarkerArray topics drawn in the scene, by namespace",
    )
    world_frame: str = setting("world", doc="frame of the world (targets, goals)", nonempty=True)
    refresh_rate: float = setting(
        30.0, doc="scene refresh rate (wall clock)", unit="Hz", gt=0.0, le=200.0
    )
    show_grid: bool = setting(True, doc="draw the ground plane grid at z = 0")
    show_targets: bool = setting(True, doc="show the hand and CoM target handles at start")
    target_tasks: tuple[str, ...] = setting(
        ("left_hand", "right_hand"),
        doc="pose targets with a handle, each published on targets/<task>",
    )
    target_frames: tuple[str, ...] = setting(
        ("l_hand", "r_hand"), doc="robot frame where each target's handle starts (same order)"
    )
    push_duration: float = setting(
        0.1,
        doc="the robot interface's push_duration: force = impulse / push_duration",
        unit="s",
        gt=0.0,
    )
    push_link: str = setting(
        "", doc="link the push acts on (apply_wrench frame_id); empty: the robot's base link"
    )
    push_impulse: float = setting(
        5.0, doc="initial impulse of the push control", unit="N s", ge=0.0, le=1000.0
    )
    plot_window: float = setting(10.0, doc="time span of the live plots", unit="s", gt=0.0)
    rtf_window: float = setting(
        2.0, doc="wall-time span of the real-time factor estimate", unit="s", gt=0.0
    )
    camera_azimuth: float = setting(
        30.0, doc="default camera direction about z from the robot's front (x)", unit="deg"
    )
    camera_elevation: float = setting(
        12.0, doc="default camera angle above the horizontal", unit="deg", ge=-89.0, le=89.0
    )
    camera_fov: float = setting(
        45.0, doc="vertical field of view of the camera", unit="deg", gt=1.0, lt=179.0
    )
    camera_margin: float = setting(
        1.1, doc="distance factor over the one that just fits the robot", ge=1.0, le=10.0
    )
    invalid_input_log_period: float = setting(
        2.0, doc="at most one dropped-message report per topic per period", unit="s", gt=0.0
    )

    def check(self) -> None:
        """One frame per target task; no empty names."""
        if len(self.target_tasks) != len(self.target_frames):
            raise ConfigError(
                None,
                "target_frames",
                f"one frame per target task ({len(self.target_tasks)})",
                list(self.target_frames),
            )
        for key in ("target_tasks", "target_frames", "marker_topics"):
            if any(not name for name in getattr(self, key)):
                raise ConfigError(None, key, "non-empty names", list(getattr(self, key)))
