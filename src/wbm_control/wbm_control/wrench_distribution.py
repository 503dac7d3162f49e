"""Distribute a desired net contact wrench over the active soles (seed 002, section 5.2).

Given the wrench the contacts must apply about the CoM, w_G = (m (cdd - g), dL/dt) [N, N m]
(for static equilibrium: (-m g, 0)), find the sole wrenches w_i (environment on robot, at each
sole frame origin, world axes) that

    minimize    sum_i  w_t ||f_i,xy||^2 + w_n f_i,z^2 + w_m ||tau_i at the sole centre||^2
    subject to  sum_i (f_i, tau_i + (p_i - c) x f_i) = w_G,   F_i w_i <= 0 (contact wrench cone).

:func:`solve_wrench_distribution` solves it by proxsuite. :func:`distribute_net_wrench` first
tries its minimizer with no cone active (the equality-constrained minimizer, closed form in one
compiled call: :func:`wbm_control.jit.feedforward_kernels.equality_wrench_distribution`): when
it lies in every cone it is the QP's exact minimizer (convex QP, no inequality active);
otherwise proxsuite solves the QP as before.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from wbm_control.contacts import ActiveContact
from wbm_control.exceptions import InputError
from wbm_control.jit import feedforward_kernels
from wbm_control.qp import INFINITY, DenseQP, DenseQPSolver, all_finite

#: The cost's default weights: tangential forces [1/N^2], normal forces [1/N^2], torques about
#: the sole centres [1/(N m)^2].
TANGENTIAL_WEIGHT, NORMAL_WEIGHT, TORQUE_WEIGHT = 1e-3, 1e-6, 1.0


def skew(vector: np.ndarray) -> np.ndarray:
    """Cross-product matrix [v]x with [v]x u = v x u."""
    x, y, z = vector
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def wrench_to_point_matrix(point_from: np.ndarray, point_to: np.ndarray) -> np.ndarray:
    """6 x 6 matrix moving a wrench (same axes) from one point to another.

    (f, tau_to) = (f, tau_from + (p_from - p_to) x f).
    """
    matrix = np.eye(6)
    matrix[3:6, 0:3] = skew(
        np.asarray(point_from, dtype=float) - np.asarray(point_to, dtype=float)
    )
    return matrix


def build_wrench_distribution(
    contacts: Sequence[ActiveContact],
    com: np.ndarray,
    net_wrench_at_com: np.ndarray,
    *,
    mu: float,
    tangential_weight: float = TANGENTIAL_WEIGHT,
    normal_weight: float = NORMAL_WEIGHT,
    torque_weight: float = TORQUE_WEIGHT,
) -> DenseQP:
    """The wrench distribution QP (variables: the stacked sole wrenches, 6 per contact).

    Args:
        contacts: Active contacts.
        com: CoM position in the world [m].
        net_wrench_at_com: Wrench the contacts must apply, about the CoM, world axes [N, N m].
        mu: Friction coefficient [-].
        tangential_weight: Weight of tangential forces [1/N^2].
        normal_weight: Weight of normal forces [1/N^2].
        torque_weight: Weight of the torques about the sole centres [1/(N m)^2].

    Returns:
        The QP; its solution x stacks the wrenches of ``contacts`` in order.
    """
    if not contacts:
        raise InputError("contacts", "at least one active contact", 0)
    target = np.asarray(net_wrench_at_com, dtype=float)
    if target.shape != (6,) or not all_finite(target):
        raise InputError("net_wrench_at_com", "6 finite values", target)
    H, C, A, g, lower, upper = _constant_parts(
        tuple(contacts), mu, tangential_weight, normal_weight, torque_weight
    )
    A = A.copy()
    cx, cy, cz = np.asarray(com, dtype=float).tolist()
    for k, (ox, oy, oz) in enumerate(_constant_cache[0][2]):  # the soles' origins [m]
        # The skew block of wrench_to_point_matrix(origin, com): (origin - com) x f.
        x, y, z = ox - cx, oy - cy, oz - cz
        column = 6 * k
        A[3, column + 1], A[3, column + 2] = -z, y
        A[4, column], A[4, column + 2] = z, -x
        A[5, column], A[5, column + 1] = -y, x
    return DenseQP(H=H, g=g, A=A, b=target, C=C, l=lower, u=upper)


#: The last held contacts and weights, what of the QP follows from them alone, the soles'
#: origins (x, y, z) [m], and the closed form's inputs (H^-1, the origins (soles, 3), C): the
#: held soles do not move while held (ActiveContact), so a controller asks for the same at
#: every step.
_constant_cache: list[
    tuple[tuple, tuple[np.ndarray, ...], list[list[float]], tuple[np.ndarray, ...]]
] = []


def _constant_parts(
    contacts: tuple[ActiveContact, ...],
    mu: float,
    tangential_weight: float,
    normal_weight: float,
    torque_weight: float,
) -> tuple[np.ndarray, ...]:
    """(H, C, A with its identity blocks, g, l, u) of :func:`build_wrench_distribution`.

    Read-only arrays: the zero linear cost g, the cones' bounds l = -:data:`INFINITY` and
    u = 0 included (proxsuite copies what it is given).

    They depend on the contacts' placements, the friction coefficient and the weights only:
    computed once while the same contact objects (compared by identity, kept referenced) and
    values are asked for.
    """
    key = (float(mu), float(tangential_weight), float(normal_weight), float(torque_weight))
    if _constant_cache:
        (cached_contacts, cached_key), parts = _constant_cache[0][:2]
        if cached_key == key and len(cached_contacts) == len(contacts):
            if all(map(operator.is_, cached_contacts, contacts)):
                return parts
    n = 6 * len(contacts)
    H = np.zeros((n, n))
    A = np.zeros((6, n))
    C = np.zeros((16 * len(contacts), n))
    weights = np.diag([tangential_weight, tangential_weight, normal_weight] + [torque_weight] * 3)
    for k, contact in enumerate(contacts):
        block = slice(6 * k, 6 * k + 6)
        A[:, block] = np.eye(6)
        # Torque about the sole centre, world axes: tau_origin + (origin - centre) x f.
        origin = contact.placement.translation
        to_center = wrench_to_point_matrix(origin, contact.center_in_world())
        H[block, block] = to_center.T @ weights @ to_center
        C[16 * k : 16 * k + 16, block] = contact.cone(mu)
    n_cone = C.shape[0]
    parts = (H, C, A, np.zeros(n), np.full(n_cone, -INFINITY), np.zeros(n_cone))
    for array in parts:
        array.flags.writeable = False
    origins = [contact.placement.translation.tolist() for contact in contacts]
    # H^-1 block by block (np.linalg.inv of each 6 x 6 block), writeable contiguous copies.
    h_inverse = np.zeros((n, n))
    for k in range(len(contacts)):
        block = slice(6 * k, 6 * k + 6)
        h_inverse[block, block] = np.linalg.inv(H[block, block])
    closed_form = (h_inverse, np.array(origins, dtype=float).reshape(-1, 3), np.array(C))
    _constant_cache[:] = [((contacts, key), parts, origins, closed_form)]
    return parts


def solve_wrench_distribution(
    contacts: Sequence[ActiveContact],
    com: np.ndarray,
    net_wrench_at_com: np.ndarray,
    *,
    mu: float,
    solver: DenseQPSolver | None = None,
    **weights: float,
) -> dict[str, np.ndarray]:
    """Solve :func:`build_wrench_distribution`.

    Returns:
        Sole name to wrench (force [N], torque [N m]) at the sole origin, world axes.

    Raises:
        NoSolutionFound: No wrenches in the cones produce the net wrench (e.g. the CoM is not
            above the support polygon for static equilibrium).
    """
    problem = build_wrench_distribution(contacts, com, net_wrench_at_com, mu=mu, **weights)
    x = (solver or DenseQPSolver(name="wrench_distribution")).solve(problem)
    return {c.sole.name: x[6 * k : 6 * k + 6].copy() for k, c in enumerate(contacts)}


def equality_minimizer_in_cones(
    contacts: Sequence[ActiveContact],
    com: np.ndarray,
    net_wrench_at_com: np.ndarray,
    *,
    mu: float,
    **weights: float,
) -> np.ndarray | None:
    """The distribution QP's minimizer with no cone active, if it lies in every cone.

    The minimizer of :func:`build_wrench_distribution`'s cost subject to its equality alone
    (closed form, one compiled call:
    :func:`wbm_control.jit.feedforward_kernels.equality_wrench_distribution`), the stacked
    sole wrenches (n,) [N, N m] at the sole origins, world axes; None when it leaves a cone
    (C x > 0: a cone is active at the QP's minimizer), is not finite, or does not exist.
    Where it is returned it is the QP's exact minimizer (a convex QP whose inequalities are
    all inactive there).

    Raises:
        InputError: No contacts, or the net wrench not of size 6.
    """
    if not contacts:
        raise InputError("contacts", "at least one active contact", 0)
    target = np.asarray(net_wrench_at_com, dtype=float)
    if target.shape != (6,):
        raise InputError("net_wrench_at_com", "6 finite values", target)
    _constant_parts(
        tuple(contacts),
        mu,
        weights.get("tangential_weight", TANGENTIAL_WEIGHT),
        weights.get("normal_weight", NORMAL_WEIGHT),
        weights.get("torque_weight", TORQUE_WEIGHT),
    )
    h_inverse, origins, cones = _constant_cache[0][3]
    x = np.empty(h_inverse.shape[0])
    com = np.asarray(com, dtype=float)
    inside = feedforward_kernels.equality_wrench_distribution(
        h_inverse, origins, com, target, cones, x
    )
    return x if inside else None


def distribute_net_wrench(
    contacts: Sequence[ActiveContact],
    com: np.ndarray,
    net_wrench_at_com: np.ndarray,
    *,
    mu: float,
    solver: DenseQPSolver | None = None,
    **weights: float,
) -> dict[str, np.ndarray]:
    """:func:`solve_wrench_distribution`'s minimizer, by its closed form when no cone is active.

    :func:`equality_minimizer_in_cones` first; when a cone is active (or there is no solution)
    :func:`solve_wrench_distribution` solves the QP by proxsuite.

    Returns:
        Sole name to wrench (force [N], torque [N m]) at the sole origin, world axes.

    Raises:
        NoSolutionFound: As :func:`solve_wrench_distribution`.
        InputError: No contacts, or the net wrench not 6 finite values.
    """
    x = equality_minimizer_in_cones(contacts, com, net_wrench_at_com, mu=mu, **weights)
    if x is None:
        return solve_wrench_distribution(
            contacts, com, net_wrench_at_com, mu=mu, solver=solver, **weights
        )
    return {c.sole.name: x[6 * k : 6 * k + 6] for k, c in enumerate(contacts)}


def static_net_wrench(mass: float, gravity: np.ndarray) -> np.ndarray:
    """Net contact wrench about the CoM that holds a robot still: (-m g, 0) [N, N m]."""
    return np.concatenate([-mass * np.asarray(gravity, dtype=float), np.zeros(3)])
