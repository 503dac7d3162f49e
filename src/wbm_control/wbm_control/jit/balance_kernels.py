"""Compiled kernel of the balance feedback: the DCM stabilizer's ZMP and the CoM task's rows.

:func:`balance_feedback` computes in one call what :meth:`wbm_control.tasks.ComTask.balance`
and the CoM task's desired acceleration computed in some forty small operations (and, when
the ZMP saturates, a Python projection of about 0.4 ms): the LIP's natural frequency, the DCM
feedback's ZMP (:meth:`wbm_control.balance.DcmStabilizer.com_acceleration`'s formula, the same
operations in the same order), projected onto the support polygon shrunk by the ZMP margin
when it falls outside (:func:`wbm_control.balance.project_into_polygon`'s candidates, order and
choice), the CoM acceleration it implies, the DCM, the CoM's static margin
(:func:`wbm_control.balance.static_equilibrium_margin`, with
:func:`wbm_description.support_geometry.polygon_margin`'s distance outside), the vertical PD of
the CoM task and the CoM error. Frames: world, z up; [m, m/s, m/s^2].

The numpy formulas it replaces are :meth:`wbm_control.tasks.ComTask.balance_reference` and
:meth:`~wbm_control.tasks.ComTask.desired_acceleration_reference`;
``tests/control/test_jit_tasks.py`` checks the two against each other. :func:`warm_up` compiles
(or loads from the cache) the kernel.
"""

from __future__ import annotations

import math

import numpy as np

from wbm_control.jit import kernel

#: The output of :func:`balance_feedback`: where each quantity is in ``out``.
ACCELERATION_XY = slice(0, 2)
ZMP = slice(2, 5)
DCM = slice(5, 8)
COM_DESIRED = slice(8, 11)
STATIC_MARGIN = 11
ZMP_INSIDE = 12
COM_ERROR = 13
OUTPUT_SIZE = 14

#: Inside test tolerance of :func:`wbm_control.balance.inside_polygon` [m].
_INSIDE_TOLERANCE = 1e-12


@kernel
def _feasible(x: float, y: float, normals: np.ndarray, offsets: np.ndarray, margin: float) -> bool:
    """n_i . (x, y) >= d_i + margin - 1e-12 on every edge (project_into_polygon's test)."""
    for i in range(normals.shape[0]):
        if not (
            normals[i, 0] * x + normals[i, 1] * y >= (offsets[i] + margin) - _INSIDE_TOLERANCE
        ):
            return False
    return True


@kernel
def _project(
    x: float, y: float, normals: np.ndarray, offsets: np.ndarray, margin: float, hull: np.ndarray
) -> tuple[float, float]:
    """:func:`wbm_control.balance.project_into_polygon` of an infeasible point (x, y) [m].

    The candidates in its order (the point projected on each edge line, then the corners of
    consecutive edge lines, solved by Gaussian elimination with partial pivoting), the nearest
    feasible one (the first of equals); none feasible: the polygon's centroid.
    """
    count = normals.shape[0]
    best_x, best_y, best = 0.0, 0.0, math.inf
    found = False
    for i in range(count):
        n0, n1 = normals[i, 0], normals[i, 1]
        step = (offsets[i] + margin) - (n0 * x + n1 * y)
        cx, cy = x + step * n0, y + step * n1
        if _feasible(cx, cy, normals, offsets, margin):
            distance = math.sqrt((cx - x) * (cx - x) + (cy - y) * (cy - y))
            if not found or distance < best:
                best_x, best_y, best, found = cx, cy, distance, True
    for i in range(count):
        j = (i + 1) % count
        a00, a01, b0 = normals[i, 0], normals[i, 1], offsets[i] + margin
        a10, a11, b1 = normals[j, 0], normals[j, 1], offsets[j] + margin
        if abs(a10) > abs(a00):  # partial pivoting: the larger first column entry leads
            a00, a01, b0, a10, a11, b1 = a10, a11, b1, a00, a01, b0
            sign = -1.0
        else:
            sign = 1.0
        factor = a10 / a00
        u11 = a11 - factor * a01
        if not abs(sign * a00 * u11) > 1e-12:
            continue
        cy = (b1 - factor * b0) / u11
        cx = (b0 - a01 * cy) / a00
        if _feasible(cx, cy, normals, offsets, margin):
            distance = math.sqrt((cx - x) * (cx - x) + (cy - y) * (cy - y))
            if not found or distance < best:
                best_x, best_y, best, found = cx, cy, distance, True
    if not found:  # margin larger than the polygon: its centroid
        sx, sy = 0.0, 0.0
        for i in range(hull.shape[0]):
            sx += hull[i, 0]
            sy += hull[i, 1]
        return sx / hull.shape[0], sy / hull.shape[0]
    return best_x, best_y


