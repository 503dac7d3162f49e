"""The IK mode's motion feed-forward: inverse dynamics on the held soles, planned accelerations.

References: the equations of motion assembled from ``crba`` and ``nonLinearEffects`` (not the
``rnea`` the code uses), the quasi-static feed-forward of ``contact_feedforward`` at rest, and
finite differences of frame and CoM positions along a trajectory for the planned accelerations.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from wbm_control.contact_feedforward import contact_consistent_torques
from wbm_control.contacts import ContactSet
from wbm_control.exceptions import InputError
from wbm_control.motion_feedforward import (
    angular_momentum_compensation,
    motion_torques,
    net_contact_wrench,
)
from wbm_control.planned_acceleration import AccelerationTarget, planned_acceleration
from wbm_control.wrench_distribution import static_net_wrench

MU = 0.5
LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


def _held(model, q, soles):
    contacts = ContactSet(model.config.soles)
    for sole in model.config.soles:
        if sole.name in soles:
            contacts.activate(sole.name, model.frame_placement(q, sole.frame))
    return contacts.active()


def _moving_state(model, seed):
    rng = np.random.default_rng(seed)
    q = model.initial_configuration()
    v = 0.3 * rng.standard_normal(model.nv)
    a = 2.0 * rng.standard_normal(model.nv)
    return q, v, a


def test_at_rest_it_is_the_quasi_static_feedforward(icub):
    """v = a = 0: the net wrench is (-m g, 0) and tau the contact-consistent gravity torques.

    Same distribution QP on the same net wrench: equal to 1e-9 N m (rounding of the two ways
    to the gravity torques, rnea against computeGeneralizedGravity, and of the CoM).
    """
    q = icub.initial_configuration()
    contacts = _held(icub, q, {"left_foot", "right_foot"})
    data = icub.model.createData()
    zero = np.zeros(icub.nv)
    wrench, _ = net_contact_wrench(icub.model, data, q, zero, zero)
    np.testing.assert_allclose(
        wrench, static_net_wrench(icub.total_mass, icub.config.gravity), atol=1e-9
    )
    tau, _ = motion_torques(icub, data, q, zero, zero, contacts, mu=MU)
    reference = contact_consistent_torques(
        icub, icub.model.createData(), q, contacts, wrench, mu=MU
    )
    np.testing.assert_allclose(tau, reference, atol=1e-9)


@pytest.mark.parametrize(("soles", "seed"), [({"left_foot", "right_foot"}, 0), ({"left_foot"}, 1)])
def test_moving_it_satisfies_the_equations_of_motion_with_the_contact_wrenches(icub, soles, seed):
    """M a + h = S^T tau + sum_i J_i^T f_i, every row (base rows: the wrenches carry the motion).

    M from crba, h from nonLinearEffects (the code uses rnea). Tolerance 1e-7 N / N m on
    torques of ~100 N m and wrenches of ~300 N: the distribution QP holds its equality to the
    solver's 1e-9 class, rounding adds 1e-12.
    """
    q, v, a = _moving_state(icub, seed)
    contacts = _held(icub, q, soles)
    data = icub.model.createData()
    tau, wrenches = motion_torques(icub, data, q, v, a, contacts, mu=MU)
    reference = icub.model.createData()
    M = pin.crba(icub.model, reference, q)
    M = np.triu(M) + np.triu(M, 1).T
    h = pin.nonLinearEffects(icub.model, reference, q, v)
    pin.computeJointJacobians(icub.model, reference, q)
    pin.updateFramePlacements(icub.model, reference)
    generalized = np.concatenate([np.zeros(6), tau])
    for contact in contacts:
        J = pin.getFrameJacobian(icub.model, reference, icub.frame_id(contact.sole.frame), LWA)
        generalized += J.T @ wrenches[contact.sole.name]
    np.testing.assert_allclose(M @ a + h, generalized, atol=1e-7)
    # Their sum about the CoM is the centroidal momentum's rate minus gravity (Newton-Euler).
    expected, com = net_contact_wrench(icub.model, icub.model.createData(), q, v, a)
    total = np.zeros(6)
    for contact in contacts:
        wrench = wrenches[contact.sole.name]
        lever = contact.placement.translation - com
        total += np.concatenate([wrench[:3], wrench[3:] + np.cross(lever, wrench[:3])])
    np.testing.assert_allclose(total, expected, atol=1e-7)


def test_without_contacts_the_joint_torques_are_the_free_body_dynamics(icub):
    """No held sole: tau = rnea's joint rows; the base rows are then the wrench no one applies."""
    q, v, a = _moving_state(icub, 2)
    data = icub.model.createData()
    tau, wrenches = motion_torques(icub, data, q, v, a, [], mu=MU)
    assert wrenches == {}
    reference = pin.rnea(icub.model, icub.model.createData(), q, v, a)
    np.testing.assert_allclose(tau, reference[6:], atol=1e-12)


