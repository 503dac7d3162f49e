"""Inverse dynamics of a planned motion on its contacts: the IK mode's feed-forward torques.

A position-controlled robot tracks joint references through its servos, tau = tau_ff + kp (q_ref
- q) + kd (dq_ref - dq): whatever tau_ff does not provide, the servos provide only from a tracking
error (kp e). The quasi-static feed-forward (:mod:`wbm_control.contact_feedforward`, gravity held
through the contact wrenches) leaves the inertial torques of walking to that error: a swing leg
accelerated and stopped within 0.3 s, the CoM accelerated by the pendulum. Here the feed-forward
is the whole-body inverse dynamics of the planned motion (q, v, a) with the contact wrenches f_i
on the held soles:

    M(q) a + h(q, v) = S^T tau + sum_i J_i(q)^T f_i,

- the net contact wrench is the centroidal momentum's rate minus gravity, about the CoM, world
  axes: w_G = dh_G/dt(q, v, a) - (m g, 0) (Newton-Euler; for a motion at rest (-m g, 0)); it is
  read from the base rows of ``pin.rnea`` (the wrench the contacts must transmit to the base, at
  its origin in its axes), moved to the CoM in world axes (:func:`net_contact_wrench` computes
  it from the centroidal momentum, the tests' reference);
- it is distributed over the held soles in their contact wrench cones
  (:func:`~wbm_control.wrench_distribution.distribute_net_wrench`: the closed form when no cone
  is active, else the QP by proxsuite), so that the base rows hold:
  (M a + h)_base = sum_i J_i,base^T f_i;
- the joint torques are the joint rows: tau = (M a + h)_joints - sum_i J_i,joints^T f_i, by
  ``pin.rnea`` (J_i: the soles' LOCAL_WORLD_ALIGNED Jacobians, f_i at the sole frame origin).

Held soles without load (``lifted``) keep their place in the distribution but their wrench is
left out of tau, as in the quasi-static feed-forward.

Velocities and accelerations in Pinocchio's layout (the free-flyer's in the base frame).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pinocchio as pin

from wbm_control.contacts import ActiveContact
from wbm_control.exceptions import InputError, NoSolutionFound
from wbm_control.jit import feedforward_kernels
from wbm_control.qp import DenseQPSolver
from wbm_control.wrench_distribution import all_finite, distribute_net_wrench
from wbm_description.whole_body_model import WholeBodyModel

_LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
POSITION = pin.KinematicLevel.POSITION


def net_contact_wrench(
    model: pin.Model, data: pin.Data, q: np.ndarray, v: np.ndarray, a: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The contact wrench a motion needs, about its CoM, world axes [N, N m]; and the CoM [m].

    w_G = dh_G/dt - (m g, 0), with dh_G/dt the centroidal momentum's rate at (q, v, a).
    """
    pin.computeCentroidalMomentumTimeVariation(model, data, q, v, a)
    wrench = np.array(data.dhg.vector)
    wrench[:3] -= data.mass[0] * np.asarray(model.gravity.linear)
    return wrench, data.com[0].copy()


def angular_momentum_compensation(
    model: pin.Model,
    data: pin.Data,
    q: np.ndarray,
    v: np.ndarray,
    a: np.ndarray,
    ground_height: float,
) -> np.ndarray:
    """The horizontal CoM acceleration [m/s^2] against the ZMP shift of the angular momentum.

    The ZMP of the net contact wrench (F, M_G) about the CoM c (world axes,
    :func:`net_contact_wrench`; M_G the centroidal angular momentum's rate) at the ground height
    z_0, h = c_z - z_0, is p = c_xy - h F_xy / F_z + (-M_G,y, M_G,x) / F_z: the point mass's
    ZMP, which the DCM feedback places through the CoM acceleration (F_xy = m cdd_xy), shifted
    by the angular momentum's rate (a swing leg accelerated forward turns the body about the
    lateral axis and moves the ZMP forward). A CoM acceleration changed by d moves p by
    -d m h / F_z: d = (-M_G,y, M_G,x) / (m h) cancels the shift, whatever F_z. Zero when
    h <= 0.

    Args:
        model: Pinocchio model (floating base).
        data: Scratch data of ``model`` (overwritten).
        q: Configuration (nq,).
        v: Velocity (nv,).
        a: Acceleration (nv,).
        ground_height: z_0 [m], world.
    """
    wrench, com = net_contact_wrench(model, data, q, v, a)
    height = float(com[2] - ground_height)
    if height <= 0.0:
        return np.zeros(2)
    return np.array([-wrench[4], wrench[3]]) / (float(data.mass[0]) * height)