@kernel
def _polygon_margin(x: float, y: float, hull: np.ndarray) -> float:
    """:func:`wbm_description.support_geometry.polygon_margin` of (x, y) [m], m >= 3 corners.

    Its operations in its order: the smallest signed distance to the edge lines when >= 0,
    else minus the distance to the nearest edge segment.
    """
    count = hull.shape[0]
    inside = math.inf
    for k in range(count):
        following = k + 1 if k + 1 < count else 0
        e0 = hull[following, 0] - hull[k, 0]
        e1 = hull[following, 1] - hull[k, 1]
        o0, o1 = x - hull[k, 0], y - hull[k, 1]
        signed = (e0 * o1 - e1 * o0) / math.sqrt(e0 * e0 + e1 * e1)
        if k == 0 or signed < inside or signed != signed:
            inside = signed
    if inside >= 0.0:
        return inside
    nearest = math.inf
    for k in range(count):
        following = k + 1 if k + 1 < count else 0
        e0 = hull[following, 0] - hull[k, 0]
        e1 = hull[following, 1] - hull[k, 1]
        o0, o1 = x - hull[k, 0], y - hull[k, 1]
        t = (o0 * e0 + o1 * e1) / (e0 * e0 + e1 * e1)
        t = min(max(t, 0.0), 1.0) if t == t else t
        g0, g1 = o0 - t * e0, o1 - t * e1
        squared = g0 * g0 + g1 * g1
        if k == 0 or squared < nearest or squared != squared:
            nearest = squared
    return -math.sqrt(nearest)