def test_a_lifted_sole_is_left_out_of_the_torques(icub):
    """tau with a lifted held sole = tau without it + J^T f of its (distributed) wrench."""
    q, v, a = _moving_state(icub, 3)
    contacts = _held(icub, q, {"left_foot", "right_foot"})
    data = icub.model.createData()
    tau, wrenches = motion_torques(icub, data, q, v, a, contacts, mu=MU)
    lifted, _ = motion_torques(icub, data, q, v, a, contacts, mu=MU, lifted=["right_foot"])
    pin.computeJointJacobians(icub.model, data, q)
    pin.updateFramePlacements(icub.model, data)
    J = pin.getFrameJacobian(icub.model, data, icub.frame_id("r_sole"), LWA)
    np.testing.assert_allclose(lifted, tau + J[:, 6:].T @ wrenches["right_foot"], atol=1e-9)


def test_bad_input_names_the_argument(icub):
    q = icub.initial_configuration()
    data = icub.model.createData()
    with pytest.raises(InputError, match=f"argument 'v': expected {icub.nv} finite values"):
        motion_torques(icub, data, q, np.zeros(3), np.zeros(icub.nv), [], mu=MU)
    with pytest.raises(InputError, match="argument 'a'"):
        motion_torques(icub, data, q, np.zeros(icub.nv), np.full(icub.nv, np.nan), [], mu=MU)


def _finite_difference_targets(model, q, v, a0, frames, h=1e-4):
    """Frame classical accelerations and the CoM's along q(t) = q (+) (v t + a0 t^2 / 2).

    Central second differences of positions and of the rotation (world angular velocity from
    log3 of successive rotations): truncation O(h^2) ~ 1e-8, rounding ~ eps / h^2 ~ 1e-8.
    """
    pm, data = model.model, model.model.createData()

    def placement(t, frame):
        pin.framesForwardKinematics(pm, data, pin.integrate(pm, q, v * t + 0.5 * a0 * t * t))
        return data.oMf[frame].copy()

    targets = []
    for frame in frames:
        before, now, after = placement(-h, frame), placement(0.0, frame), placement(h, frame)
        linear = (after.translation - 2 * now.translation + before.translation) / h**2
        omega_after = now.rotation @ pin.log3(now.rotation.T @ after.rotation) / h
        omega_before = before.rotation @ pin.log3(before.rotation.T @ now.rotation) / h
        angular = (omega_after - omega_before) / h
        targets.append(AccelerationTarget(frame, np.concatenate([linear, angular]), np.ones(6)))

    def com(t):
        return pin.centerOfMass(pm, data, pin.integrate(pm, q, v * t + 0.5 * a0 * t * t))

    return targets, (com(h) - 2 * com(0.0) + com(-h)) / h**2


