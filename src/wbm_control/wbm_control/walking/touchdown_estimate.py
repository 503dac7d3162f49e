"""Touch-down of a sole without an F/T sensor: the estimated kinematics gate the estimated load.

A robot config that declares no F/T sensor for a sole (the Unitree G1) gives the walking state
machine no measured normal force for it. Its contact reading is then built from what the
controller estimates (:class:`~wbm_control.contact_estimation.ContactEstimate`):

- kinematics: the sole is *near* the ground when its frame is less than ``height_tolerance``
  above the ground plane and its origin moves slower than ``speed_tolerance`` (from the
  estimated configuration and velocity);
- joint torques, when the robot reports them: the sole's load from the leg's joint-space
  dynamics. The reading's normal force is that load while the sole is near the ground, and 0
  while it is not: a swing leg's inertial and friction torques read as a load in the air, the
  gate keeps them from ending a swing before the sole is down. The state machine compares it
  with ``touchdown_force`` (touch-down) and ``support_force`` (lift-off of the other foot), as an
  F/T sensor's force;
- without joint torques, the reading is a contact flag: near the ground.

Never the clock alone: a sole that is not near the ground is not in contact, whatever the time.

Frames: world (z up, the ground plane at the controller's ground height), metres, seconds,
newtons.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from wbm_control.walking.contact_state import FootContactReading
from wbm_description.exceptions import InputError


@dataclass(frozen=True)
class TouchdownEstimate:
    """The contact reading of a sole without an F/T sensor (module docstring).

    Attributes:
        height_tolerance: A sole frame less than this above the ground may be down [m].
        speed_tolerance: A sole origin slower than this may be down [m/s].
    """

    height_tolerance: float = 0.01
    speed_tolerance: float = 0.1

    def __post_init__(self) -> None:
        for name in ("height_tolerance", "speed_tolerance"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise InputError(name, "a positive finite tolerance", value)

    def near_ground(self, height: float, speed: float) -> bool:
        """Whether a sole at ``height`` [m] above the ground moving at ``speed`` [m/s] is down."""
        return bool(height < self.height_tolerance and speed < self.speed_tolerance)

    def reading(self, height: float, speed: float, load: float | None) -> FootContactReading:
        """One sole's reading.

        Args:
            height: Height of the sole frame above the ground [m] (estimated).
            speed: Speed of the sole frame's origin [m/s] (estimated).
            load: The sole's normal force from the joint torques [N], or None without them.

        Returns:
            The gated load as a normal force, or (no load) a contact flag.
        """
        for name, value in (("height", height), ("speed", speed)):
            if not math.isfinite(value):
                raise InputError(name, "a finite number", value)
        near = self.near_ground(height, speed)
        if load is None:
            return FootContactReading(in_contact=near)
        return FootContactReading(normal_force=float(load) if near else 0.0)

    def readings(
        self,
        heights: Mapping[str, float],
        speeds: Mapping[str, float],
        loads: Mapping[str, float] | None,
    ) -> dict[str, FootContactReading]:
        """Every sole's reading, from a contact estimate's heights, speeds and torque loads.

        Args:
            heights: Sole name to its height above the ground [m].
            speeds: Sole name to its speed [m/s].
            loads: Sole name to its load from the joint torques [N], or None without them.
        """
        return {
            sole: self.reading(
                heights[sole], speeds[sole], None if loads is None else loads.get(sole)
            )
            for sole in heights
        }