@kernel
def balance_feedback(
    com: np.ndarray,
    com_velocity: np.ndarray,
    com_reference: np.ndarray,
    com_reference_velocity: np.ndarray,
    com_reference_acceleration: np.ndarray,
    ground: float,
    gravity: np.ndarray,
    dcm_gain: float,
    hull: np.ndarray,
    normals: np.ndarray,
    offsets: np.ndarray,
    zmp_margin: float,
    kp: float,
    kd: float,
    out: np.ndarray,
) -> float:
    """The balance feedback of one step into ``out`` (see the module's slices).

    Args:
        com: CoM position (3,) [m].
        com_velocity: CoM velocity (3,) [m/s].
        com_reference: Reference position (3,) [m].
        com_reference_velocity: Reference velocity (3,) [m/s].
        com_reference_acceleration: Reference acceleration (3,) [m/s^2].
        ground: Height of the held soles [m].
        gravity: Gravity vector (3,) [m/s^2] (z negative).
        dcm_gain: k [1/s] of the DCM feedback.
        hull: The support polygon (m, 2) [m], counter-clockwise (ContactSet's).
        normals: Unit inward normals (m, 2) of the support polygon's edges
            (:func:`wbm_control.balance._inward_half_planes`, margin 0); m < 3: no polygon.
        offsets: Their offsets (m,) [m]: inside iff n_i . x >= d_i.
        zmp_margin: The ZMP is kept this far inside the polygon [m].
        kp: The CoM task's vertical stiffness [1/s^2].
        kd: The CoM task's vertical damping [1/s].
        out: Output (:data:`OUTPUT_SIZE`,): the horizontal CoM acceleration omega^2 (c - z)
            [m/s^2], the ZMP z (x, y, ground) [m] (projected into the polygon shrunk by the
            margin when outside), the DCM c + cd / omega [m], the CoM task's desired
            acceleration (x, y from the DCM feedback, z a PD) [m/s^2], the CoM's static margin
            in the polygon [m] (+inf without polygon), 1.0 if the ZMP was inside (0.0:
            projected) and the CoM error |c_ref - c| [m].

    Returns:
        omega = sqrt(g / h) [1/s] of the LIP of height h = max(c_z - ground, 0.05) [m]; NaN
        when h or g is not positive (nothing else is written).
    """
    height = com[2] - ground
    if 0.05 > height:
        height = 0.05
    g = -gravity[2]
    if not (height > 0.0 and g > 0.0):
        return math.nan
    omega = math.sqrt(g / height)
    gain = 1.0 + dcm_gain / omega
    z0 = 0.0
    z1 = 0.0
    for i in range(2):
        xi = com[i] + com_velocity[i] / omega
        xi_ref = com_reference[i] + com_reference_velocity[i] / omega
        z = (
            xi_ref - (com_reference_velocity[i] + com_reference_acceleration[i] / omega) / omega
        ) + gain * (xi - xi_ref)
        if i == 0:
            z0 = z
        else:
            z1 = z
    inside = 1.0
    static = math.inf
    count = normals.shape[0]
    if count >= 3:
        if not _feasible(z0, z1, normals, offsets, zmp_margin):
            inside = 0.0
            z0, z1 = _project(z0, z1, normals, offsets, zmp_margin, hull)
        # static_equilibrium_margin: the nearest edge line's distance inside, else
        # polygon_margin's (the nearest edge segment's outside).
        x, y = com[0], com[1]
        for i in range(count):
            distance = normals[i, 0] * x + normals[i, 1] * y - offsets[i]
            if i == 0 or distance < static:
                static = distance
        if not static >= 0.0:
            static = _polygon_margin(x, y, hull)
    square = omega**2
    out[0] = square * (com[0] - z0)
    out[1] = square * (com[1] - z1)
    out[2] = z0
    out[3] = z1
    out[4] = ground
    for i in range(3):
        out[5 + i] = com[i] + com_velocity[i] / omega
    out[8] = out[0]
    out[9] = out[1]
    out[10] = (
        com_reference_acceleration[2]
        + kp * (com_reference[2] - com[2])
        + kd * (com_reference_velocity[2] - com_velocity[2])
    )
    out[STATIC_MARGIN] = static
    out[ZMP_INSIDE] = inside
    e0 = com_reference[0] - com[0]
    e1 = com_reference[1] - com[1]
    e2 = com_reference[2] - com[2]
    out[COM_ERROR] = math.sqrt(e0 * e0 + e1 * e1 + e2 * e2)
    return omega


#: Whether :func:`warm_up` ran in this process.
_warm = False


def warm_up() -> None:
    """Compile (or load from the cache) :func:`balance_feedback` for the controller's arrays.

    C-contiguous float64 arrays, the support polygon read-only (ContactSet's); the reference
    writable (a trajectory's sample) and read-only (its end sample,
    :meth:`~wbm_control.tasks.ComTask.reference`): numba compiles read-only arrays apart. To be
    called when the tasks are built, not in a control cycle; once per process (later calls
    return at once).
    """
    global _warm
    if _warm:
        return
    vector = np.array([0.0, 0.0, 0.5])
    read_only = vector.copy()
    read_only.flags.writeable = False
    hull = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    hull.flags.writeable = False
    for reference in (vector, read_only):
        balance_feedback(
            vector,
            vector,
            reference,
            reference,
            reference,
            0.0,
            np.array([0.0, 0.0, -9.81]),
            1.0,
            hull,
            np.array([[0.0, -1.0], [-0.7, 0.7], [0.7, 0.7]]),
            np.zeros(3),
            0.0,
            1.0,
            1.0,
            np.empty(OUTPUT_SIZE),
        )
    _warm = True
