import numpy as np
import pinocchio as pin
import pytest
from scipy.optimize import nnls

from wbm_control.contact_wrench_cone import (
    contact_wrench_cone_at_center,
    contact_wrench_cone_span_at_center,
    contact_wrench_cone_world,
    wrench_in_cone,
)
from wbm_control.exceptions import InputError

# iCub's sole: 0.14 x 0.07 m, rectangle centred at x = +0.02 in the sole frame.
LENGTH, WIDTH, CENTER, MU = 0.14, 0.07, (0.02, 0.0), 0.5
FZ = 100.0
# A step of 1e-4 of the bound (0.01 % of it, 7 um of CoP) decides accepted vs rejected; rounding
# in F w is ~1e-14, so tolerance 1e-9 in wrench_in_cone only absorbs rounding.
EPS = 1e-4


def cone_flat():
    return contact_wrench_cone_world(np.eye(3), length=LENGTH, width=WIDTH, center=CENTER, mu=MU)


def wrench_with_cop(x, y, fz=FZ, fx=0.0, fy=0.0):
    """Ground wrench at the sole origin (world = sole axes), CoP at (x, y) in the sole."""
    force = np.array([fx, fy, fz])
    return np.concatenate([force, np.cross([x, y, 0.0], force)])


@pytest.mark.parametrize(
    "edge_point, outward",
    [
        ((CENTER[0] + LENGTH / 2, 0.0), (1, 0)),  # toe
        ((CENTER[0] - LENGTH / 2, 0.0), (-1, 0)),  # heel
        ((CENTER[0], WIDTH / 2), (0, 1)),  # inner/outer side
        ((CENTER[0], -WIDTH / 2), (0, -1)),
        ((CENTER[0] + LENGTH / 2, WIDTH / 2), (1, 1)),  # a corner
    ],
)
def test_cop_on_the_sole_edge_is_accepted_and_just_outside_rejected(edge_point, outward):
    F = cone_flat()
    x, y = edge_point
    assert wrench_in_cone(F, wrench_with_cop(x, y))
    step = EPS * np.array(outward, dtype=float)
    assert not wrench_in_cone(F, wrench_with_cop(x + step[0], y + step[1]))
    # Just inside is accepted too.
    assert wrench_in_cone(F, wrench_with_cop(x - step[0], y - step[1]))


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_tangential_ratio_just_under_mu_accepted_just_over_rejected(axis, sign):
    F = cone_flat()
    for ratio, expected in ((MU * (1 - EPS), True), (MU * (1 + EPS), False)):
        tangential = [0.0, 0.0]
        tangential[axis] = sign * ratio * FZ
        w = wrench_with_cop(CENTER[0], CENTER[1], fx=tangential[0], fy=tangential[1])
        assert wrench_in_cone(F, w) is expected, (ratio, axis, sign)


def test_yaw_torque_bound_is_mu_times_half_perimeter_without_tangential_force():
    # Closed form (Caron 2015): with f_xy = 0 and the CoP at the centre,
    # |tau_z| <= mu (X + Y) f_z.
    F = contact_wrench_cone_at_center(LENGTH / 2, WIDTH / 2, MU)
    bound = MU * (LENGTH / 2 + WIDTH / 2) * FZ
    for sign in (1.0, -1.0):
        assert wrench_in_cone(F, [0, 0, FZ, 0, 0, sign * bound * (1 - EPS)])
        assert not wrench_in_cone(F, [0, 0, FZ, 0, 0, sign * bound * (1 + EPS)])


def test_no_pulling_force():
    assert not wrench_in_cone(cone_flat(), wrench_with_cop(CENTER[0], 0.0, fz=-1.0))


def test_face_matrix_matches_the_span_of_corner_friction_pyramids():
    """H-representation vs V-representation (pymanoid's wrench_span), an independent construction.

    Every generator satisfies F s <= 0, and a random wrench is in the H-cone iff it is a
    non-negative combination of the generators (NNLS residual ~ 0).
    """
    X, Y = LENGTH / 2, WIDTH / 2
    F = contact_wrench_cone_at_center(X, Y, MU)
    S = contact_wrench_cone_span_at_center(X, Y, MU)
    assert np.max(F @ S) <= 1e-12
    rng = np.random.default_rng(0)
    agree = 0
    for _ in range(300):
        w = np.concatenate([rng.normal(0, 0.3, 3) + [0, 0, 1], rng.normal(0, 0.03, 3)])
        in_h = bool(np.all(F @ w <= 1e-12))
        _, residual = nnls(S, w)
        in_v = residual < 1e-9
        # Points within rounding of the boundary are ambiguous; none are expected with a
        # continuous distribution, so every sample must agree.
        assert in_h == in_v, (w, F @ w, residual)
        agree += in_h
    assert 20 < agree < 280  # the sample crosses the boundary (the test can fail both ways)


def test_world_axes_cone_of_a_yawed_and_tilted_sole():
    rotation = pin.rpy.rpyToMatrix(0.1, -0.2, 1.2)
    F = contact_wrench_cone_world(rotation, length=LENGTH, width=WIDTH, center=CENTER, mu=MU)
    toe = np.array([CENTER[0] + LENGTH / 2, 0.0, 0.0])
    force_in_sole = np.array([0.0, 0.0, FZ])
    for offset, expected in ((0.0, True), (EPS, False)):
        point = toe + [offset, 0.0, 0.0]
        w_sole = np.concatenate([force_in_sole, np.cross(point, force_in_sole)])
        w_world = np.concatenate([rotation @ w_sole[:3], rotation @ w_sole[3:]])
        assert wrench_in_cone(F, w_world) is expected


def test_bad_sizes_are_rejected():
    with pytest.raises(InputError, match="mu"):
        contact_wrench_cone_at_center(0.07, 0.035, -0.1)
    with pytest.raises(InputError, match="half_width"):
        contact_wrench_cone_at_center(0.07, float("nan"), 0.5)
