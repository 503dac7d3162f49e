"""Simulated sensors against closed forms, finite differences and a second model."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from wbm_description.robot_io import JointCommand
from wbm_dynamics.settings import SimulatorSettings
from wbm_dynamics.simulator import Simulator


def airborne(model, settings=None, v=None):
    sim = Simulator(model, settings or SimulatorSettings())
    q = model.initial_configuration()
    q[2] += 10.0
    sim.reset(q, v)
    return sim


def test_free_fall_reads_zero_acceleration_and_zero_wrenches(icub):
    """In free fall every body accelerates at g: no proper acceleration, nothing transmitted."""
    sim = airborne(icub)
    sim.step(100)
    readings = sim.readings()
    # Everything is exact but round-off (forces of ~1e-13 N from O(10) N m gravity torques).
    np.testing.assert_allclose(readings.imu.linear_acceleration, 0.0, atol=1e-9)
    for wrench in readings.wrenches.values():
        np.testing.assert_allclose(wrench, 0.0, atol=1e-9)


def test_imu_reports_the_frame_motion(icub_free, rng):
    v = rng.normal(0.0, 0.5, icub_free.nv)
    sim = airborne(icub_free, v=v)
    sim.step(20)
    readings = sim.readings()
    truth = sim.ground_truth()
    placement = icub_free.frame_placement(truth.q, "imu_frame")
    x, y, z, w = readings.imu.orientation_xyzw
    rotation = pin.Quaternion(w, x, y, z).toRotationMatrix()
    np.testing.assert_allclose(rotation, placement.rotation, atol=1e-12)
    gyro = icub_free.frame_velocity(truth.q, truth.v, "imu_frame", representation="body")[3:]
    np.testing.assert_allclose(readings.imu.angular_velocity, gyro, atol=1e-12)


def foot_wrench_mismatch(model, dt: float) -> tuple[float, float]:
    """Left ankle reading vs the finite-difference rate of the foot's momentum, after 5 ms of a
    random swing in zero gravity (no contact: the sensor alone moves the foot).

    Returns (largest force mismatch [N], norm of the expected force [N]).
    """
    rng = np.random.default_rng(11)
    v = np.zeros(model.nv)
    v[6:] = rng.normal(0.0, 0.5, model.ndof)
    sim = airborne(model, SimulatorSettings(dt=dt, integrator="rk4"), v=v)
    sim.set_command(JointCommand(effort=rng.normal(0.0, 2.0, model.ndof)))
    sensor = next(s for s in sim.ft_sensors if s.name == "left_foot")
    data = model.model.createData()

    def foot_momentum(q, v):
        pin.forwardKinematics(model.model, data, q, v)
        local = sensor.child_inertia * data.v[sensor.joint]
        return data.oMi[sensor.joint].act(local)  # world axes, about the world origin

    sim.step(round(5e-3 / dt))
    q0, v0 = sim.q, sim.v
    sim.step(1)
    rate = (foot_momentum(sim.q, sim.v) - foot_momentum(q0, v0)) * (1.0 / dt)
    # Parent on foot = rate of the foot's momentum; in sensor axes at the sensor it is minus the
    # reading (child on parent).
    expected = -model.frame_placement(q0, "l_foot_ft_sensor").actInv(rate).vector
    reading = sim.readings().wrenches["left_foot"]
    return float(np.abs(reading - expected).max()), float(np.linalg.norm(expected[:3]))


def test_foot_wrench_is_the_rate_of_momentum_of_the_foot(icub_free):
    """Dynamic F/T check against an independent reference (finite differences of momentum)."""
    coarse, _ = foot_wrench_mismatch(icub_free, 1e-4)
    fine, force = foot_wrench_mismatch(icub_free, 1e-5)
    assert force > 1.0  # a real test: the foot swings, several newtons flow through the sensor
    # The reading holds the state at the start of the step, the difference the mean over the
    # step: an O(dt) mismatch (measured 1.6e-2 N at 1e-4 s, 1.6e-3 N at 1e-5 s, for ~7 N).
    # A sign, frame or mass error would be O(1) N and would not shrink with dt.
    assert fine < 3e-3
    assert coarse / fine > 5.0
