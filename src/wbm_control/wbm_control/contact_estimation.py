"""Which soles touch the ground, for soles without an F/T sensor (no rclpy).

Three pieces of evidence, per sole:

- the plan: the soles the controller holds (its :class:`~wbm_control.contacts.ContactSet`, which
  a walking state machine updates phase by phase) are in contact unless the other evidence
  contradicts it;
- kinematics: a sole touches down when it is near the ground (height of the sole frame above the
  ground plane below ``height_tolerance``) and nearly still (speed of its origin below
  ``speed_tolerance``);
- joint torques, when the robot reports them (``joint_states``' effort): the joint-space dynamics
  of the leg below the base, M qdd + h = tau + J^T f, with qdd ~ 0 (stance), gives the sole's
  wrench f from the leg's rows: J_leg^T f = h_leg - tau_leg (J: the sole frame's Jacobian in
  world axes, its columns of the joints between the base and the sole; those columns see no other
  contact in a kinematic tree). Its vertical component is the sole's load. A held sole whose load
  drops below ``unload_threshold`` is out of contact (lift-off, or pushed off); a free sole that
  is near the ground and loaded above ``load_threshold`` touched down. A sole out of contact has
load 0 (what the base estimator anchors on).

Without joint torques, the load of a sole in contact is its static share of the weight (m g over
the soles in contact), and 0 for the others: what the base estimator's anchoring needs.

Frames: world (z up), metres, seconds, newtons.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from wbm_control.exceptions import InputError
from wbm_description.whole_body_model import WholeBodyModel

_LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


@dataclass(frozen=True)
class ContactEstimate:
    """One estimate.

    Attributes:
        contacts: The soles estimated in contact (sole names), in the robot config's order.
        loads: Sole name to its load (normal force) [N]: from the joint torques when used, else
            the static share of the weight, for soles in contact; 0 for the others (a swing
            leg's inertial and friction torques read as a load: the base estimator would anchor
            the sole in the air).
        torque_wrenches: Sole name to the wrench (force [N], torque about the sole origin
            [N m], world axes) from the joint torques; empty when torques are not used.
        heights: Sole name to the height of the sole frame above the ground (the held soles'
            mean estimated height, see :meth:`ContactEstimator.update`) [m].
        speeds: Sole name to the speed of the sole frame's origin [m/s].
    """

    contacts: tuple[str, ...]
    loads: dict[str, float]
    torque_wrenches: dict[str, np.ndarray]
    heights: dict[str, float]
    speeds: dict[str, float]


class ContactEstimator:
    """Contact state of the soles from the plan, kinematics and joint torques (module docstring).

    Args:
        model: The whole-body model (floating base, with soles).
        use_joint_torques: Whether the readings' joint efforts are measured joint torques.
        height_tolerance: A sole this close to the ground may be in contact [m].
        speed_tolerance: A sole this slow may be in contact [m/s].
        load_threshold: A free sole loaded above this touched down [N] (joint torques only).
        unload_threshold: A held sole loaded below this lifted off [N] (joint torques only).
    """

    def __init__(
        self,
        model: WholeBodyModel,
        *,
        use_joint_torques: bool = False,
        height_tolerance: float = 0.01,
        speed_tolerance: float = 0.1,
        load_threshold: float = 40.0,
        unload_threshold: float = 20.0,
    ):
        config = model.config
        if config is None or not config.floating_base or not config.soles:
            raise InputError("model", "a floating-base robot config with soles")
        for name, value in (
            ("height_tolerance", height_tolerance),
            ("speed_tolerance", speed_tolerance),
        ):
            if not value > 0.0:
                raise InputError(name, "a positive tolerance", value)
        if not 0.0 <= unload_threshold <= load_threshold:
            expected = f"in [0, load_threshold ({load_threshold} N)]"
            raise InputError("unload_threshold", expected, unload_threshold)
        self.model = model
        self.pin_model = model.model
        self.data = model.model.createData()
        self.use_joint_torques = bool(use_joint_torques)
        self.height_tolerance = float(height_tolerance)
        self.speed_tolerance = float(speed_tolerance)
        self.load_threshold = float(load_threshold)
        self.unload_threshold = float(unload_threshold)
        self.weight = float(model.total_mass * np.linalg.norm(model.model.gravity.linear))
        self.sole_names = tuple(sole.name for sole in config.soles)
        self.sole_frame_ids = {sole.name: model.frame_id(sole.frame) for sole in config.soles}
        self.leg_columns = {
            name: self.leg_velocity_indices(frame_id)
            for name, frame_id in self.sole_frame_ids.items()
        }

    def leg_velocity_indices(self, frame_id: int) -> np.ndarray:
        """Velocity indices of the joints between the base and a frame (its leg), base excluded."""
        joint = self.pin_model.frames[frame_id].parentJoint
        indices = []
        for joint_id in self.pin_model.supports[joint]:
            joint_model = self.pin_model.joints[joint_id]
            if joint_id <= 1 or joint_model.nv == 0:  # the universe and the free-flyer
                continue
            indices.extend(range(joint_model.idx_v, joint_model.idx_v + joint_model.nv))
        return np.array(indices, dtype=int)

    def torque_wrench(
        self, name: str, efforts: np.ndarray, bias: np.ndarray
    ) -> tuple[np.ndarray, float]:
        """A sole's wrench from the joint torques (qdd ~ 0), and the fit's residual [N m].

        Args:
            name: Sole name.
            efforts: Joint torques (ndof,) [N m], model order.
            bias: Bias forces h(q, v) (nv,) (computed at the state of the last kinematics).
        """
        columns = self.leg_columns[name]
        jacobian = pin.getFrameJacobian(
            self.pin_model, self.data, self.sole_frame_ids[name], _LWA
        )[:, columns]
        rhs = bias[columns] - efforts[columns - 6]
        wrench, *_ = np.linalg.lstsq(jacobian.T, rhs, rcond=None)
        residual = float(np.linalg.norm(jacobian.T @ wrench - rhs))
        return wrench, residual

    def update(
        self,
        q: np.ndarray,
        v: np.ndarray,
        planned: Collection[str],
        *,
        efforts: np.ndarray | None = None,
        ground_height: float = 0.0,
    ) -> ContactEstimate:
        """The contact state at one estimated state.

        Args:
            q: Configuration (nq,), Pinocchio layout.
            v: Velocity (nv,), Pinocchio layout.
            planned: The soles the controller holds.
            efforts: Measured joint torques (ndof,) [N m], model order; used only with
                ``use_joint_torques``.
            ground_height: Height of the ground plane [m] while no sole is held. With held
                soles the ground is where the estimate puts them (their mean height): the
                estimated world drifts vertically with each touch-down's anchoring (the
                ground's give under the load: about 0.5 mm a step on the G1 walking on the
                compliant ground, 0.9 mm on MuJoCo, without the base estimator's
                ``flat_ground``), which would carry a free sole past the height tolerance
                after some 20 steps.
        """
        q = np.asarray(q, dtype=float)
        v = np.asarray(v, dtype=float)
        pin.computeJointJacobians(self.pin_model, self.data, q)
        pin.updateFramePlacements(self.pin_model, self.data)
        heights, speeds = {}, {}
        levels = {
            name: float(self.data.oMf[frame_id].translation[2])
            for name, frame_id in self.sole_frame_ids.items()
        }
        held = [levels[name] for name in self.sole_names if name in planned]
        ground = float(np.mean(held)) if held else ground_height
        for name, frame_id in self.sole_frame_ids.items():
            heights[name] = levels[name] - ground
            jacobian = pin.getFrameJacobian(self.pin_model, self.data, frame_id, _LWA)
            speeds[name] = float(np.linalg.norm(jacobian[:3] @ v))
        touching = {
            name
            for name in self.sole_names
            if heights[name] < self.height_tolerance and speeds[name] < self.speed_tolerance
        }
        wrenches: dict[str, np.ndarray] = {}
        if self.use_joint_torques and efforts is not None:
            efforts = np.asarray(efforts, dtype=float)
            if efforts.shape != (self.model.ndof,) or not np.all(np.isfinite(efforts)):
                raise InputError("efforts", f"{self.model.ndof} finite joint torques", efforts)
            bias = pin.nonLinearEffects(self.pin_model, self.data, q, v)
            for name in self.sole_names:
                wrenches[name] = self.torque_wrench(name, efforts, bias)[0]
        contacts = []
        for name in self.sole_names:
            load = wrenches[name][2] if name in wrenches else None
            if name in planned:
                in_contact = load is None or load >= self.unload_threshold
            else:
                in_contact = name in touching and (load is None or load > self.load_threshold)
            if in_contact:
                contacts.append(name)
        if wrenches:  # a sole out of contact carries nothing: its leg's inertia reads as a load
            loads = {
                name: float(wrenches[name][2]) if name in contacts else 0.0
                for name in self.sole_names
            }
        else:
            share = self.weight / max(len(contacts), 1)
            loads = {name: share if name in contacts else 0.0 for name in self.sole_names}
        return ContactEstimate(tuple(contacts), loads, wrenches, heights, speeds)
