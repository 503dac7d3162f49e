"""The contact wrench cone of a rectangular sole (seed 002, section 5.1; Caron et al. 2015).

A rectangular surface contact of half-length X (along the sole's x) and half-width Y (along y)
with friction coefficient mu, for the wrench w = (f, tau) the ground applies to the sole, taken
at the rectangle's centre in sole axes, holds (fixed contact mode, linearized Coulomb friction)
iff F w <= 0 with the 16 rows

- friction pyramid: |f_x| <= mu f_z, |f_y| <= mu f_z;
- centre of pressure inside the rectangle: |tau_x| <= Y f_z, |tau_y| <= X f_z;
- yaw torque bound tau_min <= tau_z <= tau_max with
  tau_min = -mu (X + Y) f_z + |Y f_x - mu tau_x| + |X f_y - mu tau_y| and
  tau_max = +mu (X + Y) f_z - |Y f_x + mu tau_x| - |X f_y + mu tau_y|
  (each absolute value expanded into its two signs: 8 rows).

This is the face (H-) representation of the cone spanned by the 4-sided friction pyramids at the
4 corners (the span / V-representation of pymanoid's ``Contact.wrench_span``).
"""

from __future__ import annotations

import itertools

import numpy as np

from wbm_control.exceptions import InputError


def contact_wrench_cone_at_center(half_length: float, half_width: float, mu: float) -> np.ndarray:
    """Face matrix F (16 x 6) of the cone, for wrenches at the rectangle centre in sole axes.

    Args:
        half_length: X, half the sole length along its x axis [m].
        half_width: Y, half the sole width along its y axis [m].
        mu: Friction coefficient (of the linearized pyramid) [-].

    Returns:
        F with F w <= 0 for every wrench w = (f, tau) [N, N m] of the cone.
    """
    for name, value in (("half_length", half_length), ("half_width", half_width), ("mu", mu)):
        if not (np.isfinite(value) and value > 0.0):
            raise InputError(name, "a positive finite number", value)
    X, Y = float(half_length), float(half_width)
    rows = [
        [1, 0, -mu, 0, 0, 0],
        [-1, 0, -mu, 0, 0, 0],
        [0, 1, -mu, 0, 0, 0],
        [0, -1, -mu, 0, 0, 0],
        [0, 0, -Y, 1, 0, 0],
        [0, 0, -Y, -1, 0, 0],
        [0, 0, -X, 0, 1, 0],
        [0, 0, -X, 0, -1, 0],
    ]
    for s1, s2 in itertools.product((1.0, -1.0), repeat=2):
        # tau_z >= tau_min:
        #   -tau_z - mu (X+Y) f_z + s1 (Y f_x - mu tau_x) + s2 (X f_y - mu tau_y) <= 0
        rows.append([s1 * Y, s2 * X, -mu * (X + Y), -s1 * mu, -s2 * mu, -1.0])
        # tau_z <= tau_max:
        #   tau_z - mu (X+Y) f_z + s1 (Y f_x + mu tau_x) + s2 (X f_y + mu tau_y) <= 0
        rows.append([s1 * Y, s2 * X, -mu * (X + Y), s1 * mu, s2 * mu, 1.0])
    return np.array(rows, dtype=float)


def contact_wrench_cone_span_at_center(
    half_length: float, half_width: float, mu: float
) -> np.ndarray:
    """Span matrix S (6 x 16) of the same cone: its wrenches are S lambda with lambda >= 0.

    The columns are the edges (mu s1, mu s2, 1) of the 4-sided friction pyramids |f_x|, |f_y| <=
    mu f_z at the 4 corners, as wrenches at
    the rectangle centre in sole axes (pymanoid's ``wrench_span``). Used as an independent check
    of :func:`contact_wrench_cone_at_center`.
    """
    columns = []
    for cx, cy in itertools.product((half_length, -half_length), (half_width, -half_width)):
        corner = np.array([cx, cy, 0.0])
        for force in ([mu, mu, 1], [mu, -mu, 1], [-mu, mu, 1], [-mu, -mu, 1]):
            f = np.array(force, dtype=float)
            columns.append(np.concatenate([f, np.cross(corner, f)]))
    return np.array(columns).T


def wrench_transform_to_center(center_in_sole: np.ndarray) -> np.ndarray:
    """6 x 6 matrix moving a wrench from the sole origin to a point c, in sole axes.

    (f, tau_c) = (f, tau_origin - c x f).
    """
    c = np.asarray(center_in_sole, dtype=float)
    skew = np.array([[0.0, -c[2], c[1]], [c[2], 0.0, -c[0]], [-c[1], c[0], 0.0]])
    transform = np.eye(6)
    transform[3:6, 0:3] = -skew
    return transform


def contact_wrench_cone_world(
    rotation_sole_to_world: np.ndarray,
    *,
    length: float,
    width: float,
    center: tuple[float, float] = (0.0, 0.0),
    mu: float,
) -> np.ndarray:
    """Face matrix of a sole's cone for wrenches at the sole frame origin in world axes.

    This is wbm's contact-wrench convention (environment on robot, at the frame origin,
    world-aligned axes; :mod:`wbm_description.conventions`).

    Args:
        rotation_sole_to_world: 3 x 3 orientation of the sole frame in the world.
        length: Sole length along the sole's x [m].
        width: Sole width along the sole's y [m].
        center: Rectangle centre (x, y) in the sole frame [m].
        mu: Friction coefficient [-].

    Returns:
        F (16 x 6) with F w <= 0 iff w is in the cone.
    """
    R = np.asarray(rotation_sole_to_world, dtype=float)
    to_sole_axes = np.zeros((6, 6))
    to_sole_axes[0:3, 0:3] = R.T
    to_sole_axes[3:6, 3:6] = R.T
    F = contact_wrench_cone_at_center(0.5 * length, 0.5 * width, mu)
    shift = wrench_transform_to_center(np.array([center[0], center[1], 0.0]))
    return F @ shift @ to_sole_axes


def wrench_in_cone(
    face_matrix: np.ndarray, wrench: np.ndarray, *, tolerance: float = 1e-9
) -> bool:
    """Whether F w <= tolerance row by row (tolerance in [N] or [N m], for rounding only)."""
    return bool(np.all(face_matrix @ np.asarray(wrench, dtype=float) <= tolerance))
