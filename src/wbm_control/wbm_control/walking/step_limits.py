"""Reachability of a footstep from the stance foot: length, width, yaw, no crossing.

A step of the swing foot is measured in the stance sole's frame: (dx, dy, dyaw). With s = +1 for
a left swing foot and -1 for a right one, it is reachable when

    -max_length_backward <= dx <= max_length
    min_spacing <= s dy <= max_spacing          (on the swing foot's side: no crossing)
    |dyaw| <= max_yaw

and the two sole rectangles do not overlap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from wbm_control.walking.feet import Feet
from wbm_control.walking.footsteps import Footstep, other_side, side_sign
from wbm_control.walking.settings import WalkingSettings

_SLACK = 1e-9
"""Rounding allowed on every limit [m or rad]."""


@dataclass(frozen=True)
class StepLimits:
    """Per-step limits relative to the stance foot.

    Attributes:
        max_length: Largest forward step [m].
        max_length_backward: Largest backward step [m].
        min_spacing: Smallest lateral distance on the swing foot's side [m].
        max_spacing: Largest lateral distance [m].
        max_yaw: Largest relative yaw [rad].
    """

    max_length: float
    max_length_backward: float
    min_spacing: float
    max_spacing: float
    max_yaw: float

    @classmethod
    def from_settings(cls, settings: WalkingSettings) -> StepLimits:
        """The limits of resolved settings (the nominal spacing must be known)."""
        return cls(
            max_length=settings.max_step_length,
            max_length_backward=settings.max_step_length_backward,
            min_spacing=settings.min_foot_spacing,
            max_spacing=settings.require_foot_spacing() + settings.max_step_width,
            max_yaw=settings.max_step_yaw,
        )

    def violation(self, step: Footstep, stance: Footstep, feet: Feet) -> str | None:
        """Why a step cannot be reached from the stance foot, or None if it can.

        Args:
            step: The swing foot's target.
            stance: The foot on the ground (the other side).
            feet: Sole geometry, for the overlap test.
        """
        if step.side != other_side(stance.side):
            return f"a {step.side} step from a {stance.side} stance foot (feet must alternate)"
        dx, dy, dyaw = step.relative_to(stance)
        lateral = side_sign(step.side) * dy
        if dx > self.max_length + _SLACK:
            return f"step length {dx:.4f} m > {self.max_length} m"
        if dx < -self.max_length_backward - _SLACK:
            return f"backward step {-dx:.4f} m > {self.max_length_backward} m"
        if lateral < self.min_spacing - _SLACK:
            return (
                f"crossing feet: lateral distance {lateral:.4f} m on the {step.side} side "
                f"< {self.min_spacing} m"
            )
        if lateral > self.max_spacing + _SLACK:
            return f"step width {lateral:.4f} m > {self.max_spacing} m"
        if abs(dyaw) > self.max_yaw + _SLACK:
            return f"step yaw {math.degrees(dyaw):.2f} deg beyond {math.degrees(self.max_yaw):.2f}"
        if feet.overlap(step, stance):
            return "crossing feet: the sole rectangles overlap"
        return None

    def clamp(self, step: Footstep, stance: Footstep, feet: Feet) -> Footstep:
        """The reachable step closest to a wanted one (box clamp in the stance frame).

        If the clamped rectangles still overlap (a large yaw), the step is moved outwards up to
        the largest spacing, then its relative yaw is dropped.
        """
        dx, dy, dyaw = step.relative_to(stance)
        sign = side_sign(step.side)
        dx = min(max(dx, -self.max_length_backward), self.max_length)
        lateral = min(max(sign * dy, self.min_spacing), self.max_spacing)
        dyaw = min(max(dyaw, -self.max_yaw), self.max_yaw)
        candidate = stance.compose(dx, sign * lateral, dyaw, side=step.side)
        while feet.overlap(candidate, stance) and lateral < self.max_spacing:
            lateral = min(lateral + 0.005, self.max_spacing)
            candidate = stance.compose(dx, sign * lateral, dyaw, side=step.side)
        if feet.overlap(candidate, stance):
            candidate = stance.compose(dx, sign * lateral, 0.0, side=step.side)
        return candidate
