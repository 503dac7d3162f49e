"""The whole-body model's dynamics against independent references.

Closed forms (planar 2-link arm), spatial_v2's identities (ID/FD consistency, HandC's C equals
ID at zero acceleration), finite differences, conservation laws over an integration, and the
contact-constrained dynamics' own constraint.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from description_robots import FRAMES, HUMANOIDS, feet

from wbm_description import WholeBodyModel


def planar_mass_matrix(q2: float) -> np.ndarray:
    """Closed form of the planar 2-link arm's mass matrix (any robotics textbook, e.g. Spong)."""
    m1, l1, lc1, i1 = 1.0, 0.5, 0.25, 0.02
    m2, lc2, i2 = 0.7, 0.2, 0.01
    c2 = np.cos(q2)
    m11 = m1 * lc1**2 + i1 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * c2) + i2
    m12 = m2 * (lc2**2 + l1 * lc2 * c2) + i2
    m22 = m2 * lc2**2 + i2
    return np.array([[m11, m12], [m12, m22]])


def test_planar_arm_mass_matrix_closed_form(planar_arm: WholeBodyModel, rng):
    for _ in range(5):
        q = rng.uniform(-3.0, 3.0, 2)
        # Pinocchio and the closed form agree to round-off (1e-12 relative to entries ~0.5).
        np.testing.assert_allclose(
            planar_arm.mass_matrix(q), planar_mass_matrix(q[1]), rtol=0, atol=1e-12
        )


def test_planar_arm_gravity_closed_form(planar_arm: WholeBodyModel):
    # Gravity along -y in the arm's plane: g1 = (m1 lc1 + m2 l1) g cos q1 + m2 lc2 g cos(q1+q2).
    q = np.array([0.3, 0.5])
    g = 9.81
    expected = np.array(
        [
            (1.0 * 0.25 + 0.7 * 0.5) * g * np.cos(q[0]) + 0.7 * 0.2 * g * np.cos(q.sum()),
            0.7 * 0.2 * g * np.cos(q.sum()),
        ]
    )
    np.testing.assert_allclose(planar_arm.gravity_forces(q), expected, atol=1e-12)


@pytest.mark.parametrize("robot", ["icub", "g1", "panda", "planar_arm"])
def test_mass_matrix_symmetric_positive_definite(robot, request, random_state):
    model = request.getfixturevalue(robot)
    for _ in range(3):
        q, _ = random_state(model)
        M = model.mass_matrix(q)
        np.testing.assert_array_equal(M, M.T)
        assert np.linalg.eigvalsh(M).min() > 0.0
        M_mixed = model.mass_matrix(q, representation="mixed")
        np.testing.assert_allclose(M_mixed, M_mixed.T, atol=1e-12)
        assert np.linalg.eigvalsh(M_mixed).min() > 0.0


@pytest.mark.parametrize("robot", ["icub", "g1", "panda"])
def test_inverse_and_forward_dynamics_are_inverse(robot, request, random_state, rng):
    """spatial_v2's ID/FD consistency: FD(q, v, ID(q, v, a)) = a and ID(FD(tau)) = tau."""
    model = request.getfixturevalue(robot)
    q, v = random_state(model)
    a = rng.normal(size=model.nv)
    tau = model.inverse_dynamics(q, v, a)
    if model.floating_base:
        # The base rows of tau are a base wrench that FD cannot apply; apply it as an external
        # wrench on the base's joint frame instead: FD with only joint torques must not match.
        base_frame = model.model.frames[1].name  # the free-flyer's joint frame
        wrench_world = pin.SE3(model.base_rotation(q), np.zeros(3)).act(pin.Force(tau[:6])).vector
        a_back = model.forward_dynamics(
            q, v, tau[6:], external_wrenches={base_frame: wrench_world}
        )
    else:
        a_back = model.forward_dynamics(q, v, tau)
    # Two independent O(n) algorithms (RNEA, ABA) agree to round-off on accelerations ~1.
    np.testing.assert_allclose(a_back, a, atol=1e-8)
    tau_joints = rng.normal(size=model.ndof)
    a = model.forward_dynamics(q, v, tau_joints)
    np.testing.assert_allclose(
        model.inverse_dynamics(q, v, a), model.generalized_torques(tau_joints), atol=1e-8
    )


