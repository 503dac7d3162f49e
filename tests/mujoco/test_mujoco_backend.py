"""The MuJoCo backend: the same robot contract as the simulator backend, its own settings."""

from __future__ import annotations

import numpy as np
import pytest

from wbm_description.exceptions import ConfigError, InputError
from wbm_description.robot_io import JointCommand
from wbm_dynamics.backends.engine_backend import EngineBackend
from wbm_dynamics.backends.simulator_backend import SimulatorBackend
from wbm_dynamics.mujoco.backend import MujocoBackend
from wbm_dynamics.mujoco.scenarios import standing_command
from wbm_dynamics.mujoco.settings import MujocoSettings
from wbm_dynamics.noise import NoiseSettings, SensorNoise
from wbm_dynamics.settings import Box, SimulatorSettings


def test_describes_the_robot_as_the_simulator_backend_does(icub):
    settings = MujocoSettings(timestep=0.002, friction=0.6)
    mujoco_backend = MujocoBackend(icub, settings)
    assert isinstance(mujoco_backend, EngineBackend) and mujoco_backend.steppable
    assert MujocoBackend.settings_class is MujocoSettings
    simulator = SimulatorBackend(icub, SimulatorSettings(dt=0.002))
    assert mujoco_backend.description == simulator.description
    assert mujoco_backend.engine.model.opt.timestep == 0.002
    ground = mujoco_backend.engine.mujoco_robot.ground_geom
    assert mujoco_backend.engine.model.geom_friction[ground, 0] == 0.6


def test_advance_write_read_reset(icub):
    backend = MujocoBackend(icub, MujocoSettings())
    backend.write(standing_command(icub))
    backend.advance(0.1)
    assert backend.time == pytest.approx(0.1)
    readings = backend.read()
    assert readings.time == pytest.approx(0.1)
    assert set(readings.wrenches) == set(backend.description.ft_sensor_frames)
    base = backend.base_state()
    np.testing.assert_allclose(base.configuration, backend.ground_truth().q[:7])
    backend.apply_wrench("chest", np.array([5.0, 0, 0, 0, 0, 0]), 0.01)
    backend.advance(0.02)
    backend.reset()
    assert backend.time == 0.0
    np.testing.assert_allclose(backend.ground_truth().q, icub.initial_configuration())
    with pytest.raises(InputError, match="duration"):
        backend.advance(-1.0)


def test_both_engines_publish_equally_noisy_readings(icub):
    """The one noise wrapper, the same seed: the noise added to MuJoCo's readings is the noise
    added to our simulator's, draw for draw (to round-off: (x + n) - x = n within 1e-12)."""
    noise = NoiseSettings(joint_position=1e-3, imu_angular_velocity=0.01, ft_force=0.5)
    deviations = {}
    for backend_class in (MujocoBackend, SimulatorBackend):
        noisy = backend_class(icub, noise=SensorNoise(noise, seed=7))
        clean = backend_class(icub)
        for backend in (noisy, clean):
            backend.write(JointCommand(position=icub.initial_posture))
            backend.advance(0.01)
        a, b = noisy.read(), clean.read()
        deviations[backend_class] = (
            a.joint_positions - b.joint_positions,
            a.imu.angular_velocity - b.imu.angular_velocity,
            a.wrenches["left_foot"] - b.wrenches["left_foot"],
        )
        assert 0.0 < np.abs(deviations[backend_class][0]).max() < 6e-3  # 6 sigma
        noisy.reset()
        first = noisy.read().joint_positions
        noisy.reset()
        np.testing.assert_array_equal(noisy.read().joint_positions, first)  # seeded
    for mujoco, ours in zip(deviations[MujocoBackend], deviations[SimulatorBackend], strict=True):
        np.testing.assert_allclose(mujoco, ours, atol=1e-12)


def test_refuses_what_it_cannot_simulate(icub):
    # Its own settings only: the simulator's (environment boxes) are refused by class...
    boxes = {"step": Box("step", (1.0, 0.0, 0.05), (0.5, 0.5, 0.1))}
    with pytest.raises(ConfigError, match="MujocoSettings"):
        MujocoBackend(icub, SimulatorSettings(boxes=boxes))
    # ... and its section has no boxes (MuJoCo has the ground plane only).
    with pytest.raises(ConfigError) as error:
        MujocoSettings.from_mapping({"boxes": {"step": {}}}, source="robot_interface.yaml")
    assert error.value.key == "boxes"
