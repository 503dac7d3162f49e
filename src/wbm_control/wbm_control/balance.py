"""Balance: ZMP from the F/T sensors, the LIP's divergent component of motion, static equilibrium.

- ZMP / centre of pressure from the foot F/T sensors: seed 004 eqs 8.5-8.8, each sensor wrench
  moved to the world (8.7-8.8), summed, and the horizontal moment solved for (8.5-8.6), guarded
  when no foot is loaded.
- Linear inverted pendulum (LIP) of natural frequency omega = sqrt(g / h): the divergent
  component of motion (DCM) xi = c + cd / omega evolves as dxi/dt = omega (xi - z) with z the ZMP.
  Proportional DCM feedback (seed 002, section 1.1) picks the ZMP
  z = xi_ref - dxi_ref / omega + (1 + k / omega) (xi - xi_ref), which gives
  d(xi - xi_ref)/dt = -k (xi - xi_ref); the CoM acceleration it implies is omega^2 (c - z).
- Static equilibrium: the CoM's ground projection inside the support polygon (flat ground).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pinocchio as pin

from wbm_control.exceptions import InputError
from wbm_description.support_geometry import center_of_pressure, polygon_margin, wrench_in_world


def ft_wrenches_in_world(
    sensor_placements: Mapping[str, pin.SE3], readings: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Foot F/T readings as ground-on-foot wrenches about the world origin (seed 004 8.7-8.8).

    The sensor reads the wrench of the foot (below it) on the leg (see
    :mod:`wbm_description.robot_io`), which for a foot of negligible mass below the sensor is
    the ground's wrench on the foot. Moved to the world: f_w = R f, m_w = R m + r x f_w.

    Args:
        sensor_placements: Sensor name to placement of the sensor frame in the world.
        readings: Sensor name to (force [N], torque [N m]) in the sensor frame.

    Returns:
        Sensor name to (force, torque about the world origin), world axes.
    """
    result = {}
    for name, wrench in readings.items():
        if name not in sensor_placements:
            continue
        array = np.asarray(wrench, dtype=float)
        if array.shape != (6,) or not np.isfinite(array).all():
            raise InputError(f"wrenches[{name!r}]", "6 finite values", array)
        result[name] = wrench_in_world(sensor_placements[name], array)
    return result


def zmp_from_ft(
    wrenches_world: Mapping[str, np.ndarray],
    *,
    ground_height: float = 0.0,
    min_normal_force: float = 5.0,
) -> np.ndarray | None:
    """ZMP on the ground plane from the feet's ground wrenches (seed 004 eqs 8.5-8.6).

    Args:
        wrenches_world: From :func:`ft_wrenches_in_world`.
        ground_height: Height of the ground [m].
        min_normal_force: Below this total normal force [N] no foot is loaded: None.

    Returns:
        (x, y, ground_height) [m], or None when no foot is loaded.
    """
    return center_of_pressure(
        wrenches_world.values(), ground_height=ground_height, min_normal_force=min_normal_force
    )


def lip_natural_frequency(com_height: float, gravity: float = 9.81) -> float:
    """Omega = sqrt(g / h) [1/s] of the LIP of CoM height h [m] above the ZMP."""
    if not (com_height > 0.0 and gravity > 0.0):
        raise InputError("com_height", "a positive height above the ground [m]", com_height)
    return math.sqrt(gravity / com_height)


def divergent_component_of_motion(
    com: np.ndarray, com_velocity: np.ndarray, omega: float
) -> np.ndarray:
    """Xi = c + cd / omega [m] (the instantaneous capture point in the horizontal plane)."""
    return np.asarray(com, dtype=float) + np.asarray(com_velocity, dtype=float) / omega


