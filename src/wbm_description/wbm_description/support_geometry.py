"""Support polygon, centre of pressure and their margins.

Shared by the simulator tests, the controller's balance and the state publisher's markers.

Everything is in the world frame (z up); the ground is the plane z = ``ground_height``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pinocchio as pin


def wrench_in_world(world_T_frame: pin.SE3, wrench_in_frame: np.ndarray) -> np.ndarray:
    """A wrench given at a frame origin in frame axes, moved to the world origin in world axes.

    Args:
        world_T_frame: Placement of the frame in the world.
        wrench_in_frame: (force [N], torque [N m]) at the frame origin, frame axes.

    Returns:
        (force, torque about the world origin), world axes.
    """
    return world_T_frame.act(pin.Force(np.asarray(wrench_in_frame, dtype=float))).vector


def center_of_pressure(
    wrenches_world: Iterable[np.ndarray],
    *,
    ground_height: float = 0.0,
    min_normal_force: float = 5.0,
) -> np.ndarray | None:
    """Centre of pressure on a horizontal plane of the ground reaction wrenches (seed 004 8.5-8.8).

    With the net wrench (f, tau) about the world origin, the point p = (x, y, h) on the plane where
    the horizontal moment vanishes is x = (-tau_y + h f_x) / f_z, y = (tau_x + h f_y) / f_z.

    Args:
        wrenches_world: Ground-on-robot wrenches (force, torque about the world origin) in
            world axes.
        ground_height: Height h of the plane [m].
        min_normal_force: Below this total normal force [N] no foot is loaded: returns None
            (the guard of seed 004; the ratio would be noise divided by noise).

    Returns:
        (x, y, h) [m], or None when the support is unloaded.
    """
    # The sum on floats (numpy's arithmetic from a zero total, without a dozen small-array calls).
    f0 = f1 = f2 = tau0 = tau1 = 0.0
    for wrench in wrenches_world:
        w0, w1, w2, w3, w4, _ = np.asarray(wrench, dtype=float).tolist()
        f0, f1, f2, tau0, tau1 = f0 + w0, f1 + w1, f2 + w2, tau0 + w3, tau1 + w4
    if f2 < min_normal_force:
        return None
    h = ground_height
    return np.array([(-tau1 + h * f0) / f2, (tau0 + h * f1) / f2, h])


def convex_hull_2d(points: Sequence[Sequence[float]]) -> np.ndarray:
    """Convex hull of 2D points (Andrew's monotone chain), counter-clockwise, no repeated vertex.

    Args:
        points: (n, 2) or (n, 3) points; only x and y are used.

    Returns:
        (m, 2) hull vertices, counter-clockwise seen from above.
    """
    unique = sorted({(float(p[0]), float(p[1])) for p in points})
    if len(unique) <= 2:
        return np.array(unique).reshape(-1, 2)

    def cross(o, a, b) -> float:
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower: list[tuple[float, float]] = []
    for p in unique:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 0.0:
            lower.pop()
        lower.append(p)
    upper: list[tuple[float, float]] = []
    for p in reversed(unique):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 0.0:
            upper.pop()
        upper.append(p)
    return np.array(lower[:-1] + upper[:-1])


def polygon_margin(point: Sequence[float], hull: np.ndarray) -> float:
    """Signed distance from a point to the boundary of a convex polygon [m].

    Positive inside (distance to the nearest edge), negative outside. For a polygon of fewer than
    3 vertices the result is minus the distance to it.

    Args:
        point: (x, y) (extra coordinates ignored).
        hull: (m, 2) counter-clockwise convex polygon, e.g. from :func:`convex_hull_2d`.
    """
    p = np.asarray(point, dtype=float)[:2]
    hull = np.asarray(hull, dtype=float)
    if len(hull) == 0:
        return -np.inf
    if len(hull) < 3:
        distances = [np.linalg.norm(p - vertex) for vertex in hull]
        if len(hull) == 2:
            a, b = hull
            t = np.clip(np.dot(p - a, b - a) / max(np.dot(b - a, b - a), 1e-300), 0.0, 1.0)
            distances.append(np.linalg.norm(p - (a + t * (b - a))))
        return -float(min(distances))
    # All edges at once: edge k runs from vertex k to vertex k + 1 (counter-clockwise), its
    # inward normal is the edge turned by +90 degrees.
    edges = np.empty_like(hull)
    np.subtract(hull[1:], hull[:-1], out=edges[:-1])
    np.subtract(hull[0], hull[-1], out=edges[-1])
    offsets = p - hull
    squared = edges[:, 0] * edges[:, 0] + edges[:, 1] * edges[:, 1]
    signed = (edges[:, 0] * offsets[:, 1] - edges[:, 1] * offsets[:, 0]) / np.sqrt(squared)
    inside = float(signed.min())
    if inside >= 0.0:
        return inside
    # Outside: the exact distance to the polygon is the distance to the nearest edge segment.
    t = np.clip((offsets[:, 0] * edges[:, 0] + offsets[:, 1] * edges[:, 1]) / squared, 0.0, 1.0)
    gaps = offsets - t[:, None] * edges
    return -float(np.sqrt((gaps[:, 0] * gaps[:, 0] + gaps[:, 1] * gaps[:, 1]).min()))
