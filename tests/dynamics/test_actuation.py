"""Joint servos, saturation, friction and joint stops."""

from __future__ import annotations

import numpy as np
import pytest

from wbm_description.exceptions import InputError
from wbm_description.robot_io import JointCommand
from wbm_dynamics.actuation import JointServos
from wbm_dynamics.settings import SimulatorSettings
from wbm_dynamics.simulator import Simulator

NAN = np.nan


def servos() -> JointServos:
    return JointServos(
        kp=np.array([100.0, 100.0, 100.0, 100.0]),
        kd=np.array([2.0, 2.0, 2.0, 2.0]),
        torque_limits=np.array([10.0, 10.0, 10.0, 10.0]),
        viscous_friction=np.array([0.1, 0.1, 0.1, 0.1]),
        coulomb_friction=np.array([0.5, 0.5, 0.5, 0.5]),
    )


def test_servo_law_per_commanded_term():
    s = servos()
    q = np.array([0.1, 0.1, 0.1, 0.1])
    dq = np.array([1.0, 1.0, 1.0, 1.0])
    # joint 0: position only (damps to dq_ref = 0); 1: velocity only; 2: effort only; 3: none.
    s.set_command(
        JointCommand(
            position=np.array([0.12, NAN, NAN, NAN]),
            velocity=np.array([NAN, 1.5, NAN, NAN]),
            effort=np.array([NAN, NAN, 3.0, NAN]),
        )
    )
    torques = s.torques(q, dq)
    expected = [100.0 * 0.02 + 2.0 * (0.0 - 1.0), 2.0 * (1.5 - 1.0), 3.0, 0.0]
    np.testing.assert_allclose(torques.actuator, expected, atol=1e-12)
    # Friction on every joint: -(k_v dq + k_c sign(dq)).
    np.testing.assert_allclose(torques.friction, -(0.1 * dq + 0.5), atol=1e-12)
    np.testing.assert_array_equal(s.commanded, [True, True, True, False])
    # Damping treated implicitly: the servo kd where a position/velocity is tracked, + viscous.
    np.testing.assert_allclose(torques.damping, [2.1, 2.1, 0.1, 0.1])


def test_servo_saturates_at_the_torque_limit():
    s = servos()
    s.set_command(JointCommand(effort=np.array([50.0, -50.0, 9.0, NAN])))
    torques = s.torques(np.zeros(4), np.zeros(4))
    np.testing.assert_allclose(torques.actuator, [10.0, -10.0, 9.0, 0.0])
    s.set_command(JointCommand(position=np.array([1.0, NAN, NAN, NAN])))
    torques = s.torques(np.zeros(4), np.zeros(4))
    assert torques.actuator[0] == 10.0
    # A saturated servo no longer damps (its torque is constant): no implicit damping there.
    assert torques.servo_damping[0] == 0.0


def test_bad_commands_are_rejected_and_the_previous_one_kept():
    s = servos()
    s.set_command(JointCommand(effort=np.array([1.0, 2.0, 3.0, 4.0])))
    with pytest.raises(InputError, match="command.position"):
        s.set_command(JointCommand(position=np.zeros(3)))
    with pytest.raises(InputError, match="finite"):
        s.set_command(JointCommand(effort=np.array([1.0, np.inf, 0.0, 0.0])))
    np.testing.assert_allclose(s.command().effort, [1.0, 2.0, 3.0, 4.0])


def test_effort_command_holds_a_fixed_base_arm_and_is_measured(panda):
    sim = Simulator(panda, SimulatorSettings())
    q0 = panda.initial_configuration()
    gravity = panda.gravity_forces(q0)
    sim.set_command(JointCommand(effort=gravity))
    sim.step(500)
    # Torque control with the exact gravity torques: the arm does not move (round-off only).
    np.testing.assert_allclose(sim.q, q0, atol=1e-9)
    readings = sim.readings()
    np.testing.assert_allclose(readings.joint_efforts, gravity, atol=1e-12)
    np.testing.assert_allclose(readings.joint_positions, q0, atol=1e-9)


def test_position_command_converges_to_the_gravity_sag(panda):
    sim = Simulator(panda, SimulatorSettings())
    q0 = panda.initial_configuration()
    target = q0 + np.array([0.2, -0.1, 0.1, 0.2, -0.2, 0.1, 0.3])
    sim.set_command(JointCommand(position=target))
    sim.step(6000)
    q = sim.q
    # Steady state of a PD under gravity: kp (q_ref - q) = g(q) (no other torque at rest).
    # Measured residual after 6 s: 2.4e-6 N m (slow, overdamped modes); tolerance 1e-4 N m.
    kp = np.array([200.0, 200.0, 200.0, 200.0, 50.0, 50.0, 50.0])
    np.testing.assert_allclose(kp * (target - q), panda.gravity_forces(q), atol=1e-4)
    assert np.abs(sim.v).max() < 1e-4


def drive_knee_into_its_stop(model, dt):
    """iCub in the air without gravity, the left knee torqued (2 N m) into its upper stop.

    Returns the simulator and the largest centroidal momentum norm seen [kg m/s] (the exact
    value is 0: the robot starts at rest and only internal torques act).
    """
    sim = Simulator(model, SimulatorSettings(dt=dt), contact_points=[])
    q = model.initial_configuration()
    q[2] += 10.0
    sim.reset(q)
    knee = model.joint_index("l_knee")
    effort = np.full(model.ndof, np.nan)
    effort[knee] = 2.0
    sim.set_command(JointCommand(effort=effort))
    upper = model.joint_position_limits[1][knee]
    largest = 0.0
    steps = round(0.01 / dt)
    for _ in range(30):
        sim.step(steps)
        assert model.joint_positions(sim.q)[knee] <= upper + 1e-12
        largest = max(largest, float(np.linalg.norm(model.centroidal_momentum(sim.q, sim.v))))
    assert model.joint_positions(sim.q)[knee] == upper  # reached at ~0.09 s and held
    assert abs(model.joint_velocities(sim.v)[knee]) < 1e-9
    return sim, largest


def test_joint_stop_holds_the_limit_and_conserves_momentum(icub_free):
    # The stop is an internal joint impulse: it conserves momentum exactly, so what remains is
    # semi-implicit Euler's O(dt) momentum error (the knee reaches ~15 rad/s): measured
    # 0.155 kg m/s at 1 ms, halving with dt. A stop that leaked momentum would not converge.
    _, error_1ms = drive_knee_into_its_stop(icub_free, 1e-3)
    _, error_half = drive_knee_into_its_stop(icub_free, 5e-4)
    assert error_1ms < 0.2
    assert 1.8 < error_1ms / error_half < 2.2


def test_viscous_friction_dissipates(icub_free, icub):
    """With friction (the config's 0.05 N m s/rad) kinetic energy decays monotonically."""
    sim = Simulator(icub, SimulatorSettings(), contact_points=[])
    q = icub.initial_configuration()
    q[2] += 10.0
    v = np.zeros(icub.nv)
    v[6:] = 0.3
    sim.reset(q, v)
    energies = []
    for _ in range(20):
        sim.step(10)
        # Energy in the falling frame: remove the CoM's motion (gravity acts on it only).
        energies.append(
            icub.kinetic_energy(sim.q, sim.v)
            - 0.5 * icub.total_mass * np.sum(icub.com_velocity(sim.q, sim.v) ** 2)
        )
    assert np.all(np.diff(energies) < 0.0)
