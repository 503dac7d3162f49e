"""The whole-body QP: physics of its solution, a second solver, limits and infeasibility."""

import numpy as np
import pinocchio as pin
import pytest
import qpsolvers

from wbm_control.contacts import ContactSet
from wbm_control.exceptions import NoSolutionFound
from wbm_control.qp import DenseQPSolver
from wbm_control.whole_body_qp import (
    AccelerationTask,
    ContactConstraint,
    build_whole_body_qp,
    solve_whole_body_qp,
)

LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
MU = 0.5


def double_support_qp(
    icub, *, v_scale=0.0, torque_limits=None, com_acceleration=(0, 0, 0), min_normal_force=10.0
):
    rng = np.random.default_rng(4)
    model = icub.model
    data = model.createData()
    q = icub.initial_configuration()
    v = v_scale * rng.normal(size=icub.nv)
    contacts_set = ContactSet(icub.config.soles)
    pin.computeJointJacobians(model, data, q)
    pin.framesForwardKinematics(model, data, q)
    contacts = []
    for sole in icub.config.soles:
        fid = icub.frame_id(sole.frame)
        contacts_set.activate(sole.name, data.oMf[fid])
    pin.forwardKinematics(model, data, q, v, np.zeros(icub.nv))
    for contact in contacts_set.active():
        fid = icub.frame_id(contact.sole.frame)
        J = pin.computeFrameJacobian(model, data, q, fid, LWA)
        drift = pin.getFrameClassicalAcceleration(model, data, fid, LWA).vector
        pin.forwardKinematics(model, data, q, v, np.zeros(icub.nv))
        contacts.append(
            ContactConstraint(contact.sole.name, J, drift, -10 * J @ v, contact.cone(MU))
        )
    pin.centerOfMass(model, data, q, v, np.zeros(icub.nv))
    com_drift = data.acom[0].copy()
    J_com = pin.jacobianCenterOfMass(model, data, q)
    S = np.hstack([np.zeros((icub.ndof, 6)), np.eye(icub.ndof)])
    tasks = [
        AccelerationTask("com", J_com, com_drift, np.array(com_acceleration, float), 100.0),
        AccelerationTask("posture", S, np.zeros(icub.ndof), -v[6:], 1e-3),
    ]
    M = pin.crba(model, data, q)
    M = np.triu(M) + np.triu(M, 1).T
    h = pin.nonLinearEffects(model, data, q, v)
    limits = icub.torque_limits if torque_limits is None else torque_limits
    qp = build_whole_body_qp(M, h, contacts, tasks, limits, min_normal_force=min_normal_force)
    return qp, M, h, contacts, J_com, com_drift


@pytest.mark.parametrize("v_scale", [0.0, 0.3])
def test_solution_satisfies_the_equations_of_motion_and_the_cones(icub, v_scale):
    qp, M, h, contacts, _, _ = double_support_qp(icub, v_scale=v_scale)
    solution = solve_whole_body_qp(qp, DenseQPSolver(eps_abs=1e-9))
    a, tau = solution.acceleration, solution.torques
    generalized = np.concatenate([np.zeros(6), tau])
    for contact in contacts:
        generalized += contact.jacobian.T @ solution.wrenches[contact.name]
    # M a + h = S^T tau + sum J^T f: floating-base rows are an equality of the QP (solver
    # tolerance 1e-9 on rows scaled ~1e2), joint rows hold by construction of tau (rounding).
    np.testing.assert_allclose(M @ a + h, generalized, atol=1e-6)
    for contact in contacts:
        # Contacts held: J a + drift = desired (equality), wrenches in their cones.
        np.testing.assert_allclose(
            contact.jacobian @ a + contact.drift, contact.desired, atol=1e-7
        )
        assert np.all(contact.cone @ solution.wrenches[contact.name] <= 1e-6)
        assert solution.wrenches[contact.name][2] >= 10.0 - 1e-6
    assert np.all(np.abs(tau) <= icub.torque_limits + 1e-6)


def test_static_stance_carries_the_weight_and_matches_a_second_solver(icub):
    qp, _, _, _, J_com, com_drift = double_support_qp(icub)
    solution = solve_whole_body_qp(qp, DenseQPSolver(eps_abs=1e-9))
    total = sum(w[:3] for w in solution.wrenches.values())
    com_acceleration = J_com @ solution.acceleration + com_drift
    # Newton for the whole robot: the contact forces are m (cdd - g), to solver tolerance.
    np.testing.assert_allclose(
        total, icub.total_mass * (com_acceleration + [0, 0, 9.81]), atol=1e-6
    )
    # At rest with zero task accelerations the robot stays (almost) still: the wrench
    # regularization (1e-5 / N^2) trades a 1e-3 m/s^2 sag against ~1 N less force.
    assert np.max(np.abs(com_acceleration)) < 1e-3
    np.testing.assert_allclose(total, [0, 0, icub.total_mass * 9.81], atol=0.05)
    P = qp.problem
    reference = qpsolvers.solve_qp(
        P.H, P.g, np.vstack([P.C, -P.C]), np.concatenate([P.u, -P.l]), P.A, P.b,
        solver="quadprog",
    )  # fmt: skip
    # quadprog (dual active set, exact to ~1e-10 here) vs proxsuite at eps_abs 1e-9.
    np.testing.assert_allclose(solution.x, reference, atol=1e-6)


def test_com_acceleration_task_is_met_when_feasible(icub):
    qp, _, _, _, J_com, com_drift = double_support_qp(icub, com_acceleration=(0.3, -0.2, 0.1))
    solution = solve_whole_body_qp(qp, DenseQPSolver(eps_abs=1e-9))
    # Weight 100 on the CoM vs 1e-5 / N^2 on the wrenches: asking for a_z costs
    # ~2 1e-5 m g m = 0.16 in the wrench term against 200 (a_z - a_z*): a_z falls short by
    # ~1e-3-2e-3 m/s^2 (the horizontal rows barely touch the normal forces): tolerance 3e-3.
    np.testing.assert_allclose(
        J_com @ solution.acceleration + com_drift, [0.3, -0.2, 0.1], atol=3e-3
    )
    # Newton: the contact forces give m (cdd - g).
    total = sum(w[:3] for w in solution.wrenches.values())
    cdd = J_com @ solution.acceleration + com_drift
    np.testing.assert_allclose(total, icub.total_mass * (cdd + [0, 0, 9.81]), atol=1e-6)


def test_binding_torque_limit_is_respected_and_tiny_limits_are_infeasible(icub):
    qp, _, _, _, _, _ = double_support_qp(icub)
    free = solve_whole_body_qp(qp, DenseQPSolver(eps_abs=1e-9)).torques
    joint = int(np.argmax(np.abs(free)))
    limits = icub.torque_limits.copy()
    limits[joint] = 0.8 * abs(free[joint])
    qp_limited, *_ = double_support_qp(icub, torque_limits=limits)
    limited = solve_whole_body_qp(qp_limited, DenseQPSolver(eps_abs=1e-9)).torques
    np.testing.assert_allclose(abs(limited[joint]), limits[joint], rtol=1e-6)
    assert np.all(np.abs(limited) <= limits + 1e-6)
    # Pressing each sole with 2 kN (7 times the weight) while no joint may exert more than
    # 0.01 N m: no acceleration of a 29-joint body can do it with feet held.
    qp_tiny, *_ = double_support_qp(
        icub, torque_limits=np.full(icub.ndof, 0.01), min_normal_force=2000.0
    )
    with pytest.raises(NoSolutionFound, match="whole_body_qp"):
        solve_whole_body_qp(qp_tiny)
