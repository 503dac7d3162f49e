"""The posture task: joint positions towards a reference posture (a regularization).

Joint positions [rad], velocities [rad/s]; the base is free.
"""

from __future__ import annotations

import numpy as np

from wbm_control.controller_settings import PostureSettings
from wbm_control.jit import task_kernels
from wbm_control.robot_kinematics import RobotKinematics
from wbm_control.whole_body_qp import AccelerationTask

_posture_acceleration_task = task_kernels.posture_acceleration_task


class PostureTask:
    """Joint-space task towards ``reference``.

    Args:
        reference: Joint positions (ndof,) [rad], model order.
        nv: Velocity dimension of the model (6 + ndof).
        settings: Weight and gains (``posture:`` section).
    """

    name = "posture"

    def __init__(self, reference: np.ndarray, nv: int, settings: PostureSettings):
        self.reference = np.asarray(reference, dtype=float)
        self.settings = settings
        ndof = self.reference.shape[0]
        self._selection = np.zeros((ndof, nv))
        self._selection[:, nv - ndof :] = np.eye(ndof)
        self._drift = np.zeros(ndof)
        task_kernels.warm_up()

    def compute_error(self, kinematics: RobotKinematics) -> np.ndarray:
        """Reference minus joint positions (ndof,) [rad]."""
        return self.reference - kinematics.q[7:]

    def compute_jacobian(self, kinematics: RobotKinematics) -> np.ndarray:
        """The joint selection S (ndof x nv), constant."""
        return self._selection

    def compute_acceleration_task(self, kinematics: RobotKinematics) -> AccelerationTask:
        """Torque mode: joint accelerations kp e - kd dq (ndof,) [rad/s^2].

        One kernel call (:func:`~wbm_control.jit.task_kernels.posture_acceleration_task`).
        """
        desired = np.empty(self.reference.shape[0])
        self.torque_rows(kinematics, desired)
        weight = self.settings.weight
        return AccelerationTask(self.name, self._selection, self._drift, desired, weight)

    def torque_rows(self, kinematics: RobotKinematics, desired: np.ndarray) -> None:
        """:meth:`compute_acceleration_task`'s desired accelerations into ``desired`` (ndof,).

        [rad/s^2]; the torque mode's fused build (:mod:`wbm_control.torque_qp`) knows the rows
        are the joints' selection, without drift.
        """
        s = self.settings
        _posture_acceleration_task(self.reference, kinematics.q, kinematics.v, s.kp, s.kd, desired)
