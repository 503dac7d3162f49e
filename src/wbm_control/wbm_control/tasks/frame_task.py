"""A frame pose task: a hand, a foot in swing, any frame of the model.

The task owns its reference, a quintic pose trajectory towards the latest target (pink's
``set_target``), and gives the error, Jacobian and desired acceleration of the frame at a
:class:`~wbm_control.robot_kinematics.RobotKinematics` (pink's ``compute_error`` and
``compute_jacobian``). Frames: poses in the world; errors, velocities and accelerations
(linear, angular) in world axes at the frame origin.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from wbm_control.controller_settings import FrameTaskSettings
from wbm_control.differential_ik import IkFrameTaskSpec
from wbm_control.exceptions import TargetRejected
from wbm_control.feasible_targets import Clamped, ReachLimit
from wbm_control.jit import task_kernels
from wbm_control.robot_kinematics import RobotKinematics
from wbm_control.trajectories import QuinticPoseTrajectory
from wbm_control.whole_body_qp import AccelerationTask

#: What a pose reference is at one instant: (pose in the world, velocity (6,) [m/s, rad/s],
#: acceleration (6,) [m/s^2, rad/s^2]), both in world axes, linear part first.
PoseReference = tuple[pin.SE3, np.ndarray, np.ndarray]

NOT_STARTED = "the controller has not started (no readings yet)"


def pose_error(target: pin.SE3, current: pin.SE3) -> np.ndarray:
    """(p* - p, log3(R* R^T)) in world axes [m, rad]: the twist that moves current to target.

    Computed by :func:`wbm_control.jit.task_kernels.pose_error` (Pinocchio's log3 written out).
    """
    error = np.empty(6)
    _pose_error(target.rotation, target.translation, current.rotation, current.translation, error)
    return error


_pose_error = task_kernels.pose_error
_frame_acceleration_task = task_kernels.frame_acceleration_task
_frame_task_rows = task_kernels.frame_task_rows


class FrameTask:
    """Pose task of one frame, with its reference trajectory.

    Args:
        name: Task name (also names its target topic ``targets/<name>``).
        frame_id: Pinocchio id of the frame.
        settings: Frame, weights, gains and reach of the task.

    Attributes:
        weights: Per-row QP weights (6,): the task weight times the position weight (rows
            0-2) and the orientation weight (rows 3-5) (read-only).
    """

    def __init__(self, name: str, frame_id: int, settings: FrameTaskSettings):
        self.name = name
        self.frame = settings.frame
        self.frame_id = frame_id
        self.settings = settings
        self.weights = settings.weight * np.array(
            [settings.position_weight] * 3 + [settings.orientation_weight] * 3
        )
        self.weights.flags.writeable = False  # constant: the QP keeps its stacked weights
        self._trajectory: QuinticPoseTrajectory | None = None
        self._end_sample: tuple[QuinticPoseTrajectory, PoseReference] | None = None
        self._home: np.ndarray | None = None
        self.reach_limit: ReachLimit | None = None
        self.last_clamp = Clamped(None)
        self._tracked: PoseReference | None = None
        task_kernels.warm_up()

    # ------------------------------------------------------------------ reference

    def start(self, pose: pin.SE3, t: float) -> None:
        """Hold the frame where it is at the start; targets are clamped around this position."""
        self._home = pose.translation.copy()
        self._trajectory = QuinticPoseTrajectory(pose, pose, t, 1.0)
        self._tracked = None

    def reset(self) -> None:
        """Forget the reference (until the next :meth:`start`)."""
        self._trajectory = None
        self._home = None
        self.reach_limit = None
        self._tracked = None

    def clamp(self, pose: pin.SE3) -> Clamped:
        """The pose brought within reach.

        Within :attr:`reach_limit` (the max_reach ball around the start position and the
        limb's reach, see :mod:`wbm_control.feasible_targets`) when the controller set one at
        start, else within the max_reach ball alone.
        """
        if self.reach_limit is not None:
            return self.reach_limit.clamp(pose)
        reach = self.settings.max_reach
        offset = pose.translation - self._home
        if np.linalg.norm(offset) <= reach:
            return Clamped(pose.copy())
        target = pose.copy()
        target.translation = self._home + offset * (reach / np.linalg.norm(offset))
        return Clamped(target, (f"within max_reach {reach:g} m of the start position",))

    def set_target(self, pose: pin.SE3, t: float, duration: float) -> pin.SE3:
        """Move the reference from where it is at t to ``pose`` in ``duration`` [s].

        The position is clamped by :meth:`clamp` (what moved it: :attr:`last_clamp`).

        Returns:
            The accepted (possibly clamped) pose.

        Raises:
            TargetRejected: NaN/inf, or before :meth:`start`.
        """
        if not np.all(np.isfinite(pose.homogeneous)):
            raise TargetRejected(self.name, "the pose has NaN or inf values")
        if self._trajectory is None:
            raise TargetRejected(self.name, NOT_STARTED)
        self.last_clamp = self.clamp(pose)
        target = self.last_clamp.value
        start, _, _ = self.reference(t)
        self._trajectory = QuinticPoseTrajectory(start, target, t, max(duration, 1e-3))
        self._tracked = None
        return target

    def hold(self, pose: pin.SE3, t: float) -> None:
        """Make ``pose`` the reference from t on (a sole released where it is)."""
        self._trajectory = QuinticPoseTrajectory(pose, pose, t, 1e-3)
        self._tracked = None

    def track(self, reference: PoseReference) -> None:
        """A per-tick reference source (walking's swing foot).

        ``reference`` (pose, velocity and acceleration feed-forward) is the reference until the
        next :meth:`track`, :meth:`hold` or :meth:`set_target`.
        """
        self._tracked = reference

    def reference(self, t: float) -> PoseReference:
        """The reference at t: pose, velocity and acceleration (see :data:`PoseReference`).

        A per-tick source (walking) overrides the trajectory while it tracks. Once the trajectory
        has ended its sample no longer depends on t: it is computed once (velocity and
        acceleration read-only, the pose copied).
        """
        if self._tracked is not None:
            return self._tracked
        trajectory = self._trajectory
        if (t - trajectory.start_time) / trajectory.duration < 1.0:
            return trajectory.sample(t)
        if self._end_sample is None or self._end_sample[0] is not trajectory:
            pose, velocity, acceleration = trajectory.sample(t)
            velocity.flags.writeable = acceleration.flags.writeable = False
            self._end_sample = (trajectory, (pose, velocity, acceleration))
        pose, velocity, acceleration = self._end_sample[1]
        return pose.copy(), velocity, acceleration

    # ------------------------------------------------------------------ task-space quantities

    def compute_error(self, kinematics: RobotKinematics, target: pin.SE3) -> np.ndarray:
        """Pose error (6,) [m, rad] of the frame to ``target``, see :func:`pose_error`."""
        return pose_error(target, kinematics.placements[self.frame_id])

    def compute_jacobian(self, kinematics: RobotKinematics) -> np.ndarray:
        """The frame's Jacobian (6 x nv), LOCAL_WORLD_ALIGNED."""
        return kinematics.jacobians[self.frame_id]

    def compute_acceleration_task(
        self, kinematics: RobotKinematics, reference: PoseReference, error: np.ndarray
    ) -> AccelerationTask:
        """Torque mode: J a + dJ v = a_ref + kp e + kd (v_ref - v), weighted per row.

        In numpy: the reference of :meth:`torque_task`, which the torque step calls.

        Args:
            kinematics: The robot at this step (with dynamics).
            reference: The reference at this step.
            error: :meth:`compute_error` to the reference pose.
        """
        _, velocity_ref, acceleration_ref = reference
        s = self.settings
        desired = (
            acceleration_ref
            + s.kp * error
            + s.kd * (velocity_ref - kinematics.velocities[self.frame_id])
        )
        return AccelerationTask(
            self.name,
            self.compute_jacobian(kinematics),
            kinematics.drifts[self.frame_id],
            desired,
            self.weights,
        )

    def torque_task(self, kinematics: RobotKinematics, t: float) -> tuple[AccelerationTask, float]:
        """Torque mode: the task at t and its position error, in one kernel call.

        :meth:`compute_error` and :meth:`compute_acceleration_task` to :meth:`reference` at t,
        fused (:func:`~wbm_control.jit.task_kernels.frame_acceleration_task`).

        Returns:
            The acceleration task and the norm of the position error [m].
        """
        target, velocity_ref, acceleration_ref = self.reference(t)
        frame_id, s = self.frame_id, self.settings
        placement = kinematics.placements[frame_id]
        desired = np.empty(6)
        position_error = _frame_acceleration_task(
            target.rotation,
            target.translation,
            placement.rotation,
            placement.translation,
            velocity_ref,
            acceleration_ref,
            kinematics.velocities[frame_id],
            s.kp,
            s.kd,
            desired,
        )
        task = AccelerationTask(
            self.name,
            kinematics.jacobians[frame_id],
            kinematics.drifts[frame_id],
            desired,
            self.weights,
        )
        return task, position_error

    def torque_rows(self, kinematics: RobotKinematics, t: float, desired: np.ndarray) -> float:
        """:meth:`torque_task`'s desired acceleration into ``desired`` (6,) [m/s^2, rad/s^2].

        The torque step's (:mod:`wbm_control.torque_qp`, which reads the Jacobian and drift rows
        itself): the frame's pose and twist read from the kinematics' arrays by offset, one
        kernel call (:func:`~wbm_control.jit.task_kernels.frame_task_rows`, the arithmetic of
        :meth:`torque_task`'s).

        Returns:
            The norm of the position error [m].
        """
        target, velocity_ref, acceleration_ref = self.reference(t)
        s, layout = self.settings, kinematics.layout
        row = layout.frame_index[self.frame_id]
        return _frame_task_rows(
            target.rotation,
            target.translation,
            kinematics.poses,
            row,
            kinematics.buffer,
            layout.velocities + 6 * row,
            velocity_ref,
            acceleration_ref,
            s.kp,
            s.kd,
            desired,
        )

    def ik_spec(self) -> IkFrameTaskSpec:
        """The task in the IK: its costs [1/m, 1/rad] and gain [1/s]."""
        s = self.settings
        return IkFrameTaskSpec(
            self.name,
            self.frame,
            s.weight * s.position_weight,
            s.weight * s.orientation_weight,
            s.ik_gain,
        )