def project_into_polygon(point: np.ndarray, hull: np.ndarray, margin: float = 0.0) -> np.ndarray:
    """Closest point (x, y) to ``point`` that is at least ``margin`` inside a convex polygon.

    The polygon is shrunk by ``margin`` (each edge moved inwards); if the point is inside it is
    returned unchanged. Solved exactly as a 2-variable projection onto the half-planes by
    checking the unconstrained point, the projections on each edge line and the vertices.

    Args:
        point: (x, y, ...) [m]; extra coordinates are returned unchanged.
        hull: (m, 2) counter-clockwise convex polygon, m >= 3.
        margin: Inward margin [m], smaller than the polygon's inradius.
    """
    p = np.asarray(point, dtype=float).copy()
    hull = np.asarray(hull, dtype=float)
    if len(hull) < 3:
        return p
    normals_arr, offsets_arr = _inward_half_planes(hull, margin)

    def feasible(x: np.ndarray) -> bool:
        return bool((normals_arr @ x >= offsets_arr - 1e-12).all())

    xy = p[:2]
    if feasible(xy):
        return p
    candidates = []
    for n, d in zip(normals_arr, offsets_arr, strict=True):
        candidates.append(xy + (d - n @ xy) * n)
    count = len(normals_arr)
    for i in range(count):
        j = (i + 1) % count
        matrix = np.array([normals_arr[i], normals_arr[j]])
        if abs(np.linalg.det(matrix)) > 1e-12:
            candidates.append(np.linalg.solve(matrix, [offsets_arr[i], offsets_arr[j]]))
    feasible_points = [c for c in candidates if feasible(c)]
    if not feasible_points:  # margin larger than the polygon: fall back on its centroid
        p[:2] = hull.mean(axis=0)
        return p
    p[:2] = min(feasible_points, key=lambda c: float(np.linalg.norm(c - xy)))
    return p


#: Margin to (read-only hull, normals, offsets) of the last such hull asked for: a controller
#: asks for the same support polygon (a read-only array, ContactSet's cache) at every step.
_half_planes_cache: dict[float, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}


def _inward_half_planes(hull: np.ndarray, margin: float) -> tuple[np.ndarray, np.ndarray]:
    """Unit inward normals n_i (m, 2) and offsets d_i (m,) of a convex polygon shrunk by margin.

    A point x is inside iff n_i . x >= d_i for every edge i (counter-clockwise hull). The result
    for a read-only hull is kept until another hull or margin is asked for.
    """
    cached = _half_planes_cache.get(margin)
    if cached is not None and cached[0] is hull:
        return cached[1], cached[2]
    normals, offsets = _compute_half_planes(hull, margin)
    if not hull.flags.writeable:
        if len(_half_planes_cache) > 8:
            _half_planes_cache.clear()
        _half_planes_cache[margin] = (hull, normals, offsets)
    return normals, offsets


def _compute_half_planes(hull: np.ndarray, margin: float) -> tuple[np.ndarray, np.ndarray]:
    edges = np.roll(hull, -1, axis=0) - hull
    normals = np.empty_like(edges)
    normals[:, 0] = -edges[:, 1]
    normals[:, 1] = edges[:, 0]
    normals /= np.sqrt(edges[:, 0] ** 2 + edges[:, 1] ** 2)[:, None]
    offsets = np.einsum("ij,ij->i", normals, hull) + margin
    return normals, offsets


def static_equilibrium_margin(com: np.ndarray, support_polygon: np.ndarray) -> float:
    """Signed distance [m] of the CoM's ground projection to the support polygon's edge.

    Positive inside (statically stable on flat ground with enough friction), negative outside.
    """
    point = np.asarray(com, dtype=float)[:2]
    hull = np.asarray(support_polygon, dtype=float)
    if len(hull) >= 3:
        # Inside: the distance to the nearest edge line (polygon_margin's value: n_i . c - d_i
        # over the edges, on floats); outside, the distance to the nearest edge segment below.
        x, y = point.tolist()
        inside = min(n0 * x + n1 * y - d for n0, n1, d in _half_plane_floats(hull))
        if inside >= 0.0:
            return inside
    return polygon_margin(point, hull)


#: Margin to (read-only hull, its half planes as floats) of the last such hull asked for.
_half_plane_floats_cache: dict[float, tuple[np.ndarray, list[tuple[float, float, float]]]] = {}


def _half_plane_floats(hull: np.ndarray, margin: float = 0.0) -> list[tuple[float, float, float]]:
    """:func:`_inward_half_planes` as Python floats (n_x, n_y, d), kept for a read-only hull."""
    cached = _half_plane_floats_cache.get(margin)
    if cached is not None and cached[0] is hull:
        return cached[1]
    normals, offsets = _inward_half_planes(hull, margin)
    planes = [(n0, n1, d) for (n0, n1), d in zip(normals.tolist(), offsets.tolist(), strict=True)]
    if not hull.flags.writeable:
        if len(_half_plane_floats_cache) > 8:
            _half_plane_floats_cache.clear()
        _half_plane_floats_cache[margin] = (hull, planes)
    return planes