@pytest.mark.parametrize("robot", HUMANOIDS)
def test_coriolis_is_inverse_dynamics_at_zero_acceleration(robot, request, random_state):
    """HandC's C term equals ID with zero acceleration; and M a + h = ID (CRBA vs RNEA)."""
    model: WholeBodyModel = request.getfixturevalue(robot)
    q, v = random_state(model)
    zero = np.zeros(model.nv)
    np.testing.assert_allclose(
        model.bias_forces(q, v), model.inverse_dynamics(q, v, zero), atol=1e-9
    )
    np.testing.assert_allclose(
        model.coriolis_forces(q, v) + model.gravity_forces(q), model.bias_forces(q, v), atol=1e-9
    )
    a = np.linspace(-1, 1, model.nv)
    np.testing.assert_allclose(
        model.mass_matrix(q) @ a + model.bias_forces(q, v),
        model.inverse_dynamics(q, v, a),
        atol=1e-9,
    )


@pytest.mark.parametrize("robot", HUMANOIDS)
def test_mixed_dynamics_equations_hold(robot, request, random_state, rng):
    """M_mixed d(nu)/dt + h_mixed = T^T tau, checked against Pinocchio's body-frame EoM."""
    model: WholeBodyModel = request.getfixturevalue(robot)
    q, v = random_state(model)
    tau_joints = rng.normal(size=model.ndof)
    a = model.forward_dynamics(q, v, tau_joints)
    nu_dot = model.acceleration_to_mixed(q, v, a)
    lhs = model.mass_matrix(q, representation="mixed") @ nu_dot + model.bias_forces(
        q, v, representation="mixed"
    )
    # T^T S^T tau = S^T tau because T is the identity on the joint block.
    np.testing.assert_allclose(lhs, model.generalized_torques(tau_joints), atol=1e-8)
    # Kinetic energy is representation independent: 1/2 nu^T M_mixed nu = 1/2 v^T M v.
    nu = model.velocity_to_mixed(q, v)
    energy_mixed = 0.5 * nu @ model.mass_matrix(q, representation="mixed") @ nu
    assert energy_mixed == pytest.approx(model.kinetic_energy(q, v), rel=1e-12)


@pytest.mark.parametrize("robot", HUMANOIDS)
def test_floating_base_inverse_dynamics_seed_eq_2_3(robot, request, random_state, rng):
    """Eq. (2.3): the base acceleration it returns is what FD gives for the torques it returns."""
    model: WholeBodyModel = request.getfixturevalue(robot)
    q, v = random_state(model)
    ddq = rng.normal(size=model.ndof)
    wrench = {FRAMES[robot]["left_hand"]: np.array([1.0, -2.0, 3.0, 0.1, 0.2, -0.1])}
    base_acc, torques = model.floating_base_inverse_dynamics(q, v, ddq, external_wrenches=wrench)
    a = model.forward_dynamics(q, v, torques, external_wrenches=wrench)
    np.testing.assert_allclose(a, np.concatenate([base_acc, ddq]), atol=1e-8)


@pytest.mark.parametrize("robot", HUMANOIDS)
def test_external_wrench_enters_as_jacobian_transpose(robot, request, random_state, rng):
    """ID with a wrench f on a frame = ID without it - J_mixed^T f (J w.r.t. v, mixed frame)."""
    model: WholeBodyModel = request.getfixturevalue(robot)
    hand = FRAMES[robot]["right_hand"]
    q, v = random_state(model)
    a = rng.normal(size=model.nv)
    f = rng.normal(size=6)
    J = pin.computeFrameJacobian(
        model.model, model.model.createData(), q, model.frame_id(hand), pin.LOCAL_WORLD_ALIGNED
    )
    np.testing.assert_allclose(
        model.inverse_dynamics(q, v, a, external_wrenches={hand: f}),
        model.inverse_dynamics(q, v, a) - J.T @ f,
        atol=1e-9,
    )


def _integrate_rk4(model: WholeBodyModel, q, v, dt: float, steps: int):
    """Classical RK4 on the configuration manifold with zero joint torques."""
    zero = np.zeros(model.ndof)

    def f(q, v):
        return v, model.forward_dynamics(q, v, zero)

    for _ in range(steps):
        k1q, k1v = f(q, v)
        k2q, k2v = f(pin.integrate(model.model, q, 0.5 * dt * k1q), v + 0.5 * dt * k1v)
        k3q, k3v = f(pin.integrate(model.model, q, 0.5 * dt * k2q), v + 0.5 * dt * k2v)
        k4q, k4v = f(pin.integrate(model.model, q, dt * k3q), v + dt * k3v)
        q = pin.integrate(model.model, q, dt / 6 * (k1q + 2 * k2q + 2 * k3q + k4q))
        v = v + dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
    return q, v


