"""The interface between the robot-interface node and a robot: read state, write command, advance.

A backend is either *steppable* (a simulation: :meth:`RobotBackend.advance` computes the next
``duration`` seconds as fast as it can, and the node paces it) or not (a real robot:
:meth:`RobotBackend.advance` blocks until the robot has moved on by ``duration`` in real time).
The node never looks inside: the same node publishes the robot contract for all of them.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass

import numpy as np

from wbm_description.robot_io import JointCommand, RobotReadings
from wbm_dynamics.exceptions import BackendError


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
    """A robot the robot-interface node can host."""

    steppable: bool = False

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

    def base_state(self) -> BaseState | None:
        """True base state (simulations only); None when unknown."""
        return None

    def reset(self) -> None:
        """Return to the initial state (simulations only)."""
        raise BackendError(f"{type(self).__name__} cannot be reset")

    def apply_wrench(self, frame: str, wrench: np.ndarray, duration: float) -> None:
        """Push a link (simulations only)."""
        raise BackendError(f"{type(self).__name__} cannot apply external wrenches")
