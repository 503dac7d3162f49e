"""The whole-body controller core: robot readings in, joint command out (no rclpy).

One :meth:`WholeBodyController.step` per control period:

1. estimate the base state from the IMU, the joint encoders and the foot F/T sensors
   (:mod:`wbm_control.base_estimator`; ground truth only if the caller passes it explicitly);
   soles without an F/T sensor get their contact state and load from the plan, kinematics and
   joint torques (:mod:`wbm_control.contact_estimation`, used at the next step), and the ZMP
   is also estimated from the whole-body dynamics (:mod:`wbm_control.zmp_estimation`);
2. run the mode's step over the tasks (:mod:`wbm_control.tasks`): the task references (quintic
   trajectories towards the latest targets), the balance feedback (DCM feedback picks the ZMP
   inside the support polygon, :mod:`wbm_control.balance`), then
   mode ``"torque"``: the whole-body QP gives the torques (:mod:`wbm_control.torque_mode`);
   mode ``"ik"``: one differential-IK step integrated into position and velocity references,
   plus contact-consistent gravity torques as feed-forward (:mod:`wbm_control.ik_mode`);
3. on a failed solve, switch to the safe command (hold the joints where they are, with the
   contact-consistent static torques that carry the weight on the held soles,
   :meth:`WholeBodyController.hold_command`) and say why in
   :attr:`WholeBodyController.status`; the next good step resumes control.

At the first step the held soles are the settings' ``initial_contacts`` where the estimate puts
them, the frame task references are the frames' current poses, and the CoM reference moves from
the current CoM to above the centre of the held soles (same height) in ``target_duration``.
Frames: everything is in the estimator's world (the world reference sole at the origin at start).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

import numpy as np
import pinocchio as pin

from wbm_control.balance import zmp_from_ft
from wbm_control.base_estimator import BaseEstimate, BaseEstimator
from wbm_control.contact_estimation import ContactEstimate, ContactEstimator
from wbm_control.contacts import ContactSet
from wbm_control.controller_settings import ControllerSettings
from wbm_control.controller_status import ControllerStatus
from wbm_control.exceptions import InputError, NoSolutionFound, TargetRejected
from wbm_control.feasible_targets import ReachLimit, held_sole_rejection
from wbm_control.ik_mode import IkMode
from wbm_control.qp import DenseQPSolver
from wbm_control.qp_fallback import static_hold_command
from wbm_control.robot_kinematics import RobotKinematics
from wbm_control.tasks import FrameTask, TaskSet
from wbm_control.torque_mode import TorqueMode
from wbm_control.zmp_estimation import ZmpEstimator
from wbm_description.robot_io import JointCommand, RobotReadings
from wbm_description.whole_body_model import WholeBodyModel


class ControlMode(Protocol):
    """What a controller mode does (:class:`TorqueMode`, :class:`IkMode`)."""

    name: str
    timings: dict[str, float]  # wall time [s] of each part of its last step

    def reset(self) -> None:
        """Forget the mode's state."""

    def kinematics(self, estimate: BaseEstimate, tasks: TaskSet) -> RobotKinematics:
        """The step's kinematics at the estimate (computed once per step by the controller)."""

    def resync(self, q: np.ndarray) -> None:
        """Continue from the configuration q (after the start or a safe hold)."""

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
        """One step at the estimate (raises NoSolutionFound when its QP fails)."""


