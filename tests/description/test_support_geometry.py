"""Support polygon geometry against closed forms: the hull and the signed distance to it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from wbm_description.support_geometry import convex_hull_2d, polygon_margin

SQUARE = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])  # counter-clockwise


def test_hull_of_a_square_with_inner_and_repeated_points_is_its_corners_counter_clockwise():
    points = [[1.0, 1.0], [0.5, 0.5], [0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.2, 0.9]]
    hull = convex_hull_2d(points)
    np.testing.assert_array_equal(hull, SQUARE)
    # Counter-clockwise: positive shoelace area, 1 m^2.
    x, y = hull[:, 0], hull[:, 1]
    assert 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))) == 1.0


@pytest.mark.parametrize(
    ("point", "expected"),
    [
        ([0.5, 0.5], 0.5),  # centre: half the side
        ([0.1, 0.7], 0.1),  # nearest edge x = 0
        ([0.8, 0.95], 0.05),  # nearest edge y = 1
        ([1.0, 0.3], 0.0),  # on an edge
        ([1.5, 0.5], -0.5),  # beside an edge: the perpendicular distance
        ([0.5, -0.25], -0.25),
        ([2.0, 2.0], -math.sqrt(2.0)),  # beyond a corner: the distance to the corner
        ([-0.3, 1.4], -0.5),  # (0.3, 0.4) from the corner (0, 1)
    ],
)
def test_margin_in_a_unit_square_is_the_distance_to_the_nearest_edge_or_corner(point, expected):
    # Tolerance: a few ulps of the unit coordinates.
    assert polygon_margin(point, SQUARE) == pytest.approx(expected, abs=1e-15)


def test_margin_in_a_triangle_is_the_inscribed_circle_radius_at_its_incentre():
    # The 3-4-5 right triangle: inradius r = (a + b - c) / 2 = 1, incentre (1, 1).
    triangle = convex_hull_2d([[0.0, 0.0], [4.0, 0.0], [0.0, 3.0]])
    assert polygon_margin([1.0, 1.0], triangle) == pytest.approx(1.0, abs=1e-15)
    # Beyond the hypotenuse's midpoint (2, 1.5), 0.5 along its outward normal (3, 4) / 5.
    outside = np.array([2.0, 1.5]) + 0.5 * np.array([3.0, 4.0]) / 5.0
    assert polygon_margin(outside, triangle) == pytest.approx(-0.5, abs=1e-15)


def test_margin_of_a_degenerate_polygon_is_minus_the_distance_to_it():
    segment = np.array([[0.0, 0.0], [2.0, 0.0]])
    assert polygon_margin([1.0, 0.5], segment) == pytest.approx(-0.5, abs=1e-15)
    assert polygon_margin([3.0, 0.0], segment) == pytest.approx(-1.0, abs=1e-15)
    assert polygon_margin([0.0, 2.0], segment[:1]) == pytest.approx(-2.0, abs=1e-15)
    assert polygon_margin([0.0, 0.0], np.zeros((0, 2))) == -math.inf
