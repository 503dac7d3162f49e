"""Jacobians, dJ/dt * nu, the CoM Jacobian and the centroidal map by finite differences.

Central differences with step h have truncation error O(h^2) and round-off O(eps / h); with
h = 1e-6 both are below 1e-8 for iCub's quantities of order 1, hence the tolerances of 1e-6.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from description_robots import FRAMES, HUMANOIDS

from wbm_description import WholeBodyModel

H = 1e-6
TOL = 1e-6


def mixed_velocity_direction(model: WholeBodyModel, q: np.ndarray, nu: np.ndarray) -> np.ndarray:
    """Pinocchio's v for a mixed nu at q (v = T(q) nu)."""
    return model.velocity_from_mixed(q, nu)


def displaced(model: WholeBodyModel, q: np.ndarray, nu: np.ndarray, h: float) -> np.ndarray:
    """q moved along the mixed velocity nu for time h (first order in h on the manifold)."""
    return pin.integrate(model.model, q, h * mixed_velocity_direction(model, q, nu))


@pytest.mark.parametrize(
    ("robot", "role"),
    [(robot, role) for robot in HUMANOIDS for role in ("left_sole", "right_hand", "imu", "tool")],
)
def test_mixed_frame_jacobian(robot, role, request, random_state, rng):
    model: WholeBodyModel = request.getfixturevalue(robot)
    frame = FRAMES[robot][role]
    q, _ = random_state(model)
    J = model.frame_jacobian(q, frame, representation="mixed")
    assert J.shape == (6, model.nv)
    for _ in range(3):
        nu = rng.normal(size=model.nv)
        plus = model.frame_placement(displaced(model, q, nu, H), frame)
        minus = model.frame_placement(displaced(model, q, nu, -H), frame)
        linear = (plus.translation - minus.translation) / (2 * H)
        angular = pin.log3(plus.rotation @ minus.rotation.T) / (2 * H)
        np.testing.assert_allclose(J @ nu, np.concatenate([linear, angular]), atol=TOL)


@pytest.mark.parametrize("robot", HUMANOIDS)
def test_body_frame_jacobian(robot, request, random_state, rng):
    model: WholeBodyModel = request.getfixturevalue(robot)
    frame = FRAMES[robot]["right_sole"]
    q, _ = random_state(model)
    J = model.frame_jacobian(q, frame, representation="body")
    v = rng.normal(size=model.nv)
    plus = model.frame_placement(pin.integrate(model.model, q, H * v), frame)
    minus = model.frame_placement(pin.integrate(model.model, q, -H * v), frame)
    twist = pin.log6(minus.inverse() * plus).vector / (2 * H)
    np.testing.assert_allclose(J @ v, twist, atol=TOL)


@pytest.mark.parametrize("robot", HUMANOIDS)
@pytest.mark.parametrize("representation", ["mixed", "body"])
def test_jacobian_dot_times_velocity(robot, request, random_state, representation):
    """dJ/dt nu = d/dt (J(q(t)) nu) at constant nu (mixed) or constant v (body)."""
    model: WholeBodyModel = request.getfixturevalue(robot)
    q, v = random_state(model)
    frame = FRAMES[robot]["left_hand"]
    if representation == "mixed":
        nu = model.velocity_to_mixed(q, v)

        def frame_velocity(qq):
            return model.frame_jacobian(qq, frame, representation="mixed") @ nu

        q_plus, q_minus = displaced(model, q, nu, H), displaced(model, q, nu, -H)
    else:

        def frame_velocity(qq):
            return model.frame_jacobian(qq, frame, representation="body") @ v

        q_plus = pin.integrate(model.model, q, H * v)
        q_minus = pin.integrate(model.model, q, -H * v)
    numeric = (frame_velocity(q_plus) - frame_velocity(q_minus)) / (2 * H)
    analytic = model.frame_jacobian_dot_times_velocity(q, v, frame, representation=representation)
    np.testing.assert_allclose(analytic, numeric, atol=1e-5)


