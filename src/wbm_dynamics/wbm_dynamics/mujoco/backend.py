"""MuJoCo as a robot backend of the robot-interface node (:mod:`wbm_dynamics.backends`).

:class:`MujocoBackend` has the constructor signature the node uses for every backend,
``(model, settings)``, where the node passes its ``simulator`` settings section
(:class:`~wbm_dynamics.settings.SimulatorSettings`). The MuJoCo backend takes from it what both
engines share: the time step ``dt``, the ground friction ``ground_friction``, and the sensor
noise (``noise``, ``seed``, applied with our simulator's :class:`~wbm_dynamics.sensors.
SensorNoise` so that both backends publish equally noisy readings). The contact model, its
constants, the integrator and the environment boxes are our simulator's; MuJoCo uses its own
soft contacts and ``implicitfast`` (:mod:`wbm_dynamics.mujoco.settings`), and supports the ground
plane only. A :class:`~wbm_dynamics.mujoco.settings.MujocoSettings` may be passed instead to set
MuJoCo's own constants (noise off).
"""

from __future__ import annotations

import numpy as np

from wbm_description.exceptions import ConfigError, InputError
from wbm_description.robot_io import JointCommand, RobotReadings
from wbm_description.whole_body_model import WholeBodyModel
from wbm_dynamics.backends.backend import BackendDescription, BaseState, RobotBackend
from wbm_dynamics.mujoco.engine import MujocoEngine
from wbm_dynamics.mujoco.settings import MujocoSettings
from wbm_dynamics.sensors import SensorNoise
from wbm_dynamics.settings import NoiseSettings, SimulatorSettings
from wbm_dynamics.simulator import GroundTruth


def mujoco_settings_from_simulator(settings: SimulatorSettings) -> MujocoSettings:
    """MuJoCo settings sharing the simulator settings' time step and ground friction.

    Raises:
        ConfigError: The settings hold environment boxes (the MuJoCo backend has the ground
            plane only).
    """
    if settings.boxes:
        raise ConfigError(
            None,
            "simulator.boxes",
            "no environment boxes with the mujoco backend (ground plane only)",
            [box.name for box in settings.boxes],
        )
    return MujocoSettings(timestep=settings.dt, friction=settings.ground_friction)


class MujocoBackend(RobotBackend):
    """A steppable backend around a :class:`~wbm_dynamics.mujoco.engine.MujocoEngine`.

    Args:
        model: The whole-body model, built from a robot config.
        settings: The node's simulator settings (time step, ground friction and sensor noise
            are used, see the module docstring), MuJoCo settings, or None for the defaults.

    Raises:
        ConfigError: Settings MuJoCo cannot honour, or a model without robot config.
    """

    steppable = True

    def __init__(
        self,
        model: WholeBodyModel,
        settings: SimulatorSettings | MujocoSettings | None = None,
    ):
        noise, seed = NoiseSettings(), 0
        if isinstance(settings, SimulatorSettings):
            mujoco_settings = mujoco_settings_from_simulator(settings)
            noise, seed = settings.noise, settings.seed
        elif settings is None or isinstance(settings, MujocoSettings):
            mujoco_settings = settings
        else:
            raise ConfigError(
                None, "simulator", "SimulatorSettings or MujocoSettings", type(settings).__name__
            )
        self.engine = MujocoEngine(model, mujoco_settings)
        self.noise = SensorNoise(noise, seed) if noise.enabled else None
        config = model.config
        self._description = BackendDescription(
            joint_names=model.joint_names,
            ft_sensor_frames={s.name: s.frame for s in config.ft_sensors},
            imu_frame=config.imu_frame,
            base_frame=config.base_link if model.floating_base else None,
            period=self.engine.dt,
        )

    @property
    def description(self) -> BackendDescription:
        """Names and period of the simulated robot."""
        return self._description

    @property
    def time(self) -> float:
        """Simulated time [s]."""
        return self.engine.time

    def read(self) -> RobotReadings:
        """Sensor readings of the simulated robot (with the configured noise)."""
        readings = self.engine.readings()
        if self.noise is None:
            return readings
        positions, velocities, efforts = self.noise.joints(
            readings.joint_positions, readings.joint_velocities, readings.joint_efforts
        )
        return RobotReadings(
            readings.time,
            positions,
            velocities,
            efforts,
            self.noise.imu(readings.imu) if readings.imu is not None else None,
            {name: self.noise.wrench(w) for name, w in readings.wrenches.items()},
        )

    def write(self, command: JointCommand) -> None:
        """Hold a joint command (zero-order hold)."""
        self.engine.set_command(command)

    def advance(self, duration: float) -> None:
        """Simulate ``duration`` seconds (rounded to whole time steps).

        Raises:
            InputError: A negative or non-finite duration.
            SimulationDiverged: The simulation diverged (see its reason).
        """
        if not (isinstance(duration, int | float) and np.isfinite(duration) and duration >= 0):
            raise InputError("duration", "a finite duration >= 0 [s]", duration)
        self.engine.step(round(duration / self.engine.dt))

    def ground_truth(self) -> GroundTruth:
        """The engine's ground truth (per sole contact force and centre of pressure)."""
        return self.engine.ground_truth()

    def base_state(self) -> BaseState | None:
        """The true base pose (x, y, z, qx, qy, qz, qw) and twist in the base frame."""
        if not self.engine.robot.floating_base:
            return None
        return BaseState(self.engine.q[:7], self.engine.v[:6])

    def reset(self) -> None:
        """Back to time 0 and the initial configuration; commands, pushes and noise restarted."""
        self.engine.reset()
        if self.noise is not None:
            self.noise.reset()

    def apply_wrench(self, frame: str, wrench: np.ndarray, duration: float) -> None:
        """Push ``frame`` with (force, torque) at its origin, world axes, for ``duration``."""
        self.engine.apply_wrench(frame, wrench, duration)
