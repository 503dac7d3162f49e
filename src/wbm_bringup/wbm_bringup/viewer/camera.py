"""The viewer's default camera: one that frames the whole robot, whatever its size (no ROS).

The camera is a perspective camera (three.js's, as viser draws it) given by its position, the
point it looks at, its up direction and its vertical field of view. :func:`framing_camera`
places it on a sphere around the robot's bounding box, far enough that the box's bounding
sphere fits in the vertical and horizontal fields of view of the expected page aspect ratio.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Camera:
    """A perspective camera in the world frame (z up).

    Attributes:
        position: Where the camera is [m], (3,).
        look_at: The point at the image centre [m], (3,).
        up: The direction that appears up in the image, (3,).
        fov: Vertical field of view [rad].
    """

    position: np.ndarray
    look_at: np.ndarray
    up: np.ndarray
    fov: float

    def describe(self) -> str:
        """One line naming every parameter (the node prints it; tests read it)."""

        def vector(values: np.ndarray) -> str:
            return ",".join(f"{float(v):.6f}" for v in values)

        return (
            f"position={vector(self.position)} look_at={vector(self.look_at)} "
            f"up={vector(self.up)} fov_deg={math.degrees(self.fov):.6f}"
        )


def framing_camera(
    lower: np.ndarray,
    upper: np.ndarray,
    *,
    azimuth: float,
    elevation: float,
    fov: float,
    aspect: float,
    margin: float,
) -> Camera:
    """A camera that sees a whole axis-aligned box, looking at its centre.

    Args:
        lower: The box's lowest corner in the world [m], (3,).
        upper: Its highest corner [m], (3,).
        azimuth: Direction from the box centre to the camera, about z from the world x axis
            [rad] (0: in front of a robot facing x).
        elevation: Angle of that direction above the horizontal [rad].
        fov: Vertical field of view [rad].
        aspect: Width / height of the image the camera is expected to fill.
        margin: Factor (>= 1) on the distance that just fits the box's bounding sphere.

    Returns:
        The camera, z up.
    """
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    center = (lower + upper) / 2.0
    radius = max(float(np.linalg.norm(upper - lower)) / 2.0, 1e-3)
    half_vertical = fov / 2.0
    half_horizontal = math.atan(math.tan(half_vertical) * aspect)
    distance = margin * radius / math.sin(min(half_vertical, half_horizontal))
    direction = np.array(
        [
            math.cos(elevation) * math.cos(azimuth),
            math.cos(elevation) * math.sin(azimuth),
            math.sin(elevation),
        ]
    )
    return Camera(center + distance * direction, center, np.array([0.0, 0.0, 1.0]), fov)
