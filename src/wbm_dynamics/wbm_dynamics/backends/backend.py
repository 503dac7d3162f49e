"""The interface between the robot-interface node and a robot: read state, write command, advance.

:class:`RobotBackend` declares everything the node calls, with defaults where one makes sense,
so that the node never asks a backend what it can do. A backend is either *steppable* (a
simulation: :meth:`RobotBackend.advance` computes the next ``duration`` seconds as fast as it
can, and the node paces it) or not (a real robot: :meth:`RobotBackend.advance` blocks until the
robot has moved on by ``duration`` in real time). The node never looks inside: the same node
publishes the robot contract for all of them.

A backend class reads its own settings: it names a :class:`~wbm_description.settings.Settings`
class in :attr:`RobotBackend.settings_class` and is built as ``backend_class(model, settings)``
(the node reads the settings from the section of its parameters named after the backend, or
from the backend's own file, :mod:`wbm_dynamics.backends.plugins`).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from wbm_description.exceptions import ConfigError
from wbm_description.robot_io import JointCommand, RobotReadings
from wbm_description.settings import Settings
from wbm_description.whole_body_model import WholeBodyModel
from wbm_dynamics.exceptions import BackendError


@dataclass(frozen=True)
class NoSettings(Settings):
    """The settings of a backend that has none (its section must be empty)."""


@dataclass(frozen=True)
class BackendDescription:
    """What the node needs to name things in its messages.

    Attributes:
        joint_names: Actuated joints, in the order of every joint array.
        ft_sensor_frames: F/T sensor name to its frame (the messages' frame_id).
        imu_frame: IMU frame, or None without an IMU.
        base_frame: The floating base link (ground truth odometry child frame), or None.
        period: The backend's own time step [s]; ``advance`` durations are multiples of it.
    """

    joint_names: tuple[str, ...]
    ft_sensor_frames: dict[str, str]
    imu_frame: str | None
    base_frame: str | None
    period: float

    @classmethod
    def of(
        cls, model: WholeBodyModel, *, period: float, ground_truth: bool = True
    ) -> BackendDescription:
        """The description of a robot from its model (names from its robot config, if any).

        Args:
            model: The whole-body model.
            period: The backend's time step [s].
            ground_truth: Whether the backend knows the true base state (a simulation); the
                base frame is None otherwise, and for a fixed base.
        """
        config = model.config
        if config is None:
            return cls(model.joint_names, {}, None, None, period)
        return cls(
            joint_names=model.joint_names,
            ft_sensor_frames={sensor.name: sensor.frame for sensor in config.ft_sensors},
            imu_frame=config.imu_frame,
            base_frame=config.base_link if ground_truth and model.floating_base else None,
            period=period,
        )


@dataclass(frozen=True)
class BaseState:
    """The true base state of a simulated robot (for ground truth odometry).

    Attributes:
        configuration: (x, y, z, qx, qy, qz, qw) of the base in the world.
        velocity: Base twist in the base frame (linear [m/s], angular [rad/s]).
    """

    configuration: np.ndarray
    velocity: np.ndarray


class RobotBackend(abc.ABC):
    """A robot the robot-interface node can host.

    Args:
        model: The whole-body model of the robot (joint order, limits, sensors, soles).

    Attributes:
        settings_class: The settings class the constructor takes (default: none,
            :class:`NoSettings`).
        steppable: True for a simulation the node paces, False for a real robot that paces
            itself.
        model: The whole-body model.
    """

    settings_class: ClassVar[type[Settings]] = NoSettings
    steppable: ClassVar[bool] = False

    def __init__(self, model: WholeBodyModel):
        self.model = model

    @classmethod
    def checked_settings(cls, settings: Settings | None) -> Settings:
        """The settings a constructor was given, or the defaults for None.

        Raises:
            ConfigError: Settings of another class than :attr:`settings_class`.
        """
        if settings is None:
            return cls.settings_class()
        if not isinstance(settings, cls.settings_class):
            raise ConfigError(
                None,
                "settings",
                f"{cls.settings_class.__name__} (the settings of {cls.__name__})",
                type(settings).__name__,
            )
        return settings

    # ------------------------------------------------------------------ every backend

    @property
    @abc.abstractmethod
    def description(self) -> BackendDescription:
        """Names and period of the robot."""

    @property
    @abc.abstractmethod
    def time(self) -> float:
        """The robot's current time [s] (simulated time for a simulation)."""

    @abc.abstractmethod
    def read(self) -> RobotReadings:
        """The latest sensor readings."""

    @abc.abstractmethod
    def write(self, command: JointCommand) -> None:
        """Hold a joint command until the next one (NaN or None: not commanded)."""

    @abc.abstractmethod
    def advance(self, duration: float) -> None:
        """Step a simulation by ``duration`` [s], or wait for a real robot to move on by it."""

    def hold_posture_command(self) -> JointCommand:
        """Servo command holding the robot config's initial posture.

        Position references at the initial posture, and as feed-forward the static joint
        torques of standing on every sole of the robot config (minimum-norm contact wrenches,
        :meth:`~wbm_description.whole_body_model.WholeBodyModel.static_contact_torques`), or the
        gravity torques for a robot without soles or with a fixed base. Computed from the model
        only, so it is the same for every backend.
        """
        model = self.model
        q0 = model.initial_configuration()
        soles = [sole.frame for sole in model.config.soles] if model.config else []
        if soles and model.floating_base:
            feed_forward, _ = model.static_contact_torques(q0, soles)
        else:
            feed_forward = model.gravity_forces(q0)[model.nv - model.ndof :]
        return JointCommand(position=model.joint_positions(q0).copy(), effort=feed_forward)

    def close(self) -> None:  # noqa: B027  (a default, not an abstract method)
        """Release the robot (threads, sockets, devices); default: nothing to release."""

    def __enter__(self) -> RobotBackend:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ------------------------------------------------------------------ simulations only

    def base_state(self) -> BaseState | None:
        """True base state (simulations only); None when unknown."""
        return None

    def reset(self) -> None:
        """Return to the initial state (simulations only).

        Raises:
            BackendError: The backend cannot be reset (the default: a real robot).
        """
        raise BackendError(f"{type(self).__name__} cannot be reset")

    def apply_wrench(self, frame: str, wrench: np.ndarray, duration: float) -> None:
        """Push a link (simulations only).

        Args:
            frame: The link (frame) pushed.
            wrench: (force [N], torque [N m]) at the frame origin, world axes, (6,).
            duration: How long it acts [s].

        Raises:
            BackendError: The backend cannot push (the default: a real robot).
        """
        raise BackendError(f"{type(self).__name__} cannot apply external wrenches")


__all__ = ["BackendDescription", "BaseState", "NoSettings", "RobotBackend"]
