"""The base orientation task: keeps a frame (the pelvis) at its orientation in the posture.

Error and velocities are angular, in world axes [rad, rad/s].
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from wbm_control.controller_settings import BaseOrientationSettings
from wbm_control.differential_ik import IkFrameTaskSpec
from wbm_control.jit import task_kernels
from wbm_control.robot_kinematics import RobotKinematics
from wbm_control.whole_body_qp import AccelerationTask

_orientation_acceleration_task = task_kernels.orientation_acceleration_task
_orientation_task_rows = task_kernels.orientation_task_rows


class BaseOrientationTask:
    """Orientation task of one frame towards a fixed rotation.

    Args:
        frame_id: Pinocchio id of the frame (``settings.frame``).
        settings: Frame, weight and gains (``base_orientation:`` section).
        rotation_reference: The frame's rotation to hold, in the world (3 x 3).
    """

    name = "base_orientation"

    def __init__(
        self, frame_id: int, settings: BaseOrientationSettings, rotation_reference: np.ndarray
    ):
        self.frame = settings.frame
        self.frame_id = frame_id
        self.settings = settings
        self.rotation_reference = rotation_reference
        task_kernels.warm_up()

    def compute_error(self, kinematics: RobotKinematics) -> np.ndarray:
        """log3(R* R^T) (3,) [rad], world axes."""
        rotation = kinematics.placements[self.frame_id].rotation
        return pin.log3(self.rotation_reference.dot(rotation.T))  # dot: @ without dispatch

    def compute_jacobian(self, kinematics: RobotKinematics) -> np.ndarray:
        """The angular rows of the frame's Jacobian (3 x nv)."""
        return kinematics.jacobians[self.frame_id][3:6]

    def compute_acceleration_task(
        self, kinematics: RobotKinematics, error: np.ndarray
    ) -> AccelerationTask:
        """Torque mode: angular acceleration kp e - kd omega.

        In numpy: the reference of :meth:`torque_task`, which the torque step calls.
        """
        s = self.settings
        angular_velocity = kinematics.velocities[self.frame_id][3:6]
        return AccelerationTask(
            self.name,
            self.compute_jacobian(kinematics),
            kinematics.drifts[self.frame_id][3:6],
            s.kp * error - s.kd * angular_velocity,
            s.weight,
        )

    def torque_task(self, kinematics: RobotKinematics) -> tuple[AccelerationTask, float]:
        """Torque mode: :meth:`compute_error` and :meth:`compute_acceleration_task` fused.

        One kernel call (:func:`~wbm_control.jit.task_kernels.orientation_acceleration_task`).

        Returns:
            The acceleration task and the norm of the error [rad].
        """
        s, frame_id = self.settings, self.frame_id
        desired = np.empty(3)
        error = _orientation_acceleration_task(
            self.rotation_reference,
            kinematics.placements[frame_id].rotation,
            kinematics.velocities[frame_id],
            s.kp,
            s.kd,
            desired,
        )
        task = AccelerationTask(
            self.name,
            kinematics.jacobians[frame_id][3:6],
            kinematics.drifts[frame_id][3:6],
            desired,
            s.weight,
        )
        return task, error

    def torque_rows(self, kinematics: RobotKinematics, desired: np.ndarray) -> float:
        """:meth:`torque_task`'s desired acceleration into ``desired`` (3,) [rad/s^2].

        The torque step's (:mod:`wbm_control.torque_qp`, which reads the Jacobian and drift rows
        itself): the rotation and twist read from the kinematics' arrays by offset
        (:func:`~wbm_control.jit.task_kernels.orientation_task_rows`).

        Returns:
            The norm of the error [rad].
        """
        s, layout = self.settings, kinematics.layout
        row = layout.frame_index[self.frame_id]
        return _orientation_task_rows(
            self.rotation_reference,
            kinematics.poses,
            row,
            kinematics.buffer,
            layout.velocities + 6 * row,
            s.kp,
            s.kd,
            desired,
        )

    def ik_spec(self) -> IkFrameTaskSpec:
        """The task in the IK: orientation only."""
        return IkFrameTaskSpec(
            self.name, self.frame, 0.0, self.settings.weight, self.settings.ik_gain
        )

    def ik_target(self) -> pin.SE3:
        """The IK target (its position is not weighted)."""
        return pin.SE3(self.rotation_reference, np.zeros(3))
