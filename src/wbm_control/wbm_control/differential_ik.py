"""Differential IK as a weighted QP on pink (seed 002, chapter 4; pymanoid's IK).

Each step solves, for the configuration displacement dq = v dt (pink's formulation),

    minimize    sum_tasks 1/2 || J_t dq + (k_t dt) e_t ||^2_{W_t}  +  1/2 damping ||dq||^2
    subject to  configuration limits and |dq_j| <= v_max,j dt,

with e_t the task error, W_t = diag(cost_t)^2 and k_t the task gain in [1/s]: pink's per-step
gain is set to min(1, k_t dt) at every call, so the commanded task velocity is k_t e_t whatever
the control rate. Targets can carry a feed-forward velocity, folded into the target (a first-order
tracker with target p + pd / k has no steady lag on a ramp).

:meth:`DifferentialIK.build` assembles pink's QP itself, term by term with pink's formulas (frame
task: error log6(T_frame^-1 T_target) and Jacobian -Jlog6 J_local; CoM; posture; configuration
and velocity limits), from one kinematics pass (joint Jacobians, the tasks' frames, the CoM) and
one compiled call (:func:`wbm_control.jit.ik_kernels.build_ik_qp`: Pinocchio's log6 and Jlog6
written out), without pink's per-step ``Configuration``; the tasks' frame placements are read
in place from Pinocchio's ``data.oMf`` (:class:`~wbm_control.pinocchio_views.DataViews`) after one
``updateFramePlacements``. Targets are kept as arrays (4 x 4 poses,
feed-forward velocities); the frame and CoM tasks' pink cost arrays are views of the IK's cost
rows, and the gains are fixed at construction (``gains`` is read-only).
:meth:`DifferentialIK.build_with_pink` is pink's own ``build_ik``, the reference the tests
compare it with (same matrices to rounding, 1e-12 relative to their largest entry); the numpy
build it replaced is ``tests/control/ik_reference.py``.

Convergence: the step is only as good as the QP's solution. qpsolvers' default tolerances for
ProxQP (1e-3 class) leave steps that stall or fail on active velocity and position limits (a
2-link arm reaching a reachable point ended 0.63 m off after 300 steps). The default solver is
therefore quadprog (:data:`DEFAULT_SOLVER`), an exact dense active-set method: on these small
dense problems (iCub: 38 variables) it solves to machine precision and is also the fastest
(iCub IK build + solve 0.64 ms against 1.06 ms for ProxQP at its default tolerances and 18 to
330 ms for ProxQP at 1e-9 absolute, which iterates long on active limits; measured in one run).
ProxQP, when chosen, gets tight options (:data:`DEFAULT_SOLVER_OPTIONS`: absolute 1e-9, no
relative tolerance). A step whose solver fails is solved again by :data:`FALLBACK_SOLVER` before
:class:`~wbm_control.exceptions.NoSolutionFound` is raised; :attr:`DifferentialIK.fallbacks`
counts those steps.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import pinocchio as pin
import qpsolvers
import quadprog
from pink import Configuration, build_ik
from pink.limits import ConfigurationLimit, VelocityLimit
from pink.tasks import ComTask, FrameTask, PostureTask
from pink.utils import get_root_joint_dim

from wbm_control.exceptions import InputError, NoSolutionFound
from wbm_control.jit import ik_kernels
from wbm_control.pinocchio_views import DataViews
from wbm_description.exceptions import NameNotFound

LOCAL = pin.ReferenceFrame.LOCAL
POSITION = pin.KinematicLevel.POSITION

DEFAULT_SOLVER = "quadprog"
"""The qpsolvers backend of the IK unless another is given: exact, and the fastest here."""

DEFAULT_SOLVER_OPTIONS: dict[str, dict[str, float]] = {
    "proxqp": {"eps_abs": 1e-9, "eps_rel": 0.0},
}
"""Solver options used unless given (per qpsolvers backend): tight enough to converge."""

FALLBACK_SOLVER = "quadprog"
"""The backend that solves a step again when another configured one fails (if installed)."""


@dataclass(frozen=True)
class IkFrameTaskSpec:
    """A frame pose task of the IK.

    Attributes:
        name: Task name.
        frame: Frame of the model.
        position_cost: Weight of the position error [1/m].
        orientation_cost: Weight of the orientation error [1/rad].
        gain: Task gain k [1/s].
    """

    name: str
    frame: str
    position_cost: float
    orientation_cost: float
    gain: float


class DifferentialIK:
    """Velocity-level IK with frame, CoM and posture tasks and joint limits.

    Args:
        model: Pinocchio model (copied: pink caches data on the model it is given).
        frame_tasks: Frame pose tasks.
        com_cost: Weight of the CoM task [1/m] (None: no CoM task).
        com_gain: Its gain [1/s].
        posture_cost: Weight of the posture task [1/rad].
        posture_gain: Its gain [1/s].
        velocity_limit: Joint velocity limits [rad/s], one per joint (ndof,) or a scalar.
        configuration_limit_gain: pink's fraction (0, 1] of the distance to a position limit
            that one step may cover.
        damping: Tikhonov damping of dq [cost^2 / rad^2].
        solver: qpsolvers backend.
        solver_options: Keyword arguments of the backend (e.g. ``eps_abs``); None: the
            backend's entry of :data:`DEFAULT_SOLVER_OPTIONS`, if any.

    Attributes:
        fallbacks: Steps solved by :data:`FALLBACK_SOLVER` after the solver failed.
    """

    def __init__(
        self,
        model: pin.Model,
        *,
        frame_tasks: Sequence[IkFrameTaskSpec] = (),
        com_cost: float | None = None,
        com_gain: float = 10.0,
        posture_cost: float = 1e-2,
        posture_gain: float = 1.0,
        velocity_limit: float | np.ndarray = 3.0,
        configuration_limit_gain: float = 0.5,
        damping: float = 1e-6,
        solver: str = DEFAULT_SOLVER,
        solver_options: dict | None = None,
    ):
        self.model = pin.Model(model)
        self.data = self.model.createData()
        self.solver = solver
        if solver_options is None:
            solver_options = DEFAULT_SOLVER_OPTIONS.get(solver, {})
        self.solver_options = dict(solver_options)
        self.fallbacks = 0
        self.damping = float(damping)
        floating = self.model.joints[1].nq == 7 if self.model.njoints > 1 else False
        self.base_dofs = 6 if floating else 0
        ndof = self.model.nv - self.base_dofs
        limit = np.broadcast_to(np.asarray(velocity_limit, dtype=float), (ndof,))
        if not np.all(limit > 0.0):
            raise InputError("velocity_limit", "positive joint velocity limits [rad/s]", limit)
        full_limit = np.concatenate([np.full(self.base_dofs, np.inf), limit])
        self.limits = [
            ConfigurationLimit(self.model, config_limit_gain=configuration_limit_gain),
            VelocityLimit(self.model, full_limit),
        ]
        self.frame_tasks: dict[str, FrameTask] = {}
        self.gains: dict[str, float] = {}
        for spec in frame_tasks:
            if not self.model.existFrame(spec.frame):
                names = [f.name for f in self.model.frames]
                raise NameNotFound("frame", spec.frame, names, where=f"IK task '{spec.name}'")
            self.frame_tasks[spec.name] = FrameTask(
                spec.frame,
                position_cost=spec.position_cost,
                orientation_cost=spec.orientation_cost,
            )
            self.gains[spec.name] = spec.gain
        self.com_task = ComTask(cost=com_cost) if com_cost is not None else None
        self.gains["com"] = com_gain
        self.posture_task = PostureTask(cost=posture_cost)
        self.gains["posture"] = posture_gain
        self.posture_task.set_target(pin.neutral(self.model))
        # The direct build's arrays (see _build_arrays): the tasks in frame_tasks' order, then
        # the CoM; pink's cost arrays are views of ``_costs`` (their set_*_cost write there).
        names = list(self.frame_tasks)
        n_frames = len(names)
        nv = self.model.nv
        self._task_index = {name: k for k, name in enumerate(names)}
        self._frame_id_list = [self.model.getFrameId(self.frame_tasks[n].frame) for n in names]
        self._costs = np.zeros((n_frames + 1, 6))
        for k, name in enumerate(names):
            self._costs[k] = self.frame_tasks[name].cost
            self.frame_tasks[name].cost = self._costs[k]
        if self.com_task is not None:
            self._costs[n_frames, :3] = self.com_task.cost
            self.com_task.cost = self._costs[n_frames, :3]
        self.gains = MappingProxyType(self.gains)  # read into _gains: fixed from here
        self._gains = np.array([self.gains[n] for n in names] + [com_gain], dtype=float)
        self._supports = np.zeros((n_frames + 1, nv), dtype=np.uint8)
        for k, frame_id in enumerate(self._frame_id_list):
            joint = self.model.frames[frame_id].parentJoint
            for j in self.model.supports[joint]:
                if j > 0:
                    start = self.model.joints[j].idx_v
                    self._supports[k, start : start + self.model.joints[j].nv] = 1
        self._supports[n_frames] = 1
        self._frame_poses = np.zeros((n_frames, 4, 4))
        self._frame_poses[:, 3, 3] = 1.0  # the bottom rows (0, 0, 0, 1), never written again
        self._frame_id_array = np.array(self._frame_id_list, dtype=np.int64)
        # Pinocchio's frame placements in place (nframes x 12), or None where its layout is not
        # one array (pinocchio_views): then one updateFramePlacement per task.
        views = DataViews(self.model, self.data)
        in_place = "frame_placements" not in views.copied
        self._frame_placements = views.frame_placements if in_place else None
        self._data_views = views
        self._target_poses = np.zeros((n_frames, 4, 4))
        self._target_velocities = np.zeros((n_frames, 3))
        self._target_set = np.zeros(n_frames, dtype=bool)
        self._com = np.zeros((3, 3))  # the CoM, its target, the target's velocity
        self._com_set = False
        self._targets_complete = False
        self._no_com_jacobian = np.zeros((3, nv))
        # The configuration index of each velocity, when every joint past the root has one of
        # each (revolute, prismatic): the kernel computes the differences; else pinocchio.
        self._root_nv = get_root_joint_dim(self.model)[1]
        q_index = np.full(nv, -1, dtype=np.int64)
        one_dof = True
        for joint in self.model.joints[1:]:
            if joint.idx_v < self._root_nv:
                continue
            if joint.nq != 1 or joint.nv != 1:
                one_dof = False
            else:
                q_index[joint.idx_v] = joint.idx_q
        self._q_index = q_index
        self._differences = np.zeros((3, nv))
        self._position_limits = np.vstack(
            [self.model.upperPositionLimit, self.model.lowerPositionLimit]
        )
        self._params = np.zeros(ik_kernels.N_PARAMS)
        self._params[ik_kernels.COM_GAIN] = com_gain
        self._params[ik_kernels.HAS_COM] = 1.0 if self.com_task is not None else 0.0
        self._params[ik_kernels.POSTURE_GAIN] = posture_gain
        self._params[ik_kernels.LIMIT_GAIN] = self.limits[0].config_limit_gain
        configuration_limit, velocity_limit = self.limits
        # A writeable copy (pink's is read-only: another kernel signature).
        self._configuration_indices = np.array(configuration_limit.indices, dtype=np.int64)
        if configuration_limit.projection_matrix is None:
            self._configuration_indices = np.zeros(0, dtype=np.int64)
        self._params[ik_kernels.DIFFERENCES] = 0.0 if one_dof else 1.0
        self._velocity_indices = velocity_limit.indices
        blocks = [
            matrix
            for limit in self.limits
            if limit.projection_matrix is not None
            for matrix in (limit.projection_matrix, -limit.projection_matrix)
        ]
        self._inequality_matrix = np.vstack(blocks) if blocks else None
        # quadprog's constraint matrix (C = -G^T, as qpsolvers passes it), constant.
        self._quadprog_constraints = (
            None if self._inequality_matrix is None else -self._inequality_matrix.T
        )
        self._H = np.empty((nv, nv))
        self._c = np.empty(nv)
        self._rows = np.empty((6, nv))
        n_h = 0 if self._inequality_matrix is None else self._inequality_matrix.shape[0]
        self._h = np.empty(n_h)
        self._velocity_rows = (np.nan, np.empty(0))  # (dt, dt * v_max) of the last build
        ik_kernels.warm_up()  # compiled or loaded from the cache now, not in a control cycle

    @property
    def tasks(self) -> list:
        """The pink tasks of the next step."""
        tasks = list(self.frame_tasks.values()) + [self.posture_task]
        if self.com_task is not None:
            tasks.append(self.com_task)
        return tasks

    def set_frame_target(
        self, name: str, pose: pin.SE3, velocity: np.ndarray | None = None
    ) -> None:
        """Target pose of a frame task in the world; optional feed-forward velocity [m/s].

        The pose is copied (its homogeneous matrix); so is the velocity.
        """
        index = self._task_index.get(name)
        if index is None:
            raise NameNotFound("task", name, self.frame_tasks, where="IK")
        self._target_poses[index] = pose.homogeneous
        if velocity is None:
            self._target_velocities[index] = 0.0
        else:
            self._target_velocities[index] = velocity[:3]
        self._target_set[index] = True

    def set_frame_rotation_target(self, name: str, rotation: np.ndarray) -> None:
        """:meth:`set_frame_target` to the pose (rotation, origin) without feed-forward.

        ``rotation`` (3 x 3) in the world, written into the target's 4 x 4 matrix as
        ``pin.SE3(rotation, np.zeros(3)).homogeneous`` has it (no SE3 made).
        """
        index = self._task_index.get(name)
        if index is None:
            raise NameNotFound("task", name, self.frame_tasks, where="IK")
        pose = self._target_poses[index]
        pose[:3, :3] = rotation
        pose[:3, 3] = 0.0
        pose[3, :3] = 0.0
        pose[3, 3] = 1.0
        self._target_velocities[index] = 0.0
        self._target_set[index] = True

    def set_com_target(self, com: np.ndarray, velocity: np.ndarray | None = None) -> None:
        """Target CoM position in the world [m]; optional feed-forward velocity [m/s]."""
        if self.com_task is None:
            raise InputError("com", "an IK built with a CoM task (com_cost)")
        self._com[1] = com
        if velocity is None:
            self._com[2] = 0.0
        else:
            self._com[2] = velocity
        self._com_set = True

    def set_posture_target(self, q: np.ndarray) -> None:
        """Target configuration of the posture task (its base part is ignored by pink)."""
        self.posture_task.set_target(np.asarray(q, dtype=float))

    def _prepare(self, q: np.ndarray, dt: float) -> Configuration:
        self._set_task_targets(dt)
        return Configuration(self.model, self.data, q, copy_data=False)

    def _check_targets(self, dt: float) -> None:
        """Raise InputError unless dt > 0 and every task has a target."""
        if not dt > 0.0:
            raise InputError("dt", "a positive time step [s]", dt)
        if self._targets_complete:  # every target set once (they stay set)
            return
        if not self._target_set.all():
            name = list(self.frame_tasks)[int(np.argmin(self._target_set))]
            raise InputError(f"target of task '{name}'", "a target set before solving")
        if self.com_task is not None and not self._com_set:
            raise InputError("target of task 'com'", "a target set before solving")
        self._targets_complete = True

    def _set_task_targets(self, dt: float) -> None:
        """The pink tasks' targets (feed-forward folded in) and per-step gains min(1, k dt)."""
        self._check_targets(dt)
        for name, task in self.frame_tasks.items():
            index = self._task_index[name]
            target = pin.SE3(self._target_poses[index])
            feedforward = self._target_velocities[index]
            # feedforward.any() on its three floats (a NaN counts as non-zero, as there).
            if any(feedforward.tolist()):
                ff = feedforward / max(self.gains[name], 1e-9)
                target = pin.SE3(target.rotation, target.translation + ff)
            task.transform_target_to_world = target
            task.gain = min(1.0, self.gains[name] * dt)
        if self.com_task is not None:
            self.com_task.target_com = self._com[1] + self._com[2] / max(self.gains["com"], 1e-9)
            self.com_task.gain = min(1.0, self.gains["com"] * dt)
        self.posture_task.gain = min(1.0, self.gains["posture"] * dt)

    def build_with_pink(self, q: np.ndarray, dt: float) -> qpsolvers.Problem:
        """The QP of one step at configuration q for a step of dt [s], by pink's ``build_ik``.

        The reference of :meth:`build` (tests).
        """
        configuration = self._prepare(np.asarray(q, dtype=float), dt)
        return build_ik(configuration, self.tasks, dt, damping=self.damping, limits=self.limits)

    def build(self, q: np.ndarray, dt: float) -> qpsolvers.Problem:
        """The QP of one step at configuration q for a step of dt [s] (pink's, built directly).

        Minimize 1/2 dq^T P dq + c^T dq subject to G dq <= h: the same terms as pink's
        ``build_ik`` in the same order (see the module docstring), with one kinematics pass.
        """
        H, c, h = self._build_arrays(q, dt)
        if h is None:
            return qpsolvers.Problem(H.copy(), c.copy())
        # Copies: the arrays are the buffers of the next build.
        return qpsolvers.Problem(H.copy(), c.copy(), self._inequality_matrix, h.copy())

    def _build_arrays(
        self, q: np.ndarray, dt: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(P, c, h) of :meth:`build` (G is the constant ``_inequality_matrix``).

        One kinematics pass (joint Jacobians, the tasks' frames, the CoM) and one compiled call
        (:func:`wbm_control.jit.ik_kernels.build_ik_qp`). P, c and h are buffers of this
        object's, overwritten by the next build.
        """
        q = np.asarray(q, dtype=float)
        self._check_targets(dt)
        model, data = self.model, self.data
        pin.computeJointJacobians(model, data, q)
        frames = self._frame_poses
        placements = self._frame_placements
        if placements is not None:
            # Every frame's placement (oMi[parent] * placement, as updateFramePlacement), the
            # tasks' read from Pinocchio's memory: rotation column-major, then translation.
            pin.updateFramePlacements(model, data)
            poses = placements[self._frame_id_array]
            frames[:, :3, :3] = poses[:, :9].reshape(-1, 3, 3).transpose(0, 2, 1)
            frames[:, :3, 3] = poses[:, 9:]
        else:
            for k, frame_id in enumerate(self._frame_id_list):
                frames[k] = pin.updateFramePlacement(model, data, frame_id).homogeneous
        com = self._com
        if self.com_task is not None:
            com[0] = pin.centerOfMass(model, data, POSITION, True)
            com_jacobian = pin.jacobianCenterOfMass(model, data, False)
        else:
            com_jacobian = self._no_com_jacobian
        params = self._params
        params[ik_kernels.DT] = dt
        params[ik_kernels.DAMPING] = self.damping
        params[ik_kernels.POSTURE_COST] = self.posture_task.cost
        posture_target = self.posture_task.target_q
        if params[ik_kernels.DIFFERENCES] != 0.0:  # joints of more than one coordinate
            differences = self._differences
            differences[0] = pin.difference(model, posture_target, q)
            differences[1] = pin.difference(model, q, model.upperPositionLimit)
            differences[2] = pin.difference(model, q, model.lowerPositionLimit)
        step, v_max = self._velocity_rows
        if step != dt:
            velocity_limit = self.limits[1]
            if velocity_limit.projection_matrix is None:
                v_max = np.zeros(0)
            else:
                v_max = dt * velocity_limit.velocity_limit[self._velocity_indices]
            self._velocity_rows = (dt, v_max)
        ik_kernels.build_ik_qp(
            data.J, frames, self._target_poses, self._target_velocities, self._supports,
            self._costs, self._gains, com, com_jacobian, q, posture_target, self._q_index,
            self._position_limits, self._configuration_indices, v_max, params,
            self._differences, self._H, self._c, self._h, self._rows,
        )  # fmt: skip
        if self._inequality_matrix is None:
            return self._H, self._c, None
        return self._H, self._c, self._h

    def solve(self, q: np.ndarray, dt: float) -> np.ndarray:
        """The velocity v (nv,) [Pinocchio layout, rad/s and m/s] of one IK step.

        Raises:
            NoSolutionFound: The QP solver failed.
        """
        if self.solver == "quadprog" and self._quadprog_constraints is not None:
            x = self._solve_quadprog(q, dt)
            if x is not None:
                return x / dt
        problem = self.build(q, dt)
        result = qpsolvers.solve_problem(problem, solver=self.solver, **self.solver_options)
        if _solved(result):
            return result.x / dt
        if self.solver != FALLBACK_SOLVER and FALLBACK_SOLVER in qpsolvers.available_solvers:
            fallback = qpsolvers.solve_problem(problem, solver=FALLBACK_SOLVER)
            if _solved(fallback):
                self.fallbacks += 1
                return fallback.x / dt
        raise NoSolutionFound("ik", f"qpsolvers/{self.solver} found={result.found}")

    def _solve_quadprog(self, q: np.ndarray, dt: float) -> np.ndarray | None:
        """The solution dq by quadprog of :meth:`build`'s QP, called as qpsolvers calls it.

        The same arrays (P, -c, -G^T, -h, no equality) passed to the same ``solve_qp``: the
        same solution to the bit, without qpsolvers' problem checks and conversions (and
        -G^T computed once). None when quadprog raises (no solution, or P not positive
        definite): :meth:`solve` then runs qpsolvers' path, which reports it as before.
        """
        H, c, h = self._build_arrays(q, dt)
        try:
            x = quadprog.solve_qp(H, -c, self._quadprog_constraints, -h, 0, **self.solver_options)[
                0
            ]
        except ValueError:
            return None
        # All finite: the sum of its Python floats (NaN or inf with a non-finite entry; a sum
        # of finite entries that overflows goes to numpy's test).
        return x if math.isfinite(sum(x.tolist())) or bool(np.isfinite(x).all()) else None

    def step(self, q: np.ndarray, dt: float) -> tuple[np.ndarray, np.ndarray]:
        """One IK step: (next configuration q + v dt on the manifold, velocity v)."""
        v = self.solve(q, dt)
        return pin.integrate(self.model, np.asarray(q, dtype=float), v * dt), v


def _solved(result: qpsolvers.Solution) -> bool:
    """Whether a qpsolvers result holds a finite solution."""
    return bool(result.found) and result.x is not None and bool(np.all(np.isfinite(result.x)))
