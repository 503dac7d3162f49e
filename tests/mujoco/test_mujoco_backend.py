"""The MuJoCo backend: the same robot contract as the simulator backend."""

from __future__ import annotations

import numpy as np
import pytest

from wbm_description.exceptions import ConfigError, InputError
from wbm_description.robot_io import JointCommand
from wbm_dynamics.backends.backend import RobotBackend
from wbm_dynamics.backends.simulator_backend import SimulatorBackend
from wbm_dynamics.mujoco.backend import MujocoBackend
from wbm_dynamics.mujoco.scenarios import standing_command
from wbm_dynamics.settings import Box, NoiseSettings, SimulatorSettings


def test_describes_the_robot_as_the_simulator_backend_does(icub):
    settings = SimulatorSettings(dt=0.002, ground_friction=0.6)
    mujoco_backend = MujocoBackend(icub, settings)
    assert isinstance(mujoco_backend, RobotBackend) and mujoco_backend.steppable
    assert mujoco_backend.description == SimulatorBackend(icub, settings).description
    assert mujoco_backend.engine.model.opt.timestep == 0.002
    ground = mujoco_backend.engine.mujoco_robot.ground_geom
    assert mujoco_backend.engine.model.geom_friction[ground, 0] == 0.6


def test_advance_write_read_reset(icub):
    backend = MujocoBackend(icub, SimulatorSettings())
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


def test_sensor_noise_follows_the_simulator_settings(icub):
    noise = NoiseSettings(joint_position=1e-3, ft_force=0.5)
    noisy = MujocoBackend(icub, SimulatorSettings(noise=noise, seed=7))
    clean = MujocoBackend(icub, SimulatorSettings())
    for backend in (noisy, clean):
        backend.write(JointCommand(position=icub.initial_posture))
        backend.advance(0.01)
    deviation = noisy.read().joint_positions - clean.read().joint_positions
    assert 0.0 < np.abs(deviation).max() < 6e-3  # 6 sigma
    noisy.reset()
    first = noisy.read().joint_positions
    noisy.reset()
    np.testing.assert_array_equal(noisy.read().joint_positions, first)  # seeded


def test_refuses_what_it_cannot_simulate(icub):
    boxes = (Box("step", (1.0, 0.0, 0.05), (0.5, 0.5, 0.1)),)
    with pytest.raises(ConfigError, match="boxes"):
        MujocoBackend(icub, SimulatorSettings(boxes=boxes))
