"""The torque mode's whole-body QP built straight from the step's kinematics (issue 11).

:func:`~wbm_control.whole_body_qp.build_whole_body_qp` takes one
:class:`~wbm_control.whole_body_qp.AccelerationTask` per task and one
:class:`~wbm_control.whole_body_qp.ContactConstraint` per held sole, stacks their arrays and
fills the QP. :class:`TorqueQpBuilder` builds the same QP without those objects: a row plan,
made when the held soles (or the tasks' weights, or the kinematics' layout) change, says where
each row's Jacobian row and drift lie in the kinematics' one array
(:attr:`~wbm_control.robot_kinematics.RobotKinematics.buffer`) and holds the stacked row
weights and desired accelerations; each task kernel writes its desired acceleration into its
rows of that array, and one kernel
(:func:`~wbm_control.jit.whole_body_qp_kernels.fill_whole_body_qp_from_rows`) reads the rows
there and fills H, g, A, b, C, l, u in the workspace. Rows, order, weights, frames and units are
those of :meth:`wbm_control.torque_mode.TorqueMode.acceleration_tasks` and
:meth:`wbm_control.tasks.ContactTask.compute_constraint` (the CoM, the base orientation, the
posture, the frame tasks of the soles not held in the task set's order, then the held soles in
activation order): the QP is the one the objects' build gives, bit for bit
(tests/control/test_torque_qp.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from wbm_control.contacts import ActiveContact
from wbm_control.controller_settings import TorqueSettings
from wbm_control.controller_status import ControllerStatus
from wbm_control.exceptions import InputError
from wbm_control.jit.whole_body_qp_kernels import fill_whole_body_qp_from_rows
from wbm_control.robot_kinematics import RobotKinematics
from wbm_control.tasks import Balance, TaskSet
from wbm_control.whole_body_qp import (
    WholeBodyQP,
    WholeBodyQPWorkspace,
    _contact_rows_of_cones,
    _regularization,
)


class _RowPlan:
    """The rows of one task and contact set (see the module docstring).

    Attributes:
        key: What the plan was made for (held soles, weights, kinematics layout).
        frames: (name, task, desired view (6,)) of each frame task not held, in order.
        contacts: Desired view (6,) of each held sole, in activation order.
        com, base, posture: Desired views of the CoM (3,), base (3,) and posture (ndof,) rows.
        desired: The stacked desired accelerations (rows,), the views' array.
        weights: The tasks' row weights stacked (m,), read-only.
        jacobian_rows, drift_rows: Per row, the offsets of its Jacobian row and drift in the
            kinematics array (:func:`~wbm_control.jit.whole_body_qp_kernels.
            fill_whole_body_qp_from_rows`).
        jacobians, drift: The kernel's scratch (the held soles' rows, 6 k).
        names: The held soles' names (the QP's contact order).
    """

    def __init__(
        self,
        key: tuple,
        tasks: TaskSet,
        held: Sequence[ActiveContact],
        kinematics: RobotKinematics,
    ):
        layout, nv = kinematics.layout, kinematics.layout.nv
        index = layout.frame_index
        ndof = tasks.posture.reference.shape[0]
        held_tasks = tasks.held_task_names([contact.sole.name for contact in held])
        free = [(n, t) for n, t in tasks.frames.items() if n not in held_tasks]
        m = 6 + ndof + 6 * len(free)
        rows = m + 6 * len(held)
        self.key = key
        self.names = tuple([contact.sole.name for contact in held])
        self.desired = np.zeros(rows)
        self.jacobian_rows = np.empty(rows, dtype=np.int64)
        self.drift_rows = np.empty(rows, dtype=np.int64)
        self.jacobians = np.empty((6 * len(held), nv))
        self.drift = np.empty(6 * len(held))
        weights = np.empty(m)

        def frame_rows(row: int, frame_id: int, first: int, count: int) -> None:
            """Rows row.. of the frame's Jacobian rows first.. (LOCAL_WORLD_ALIGNED)."""
            block = index[frame_id]
            for i in range(count):
                self.jacobian_rows[row + i] = (6 * block + first + i) * nv
                self.drift_rows[row + i] = layout.drifts + 6 * block + first + i

        com = tasks.com
        for i in range(3):
            self.jacobian_rows[i] = layout.com_jacobian + i * nv
            self.drift_rows[i] = layout.rest + 6 + i  # com_drift
        weights[0:3] = com.settings.weight
        base = tasks.base_orientation
        frame_rows(3, base.frame_id, 3, 3)
        weights[3:6] = base.settings.weight
        for i in range(ndof):
            self.jacobian_rows[6 + i] = -1 - (nv - ndof + i)  # the joint's selection row
            self.drift_rows[6 + i] = -1
        weights[6 : 6 + ndof] = tasks.posture.settings.weight
        self.com, self.base = self.desired[0:3], self.desired[3:6]
        self.posture = self.desired[6 : 6 + ndof]
        self.frames = []
        row = 6 + ndof
        for name, task in free:
            frame_rows(row, task.frame_id, 0, 6)
            weights[row : row + 6] = task.weights  # (6,), as the stacked build's
            self.frames.append((name, task, self.desired[row : row + 6]))
            row += 6
        self.contacts = []
        contact_task = tasks.contact
        for contact in held:
            frame_rows(row, contact_task.sole_frame_ids[contact.sole.name], 0, 6)
            self.contacts.append(self.desired[row : row + 6])
            row += 6
        weights.flags.writeable = False
        self.weights = weights


