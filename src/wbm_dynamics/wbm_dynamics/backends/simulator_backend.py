"""The simulator (:mod:`wbm_dynamics.simulator`) as a robot backend."""

from __future__ import annotations

import numpy as np

from wbm_description.exceptions import InputError
from wbm_description.robot_io import JointCommand, RobotReadings
from wbm_description.whole_body_model import WholeBodyModel
from wbm_dynamics.backends.backend import BackendDescription, BaseState, RobotBackend
from wbm_dynamics.settings import SimulatorSettings
from wbm_dynamics.simulator import GroundTruth, Simulator


class SimulatorBackend(RobotBackend):
    """A steppable backend around a :class:`~wbm_dynamics.simulator.Simulator`.

    Args:
        model: The whole-body model.
        settings: Simulation settings.
    """

    steppable = True

    def __init__(self, model: WholeBodyModel, settings: SimulatorSettings):
        self.simulator = Simulator(model, settings)
        config = model.config
        self._description = BackendDescription(
            joint_names=model.joint_names,
            ft_sensor_frames={s.name: s.frame for s in config.ft_sensors} if config else {},
            imu_frame=config.imu_frame if config else None,
            base_frame=(config.base_link if config else None) if model.floating_base else None,
            period=settings.dt,
        )

    @property
    def description(self) -> BackendDescription:
        """Names and period of the simulated robot."""
        return self._description

    @property
    def time(self) -> float:
        """Simulated time [s]."""
        return self.simulator.time

    def read(self) -> RobotReadings:
        """Sensor readings of the simulated robot."""
        return self.simulator.readings()

    def write(self, command: JointCommand) -> None:
        """Hold a joint command (zero-order hold)."""
        self.simulator.set_command(command)

    def advance(self, duration: float) -> None:
        """Simulate ``duration`` seconds (rounded to whole time steps).

        Raises:
            SimulationDiverged: The simulation diverged (see its reason).
        """
        if not duration >= 0.0:
            raise InputError("duration", "a duration >= 0 [s]", duration)
        self.simulator.step(round(duration / self.simulator.dt))

    def ground_truth(self) -> GroundTruth:
        """The simulator's ground truth."""
        return self.simulator.ground_truth()

    def base_state(self) -> BaseState | None:
        """The true base pose and twist (None for a fixed base)."""
        sim = self.simulator
        if not sim.floating_base:
            return None
        q, v = sim.q, sim.v
        return BaseState(np.asarray(q[:7]), np.asarray(v[:6]))

    def posture_command(self) -> JointCommand:
        """Servo command holding the initial posture: position references plus feed-forward.

        The feed-forward is the static torque of standing on every sole of the robot config
        (minimum-norm contact wrenches), or the gravity torques for a robot without soles.
        """
        model = self.simulator.robot
        q0 = model.initial_configuration()
        soles = [sole.frame for sole in model.config.soles] if model.config else []
        if soles and model.floating_base:
            feed_forward, _ = model.static_contact_torques(q0, soles)
        else:
            feed_forward = model.gravity_forces(q0)[model.nv - model.ndof :]
        return JointCommand(position=model.joint_positions(q0).copy(), effort=feed_forward)

    def reset(self) -> None:
        """Back to time 0 and the initial configuration; commands and pushes cleared."""
        self.simulator.reset()

    def apply_wrench(self, frame: str, wrench: np.ndarray, duration: float) -> None:
        """Push ``frame`` with (force, torque) at its origin, world axes, for ``duration``."""
        self.simulator.apply_wrench(frame, wrench, duration)
