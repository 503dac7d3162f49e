"""Contact-consistent joint torques: gravity held through the contact wrenches (IK mode).

With the robot at q, the contact wrenches f_i are distributed over the held soles
(:mod:`wbm_control.wrench_distribution`) so that they produce a net wrench about the CoM (for
standing still (-m g, 0); with the DCM feedback's CoM acceleration, m (cdd - g)), and the joint
torques follow from the joint rows of the equations of motion, quasi-statically (M a neglected):
tau = g_j(q) - sum_i J_i,j^T f_i (J_i the soles' LOCAL_WORLD_ALIGNED Jacobians).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pinocchio as pin

from wbm_control.contacts import ActiveContact
from wbm_control.exceptions import NoSolutionFound
from wbm_control.qp import DenseQPSolver
from wbm_control.robot_kinematics import RobotKinematics
from wbm_control.wrench_distribution import solve_wrench_distribution
from wbm_description.whole_body_model import WholeBodyModel

_LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
POSITION = pin.KinematicLevel.POSITION


def contact_consistent_torques(
    model: WholeBodyModel,
    data: pin.Data,
    q: np.ndarray,
    contacts: Sequence[ActiveContact],
    net_wrench_at_com: np.ndarray,
    *,
    mu: float,
    solver: DenseQPSolver | None = None,
    lifted: Sequence[str] = (),
    kinematics: RobotKinematics | None = None,
) -> np.ndarray:
    """Joint torques [N m] (ndof,) that hold the robot at q on its contacts (see module).

    Args:
        model: Whole-body model (floating base).
        data: Scratch data of ``model.model`` (overwritten).
        q: Configuration.
        contacts: Held soles.
        net_wrench_at_com: Net contact wrench about the CoM, world axes [N, N m].
        mu: Friction coefficient of the wrench cones [-].
        solver: Re-used QP workspace.
        lifted: Held soles with no load: their wrench is left out of tau (it would push their
            leg through the air).
        kinematics: The step's kinematics at q with the soles' Jacobians: its CoM and
            Jacobians are read instead of a kinematics pass of this function's own.

    Returns:
        tau; when the wrench cannot be distributed in the cones (the CoM is not above the
        support polygon) the minimum-norm wrenches without cones are used.
    """
    pin_model = model.model
    g = pin.computeGeneralizedGravity(pin_model, data, q).copy()
    if not contacts:
        return g[6:]
    sole_ids = [model.frame_id(contact.sole.frame) for contact in contacts]
    if kinematics is None or any(fid not in kinematics.jacobians for fid in sole_ids):
        # One kinematics pass for the Jacobians; the CoM from its joint placements.
        pin.computeJointJacobians(pin_model, data, q)
        pin.updateFramePlacements(pin_model, data)
        com = pin.centerOfMass(pin_model, data, POSITION, False)
        jacobians = {fid: pin.getFrameJacobian(pin_model, data, fid, _LWA) for fid in sole_ids}
    else:
        com, jacobians = kinematics.com, kinematics.jacobians
    try:
        wrenches = solve_wrench_distribution(
            contacts, com, net_wrench_at_com, mu=mu, solver=solver
        )
    except NoSolutionFound:
        _, by_frame = model.static_contact_torques(q, [c.sole.frame for c in contacts])
        wrenches = {c.sole.name: by_frame[c.sole.frame] for c in contacts}
    tau = g[6:].copy()
    for contact, frame_id in zip(contacts, sole_ids, strict=True):
        if contact.sole.name in lifted:
            continue
        tau -= jacobians[frame_id][:, 6:].T @ wrenches[contact.sole.name]
    return tau
