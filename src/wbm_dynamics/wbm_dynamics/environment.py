"""The static environment: the ground plane z = 0 and optional boxes, as signed-distance queries.

Every query is vectorized over points given in the world frame. For each point it returns the
surface it is nearest to (the ground, index 0, or a box, index 1 + its position in the list),
the signed distance to it (positive outside, negative inside: minus the penetration depth) and
the outward unit normal of that surface at the nearest point.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from wbm_dynamics.settings import Box


@dataclass(frozen=True)
class SurfaceQuery:
    """Nearest surface of each of n points.

    Attributes:
        distance: Signed distance [m], (n,): > 0 outside, < 0 penetrating.
        normal: Outward unit normal of the surface at the nearest point, world axes, (n, 3).
        surface: Index of the surface, (n,): 0 the ground, 1 + i the i-th box.
        friction: Coulomb friction coefficient of that surface, (n,).
    """

    distance: np.ndarray
    normal: np.ndarray
    surface: np.ndarray
    friction: np.ndarray


class Environment:
    """The ground plane z = 0 (normal +z) and static boxes.

    Args:
        ground_friction: Friction coefficient of the ground.
        boxes: Static boxes.
    """

    def __init__(self, ground_friction: float, boxes: Sequence[Box] = ()):
        self.ground_friction = float(ground_friction)
        self.boxes = tuple(boxes)
        self.surface_names = ("ground",) + tuple(box.name for box in self.boxes)
        self._friction = np.array([self.ground_friction] + [box.friction for box in self.boxes])
        self._box_rotation = [pin.rpy.rpyToMatrix(np.array(box.rpy)) for box in self.boxes]
        self._box_center = [np.array(box.center, dtype=float) for box in self.boxes]
        self._box_half = [0.5 * np.array(box.size, dtype=float) for box in self.boxes]
        self._box_radius = [float(np.linalg.norm(half)) for half in self._box_half]

    @property
    def has_boxes(self) -> bool:
        """Whether there is anything besides the ground."""
        return bool(self.boxes)

    def near(self, centers: np.ndarray, radii: np.ndarray, margin: float) -> np.ndarray:
        """Broad phase: which spheres can be within ``margin`` of a surface.

        Args:
            centers: Sphere centres in the world [m], (g, 3).
            radii: Sphere radii [m], (g,).
            margin: Extra distance [m].

        Returns:
            (g,) bool.
        """
        reach = radii + margin
        near = centers[:, 2] <= reach
        for box_center, box_radius in zip(self._box_center, self._box_radius, strict=True):
            distance = np.sqrt(((centers - box_center) ** 2).sum(axis=1))
            near |= distance <= reach + box_radius
        return near

    def query(self, points: np.ndarray) -> SurfaceQuery:
        """Nearest surface of each point (the one with the smallest signed distance).

        Args:
            points: (n, 3) positions in the world [m].
        """
        points = np.asarray(points, dtype=float)
        n = points.shape[0]
        distance = points[:, 2].copy()
        normal = np.zeros((n, 3))
        normal[:, 2] = 1.0
        surface = np.zeros(n, dtype=int)
        for i in range(len(self.boxes)):
            box_distance, box_normal = self._box_query(i, points)
            closer = box_distance < distance
            if closer.any():
                distance[closer] = box_distance[closer]
                normal[closer] = box_normal[closer]
                surface[closer] = i + 1
        return SurfaceQuery(distance, normal, surface, self._friction[surface])

    def _box_query(self, index: int, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Signed distance and outward normal of points w.r.t. one box."""
        rotation = self._box_rotation[index]
        half = self._box_half[index]
        local = (points - self._box_center[index]) @ rotation  # box axes
        excess = np.abs(local) - half  # > 0 outside along that axis
        outside = np.maximum(excess, 0.0)
        outside_norm = np.linalg.norm(outside, axis=1)
        inside = outside_norm == 0.0
        distance = np.where(inside, excess.max(axis=1), outside_norm)
        normal_local = np.zeros_like(local)
        # Outside: from the nearest point of the box to the point.
        out = ~inside
        if out.any():
            normal_local[out] = (
                np.sign(local[out]) * outside[out] / outside_norm[out][:, np.newaxis]
            )
        # Inside: the face the point is nearest to.
        if inside.any():
            axis = excess[inside].argmax(axis=1)
            rows = np.flatnonzero(inside)
            signs = np.sign(local[rows, axis])
            signs[signs == 0.0] = 1.0
            normal_local[rows, axis] = signs
        return distance, normal_local @ rotation.T