@pytest.mark.slow
@pytest.mark.parametrize("robot", HUMANOIDS)
def test_energy_and_momentum_conserved_in_zero_gravity(robot, random_state):
    from wbm_description import load_robot

    config = load_robot(robot)
    model = WholeBodyModel.from_config(config)
    model.model.gravity.linear = np.zeros(3)
    q, v = random_state(model)
    v *= 0.5
    energy0 = model.kinetic_energy(q, v)
    momentum0 = model.centroidal_momentum(q, v)
    com0 = model.com_position(q)
    dt, steps = 1e-3, 300
    q1, v1 = _integrate_rk4(model, q, v, dt, steps)
    # RK4 at 1 ms: local error O(dt^5); over 0.3 s the drift stays far below 1e-6 relative.
    assert model.kinetic_energy(q1, v1) == pytest.approx(energy0, rel=1e-6)
    # Linear momentum is exactly conserved without external forces; angular momentum about the
    # CoM too. Tolerance: integration error, same order as the energy's.
    np.testing.assert_allclose(model.centroidal_momentum(q1, v1), momentum0, atol=1e-6)
    # The CoM moves with the constant linear momentum: c(t) = c0 + p/m t.
    expected_com = com0 + momentum0[:3] / model.total_mass * dt * steps
    np.testing.assert_allclose(model.com_position(q1), expected_com, atol=1e-8)


@pytest.mark.slow
def test_energy_conserved_with_gravity(panda: WholeBodyModel, rng):
    q = panda.initial_configuration()
    v = rng.normal(size=panda.nv)
    energy0 = panda.kinetic_energy(q, v) + panda.potential_energy(q)
    q1, v1 = _integrate_rk4(panda, q, v, 1e-3, 500)
    energy1 = panda.kinetic_energy(q1, v1) + panda.potential_energy(q1)
    # No friction is applied by forward_dynamics: total energy is conserved up to RK4 error.
    assert energy1 == pytest.approx(energy0, rel=1e-6)


@pytest.mark.parametrize("robot", HUMANOIDS)
def test_contact_forward_dynamics_holds_the_feet(robot, request, random_state, rng):
    model: WholeBodyModel = request.getfixturevalue(robot)
    q, v = random_state(model)
    soles = feet(robot)
    result = model.contact_forward_dynamics(q, v, rng.normal(size=model.ndof), soles)
    # Without correction the constrained frames' accelerations are zero (rigid constraint),
    # up to the conditioning of J M^-1 J^T: 1e-8 m/s^2 on accelerations of order 10.
    np.testing.assert_allclose(result.contact_acceleration, 0.0, atol=1e-8)
    # Independent check: Pinocchio's acceleration propagation with the computed acceleration.
    data = model.model.createData()
    pin.forwardKinematics(model.model, data, q, v, result.acceleration)
    for foot in soles:
        acc = pin.getFrameClassicalAcceleration(
            model.model, data, model.frame_id(foot), pin.LOCAL_WORLD_ALIGNED
        )
        np.testing.assert_allclose(acc.vector, 0.0, atol=1e-8)


@pytest.mark.parametrize("robot", HUMANOIDS)
def test_contact_forces_balance_gravity_standing_still(robot, request):
    model: WholeBodyModel = request.getfixturevalue(robot)
    q = model.initial_configuration()
    v = np.zeros(model.nv)
    soles = feet(robot)
    torques, static_wrenches = model.static_contact_torques(q, soles)
    result = model.contact_forward_dynamics(q, v, torques, soles)
    # The static torques hold the robot: no acceleration, and the feet carry m g.
    np.testing.assert_allclose(result.acceleration, 0.0, atol=1e-9)
    total = sum(result.contact_wrenches.values())
    weight = model.total_mass * 9.81
    np.testing.assert_allclose(total[:3], [0.0, 0.0, weight], atol=1e-8)
    for foot in soles:
        np.testing.assert_allclose(result.contact_wrenches[foot], static_wrenches[foot], atol=1e-8)
    # The moment of the contact wrenches about the CoM vanishes: their CoP is under the CoM.
    com = model.com_position(q)
    moment = np.zeros(3)
    for foot, wrench in result.contact_wrenches.items():
        r = model.frame_placement(q, foot).translation - com
        moment += wrench[3:] + np.cross(r, wrench[:3])
    np.testing.assert_allclose(moment, 0.0, atol=1e-8)


