"""Held soles: each stays at its anchor (a constraint of the QP, drift-corrected).

Errors and velocities (linear, angular) in world axes at the sole origin [m, rad].
"""

from __future__ import annotations

import numpy as np

from wbm_control.contacts import ActiveContact
from wbm_control.controller_settings import ContactSettings
from wbm_control.jit import task_kernels
from wbm_control.robot_kinematics import RobotKinematics
from wbm_control.tasks.frame_task import pose_error
from wbm_control.whole_body_qp import ContactConstraint

_contact_acceleration = task_kernels.contact_acceleration
_contact_task_rows = task_kernels.contact_task_rows


class ContactTask:
    """The constraint of a held sole and its wrench cone.

    Args:
        sole_frame_ids: Sole name to the Pinocchio id of its frame.
        settings: Gains of the drift correction (``contact:`` section).
        friction_coefficient: mu of the wrench cones [-].
        cop_margin: The CoP stays this far inside each sole's edges [m].
    """

    def __init__(
        self,
        sole_frame_ids: dict[str, int],
        settings: ContactSettings,
        *,
        friction_coefficient: float,
        cop_margin: float,
    ):
        self.sole_frame_ids = dict(sole_frame_ids)
        self.settings = settings
        self.friction_coefficient = friction_coefficient
        self.cop_margin = cop_margin
        task_kernels.warm_up()

    def compute_error(self, kinematics: RobotKinematics, contact: ActiveContact) -> np.ndarray:
        """Pose error (6,) of the sole to its anchor [m, rad]."""
        frame_id = self.sole_frame_ids[contact.sole.name]
        return pose_error(contact.placement, kinematics.placements[frame_id])

    def compute_constraint(
        self, kinematics: RobotKinematics, contact: ActiveContact
    ) -> ContactConstraint:
        """J_c a + dJ_c v = kp e - kd J_c v, and the sole's wrench cone.

        The desired acceleration in one kernel call
        (:func:`~wbm_control.jit.task_kernels.contact_acceleration`).
        """
        frame_id = self.sole_frame_ids[contact.sole.name]
        jacobian = kinematics.jacobians[frame_id]
        anchor, placement = contact.placement, kinematics.placements[frame_id]
        settings = self.settings
        desired = np.empty(6)
        _contact_acceleration(
            anchor.rotation,
            anchor.translation,
            placement.rotation,
            placement.translation,
            jacobian,
            kinematics.v,
            settings.kp,
            settings.kd,
            desired,
        )
        return ContactConstraint(
            contact.sole.name,
            jacobian,
            kinematics.drifts[frame_id],
            desired,
            contact.cone(self.friction_coefficient, cop_margin=self.cop_margin),
        )

    def contact_rows(
        self, kinematics: RobotKinematics, contact: ActiveContact, desired: np.ndarray
    ) -> np.ndarray:
        """:meth:`compute_constraint`'s a*_c into ``desired`` (6,) [m/s^2, rad/s^2]; the cone.

        The torque step's (:mod:`wbm_control.torque_qp`, which reads the Jacobian and drift rows
        itself): the sole's pose and Jacobian read from the kinematics' arrays by offset
        (:func:`~wbm_control.jit.task_kernels.contact_task_rows`).

        Returns:
            The sole's wrench cone (m x 6), world axes (read-only, the contact's).
        """
        anchor, settings, layout = contact.placement, self.settings, kinematics.layout
        row = layout.frame_index[self.sole_frame_ids[contact.sole.name]]
        _contact_task_rows(
            anchor.rotation,
            anchor.translation,
            kinematics.poses,
            row,
            kinematics.buffer,
            6 * row * layout.nv,
            kinematics.v,
            settings.kp,
            settings.kd,
            desired,
        )
        return contact.cone(self.friction_coefficient, cop_margin=self.cop_margin)
