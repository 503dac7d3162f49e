"""Frame names of the humanoids the model tests run on, by role (one robot per fixture name)."""

from __future__ import annotations

HUMANOIDS = ("icub", "g1")
"""Fixture names of the floating-base humanoids."""

FRAMES = {
    "icub": {
        "left_sole": "l_sole",
        "right_sole": "r_sole",
        "left_hand": "l_hand",
        "right_hand": "r_hand",
        "imu": "imu_frame",
        "tool": "l_hand_tool",
    },
    "g1": {
        "left_sole": "left_sole",
        "right_sole": "right_sole",
        "left_hand": "left_rubber_hand",
        "right_hand": "right_rubber_hand",
        "imu": "imu_in_pelvis",
        "tool": "left_sole",
    },
}
"""Per robot: the soles, the hands, the IMU and a config tool frame."""


def feet(robot: str) -> list[str]:
    """The two sole frames of a humanoid."""
    return [FRAMES[robot]["left_sole"], FRAMES[robot]["right_sole"]]