@pytest.mark.parametrize("robot", HUMANOIDS)
def test_pose_correction_pulls_contacts_back(robot, request):
    """Seed 000 eq. (2.7): with kp, kd the contact acceleration is -kd J v - kp e."""
    model: WholeBodyModel = request.getfixturevalue(robot)
    left, _ = soles = feet(robot)
    q = model.initial_configuration()
    v = np.zeros(model.nv)
    reference = model.frame_placement(q, left)
    shifted = pin.SE3(reference.rotation, reference.translation + np.array([0.0, 0.0, 0.01]))
    torques, _ = model.static_contact_torques(q, soles)
    result = model.contact_forward_dynamics(
        q,
        v,
        torques,
        soles,
        reference_placements={left: shifted},
        kp=100.0,
        kd=20.0,
    )
    # e = p - p_ref = (0, 0, -0.01) so a_des = -kp e = (0, 0, +1) m/s^2 on the left sole.
    np.testing.assert_allclose(result.contact_acceleration[:6], [0, 0, 1.0, 0, 0, 0], atol=1e-8)
    np.testing.assert_allclose(result.contact_acceleration[6:], 0.0, atol=1e-8)


def test_payload_changes_the_dynamics():
    from wbm_description import load_robot

    config = load_robot("panda")
    with_payload = WholeBodyModel.from_config(config)
    import dataclasses

    bare = WholeBodyModel.from_config(dataclasses.replace(config, payloads=()))
    assert with_payload.total_mass == pytest.approx(bare.total_mass + 0.5, abs=1e-12)
    q = bare.initial_configuration()
    # The payload's gravity torque: g_payload = -J_p^T (m g) at the payload's CoM.
    hand = bare.frame_placement(q, "panda_hand")
    com_world = hand.act(np.array([0.0, 0.0, 0.1]))
    data = bare.model.createData()
    pin.framesForwardKinematics(bare.model, data, q)
    hand_id = bare.frame_id("panda_hand")
    J = pin.computeFrameJacobian(bare.model, data, q, hand_id, pin.LOCAL_WORLD_ALIGNED)
    lever = com_world - hand.translation
    J_point = J[:3] - pin.skew(lever) @ J[3:]
    expected = bare.gravity_forces(q) - J_point.T @ np.array([0.0, 0.0, -9.81 * 0.5])
    np.testing.assert_allclose(with_payload.gravity_forces(q), expected, atol=1e-9)


def test_friction_opposes_motion(planar_arm: WholeBodyModel):
    # Config: viscous [0.1, 0.2], Coulomb 0.5 and 0.3.
    np.testing.assert_allclose(
        planar_arm.friction_torques([2.0, -1.0]), [-(0.2 + 0.5), -(-0.2 - 0.3)], atol=1e-15
    )
    np.testing.assert_array_equal(planar_arm.friction_torques([0.0, 0.0]), [0.0, 0.0])


@pytest.mark.parametrize("robot", HUMANOIDS)
def test_potential_energy_is_weight_times_com_height(robot, request):
    model: WholeBodyModel = request.getfixturevalue(robot)
    q = model.initial_configuration()
    assert model.potential_energy(q) == pytest.approx(
        model.total_mass * 9.81 * model.com_position(q)[2], rel=1e-12
    )


@pytest.mark.parametrize("robot", HUMANOIDS)
def test_contact_forward_dynamics_matches_pinocchio_constraint_dynamics(robot, request, rng):
    """A second algorithm: Pinocchio's proximal constraintDynamics with exact 6D contacts.

    At zero velocity the classical (ours) and spatial (Pinocchio's) contact accelerations
    coincide, so both solve the same KKT system; mu = 0 makes Pinocchio's solve exact.
    """
    from wbm_description.benchmark_model import rigid_contact_models

    model: WholeBodyModel = request.getfixturevalue(robot)
    soles = feet(robot)
    q = model.initial_configuration()
    q[7:] += rng.uniform(-0.05, 0.05, model.ndof)
    v = np.zeros(model.nv)
    tau = rng.normal(size=model.ndof)
    contacts, datas = rigid_contact_models(model, soles)
    data = model.model.createData()
    pin.initConstraintDynamics(model.model, data, contacts, datas)
    expected = pin.constraintDynamics(
        model.model,
        data,
        q,
        v,
        model.generalized_torques(tau),
        contacts,
        datas,
        pin.ProximalSettings(1e-12, 0.0, 1),
    )
    result = model.contact_forward_dynamics(q, v, tau, soles)
    # Both are direct solves of the same system: agreement to round-off of accelerations ~10.
    np.testing.assert_allclose(result.acceleration, expected, atol=1e-8)
    np.testing.assert_allclose(
        np.concatenate([result.contact_wrenches[f] for f in soles]), data.lambda_c, atol=1e-7
    )
