"""Jacobians, dJ/dt * nu, the CoM Jacobian and the centroidal map by finite differences.

Central differences with step h have truncation error O(h^2) and round-off O(eps / h); with
h = 1e-6 both are below 1e-8 for iCub's quantities of order 1, hence the tolerances of 1e-6.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from wbm_description import WholeBodyModel

H = 1e-6
TOL = 1e-6


def mixed_velocity_direction(model: WholeBodyModel, q: np.ndarray, nu: np.ndarray) -> np.ndarray:
    """Pinocchio's v for a mixed nu at q (v = T(q) nu)."""
    return model.velocity_from_mixed(q, nu)


def displaced(model: WholeBodyModel, q: np.ndarray, nu: np.ndarray, h: float) -> np.ndarray:
    """q moved along the mixed velocity nu for time h (first order in h on the manifold)."""
    return pin.integrate(model.model, q, h * mixed_velocity_direction(model, q, nu))


@pytest.mark.parametrize("frame", ["l_sole", "r_hand", "imu_frame", "l_hand_tool"])
def test_mixed_frame_jacobian(icub: WholeBodyModel, random_state, rng, frame):
    q, _ = random_state(icub)
    J = icub.frame_jacobian(q, frame, representation="mixed")
    assert J.shape == (6, icub.nv)
    for _ in range(3):
        nu = rng.normal(size=icub.nv)
        plus = icub.frame_placement(displaced(icub, q, nu, H), frame)
        minus = icub.frame_placement(displaced(icub, q, nu, -H), frame)
        linear = (plus.translation - minus.translation) / (2 * H)
        angular = pin.log3(plus.rotation @ minus.rotation.T) / (2 * H)
        np.testing.assert_allclose(J @ nu, np.concatenate([linear, angular]), atol=TOL)


def test_body_frame_jacobian(icub: WholeBodyModel, random_state, rng):
    q, _ = random_state(icub)
    J = icub.frame_jacobian(q, "r_sole", representation="body")
    v = rng.normal(size=icub.nv)
    plus = icub.frame_placement(pin.integrate(icub.model, q, H * v), "r_sole")
    minus = icub.frame_placement(pin.integrate(icub.model, q, -H * v), "r_sole")
    twist = pin.log6(minus.inverse() * plus).vector / (2 * H)
    np.testing.assert_allclose(J @ v, twist, atol=TOL)


@pytest.mark.parametrize("representation", ["mixed", "body"])
def test_jacobian_dot_times_velocity(icub: WholeBodyModel, random_state, representation):
    """dJ/dt nu = d/dt (J(q(t)) nu) at constant nu (mixed) or constant v (body)."""
    q, v = random_state(icub)
    frame = "l_hand"
    if representation == "mixed":
        nu = icub.velocity_to_mixed(q, v)

        def frame_velocity(qq):
            return icub.frame_jacobian(qq, frame, representation="mixed") @ nu

        q_plus, q_minus = displaced(icub, q, nu, H), displaced(icub, q, nu, -H)
    else:

        def frame_velocity(qq):
            return icub.frame_jacobian(qq, frame, representation="body") @ v

        q_plus = pin.integrate(icub.model, q, H * v)
        q_minus = pin.integrate(icub.model, q, -H * v)
    numeric = (frame_velocity(q_plus) - frame_velocity(q_minus)) / (2 * H)
    analytic = icub.frame_jacobian_dot_times_velocity(q, v, frame, representation=representation)
    np.testing.assert_allclose(analytic, numeric, atol=1e-5)


def test_frame_velocity_is_jacobian_times_velocity(icub: WholeBodyModel, random_state):
    q, v = random_state(icub)
    nu = icub.velocity_to_mixed(q, v)
    np.testing.assert_allclose(
        icub.frame_velocity(q, v, "r_hand", representation="mixed"),
        icub.frame_jacobian(q, "r_hand", representation="mixed") @ nu,
        atol=1e-12,
    )
    np.testing.assert_allclose(
        icub.frame_velocity(q, v, "r_hand", representation="body"),
        icub.frame_jacobian(q, "r_hand", representation="body") @ v,
        atol=1e-12,
    )


def test_com_jacobian_and_velocity(icub: WholeBodyModel, random_state, rng):
    q, v = random_state(icub)
    nu = rng.normal(size=icub.nv)
    numeric = (
        icub.com_position(displaced(icub, q, nu, H))
        - icub.com_position(displaced(icub, q, nu, -H))
    ) / (2 * H)
    np.testing.assert_allclose(
        icub.com_jacobian(q, representation="mixed") @ nu, numeric, atol=TOL
    )
    np.testing.assert_allclose(
        icub.com_velocity(q, v), icub.com_jacobian(q, representation="body") @ v, atol=1e-12
    )


def test_centroidal_momentum(icub: WholeBodyModel, random_state):
    q, v = random_state(icub)
    h = icub.centroidal_momentum(q, v)
    # Linear momentum is m * CoM velocity.
    np.testing.assert_allclose(h[:3], icub.total_mass * icub.com_velocity(q, v), atol=1e-10)
    nu = icub.velocity_to_mixed(q, v)
    np.testing.assert_allclose(
        icub.centroidal_momentum_matrix(q, representation="mixed") @ nu, h, atol=1e-10
    )


def test_world_frame_at_reference_link(icub: WholeBodyModel):
    """Seed 000's world frame at a fixed link: the left sole is the world frame initially."""
    q = icub.initial_configuration()
    placement = icub.frame_placement(q, "l_sole")
    np.testing.assert_allclose(placement.homogeneous, np.eye(4), atol=1e-12)
    right = icub.frame_placement(q, "r_sole")
    # Both feet flat on the ground, side by side, and the CoM above the ground. The URDF writes
    # pi as 3.14159 in the sole frames' rpy: the two soles differ by up to 3e-5 rad.
    np.testing.assert_allclose(right.rotation, np.eye(3), atol=5e-5)
    assert abs(right.translation[2]) < 1e-5
    assert icub.com_position(q)[2] > 0.3


def test_tool_frame_sits_on_its_link(icub: WholeBodyModel, random_state):
    q, _ = random_state(icub)
    hand = icub.frame_transform(q, "l_hand")
    tool = icub.frame_transform(q, "l_hand_tool")
    expected = hand @ pin.SE3(np.eye(3), np.array([0.0, 0.0, -0.05])).homogeneous
    np.testing.assert_allclose(tool, expected, atol=1e-12)
