"""Compiled kernel of the balance feedback: the DCM stabilizer's ZMP and the CoM task's rows.

:func:`balance_feedback` computes in one call what :meth:`wbm_control.tasks.ComTask.balance`
and the CoM task's desired acceleration computed in some forty small operations: the LIP's
natural frequency, the DCM feedback's ZMP (:meth:`wbm_control.balance.DcmStabilizer.
com_acceleration`'s formula, the same operations in the same order), whether that ZMP is inside
the support polygon shrunk by the ZMP margin, the CoM acceleration it implies, the DCM, the
CoM's static margin inside the polygon, the vertical PD of the CoM task and the CoM error.
Projecting a ZMP that falls outside the polygon and the margin of a CoM outside it stay in
Python (:mod:`wbm_control.balance`: rare, and exact there). Frames: world, z up; [m, m/s,
m/s^2].

The numpy formulas it replaces are in ``tests/control/test_jit_tasks.py``, which checks the
two against each other. :func:`warm_up` compiles (or loads from the cache) the kernel.
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
def balance_feedback(
    com: np.ndarray,
    com_velocity: np.ndarray,
    com_reference: np.ndarray,
    com_reference_velocity: np.ndarray,
    com_reference_acceleration: np.ndarray,
    ground: float,
    gravity: np.ndarray,
    dcm_gain: float,
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
        normals: Unit inward normals (m, 2) of the support polygon's edges
            (:func:`wbm_control.balance._inward_half_planes`, margin 0); m < 3: no polygon.
        offsets: Their offsets (m,) [m]: inside iff n_i . x >= d_i.
        zmp_margin: The ZMP is kept this far inside the polygon [m].
        kp: The CoM task's vertical stiffness [1/s^2].
        kd: The CoM task's vertical damping [1/s].
        out: Output (:data:`OUTPUT_SIZE`,): the horizontal CoM acceleration omega^2 (c - z)
            [m/s^2], the ZMP (x, y, ground) [m], the DCM c + cd / omega [m], the CoM task's
            desired acceleration (x, y from the DCM feedback, z a PD) [m/s^2], the CoM's static
            margin inside the polygon (min_i n_i . c - d_i: the distance to the nearest edge
            line when >= 0; +inf without polygon) [m], 1.0 if the ZMP is inside the polygon
            shrunk by the margin (else 0.0: to be projected) and the CoM error |c_ref - c| [m].

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
        x, y = com[0], com[1]
        for i in range(count):
            n0, n1, d = normals[i, 0], normals[i, 1], offsets[i]
            if not (n0 * z0 + n1 * z1 >= (d + zmp_margin) - _INSIDE_TOLERANCE):
                inside = 0.0
            distance = n0 * x + n1 * y - d
            if i == 0 or distance < static:
                static = distance
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

    C-contiguous float64 arrays; the reference also read-only (a trajectory's end sample,
    :meth:`~wbm_control.tasks.ComTask.reference`: numba compiles read-only arrays apart). To be
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
            np.zeros(3),
            0.0,
            1.0,
            1.0,
            np.empty(OUTPUT_SIZE),
        )
    _warm = True