class WholeBodyController:
    """The controller (see the module docstring).

    Args:
        model: Whole-body model of the robot (floating base, with soles, F/T sensors and IMU).
        settings: Controller settings. The attribute may be replaced between steps; the mode's
            and the QP's settings are read at each step, the tasks' gains and the estimator's
            thresholds at construction.

    Attributes:
        tasks: The tasks (frame tasks by name in ``tasks.frames``).
        contacts: The held soles.
        mode: The mode's step (:class:`TorqueMode` or :class:`IkMode`).
        status: What the last step did.
        timings: Wall time [s] of each part of the last step: ``estimator``, ``kinematics``
            (the one pass the ZMP estimate and the mode share), ``ZMP estimation``, then the
            mode's parts (its ``timings``).
        reference_sources: Called at each step with (controller, estimate, time) after the
            estimate and before the mode's step: per-tick sources of task references and
            contact switches (walking, :mod:`wbm_control.walking_behaviour`).
    """

    def __init__(self, model: WholeBodyModel, settings: ControllerSettings):
        robot = model.config
        if robot is None or not robot.floating_base or not robot.soles:
            raise InputError("model", "a floating-base robot config with soles")
        self.model = model
        self.settings = settings
        self.pin_model = model.model
        self.data = model.model.createData()
        self.ndof = model.ndof
        self.contacts = ContactSet(robot.soles)
        for name in settings.initial_contacts:
            self.contacts.sole(name)
        self.tasks = TaskSet.from_settings(model, settings)
        self.sole_frame_ids = {sole.name: model.frame_id(sole.frame) for sole in robot.soles}
        estimator = settings.estimator
        self.estimator = BaseEstimator(
            model,
            load_threshold=estimator.load_threshold,
            unload_threshold=estimator.unload_threshold,
            initial_soles=tuple(settings.initial_contacts),
            velocity_cutoff=estimator.velocity_cutoff or None,
            flat_ground=estimator.flat_ground,
            ground_tolerance=estimator.flat_ground_tolerance,
            # The accelerometer removes the velocity filter's lag where the config says so, in
            # mode torque (estimator.accelerometer; README "G1: lateral pushes while walking").
            accelerometer=estimator.accelerometer and settings.mode == "torque",
        )
        # Soles without an F/T sensor: contact state and load estimated (none on iCub).
        sensorless = [s.name for s in robot.soles if s.name not in self.estimator.sensor_of_sole]
        self.contact_estimator = (
            ContactEstimator(
                model,
                use_joint_torques=estimator.joint_torques,
                load_threshold=estimator.load_threshold,
                unload_threshold=estimator.unload_threshold,
            )
            if sensorless
            else None
        )
        self.zmp_estimator = ZmpEstimator(model)
        self.mode: ControlMode = (
            IkMode(model, settings, self.tasks) if settings.mode == "ik" else TorqueMode(model)
        )
        self.status = ControllerStatus(mode=settings.mode)
        self.timings: dict[str, float] = {}
        self.reference_sources: list[
            Callable[[WholeBodyController, BaseEstimate, float], None]
        ] = []
        self.reset()

    @property
    def frame_tasks(self) -> dict[str, FrameTask]:
        """The frame tasks by name (each has a target topic ``targets/<name>``)."""
        return self.tasks.frames

    def reset(self) -> None:
        """Forget the state: the next step starts from the readings it is given."""
        self.estimator.reset()
        self.zmp_estimator.reset()
        self.contact_estimate: ContactEstimate | None = None
        for name in self.contacts.active_names():
            self.contacts.release(name)
        self.tasks.reset()
        self.mode.reset()
        self._started = False
        self._time = 0.0
        self._resync = False
        self._last_estimate: BaseEstimate | None = None
        self._hold_position: np.ndarray | None = None
        self._hold_effort: np.ndarray | None = None
        self._hold_solver: DenseQPSolver | None = None

    @property
    def started(self) -> bool:
        """Whether a first step initialized the references."""
        return self._started

    @property
    def time(self) -> float:
        """Time of the last readings [s]."""
        return self._time

    def _sole_placement(self, q: np.ndarray, sole: str) -> pin.SE3:
        pin.framesForwardKinematics(self.pin_model, self.data, q)
        return self.data.oMf[self.sole_frame_ids[sole]].copy()

    def _start(self, estimate: BaseEstimate, t: float) -> None:
        q = estimate.q
        pin.framesForwardKinematics(self.pin_model, self.data, q)
        for name in self.settings.initial_contacts:
            self.contacts.activate(name, self.data.oMf[self.sole_frame_ids[name]])
        for task in self.tasks.frames.values():
            task.start(self.data.oMf[task.frame_id].copy(), t)
        self._set_reach_limits()
        com = pin.centerOfMass(self.pin_model, self.data, q).copy()
        goal = com.copy()
        if len(self.contacts.support_polygon()) >= 3:
            centers = [c.center_in_world() for c in self.contacts.active()]
            goal[:2] = np.mean(centers, axis=0)[:2]
        self.tasks.com.start(com, goal, t, max(self.settings.target_duration, 1e-3))
        self.mode.resync(q)
        self._started = True

    def _set_reach_limits(self) -> None:
        """Each frame task's reach (feasible_targets.ReachLimit), from ``self.data`` at start."""
        frames = self.tasks.frames
        for name, task in frames.items():
            others = [other.frame_id for n, other in frames.items() if n != name]
            task.reach_limit = ReachLimit.at_start(
                self.pin_model,
                self.data,
                task.frame_id,
                others,
                max_reach=task.settings.max_reach,
                reach_fraction=task.settings.reach_fraction,
            )

    # ------------------------------------------------------------------ targets and contacts

    def set_com_target(self, position: np.ndarray, *, duration: float | None = None) -> np.ndarray:
        """Move the CoM reference to a target in the world, with quintic time scaling.

        The target is clamped to lie over the support polygon (shrunk by the ``com:``
        section's target_margin) and within its height band around the initial CoM height
        (:func:`~wbm_control.feasible_targets.clamp_com_target`); what moved it is in
        :meth:`target_note`.

        Args:
            position: Target [m] in the world.
            duration: Motion duration [s] (default: the settings' target_duration).

        Returns:
            The accepted (possibly clamped) target.

        Raises:
            TargetRejected: NaN/inf, or called before the first step.
        """
        duration = self.settings.target_duration if duration is None else duration
        return self.tasks.com.set_target(
            position,
            self._time,
            duration,
            self.contacts.support_polygon(),
            self.contacts.ground_height(),
        )

    def set_frame_target(
        self, task: str, pose: pin.SE3, *, duration: float | None = None
    ) -> pin.SE3:
        """Move a frame task's reference to a pose in the world, with quintic time scaling.

        The position is clamped within the task's max_reach of the frame's initial position and
        within its limb's reach (:class:`~wbm_control.feasible_targets.ReachLimit`); what moved
        it is in :meth:`target_note`. The task of a sole held in contact takes no target.

        Returns:
            The accepted (possibly clamped) pose.

        Raises:
            TargetRejected: Unknown task, a held sole's task, NaN/inf, or called before the
                first step.
        """
        if task not in self.tasks.frames:
            raise TargetRejected(task, f"unknown task; known: {sorted(self.tasks.frames)}")
        for sole in self.contacts.active_names():
            if self.tasks.task_of_sole[sole] == task:
                raise TargetRejected(task, held_sole_rejection(task, sole))
        duration = self.settings.target_duration if duration is None else duration
        return self.tasks.frames[task].set_target(pose, self._time, duration)

    def target_note(self, task: str) -> str:
        """What clamped the last target of ``task`` ("com" or a frame task), "" if nothing."""
        owner = self.tasks.com if task == self.tasks.com.name else self.tasks.frames[task]
        return owner.last_clamp.note

    def frame_reference(self, task: str) -> pin.SE3:
        """Current reference pose of a frame task."""
        return self.tasks.frames[task].reference(self._time)[0]

    def com_reference(self) -> np.ndarray:
        """Current CoM reference [m]."""
        return self.tasks.com.reference(self._time)[0]

    def activate_contact(self, sole: str, placement: pin.SE3 | None = None) -> None:
        """Hold a sole at a placement (default: where the estimate puts it now)."""
        self.contacts.sole(sole)
        if placement is None:
            if self._last_estimate is None:
                raise InputError("placement", "a placement, or a step run before")
            placement = self._sole_placement(self._last_estimate.q, sole)
        self.contacts.activate(sole, placement)

    def release_contact(self, sole: str) -> None:
        """Stop holding a sole: it follows its frame task (reference: where it is now)."""
        self.contacts.release(sole)
        task = self.tasks.frames[self.tasks.task_of_sole[sole]]
        if self._started and self._last_estimate is not None:
            task.hold(self._sole_placement(self._last_estimate.q, sole), self._time)

    # ------------------------------------------------------------------ the step

    def hold_command(self, reason: str, joint_positions: np.ndarray | None = None) -> JointCommand:
        """The safe command: hold the robot standing where it was when the hold began.

        Position references: the joints when the hold began (``joint_positions``, else the last
        estimate's, else the posture reference), zero velocity; feed-forward: the
        contact-consistent static torques at the last estimate's base with those joints, over
        the held soles (:func:`~wbm_control.qp_fallback.static_hold_command`, the QP fallback's
        static level): the soles carry the weight and the servos only correct deviations. They
        are computed once per hold (the hold is static). Without an estimate (no step yet), or
        when they cannot be computed, the hold is position-only (servo stiffness and damping).
        The next normal step re-synchronizes the references with the robot.
        """
        if self._hold_position is None:
            if joint_positions is not None:
                self._hold_position = np.asarray(joint_positions, dtype=float).copy()
            elif self._last_estimate is not None:
                self._hold_position = self._last_estimate.q[7:].copy()
            else:
                self._hold_position = self.tasks.posture.reference.copy()
            self._hold_effort = self._static_hold_effort(self._hold_position)
        self._resync = True
        self.status.safe = True
        self.status.reason = reason
        effort = None if self._hold_effort is None else self._hold_effort.copy()
        return JointCommand(
            position=self._hold_position.copy(), velocity=np.zeros(self.ndof), effort=effort
        )

    def _static_hold_effort(self, joints: np.ndarray) -> np.ndarray | None:
        """The hold's feed-forward torques [N m] at the last estimate's base and ``joints``."""
        if self._last_estimate is None:
            return None
        q = self._last_estimate.q.copy()
        q[7:] = joints
        if self._hold_solver is None:
            self._hold_solver = DenseQPSolver(name="wrench_distribution (safe hold)")
        try:
            command = static_hold_command(
                self.model,
                self.data,
                q,
                self.contacts.active(),
                self.settings.friction_coefficient,
                self._hold_solver,
            )
        except (NoSolutionFound, np.linalg.LinAlgError, ValueError):
            return None
        return command.effort if np.all(np.isfinite(command.effort)) else None

    def step(
        self,
        readings: RobotReadings,
        *,
        ground_truth: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> JointCommand:
        """One control step.

        Args:
            readings: The robot's sensors.
            ground_truth: (q, v) to use instead of the estimate: only for tests and
                diagnostics, never needed.

        Returns:
            The joint command (safe hold command when the solve failed; see ``status``).
        """
        start_time = time.perf_counter()
        estimate = self.estimator.update(
            readings, None if self.contact_estimate is None else self.contact_estimate.loads
        )
        self.timings = {"estimator": time.perf_counter() - start_time}
        if ground_truth is not None:
            estimate = BaseEstimate(
                np.asarray(ground_truth[0], float),
                np.asarray(ground_truth[1], float),
                estimate.loaded_soles,
                estimate.foot_wrenches_world,
                estimate.normal_forces,
            )
        self._time = float(readings.time)
        self._last_estimate = estimate
        if not self._started:
            self._start(estimate, self._time)
        if self._resync:
            self.mode.resync(estimate.q)
            self._resync = False
        for source in self.reference_sources:
            source(self, estimate, self._time)
        status = ControllerStatus(time=self._time, mode=self.settings.mode, estimate=estimate)
        status.active_contacts = tuple(self.contacts.active_names())
        status.zmp_measured = zmp_from_ft(estimate.foot_wrenches_world)
        ground = self.contacts.ground_height()
        kinematics_start = time.perf_counter()
        kinematics = self.mode.kinematics(estimate, self.tasks)
        zmp_start = time.perf_counter()
        status.zmp_estimated = self.zmp_estimator.update(
            estimate.q,
            estimate.v,
            self._time,
            ground_height=ground,
            still_frames=[self.contacts.sole(name).frame for name in estimate.loaded_soles],
            kinematics=kinematics,
            still_base_velocity=estimate.still_base_velocity,
        ).zmp
        self.timings["kinematics"] = zmp_start - kinematics_start
        self.timings["ZMP estimation"] = time.perf_counter() - zmp_start
        if self.contact_estimator is not None:
            self.contact_estimate = self.contact_estimator.update(
                estimate.q,
                estimate.v,
                self.contacts.active_names(),
                efforts=readings.joint_efforts,
                ground_height=ground,
            )
            status.estimated_contacts = self.contact_estimate.contacts
        self.status = status
        try:
            command = self.mode.step(
                estimate, self.tasks, self.contacts, self._time, self.settings, status, kinematics
            )
        except NoSolutionFound as error:
            return self.hold_command(f"{error}", estimate.q[7:])
        self._hold_position = None
        status.step_time = time.perf_counter() - start_time
        self.timings.update(self.mode.timings)
        return command
