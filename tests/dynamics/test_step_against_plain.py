"""The simulator's batched step against a plain per-point evaluation of the same step.

iCub dropped from 1 cm above its standing height, servos holding the initial posture, 1 ms
semi-implicit Euler steps, 250 steps (0.25 s: the fall, the touch-down and settling), once per
contact model. Before every step the test evaluates the step the plain way from the simulator's
state, one contact point at a time with Pinocchio objects and no batching or caching:

- each point's world position and velocity from ``data.oMi[joint]`` and ``data.v[joint]``;
- compliant contact: the gcontact law (seed 004 eqs 8.1-8.2) with its stick anchors, kept by
  the test, point by point; rigid contact: the forces the solver reports (the Coulomb-cone
  problem itself is checked in test_contact_models.py);
- the joint servos' law, friction and the implicit damping (armature dt d), written out;
- every point's force as a ``pin.Force`` at the point, moved into its joint's frame and summed,
  then ``pin.aba`` and ``pin.integrate``;

and after every other step the readings against the general path the fast one replaces
(``Simulator.ft_wrenches``: RNEA and the sensor's Newton-Euler balance;
:func:`~wbm_dynamics.sensors.imu_reading` at the plain step's state and acceleration: its own
kinematics passes).

Tolerance 1e-9 (absolute: m, rad, m/s, rad/s, N, N m, m/s^2) on one step from the same state:
the two evaluations do the same arithmetic in another order, so they differ by floating-point
rounding, ~1e-16 relative on values up to ~400 N and ~50 m/s^2 (measured worst, compliant /
rigid: contact forces 7e-12 / 0 N, q 1.3e-16 / 5.6e-17, v 1.3e-13 / 9.3e-15, F/T 2.3e-13 /
5.7e-14, IMU 8.5e-14 / 2.3e-14). A wrong term is orders of magnitude above it: one sole
corner's force off by 0.1 % in the joint wrenches moves v by 3.5e-3 m/s and the IMU by 7e-3
(measured).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from wbm_description.robot_io import JointCommand
from wbm_dynamics.sensors import imu_reading
from wbm_dynamics.settings import SimulatorSettings
from wbm_dynamics.simulator import Simulator

TOLERANCE = 1e-9
STEPS = 250
DROP = 0.01  # [m] above the standing height


def _plain_servo_torques(sim, command, q_joints, dq_joints):
    """Servo torque (saturated), friction and implicit damping per joint, written out."""
    servos = sim.servos
    servo = command.effort + servos.kp * (command.position - q_joints) - servos.kd * dq_joints
    actuator = np.clip(servo, -servos.torque_limits, servos.torque_limits)
    friction = -servos.viscous_friction * dq_joints - servos.coulomb_friction * np.sign(dq_joints)
    damping = np.where(actuator == servo, servos.kd, 0.0) + servos.viscous_friction
    return actuator, friction, damping


def _plain_compliant_forces(sim, anchors, positions, velocities):
    """The gcontact law with the ground alone, one point at a time (anchors updated in place)."""
    settings = sim.settings.compliant
    stiffness, damping = settings.stiffness, settings.damping
    kt, dt_ = settings.tangential_stiffness_value, settings.tangential_damping_value
    mu = sim.settings.ground_friction
    forces = np.zeros_like(positions)
    for i, (x, v) in enumerate(zip(positions, velocities, strict=True)):
        depth = -x[2]
        if depth <= 0.0:
            anchors[i] = None  # released
            continue
        root = np.sqrt(depth)
        normal = max(0.0, root * (stiffness * depth - damping * v[2]))
        u = np.zeros(2) if anchors[i] is None else x[:2] - anchors[i]
        spring = kt * np.linalg.norm(u) * root
        if spring > mu * normal:  # sliding: the anchor is dragged onto the friction cone
            u *= mu * normal / spring
        anchors[i] = x[:2] - u
        tangential = -root * (kt * u + dt_ * v[:2])
        magnitude = np.linalg.norm(tangential)
        if magnitude > mu * normal:
            tangential *= mu * normal / magnitude
        forces[i] = (tangential[0], tangential[1], normal)
    return forces


def _run(model, contact_model):
    """Step the simulator and the plain evaluation side by side; the worst deviations."""
    sim = Simulator(model, SimulatorSettings(contact_model=contact_model))
    q0 = model.initial_configuration()
    soles = [sole.frame for sole in model.config.soles]
    command = JointCommand(
        position=model.joint_positions(q0), effort=model.static_contact_torques(q0, soles)[0]
    )
    q0[2] += DROP
    sim.reset(q0)
    sim.set_command(command)
    plain_model = pin.Model(sim.model)
    plain_data = plain_model.createData()
    imu_data = plain_model.createData()
    points = sim.contact_points
    local = [
        model.model.frames[model.frame_id(spec.frame)].placement.act(np.array(spec.position))
        for spec in points.specs
    ]
    joints = [model.model.frames[model.frame_id(spec.frame)].parentJoint for spec in points.specs]
    anchors = [None] * points.size
    worst = dict.fromkeys(("forces", "q", "v", "ft", "imu"), 0.0)
    touched = 0
    for step in range(STEPS):
        q, v = sim.q, sim.v
        pin.forwardKinematics(plain_model, plain_data, q, v)
        positions = np.array(
            [plain_data.oMi[j].act(p) for j, p in zip(joints, local, strict=True)]
        )
        velocities = np.array(
            [
                plain_data.oMi[j].rotation
                @ (plain_data.v[j].linear + np.cross(plain_data.v[j].angular, p))
                for j, p in zip(joints, local, strict=True)
            ]
        )
        sim.step()
        reported = sim.contact_force_array()
        if contact_model == "compliant":
            forces = _plain_compliant_forces(sim, anchors, positions, velocities)
            worst["forces"] = max(worst["forces"], float(np.abs(forces - reported).max()))
        else:
            forces = reported
        touched += int(np.any(forces[:, 2] > 0.0))
        fext = [pin.Force.Zero() for _ in range(plain_model.njoints)]
        for j, x, force in zip(joints, positions, forces, strict=True):
            at_point = pin.SE3(np.eye(3), x).act(pin.Force(force, np.zeros(3)))
            fext[j] += plain_data.oMi[j].actInv(at_point)
        actuator, friction, damping = _plain_servo_torques(sim, command, q[7:], v[6:])
        plain_model.armature[6:] = sim.dt * damping
        tau = np.concatenate([np.zeros(6), actuator + friction])
        a = pin.aba(plain_model, plain_data, q, v, tau, fext)
        v_next = v + sim.dt * a
        q_next = pin.integrate(plain_model, q, v_next * sim.dt)
        worst["v"] = max(worst["v"], float(np.abs(v_next - sim.v).max()))
        worst["q"] = max(worst["q"], float(np.abs(q_next - sim.q).max()))
        if step % 2:
            readings = sim.readings()
            general = sim.ft_wrenches()  # the RNEA path
            for name, wrench in general.items():
                error = float(np.abs(readings.wrenches[name] - wrench).max())
                worst["ft"] = max(worst["ft"], error)
            imu = imu_reading(sim.model, imu_data, sim.imu_frame_id, sim.q, sim.v, q, v, a)
            for mine, theirs in zip(
                (
                    readings.imu.orientation_xyzw,
                    readings.imu.angular_velocity,
                    readings.imu.linear_acceleration,
                ),
                (imu.orientation_xyzw, imu.angular_velocity, imu.linear_acceleration),
                strict=True,
            ):
                worst["imu"] = max(worst["imu"], float(np.abs(mine - theirs).max()))
    return worst, touched


@pytest.fixture(scope="module")
def runs(icub_stiff):
    # The iCub config's joint friction (viscous and Coulomb) is part of the step.
    return {name: _run(icub_stiff, name) for name in ("compliant", "rigid")}


@pytest.mark.parametrize("contact_model", ["compliant", "rigid"])
def test_step_matches_the_plain_per_point_evaluation(runs, contact_model):
    worst, touched = runs[contact_model]
    # The run must exercise the contacts: the feet land within the first 50 steps.
    assert touched > STEPS - 60, f"{contact_model}: feet touched in only {touched} steps"
    for key, error in worst.items():
        assert error <= TOLERANCE, f"{contact_model} {key}: deviation {error:.3g} > {TOLERANCE:g}"
