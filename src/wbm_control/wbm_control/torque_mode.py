"""Mode "torque": the whole-body QP over the tasks and the held soles gives the torques.

One step: the robot's kinematics and dynamics at the estimate (:class:`RobotKinematics`), the
balance feedback, one acceleration task per task (the frame tasks of held soles are constraints
instead), one contact constraint per held sole, then the whole-body QP and its solve. The step
builds the QP straight from the kinematics (:meth:`TorqueMode.build_fused`,
:mod:`wbm_control.torque_qp`); :meth:`TorqueMode.acceleration_tasks` and
:meth:`TorqueMode.build` (:func:`build_whole_body_qp` of the task and constraint objects) give
the same QP, for inspection as pink's ``build_ik``, and for the fallback when the QP fails.
The torques get the model's joint friction added and are clipped to the torque limits; with
``servo_references`` the predicted next joint state goes with them.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from wbm_control.base_estimator import BaseEstimate
from wbm_control.contacts import ActiveContact, ContactSet
from wbm_control.controller_settings import ControllerSettings, TorqueSettings
from wbm_control.controller_status import ControllerStatus
from wbm_control.exceptions import NoSolutionFound
from wbm_control.jit.command_kernels import torque_command as _torque_command
from wbm_control.jit.command_kernels import warm_up as _warm_up_command
from wbm_control.qp import DenseQPSolver
from wbm_control.qp_fallback import QpFallback
from wbm_control.robot_kinematics import RobotKinematics
from wbm_control.tasks import Balance, TaskSet
from wbm_control.torque_qp import TorqueQpBuilder
from wbm_control.whole_body_qp import (
    AccelerationTask,
    ContactConstraint,
    WholeBodyQP,
    WholeBodyQPWorkspace,
    WholeBodySolution,
    build_whole_body_qp,
    solve_whole_body_qp,
)
from wbm_description.robot_io import JointCommand
from wbm_description.whole_body_model import WholeBodyModel


class TorqueMode:
    """The torque mode's step (see the module docstring).

    Args:
        model: Whole-body model (its torque limits and friction are read at each step).

    Attributes:
        solver: The QP solver (its workspace is kept between steps: warm start; the last
            polished active set is tried first, ``active_set_first``).
        last_qp: The QP of the last step, for inspection (tests, benchmark). Its arrays are
            the mode's workspace (``qp_workspace``), refilled in place at the next step: copy
            what is kept past it (:meth:`~wbm_control.qp.DenseQP.copy`).
        qp_workspace: The QP's arrays, kept while the held soles are the same
            (:class:`~wbm_control.whole_body_qp.WholeBodyQPWorkspace`).
        timings: Wall time [s] of each part of the last step: ``QP build`` (balance, tasks,
            constraints, assembly), ``solve`` (proxsuite; only the solver's call when the last
            active set answered), ``polish`` (the exact solution on its active set,
            :func:`~wbm_control.qp.polish_on_active_set`, or the KKT solve on the last active
            set when that is the optimum, :mod:`wbm_control.qp`), ``command`` (the
            kinematics are the controller's, :meth:`kinematics`).
    """

    name = "torque"

    def __init__(self, model: WholeBodyModel):
        self.model = model
        self.data = model.model.createData()
        self.solver = DenseQPSolver(name="whole_body_qp", polish=True, active_set_first=True)
        self.last_qp: WholeBodyQP | None = None
        self.qp_workspace = WholeBodyQPWorkspace()
        self.qp_builder = TorqueQpBuilder(self.qp_workspace)
        self.timings: dict[str, float] = {}
        self.fallback: QpFallback | None = None
        _warm_up_command()

    def reset(self) -> None:
        """Nothing to forget (the solver's warm start adapts)."""

    def resync(self, q: np.ndarray) -> None:
        """Nothing to re-synchronize: every step starts from the estimate."""

    def kinematics(self, estimate: BaseEstimate, tasks: TaskSet) -> RobotKinematics:
        """The step's kinematics and dynamics at the estimate.

        One pass, shared by the step's users: the ZMP estimate, the tasks, the QP.
        """
        return RobotKinematics(
            self.model.model, self.data, estimate.q, estimate.v, tasks.frame_ids
        )

    def acceleration_tasks(
        self,
        kinematics: RobotKinematics,
        balance: Balance,
        tasks: TaskSet,
        held: Sequence[ActiveContact],
        t: float,
        status: ControllerStatus,
    ) -> list[AccelerationTask]:
        """CoM, base orientation, posture and the frame tasks of the soles not held."""
        task_errors = status.task_errors
        base = tasks.base_orientation
        com_task = tasks.com.compute_acceleration_task(kinematics, balance)
        base_task, task_errors[base.name] = base.torque_task(kinematics)
        result = [com_task, base_task, tasks.posture.compute_acceleration_task(kinematics)]
        held_tasks = tasks.held_task_names([contact.sole.name for contact in held])
        for name, task in tasks.frames.items():
            if name in held_tasks:
                continue
            frame_task, task_errors[name] = task.torque_task(kinematics, t)
            result.append(frame_task)
        return result

    def build(
        self,
        kinematics: RobotKinematics,
        acceleration_tasks: Sequence[AccelerationTask],
        constraints: Sequence[ContactConstraint],
        settings: TorqueSettings,
    ) -> WholeBodyQP:
        """The whole-body QP of this step, in :attr:`qp_workspace` (refilled at the next step)."""
        return build_whole_body_qp(
            kinematics.mass_matrix,
            kinematics.bias_forces,
            constraints,
            acceleration_tasks,
            self.model.torque_limits,
            wrench_weight=settings.wrench_weight,
            acceleration_regularization=settings.acceleration_regularization,
            min_normal_force=settings.min_normal_force,
            workspace=self.qp_workspace,
        )

    def build_fused(
        self,
        kinematics: RobotKinematics,
        balance: Balance,
        tasks: TaskSet,
        held: Sequence[ActiveContact],
        t: float,
        settings: TorqueSettings,
        status: ControllerStatus,
    ) -> WholeBodyQP:
        """The step's QP straight from the kinematics, in :attr:`qp_workspace`.

        What :meth:`build` gives from :meth:`acceleration_tasks` and the held soles'
        constraints, without those objects (:class:`~wbm_control.torque_qp.TorqueQpBuilder`);
        the tasks' errors into ``status.task_errors``.
        """
        return self.qp_builder.build(
            kinematics, balance, tasks, held, t, self.model.torque_limits, settings, status
        )

    def command(
        self,
        kinematics: RobotKinematics,
        solution: WholeBodySolution,
        settings: ControllerSettings,
    ) -> JointCommand:
        """Torques (friction added, clipped) and, if asked, the next joint state predicted."""
        q, v = kinematics.q, kinematics.v
        model = self.model
        # Plus the model's friction opposed (minus its friction_torques -(k_v dq + k_c sign(dq))
        # [N m], without its input check: v is the estimate's, finite, else the QP would have
        # failed), clipped to the limits: one kernel (jit/command_kernels.py).
        torques = np.empty(model.ndof)
        _torque_command(
            solution.torques,
            v[6:],
            model.viscous_friction,
            model.coulomb_friction,
            model.torque_limits,
            settings.torque.friction_compensation,
            torques,
        )
        if settings.torque.servo_references:
            dt = settings.control_period
            a = solution.acceleration[6:]
            return JointCommand(
                position=q[7:] + v[6:] * dt + 0.5 * a * dt * dt,
                velocity=v[6:] + a * dt,
                effort=torques,
            )
        return JointCommand(effort=torques)

    def step(
        self,
        estimate: BaseEstimate,
        tasks: TaskSet,
        contacts: ContactSet,
        t: float,
        settings: ControllerSettings,
        status: ControllerStatus,
        kinematics: RobotKinematics | None = None,
    ) -> JointCommand:
        """One step at the estimate; fills ``status`` (balance, task errors, solve time).

        ``kinematics``: :meth:`kinematics` at the estimate, if the caller computed it already.

        Raises:
            NoSolutionFound: The QP has no solution.
        """
        if kinematics is None:
            kinematics = self.kinematics(estimate, tasks)
        built = time.perf_counter()
        balance = tasks.com.balance(kinematics, t, contacts)
        status.record_balance(balance)
        held = contacts.active()
        qp = self.build_fused(kinematics, balance, tasks, held, t, settings.torque, status)
        self.last_qp = qp
        solve_start = time.perf_counter()
        self.solver.max_iterations = settings.torque.max_iterations  # bounds a failing solve
        self.solver.polish = settings.torque.polish  # reproducible solutions (qp.py)
        try:
            solution = solve_whole_body_qp(qp, self.solver)
        except NoSolutionFound as error:  # softer problems, then a static hold (qp_fallback)
            if not settings.fallback.enabled:
                raise
            self.fallback = self.fallback or QpFallback(self.model, settings.fallback)
            # The fallback's inputs as objects (rare: the fused build made none).
            acceleration_tasks = self.acceleration_tasks(
                kinematics, balance, tasks, held, t, status
            )
            constraints = [tasks.contact.compute_constraint(kinematics, c) for c in held]
            result = self.fallback.solve(
                kinematics, acceleration_tasks, constraints, held, tasks, settings
            )
            status.record_fallback(result.level, f"{error}", time.perf_counter() - solve_start)
            if result.command is not None:
                return result.command
            solution = result.solution
        solved = time.perf_counter()
        status.solve_time = solved - solve_start
        command = self.command(kinematics, solution, settings)
        timings = self.timings
        timings["QP build"] = solve_start - built
        polish = self.solver.polish_time if self.solver.polish else 0.0
        timings["solve"] = solved - solve_start - polish
        timings["polish"] = polish
        timings["command"] = time.perf_counter() - solved
        return command
