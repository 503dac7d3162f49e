"""Sensor noise: one wrapper around the readings of any engine.

An engine reports exact readings (:meth:`wbm_dynamics.engine.Engine.readings`); the noise is a
wrapper around them, as upkie's ``wrappers/noisify_observation.py`` is around an observation:
:meth:`SensorNoise.apply` returns the readings with zero-mean Gaussian noise added to each sensor,
drawn from a generator seeded once, so runs with the same seed read the same noise. The robot
interface node applies it to whichever engine it hosts (the node-level ``noise`` section and
``seed``), so our simulator and MuJoCo publish equally noisy readings.

Draw order (what makes a seed reproducible): joint positions, velocities, efforts (one value per
joint each), then the IMU (orientation, gyro, accelerometer), then each F/T sensor in the order of
the readings; a sensor whose standard deviation is 0 draws nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from wbm_description.conventions import quaternion_xyzw_from_rotation
from wbm_description.robot_io import ImuReading, RobotReadings
from wbm_description.settings import Settings, setting


@dataclass(frozen=True)
class NoiseSettings(Settings):
    """Standard deviations of the zero-mean Gaussian noise added to each sensor (0: off)."""

    joint_position: float = setting(0.0, ge=0.0, unit="rad", doc="encoder position noise")
    joint_velocity: float = setting(0.0, ge=0.0, unit="rad/s", doc="encoder velocity noise")
    joint_effort: float = setting(0.0, ge=0.0, unit="N m", doc="joint torque noise")
    imu_orientation: float = setting(
        0.0, ge=0.0, unit="rad", doc="small-angle orientation noise of the IMU"
    )
    imu_angular_velocity: float = setting(0.0, ge=0.0, unit="rad/s", doc="gyroscope noise")
    imu_linear_acceleration: float = setting(0.0, ge=0.0, unit="m/s^2", doc="accelerometer noise")
    ft_force: float = setting(0.0, ge=0.0, unit="N", doc="F/T force noise per axis")
    ft_torque: float = setting(0.0, ge=0.0, unit="N m", doc="F/T torque noise per axis")

    @property
    def enabled(self) -> bool:
        """Whether any noise is on."""
        return any(getattr(self, f.name) > 0.0 for f in dataclasses.fields(self))


class SensorNoise:
    """Adds seeded Gaussian noise to readings.

    Args:
        settings: Standard deviations.
        seed: Seed of the generator (>= 0).
    """

    def __init__(self, settings: NoiseSettings, seed: int = 0):
        self.settings = settings
        self.seed = seed
        self.reset()

    def reset(self) -> None:
        """Restart the generator from its seed."""
        self._rng = np.random.default_rng(self.seed)

    def apply(self, readings: RobotReadings) -> RobotReadings:
        """The readings with noise on every sensor (see the module docstring for the order)."""
        if not self.settings.enabled:
            return readings
        positions, velocities, efforts = self.joints(
            readings.joint_positions, readings.joint_velocities, readings.joint_efforts
        )
        imu = self.imu(readings.imu) if readings.imu is not None else None
        wrenches = {name: self.wrench(wrench) for name, wrench in readings.wrenches.items()}
        return RobotReadings(readings.time, positions, velocities, efforts, imu, wrenches)

    def _noise(self, sigma: float, shape: int | Sequence[int]) -> np.ndarray:
        return self._rng.normal(0.0, sigma, shape) if sigma > 0.0 else np.zeros(shape)

    def joints(
        self, positions: np.ndarray, velocities: np.ndarray, efforts: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Noisy encoder positions [rad], velocities [rad/s] and joint torques [N m]."""
        s = self.settings
        n = len(positions)
        return (
            positions + self._noise(s.joint_position, n),
            velocities + self._noise(s.joint_velocity, n),
            efforts + self._noise(s.joint_effort, n),
        )

    def imu(self, reading: ImuReading) -> ImuReading:
        """A noisy IMU reading (orientation perturbed by a small random rotation, IMU axes)."""
        s = self.settings
        orientation = reading.orientation_xyzw
        if s.imu_orientation > 0.0:
            x, y, z, w = orientation
            rotation = pin.Quaternion(w, x, y, z).toRotationMatrix()
            rotation = rotation @ pin.exp3(self._noise(s.imu_orientation, 3))
            orientation = quaternion_xyzw_from_rotation(rotation)
        return ImuReading(
            orientation,
            reading.angular_velocity + self._noise(s.imu_angular_velocity, 3),
            reading.linear_acceleration + self._noise(s.imu_linear_acceleration, 3),
        )

    def wrench(self, wrench: np.ndarray) -> np.ndarray:
        """A noisy F/T reading (force [N], torque [N m])."""
        s = self.settings
        return wrench + np.concatenate([self._noise(s.ft_force, 3), self._noise(s.ft_torque, 3)])


__all__ = ["NoiseSettings", "SensorNoise"]