@pytest.mark.parametrize("robot", HUMANOIDS)
def test_frame_velocity_is_jacobian_times_velocity(robot, request, random_state):
    model: WholeBodyModel = request.getfixturevalue(robot)
    hand = FRAMES[robot]["right_hand"]
    q, v = random_state(model)
    nu = model.velocity_to_mixed(q, v)
    np.testing.assert_allclose(
        model.frame_velocity(q, v, hand, representation="mixed"),
        model.frame_jacobian(q, hand, representation="mixed") @ nu,
        atol=1e-12,
    )
    np.testing.assert_allclose(
        model.frame_velocity(q, v, hand, representation="body"),
        model.frame_jacobian(q, hand, representation="body") @ v,
        atol=1e-12,
    )


@pytest.mark.parametrize("robot", HUMANOIDS)
def test_com_jacobian_and_velocity(robot, request, random_state, rng):
    model: WholeBodyModel = request.getfixturevalue(robot)
    q, v = random_state(model)
    nu = rng.normal(size=model.nv)
    numeric = (
        model.com_position(displaced(model, q, nu, H))
        - model.com_position(displaced(model, q, nu, -H))
    ) / (2 * H)
    np.testing.assert_allclose(
        model.com_jacobian(q, representation="mixed") @ nu, numeric, atol=TOL
    )
    np.testing.assert_allclose(
        model.com_velocity(q, v), model.com_jacobian(q, representation="body") @ v, atol=1e-12
    )


@pytest.mark.parametrize("robot", HUMANOIDS)
def test_centroidal_momentum(robot, request, random_state):
    model: WholeBodyModel = request.getfixturevalue(robot)
    q, v = random_state(model)
    h = model.centroidal_momentum(q, v)
    # Linear momentum is m * CoM velocity.
    np.testing.assert_allclose(h[:3], model.total_mass * model.com_velocity(q, v), atol=1e-10)
    nu = model.velocity_to_mixed(q, v)
    np.testing.assert_allclose(
        model.centroidal_momentum_matrix(q, representation="mixed") @ nu, h, atol=1e-10
    )


@pytest.mark.parametrize("robot", HUMANOIDS)
def test_world_frame_at_reference_link(robot, request):
    """Seed 000's world frame at a fixed link: the left sole is the world frame initially."""
    model: WholeBodyModel = request.getfixturevalue(robot)
    q = model.initial_configuration()
    placement = model.frame_placement(q, FRAMES[robot]["left_sole"])
    np.testing.assert_allclose(placement.homogeneous, np.eye(4), atol=1e-12)
    right = model.frame_placement(q, FRAMES[robot]["right_sole"])
    # Both feet flat on the ground, side by side, and the CoM above the ground. iCub's URDF
    # writes pi as 3.14159 in the sole frames' rpy: the two soles differ by up to 3e-5 rad.
    np.testing.assert_allclose(right.rotation, np.eye(3), atol=5e-5)
    assert abs(right.translation[2]) < 1e-5
    assert model.com_position(q)[2] > 0.3


@pytest.mark.parametrize(
    ("robot", "link", "tool", "offset"),
    [
        ("icub", "l_hand", "l_hand_tool", -0.05),
        ("g1", "left_ankle_roll_link", "left_sole", -0.035),
    ],
)
def test_tool_frame_sits_on_its_link(robot, link, tool, offset, request, random_state):
    model: WholeBodyModel = request.getfixturevalue(robot)
    q, _ = random_state(model)
    link_transform = model.frame_transform(q, link)
    tool_transform = model.frame_transform(q, tool)
    expected = link_transform @ pin.SE3(np.eye(3), np.array([0.0, 0.0, offset])).homogeneous
    np.testing.assert_allclose(tool_transform, expected, atol=1e-12)
