"""The whole-body QP's fallback chain (wbm_control.qp_fallback) on iCub standing.

References are independent of the QP: Pinocchio's ABA (free fall with zero torques), RNEA (the
equations of motion a solution must satisfy) and the generalized gravity (what a static hold's
torques and contact wrenches must balance). Tolerances: the QP levels are solved to
proxsuite's eps_abs = 1e-6 (fallback settings), so equations hold to about 1e-5 N m after the
mass matrix's scaling; we allow 1e-3 N m (0.01 % of the 30 N m gravity torques at the hips).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest
from control_helpers import CONTROLLER_YAML, readings_from_state

from wbm_control.controller import WholeBodyController
from wbm_control.controller_settings import ControllerSettings, FallbackSettings
from wbm_control.exceptions import NoSolutionFound
from wbm_control.qp_fallback import (
    BALANCE_ONLY,
    IK_CLIPPED,
    RELAXED,
    STATIC_HOLD,
    QpFallback,
    free_fall_point,
    with_contact_slack,
)
from wbm_control.robot_kinematics import RobotKinematics
from wbm_control.whole_body_qp import AccelerationTask

TOLERANCE = 1e-3  # [N m] and [N], see the module docstring


def make_controller(icub, **torque):
    settings = ControllerSettings.from_yaml(CONTROLLER_YAML)
    settings = replace(settings, mode="torque", torque=replace(settings.torque, **torque))
    return WholeBodyController(icub, settings)


@pytest.fixture()
def state(icub):
    q = icub.initial_configuration()
    rng = np.random.default_rng(3)
    v = 0.1 * rng.standard_normal(icub.nv)
    _, wrenches = icub.static_contact_torques(q, ["l_sole", "r_sole"])
    readings = readings_from_state(
        icub, q, v, {"left_foot": wrenches["l_sole"], "right_foot": wrenches["r_sole"]}
    )
    return q, v, readings


def problem_parts(controller, q, v):
    """What the torque mode builds at (q, v): kinematics, tasks, constraints, held soles."""
    mode, tasks, contacts = controller.mode, controller.tasks, controller.contacts
    kinematics = RobotKinematics(mode.model.model, mode.data, q, v, tasks.frame_ids)
    balance = tasks.com.balance(kinematics, controller.time, contacts)
    held = contacts.active()
    acceleration_tasks = mode.acceleration_tasks(
        kinematics, balance, tasks, held, controller.time, controller.status
    )
    constraints = [tasks.contact.compute_constraint(kinematics, c) for c in held]
    return kinematics, acceleration_tasks, constraints, held


def assert_equations_of_motion(icub, q, v, solution, wrench_frames):
    """RNEA(q, v, a) = S^T tau + sum_i J_i^T f_i (the QP's torques and wrenches)."""
    model, data = icub.model, icub.model.createData()
    expected = pin.rnea(model, data, q, v, solution.acceleration).copy()
    pin.computeJointJacobians(model, data, q)
    pin.updateFramePlacements(model, data)
    generalized = np.concatenate([np.zeros(6), solution.torques])
    for name, frame in wrench_frames.items():
        J = pin.getFrameJacobian(model, data, icub.frame_id(frame), pin.LOCAL_WORLD_ALIGNED)
        generalized += J.T @ solution.wrenches[name]
    np.testing.assert_allclose(generalized, expected, atol=TOLERANCE)


def test_slackened_qp_is_feasible_at_the_free_fall_point(icub, state):
    q, v, readings = state
    controller = make_controller(icub)
    controller.step(readings)
    kinematics, acceleration_tasks, constraints, held = problem_parts(controller, q, v)
    settings = controller.settings
    fallback = QpFallback(icub, settings.fallback)
    relaxed = fallback.relaxed_constraints(constraints, held, settings.friction_coefficient)
    slack = fallback.relaxed_qp(kinematics, acceleration_tasks, relaxed, settings)
    qp = controller.mode.build(kinematics, acceleration_tasks, constraints, settings.torque)
    # The slack is added to the contact rows only (6 per sole), the rest of the layout kept.
    plain = with_contact_slack(qp, 6, 1e4).problem
    np.testing.assert_array_equal(plain.A[:, : qp.problem.H.shape[0]], qp.problem.A)
    np.testing.assert_array_equal(plain.A[6:, qp.problem.H.shape[0] :], np.eye(12))
    x = free_fall_point(slack, kinematics.mass_matrix, kinematics.bias_forces)
    # Zero torques, zero wrenches: the robot falls freely, a = ABA(q, v, 0).
    np.testing.assert_allclose(
        x[: qp.nv],
        pin.aba(icub.model, icub.model.createData(), q, v, np.zeros(icub.nv)),
        atol=1e-8,
    )
    equality, inequality = slack.problem.residuals(x)
    assert equality < 1e-8 and inequality == 0.0
    assert slack.problem.dimensions == (
        qp.problem.dimensions[0] + 12,
        18,
        qp.problem.dimensions[2],
    )


def test_an_infeasible_qp_is_relaxed_and_the_robot_keeps_controlling(icub, state):
    """A minimum normal force of 3 kN per sole (iCub weighs 330 N) cannot be had within the
    torque limits with the soles held: the QP fails, the relaxed level (no minimum force)
    solves, and the step's command is a normal one (no safe hold)."""
    q, v, readings = state
    controller = make_controller(icub, min_normal_force=3000.0, friction_compensation=False)
    command = controller.step(readings)
    status = controller.status
    assert not status.safe
    assert status.fallback == RELAXED
    assert "whole_body_qp: no solution found" in status.fallback_reason
    fallback = controller.mode.fallback
    assert fallback.counts[RELAXED] == 1
    solution = fallback.last_result.solution
    limits = icub.torque_limits
    assert np.all(np.abs(command.effort) <= limits + 1e-9)
    np.testing.assert_allclose(command.effort, solution.torques, atol=1e-9)
    estimate = status.estimate  # the QP is built at the controller's estimate
    assert_equations_of_motion(
        icub, estimate.q, estimate.v, solution, {"left_foot": "l_sole", "right_foot": "r_sole"}
    )
    # The soles carry the robot: net vertical force near the weight (its dynamics aside).
    total = sum(w[2] for w in solution.wrenches.values())
    assert 0.5 * icub.total_mass * 9.81 < total < 2.0 * icub.total_mass * 9.81


def test_a_broken_hand_task_leaves_the_balance_only_level(icub, state):
    q, v, readings = state
    controller = make_controller(icub)
    controller.step(readings)
    kinematics, acceleration_tasks, constraints, held = problem_parts(controller, q, v)
    broken = [
        AccelerationTask(t.name, t.jacobian, t.drift, np.full(6, np.nan), t.weight)
        if t.name == "left_hand"
        else t
        for t in acceleration_tasks
    ]
    fallback = QpFallback(icub, controller.settings.fallback)
    result = fallback.solve(
        kinematics, broken, constraints, held, controller.tasks, controller.settings
    )
    assert result.level == BALANCE_ONLY
    assert np.all(np.isfinite(result.solution.torques))
    assert np.all(np.abs(result.solution.torques) <= icub.torque_limits + 1e-6)
    assert_equations_of_motion(
        icub, q, v, result.solution, {"left_foot": "l_sole", "right_foot": "r_sole"}
    )


def test_when_no_qp_solves_the_static_hold_carries_the_weight_on_the_soles(icub, state):
    q, v, readings = state
    controller = make_controller(icub)
    controller.step(readings)
    kinematics, acceleration_tasks, constraints, held = problem_parts(controller, q, v)
    # One proxsuite iteration cannot solve either QP level.
    fallback = QpFallback(icub, FallbackSettings(max_iterations=1))
    result = fallback.solve(
        kinematics, acceleration_tasks, constraints, held, controller.tasks, controller.settings
    )
    assert result.level == STATIC_HOLD and fallback.counts[STATIC_HOLD] == 1
    command = result.command
    np.testing.assert_allclose(command.position, q[7:])
    np.testing.assert_allclose(command.velocity, 0.0)
    # g(q) - S^T tau must be what the soles' wrenches produce: J_c^T f for some f whose
    # vertical forces add up to the weight.
    model, data = icub.model, icub.model.createData()
    gravity = pin.computeGeneralizedGravity(model, data, q).copy()
    pin.computeJointJacobians(model, data, q)
    pin.updateFramePlacements(model, data)
    Jc = np.vstack(
        [
            pin.getFrameJacobian(model, data, icub.frame_id(f), pin.LOCAL_WORLD_ALIGNED)
            for f in ("l_sole", "r_sole")
        ]
    )
    rest = gravity - np.concatenate([np.zeros(6), command.effort])
    f, *_ = np.linalg.lstsq(Jc.T, rest, rcond=None)
    np.testing.assert_allclose(Jc.T @ f, rest, atol=TOLERANCE)
    assert f[2] + f[8] == pytest.approx(icub.total_mass * 9.81, abs=TOLERANCE)
    assert f[2] > 0 and f[8] > 0


def test_ik_mode_restarts_within_the_limits_when_its_qp_fails(icub):
    """An estimate 0.3 rad beyond the elbow's limit: pink's configuration limit asks the joint
    back faster than its velocity limit allows, the IK QP is infeasible; the fallback restarts
    from the configuration clipped into the limits (dq = 0 is feasible there) and solves with
    quadprog (proxqp, with its default settings, stops short on that feasible problem)."""
    settings = ControllerSettings.from_yaml(CONTROLLER_YAML).replace(mode="ik")
    controller = WholeBodyController(icub, settings)
    q = icub.initial_configuration()
    elbow = icub.joint_index("l_elbow")
    upper = icub.model.upperPositionLimit[7 + elbow]
    q[7 + elbow] = upper + 0.3
    _, wrenches = icub.static_contact_torques(q, ["l_sole", "r_sole"])
    readings = readings_from_state(
        icub,
        q,
        np.zeros(icub.nv),
        {"left_foot": wrenches["l_sole"], "right_foot": wrenches["r_sole"]},
    )
    command = controller.step(readings)
    with pytest.raises(NoSolutionFound):  # the premise: the plain IK step fails at q
        controller.mode.ik.step(q, settings.control_period)
    status = controller.status
    assert not status.safe
    assert status.fallback == IK_CLIPPED and "ik: no solution found" in status.fallback_reason
    lower, upper_limits = icub.joint_position_limits
    assert np.all(command.position >= lower - 1e-9) and np.all(
        command.position <= upper_limits + 1e-9
    )
    # One step from the clipped configuration: the elbow at most v_max dt from its limit.
    assert command.position[elbow] == pytest.approx(
        upper, abs=settings.ik.velocity_limit * 0.002 + 1e-6
    )
