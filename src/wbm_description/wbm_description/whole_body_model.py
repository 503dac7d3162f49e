"""The whole-body model: the WBM-Library's API (seed 000, WBMBase and WBM) in Python on Pinocchio.

Every method is a pure function of the arguments it is given: there is no "current state" to set
first. Each thread gets its own ``pinocchio.Data``, reused between calls (an invisible cache).

Conventions (see :mod:`wbm_description.conventions`): q and v in Pinocchio's layout
(quaternion x, y, z, w; base twist in the base frame), spatial vectors linear first, contact and
external wrenches applied *by the environment on the robot* at the frame origin in world-aligned
axes. Jacobians, frame velocities, dJ/dt*nu, the mass matrix and bias forces are available in the
seed's mixed representation (``representation="mixed"``) or in Pinocchio's body one.

Joint order: the model's joints are the config's actuated joints in the URDF's depth-first order
(:attr:`WholeBodyModel.joint_names`); every per-joint array uses that order.

A URDF that declares its own floating root joint (a massless ``world`` link and a ``floating``
joint to the base link) is built without those two (:mod:`wbm_description.urdf_root`): the base
link is the joint's child, and wbm's free-flyer (or the weld of a fixed base) takes its place.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pinocchio as pin

from wbm_description.conventions import (
    Representation,
    base_velocity_body_to_mixed,
    base_velocity_mixed_to_body,
    quaternion_wxyz_to_xyzw,
    quaternion_xyzw_to_wxyz,
)
from wbm_description.exceptions import (
    ConfigError,
    InputError,
    NameNotFound,
    SingularConstraintError,
    UrdfError,
)
from wbm_description.robot_config import RobotConfig
from wbm_description.state import WbmState, check_vector
from wbm_description.urdf_checks import check_urdf, read_urdf_text
from wbm_description.urdf_root import FloatingRootJoint, remove_floating_root

_LOCAL = pin.ReferenceFrame.LOCAL
_MIXED = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


@dataclass(frozen=True)
class ConstrainedDynamics:
    """Result of contact-constrained forward dynamics.

    Attributes:
        acceleration: Generalized acceleration dv/dt in Pinocchio's layout, (nv,).
        contact_wrenches: Per contact frame, the wrench (force [N], torque [N m]) the environment
            applies to the robot at the frame origin, world-aligned axes, (6,).
        contact_acceleration: Mixed classical acceleration of each contact frame, stacked, (6k,);
            equals the drift-correction term -kd*J*v - kp*e (zero without correction).
    """

    acceleration: np.ndarray
    contact_wrenches: dict[str, np.ndarray]
    contact_acceleration: np.ndarray


def _representation(value: Representation | str) -> Representation:
    try:
        return Representation(value)
    except ValueError:
        raise InputError("representation", "'mixed' or 'body'", value) from None


def check_depth_first(model: pin.Model, source: Path | str | None = None) -> None:
    """Refuse a Pinocchio model whose joints are not numbered depth-first.

    Pinocchio's recursive algorithms (crba, aba, ...) assume every joint's subtree is numbered
    contiguously from the joint on (the order a URDF parser produces). A hand-made model whose
    joints were added breadth-first breaks that assumption silently: its mass matrix is wrong.
    Such a model is refused (rebuild it adding each joint's children right after it).

    Args:
        model: The model.
        source: Where it came from, for the message (default ``<model>``).

    Raises:
        UrdfError: A joint whose subtree is not contiguous, named with the joint that breaks it.
    """
    for joint in range(1, model.njoints):
        # Depth-first: the joint's subtree holds exactly the joints numbered joint, joint + 1, ...
        subtree = set(model.subtrees[joint])
        stray = [k for k in range(joint, joint + len(subtree)) if k not in subtree]
        if stray:
            raise UrdfError(
                source or "<model>",
                f"joint '{model.names[stray[0]]}' (index {stray[0]})",
                "joints numbered depth-first: each joint's children and their subtrees right "
                "after it, as the URDF parser builds them (Pinocchio's algorithms assume it)",
                f"it lies inside the numbers of the subtree of '{model.names[joint]}' without "
                "belonging to it",
            )


class WholeBodyModel:
    """A floating- or fixed-base robot model with the WBM-Library's computations.

    Build it with :meth:`from_config` (a robot config) or :meth:`from_urdf` (a bare URDF).

    Attributes:
        model: The Pinocchio model. Treat it as read-only.
        config: The robot config, when built from one.
        floating_base: Whether the base is free-flying.
        joint_names: Actuated joints in model order.
        urdf_path: The URDF file.
        urdf_text: The URDF the model was built from: the file's text, without its floating
            root joint and root link if it had them (what robot_description and viewers need to
            match the model's frames).
        urdf_floating_root: The floating root joint removed from the URDF, or None.
    """

    def __init__(
        self,
        model: pin.Model,
        *,
        floating_base: bool,
        config: RobotConfig | None = None,
        urdf_path: Path | None = None,
        urdf_text: str | None = None,
        torque_limits: np.ndarray | None = None,
        viscous_friction: np.ndarray | None = None,
        coulomb_friction: np.ndarray | None = None,
        initial_posture: np.ndarray | None = None,
        world_reference_frame: str | None = None,
        servo_kp: np.ndarray | None = None,
        servo_kd: np.ndarray | None = None,
        urdf_floating_root: FloatingRootJoint | None = None,
    ):
        check_depth_first(model, urdf_path)
        self.model = model
        self.config = config
        self.floating_base = floating_base
        self.urdf_path = urdf_path
        self.urdf_text = urdf_text
        self.urdf_floating_root = urdf_floating_root
        first = 2 if floating_base else 1
        self.joint_names: tuple[str, ...] = tuple(model.names[first:])
        self.ndof = len(self.joint_names)
        if model.nv != self.ndof + (6 if floating_base else 0):
            raise UrdfError(
                urdf_path or "<model>", "joints", "only 1-DoF revolute or prismatic joints"
            )
        self.nq = model.nq
        self.nv = model.nv
        self._base_dofs = 6 if floating_base else 0
        self._q_joint_start = 7 if floating_base else 0
        self.frame_names: tuple[str, ...] = tuple(frame.name for frame in model.frames)
        self._frame_ids = {name: i for i, name in enumerate(self.frame_names)}
        self._joint_index = {name: i for i, name in enumerate(self.joint_names)}
        self.joint_indices: Mapping[str, int] = MappingProxyType(self._joint_index)
        """Joint name to its index in the model's joint order (read-only)."""
        lower = np.array(model.lowerPositionLimit[self._q_joint_start :])
        upper = np.array(model.upperPositionLimit[self._q_joint_start :])
        self.joint_position_limits = (lower, upper)
        effort = np.array(model.effortLimit[self._base_dofs :])
        self.torque_limits = effort if torque_limits is None else np.asarray(torque_limits, float)
        zeros = np.zeros(self.ndof)
        self.viscous_friction = zeros if viscous_friction is None else viscous_friction
        self.coulomb_friction = zeros if coulomb_friction is None else coulomb_friction
        self.initial_posture = zeros.copy() if initial_posture is None else initial_posture
        self.servo_kp = zeros.copy() if servo_kp is None else np.asarray(servo_kp, float)
        """Joint servo stiffness [N m/rad], model order (zeros without a robot config)."""
        self.servo_kd = zeros.copy() if servo_kd is None else np.asarray(servo_kd, float)
        """Joint servo damping [N m s/rad], model order (zeros without a robot config)."""
        self.config_order = (
            np.array([config.joints.index(name) for name in self.joint_names], dtype=int)
            if config is not None
            else np.arange(self.ndof)
        )
        """For each model joint, its index in the robot config's ``joints`` list."""
        if world_reference_frame is not None:
            self.frame_id(world_reference_frame)
        self.world_reference_frame = world_reference_frame
        self.total_mass = float(sum(inertia.mass for inertia in model.inertias))
        self._local = threading.local()

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_urdf(
        cls,
        urdf_path: str | Path,
        *,
        floating_base: bool = True,
        gravity: Sequence[float] = (0.0, 0.0, -9.81),
    ) -> WholeBodyModel:
        """Model of every movable joint of a URDF, with its limits and no friction.

        A floating root joint of the URDF is replaced by the base (module docstring).
        """
        path = Path(urdf_path)
        text, floating_root = remove_floating_root(path, read_urdf_text(path))
        model = _build_pinocchio_model(path, text, floating_base)
        model.gravity.linear = np.asarray(gravity, dtype=float)
        return cls(
            model,
            floating_base=floating_base,
            urdf_path=path,
            urdf_text=text,
            urdf_floating_root=floating_root,
        )

    @classmethod
    def from_config(cls, config: RobotConfig) -> WholeBodyModel:
        """Model of a robot config: its joints, limits, payloads, tools and world reference.

        Raises:
            UrdfError: The URDF is malformed or describes an impossible robot.
            ConfigError: A name in the config is not in the URDF, or a value does not fit it.
        """
        path = config.urdf_path
        text, floating_root = remove_floating_root(path, read_urdf_text(path))
        full = _build_pinocchio_model(path, text, config.floating_base)
        cfg = config.config_path

        root_link = _urdf_root_link(check_urdf(path, text))
        if config.base_link != root_link:
            expected = f"the URDF's root link '{root_link}'"
            if floating_root is not None:
                expected = (
                    f"the link below the URDF's floating root joint '{floating_root.joint}' "
                    f"('{root_link}'; the joint and its root link '{floating_root.root_link}' "
                    "are replaced by the base)"
                )
            raise ConfigError(cfg, "base.link", expected, config.base_link)

        first = 2 if config.floating_base else 1
        movable = list(full.names[first:])
        for i, joint in enumerate(config.joints):
            if joint not in movable:
                raise ConfigError(
                    cfg, f"joints[{i}]", f"a movable joint of {path}: {movable}", joint
                )
            if full.joints[full.getJointId(joint)].nq != 1:
                raise ConfigError(cfg, f"joints[{i}]", "a revolute or prismatic joint", joint)
        locked = [full.getJointId(name) for name in movable if name not in config.joints]
        model = pin.buildReducedModel(full, locked, pin.neutral(full)) if locked else full
        model.gravity.linear = np.asarray(config.gravity, dtype=float)

        # Per-joint config values, from the config's order to the model's order.
        model_joints = list(model.names[first:])
        order = [config.joints.index(name) for name in model_joints]
        base_dofs = 6 if config.floating_base else 0
        base_nq = 7 if config.floating_base else 0
        lower, upper = config.position_limits
        for model_index, config_index in enumerate(order):
            if not np.isnan(lower[config_index]):
                model.lowerPositionLimit[base_nq + model_index] = lower[config_index]
                model.upperPositionLimit[base_nq + model_index] = upper[config_index]
        model.effortLimit[base_dofs:] = config.torque_limits[order]

        frames = {frame.name for frame in model.frames}

        def require_frame(name: str, key: str) -> None:
            if name not in frames:
                raise ConfigError(cfg, key, f"a link or frame of {path}", name)

        for i, payload in enumerate(config.payloads):
            require_frame(payload.link, f"payloads[{i}].link")
            frame = model.frames[model.getFrameId(payload.link)]
            inertia = pin.Inertia(payload.mass, np.array(payload.com), np.array(payload.inertia))
            model.inertias[frame.parentJoint] += frame.placement.act(inertia)
        for i, tool in enumerate(config.tools):
            require_frame(tool.link, f"tools[{i}].link")
            if tool.name in frames:
                raise ConfigError(
                    cfg, f"tools[{i}].name", "a frame name not already used", tool.name
                )
            link_id = model.getFrameId(tool.link)
            link = model.frames[link_id]
            placement = link.placement * pin.SE3(
                pin.rpy.rpyToMatrix(np.array(tool.rpy)), np.array(tool.position)
            )
            model.addFrame(
                pin.Frame(tool.name, link.parentJoint, link_id, placement, pin.FrameType.OP_FRAME)
            )
            frames.add(tool.name)
        for sole in config.soles:
            require_frame(sole.frame, f"soles.{sole.name}.frame")
        for point in config.contact_points:
            require_frame(point.frame, f"contact_points.{point.name}.frame")
        for sensor in config.ft_sensors:
            require_frame(sensor.frame, f"ft_sensors.{sensor.name}.frame")
        if config.imu_frame is not None:
            require_frame(config.imu_frame, "imu.frame")
        if config.world_reference_link is not None:
            require_frame(config.world_reference_link, "world_reference_link")

        posture = config.initial_posture[order]
        for model_index, name in enumerate(model_joints):
            low = model.lowerPositionLimit[base_nq + model_index]
            high = model.upperPositionLimit[base_nq + model_index]
            if not low - 1e-9 <= posture[model_index] <= high + 1e-9:
                raise ConfigError(
                    cfg,
                    f"initial_posture.{name}",
                    f"a position within the joint limits [{low:.4g}, {high:.4g}] rad",
                    float(posture[model_index]),
                )
        return cls(
            model,
            floating_base=config.floating_base,
            config=config,
            urdf_path=path,
            urdf_text=text,
            torque_limits=config.torque_limits[order],
            viscous_friction=config.viscous_friction[order],
            coulomb_friction=config.coulomb_friction[order],
            initial_posture=posture,
            world_reference_frame=config.world_reference_link,
            servo_kp=config.servo_kp[order],
            servo_kd=config.servo_kd[order],
            urdf_floating_root=floating_root,
        )

    # ------------------------------------------------------------------ checks and caches

    @property
    def data(self) -> pin.Data:
        """This thread's Pinocchio data (scratch space, overwritten by every call)."""
        data = getattr(self._local, "data", None)
        if data is None:
            data = self.model.createData()
            self._local.data = data
        return data

    def frame_id(self, name: str) -> int:
        """Pinocchio index of a frame, or NameNotFound."""
        try:
            return self._frame_ids[name]
        except KeyError:
            raise NameNotFound("frame", name, self.frame_names) from None

    def joint_index(self, name: str) -> int:
        """Index of an actuated joint in the model's joint order, or NameNotFound."""
        try:
            return self._joint_index[name]
        except KeyError:
            raise NameNotFound("joint", name, self.joint_names) from None

    def _joint_array(self, values: object, name: str) -> np.ndarray:
        array = np.asarray(values, dtype=float)
        if array.shape != (self.ndof,):
            raise InputError(name, f"a vector of length {self.ndof}", f"shape {array.shape}")
        return array

    def from_config_order(self, values: object, name: str = "values") -> np.ndarray:
        """A per-joint array in the robot config's ``joints`` order, in model order.

        NaN entries (e.g. "no override" in the config's position limits) are kept.
        """
        return self._joint_array(values, name)[self.config_order]

    def to_config_order(self, values: object, name: str = "values") -> np.ndarray:
        """A per-joint array in model order, in the robot config's ``joints`` order."""
        out = np.empty(self.ndof)
        out[self.config_order] = self._joint_array(values, name)
        return out

    def frames_below(self, frame: str) -> tuple[int, ...]:
        """Ids of a frame and of every frame below it in the frame tree.

        For an F/T sensor frame: the frames of its child side (the foot below an ankle
        sensor), wherever the tree branches below it.

        Raises:
            NameNotFound: Unknown frame.
        """
        root = self.frame_id(frame)
        frames = self.model.frames
        below = []
        for candidate in range(len(frames)):
            current = candidate
            while True:
                if current == root:
                    below.append(candidate)
                    break
                parent = frames[current].parentFrame
                if current == 0 or parent == current:
                    break
                current = parent
        return tuple(below)

    def check_configuration(self, q: object, name: str = "q") -> np.ndarray:
        """Q as a finite vector of length nq with a unit base quaternion, or InputError."""
        q = check_vector(q, name, self.nq)
        if self.floating_base:
            squared_norm = q[3:7] @ q[3:7]
            if abs(squared_norm - 1.0) > 2e-6:
                norm = np.sqrt(squared_norm)
                raise InputError(name, "a unit base quaternion in q[3:7]", f"norm {norm:.6g}")
        return q

    def check_velocity(self, v: object, name: str = "v") -> np.ndarray:
        """A finite vector of length nv, or InputError."""
        return check_vector(v, name, self.nv)

    def check_joint_vector(self, value: object, name: str) -> np.ndarray:
        """A finite vector of length ndof, or InputError."""
        return check_vector(value, name, self.ndof)

    # ------------------------------------------------------------------ state

    def neutral_configuration(self) -> np.ndarray:
        """Base at the world origin, identity orientation, every joint at 0."""
        return pin.neutral(self.model)

    def base_placement_for_reference_frame(
        self, joint_positions: np.ndarray, frame: str, world_placement: pin.SE3 | None = None
    ) -> pin.SE3:
        """Base placement that puts ``frame`` at ``world_placement`` (seed 000's fixed link).

        Args:
            joint_positions: Joint positions [rad], (ndof,).
            frame: The reference frame (for iCub a sole).
            world_placement: Where the frame should be in the world; identity by default.

        Returns:
            world_T_base.
        """
        if not self.floating_base:
            raise InputError("frame", "a floating-base model (a fixed base cannot be placed)")
        q = self.configuration(pin.SE3.Identity(), joint_positions)
        base_T_frame = self.frame_placement(q, frame)
        target = pin.SE3.Identity() if world_placement is None else world_placement
        return target * base_T_frame.inverse()

    def configuration(self, base_placement: pin.SE3 | None, joint_positions: object) -> np.ndarray:
        """Pinocchio q from a base placement (ignored for a fixed base) and joint positions."""
        joints = self.check_joint_vector(joint_positions, "joint_positions")
        if not self.floating_base:
            return joints.copy()
        placement = pin.SE3.Identity() if base_placement is None else base_placement
        return np.concatenate([pin.SE3ToXYZQUAT(placement), joints])

    def initial_configuration(self) -> np.ndarray:
        """The config's initial posture, with the world frame at the world reference link.

        Without a world reference link the base sits at the world origin.
        """
        if not self.floating_base or self.world_reference_frame is None:
            return self.configuration(pin.SE3.Identity(), self.initial_posture)
        base = self.base_placement_for_reference_frame(
            self.initial_posture, self.world_reference_frame
        )
        return self.configuration(base, self.initial_posture)

    def joint_positions(self, q: np.ndarray) -> np.ndarray:
        """The joint part of q [rad]."""
        return np.asarray(q)[self._q_joint_start :]

    def joint_velocities(self, v: np.ndarray) -> np.ndarray:
        """The joint part of v [rad/s]."""
        return np.asarray(v)[self._base_dofs :]

    def base_rotation(self, q: np.ndarray) -> np.ndarray:
        """Orientation of the base in the world (identity for a fixed base), 3 x 3."""
        if not self.floating_base:
            return np.eye(3)
        return pin.Quaternion(np.asarray(q[3:7])).normalized().toRotationMatrix()

    def velocity_to_mixed(self, q: object, v: object) -> np.ndarray:
        """Pinocchio v (base twist in base axes) to the seed's mixed nu (world axes)."""
        q = self.check_configuration(q)
        nu = self.check_velocity(v).copy()
        if self.floating_base:
            nu[:6] = base_velocity_body_to_mixed(self.base_rotation(q), nu[:6])
        return nu

    def velocity_from_mixed(self, q: object, nu: object) -> np.ndarray:
        """Inverse of :meth:`velocity_to_mixed`."""
        q = self.check_configuration(q)
        v = self.check_velocity(nu, "nu").copy()
        if self.floating_base:
            v[:6] = base_velocity_mixed_to_body(self.base_rotation(q), v[:6])
        return v

    def _mixed_drift(self, v: np.ndarray) -> np.ndarray:
        """dT/dt * nu with v = T(q) nu: (-omega_b x v_b, 0, 0) in body coordinates."""
        drift = np.zeros(self.nv)
        if self.floating_base:
            drift[:3] = -np.cross(v[3:6], v[:3])
        return drift

    def acceleration_to_mixed(self, q: object, v: object, a: object) -> np.ndarray:
        """Pinocchio dv/dt to the mixed d(nu)/dt, given the state (q, v)."""
        q = self.check_configuration(q)
        v = self.check_velocity(v)
        a = self.check_velocity(a, "a")
        mixed = a - self._mixed_drift(v)
        if self.floating_base:
            mixed[:6] = base_velocity_body_to_mixed(self.base_rotation(q), mixed[:6])
        return mixed

    def acceleration_from_mixed(self, q: object, v: object, nu_dot: object) -> np.ndarray:
        """Inverse of :meth:`acceleration_to_mixed`."""
        q = self.check_configuration(q)
        v = self.check_velocity(v)
        a = self.check_velocity(nu_dot, "nu_dot").copy()
        if self.floating_base:
            a[:6] = base_velocity_mixed_to_body(self.base_rotation(q), a[:6])
        return a + self._mixed_drift(v)

    def state_to_pinocchio(self, state: WbmState) -> tuple[np.ndarray, np.ndarray]:
        """The seed's state chi to Pinocchio's (q, v)."""
        if state.ndof != self.ndof:
            raise InputError("state", f"a state with {self.ndof} joints", state.ndof)
        if not self.floating_base:
            return state.joint_positions.copy(), state.joint_velocities.copy()
        quaternion = quaternion_wxyz_to_xyzw(state.base_orientation_wxyz)
        q = np.concatenate([state.base_position, quaternion, state.joint_positions])
        nu = np.concatenate(
            [state.base_linear_velocity, state.base_angular_velocity, state.joint_velocities]
        )
        return q, self.velocity_from_mixed(q, nu)

    def state_from_pinocchio(self, q: object, v: object) -> WbmState:
        """Pinocchio's (q, v) to the seed's state chi (a fixed base sits at the origin)."""
        q = self.check_configuration(q)
        v = self.check_velocity(v)
        if not self.floating_base:
            zero = np.zeros(3)
            return WbmState(zero, np.array([1.0, 0, 0, 0]), q, zero, zero, v)
        nu = self.velocity_to_mixed(q, v)
        quaternion = q[3:7] / np.linalg.norm(q[3:7])
        return WbmState(
            base_position=q[0:3],
            base_orientation_wxyz=quaternion_xyzw_to_wxyz(quaternion),
            joint_positions=q[7:],
            base_linear_velocity=nu[0:3],
            base_angular_velocity=nu[3:6],
            joint_velocities=nu[6:],
        )

    # ------------------------------------------------------------------ kinematics

    def _mixed_input(self, q: np.ndarray, jacobian: np.ndarray) -> np.ndarray:
        """Right-multiply a Jacobian w.r.t. v by T so that it acts on the mixed nu."""
        if self.floating_base:
            R = self.base_rotation(q)
            jacobian = jacobian.copy()
            jacobian[:, 0:3] = jacobian[:, 0:3] @ R.T
            jacobian[:, 3:6] = jacobian[:, 3:6] @ R.T
        return jacobian

    def frame_placement(self, q: object, frame: str) -> pin.SE3:
        """Placement of ``frame`` in the world (world_T_frame)."""
        q = self.check_configuration(q)
        frame_id = self.frame_id(frame)
        data = self.data
        pin.forwardKinematics(self.model, data, q)
        return pin.updateFramePlacement(self.model, data, frame_id).copy()

    def frame_transform(self, q: object, frame: str) -> np.ndarray:
        """Homogeneous transformation matrix world_T_frame, 4 x 4."""
        return self.frame_placement(q, frame).homogeneous

    def frame_placements(self, q: object) -> list[pin.SE3]:
        """Placements of every frame in the world, in model frame order (for TF)."""
        q = self.check_configuration(q)
        data = self.data
        pin.framesForwardKinematics(self.model, data, q)
        return [placement.copy() for placement in data.oMf]

    def frame_jacobian(
        self, q: object, frame: str, *, representation: Representation | str = "mixed"
    ) -> np.ndarray:
        """Frame Jacobian, 6 x nv, linear rows first.

        mixed: maps nu to (d/dt origin, omega) in world axes. body: maps v to the frame twist in
        the frame's own axes.
        """
        representation = _representation(representation)
        q = self.check_configuration(q)
        frame_id = self.frame_id(frame)
        reference = _MIXED if representation is Representation.MIXED else _LOCAL
        jacobian = pin.computeFrameJacobian(self.model, self.data, q, frame_id, reference)
        if representation is Representation.MIXED:
            return self._mixed_input(q, jacobian)
        return jacobian

    def frame_velocity(
        self, q: object, v: object, frame: str, *, representation: Representation | str = "mixed"
    ) -> np.ndarray:
        """Frame velocity (linear, angular): mixed in world axes, body in frame axes.

        ``v`` is Pinocchio's generalized velocity in either case.
        """
        representation = _representation(representation)
        q = self.check_configuration(q)
        v = self.check_velocity(v)
        frame_id = self.frame_id(frame)
        data = self.data
        pin.forwardKinematics(self.model, data, q, v)
        reference = _MIXED if representation is Representation.MIXED else _LOCAL
        return pin.getFrameVelocity(self.model, data, frame_id, reference).vector.copy()

    def frame_jacobian_dot_times_velocity(
        self, q: object, v: object, frame: str, *, representation: Representation | str = "mixed"
    ) -> np.ndarray:
        """dJ/dt * nu (mixed, classical acceleration) or dJ/dt * v (body, spatial), (6,).

        It is the frame acceleration at zero generalized acceleration in the chosen
        representation, so that frame acceleration = J * d(nu)/dt + dJ/dt * nu.
        ``v`` is Pinocchio's generalized velocity in either case.
        """
        representation = _representation(representation)
        q = self.check_configuration(q)
        v = self.check_velocity(v)
        frame_id = self.frame_id(frame)
        data = self.data
        if representation is Representation.MIXED:
            # Pinocchio's classical acceleration at d(nu)/dt = 0, i.e. dv/dt = dT/dt nu.
            pin.forwardKinematics(self.model, data, q, v, self._mixed_drift(v))
            acc = pin.getFrameClassicalAcceleration(self.model, data, frame_id, _MIXED)
        else:
            pin.forwardKinematics(self.model, data, q, v, np.zeros(self.nv))
            acc = pin.getFrameAcceleration(self.model, data, frame_id, _LOCAL)
        return acc.vector.copy()

    def com_position(self, q: object) -> np.ndarray:
        """Centre of mass in the world [m], (3,)."""
        q = self.check_configuration(q)
        return pin.centerOfMass(self.model, self.data, q).copy()

    def com_jacobian(
        self, q: object, *, representation: Representation | str = "mixed"
    ) -> np.ndarray:
        """Jacobian of the CoM position (world axes), 3 x nv, w.r.t. nu (mixed) or v (body)."""
        representation = _representation(representation)
        q = self.check_configuration(q)
        jacobian = pin.jacobianCenterOfMass(self.model, self.data, q).copy()
        if representation is Representation.MIXED:
            return self._mixed_input(q, jacobian)
        return jacobian

    def com_velocity(self, q: object, v: object) -> np.ndarray:
        """CoM velocity in the world [m/s], (3,); ``v`` is Pinocchio's."""
        q = self.check_configuration(q)
        v = self.check_velocity(v)
        data = self.data
        pin.centerOfMass(self.model, data, q, v)
        return data.vcom[0].copy()

    def centroidal_momentum(self, q: object, v: object) -> np.ndarray:
        """Centroidal momentum (linear [kg m/s], angular about the CoM [kg m^2/s]), world axes."""
        q = self.check_configuration(q)
        v = self.check_velocity(v)
        return pin.computeCentroidalMomentum(self.model, self.data, q, v).vector.copy()

    def centroidal_momentum_matrix(
        self, q: object, *, representation: Representation | str = "mixed"
    ) -> np.ndarray:
        """A_G with h_G = A_G nu (mixed) or A_G v (body), 6 x nv."""
        representation = _representation(representation)
        q = self.check_configuration(q)
        matrix = pin.computeCentroidalMap(self.model, self.data, q).copy()
        if representation is Representation.MIXED:
            return self._mixed_input(q, matrix)
        return matrix

    # ------------------------------------------------------------------ dynamics

    def mass_matrix(
        self, q: object, *, representation: Representation | str = "body"
    ) -> np.ndarray:
        """Generalized mass matrix, nv x nv, symmetric; w.r.t. v (body) or nu (mixed)."""
        representation = _representation(representation)
        q = self.check_configuration(q)
        M = pin.crba(self.model, self.data, q).copy()  # Pinocchio 4 fills both triangles
        if representation is Representation.MIXED and self.floating_base:
            M = self._mixed_input(q, self._mixed_input(q, M).T).T
        return M

    def bias_forces(
        self, q: object, v: object, *, representation: Representation | str = "body"
    ) -> np.ndarray:
        """Generalized bias forces h = C(q, v) v + g(q), (nv,); ``v`` is Pinocchio's.

        mixed: the bias of the equations written in nu, T^T (h + M dT/dt nu), so that
        M_mixed d(nu)/dt + h_mixed = T^T tau.
        """
        representation = _representation(representation)
        q = self.check_configuration(q)
        v = self.check_velocity(v)
        h = pin.nonLinearEffects(self.model, self.data, q, v).copy()
        if representation is Representation.MIXED and self.floating_base:
            M = self.mass_matrix(q)
            h = self._mixed_input(q, (h + M @ self._mixed_drift(v))[np.newaxis, :])[0]
        return h

    def gravity_forces(self, q: object) -> np.ndarray:
        """Generalized gravity forces g(q), (nv,) (body representation)."""
        q = self.check_configuration(q)
        return pin.computeGeneralizedGravity(self.model, self.data, q).copy()

    def coriolis_forces(self, q: object, v: object) -> np.ndarray:
        """Coriolis and centrifugal forces C(q, v) v = h - g, (nv,) (body representation)."""
        return self.bias_forces(q, v) - self.gravity_forces(q)

    def _external_forces(self, q: np.ndarray, wrenches: Mapping[str, object] | None):
        """Pinocchio per-joint forces (joint-local) from world-aligned wrenches on frames."""
        if not wrenches:
            return None
        data = self.data
        pin.framesForwardKinematics(self.model, data, q)
        forces = pin.StdVec_Force()
        for _ in range(self.model.njoints):
            forces.append(pin.Force.Zero())
        for frame, wrench in wrenches.items():
            frame_id = self.frame_id(frame)
            wrench = check_vector(wrench, f"external_wrenches['{frame}']", 6)
            joint_id = self.model.frames[frame_id].parentJoint
            at_frame_world_axes = pin.SE3(np.eye(3), data.oMf[frame_id].translation)
            force_world = at_frame_world_axes.act(pin.Force(wrench))
            forces[joint_id] += data.oMi[joint_id].actInv(force_world)
        return forces

    def generalized_torques(self, joint_torques: object) -> np.ndarray:
        """Generalized forces S^T tau: zeros on the base rows, joint torques after, (nv,)."""
        tau = np.zeros(self.nv)
        tau[self._base_dofs :] = self.check_joint_vector(joint_torques, "joint_torques")
        return tau

    def inverse_dynamics(
        self,
        q: object,
        v: object,
        a: object,
        *,
        external_wrenches: Mapping[str, object] | None = None,
    ) -> np.ndarray:
        """Generalized forces that produce acceleration ``a``: M a + h - sum J_e^T f_e, (nv,).

        For a floating base the first 6 entries are the base wrench the motion would need; they
        are zero only when the motion is feasible without one.
        """
        q = self.check_configuration(q)
        v = self.check_velocity(v)
        a = self.check_velocity(a, "a")
        forces = self._external_forces(q, external_wrenches)
        if forces is None:
            return pin.rnea(self.model, self.data, q, v, a).copy()
        return pin.rnea(self.model, self.data, q, v, a, forces).copy()

    def floating_base_inverse_dynamics(
        self,
        q: object,
        v: object,
        joint_accelerations: object,
        *,
        external_wrenches: Mapping[str, object] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Hybrid dynamics of seed 000 eq. (2.3): base acceleration and joint torques.

        Given joint accelerations, the unactuated base accelerates by
        dv_b = -M00^-1 (M01 ddq_j + h0) and the joints need tau_j = M10 dv_b + M11 ddq_j + h1,
        where h includes the external wrenches.

        Returns:
            (base acceleration, Pinocchio body representation, (6,), joint torques, (ndof,)).
        """
        if not self.floating_base:
            raise InputError("model", "a floating-base model for floating_base_inverse_dynamics")
        q = self.check_configuration(q)
        v = self.check_velocity(v)
        ddq = self.check_joint_vector(joint_accelerations, "joint_accelerations")
        M = self.mass_matrix(q)
        h = self.inverse_dynamics(q, v, np.zeros(self.nv), external_wrenches=external_wrenches)
        base_acc = -np.linalg.solve(M[:6, :6], M[:6, 6:] @ ddq + h[:6])
        torques = M[6:, :6] @ base_acc + M[6:, 6:] @ ddq + h[6:]
        return base_acc, torques

    def forward_dynamics(
        self,
        q: object,
        v: object,
        joint_torques: object,
        *,
        external_wrenches: Mapping[str, object] | None = None,
    ) -> np.ndarray:
        """Generalized acceleration dv/dt without contacts (ABA), (nv,)."""
        q = self.check_configuration(q)
        v = self.check_velocity(v)
        tau = self.generalized_torques(joint_torques)
        forces = self._external_forces(q, external_wrenches)
        if forces is None:
            return pin.aba(self.model, self.data, q, v, tau).copy()
        return pin.aba(self.model, self.data, q, v, tau, forces).copy()

    def contact_forward_dynamics(
        self,
        q: object,
        v: object,
        joint_torques: object,
        contact_frames: Sequence[str],
        *,
        reference_placements: Mapping[str, pin.SE3] | None = None,
        kp: float = 0.0,
        kd: float = 0.0,
        external_wrenches: Mapping[str, object] | None = None,
    ) -> ConstrainedDynamics:
        """Forward dynamics with rigid 6D contacts on frames and pose correction (seed 000 (2.7)).

        Solves M a + h = S^T tau + J_c^T f_c + J_e^T f_e with
        J_c a + dJ_c/dt v = -kd J_c v - kp e_c, where J_c is the mixed frame Jacobian (w.r.t. v),
        e_c the pose error (position, log3 of rotation, world axes) of each contact frame w.r.t.
        its reference placement (none: no position correction), giving
        f_c = Lambda_c (a_des - dJ_c/dt v - J_c M^-1 (S^T tau - h)),
        Lambda_c = (J_c M^-1 J_c^T)^-1.

        Args:
            q: Configuration (nq,).
            v: Generalized velocity (nv,).
            joint_torques: Joint torques [N m] (ndof,).
            contact_frames: Frames held by the contacts.
            reference_placements: Where each contact frame should be, for pose correction.
            kp: Pose-correction stiffness [1/s^2].
            kd: Velocity-correction damping [1/s].
            external_wrenches: Extra wrenches on frames (world-aligned, at the frame origin).

        Returns:
            The acceleration, the contact wrenches (environment on robot, world axes) and the
            contact accelerations.

        Raises:
            SingularConstraintError: J_c M^-1 J_c^T is singular (redundant contacts).
        """
        q = self.check_configuration(q)
        v = self.check_velocity(v)
        tau = self.generalized_torques(joint_torques)
        if not contact_frames:
            raise InputError("contact_frames", "at least one frame")
        ids = [self.frame_id(frame) for frame in contact_frames]
        for name, value in (("kp", kp), ("kd", kd)):
            if not np.isfinite(value) or value < 0.0:
                raise InputError(name, "a finite gain >= 0", value)
        references = dict(reference_placements or {})
        for frame in references:
            if frame not in contact_frames:
                raise InputError("reference_placements", "keys among contact_frames", frame)

        model, data = self.model, self.data
        h = self.inverse_dynamics(q, v, np.zeros(self.nv), external_wrenches=external_wrenches)
        M = self.mass_matrix(q)
        pin.computeJointJacobians(model, data, q)
        pin.forwardKinematics(model, data, q, v, np.zeros(self.nv))
        pin.updateFramePlacements(model, data)
        rows = 6 * len(ids)
        J = np.empty((rows, self.nv))
        drift = np.empty(rows)
        desired = np.zeros(rows)
        for k, (frame, frame_id) in enumerate(zip(contact_frames, ids, strict=True)):
            block = slice(6 * k, 6 * k + 6)
            J[block] = pin.getFrameJacobian(model, data, frame_id, _MIXED)
            drift[block] = pin.getFrameClassicalAcceleration(model, data, frame_id, _MIXED).vector
            desired[block] = -kd * (J[block] @ v)
            if frame in references:
                placement = data.oMf[frame_id]
                reference = references[frame]
                error = np.concatenate(
                    [
                        placement.translation - reference.translation,
                        pin.log3(placement.rotation @ reference.rotation.T),
                    ]
                )
                desired[block] -= kp * error
        import scipy.linalg  # here: it costs every node process ~0.3 s of CPU at import

        mass_factor = scipy.linalg.cho_factor(M)
        M_inv_JT = scipy.linalg.cho_solve(mass_factor, J.T)
        M_inv_free = scipy.linalg.cho_solve(mass_factor, tau - h)
        contact_inertia_inverse = J @ M_inv_JT  # Upsilon_c = J M^-1 J^T = Lambda_c^-1
        try:
            contact_factor = scipy.linalg.cho_factor(contact_inertia_inverse)
        except np.linalg.LinAlgError:
            contact_factor = None
        diagonal = np.abs(np.diag(contact_factor[0])) if contact_factor else np.zeros(1)
        if contact_factor is None or diagonal.min() < 1e-7 * diagonal.max():
            raise SingularConstraintError(
                f"J M^-1 J^T of contacts {list(contact_frames)} is singular "
                "(redundant or degenerate contacts)"
            )
        forces = scipy.linalg.cho_solve(contact_factor, desired - drift - J @ M_inv_free)
        acceleration = M_inv_free + M_inv_JT @ forces
        wrenches = {
            frame: forces[6 * k : 6 * k + 6].copy() for k, frame in enumerate(contact_frames)
        }
        return ConstrainedDynamics(acceleration, wrenches, J @ acceleration + drift)

    def static_contact_torques(
        self, q: object, contact_frames: Sequence[str]
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Joint torques and contact wrenches that hold the robot still at q (v = 0, a = 0).

        Solves g(q) = S^T tau + J_c^T f_c: the base rows give the minimum-norm contact wrenches
        f_c = pinv(J_cb^T) g_b (they carry the weight), the joint rows the torques
        tau = g_j - J_cj^T f_c. No friction cone is imposed (see wbm_control for that).

        Returns:
            (joint torques [N m] (ndof,), contact wrenches by frame, environment on robot).
        """
        q = self.check_configuration(q)
        if not contact_frames:
            raise InputError("contact_frames", "at least one frame")
        J = np.vstack(
            [
                pin.computeFrameJacobian(self.model, self.data, q, self.frame_id(frame), _MIXED)
                for frame in contact_frames
            ]
        )
        g = self.gravity_forces(q)
        b = self._base_dofs
        forces = np.linalg.pinv(J[:, :b].T) @ g[:b] if b else np.zeros(J.shape[0])
        torques = g[b:] - J[:, b:].T @ forces
        wrenches = {
            frame: forces[6 * k : 6 * k + 6].copy() for k, frame in enumerate(contact_frames)
        }
        return torques, wrenches

    # ------------------------------------------------------------------ limits, friction, energy

    def check_joint_limits(self, q: object, *, tolerance: float = 0.0) -> list[str]:
        """Names of the joints whose position is outside its limits (empty when all are in)."""
        joints = self.joint_positions(self.check_configuration(q))
        lower, upper = self.joint_position_limits
        outside = (joints < lower - tolerance) | (joints > upper + tolerance)
        return [self.joint_names[i] for i in np.flatnonzero(outside)]

    def friction_torques(self, joint_velocities: object) -> np.ndarray:
        """Joint friction torques, opposing the motion: -(k_v dq + k_c sign(dq)) [N m].

        The seed's frictionForces() (viscous plus Coulomb) with its negated sign.
        """
        dq = self.check_joint_vector(joint_velocities, "joint_velocities")
        return -(self.viscous_friction * dq + self.coulomb_friction * np.sign(dq))

    def kinetic_energy(self, q: object, v: object) -> float:
        """Kinetic energy 1/2 v^T M v [J]."""
        q = self.check_configuration(q)
        v = self.check_velocity(v)
        return float(pin.computeKineticEnergy(self.model, self.data, q, v))

    def potential_energy(self, q: object) -> float:
        """Gravitational potential energy -m g^T c [J], zero with the CoM at the world origin."""
        q = self.check_configuration(q)
        return float(pin.computePotentialEnergy(self.model, self.data, q))


def _urdf_root_link(robot) -> str:
    links = {link.get("name") for link in robot.findall("link")}
    children = {joint.find("child").get("link") for joint in robot.findall("joint")}
    roots = sorted(links - children)
    return roots[0] if roots else ""


def _build_pinocchio_model(path: Path, text: str, floating_base: bool) -> pin.Model:
    check_urdf(path, text)
    try:
        if floating_base:
            return pin.buildModelFromXML(text, pin.JointModelFreeFlyer())
        return pin.buildModelFromXML(text)
    except (ValueError, RuntimeError) as error:
        raise UrdfError(path, "robot", "a URDF that Pinocchio can parse", str(error)) from None
