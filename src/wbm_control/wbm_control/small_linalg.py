"""3-vector and 3 x 3 algebra on Python floats, for the control step's many tiny products.

numpy's general routines (``np.cross``, ``np.linalg.solve``) cost ten times the arithmetic at
this size (argument checks, axis moves, a LAPACK call); these write the same formulas out.
``cross3`` is the same arithmetic as ``np.cross`` (bit-identical); ``solve_3x3`` is Cramer's rule;
``norm`` is ``np.linalg.norm``'s arithmetic for a vector (sqrt of its dot product: bit-identical);
``rotation_from_quaternion_xyzw`` is the function of :mod:`wbm_description.conventions` on
Python floats (the same operations in the same order: bit-identical).
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
