"""The whole-body controller core: robot readings in, joint command out (no rclpy).

One :meth:`WholeBodyController.step` per control period:

1. estimate the base state from the IMU, the joint encoders and the foot F/T sensors
   (:mod:`wbm_control.base_estimator`; ground truth only if the caller passes it explicitly);
2. sample the task references (quintic trajectories towards the latest targets);
3. balance: DCM feedback picks the ZMP inside the support polygon (:mod:`wbm_control.balance`);
4. mode ``"ik"``: one differential-IK step (:mod:`wbm_control.differential_ik`) integrated into
   position and velocity references, plus contact-consistent gravity torques as feed-forward;
   mode ``"torque"``: the whole-body QP (:mod:`wbm_control.whole_body_qp`) gives the torques;
5. on a failed solve, switch to the safe command (hold the joints where they are, with damping)
   and say why in :attr:`WholeBodyController.status`; the next good step resumes control.

At the first step the held soles are the config's ``initial_contacts`` where the estimate puts
them, the frame task references are the frames' current poses, and the CoM reference moves from
the current CoM to above the centre of the held soles (same height) in ``target_duration``.
Frames: everything is in the estimator's world (the world reference sole at the origin at start).
"""

from __future__ import annotations

import time

import numpy as np
import pinocchio as pin

from wbm_control.balance import (
    DcmStabilizer,
    lip_natural_frequency,
    project_into_polygon,
    static_equilibrium_margin,
    zmp_from_ft,
)
from wbm_control.base_estimator import BaseEstimate, BaseEstimator
from wbm_control.contact_feedforward import contact_consistent_torques
from wbm_control.contacts import ContactSet
from wbm_control.controller_config import ControllerConfig, FrameTaskConfig
from wbm_control.controller_status import ControllerStatus
from wbm_control.differential_ik import DifferentialIK, IkFrameTaskSpec
from wbm_control.exceptions import InputError, NoSolutionFound, TargetRejected
from wbm_control.qp import DenseQPSolver
from wbm_control.trajectories import QuinticPointTrajectory, QuinticPoseTrajectory
from wbm_control.whole_body_qp import (
    AccelerationTask,
    ContactConstraint,
    build_whole_body_qp,
    solve_whole_body_qp,
)
from wbm_control.wrench_distribution import static_net_wrench
from wbm_description.robot_io import JointCommand, RobotReadings
from wbm_description.whole_body_model import WholeBodyModel

_LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


def _pose_error(target: pin.SE3, current: pin.SE3) -> np.ndarray:
    """(p* - p, log3(R* R^T)) in world axes [m, rad]."""
    return np.concatenate(
        [
            target.translation - current.translation,
            pin.log3(target.rotation @ current.rotation.T),
        ]
    )


