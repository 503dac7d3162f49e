"""Differential IK as a weighted QP on pink (seed 002, chapter 4; pymanoid's IK).

Each step solves, for the configuration displacement dq = v dt (pink's formulation),

    minimize    sum_tasks 1/2 || J_t dq + (k_t dt) e_t ||^2_{W_t}  +  1/2 damping ||dq||^2
    subject to  configuration limits and |dq_j| <= v_max,j dt,

with e_t the task error, W_t = diag(cost_t)^2 and k_t the task gain in [1/s]: pink's per-step
gain is set to min(1, k_t dt) at every call, so the commanded task velocity is k_t e_t whatever
the control rate. Targets can carry a feed-forward velocity, folded into the target (a first-order
tracker with target p + pd / k has no steady lag on a ramp).

:meth:`DifferentialIK.build` assembles pink's QP itself, term by term in pink's order and with
pink's formulas (frame task: error log6(T_frame^-1 T_target) and Jacobian -Jlog6 J_local; CoM;
posture; configuration and velocity limits), from one kinematics pass, without pink's per-step
``Configuration`` and its repeated CoM passes; :meth:`DifferentialIK.build_with_pink` is pink's
own ``build_ik``, the reference the tests compare it with (same matrices to rounding).

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

import numpy as np
import pinocchio as pin
import qpsolvers
import quadprog
from pink import Configuration, build_ik
from pink.limits import ConfigurationLimit, VelocityLimit
from pink.tasks import ComTask, FrameTask, PostureTask
from pink.utils import get_root_joint_dim

from wbm_control.exceptions import InputError, NoSolutionFound
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

_NO_VELOCITY = np.zeros(3)
_NO_VELOCITY.flags.writeable = False  # the feed-forward of a target set without one


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
        self._feedforward: dict[str, np.ndarray] = {}
        self._targets: dict[str, object] = {}
        # Constant parts of the direct build (see build).
        self._frame_ids = {
            name: self.model.getFrameId(task.frame) for name, task in self.frame_tasks.items()
        }
        self._root_nv = get_root_joint_dim(self.model)[1]
        configuration_limit, velocity_limit = self.limits
        self._configuration_indices = configuration_limit.indices
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
        self._frame_rows = np.empty((6, self.model.nv))  # a frame task's weighted Jacobian
        self._damped_identity = (np.nan, np.eye(0))  # (damping, damping * I) of the last build
        # h's buffer and its velocity-limit rows' (dt, dt * v_max), see _build_arrays.
        n_h = 0 if self._inequality_matrix is None else self._inequality_matrix.shape[0]
        self._h = np.empty(n_h)
        self._velocity_rows = (np.nan, np.empty(0))

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
        """Target pose of a frame task in the world; optional feed-forward velocity [m/s]."""
        if name not in self.frame_tasks:
            raise NameNotFound("task", name, self.frame_tasks, where="IK")
        self._targets[name] = pose.copy()
        self._feedforward[name] = (
            _NO_VELOCITY if velocity is None else np.asarray(velocity, dtype=float)[:3]
        )

    def set_com_target(self, com: np.ndarray, velocity: np.ndarray | None = None) -> None:
        """Target CoM position in the world [m]; optional feed-forward velocity [m/s]."""
        if self.com_task is None:
            raise InputError("com", "an IK built with a CoM task (com_cost)")
        self._targets["com"] = np.asarray(com, dtype=float).copy()
        self._feedforward["com"] = np.zeros(3) if velocity is None else np.asarray(velocity)

    def set_posture_target(self, q: np.ndarray) -> None:
        """Target configuration of the posture task (its base part is ignored by pink)."""
        self.posture_task.set_target(np.asarray(q, dtype=float))

    def _prepare(self, q: np.ndarray, dt: float) -> Configuration:
        self._set_task_targets(dt)
        return Configuration(self.model, self.data, q, copy_data=False)

    def _set_task_targets(self, dt: float) -> None:
        """The pink tasks' targets (feed-forward folded in) and per-step gains min(1, k dt)."""
        if not dt > 0.0:
            raise InputError("dt", "a positive time step [s]", dt)
        for name, task in self.frame_tasks.items():
            target = self._targets.get(name)
            if target is None:
                raise InputError(f"target of task '{name}'", "a target set before solving")
            feedforward = self._feedforward[name]
            # feedforward.any() on its three floats (a NaN counts as non-zero, as there).
            # pink's set_target(T) is transform_target_to_world = T.copy(): the new pose, or
            # the IK's own copy of the target (set_frame_target's), is given without a copy.
            if feedforward is not _NO_VELOCITY and any(feedforward.tolist()):
                ff = feedforward / max(self.gains[name], 1e-9)
                task.transform_target_to_world = pin.SE3(target.rotation, target.translation + ff)
            else:  # p + 0 = p: the target itself
                task.transform_target_to_world = target
            task.gain = min(1.0, self.gains[name] * dt)
        if self.com_task is not None:
            target = self._targets.get("com")
            if target is None:
                raise InputError("target of task 'com'", "a target set before solving")
            # pink's set_target(c) is target_com = c.copy(): the new array given without a copy.
            self.com_task.target_com = target + self._feedforward["com"] / max(
                self.gains["com"], 1e-9
            )
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
            return qpsolvers.Problem(H, c)
        return qpsolvers.Problem(H, c, self._inequality_matrix, h.copy())  # h: the buffer's

    def _build_arrays(
        self, q: np.ndarray, dt: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(P, c, h) of :meth:`build` (G is the constant ``_inequality_matrix``).

        h is a buffer of this object's, overwritten by the next build.
        """
        q = np.asarray(q, dtype=float)
        self._set_task_targets(dt)
        model, data = self.model, self.data
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        nv = model.nv
        damping, damped_identity = self._damped_identity
        if damping != self.damping or damped_identity.shape[0] != nv:
            damped_identity = self.damping * np.eye(nv)
            damped_identity.flags.writeable = False
            self._damped_identity = (self.damping, damped_identity)
        H = damped_identity.copy()  # damping * I
        c = np.zeros(nv)
        # Each frame task's term 1/2 ||W J dq + W (gain e)||^2 (pink's objective), added in
        # pink's order, with its weighted Jacobian written into one buffer. pink's Jacobian is
        # -Jlog6 J_local: the sign is carried by the weighted error instead, which gives the
        # same numbers to the bit (H: (-X)^T (-X) = X^T X; c: -(W (-gain e))^T (W (-Jlog6 J))
        # = (W (-gain e))^T (W Jlog6 J), every product negated twice).
        weighted_jacobian, oMf = self._frame_rows, data.oMf
        for name, task in self.frame_tasks.items():
            frame_id = self._frame_ids[name]
            frame_to_world = oMf[frame_id]
            target_to_world = task.transform_target_to_world
            error = pin.log(frame_to_world.actInv(target_to_world)).vector
            np.matmul(
                pin.Jlog6(target_to_world.actInv(frame_to_world)),
                pin.getFrameJacobian(model, data, frame_id, LOCAL),
                out=weighted_jacobian,
            )
            cost = task.cost
            weighted_jacobian *= cost[:, None]
            # ndarray.dot: the BLAS calls of @ (syrk, gemv), without the operator's dispatch.
            H += weighted_jacobian.T.dot(weighted_jacobian)
            c += (cost * (-task.gain * error)).dot(weighted_jacobian)
        # Posture: e = q* - q (joints), J = [0 I]; the weight is a scalar (diagonal terms only).
        posture = self.posture_task
        root = self._root_nv
        error = pin.difference(model, posture.target_q, q)[root:]
        cost = posture.cost
        weighted_error = cost * (-posture.gain * error)
        diagonal = H.reshape(-1)[root * (nv + 1) :: nv + 1]  # a view of H's diagonal from root
        diagonal += cost * cost
        c[root:] += -weighted_error * cost
        if self.com_task is not None:
            com = pin.centerOfMass(model, data, POSITION, True)
            jacobian = pin.jacobianCenterOfMass(model, data, False)
            error = com - self.com_task.target_com
            self._add_objective(H, c, jacobian, error, self.com_task.cost, self.com_task.gain)
        if self._inequality_matrix is None:
            return H, c, None
        # h: the parts of pink's limits in G's order, written into a buffer of this object's
        # (returned: valid until the next build).
        configuration_limit, velocity_limit = self.limits
        h, row = self._h, 0
        if configuration_limit.projection_matrix is not None:
            gain, indices = configuration_limit.config_limit_gain, self._configuration_indices
            k = indices.size
            upper = pin.difference(model, q, model.upperPositionLimit)[indices]
            np.multiply(gain, upper, out=h[:k])
            lower = pin.difference(model, q, model.lowerPositionLimit)[indices]
            np.negative(np.multiply(gain, lower, out=h[k : 2 * k]), out=h[k : 2 * k])
            row = 2 * k
        if velocity_limit.projection_matrix is not None:
            step, v_max = self._velocity_rows
            if step != dt:
                v_max = dt * velocity_limit.velocity_limit[self._velocity_indices]
                self._velocity_rows = (dt, v_max)
            k = v_max.size
            h[row : row + k] = v_max
            h[row + k : row + 2 * k] = v_max
        return H, c, h

    @staticmethod
    def _add_objective(
        H: np.ndarray,
        c: np.ndarray,
        jacobian: np.ndarray,
        error: np.ndarray,
        cost: np.ndarray,
        gain: float,
    ) -> None:
        """Add 1/2 ||J dq + gain e||^2_W with W = diag(cost)^2 (pink's task objective)."""
        weighted_jacobian = cost[:, None] * jacobian
        weighted_error = cost * (-gain * error)
        H += weighted_jacobian.T.dot(weighted_jacobian)  # @'s BLAS calls, see _build_arrays
        c += (-weighted_error).dot(weighted_jacobian)

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
