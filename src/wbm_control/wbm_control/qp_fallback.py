r"""What the torque mode does when its whole-body QP fails: softer problems, then a static hold.

The whole-body QP (:mod:`wbm_control.whole_body_qp`) holds the soles with equality constraints
(J_c a + dJ_c v = a*_c) and keeps their wrenches in cones shrunk by the CoP margin, with a
minimum normal force, under the torque limits. When the robot is pushed or a target asks much,
these can contradict each other and proxsuite reports no solution. The chain, each level tried
only if the one before failed:

1. ``relaxed``: the same tasks; the CoP margin and the minimum normal force dropped; the contact
   equalities softened with a slack s (6 per held sole) in the cost, J_c a + s = a*_c - dJ_c v,
   weighted by ``contact_slack_weight``. This problem is feasible by construction: with zero
   torques, zero wrenches (inside every cone) and a = -M^{-1} h (the robot falling freely), the
   floating-base rows and the torque limits hold, and s takes up the contact rows.
2. ``balance_only``: the same relaxed problem over the balance tasks only (CoM, base orientation,
   posture, and the swing tasks of released soles): no hand task can pull on it.
3. ``static_hold``: no QP: the joints held where they are by the servos, with the
   contact-consistent gravity torques of the static wrench distribution as feed-forward
   (:func:`~wbm_control.contact_feedforward.contact_consistent_torques`): the robot's weight is
   carried by its held soles instead of the servos' stiffness alone
   (:func:`static_hold_command`, also the controller's safe hold).

Only when all of these fail does the controller fall back on its safe hold.

Mode "ik" has one QP, the differential IK, whose only constraints are the joint position and
velocity limits: it fails when its configuration lies beyond a position limit by more than the
velocity limit can bring back in one step (an estimate outside the limits after a push), or
when proxqp stops short on a feasible problem. Its fallback (:func:`ik_fallback_step`) restarts
the step from the configuration clipped into the limits, where dq = 0 satisfies every
constraint (feasible by construction), and solves it with quadprog (an exact active-set
method: no tolerance or iteration limit to stop short). Each QP solve of
the chain is bounded by ``max_iterations`` (proxsuite's outer iterations). The level used and
why are written to the controller status (``fallback``, ``reason``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin
import qpsolvers

from wbm_control.contact_feedforward import contact_consistent_torques
from wbm_control.contacts import ActiveContact
from wbm_control.exceptions import NoSolutionFound
from wbm_control.qp import DenseQP, DenseQPSolver
from wbm_control.whole_body_qp import (
    AccelerationTask,
    ContactConstraint,
    WholeBodyQP,
    WholeBodySolution,
    build_whole_body_qp,
    read_solution,
)
from wbm_control.wrench_distribution import static_net_wrench
from wbm_description.robot_io import JointCommand

if TYPE_CHECKING:
    from wbm_control.controller_settings import ControllerSettings, FallbackSettings
    from wbm_control.differential_ik import DifferentialIK
    from wbm_control.robot_kinematics import RobotKinematics
    from wbm_control.tasks import TaskSet
    from wbm_description.whole_body_model import WholeBodyModel

RELAXED = "relaxed"
BALANCE_ONLY = "balance_only"
STATIC_HOLD = "static_hold"
LEVELS = (RELAXED, BALANCE_ONLY, STATIC_HOLD)
"""The fallback levels, in the order they are tried."""
IK_CLIPPED = "ik_within_limits"
"""Mode "ik"'s fallback: the IK step from its configuration clipped into the limits, quadprog."""


def within_position_limits(model: pin.Model, q: np.ndarray, margin: float = 1e-6) -> np.ndarray:
    """The configuration with its joint coordinates clipped into the position limits.

    Args:
        model: Pinocchio model with a free-flyer root.
        q: Configuration (nq,); the free flyer's 7 coordinates are left as they are.
        margin: Kept inside each limit [rad or m].
    """
    clipped = np.array(q, dtype=float)
    lower = model.lowerPositionLimit[7:] + margin
    upper = model.upperPositionLimit[7:] - margin
    clipped[7:] = np.clip(clipped[7:], lower, upper)
    return clipped


def ik_fallback_step(
    ik: DifferentialIK, model: pin.Model, q: np.ndarray, dt: float
) -> tuple[np.ndarray, np.ndarray]:
    """Mode "ik"'s fallback: one IK step from q clipped into the limits, solved by quadprog.

    Args:
        ik: The differential IK (its targets already set for this step).
        model: Its Pinocchio model.
        q: The configuration whose IK step failed.
        dt: Step [s].

    Returns:
        (next configuration, velocity [rad/s, m/s]), as :meth:`DifferentialIK.step`.

    Raises:
        NoSolutionFound: quadprog failed too.
    """
    start = within_position_limits(model, q)
    try:
        result = qpsolvers.solve_problem(ik.build(start, dt), solver="quadprog")
    except ValueError as error:  # quadprog raises on a problem it finds inconsistent
        raise NoSolutionFound("ik (fallback)", f"quadprog: {error}") from error
    if not result.found or not np.all(np.isfinite(result.x)):
        raise NoSolutionFound("ik (fallback)", "quadprog found no solution")
    v = result.x / dt
    return pin.integrate(model, start, v * dt), v