def test_planned_acceleration_realizes_consistent_task_accelerations(icub):
    """Task accelerations of a known motion a0 (finite differences): the solution realizes them.

    Feet, a hand, the pelvis and the CoM of a random motion; the solved a gives each frame's
    classical acceleration (by Pinocchio at (q, v, a)) within 1e-5 of the finite differences
    (their error ~1e-7 here, the damping 1e-9 biases by less).
    """
    rng = np.random.default_rng(4)
    q = icub.configuration(
        pin.SE3(pin.rpy.rpyToMatrix(0.1, -0.2, 0.3), np.array([0.1, 0.2, 0.6])),
        icub.initial_posture + 0.05 * rng.standard_normal(icub.nv - 6),
    )
    v, a0 = 0.5 * rng.standard_normal(icub.nv), rng.standard_normal(icub.nv)
    frames = [icub.frame_id(f) for f in ("l_sole", "r_sole", "l_hand", "root_link")]
    targets, com_acceleration = _finite_difference_targets(icub, q, v, a0, frames)
    data = icub.model.createData()
    a = planned_acceleration(
        icub.model, data, q, v, targets, com_acceleration=com_acceleration, com_cost=1.0
    )
    pin.forwardKinematics(icub.model, data, q, v, a)
    pin.updateFramePlacements(icub.model, data)
    for target in targets:
        realized = pin.getFrameClassicalAcceleration(icub.model, data, target.frame_id, LWA)
        np.testing.assert_allclose(realized.vector, target.acceleration, atol=1e-5)
    pin.centerOfMass(icub.model, data, q, v, a)
    np.testing.assert_allclose(data.acom[0], com_acceleration, atol=1e-5)


def test_planned_acceleration_at_rest_with_held_feet_is_zero(icub):
    """Zero targets at v = 0: a = 0 exactly (the normal equations' right side is zero)."""
    q = icub.initial_configuration()
    frames = [
        AccelerationTarget(icub.frame_id(f), np.zeros(6), np.full(6, 10.0))
        for f in ("l_sole", "r_sole")
    ]
    a = planned_acceleration(
        icub.model,
        icub.model.createData(),
        q,
        np.zeros(icub.nv),
        frames,
        com_acceleration=np.zeros(3),
        com_cost=1.0,
        joint_cost=1e-3,
    )
    np.testing.assert_allclose(a, 0.0, atol=1e-12)


def test_angular_momentum_compensation_at_rest_is_zero(icub):
    """v = a = 0: no angular momentum rate, nothing to compensate (1e-9 m/s^2: rounding)."""
    q = icub.initial_configuration()
    zero = np.zeros(icub.nv)
    d = angular_momentum_compensation(icub.model, icub.model.createData(), q, zero, zero, 0.0)
    np.testing.assert_allclose(d, 0.0, atol=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_angular_momentum_compensation_puts_the_zmp_where_the_point_mass_has_it(icub, seed):
    """A moving state: with the net contact force changed by m d (the CoM acceleration changed
    by the compensation d, the moment about the CoM unchanged), the ZMP of the net contact
    wrench is the point mass's, c_xy - h F_xy / F_z with the original F: its horizontal
    moment about that point is zero (F_z unchanged). 1e-9 N m on wrenches of ~300 N (rounding).
    """
    q, v, a = _moving_state(icub, seed)
    ground = -0.02
    d = angular_momentum_compensation(icub.model, icub.model.createData(), q, v, a, ground)
    wrench, com = net_contact_wrench(icub.model, icub.model.createData(), q, v, a)
    force = wrench[:3]
    assert np.linalg.norm(wrench[3:5]) > 1.0  # the motion turns: a real compensation
    height = com[2] - ground
    point_mass_zmp = np.array([*(com[:2] - height * force[:2] / force[2]), ground])
    compensated = force + icub.total_mass * np.array([d[0], d[1], 0.0])
    moment = wrench[3:] + np.cross(com - point_mass_zmp, compensated)
    np.testing.assert_allclose(moment[:2], 0.0, atol=1e-9)
