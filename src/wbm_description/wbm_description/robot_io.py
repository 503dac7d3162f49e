"""What passes between a robot (simulated or real) and a controller, as plain values.

These mirror the robot topics of the architecture (joint_states, imu, ft/<sensor>,
joint_commands) without ROS types, so that cores (the simulator, the controller) can be wired
together in-process for tests, and nodes convert them to and from messages at the edge.

All joint arrays are in the model's joint order (:attr:`WholeBodyModel.joint_names`).

F/T sign convention: the wrench (force [N], torque [N m]) that the child side of the sensor (the
side that carries the end effector, e.g. the foot) exerts on the parent side (e.g. the leg),
at the sensor frame origin, in sensor frame axes (URDF ``measure_direction child_to_parent``).
Standing still, the force of an ankle sensor is the weight of the robot above it pushed back up:
+m_above * g along the world's up direction.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class ImuReading:
    """An IMU reading.

    Attributes:
        orientation_xyzw: Orientation of the IMU frame in the world, quaternion (x, y, z, w).
        angular_velocity: Angular velocity of the IMU frame, IMU axes [rad/s].
        linear_acceleration: Proper acceleration (acceleration minus gravity) of the IMU origin,
            IMU axes [m/s^2]; standing still it reads +9.81 along the world's up direction.
    """

    orientation_xyzw: np.ndarray
    angular_velocity: np.ndarray
    linear_acceleration: np.ndarray


@dataclass(frozen=True)
class RobotReadings:
    """Everything a robot reports in one sample (what a real robot has, no ground truth).

    Attributes:
        time: Sample time [s].
        joint_positions: [rad], (ndof,).
        joint_velocities: [rad/s], (ndof,).
        joint_efforts: Measured joint torques [N m], (ndof,).
        imu: IMU reading, or None when the robot has none.
        wrenches: F/T sensor name (the robot config's) to (force, torque), see module docstring.
    """

    time: float
    joint_positions: np.ndarray
    joint_velocities: np.ndarray
    joint_efforts: np.ndarray
    imu: ImuReading | None = None
    wrenches: dict[str, np.ndarray] = field(default_factory=dict)


@dataclass(frozen=True)
class JointCommand:
    """A command for the joint servos, by joint, in model order.

    The robot applies tau = effort + kp (position - q) + kd (velocity - dq) per joint, with the
    position and velocity terms only where given. NaN in an array means "not commanded" for that
    joint; None means not commanded for every joint.

    Attributes:
        position: Position references [rad], (ndof,) or None.
        velocity: Velocity references [rad/s], (ndof,) or None.
        effort: Feed-forward torques [N m], (ndof,) or None.
    """

    position: np.ndarray | None = None
    velocity: np.ndarray | None = None
    effort: np.ndarray | None = None