class TorqueQpBuilder:
    """Builds the torque mode's QP from the kinematics (see the module docstring).

    Args:
        workspace: Where the QP's arrays are (kept by the torque mode between steps).
    """

    def __init__(self, workspace: WholeBodyQPWorkspace):
        self.workspace = workspace
        self._plan: _RowPlan | None = None

    def _plan_for(
        self, tasks: TaskSet, held: Sequence[ActiveContact], kinematics: RobotKinematics
    ) -> _RowPlan:
        """The row plan of these held soles, weights and kinematics layout (kept while same)."""
        key = (
            tuple([contact.sole.name for contact in held]),
            kinematics.layout,
            tasks.com.settings.weight,
            tasks.base_orientation.settings.weight,
            tasks.posture.settings.weight,
            tuple([id(task.weights) for task in tasks.frames.values()]),
            id(tasks.frames),
            len(tasks.frames),
        )
        plan = self._plan
        if plan is None or plan.key != key:
            plan = self._plan = _RowPlan(key, tasks, held, kinematics)
        return plan

    def build(
        self,
        kinematics: RobotKinematics,
        balance: Balance,
        tasks: TaskSet,
        held: Sequence[ActiveContact],
        t: float,
        torque_limits: np.ndarray,
        settings: TorqueSettings,
        status: ControllerStatus,
    ) -> WholeBodyQP:
        """The step's QP, in the workspace; the tasks' errors into ``status.task_errors``.

        The QP :func:`~wbm_control.whole_body_qp.build_whole_body_qp` gives from
        :meth:`~wbm_control.torque_mode.TorqueMode.acceleration_tasks` and the held soles'
        :meth:`~wbm_control.tasks.ContactTask.compute_constraint` (module docstring).

        Args:
            kinematics: The step's kinematics, with dynamics (its :attr:`buffer`).
            balance: The step's balance feedback (:meth:`~wbm_control.tasks.ComTask.balance`
                at ``kinematics``).
            tasks: The controller's tasks.
            held: The held soles, in activation order.
            t: Time [s] (the frame tasks' references).
            torque_limits: tau_max (ndof,) [N m].
            settings: The torque mode's weights.
            status: Its ``task_errors`` are set (base orientation [rad], frame tasks [m]).
        """
        if kinematics.buffer is None:
            raise InputError("kinematics", "kinematics with dynamics", "without")
        plan = self._plan_for(tasks, held, kinematics)
        task_errors = status.task_errors
        plan.com[:] = tasks.com.desired_acceleration(kinematics, balance)
        base = tasks.base_orientation
        task_errors[base.name] = base.torque_rows(kinematics, plan.base)
        tasks.posture.torque_rows(kinematics, plan.posture)
        for name, task, desired in plan.frames:
            task_errors[name] = task.torque_rows(kinematics, t, desired)
        contact_task = tasks.contact
        cones = []
        for contact, desired in zip(held, plan.contacts, strict=True):
            cones.append(contact_task.contact_rows(kinematics, contact, desired))
        M, h = kinematics.mass_matrix, kinematics.bias_forces
        nv = M.shape[0]
        base_dofs = 6
        n = nv + 6 * len(held)
        regularization = _regularization(
            nv, n, settings.acceleration_regularization, settings.wrench_weight
        )
        rows = _contact_rows_of_cones(tuple(cones), nv, settings.min_normal_force)
        qp = self.workspace.qp_for(nv, base_dofs, plan.names, rows, regularization)
        p = qp.problem
        fill_whole_body_qp_from_rows(
            p.H, p.g, p.A, p.b, p.C, p.l, p.u, qp.torque_offset, kinematics.buffer,
            plan.jacobian_rows, plan.drift_rows, plan.jacobians, plan.drift, plan.weights,
            plan.desired, regularization, M, h, torque_limits, base_dofs,
        )  # fmt: skip
        return qp
