r"""Task-space inverse dynamics as a QP: the torque-level whole-body controller's core.

Decision variables x = (a, f): the generalized acceleration a (nv, Pinocchio layout: base
acceleration in base axes, then joints) and the stacked contact wrenches f (6 per contact;
environment on robot, at each contact frame origin, world axes: wbm's convention). With
M a + h = S^T tau + J_c^T f (J_c the contacts' LOCAL_WORLD_ALIGNED Jacobians):

    minimize    sum_t 1/2 || J_t a + drift_t - a*_t ||^2_{W_t}
                + 1/2 w_f ||f||^2 + 1/2 eps ||a||^2
    subject to  M_b a - J_c,b^T f = -h_b                  (floating-base rows of the EoM)
                J_c a = a*_c - drift_c                    (contacts held, drift-correcting)
                F_i f_i <= 0,  f_i,z >= f_min             (contact wrench cones)
                -tau_max <= M_j a + h_j - J_c,j^T f <= tau_max   (joint torque limits)

and the torques follow from the joint rows: tau = M_j a + h_j - J_c,j^T f.

The assembly and the reading of a solution are numba kernels
(:mod:`wbm_control.jit.whole_body_qp_kernels`), compiled or loaded from numba's cache when a
:class:`WholeBodyQPWorkspace` is created; the numpy code they replaced is their reference in
tests/control/test_jit_qp_kernels.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from wbm_control.exceptions import InputError
from wbm_control.jit.whole_body_qp_kernels import fill_whole_body_qp, split_solution
from wbm_control.jit.whole_body_qp_kernels import warm_up as _warm_up_kernels
from wbm_control.qp import INFINITY, DenseQP, DenseQPSolver


@dataclass(frozen=True)
class AccelerationTask:
    """A task J a + drift = a* weighted in the cost.

    Attributes:
        name: Task name (for diagnostics).
        jacobian: J (m x nv).
        drift: dJ/dt v (m,) [m/s^2 or rad/s^2].
        desired: a* (m,) [m/s^2 or rad/s^2].
        weight: Per-row weights (m,) or a scalar [-].
    """

    name: str
    jacobian: np.ndarray
    drift: np.ndarray
    desired: np.ndarray
    weight: float | np.ndarray

    def __init__(
        self,
        name: str,
        jacobian: np.ndarray,
        drift: np.ndarray,
        desired: np.ndarray,
        weight: float | np.ndarray,
    ):
        # The fields set straight into the instance (frozen dataclasses set each one through
        # object.__setattr__: twice the time, for objects built every step).
        fields = self.__dict__
        fields["name"], fields["jacobian"], fields["drift"] = name, jacobian, drift
        fields["desired"], fields["weight"] = desired, weight


@dataclass(frozen=True)
class ContactConstraint:
    """A contact held by the QP.

    Attributes:
        name: Contact name.
        jacobian: LOCAL_WORLD_ALIGNED frame Jacobian J_c (6 x nv).
        drift: dJ_c/dt v (6,), the frame's classical acceleration at a = 0.
        desired: Drift-correcting acceleration a*_c (6,) (usually -kp e - kd J_c v).
        cone: Face matrix F (m x 6) of its wrench cone, world axes at the frame origin.
    """

    name: str
    jacobian: np.ndarray
    drift: np.ndarray
    desired: np.ndarray
    cone: np.ndarray

    def __init__(
        self,
        name: str,
        jacobian: np.ndarray,
        drift: np.ndarray,
        desired: np.ndarray,
        cone: np.ndarray,
    ):
        # As AccelerationTask's: the fields set straight into the instance.
        fields = self.__dict__
        fields["name"], fields["jacobian"], fields["drift"] = name, jacobian, drift
        fields["desired"], fields["cone"] = desired, cone


@dataclass(frozen=True)
class WholeBodyQP:
    """The QP and what is needed to read its solution.

    Attributes:
        problem: The dense QP (proxsuite form).
        nv: Number of acceleration variables.
        contact_names: Contact order of the wrench variables.
        torque_matrix: T with tau = T x + torque_offset (ndof x n).
        torque_offset: (ndof,).
    """

    problem: DenseQP
    nv: int
    contact_names: tuple[str, ...]
    torque_matrix: np.ndarray
    torque_offset: np.ndarray

    def __init__(
        self,
        problem: DenseQP,
        nv: int,
        contact_names: tuple[str, ...],
        torque_matrix: np.ndarray,
        torque_offset: np.ndarray,
    ):
        # As AccelerationTask's: the fields set straight into the instance.
        fields = self.__dict__
        fields["problem"], fields["nv"], fields["contact_names"] = problem, nv, contact_names
        fields["torque_matrix"], fields["torque_offset"] = torque_matrix, torque_offset


@dataclass(frozen=True)
class WholeBodySolution:
    """The solution of a :class:`WholeBodyQP`.

    Attributes:
        acceleration: a (nv,).
        wrenches: Contact name to wrench (6,).
        torques: Joint torques tau (ndof,) [N m].
        x: The raw QP solution.
    """

    acceleration: np.ndarray
    wrenches: dict[str, np.ndarray]
    torques: np.ndarray
    x: np.ndarray

    def __init__(
        self,
        acceleration: np.ndarray,
        wrenches: dict[str, np.ndarray],
        torques: np.ndarray,
        x: np.ndarray,
    ):
        # As AccelerationTask's: the fields set straight into the instance.
        fields = self.__dict__
        fields["acceleration"], fields["wrenches"] = acceleration, wrenches
        fields["torques"], fields["x"] = torques, x


class WholeBodyQPWorkspace:
    """The arrays of the whole-body QP, kept between builds (``build_whole_body_qp(workspace=)``).

    One QP per contact set: while nv, the base rows, the contacts (names and cone rows) and the
    regularization are those of the last build, the next build refills the same arrays in place
    and returns the same :class:`WholeBodyQP`; its constant blocks (the zeros, the cone and
    normal-force rows and their bounds, the wrenches' regularization) are written once. A QP
    built with a workspace is overwritten by the workspace's next build: copy what you keep
    (:meth:`~wbm_control.qp.DenseQP.copy`). Its torque matrix is a view of the QP's torque rows.

    Creating one compiles the assembly's kernels or loads them from numba's cache
    (:func:`~wbm_control.jit.whole_body_qp_kernels.warm_up`, once per process): not in a
    control cycle.
    """

    def __init__(self) -> None:
        _warm_up_kernels()
        self._qp: WholeBodyQP | None = None
        self._key: tuple | None = None
        self._regularization: np.ndarray | None = None
        self._rows: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def qp_for(
        self,
        nv: int,
        base_dofs: int,
        names: tuple[str, ...],
        rows: tuple[np.ndarray, np.ndarray, np.ndarray],
        regularization: np.ndarray,
    ) -> WholeBodyQP:
        """The workspace's QP for these sizes, contacts and regularization (its arrays)."""
        key = (nv, base_dofs, names, rows[0].shape)
        if self._qp is None or key != self._key or regularization is not self._regularization:
            self._qp = _new_qp(nv, base_dofs, names, rows, regularization, separate=False)
            self._key, self._regularization, self._rows = key, regularization, rows
        elif rows is not self._rows:  # other cone rows (the cached ones are kept by identity)
            _set_contact_rows(self._qp.problem, rows)
            self._rows = rows
        return self._qp


def build_whole_body_qp(
    mass_matrix: np.ndarray,
    bias_forces: np.ndarray,
    contacts: Sequence[ContactConstraint],
    tasks: Sequence[AccelerationTask],
    torque_limits: np.ndarray,
    *,
    base_dofs: int = 6,
    wrench_weight: float = 1e-5,
    acceleration_regularization: float = 1e-6,
    min_normal_force: float = 0.0,
    workspace: WholeBodyQPWorkspace | None = None,
) -> WholeBodyQP:
    """Assemble the whole-body QP (see the module docstring).

    Args:
        mass_matrix: M (nv x nv), symmetric.
        bias_forces: h = C(q, v) v + g(q) (nv,) [N, N m].
        contacts: Contacts held.
        tasks: Weighted acceleration tasks.
        torque_limits: tau_max (ndof,) [N m].
        base_dofs: Rows of the floating base (6, or 0 for a fixed base).
        wrench_weight: w_f [1/N^2].
        acceleration_regularization: eps [-], keeps the Hessian positive definite.
        min_normal_force: Lower bound of each contact's normal force f_z [N].
        workspace: Where to write the QP (:class:`WholeBodyQPWorkspace`: its arrays, refilled
            at its next build); None: new arrays.
    """
    # Contiguous float64 (no copy when they are): the kernel's compiled argument types.
    M = np.ascontiguousarray(mass_matrix, dtype=float)
    h = np.ascontiguousarray(bias_forces, dtype=float)
    nv = M.shape[0]
    if M.shape != (nv, nv) or h.shape != (nv,):
        raise InputError(
            "mass_matrix/bias_forces", f"({nv}, {nv}) and ({nv},)", (M.shape, h.shape)
        )
    limits = np.ascontiguousarray(torque_limits, dtype=float)
    if limits.shape != (nv - base_dofs,):
        raise InputError("torque_limits", f"{nv - base_dofs} values", limits.shape)
    names = tuple([c.name for c in contacts])
    n = nv + 6 * len(contacts)
    regularization = _regularization(nv, n, acceleration_regularization, wrench_weight)
    rows = _contact_rows(contacts, nv, min_normal_force)
    if workspace is None:
        qp = _new_qp(nv, base_dofs, names, rows, regularization, separate=True)
    else:
        qp = workspace.qp_for(nv, base_dofs, names, rows, regularization)
    _fill(qp, tasks, contacts, regularization, M, h, limits, base_dofs)
    if workspace is None:
        n_top = rows[0].shape[0]
        np.copyto(qp.torque_matrix, qp.problem.C[n_top:])
    return qp


def _new_qp(
    nv: int,
    base_dofs: int,
    names: tuple[str, ...],
    rows: tuple[np.ndarray, np.ndarray, np.ndarray],
    regularization: np.ndarray,
    *,
    separate: bool,
) -> WholeBodyQP:
    """The QP's arrays with their constant blocks set (the rest is filled by each build).

    ``separate``: the torque matrix its own array (else a view of the QP's torque rows).
    """
    n, n_eq = nv + 6 * len(names), base_dofs + 6 * len(names)
    n_in, ndof = rows[0].shape[0] + nv - base_dofs, nv - base_dofs
    H = np.zeros((n, n))
    H.ravel()[:: n + 1][nv:] = regularization[nv:]  # the wrenches' diagonal: eps + w_f
    C = np.empty((n_in, n))
    A, b, lower, upper = np.zeros((n_eq, n)), np.empty(n_eq), np.empty(n_in), np.empty(n_in)
    problem = DenseQP(H=H, g=np.zeros(n), A=A, b=b, C=C, l=lower, u=upper)
    _set_contact_rows(problem, rows)
    torque_matrix = np.empty((ndof, n)) if separate else C[n_in - ndof :]
    return WholeBodyQP(problem, nv, names, torque_matrix, np.empty(ndof))


def _set_contact_rows(problem: DenseQP, rows: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    """Write the cone and normal-force rows and their bounds (the first inequality rows)."""
    top, top_lower, top_upper = rows
    n_top = top.shape[0]
    problem.C[:n_top] = top
    problem.l[:n_top] = top_lower
    problem.u[:n_top] = top_upper


def _fill(
    qp: WholeBodyQP,
    tasks: Sequence[AccelerationTask],
    contacts: Sequence[ContactConstraint],
    regularization: np.ndarray,
    M: np.ndarray,
    h: np.ndarray,
    limits: np.ndarray,
    base_dofs: int,
) -> None:
    """Write the cost, the equalities and the torque rows.

    The tasks and the contacts stacked, then one kernel
    (:func:`~wbm_control.jit.whole_body_qp_kernels.fill_whole_body_qp`).
    """
    p, nv = qp.problem, qp.nv
    rows = [*tasks, *contacts]  # one stack of each: the tasks' rows, then the contacts'
    if rows:
        jacobians = np.concatenate([row.jacobian for row in rows])
        desired = np.concatenate([row.desired for row in rows])
        drift = np.concatenate([row.drift for row in rows])
    else:
        jacobians, desired, drift = np.empty((0, nv)), np.empty(0), np.empty(0)
    weights = _stacked_row_weights(tasks) if tasks else _NO_WEIGHTS
    fill_whole_body_qp(
        p.H, p.g, p.A, p.b, p.C, p.l, p.u, qp.torque_offset,
        jacobians, weights, desired, drift, regularization, M, h, limits, base_dofs,
    )  # fmt: skip


#: The weights of no task (read-only: the type of the cached stacked weights).
_NO_WEIGHTS = np.zeros(0)
_NO_WEIGHTS.flags.writeable = False


#: (nv, n, eps, w_f) to the read-only diagonal added to the Hessian: eps on the accelerations,
#: eps + w_f on the wrenches (the sum the old two additions to a zero diagonal gave).
_regularization_cache: dict[tuple[int, int, float, float], np.ndarray] = {}


def _regularization(nv: int, n: int, epsilon: float, wrench_weight: float) -> np.ndarray:
    """The Hessian's regularization diagonal (n,) (computed once per sizes and weights)."""
    key = (nv, n, epsilon, wrench_weight)
    diagonal = _regularization_cache.get(key)
    if diagonal is None:
        if len(_regularization_cache) > 16:
            _regularization_cache.clear()
        diagonal = np.full(n, epsilon, dtype=float)
        diagonal[nv:] += wrench_weight
        diagonal.flags.writeable = False
        _regularization_cache[key] = diagonal
    return diagonal


#: The last tasks' weight key (:func:`_weight_key`), the weights it names (kept referenced, so
#: that the ids in the key stay theirs) and their stacked row weights (read-only): the weights
#: are settings or the tasks' constant arrays, the same objects at every step.
_stacked_weights_cache: list[tuple[tuple, tuple, np.ndarray]] = []


def _stacked_row_weights(tasks: Sequence[AccelerationTask]) -> np.ndarray:
    """The tasks' row weights stacked (rows,), kept while the tasks' weights are the same.

    The same means the same float values, or the same read-only arrays (by identity), with the
    same row counts. Read-only whether kept or not: one argument type for the assembly's kernel
    (one compilation).
    """
    key = tuple([_weight_key(task) for task in tasks])
    if _stacked_weights_cache and _stacked_weights_cache[0][0] == key:
        return _stacked_weights_cache[0][2]
    stacked = np.concatenate([_row_weights(task) for task in tasks])
    stacked.flags.writeable = False
    weights = tuple([task.weight for task in tasks])
    if all(_constant_weight(weight) for weight in weights):
        _stacked_weights_cache[:] = [(key, weights, stacked)]
    return stacked


def _weight_key(task: AccelerationTask) -> tuple:
    """(the weight if a float else its id, the task's rows): compared as a plain tuple."""
    weight = task.weight
    return (weight if isinstance(weight, float) else id(weight), len(task.desired))


def _constant_weight(weight: float | np.ndarray) -> bool:
    """Whether a task weight cannot change under a cache (a float, or a read-only array)."""
    return isinstance(weight, float) or (
        isinstance(weight, np.ndarray) and not weight.flags.writeable
    )


#: (rows, scalar weight) to its read-only row weights: the tasks' weights are settings.
_scalar_row_weights: dict[tuple[int, float], np.ndarray] = {}


def _row_weights(task: AccelerationTask) -> np.ndarray:
    """The task's weight per row (m,) (read-only for a scalar weight, computed once)."""
    weight = task.weight
    if isinstance(weight, np.ndarray) and weight.shape == (len(task.desired),):
        return weight
    if isinstance(weight, float):
        key = (len(task.desired), weight)
        rows = _scalar_row_weights.get(key)
        if rows is None:
            if len(_scalar_row_weights) > 64:
                _scalar_row_weights.clear()
            rows = np.full(key[0], weight, dtype=float)
            rows.flags.writeable = False
            _scalar_row_weights[key] = rows
        return rows
    return np.full(len(task.desired), weight, dtype=float)


#: The last contacts' cone and normal-force rows, with their cones and key (nv, f_min, the
#: cones' ids): the cones are the held soles' (read-only, computed once per hold,
#: :meth:`~wbm_control.contacts.ActiveContact.cone`), so the rows of the same cone arrays are
#: the same at every step.
_contact_rows_cache: list[tuple[tuple, tuple[np.ndarray, np.ndarray, np.ndarray]]] = []


def _contact_rows(
    contacts: Sequence[ContactConstraint], nv: int, min_normal_force: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The inequality rows of the cones (block diagonal) and normal forces, and their bounds.

    Computed once while the contacts' cone arrays (compared by identity, kept referenced),
    nv and the minimum normal force are those of the last call (read-only arrays).
    """
    return _contact_rows_of_cones(tuple([c.cone for c in contacts]), nv, min_normal_force)


def _contact_rows_of_cones(
    cones: tuple[np.ndarray, ...], nv: int, min_normal_force: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_contact_rows` of the contacts' cones (the torque mode's fused build's)."""
    key = (nv, float(min_normal_force), tuple([id(cone) for cone in cones]))
    if _contact_rows_cache and _contact_rows_cache[0][0][1] == key:
        return _contact_rows_cache[0][1]
    k = len(cones)
    cone_sizes = [cone.shape[0] for cone in cones]
    n_cone = sum(cone_sizes)
    top = np.zeros((n_cone + k, nv + 6 * k))
    row = 0
    for i, cone in enumerate(cones):
        top[row : row + cone_sizes[i], nv + 6 * i : nv + 6 * i + 6] = cone
        top[n_cone + i, nv + 6 * i + 2] = 1.0
        row += cone_sizes[i]
    lower = np.empty(n_cone + k)
    upper = np.empty(n_cone + k)
    lower[:n_cone] = -INFINITY
    upper[:n_cone] = 0.0
    lower[n_cone:] = min_normal_force
    upper[n_cone:] = INFINITY
    rows = (top, lower, upper)
    if all(not cone.flags.writeable for cone in cones):  # cached only for constant cones
        for array in rows:
            array.flags.writeable = False
        _contact_rows_cache[:] = [((cones, key), rows)]  # the cones referenced: their ids hold
    return rows


def read_solution(qp: WholeBodyQP, x: np.ndarray) -> WholeBodySolution:
    """Split a QP solution into accelerations, wrenches and torques."""
    acceleration, stacked, torques = split_solution(
        qp.torque_matrix, qp.torque_offset, x, qp.nv
    )  # one kernel: the copies and tau = T x + offset
    wrenches = {name: stacked[6 * i : 6 * i + 6] for i, name in enumerate(qp.contact_names)}
    return WholeBodySolution(acceleration, wrenches, torques, x)


def solve_whole_body_qp(qp: WholeBodyQP, solver: DenseQPSolver | None = None) -> WholeBodySolution:
    """Solve a :class:`WholeBodyQP` with proxsuite.

    Raises:
        NoSolutionFound: Infeasible (e.g. torque limits cannot hold the contacts) or failed.
    """
    x = (solver or DenseQPSolver(name="whole_body_qp")).solve(qp.problem)
    return read_solution(qp, x)
