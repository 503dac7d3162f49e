"""The MuJoCo engine's API: servo law, pushes, reset and input errors."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from wbm_description.exceptions import InputError, NameNotFound
from wbm_description.robot_io import JointCommand
from wbm_dynamics.actuation import JointServos
from wbm_dynamics.exceptions import SimulationDiverged
from wbm_dynamics.mujoco import MujocoEngine, MujocoSettings


@pytest.fixture(scope="module")
def engine(icub):
    return MujocoEngine(icub)


def _flying(model):
    """iCub 1 m up in its initial posture: no contact for the next ~0.4 s."""
    q = model.initial_configuration()
    q[2] += 1.0
    return q


def test_servo_law_is_our_simulators(icub, engine, rng):
    """Actuator torques = JointServos (our simulator's servo law), saturation included."""
    order = [icub.config.joints.index(n) for n in icub.joint_names]
    servos = JointServos(
        icub.config.servo_kp[order],
        icub.config.servo_kd[order],
        icub.torque_limits,
        icub.viscous_friction,
        icub.coulomb_friction,
    )
    n = icub.ndof
    position = icub.initial_posture + rng.normal(scale=0.1, size=n)
    velocity = rng.normal(scale=0.5, size=n)
    effort = rng.normal(scale=2.0, size=n)
    position[20:] = np.nan  # effort only (or nothing) beyond joint 20
    velocity[10:] = np.nan  # joints 10..19: position (with dq_ref = 0) and effort
    effort[25:] = np.nan  # joints 25..: not commanded at all
    effort[21] = 10.0 * icub.torque_limits[21]  # saturated
    command = JointCommand(position, velocity, effort)
    v = np.zeros(icub.nv)
    v[6:] = rng.normal(scale=0.3, size=n)
    engine.reset(_flying(icub), v)
    engine.set_command(command)
    servos.set_command(command)
    q_before = engine.readings().joint_positions
    dq_before = engine.readings().joint_velocities
    engine.step(1)
    expected = servos.torques(q_before, dq_before).actuator
    measured = engine.readings().joint_efforts
    np.testing.assert_allclose(measured, expected, rtol=0, atol=1e-9)
    assert measured[21] == pytest.approx(icub.torque_limits[21])
    np.testing.assert_array_equal(measured[25:], 0.0)
    np.testing.assert_allclose(engine.ground_truth().joint_torques, measured)


def test_push_changes_momentum_by_its_impulse(icub):
    """In free flight dP/dt = m g + F and dL_G/dt = tau + (p - c) x F (Pinocchio's momentum).

    RK4: the implicit integrators treat joint damping implicitly, (M + dt D) dv = ..., which
    does not conserve momentum exactly when a force acts on a light link (iCub's hand: ~5 %).
    """
    engine = MujocoEngine(icub, MujocoSettings(integrator="rk4"))
    engine.reset(_flying(icub))
    force = np.array([30.0, -20.0, 10.0])
    torque = np.array([1.0, 2.0, -1.5])
    duration = 0.05
    start = icub.centroidal_momentum(engine.q, engine.v)
    expected_angular = np.zeros(3)
    engine.apply_wrench("l_hand", np.concatenate([force, torque]), duration)
    for _ in range(int(round(duration / engine.dt))):
        lever = icub.frame_placement(engine.q, "l_hand").translation - icub.com_position(engine.q)
        expected_angular += (torque + np.cross(lever, force)) * engine.dt
        engine.step(1)
    end = icub.centroidal_momentum(engine.q, engine.v)
    gravity = icub.total_mass * np.array([0.0, 0.0, -9.81])
    # Linear momentum: the push and gravity are constant over each step, but the momentum
    # A_G(q) v is not a linear invariant of the integrated state, so RK4 keeps it only to its
    # truncation error on the fast hand motion (measured 2e-5 N s on a 1.5 N s change): 1e-3.
    np.testing.assert_allclose(end[:3] - start[:3], (gravity + force) * duration, atol=1e-3)
    # Angular momentum about the CoM: the lever arm moves during each 1 ms step (first order in
    # dt): 1 % of the change (~0.1 N m s).
    change = end[3:] - start[3:]
    np.testing.assert_allclose(change, expected_angular, atol=0.01 * np.linalg.norm(change))
    # The push has ended: from now on only gravity changes the momentum.
    engine.step(10)
    after = icub.centroidal_momentum(engine.q, engine.v)
    np.testing.assert_allclose(after[:3] - end[:3], gravity * 10 * engine.dt, atol=1e-3)


def test_reset_restores_the_initial_state(icub, engine):
    engine.reset()
    engine.set_command(JointCommand(effort=np.ones(icub.ndof)))
    engine.step(50)
    assert engine.time == pytest.approx(0.05)
    engine.reset()
    assert engine.time == 0.0
    np.testing.assert_allclose(engine.q, icub.initial_configuration(), atol=1e-15)
    np.testing.assert_array_equal(engine.v, np.zeros(icub.nv))
    engine.step(1)  # not commanded after a reset: no actuator torque
    np.testing.assert_array_equal(engine.readings().joint_efforts, 0.0)


def test_readings_use_wbm_conventions(icub, engine):
    q = _flying(icub)
    q[3:7] = pin.Quaternion(pin.rpy.rpyToMatrix(0.1, -0.2, 0.3)).coeffs()
    v = np.linspace(-0.5, 0.5, icub.nv)
    engine.reset(q, v)
    readings = engine.readings()
    np.testing.assert_allclose(readings.joint_positions, icub.joint_positions(q), atol=1e-15)
    np.testing.assert_allclose(readings.joint_velocities, icub.joint_velocities(v), atol=1e-12)
    imu = icub.config.imu_frame
    expected_rotation = icub.frame_placement(q, imu).rotation
    x, y, z, w = readings.imu.orientation_xyzw
    np.testing.assert_allclose(pin.Quaternion(w, x, y, z).matrix(), expected_rotation, atol=1e-12)
    np.testing.assert_allclose(
        readings.imu.angular_velocity,
        icub.frame_velocity(q, v, imu, representation="body")[3:],
        atol=1e-12,
    )
    np.testing.assert_allclose(engine.q, q, atol=1e-15)
    np.testing.assert_allclose(engine.v, v, atol=1e-12)


def test_bad_inputs_are_named(icub, engine):
    with pytest.raises(NameNotFound, match="no_such_link"):
        engine.apply_wrench("no_such_link", np.zeros(6), 0.1)
    with pytest.raises(InputError, match="duration"):
        engine.apply_wrench("l_hand", np.zeros(6), 0.0)
    with pytest.raises(InputError, match="wrench"):
        engine.apply_wrench("l_hand", np.zeros(5), 0.1)
    with pytest.raises(InputError, match="command.position"):
        engine.set_command(JointCommand(position=np.zeros(3)))
    with pytest.raises(InputError, match="'n'"):
        engine.step(-1)
    with pytest.raises(InputError, match="'q'"):
        engine.reset(np.zeros(icub.nq))


def test_divergence_stops_the_engine_until_reset(icub):
    engine = MujocoEngine(icub, max_speed=100.0)
    v = np.zeros(icub.nv)
    v[6 + icub.joint_index("l_elbow")] = 500.0  # above max_speed
    engine.reset(_flying(icub), v)
    with pytest.raises(SimulationDiverged, match="max_speed|exceeds"):
        engine.step(1)
    assert engine.diverged is not None
    with pytest.raises(SimulationDiverged):
        engine.step(1)
    engine.reset()
    assert engine.diverged is None
    engine.step(1)