def motion_torques(
    model: WholeBodyModel,
    data: pin.Data,
    q: np.ndarray,
    v: np.ndarray,
    a: np.ndarray,
    contacts: Sequence[ActiveContact],
    *,
    mu: float,
    solver: DenseQPSolver | None = None,
    lifted: Sequence[str] = (),
    jacobians_at_q: bool = False,
    jacobians: Mapping[int, np.ndarray] | None = None,
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Joint torques [N m] (ndof,) of the motion (q, v, a) on the held soles (see the module).

    Args:
        model: Whole-body model (floating base).
        data: Scratch data of ``model.model`` (overwritten).
        q: Configuration (nq,).
        v: Velocity (nv,) [rad/s, m/s].
        a: Acceleration (nv,) [rad/s^2, m/s^2].
        contacts: Held soles.
        mu: Friction coefficient of the wrench cones [-].
        solver: Re-used QP workspace of the distribution.
        lifted: Held soles with no load: their wrench is left out of tau.
        jacobians_at_q: ``data`` already holds the joint Jacobians and frame placements at q
            (``computeJointJacobians`` and ``updateFramePlacements``, e.g. by
            :func:`~wbm_control.planned_acceleration.planned_acceleration` at the same q):
            they are read instead of computed again.
        jacobians: Frame id to the LOCAL_WORLD_ALIGNED Jacobian (6 x nv) at q of each held
            sole's frame (e.g. the step's kinematics at the same q): read instead of ``data``'s.

    Returns:
        tau, and the sole wrenches (force [N], torque [N m] at the sole origin, world axes; a
        sole left out of tau included). Without held soles the wrenches are empty (the motion
        is that of a free-falling body's joints). When the net wrench cannot be distributed in
        the cones (the ZMP of the motion outside the support polygon), the minimum-norm wrenches
        that produce it are used (no cones).

    Raises:
        InputError: q, v or a of the wrong size or not finite.
    """
    pin_model = model.model
    q, v, a = np.asarray(q, dtype=float), np.asarray(v, dtype=float), np.asarray(a, dtype=float)
    sizes = (("q", q, pin_model.nq), ("v", v, pin_model.nv), ("a", a, pin_model.nv))
    for name, value, size in sizes:
        if value.shape != (size,):
            raise InputError(name, f"{size} finite values", value.shape)
    tau = pin.rnea(pin_model, data, q, v, a).copy()
    if not contacts:
        for name, value, _ in sizes:
            if not all_finite(value):
                raise InputError(name, f"{value.size} finite values", value.shape)
        return tau[6:], {}
    # The base rows of M a + h are the net contact wrench at the base origin, base axes
    # (sum_i J_i,base^T f_i); about the CoM in world axes it is dh_G/dt - (m g, 0): one
    # compiled call (the free flyer's placement from q), which also tells whether tau is finite
    # (q, v and a are when it is, and they are checked when it is not).
    com = pin.centerOfMass(pin_model, data, POSITION, False)  # rnea placed the joints at q
    wrench = np.empty(6)
    if not feedforward_kernels.base_wrench(tau, q, _root_placement(pin_model), com, wrench):
        for name, value, _ in sizes:
            if not all_finite(value):
                raise InputError(name, f"{value.size} finite values", value.shape)
    try:
        wrenches = distribute_net_wrench(contacts, com, wrench, mu=mu, solver=solver)
    except NoSolutionFound:
        wrenches = _minimum_norm_wrenches(contacts, com, wrench)
    if not jacobians_at_q and jacobians is None:
        pin.computeJointJacobians(pin_model, data, q)
        pin.updateFramePlacements(pin_model, data)
    joints = tau[6:]
    for contact in contacts:
        if contact.sole.name in lifted:
            continue
        frame_id = _frame_id(model, contact.sole.frame)
        if jacobians is not None:
            jacobian = jacobians[frame_id]
        else:
            jacobian = pin.getFrameJacobian(pin_model, data, frame_id, _LWA)
        feedforward_kernels.subtract_contact_torques(joints, jacobian, wrenches[contact.sole.name])
    return joints, wrenches


#: Frame ids by (model, frame name): (model kept referenced, id) (a model's are constant).
_frame_ids: dict[tuple[int, str], tuple[WholeBodyModel, int]] = {}


def _frame_id(model: WholeBodyModel, frame: str) -> int:
    """``model.frame_id(frame)``, looked up once per model and frame."""
    cached = _frame_ids.get((id(model), frame))
    if cached is None or cached[0] is not model:
        cached = (model, model.frame_id(frame))
        _frame_ids[(id(model), frame)] = cached
    return cached[1]


#: The root joints' placements in their parents (4 x 4), by model (a model's is constant).
_root_placements: dict[int, tuple[pin.Model, np.ndarray]] = {}


def _root_placement(model: pin.Model) -> np.ndarray:
    """The free flyer's placement in the universe (``model.jointPlacements[1]``), 4 x 4."""
    cached = _root_placements.get(id(model))
    if cached is None or cached[0] is not model:
        cached = (model, np.ascontiguousarray(model.jointPlacements[1].homogeneous))
        _root_placements[id(model)] = cached
    return cached[1]


def _minimum_norm_wrenches(
    contacts: Sequence[ActiveContact], com: np.ndarray, wrench: np.ndarray
) -> dict[str, np.ndarray]:
    """The least-norm sole wrenches (at the sole origins, world axes) summing to ``wrench``."""
    columns = []
    for contact in contacts:
        block = np.eye(6)
        r = contact.placement.translation - com
        block[3:, :3] = np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])
        columns.append(block)
    x = np.linalg.pinv(np.hstack(columns)) @ wrench
    return {c.sole.name: x[6 * k : 6 * k + 6].copy() for k, c in enumerate(contacts)}