def with_contact_slack(qp: WholeBodyQP, n_base: int, weight: float) -> WholeBodyQP:
    """The QP with its contact equality rows softened by slack variables.

    The variables become (x, s), s (6 per contact) in the contact rows only:
    A_c x + s = b_c, with 1/2 ``weight`` ||s||^2 added to the cost. The floating-base rows
    (the first ``n_base`` equality rows) stay hard. The torque map gets zero columns for s,
    so :func:`~wbm_control.whole_body_qp.read_solution` reads the result as before.

    Args:
        qp: A whole-body QP.
        n_base: Its floating-base equality rows (6, or 0 for a fixed base).
        weight: Cost of the slack [(s^2/m)^2 per unit of contact acceleration].
    """
    p = qp.problem
    n, n_eq, n_in = p.dimensions
    m = n_eq - n_base
    H = np.zeros((n + m, n + m))
    H[:n, :n] = p.H
    H[n:, n:] = weight * np.eye(m)
    A = np.zeros((n_eq, n + m))
    A[:, :n] = p.A
    A[n_base:, n:] = np.eye(m)
    C = np.zeros((n_in, n + m))
    C[:, :n] = p.C
    torque_matrix = np.zeros((qp.torque_matrix.shape[0], n + m))
    torque_matrix[:, :n] = qp.torque_matrix
    problem = DenseQP(H=H, g=np.concatenate([p.g, np.zeros(m)]), A=A, b=p.b, C=C, l=p.l, u=p.u)
    return WholeBodyQP(problem, qp.nv, qp.contact_names, torque_matrix, qp.torque_offset)


def free_fall_point(
    qp: WholeBodyQP, mass_matrix: np.ndarray, bias_forces: np.ndarray
) -> np.ndarray:
    """The known feasible point of a slackened QP: zero torques and wrenches, a = -M^-1 h.

    Args:
        qp: A QP from :func:`with_contact_slack`.
        mass_matrix: M (nv x nv).
        bias_forces: h (nv,).

    Returns:
        x (the slackened QP's variables) with s = b_c - A_c x.
    """
    p = qp.problem
    n = p.H.shape[0]
    x = np.zeros(n)
    a = -np.linalg.solve(mass_matrix, bias_forces)
    x[: qp.nv] = a
    residual = p.b - p.A @ x
    n_slack = n - qp.nv - 6 * len(qp.contact_names)
    if n_slack:
        x[n - n_slack :] = residual[p.A.shape[0] - n_slack :]
    return x


def static_hold_command(
    model: WholeBodyModel,
    data: pin.Data,
    q: np.ndarray,
    held: Sequence[ActiveContact],
    mu: float,
    solver: DenseQPSolver | None = None,
) -> JointCommand:
    """Hold the joints of q standing: the static level, and the controller's safe hold.

    Position references: q's joints, zero velocity; feed-forward: the contact-consistent gravity
    torques of the static wrench distribution over the held soles (the robot's weight, -m g at
    the CoM, carried by the soles' wrenches inside their friction cones, :func:`~wbm_control.
    contact_feedforward.contact_consistent_torques`), clipped to the torque limits. The servos
    then only correct deviations from q instead of carrying the weight with their stiffness.

    Args:
        model: Whole-body model (floating base).
        data: Scratch data of ``model.model`` (overwritten).
        q: Configuration to hold (the base from the estimate, world frame).
        held: The soles held in contact (none: the gravity torques of the joints alone).
        mu: Friction coefficient of the wrench cones [-].
        solver: Re-used QP workspace of the wrench distribution.

    Raises:
        NoSolutionFound, numpy.linalg.LinAlgError, ValueError: The torques could not be computed.
    """
    effort = contact_consistent_torques(
        model,
        data,
        q,
        list(held),
        static_net_wrench(model.total_mass, np.asarray(model.config.gravity, dtype=float)),
        mu=mu,
        solver=solver,
    )
    limits = model.torque_limits
    return JointCommand(
        position=np.array(q[7:], dtype=float),
        velocity=np.zeros(model.ndof),
        effort=np.clip(effort, -limits, limits),
    )


