"""3-vector and 3 x 3 algebra on Python floats, for the control step's many tiny products.

numpy's general routines (``np.cross``, ``np.linalg.solve``) cost ten times the arithmetic at
this size (argument checks, axis moves, a LAPACK call); these write the same formulas out.
``cross3`` is the same arithmetic as ``np.cross`` (bit-identical); ``solve_3x3`` is Cramer's rule;
``norm`` is ``np.linalg.norm``'s arithmetic for a vector (sqrt of its dot product: bit-identical);
``rotation_from_quaternion_xyzw`` is the function of :mod:`wbm_description.conventions` on
Python floats (the same operations in the same order: bit-identical).
``unit_quaternion_of_rotation`` and ``rotation_of_unit_quaternion`` are Pinocchio's (Eigen's)
conversions on floats: the base estimator's kernel does the same operations
(:mod:`wbm_control.jit.estimator_kernels`), these are their Python form and its reference.
"""

from __future__ import annotations

import math

import numpy as np

from wbm_control.exceptions import InputError


def cross3(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The cross product a x b of two 3-vectors (3,): the arithmetic of ``np.cross``."""
    a0, a1, a2 = a.tolist()
    b0, b1, b2 = b.tolist()
    return np.array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])


def norm(vector: np.ndarray) -> float:
    """Euclidean norm of a 1-D float array: ``np.linalg.norm``'s sqrt(x . x), unchecked."""
    return math.sqrt(vector.dot(vector))


def solve_3x3(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """The solution x of matrix x = rhs for an invertible 3 x 3 matrix (Cramer's rule).

    Raises:
        InputError: The matrix is singular (or not finite).
    """
    (a, b, c), (d, e, f), (g, h, i) = matrix.tolist()
    r0, r1, r2 = rhs.tolist()
    A, B, C = e * i - f * h, f * g - d * i, d * h - e * g
    det = a * A + b * B + c * C
    if det == 0.0 or not np.isfinite(det):
        raise InputError("fixed soles", "a full-rank least-squares system", det)
    return np.array(
        [
            (r0 * A + b * (f * r2 - r1 * i) + c * (r1 * h - e * r2)) / det,
            (a * (r1 * i - f * r2) + r0 * B + c * (d * r2 - r1 * g)) / det,
            (a * (e * r2 - r1 * h) + b * (r1 * g - d * r2) + r0 * C) / det,
        ]
    )


def rotation_from_quaternion_xyzw(quaternion_xyzw: np.ndarray) -> np.ndarray:
    """Rotation matrix (3 x 3) of a quaternion (x, y, z, w), normalized first.

    The formula of :func:`wbm_description.conventions.rotation_from_quaternion_xyzw`, on floats.
    """
    array = np.asarray(quaternion_xyzw, dtype=float)
    x, y, z, w = (array / norm(array)).tolist()
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


Rows3 = tuple[tuple[float, float, float], tuple[float, float, float], tuple[float, float, float]]


def unit_quaternion_of_rotation(
    rows: Rows3 | list[list[float]],
) -> tuple[float, float, float, float]:
    """The unit quaternion (x, y, z, w) of a 3 x 3 rotation matrix given by rows, on floats.

    ``pin.Quaternion(R)`` then ``normalize()``: Eigen's conversion (the trace branch, else the
    largest diagonal entry's; trace summed m00 + (m11 + m22) as Eigen does) and its
    normalization (squared norm summed (x^2 + z^2) + (y^2 + w^2), its two-lane order), the same
    operations in the same order: bit-identical to Pinocchio's wheel on x86-64 (checked on
    2e5 random matrices; another build may differ in the last bit). No pin.Quaternion object
    (and none of eigenpy's per-call allocation, :mod:`wbm_description.rotation_quaternion`).
    The matrix is not checked for orthonormality (as Pinocchio's).
    """
    (m00, m01, m02), (m10, m11, m12), (m20, m21, m22) = rows
    t = m00 + (m11 + m22)
    if t > 0.0:
        t = math.sqrt(t + 1.0)
        w = 0.5 * t
        t = 0.5 / t
        x, y, z = (m21 - m12) * t, (m02 - m20) * t, (m10 - m01) * t
    else:
        m = (m00, m01, m02), (m10, m11, m12), (m20, m21, m22)
        i = 1 if m11 > m00 else 0
        if m22 > m[i][i]:
            i = 2
        j, k = (i + 1) % 3, (i + 2) % 3
        t = math.sqrt(m[i][i] - m[j][j] - m[k][k] + 1.0)
        c = [0.0, 0.0, 0.0]
        c[i] = 0.5 * t
        t = 0.5 / t
        w = (m[k][j] - m[j][k]) * t
        c[j] = (m[j][i] + m[i][j]) * t
        c[k] = (m[k][i] + m[i][k]) * t
        x, y, z = c
    squared = (x * x + z * z) + (y * y + w * w)
    if squared > 0.0:
        n = math.sqrt(squared)
        return x / n, y / n, z / n, w / n
    return x, y, z, w


def rotation_of_unit_quaternion(x: float, y: float, z: float, w: float) -> Rows3:
    """The rotation matrix (rows) of a unit quaternion (x, y, z, w), on floats.

    ``pin.Quaternion.toRotationMatrix()``: Eigen's formula, the same operations in the same
    order (bit-identical; the quaternion is not normalized first, as Eigen's).
    """
    tx, ty, tz = 2.0 * x, 2.0 * y, 2.0 * z
    twx, twy, twz = tx * w, ty * w, tz * w
    txx, txy, txz = tx * x, ty * x, tz * x
    tyy, tyz, tzz = ty * y, tz * y, tz * z
    return (
        (1.0 - (tyy + tzz), txy - twz, txz + twy),
        (txy + twz, 1.0 - (txx + tzz), tyz - twx),
        (txz - twy, tyz + twx, 1.0 - (txx + tyy)),
    )
