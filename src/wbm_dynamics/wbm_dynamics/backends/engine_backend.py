"""The one adapter from an engine (:class:`~wbm_dynamics.engine.Engine`) to a robot backend.

:class:`EngineBackend` makes any engine (our simulator, MuJoCo) a steppable backend of the
robot-interface node: ``advance`` steps the engine, ``read`` returns its readings through the
sensor noise wrapper (:class:`~wbm_dynamics.noise.SensorNoise`, when one is given), and reset,
pushes, ground truth and the base state are the engine's. An engine becomes a backend with a
subclass that names its settings class and builds it from them (:meth:`EngineBackend.
build_engine`), as :class:`~wbm_dynamics.backends.simulator_backend.SimulatorBackend` and
:class:`~wbm_dynamics.mujoco.backend.MujocoBackend` do.
"""

from __future__ import annotations

import abc
import math
from typing import ClassVar

import numpy as np

from wbm_description.exceptions import InputError
from wbm_description.robot_io import JointCommand, RobotReadings
from wbm_description.settings import Settings
from wbm_description.whole_body_model import WholeBodyModel
from wbm_dynamics.backends.backend import BackendDescription, BaseState, RobotBackend
from wbm_dynamics.engine import Engine, GroundTruth
from wbm_dynamics.noise import SensorNoise


class EngineBackend(RobotBackend):
    """A steppable backend around an engine.

    Args:
        model: The whole-body model.
        settings: The engine's settings (an instance of :attr:`settings_class`); None for the
            defaults.
        noise: Sensor noise added to every reading; None for exact readings.

    Attributes:
        engine: The engine (closed with the backend).

    Raises:
        ConfigError: Settings of another class, or what the engine refuses.
    """

    steppable: ClassVar[bool] = True

    def __init__(
        self,
        model: WholeBodyModel,
        settings: Settings | None = None,
        *,
        noise: SensorNoise | None = None,
    ):
        super().__init__(model)
        self.engine = self.build_engine(model, self.checked_settings(settings))
        self.noise = noise
        self._description = BackendDescription.of(model, period=self.engine.dt)

    @classmethod
    @abc.abstractmethod
    def build_engine(cls, model: WholeBodyModel, settings: Settings) -> Engine:
        """The engine of ``model`` with ``settings`` (an instance of :attr:`settings_class`)."""

    @property
    def description(self) -> BackendDescription:
        """Names of the simulated robot; the period is the engine's time step."""
        return self._description

    @property
    def time(self) -> float:
        """Simulated time [s]."""
        return self.engine.time

    def read(self) -> RobotReadings:
        """The engine's readings, with the sensor noise if any."""
        readings = self.engine.readings()
        return readings if self.noise is None else self.noise.apply(readings)

    def write(self, command: JointCommand) -> None:
        """Hold a joint command (zero-order hold)."""
        self.engine.set_command(command)

    def advance(self, duration: float) -> None:
        """Simulate ``duration`` seconds (rounded to whole time steps).

        Raises:
            InputError: A negative or non-finite duration.
            SimulationDiverged: The simulation diverged (see its reason).
        """
        if not (isinstance(duration, int | float) and math.isfinite(duration) and duration >= 0):
            raise InputError("duration", "a finite duration >= 0 [s]", duration)
        self.engine.step(round(duration / self.engine.dt))

    def ground_truth(self) -> GroundTruth:
        """The engine's ground truth."""
        return self.engine.ground_truth()

    def base_state(self) -> BaseState | None:
        """The true base pose (x, y, z, qx, qy, qz, qw) and twist (base frame); None if fixed."""
        if not self.model.floating_base:
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

    def close(self) -> None:
        """Close the engine."""
        self.engine.close()


__all__ = ["EngineBackend"]
