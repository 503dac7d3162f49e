"""Mode "ik": one differential-IK step per control period, as servo references.

The IK (:class:`~wbm_control.differential_ik.DifferentialIK`, pink) integrates its own
configuration q_ik, re-synchronized with the estimate at the start and after a safe hold. Its
targets: the held soles at their anchors, the other frame tasks on their references (with
feed-forward velocity), the base orientation, the posture, and the CoM reference moved by an
integral of the horizontal CoM error (servo compliance leaves a steady offset; clamped to
:data:`COM_INTEGRAL_LIMIT`). The command is q_ik and its velocity as joint references, and, with
``ik.gravity_feedforward``, contact-consistent gravity torques as effort (the contact wrenches
distributed for the DCM feedback's CoM acceleration; held soles that bear no load are left out).
With ``ik.motion_feedforward`` the effort is instead the inverse dynamics of the IK's motion
(:mod:`wbm_control.motion_feedforward`) at the estimate's q and the IK's v with the acceleration
the tasks plan (:mod:`wbm_control.planned_acceleration`: the frame tasks' reference
accelerations, zero for the held soles and the base orientation, the CoM reference's vertical
acceleration and the DCM feedback's horizontal one; weighted by the IK's task costs), on the held
soles: the servos then supply only the error, not the swing leg's and the body's inertial
torques. With ``ik.sagittal_momentum_compensation`` the CoM acceleration of those planned
accelerations is corrected once so that their angular momentum rate does not move the ZMP along
the base's heading (:meth:`IkMode.sagittal_compensation`): the G1's swing leg accelerated forward
at lift-off otherwise moved the feed-forward's ZMP ~35 mm forward, onto the stance sole's toe edge,
where the heel unloaded and the swing's yaw reaction spun the sole about its toe (README, issue
14).
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import numpy as np
import pinocchio as pin

from wbm_control.base_estimator import BaseEstimate
from wbm_control.contact_feedforward import contact_consistent_torques
from wbm_control.contacts import ActiveContact, ContactSet
from wbm_control.controller_settings import ControllerSettings
from wbm_control.controller_status import ControllerStatus
from wbm_control.differential_ik import DifferentialIK
from wbm_control.exceptions import NoSolutionFound
from wbm_control.jit import feedforward_kernels
from wbm_control.motion_feedforward import angular_momentum_compensation, motion_torques
from wbm_control.planned_acceleration import (
    PlannedAccelerationWorkspace,
    solve_planned_acceleration,
)
from wbm_control.qp import DenseQPSolver
from wbm_control.qp_fallback import IK_CLIPPED, ik_fallback_step
from wbm_control.robot_kinematics import RobotKinematics
from wbm_control.small_linalg import norm
from wbm_control.tasks import TaskSet
from wbm_control.walking.position_stabilizer import ZmpComController
from wbm_control.walking.references import WalkingReferences
from wbm_control.wrench_distribution import static_net_wrench
from wbm_description.robot_io import JointCommand
from wbm_description.whole_body_model import WholeBodyModel

#: Largest horizontal CoM offset of the integral action [m].
COM_INTEGRAL_LIMIT = 0.03


def lifted_soles(active: list[ActiveContact], estimate: BaseEstimate) -> list[str]:
    """Names of the held soles that bear no weight (F/T load), given the held ``active`` ones.

    The held contacts not in :func:`bearing_contacts`: empty when none bears weight.
    """
    loaded = estimate.loaded_soles
    lifted = [c.sole.name for c in active if c.sole.name not in loaded]
    return lifted if len(lifted) < len(active) else []


def bearing_contacts(contacts: ContactSet, estimate: BaseEstimate) -> list[ActiveContact]:
    """Held contacts that bear weight (F/T load): all held ones if none does.

    A held sole that lifts off (a push rolls the robot onto the other foot) cannot push on
    the ground: the feed-forward leaves its wrench out until its load returns.
    """
    active = contacts.active()
    bearing = [c for c in active if c.sole.name in estimate.loaded_soles]
    return bearing if bearing else active


class IkMode:
    """The IK mode's step (see the module docstring).

    Args:
        model: Whole-body model.
        settings: Controller settings (the ``ik:``, ``com:`` and ``posture:`` sections).
        tasks: The controller's tasks (their IK specs build the IK).

    Attributes:
        ik: The differential IK.
        q: The IK's configuration (None before the first step).
        com_controller: The ZMP-CoM controller of the CoM command while walking.
        walking_references: The walking references of the next step (set per step by the
            walking behaviour, consumed by the step; None: not walking).
        timings: Wall time [s] of each part of the last step: ``targets`` (balance, task
            references), ``IK (build + solve)``, ``feed-forward``, ``command`` (the kinematics
            are the controller's, :meth:`kinematics`).
    """

    name = "ik"

    def __init__(self, model: WholeBodyModel, settings: ControllerSettings, tasks: TaskSet):
        self.model = model
        self.data = model.model.createData()
        self.motion_data = model.model.createData()  # the motion feed-forward's (its own passes)
        self.momentum_data = model.model.createData()  # the momentum ZMP's (ik.momentum_zmp)
        self.mass = model.total_mass
        self.gravity = np.asarray(model.config.gravity, dtype=float)
        specs = [task.ik_spec() for task in tasks.frames.values()]
        specs.append(tasks.base_orientation.ik_spec())
        self.ik = DifferentialIK(
            model.model,
            frame_tasks=specs,
            com_cost=settings.com.weight,
            com_gain=settings.com.ik_gain,
            posture_cost=settings.posture.weight,
            posture_gain=settings.posture.ik_gain,
            velocity_limit=settings.ik.velocity_limit,
            configuration_limit_gain=settings.ik.configuration_limit_gain,
            damping=settings.ik.damping,
        )
        q_posture = pin.neutral(model.model)
        q_posture[7:] = tasks.posture.reference
        self.ik.set_posture_target(q_posture)
        self.distribution_solver = DenseQPSolver(name="wrench_distribution")
        self.q: np.ndarray | None = None
        self._com_integral = np.zeros(2)
        walking = settings.ik.walking
        self.com_controller = ZmpComController(
            zmp_gain=walking.zmp_gain, com_gain=walking.com_gain, max_offset=walking.max_offset
        )
        self.walking_references: WalkingReferences | None = None
        self._com_target: np.ndarray | None = None
        self.acceleration = np.zeros(model.model.nv)
        self.timings: dict[str, float] = {}
        # The planned accelerations' rows: the frame tasks in order, then the base orientation
        # (its target zero); their weights are the IK's costs (read at each solve).
        self._planned = PlannedAccelerationWorkspace(model.model.nv, len(specs))
        self._planned_frame_ids = [task.frame_id for task in tasks.frames.values()]
        self._planned_frame_ids.append(tasks.base_orientation.frame_id)
        self._planned_names = [*tasks.frames, tasks.base_orientation.name]
        self._costs_in_order = list(self.ik.frame_tasks) == self._planned_names
        # The moving frame tasks' reference accelerations of the last set_targets (its t).
        self._reference_accelerations: dict[str, np.ndarray] = {}

    def reset(self) -> None:
        """Forget the IK configuration, the CoM integral and the walking CoM command."""
        self.q = None
        self._com_integral = np.zeros(2)
        self.com_controller.reset()
        self.walking_references = None
        self._com_target = None
        self.acceleration = np.zeros(self.model.model.nv)

    def resync(self, q: np.ndarray) -> None:
        """Continue the IK from the configuration q (the estimate)."""
        self.q = q.copy()

    def planned_acceleration(
        self,
        tasks: TaskSet,
        contacts: ContactSet,
        com_acceleration: np.ndarray,
        t: float,
        q: np.ndarray,
        v: np.ndarray,
        kinematics: RobotKinematics | None = None,
        reference_accelerations: Mapping[str, np.ndarray] | None = None,
    ) -> np.ndarray:
        """The acceleration (nv,) the tasks plan at (q, v), see :func:`planned_acceleration`.

        The frame tasks' reference accelerations (zero for the held soles), zero angular
        acceleration of the base orientation, the CoM's ``com_acceleration`` [m/s^2]; each
        weighted by its cost in the IK, the joints by the posture cost. ``kinematics``: the
        step's kinematics at the same q, whose frame and CoM Jacobians are read.
        ``reference_accelerations``: task name to its reference acceleration (6,) [m/s^2,
        rad/s^2] at t (world axes), as :meth:`set_targets` read them at the same t for the
        same contacts; the tasks not in it are sampled.
        """
        held = {tasks.task_of_sole[c.sole.name] for c in contacts.active()}
        ik, workspace = self.ik, self._planned
        frame_ids = self._planned_frame_ids
        targets, costs = workspace.frame_targets, workspace.frame_costs
        names = self._planned_names
        if names[:-1] != list(tasks.frames) or names[-1] != tasks.base_orientation.name:
            # Other tasks than at construction: a workspace of theirs, their costs by name.
            names = [*tasks.frames, tasks.base_orientation.name]
            workspace = PlannedAccelerationWorkspace(self.model.model.nv, len(names))
            targets, costs = workspace.frame_targets, workspace.frame_costs
            frame_ids = [task.frame_id for task in tasks.frames.values()]
            frame_ids.append(tasks.base_orientation.frame_id)
            for k, name in enumerate(names):
                costs[k] = ik.frame_tasks[name].cost
        elif self._costs_in_order:  # pink's cost arrays are views of the IK's rows
            costs[:] = ik._costs[: len(names)]
        else:
            for k, name in enumerate(names):
                costs[k] = ik.frame_tasks[name].cost
        if ik.com_task is not None:
            workspace.costs[:3] = ik.com_task.cost
        for k, (name, task) in enumerate(tasks.frames.items()):
            if name in held:
                targets[k] = 0.0
                continue
            acceleration = None
            if reference_accelerations is not None:
                acceleration = reference_accelerations.get(name)
            if acceleration is None:
                acceleration = task.reference(t)[2]
            targets[k] = acceleration
        targets[-1] = 0.0  # the base orientation's
        com_task = ik.com_task
        self.acceleration = solve_planned_acceleration(
            self.model.model,
            self.motion_data,
            q,
            v,
            frame_ids,
            workspace,
            com_acceleration=None if com_task is None else com_acceleration,
            joint_cost=float(ik.posture_task.cost),
            damping=max(ik.damping, 1e-9),
            root_rows=ik.base_dofs,
            jacobians=None if kinematics is None else kinematics.jacobians,
            com_jacobian=None if kinematics is None else kinematics.com_jacobian,
        ).copy()
        return self.acceleration

    def sagittal_compensation(
        self, q: np.ndarray, v: np.ndarray, a: np.ndarray, ground_height: float
    ) -> np.ndarray:
        """The CoM acceleration (x, y) [m/s^2] against the ZMP shift along the heading.

        The shift of the motion's angular momentum rate (``ik.sagittal_momentum_compensation``):
        :func:`~wbm_control.motion_feedforward.angular_momentum_compensation` projected on the
        base's horizontal forward axis (world axes; q the estimate's). The swing leg's pitch about
        the hip is the term that put the G1's feed-forward ZMP on the stance toe. The lateral part
        is left out: with it the G1's IK walk on the compliant ground fell at 0.24 m (issue 14,
        not understood).
        """
        d = angular_momentum_compensation(
            self.model.model, self.momentum_data, q, v, a, float(ground_height)
        )
        x, y, z, w = q[3:7]
        forward = np.array([1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y + w * z)])  # R[:2, 0]
        length = float(np.hypot(forward[0], forward[1]))
        if length < 1e-6:  # the base's x axis vertical: no heading
            return np.zeros(2)
        forward /= length
        return float(d @ forward) * forward

    def motion_feedforward(
        self,
        estimate: BaseEstimate,
        contacts: ContactSet,
        q: np.ndarray,
        v: np.ndarray,
        a: np.ndarray,
        settings: ControllerSettings,
        jacobians_at_q: bool = False,
        kinematics: RobotKinematics | None = None,
    ) -> np.ndarray:
        """Joint torques (ndof,) [N m] of the IK's motion, see :func:`motion_torques`.

        ``jacobians_at_q``: :attr:`motion_data` holds the Jacobians at q
        (:meth:`planned_acceleration` at the same q ran just before); ``kinematics``: the
        step's kinematics at the same q, whose sole Jacobians are read.
        """
        active = contacts.active()
        tau, _ = motion_torques(
            self.model,
            self.motion_data,
            q,
            v,
            a,
            active,
            mu=settings.friction_coefficient,
            solver=self.distribution_solver,
            lifted=lifted_soles(active, estimate),
            jacobians_at_q=jacobians_at_q,
            jacobians=None if kinematics is None else kinematics.jacobians,
        )
        return tau

    def kinematics(self, estimate: BaseEstimate, tasks: TaskSet) -> RobotKinematics:
        """The step's kinematics at the estimate (CoM state and frame placements)."""
        return RobotKinematics(
            self.model.model, self.data, estimate.q, estimate.v, tasks.frame_ids, dynamics=False
        )

    def set_targets(
        self,
        kinematics: RobotKinematics,
        tasks: TaskSet,
        contacts: ContactSet,
        t: float,
        status: ControllerStatus,
    ) -> None:
        """The frame and base orientation targets of this step (task errors in ``status``).

        The frame tasks' reference accelerations at t are kept for :meth:`planned_acceleration`
        (``_reference_accelerations``, the tasks that are not held).
        """
        held = {
            tasks.task_of_sole[contact.sole.name]: contact.placement
            for contact in contacts.active()
        }
        accelerations = self._reference_accelerations
        accelerations.clear()
        for name, task in tasks.frames.items():
            if name in held:
                self.ik.set_frame_target(name, held[name])
                continue
            pose, velocity_ref, accelerations[name] = task.reference(t)
            self.ik.set_frame_target(name, pose, velocity_ref[:3])
            error = pose.translation - kinematics.placements[task.frame_id].translation
            status.task_errors[name] = norm(error)
        # base_orientation.ik_target(): its rotation reference at the origin.
        base = tasks.base_orientation
        self.ik.set_frame_rotation_target(base.name, base.rotation_reference)

    def com_target(
        self, com: np.ndarray, com_reference: np.ndarray, gain: float, dt: float
    ) -> np.ndarray:
        """The CoM reference [m] moved by the integral of the horizontal CoM error."""
        # On floats, numpy's arithmetic in its order: integral += (gain dt) (ref - com), clipped
        # as min(max(., -limit), limit), added to the reference (x, y).
        rx, ry, rz = com_reference.tolist()
        cx, cy = com[:2].tolist()
        ix, iy = self._com_integral.tolist()
        rate = gain * dt
        ix += rate * (rx - cx)
        iy += rate * (ry - cy)
        limit = COM_INTEGRAL_LIMIT
        ix = min(max(ix, -limit), limit)
        iy = min(max(iy, -limit), limit)
        self._com_integral = np.array([ix, iy])
        return np.array([rx + ix, ry + iy, rz])

    def walking_com_target(
        self,
        walking: WalkingReferences,
        com: np.ndarray,
        c_ref: np.ndarray,
        cd_ref: np.ndarray,
        zmp_measured: np.ndarray | None,
        dt: float,
    ) -> tuple[np.ndarray, np.ndarray]:
        """While walking: the CoM command of the ZMP-CoM controller (position [m], velocity [m/s]).

        Horizontally the walking stabilizer's ZMP (DCM feedback at the measured CoM) realized
        through the CoM command (:class:`ZmpComController`, started where the standing CoM
        target was); vertically the reference (the walking height).
        """
        controller = self.com_controller
        if controller.position is None and self._com_target is not None:
            controller.reset(self._com_target)
        command = controller.update(
            com_ref=c_ref,
            com_velocity_ref=cd_ref,
            com=com,
            zmp_desired=walking.zmp_command,
            zmp_measured=zmp_measured,
            dt=dt,
        )
        target = np.array([command.position[0], command.position[1], c_ref[2]])
        velocity = np.array([command.velocity[0], command.velocity[1], cd_ref[2]])
        return target, velocity

    def feedforward(
        self,
        estimate: BaseEstimate,
        contacts: ContactSet,
        com_acceleration: np.ndarray,
        settings: ControllerSettings,
        kinematics: RobotKinematics | None = None,
    ) -> np.ndarray:
        """Contact-consistent torques (ndof,) [N m], see :func:`contact_consistent_torques`."""
        active = contacts.active()
        net = static_net_wrench(self.mass, self.gravity)
        net[:3] += self.mass * np.asarray(com_acceleration)
        return contact_consistent_torques(
            self.model,
            self.data,
            estimate.q,
            active,
            net,
            mu=settings.friction_coefficient,
            solver=self.distribution_solver,
            lifted=lifted_soles(active, estimate),
            kinematics=kinematics,
        )

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
        """One step; fills ``status`` (balance, task errors, solve time).

        ``kinematics``: :meth:`kinematics` at the estimate, if the caller computed it already.

        Raises:
            NoSolutionFound: The IK's QP has no solution.
        """
        dt = settings.control_period
        if kinematics is None:
            kinematics = self.kinematics(estimate, tasks)
        built = time.perf_counter()
        balance = tasks.com.balance(kinematics, t, contacts)
        status.record_balance(balance)
        self.set_targets(kinematics, tasks, contacts, t, status)
        c_ref, cd_ref, _ = balance.reference
        walking, self.walking_references = self.walking_references, None
        if walking is None:
            target = self.com_target(kinematics.com, c_ref, settings.com.ik_integral_gain, dt)
            velocity = cd_ref
        else:
            target, velocity = self.walking_com_target(
                walking, kinematics.com, c_ref, cd_ref, status.zmp_measured, dt
            )
        self._com_target = target
        self.ik.set_com_target(target, velocity)
        solve_start = time.perf_counter()
        try:
            q_next, v_ik = self.ik.step(self.q, dt)
        except NoSolutionFound as error:  # within the limits, by quadprog (qp_fallback)
            q_next, v_ik = ik_fallback_step(self.ik, self.model.model, self.q, dt)
            status.record_fallback(IK_CLIPPED, f"{error}", time.perf_counter() - solve_start)
        solved = time.perf_counter()
        status.solve_time = solved - solve_start
        self.q = q_next
        effort = None
        ik_settings = settings.ik
        if ik_settings.gravity_feedforward and ik_settings.motion_feedforward:
            # At the estimate's configuration (gravity where the robot is: the servos' error
            # is not left to hold a sagging knee), the IK's velocity, the tasks' planned
            # accelerations with the DCM feedback's horizontal CoM acceleration.
            q = estimate.q
            com_acceleration = np.array(balance.reference[2], dtype=float)
            com_acceleration[:2] = balance.acceleration_xy
            # The Jacobians at q: the step's kinematics (at the estimate).
            shared = kinematics if kinematics.q is q else None
            # The frame tasks' reference accelerations as set_targets sampled them (same t).
            references = self._reference_accelerations
            a_ik = self.planned_acceleration(
                tasks, contacts, com_acceleration, t, q, v_ik, shared, references
            )
            if ik_settings.sagittal_momentum_compensation and contacts.active():
                com_acceleration[:2] += self.sagittal_compensation(q, v_ik, a_ik, balance.zmp[2])
                a_ik = self.planned_acceleration(
                    tasks, contacts, com_acceleration, t, q, v_ik, shared, references
                )
            effort = self.motion_feedforward(
                estimate,
                contacts,
                q,
                v_ik,
                a_ik,
                settings,
                jacobians_at_q=shared is None,
                kinematics=shared,
            )
        elif ik_settings.gravity_feedforward:
            acc_xy = balance.acceleration_xy
            effort = self.feedforward(
                estimate, contacts, np.array([acc_xy[0], acc_xy[1], 0.0]), settings, kinematics
            )
        fed = time.perf_counter()
        if effort is not None:
            # effort - friction_torques(dq) (friction compensation), clipped to the limits.
            model = self.model
            clipped = np.empty(effort.size)
            feedforward_kernels.friction_compensated_effort(
                effort, v_ik[6:], model.viscous_friction, model.coulomb_friction,
                model.torque_limits, bool(settings.torque.friction_compensation), clipped,
            )  # fmt: skip
            effort = clipped
        command = JointCommand(position=q_next[7:].copy(), velocity=v_ik[6:].copy(), effort=effort)
        timings = self.timings
        timings["targets"] = solve_start - built
        timings["IK (build + solve)"] = solved - solve_start
        timings["feed-forward"] = fed - solved
        timings["command"] = time.perf_counter() - fed
        return command