class WholeBodyController:
    """The controller (see the module docstring).

    Args:
        model: Whole-body model of the robot (floating base, with soles, F/T sensors and IMU).
        config: Controller settings.
    """

    def __init__(self, model: WholeBodyModel, config: ControllerConfig):
        robot = model.config
        if robot is None or not robot.floating_base or not robot.soles:
            raise InputError("model", "a floating-base robot config with soles")
        self.model = model
        self.config = config
        self.pin_model = model.model
        self.data = model.model.createData()
        self.nv = model.nv
        self.ndof = model.ndof
        self.contacts = ContactSet(robot.soles)
        for name in config.initial_contacts:
            self.contacts.sole(name)
        self.sole_frames = {sole.name: sole.frame for sole in robot.soles}
        # Frame tasks: the configured ones, plus one per sole (its swing task when released).
        tasks = {task.name: task for task in config.frame_tasks}
        for sole in robot.soles:
            if not any(t.frame == sole.frame for t in tasks.values()):
                tasks[sole.name] = FrameTaskConfig(
                    sole.name, sole.frame, 1.0, 1.0, config.contact, 1.0
                )
        self.frame_task_configs = tasks
        self.task_of_sole = {
            sole.name: next(n for n, t in tasks.items() if t.frame == sole.frame)
            for sole in robot.soles
        }
        self.frame_ids = {name: model.frame_id(t.frame) for name, t in tasks.items()}
        self.base_frame_id = model.frame_id(config.base_orientation_frame)
        self.sole_frame_ids = {name: model.frame_id(f) for name, f in self.sole_frames.items()}
        self.estimator = BaseEstimator(
            model,
            load_threshold=config.load_threshold,
            unload_threshold=config.unload_threshold,
            initial_soles=tuple(config.initial_contacts),
            velocity_cutoff=config.velocity_cutoff or None,
        )
        self.stabilizer = DcmStabilizer(gain=config.dcm_gain, zmp_margin=config.zmp_margin)
        self.gravity = np.asarray(robot.gravity, dtype=float)
        self.mass = model.total_mass
        q_nominal = model.initial_configuration()
        self.posture_reference = model.initial_posture.copy()
        self.base_rotation_reference = model.frame_placement(
            q_nominal, config.base_orientation_frame
        ).rotation.copy()
        self.qp_solver = DenseQPSolver(name="whole_body_qp")
        self.distribution_solver = DenseQPSolver(name="wrench_distribution")
        self.ik: DifferentialIK | None = None
        self.last_qp = None
        if config.mode == "ik":
            self.ik = self._build_ik()
        self.status = ControllerStatus(mode=config.mode)
        self.reset()

    # ------------------------------------------------------------------ set-up

    def _build_ik(self) -> DifferentialIK:
        c = self.config
        specs = [
            IkFrameTaskSpec(
                name,
                t.frame,
                t.gains.weight * t.position_weight,
                t.gains.weight * t.orientation_weight,
                t.gains.ik_gain,
            )
            for name, t in self.frame_task_configs.items()
        ]
        specs.append(
            IkFrameTaskSpec(
                "base_orientation",
                c.base_orientation_frame,
                0.0,
                c.base_orientation.weight,
                c.base_orientation.ik_gain,
            )
        )
        ik = DifferentialIK(
            self.pin_model,
            frame_tasks=specs,
            com_cost=c.com.weight,
            com_gain=c.com.ik_gain,
            posture_cost=c.posture.weight,
            posture_gain=c.posture.ik_gain,
            velocity_limit=c.velocity_limit,
            configuration_limit_gain=c.configuration_limit_gain,
            damping=c.ik_damping,
        )
        q_posture = pin.neutral(self.pin_model)
        q_posture[7:] = self.posture_reference
        ik.set_posture_target(q_posture)
        return ik

    def reset(self) -> None:
        """Forget the state: the next step starts from the readings it is given."""
        self.estimator.reset()
        for name in self.contacts.active_names():
            self.contacts.release(name)
        self._started = False
        self._time = 0.0
        self._q_ik: np.ndarray | None = None
        self._resync = False
        self._com_trajectory: QuinticPointTrajectory | None = None
        self._frame_trajectories: dict[str, QuinticPoseTrajectory] = {}
        self._frame_home: dict[str, np.ndarray] = {}
        self._com_home: np.ndarray | None = None
        self._last_estimate: BaseEstimate | None = None
        self._hold_position: np.ndarray | None = None
        self._com_integral = np.zeros(2)

    @property
    def started(self) -> bool:
        """Whether a first step initialized the references."""
        return self._started

    @property
    def time(self) -> float:
        """Time of the last readings [s]."""
        return self._time

    def _start(self, estimate: BaseEstimate, t: float) -> None:
        q = estimate.q
        pin.framesForwardKinematics(self.pin_model, self.data, q)
        for name in self.config.initial_contacts:
            placement = self.data.oMf[self.sole_frame_ids[name]]
            self.contacts.activate(name, placement)
        for name, fid in self.frame_ids.items():
            pose = self.data.oMf[fid].copy()
            self._frame_home[name] = pose.translation.copy()
            self._frame_trajectories[name] = QuinticPoseTrajectory(pose, pose, t, 1.0)
        com = pin.centerOfMass(self.pin_model, self.data, q).copy()
        self._com_home = com.copy()
        polygon = self.contacts.support_polygon()
        goal = com.copy()
        if len(polygon) >= 3:
            centers = [c.center_in_world() for c in self.contacts.active()]
            goal[:2] = np.mean(centers, axis=0)[:2]
        duration = max(self.config.target_duration, 1e-3)
        self._com_trajectory = QuinticPointTrajectory(com, goal, t, duration)
        self._q_ik = q.copy()
        self._started = True

    # ------------------------------------------------------------------ targets and contacts

    def set_com_target(self, position: np.ndarray, *, duration: float | None = None) -> np.ndarray:
        """Move the CoM reference to a target in the world, with quintic time scaling.

        The target is clamped to lie over the support polygon (shrunk by the ZMP margin) and
        within 0.1 m of the initial CoM height.

        Args:
            position: Target [m] in the world.
            duration: Motion duration [s] (default: the config's target_duration).

        Returns:
            The accepted (possibly clamped) target.

        Raises:
            TargetRejected: NaN/inf, or called before the first step.
        """
        target = np.asarray(position, dtype=float)
        if target.shape != (3,) or not np.all(np.isfinite(target)):
            raise TargetRejected("com", f"expected 3 finite coordinates, got {target!r}")
        if not self._started:
            raise TargetRejected("com", "the controller has not started (no readings yet)")
        polygon = self.contacts.support_polygon()
        if len(polygon) >= 3:
            target = project_into_polygon(target, polygon, self.config.zmp_margin)
        height = self._com_home[2]
        target[2] = float(np.clip(target[2], height - 0.1, height + 0.1))
        start, _, _ = self._com_trajectory.sample(self._time)
        duration = self.config.target_duration if duration is None else duration
        self._com_trajectory = QuinticPointTrajectory(
            start, target, self._time, max(duration, 1e-3)
        )
        return target

    def set_frame_target(
        self, task: str, pose: pin.SE3, *, duration: float | None = None
    ) -> pin.SE3:
        """Move a frame task's reference to a pose in the world, with quintic time scaling.

        Positions farther than the task's max_reach from the frame's initial position are
        clamped onto that sphere.

        Returns:
            The accepted (possibly clamped) pose.

        Raises:
            TargetRejected: Unknown task, NaN/inf, or called before the first step.
        """
        if task not in self.frame_task_configs:
            raise TargetRejected(task, f"unknown task; known: {sorted(self.frame_task_configs)}")
        if not np.all(np.isfinite(pose.homogeneous)):
            raise TargetRejected(task, "the pose has NaN or inf values")
        if not self._started:
            raise TargetRejected(task, "the controller has not started (no readings yet)")
        target = pose.copy()
        home = self._frame_home[task]
        reach = self.frame_task_configs[task].max_reach
        offset = target.translation - home
        if np.linalg.norm(offset) > reach:
            target.translation = home + offset * (reach / np.linalg.norm(offset))
        start, _, _ = self._frame_trajectories[task].sample(self._time)
        duration = self.config.target_duration if duration is None else duration
        self._frame_trajectories[task] = QuinticPoseTrajectory(
            start, target, self._time, max(duration, 1e-3)
        )
        return target

    def frame_reference(self, task: str) -> pin.SE3:
        """Current reference pose of a frame task."""
        return self._frame_trajectories[task].sample(self._time)[0]

    def com_reference(self) -> np.ndarray:
        """Current CoM reference [m]."""
        return self._com_trajectory.sample(self._time)[0]

    def activate_contact(self, sole: str, placement: pin.SE3 | None = None) -> None:
        """Hold a sole at a placement (default: where the estimate puts it now)."""
        self.contacts.sole(sole)
        if placement is None:
            if self._last_estimate is None:
                raise InputError("placement", "a placement, or a step run before")
            pin.framesForwardKinematics(self.pin_model, self.data, self._last_estimate.q)
            placement = self.data.oMf[self.sole_frame_ids[sole]].copy()
        self.contacts.activate(sole, placement)

    def release_contact(self, sole: str) -> None:
        """Stop holding a sole: it follows its frame task (reference: where it is now)."""
        self.contacts.release(sole)
        task = self.task_of_sole[sole]
        if self._started and self._last_estimate is not None:
            pin.framesForwardKinematics(self.pin_model, self.data, self._last_estimate.q)
            pose = self.data.oMf[self.sole_frame_ids[sole]].copy()
            self._frame_trajectories[task] = QuinticPoseTrajectory(pose, pose, self._time, 1e-3)

    # ------------------------------------------------------------------ the step

    def hold_command(self, reason: str, joint_positions: np.ndarray | None = None) -> JointCommand:
        """The safe command: hold the joints where they were when it began, zero velocity.

        The robot's servos then hold position with their damping. The next normal step
        re-synchronizes the references with the robot.
        """
        if self._hold_position is None:
            if joint_positions is not None:
                self._hold_position = np.asarray(joint_positions, dtype=float).copy()
            elif self._last_estimate is not None:
                self._hold_position = self._last_estimate.q[7:].copy()
            else:
                self._hold_position = self.posture_reference.copy()
        self._resync = True
        self.status.safe = True
        self.status.reason = reason
        return JointCommand(
            position=self._hold_position.copy(), velocity=np.zeros(self.ndof), effort=None
        )

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
        estimate = self.estimator.update(readings)
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
            self._q_ik = estimate.q.copy()
            self._resync = False
        status = ControllerStatus(time=self._time, mode=self.config.mode, estimate=estimate)
        status.active_contacts = tuple(self.contacts.active_names())
        status.zmp_measured = zmp_from_ft(estimate.foot_wrenches_world)
        self.status = status
        try:
            if self.config.mode == "torque":
                command = self._torque_step(estimate, status)
            else:
                command = self._ik_step(estimate, status)
        except NoSolutionFound as error:
            return self.hold_command(f"{error}", estimate.q[7:])
        self._hold_position = None
        status.step_time = time.perf_counter() - start_time
        return command

    def _com_state(self, q: np.ndarray, v: np.ndarray):
        """CoM position, velocity, drift (dJ/dt v) [m, m/s, m/s^2]."""
        pin.centerOfMass(self.pin_model, self.data, q, v, np.zeros(self.nv))
        return self.data.com[0].copy(), self.data.vcom[0].copy(), self.data.acom[0].copy()

    def _balance(self, com, com_velocity, status, polygon=None):
        """CoM reference, its horizontal acceleration from DCM feedback and the ZMP command.

        The commanded ZMP is kept in ``polygon`` (default: the held soles' support polygon).
        """
        c_ref, cd_ref, cdd_ref = self._com_trajectory.sample(self._time)
        omega = lip_natural_frequency(max(com[2] - self._ground_height(), 0.05), -self.gravity[2])
        if polygon is None:
            polygon = self.contacts.support_polygon()
        acc_xy, zmp = self.stabilizer.com_acceleration(
            com,
            com_velocity,
            c_ref,
            cd_ref,
            cdd_ref,
            omega,
            polygon if len(polygon) >= 3 else None,
        )
        status.com, status.com_reference = com, c_ref
        if len(polygon) >= 3:
            status.static_margin = static_equilibrium_margin(com, polygon)
        status.dcm = com + com_velocity / omega
        status.zmp_command = np.array([zmp[0], zmp[1], self._ground_height()])
        status.task_errors["com"] = float(np.linalg.norm(c_ref - com))
        return c_ref, cd_ref, cdd_ref, acc_xy

    def _ground_height(self) -> float:
        active = self.contacts.active()
        if not active:
            return 0.0
        return float(np.mean([c.placement.translation[2] for c in active]))

    def _torque_step(self, estimate: BaseEstimate, status: ControllerStatus) -> JointCommand:
        c = self.config
        model, data = self.pin_model, self.data
        q, v = estimate.q, estimate.v
        nv = self.nv
        com, com_velocity, com_drift = self._com_state(q, v)
        # Frame drifts dJ/dt v: classical accelerations at a = 0 (forward kinematics with a = 0).
        pin.forwardKinematics(model, data, q, v, np.zeros(nv))
        fids = set(self.frame_ids.values()) | {self.base_frame_id}
        drifts = {
            fid: pin.getFrameClassicalAcceleration(model, data, fid, _LWA).vector for fid in fids
        }
        velocities = {fid: pin.getFrameVelocity(model, data, fid, _LWA).vector for fid in fids}
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        jacobians = {fid: pin.getFrameJacobian(model, data, fid, _LWA) for fid in fids}
        placements = {fid: data.oMf[fid].copy() for fid in fids}
        J_com = pin.jacobianCenterOfMass(model, data, q).copy()
        M = pin.crba(model, data, q)
        M = np.triu(M) + np.triu(M, 1).T
        h = pin.nonLinearEffects(model, data, q, v).copy()

        c_ref, cd_ref, cdd_ref, acc_xy = self._balance(com, com_velocity, status)
        com_acc = np.empty(3)
        com_acc[:2] = acc_xy
        com_acc[2] = (
            cdd_ref[2] + c.com.kp * (c_ref[2] - com[2]) + c.com.kd * (cd_ref[2] - com_velocity[2])
        )
        tasks = [AccelerationTask("com", J_com, com_drift, com_acc, c.com.weight)]
        # Base orientation.
        fid = self.base_frame_id
        rotation_error = pin.log3(self.base_rotation_reference @ placements[fid].rotation.T)
        status.task_errors["base_orientation"] = float(np.linalg.norm(rotation_error))
        tasks.append(
            AccelerationTask(
                "base_orientation",
                jacobians[fid][3:6],
                drifts[fid][3:6],
                c.base_orientation.kp * rotation_error
                - c.base_orientation.kd * velocities[fid][3:6],
                c.base_orientation.weight,
            )
        )
        # Posture.
        S = np.zeros((self.ndof, nv))
        S[:, 6:] = np.eye(self.ndof)
        tasks.append(
            AccelerationTask(
                "posture",
                S,
                np.zeros(self.ndof),
                c.posture.kp * (self.posture_reference - q[7:]) - c.posture.kd * v[6:],
                c.posture.weight,
            )
        )
        # Frame tasks (soles in contact are constraints instead).
        held = self.contacts.active()
        held_tasks = {self.task_of_sole[contact.sole.name] for contact in held}
        for name, task in self.frame_task_configs.items():
            if name in held_tasks:
                continue
            fid = self.frame_ids[name]
            pose, velocity_ref, acceleration_ref = self._frame_trajectories[name].sample(
                self._time
            )
            error = _pose_error(pose, placements[fid])
            status.task_errors[name] = float(np.linalg.norm(error[:3]))
            desired = (
                acceleration_ref
                + task.gains.kp * error
                + task.gains.kd * (velocity_ref - velocities[fid])
            )
            weight = task.gains.weight * np.array(
                [task.position_weight] * 3 + [task.orientation_weight] * 3
            )
            tasks.append(AccelerationTask(name, jacobians[fid], drifts[fid], desired, weight))
        # Contacts.
        contacts = []
        for contact in held:
            fid = self.sole_frame_ids[contact.sole.name]
            if fid not in jacobians:
                jacobians[fid] = pin.getFrameJacobian(model, data, fid, _LWA)
            J = jacobians[fid]
            drift = drifts[fid] if fid in drifts else self._drift(q, v, fid)
            velocity = J @ v
            error = _pose_error(contact.placement, placements.get(fid, data.oMf[fid]))
            desired = c.contact.kp * error - c.contact.kd * velocity
            contacts.append(
                ContactConstraint(
                    contact.sole.name,
                    J,
                    drift,
                    desired,
                    contact.cone(c.friction_coefficient, cop_margin=c.cop_margin),
                )
            )
        qp = build_whole_body_qp(
            M,
            h,
            contacts,
            tasks,
            self.model.torque_limits,
            wrench_weight=c.wrench_weight,
            acceleration_regularization=c.acceleration_regularization,
            min_normal_force=c.min_normal_force,
        )
        self.last_qp = qp  # for inspection (tests, benchmark)
        solve_start = time.perf_counter()
        solution = solve_whole_body_qp(qp, self.qp_solver)
        status.solve_time = time.perf_counter() - solve_start
        torques = solution.torques
        if c.friction_compensation:
            torques = torques - self.model.friction_torques(v[6:])
        torques = np.clip(torques, -self.model.torque_limits, self.model.torque_limits)
        if c.servo_references:
            dt = c.control_period
            a = solution.acceleration[6:]
            return JointCommand(
                position=q[7:] + v[6:] * dt + 0.5 * a * dt * dt,
                velocity=v[6:] + a * dt,
                effort=torques,
            )
        return JointCommand(effort=torques)

    def _drift(self, q: np.ndarray, v: np.ndarray, fid: int) -> np.ndarray:
        """dJ/dt v of a frame (LOCAL_WORLD_ALIGNED) in a scratch Data."""
        data = self.pin_model.createData()
        pin.forwardKinematics(self.pin_model, data, q, v, np.zeros(self.nv))
        return pin.getFrameClassicalAcceleration(self.pin_model, data, fid, _LWA).vector

    def _bearing_contacts(self, estimate: BaseEstimate) -> list:
        """Held contacts that bear weight (F/T load): all held ones if none does.

        A held sole that lifts off (a push rolls the robot onto the other foot) cannot push on
        the ground: the IK mode's feed-forward leaves its wrench out until its load returns.
        """
        active = self.contacts.active()
        bearing = [c for c in active if c.sole.name in estimate.loaded_soles]
        return bearing if bearing else active

    def _gravity_feedforward(
        self,
        q: np.ndarray,
        com_acceleration: np.ndarray | None = None,
        *,
        lifted: list[str] | tuple[str, ...] = (),
    ) -> np.ndarray:
        """Contact-consistent torques on the held soles, see :func:`contact_consistent_torques`."""
        net = static_net_wrench(self.mass, self.gravity)
        if com_acceleration is not None:
            net[:3] += self.mass * np.asarray(com_acceleration)
        return contact_consistent_torques(
            self.model,
            self.data,
            q,
            self.contacts.active(),
            net,
            mu=self.config.friction_coefficient,
            solver=self.distribution_solver,
            lifted=lifted,
        )

    def _ik_step(self, estimate: BaseEstimate, status: ControllerStatus) -> JointCommand:
        c = self.config
        ik = self.ik
        dt = c.control_period
        com, com_velocity, _ = self._com_state(estimate.q, estimate.v)
        c_ref, cd_ref, _, acc_xy = self._balance(com, com_velocity, status)
        held_tasks = {}
        for contact in self.contacts.active():
            held_tasks[self.task_of_sole[contact.sole.name]] = contact.placement
        pin.framesForwardKinematics(self.pin_model, self.data, estimate.q)
        for name in self.frame_task_configs:
            if name in held_tasks:
                ik.set_frame_target(name, held_tasks[name])
                continue
            pose, velocity_ref, _ = self._frame_trajectories[name].sample(self._time)
            ik.set_frame_target(name, pose, velocity_ref[:3])
            error = pose.translation - self.data.oMf[self.frame_ids[name]].translation
            status.task_errors[name] = float(np.linalg.norm(error))
        base_target = pin.SE3(self.base_rotation_reference, np.zeros(3))
        ik.set_frame_target("base_orientation", base_target)
        # Integral action removes the steady CoM offset that servo compliance leaves.
        c_target = c_ref.copy()
        self._com_integral += c.com_integral_gain * dt * (c_ref[:2] - com[:2])
        self._com_integral = np.clip(self._com_integral, -0.03, 0.03)
        c_target[:2] += self._com_integral
        ik.set_com_target(c_target, cd_ref)
        solve_start = time.perf_counter()
        q_next, v_ik = ik.step(self._q_ik, dt)
        status.solve_time = time.perf_counter() - solve_start
        self._q_ik = q_next
        effort = None
        if c.gravity_feedforward:
            effort = self._gravity_feedforward(
                estimate.q,
                np.array([acc_xy[0], acc_xy[1], 0.0]),
                lifted=[
                    contact.sole.name
                    for contact in self.contacts.active()
                    if contact not in self._bearing_contacts(estimate)
                ],
            )
        if effort is not None and c.friction_compensation:
            effort = effort - self.model.friction_torques(v_ik[6:])
        if effort is not None:
            effort = np.clip(effort, -self.model.torque_limits, self.model.torque_limits)
        return JointCommand(position=q_next[7:].copy(), velocity=v_ik[6:].copy(), effort=effort)
