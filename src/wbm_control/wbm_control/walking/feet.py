"""The two feet walking uses: their sole rectangles, support polygons, and what the model says.

:class:`Feet` maps the sides ``"left"``/``"right"`` to the robot config's
:class:`~wbm_description.robot_config.SoleContact` (name, frame, rectangle), and gives the sole
rectangles and support polygons of footsteps in the world. :class:`WalkingGeometry` measures on
the whole-body model, in its initial posture, the nominal lateral foot spacing, the CoM height
above the soles and where the feet stand.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from wbm_control.walking.footsteps import Footstep, Side
from wbm_description.exceptions import ConfigError, InputError
from wbm_description.robot_config import SoleContact
from wbm_description.support_geometry import convex_hull_2d
from wbm_description.whole_body_model import WholeBodyModel


@dataclass(frozen=True)
class Feet:
    """The left and right soles.

    Attributes:
        left: The left sole (geometry in its frame).
        right: The right sole.
    """

    left: SoleContact
    right: SoleContact

    def sole(self, side: Side) -> SoleContact:
        """The sole of a side."""
        if side == "left":
            return self.left
        if side == "right":
            return self.right
        raise InputError("side", "'left' or 'right'", side)

    def max_margin(self) -> float:
        """Largest ZMP margin that leaves a non-empty rectangle on both soles [m]."""
        return 0.5 * min(self.left.length, self.left.width, self.right.length, self.right.width)

    def rectangle(self, step: Footstep, margin: float = 0.0) -> np.ndarray:
        """(4, 2) corners of a footstep's sole rectangle in the world, counter-clockwise [m].

        Args:
            step: Where the sole is.
            margin: Each side moved inwards by this [m], smaller than :meth:`max_margin`.
        """
        sole = self.sole(step.side)
        if not 0.0 <= margin < 0.5 * min(sole.length, sole.width):
            raise InputError("margin", "a margin in [0, half the sole's width) [m]", margin)
        half_length, half_width = 0.5 * sole.length - margin, 0.5 * sole.width - margin
        local = np.array(
            [
                [half_length, half_width],
                [-half_length, half_width],
                [-half_length, -half_width],
                [half_length, -half_width],
            ]
        ) + np.asarray(sole.center, dtype=float)
        c, s = np.cos(step.yaw), np.sin(step.yaw)
        rotation = np.array([[c, -s], [s, c]])
        return local @ rotation.T + np.array([step.x, step.y])

    def center(self, step: Footstep) -> np.ndarray:
        """(x, y) of the sole rectangle's centre in the world [m]."""
        cx, cy = self.sole(step.side).center
        c, s = np.cos(step.yaw), np.sin(step.yaw)
        return np.array([step.x + c * cx - s * cy, step.y + s * cx + c * cy])

    def support_polygon(self, steps: Iterable[Footstep], margin: float = 0.0) -> np.ndarray:
        """(m, 2) convex hull of the footsteps' rectangles (each shrunk by margin), CCW [m].

        With a margin, this is the hull of the shrunk rectangles: every point of it is at least
        ``margin`` inside the hull of the full rectangles.
        """
        corners = [corner for step in steps for corner in self.rectangle(step, margin)]
        return convex_hull_2d(corners)

    def overlap(self, a: Footstep, b: Footstep) -> bool:
        """Whether two soles' rectangles intersect (separating axis test)."""
        ra, rb = self.rectangle(a), self.rectangle(b)
        for polygon in (ra, rb):
            for i in range(4):
                edge = polygon[(i + 1) % 4] - polygon[i]
                axis = np.array([-edge[1], edge[0]])
                pa, pb = ra @ axis, rb @ axis
                if pa.max() < pb.min() or pb.max() < pa.min():
                    return False
        return True


@dataclass(frozen=True)
class WalkingGeometry:
    """What walking needs to know about a robot, measured on its model.

    Attributes:
        feet: The soles by side.
        nominal_foot_spacing: Lateral distance of the sole frames in the initial posture [m].
        com_height: CoM height above the mean sole height in the initial posture [m].
        left: Left footstep in the initial posture.
        right: Right footstep in the initial posture.
    """

    feet: Feet
    nominal_foot_spacing: float
    com_height: float
    left: Footstep
    right: Footstep

    @classmethod
    def from_model(
        cls,
        model: WholeBodyModel,
        q: np.ndarray | None = None,
        *,
        left_sole: str = "left_foot",
        right_sole: str = "right_foot",
    ) -> WalkingGeometry:
        """Measure the geometry on a model built from a robot config with two soles.

        Args:
            model: The whole-body model (its config names the soles).
            q: Configuration to measure in (default: the config's initial posture).
            left_sole: Name of the left sole in the robot config.
            right_sole: Name of the right sole in the robot config.

        Raises:
            ConfigError: The config has no such soles, or they are not left and right of each
                other in that posture.
        """
        if model.config is None:
            raise ConfigError(None, "soles", "a model built from a robot config with soles")
        config = model.config
        feet = Feet(config.sole(left_sole), config.sole(right_sole))
        q = model.initial_configuration() if q is None else model.check_configuration(q)
        left_placement = model.frame_placement(q, feet.left.frame)
        right_placement = model.frame_placement(q, feet.right.frame)
        left = Footstep.from_placement("left", left_placement)
        right = Footstep.from_placement("right", right_placement)
        spacing = left.relative_to(right)[1]
        if not spacing > 0.0:
            raise ConfigError(
                config.config_path,
                f"soles.{left_sole}",
                f"a sole on the left of '{right_sole}' in the initial posture",
                f"lateral offset {spacing:.4f} m",
            )
        ground = 0.5 * (left_placement.translation[2] + right_placement.translation[2])
        com_height = float(model.com_position(q)[2] - ground)
        return cls(feet, float(spacing), com_height, left, right)
