"""The push control's wrench: an impulse in a direction, spread over the push duration (no ROS).

The robot interface applies a force received on ``apply_wrench`` for its ``push_duration``
(a constant force at the link origin, world axes), so a push of impulse ``J`` [N s] in the unit
direction ``d`` is the force ``F = J / push_duration * d`` [N], and ``F * push_duration = J d``.
"""

from __future__ import annotations

import math

import numpy as np

from wbm_description.exceptions import InputError


def push_direction(azimuth: float, elevation: float) -> np.ndarray:
    """Unit vector of a push direction in world axes.

    Args:
        azimuth: Angle about z from the world x axis [deg] (0: +x, 90: +y).
        elevation: Angle above the horizontal plane [deg].
    """
    a, e = math.radians(azimuth), math.radians(elevation)
    return np.array([math.cos(e) * math.cos(a), math.cos(e) * math.sin(a), math.sin(e)])


def push_force(impulse: float, azimuth: float, elevation: float, duration: float) -> np.ndarray:
    """The force [N] (world axes) that gives ``impulse`` [N s] when applied for ``duration`` [s].

    Raises:
        InputError: A negative or non-finite impulse, a non-positive duration.
    """
    if not (math.isfinite(impulse) and impulse >= 0.0):
        raise InputError("impulse", "a finite number >= 0 [N s]", impulse)
    if not (math.isfinite(duration) and duration > 0.0):
        raise InputError("duration", "a finite number > 0 [s]", duration)
    return impulse / duration * push_direction(azimuth, elevation)
