"""Sensor noise: one wrapper around any engine's readings, seeded, with the configured spread."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from wbm_description.conventions import rotation_from_quaternion_xyzw
from wbm_dynamics.backends import SimulatorBackend
from wbm_dynamics.noise import NoiseSettings, SensorNoise
from wbm_dynamics.simulator import Simulator


def test_noise_is_seeded_and_has_the_configured_spread(icub):
    noise = NoiseSettings(joint_position=1e-3, imu_angular_velocity=0.01, ft_force=0.5)
    sim = Simulator(icub)
    exact = sim.readings()
    first = SensorNoise(noise, seed=7)
    second = SensorNoise(noise, seed=7)
    samples = [first.apply(sim.readings()) for _ in range(400)]
    repeat = [second.apply(sim.readings()) for _ in range(400)]
    for a, b in zip(samples, repeat, strict=True):
        np.testing.assert_array_equal(a.joint_positions, b.joint_positions)
        np.testing.assert_array_equal(a.wrenches["left_foot"], b.wrenches["left_foot"])
    truth = icub.joint_positions(sim.q)
    errors = np.array([s.joint_positions - truth for s in samples]).ravel()
    # 11600 samples: the sample std is within 3 % of sigma with overwhelming probability.
    np.testing.assert_allclose(errors.std(), 1e-3, rtol=0.03)
    np.testing.assert_allclose(errors.mean(), 0.0, atol=1e-4)
    gyros = np.array([s.imu.angular_velocity for s in samples]).ravel()
    np.testing.assert_allclose(gyros.std(), 0.01, rtol=0.1)
    # 2400 force samples (2 sensors x 3 axes x 400): the std within 10 % (7 standard errors);
    # the torques, without noise, are exact.
    forces = np.array(
        [s.wrenches[n][:3] - exact.wrenches[n][:3] for s in samples for n in exact.wrenches]
    ).ravel()
    np.testing.assert_allclose(forces.std(), 0.5, rtol=0.1)
    for s in samples:
        for name, wrench in exact.wrenches.items():
            np.testing.assert_array_equal(s.wrenches[name][3:], wrench[3:])
    # Off by default: the readings themselves.
    assert SensorNoise(NoiseSettings()).apply(exact) is exact
    np.testing.assert_array_equal(exact.joint_positions, truth)


def test_orientation_noise_is_a_small_random_rotation(icub):
    """The IMU orientation is rotated by exp(w), w ~ N(0, sigma^2 I_3) in IMU axes: the squared
    angle between noisy and exact orientation has mean 3 sigma^2 (a chi-square with 3 degrees of
    freedom, times sigma^2)."""
    sigma = 0.01
    noise = SensorNoise(NoiseSettings(imu_orientation=sigma), seed=3)
    exact = Simulator(icub).readings()
    rotation = rotation_from_quaternion_xyzw(exact.imu.orientation_xyzw)
    angles = []
    for _ in range(2000):
        noisy = noise.apply(exact).imu
        relative = rotation.T @ rotation_from_quaternion_xyzw(noisy.orientation_xyzw)
        angles.append(np.linalg.norm(pin.log3(relative)))
        np.testing.assert_allclose(np.linalg.norm(noisy.orientation_xyzw), 1.0, atol=1e-12)
    # 2000 samples of sigma^2 chi-square(3): the mean's relative standard error is
    # sqrt(6 / 2000) / 3 = 1.8 %; 8 % is 4.4 of them.
    np.testing.assert_allclose(np.mean(np.square(angles)), 3 * sigma**2, rtol=0.08)


def test_the_engine_backend_applies_the_noise_and_restarts_it_on_reset(icub):
    noise = NoiseSettings(joint_position=1e-3, joint_effort=0.1)
    noisy = SimulatorBackend(icub, noise=SensorNoise(noise, seed=11))
    clean = SimulatorBackend(icub)
    first = noisy.read()
    deviation = first.joint_positions - clean.read().joint_positions
    assert 0.0 < np.abs(deviation).max() < 6e-3  # 6 sigma
    assert noisy.read().joint_positions.tolist() != first.joint_positions.tolist()  # drawn anew
    noisy.reset()
    np.testing.assert_array_equal(noisy.read().joint_positions, first.joint_positions)  # seeded