@dataclass(frozen=True)
class FallbackResult:
    """What the chain gave.

    Attributes:
        level: The level used (one of :data:`LEVELS`).
        solution: The QP solution (None for ``static_hold``).
        command: The command of ``static_hold`` (None for the QP levels).
        solve_time: Wall time of the chain [s].
    """

    level: str
    solution: WholeBodySolution | None
    command: JointCommand | None
    solve_time: float


class QpFallback:
    """The fallback chain (see the module docstring).

    Args:
        model: Whole-body model (torque limits, mass, gravity).
        settings: The ``fallback:`` section (its solver settings are read once, here).

    Attributes:
        solver: The chain's QP solver (its own workspace: the main one is left untouched).
        counts: Level name to the number of steps it was used.
        last_result: What the last :meth:`solve` gave (inspection).
    """

    def __init__(self, model: WholeBodyModel, settings: FallbackSettings):
        self.model = model
        self.data = model.model.createData()
        self.solver = DenseQPSolver(
            name="whole_body_qp (fallback)",
            eps_abs=settings.eps_abs,
            max_iterations=settings.max_iterations,
        )
        self.distribution_solver = DenseQPSolver(name="wrench_distribution (fallback)")
        self.counts = dict.fromkeys(LEVELS, 0)
        self.last_result: FallbackResult | None = None

    def relaxed_constraints(
        self, constraints: Sequence[ContactConstraint], held: Sequence[ActiveContact], mu: float
    ) -> list[ContactConstraint]:
        """The contact constraints with their cones at the soles' edges (no CoP margin)."""
        cones = {contact.sole.name: contact.cone(mu, cop_margin=0.0) for contact in held}
        return [replace(c, cone=cones[c.name]) for c in constraints]

    def relaxed_qp(
        self,
        kinematics: RobotKinematics,
        acceleration_tasks: Sequence[AccelerationTask],
        constraints: Sequence[ContactConstraint],
        settings: ControllerSettings,
    ) -> WholeBodyQP:
        """The relaxed problem over ``acceleration_tasks`` (levels 1 and 2)."""
        torque = settings.torque
        qp = build_whole_body_qp(
            kinematics.mass_matrix,
            kinematics.bias_forces,
            constraints,
            acceleration_tasks,
            self.model.torque_limits,
            wrench_weight=torque.wrench_weight,
            acceleration_regularization=torque.acceleration_regularization,
            min_normal_force=0.0,
        )
        return with_contact_slack(qp, 6, settings.fallback.contact_slack_weight)

    def _solve(self, qp: WholeBodyQP) -> WholeBodySolution:
        x = self.solver.solve(qp.problem)
        return read_solution(qp, x)

    def static_hold(
        self, kinematics: RobotKinematics, held: Sequence[ActiveContact], mu: float
    ) -> JointCommand:
        """Hold the joints, with the static wrench distribution's gravity torques."""
        return static_hold_command(
            self.model, self.data, kinematics.q, held, mu, self.distribution_solver
        )

    def solve(
        self,
        kinematics: RobotKinematics,
        acceleration_tasks: Sequence[AccelerationTask],
        constraints: Sequence[ContactConstraint],
        held: Sequence[ActiveContact],
        tasks: TaskSet,
        settings: ControllerSettings,
    ) -> FallbackResult:
        """Try the levels in order (see the module docstring).

        Args:
            kinematics: The robot at this step (with dynamics).
            acceleration_tasks: The tasks of the failed QP.
            constraints: Its contact constraints.
            held: The held soles.
            tasks: The controller's tasks (to tell balance tasks from the others).
            settings: Controller settings (``torque:``, ``fallback:``, friction).

        Raises:
            NoSolutionFound: Every level failed (the caller holds: the controller's hold command).
        """
        start = time.perf_counter()
        mu = settings.friction_coefficient
        relaxed = self.relaxed_constraints(constraints, held, mu)
        balance_names = {
            tasks.com.name,
            tasks.base_orientation.name,
            tasks.posture.name,
            *(tasks.task_of_sole[s] for s in tasks.task_of_sole),
        }
        levels = [
            (RELAXED, acceleration_tasks),
            (BALANCE_ONLY, [t for t in acceleration_tasks if t.name in balance_names]),
        ]
        for level, level_tasks in levels:
            try:
                solution = self._solve(self.relaxed_qp(kinematics, level_tasks, relaxed, settings))
            except NoSolutionFound:
                continue
            return self._result(level, solution, None, start)
        try:
            command = self.static_hold(kinematics, held, mu)
        except (NoSolutionFound, np.linalg.LinAlgError, ValueError) as error:
            reason = f"every level failed: {error}"
            raise NoSolutionFound("whole_body_qp fallback", reason) from error
        return self._result(STATIC_HOLD, None, command, start)

    def _result(self, level, solution, command, start: float) -> FallbackResult:
        self.counts[level] += 1
        self.last_result = FallbackResult(level, solution, command, time.perf_counter() - start)
        return self.last_result