def inside_polygon(x: float, y: float, hull: np.ndarray, margin: float = 0.0) -> bool:
    """Whether (x, y) [m] is inside a convex polygon shrunk by ``margin`` [m].

    :func:`project_into_polygon`'s test (n_i . p >= d_i - 1e-12 on every edge), on floats:
    when it holds the projection is the point itself.
    """
    return all(n0 * x + n1 * y >= d - 1e-12 for n0, n1, d in _half_plane_floats(hull, margin))


def is_statically_stable(com: np.ndarray, support_polygon: np.ndarray) -> bool:
    """Whether the CoM is over the support polygon (margin >= 0)."""
    return static_equilibrium_margin(com, support_polygon) >= 0.0


class DcmStabilizer:
    """Proportional DCM feedback of the linear inverted pendulum (seed 002, section 1.1).

    Args:
        gain: k [1/s] of d(xi - xi_ref)/dt = -k (xi - xi_ref).
        zmp_margin: How far inside the support polygon the commanded ZMP is kept [m].
    """

    def __init__(self, *, gain: float, zmp_margin: float = 0.01):
        if not gain >= 0.0:
            raise InputError("gain", "a non-negative DCM gain [1/s]", gain)
        self.gain = float(gain)
        self.zmp_margin = float(zmp_margin)

    def zmp_command(
        self,
        dcm: np.ndarray,
        dcm_ref: np.ndarray,
        dcm_ref_rate: np.ndarray,
        omega: float,
        support_polygon: np.ndarray | None = None,
    ) -> np.ndarray:
        """Commanded ZMP (x, y) [m], kept inside the polygon shrunk by ``zmp_margin``."""
        xi = np.asarray(dcm, dtype=float)[:2]
        xi_ref = np.asarray(dcm_ref, dtype=float)[:2]
        rate = np.asarray(dcm_ref_rate, dtype=float)[:2]
        zmp = xi_ref - rate / omega + (1.0 + self.gain / omega) * (xi - xi_ref)
        if support_polygon is not None and len(support_polygon) >= 3:
            zmp = project_into_polygon(zmp, support_polygon, self.zmp_margin)
        return zmp

    def com_acceleration(
        self,
        com: np.ndarray,
        com_velocity: np.ndarray,
        com_ref: np.ndarray,
        com_ref_velocity: np.ndarray,
        com_ref_acceleration: np.ndarray,
        omega: float,
        support_polygon: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Horizontal CoM acceleration of the LIP under DCM feedback, and the ZMP it implies.

        Returns:
            (cdd_xy [m/s^2], zmp_xy [m]) with cdd = omega^2 (c - z).
        """
        # zmp_command's formula on the horizontal coordinates as floats (the same operations in
        # the same order as on the arrays: the same numbers, without 20 small-array calls).
        com = np.asarray(com, dtype=float)
        c = com[:2].tolist()
        cd = np.asarray(com_ref_velocity, dtype=float)[:2].tolist()
        cdd = np.asarray(com_ref_acceleration, dtype=float)[:2].tolist()
        v = np.asarray(com_velocity, dtype=float)[:2].tolist()
        r = np.asarray(com_ref, dtype=float)[:2].tolist()
        gain = 1.0 + self.gain / omega
        zmp_xy = []
        for i in range(2):
            xi, xi_ref = c[i] + v[i] / omega, r[i] + cd[i] / omega
            zmp_xy.append((xi_ref - (cd[i] + cdd[i] / omega) / omega) + gain * (xi - xi_ref))
        zmp = np.array(zmp_xy)
        if (
            support_polygon is not None
            and len(support_polygon) >= 3
            and not inside_polygon(zmp_xy[0], zmp_xy[1], support_polygon, self.zmp_margin)
        ):
            zmp = project_into_polygon(zmp, support_polygon, self.zmp_margin)
        return omega**2 * (com[:2] - zmp), zmp
