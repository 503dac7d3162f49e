"""The robot config file, section by section, as settings classes of the one settings reader.

:class:`RobotConfigFile` mirrors the YAML file (see ``robots/icub.yaml``, where every key is
commented): each section is a :class:`~wbm_description.settings.Settings` class, per-joint values
are :class:`~wbm_description.joint_values.JointValues`, and the rules between sections (joint
names in per-joint tables, list lengths) are checked by :meth:`RobotConfigFile.check`. Reading it
is ``RobotConfigFile.from_yaml(path)``; :func:`wbm_description.robot_config.load_robot_config`
then resolves the URDF and builds the :class:`~wbm_description.robot_config.RobotConfig` the
rest of wbm uses (numpy arrays in ``joints`` order). Every error is a
:class:`~wbm_description.exceptions.ConfigError` naming the file, the dotted key and what was
expected.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from wbm_description.conventions import GRAVITY
from wbm_description.exceptions import ConfigError
from wbm_description.joint_values import JointValues, joint_ranges, joint_table, joint_values
from wbm_description.settings import Reader, Settings, setting

BASE_TYPES = ("floating", "fixed")


@dataclass(frozen=True)
class UrdfSource(Settings):
    """Where the URDF is: a path relative to the config file, or a file of a package's share.

    In the file: ``urdf: robot.urdf`` or ``urdf: {package: example-robot-data, path: ...}``.
    """

    path: str = setting("", nonempty=True, doc="URDF file (relative to the package's share)")
    package: str = setting("", doc="installed package holding the file; '' for a plain path")


def _urdf_source(value: Any, key: str, reader: Reader) -> UrdfSource | None:
    """``parse`` of the ``urdf`` key: a path, or ``{package, path}``."""
    if value is None:
        return None
    if isinstance(value, str):
        if not value:
            raise reader.fail(key, "a URDF path or {package, path}", value)
        return UrdfSource(path=value)
    source = reader.section(UrdfSource, value, key)
    if not source.package:
        raise reader.fail(f"{key}.package", "a non-empty string", source.package)
    return source


@dataclass(frozen=True)
class BaseSettings(Settings):
    """How the robot is attached to the world."""

    type: str = setting("floating", choices=BASE_TYPES, doc="free-flying or welded base")
    link: str = setting("", nonempty=True, doc="the URDF's root link")


@dataclass(frozen=True)
class JointLimitsSettings(Settings):
    """Joint limits beyond (or instead of) the URDF's."""

    torque: JointValues | None = setting(
        None, parse=joint_values(gt=0.0), doc="joint torque limits", unit="N m"
    )
    position: tuple[tuple[str, float, float], ...] = setting(
        (), parse=joint_ranges, doc="[lower, upper] overrides per joint", unit="rad"
    )


@dataclass(frozen=True)
class ServoGainsSettings(Settings):
    """Joint servo gains: tau = kp (q_ref - q) + kd (dq_ref - dq) + tau_ff."""

    kp: JointValues | None = setting(
        None, parse=joint_values(ge=0.0), doc="servo stiffness", unit="N m/rad"
    )
    kd: JointValues | None = setting(
        None, parse=joint_values(ge=0.0), doc="servo damping", unit="N m s/rad"
    )


@dataclass(frozen=True)
class FrictionSettings(Settings):
    """Joint friction: tau_fr = -(viscous dq + coulomb sign(dq)); 0 when not given."""

    viscous: JointValues | None = setting(
        None, parse=joint_values(ge=0.0), doc="viscous friction", unit="N m s/rad"
    )
    coulomb: JointValues | None = setting(
        None, parse=joint_values(ge=0.0), doc="Coulomb friction torque", unit="N m"
    )


@dataclass(frozen=True)
class SoleSettings(Settings):
    """A rectangular sole: its frame's z axis points out of the sole, x forward."""

    name: str = setting("", doc="contact name (the section's name)")
    frame: str = setting("", nonempty=True, doc="URDF frame of the sole")
    size: tuple[float, float] = setting(
        (0.1, 0.05), gt=0.0, doc="[length along x, width along y]", unit="m"
    )
    center: tuple[float, float] = setting(
        (0.0, 0.0), doc="rectangle centre in the frame", unit="m"
    )


@dataclass(frozen=True)
class ContactPointSettings(Settings):
    """A point of a frame that can touch the environment."""

    name: str = setting("", doc="contact name (the section's name)")
    frame: str = setting("", nonempty=True, doc="URDF frame")
    position: tuple[float, float, float] = setting(
        (0.0, 0.0, 0.0), doc="position in the frame", unit="m"
    )


@dataclass(frozen=True)
class FrameSettings(Settings):
    """A sensor given by its URDF frame (an F/T sensor, the IMU)."""

    name: str = setting("", doc="sensor name (the section's name)")
    frame: str = setting("", nonempty=True, doc="URDF frame of the sensor")


@dataclass(frozen=True)
class PayloadSettings(Settings):
    """A rigid payload attached to a link (seed 000, section 2.3)."""

    name: str = setting("", doc="payload name; '' for payload_<index>")
    link: str = setting("", nonempty=True, doc="URDF link carrying it")
    mass: float = setting(1.0, gt=0.0, doc="mass", unit="kg")
    com: tuple[float, float, float] = setting(
        (0.0, 0.0, 0.0), doc="centre of mass in the link frame", unit="m"
    )
    inertia: tuple[float, float, float, float, float, float] = setting(
        (1e-4, 1e-4, 1e-4, 0.0, 0.0, 0.0),
        doc="[ixx, iyy, izz, ixy, ixz, iyz] about the CoM, link axes",
        unit="kg m^2",
    )

    def inertia_matrix(self) -> np.ndarray:
        """The 3 x 3 rotational inertia about the CoM, in link axes [kg m^2]."""
        ixx, iyy, izz, ixy, ixz, iyz = self.inertia
        return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])

    def check(self) -> None:
        """The inertia is positive definite."""
        if np.linalg.eigvalsh(self.inertia_matrix()).min() <= 0.0:
            raise ConfigError(
                None,
                "inertia",
                "[ixx, iyy, izz, ixy, ixz, iyz] of a positive definite inertia [kg m^2]",
                list(self.inertia),
            )


@dataclass(frozen=True)
class ToolSettings(Settings):
    """A tool frame fixed on a link (seed 000, section 2.3)."""

    name: str = setting("", nonempty=True, doc="tool frame name")
    link: str = setting("", nonempty=True, doc="URDF link carrying it")
    position: tuple[float, float, float] = setting(
        (0.0, 0.0, 0.0), doc="position in the link frame", unit="m"
    )
    rpy: tuple[float, float, float] = setting(
        (0.0, 0.0, 0.0), doc="roll, pitch, yaw in the link frame", unit="rad"
    )


@dataclass(frozen=True)
class RobotConfigFile(Settings):
    """A robot config file as written: one field per top-level key (see ``robots/icub.yaml``).

    Required: ``name``, ``urdf``, ``base``, ``joints``, ``joint_limits.torque`` and
    ``servo_gains``; the others have defaults (no contacts, sensors, payloads or tools).
    """

    name: str = setting("", nonempty=True, doc="robot name")
    urdf: UrdfSource | None = setting(None, parse=_urdf_source, doc="the URDF")
    base: BaseSettings | None = setting(None, doc="floating or fixed base and its link")
    world_reference_link: str | None = setting(
        None, nonempty=True, doc="link at which the world frame is placed in the initial posture"
    )
    gravity: tuple[float, float, float] = setting(
        tuple(float(g) for g in GRAVITY), doc="gravity in the world frame", unit="m/s^2"
    )
    joints: tuple[str, ...] = setting((), nonempty=True, doc="actuated joints, in order")
    initial_posture: JointValues = setting(
        JointValues(), parse=joint_table, doc="initial joint positions (others 0)", unit="rad"
    )
    joint_limits: JointLimitsSettings = setting(default_factory=JointLimitsSettings)
    servo_gains: ServoGainsSettings | None = setting(None, doc="joint servo gains")
    friction: FrictionSettings = setting(default_factory=FrictionSettings)
    soles: dict[str, SoleSettings] = setting(default_factory=dict)
    contact_points: dict[str, ContactPointSettings] = setting(default_factory=dict)
    ft_sensors: dict[str, FrameSettings] = setting(default_factory=dict)
    imu: FrameSettings | None = setting(None, doc="the IMU, or null")
    payloads: tuple[PayloadSettings, ...] = setting((), doc="payloads on links")
    tools: tuple[ToolSettings, ...] = setting((), doc="tool frames on links")

    def check(self) -> None:
        """Required sections, joint names, and per-joint values that fit ``joints``."""
        for key, value, expected in (
            ("urdf", self.urdf, "a URDF path or {package, path}"),
            ("base", self.base, "a mapping {type, link}"),
            ("servo_gains", self.servo_gains, "a mapping {kp, kd}"),
        ):
            if value is None:
                raise ConfigError(None, key, expected)
        for i, joint in enumerate(self.joints):
            if not joint:
                raise ConfigError(None, f"joints[{i}]", "a non-empty string", joint)
        if len(set(self.joints)) != len(self.joints):
            duplicates = sorted({j for j in self.joints if self.joints.count(j) > 1})
            raise ConfigError(None, "joints", "each joint named once", duplicates)
        self.joint_arrays()
        self.position_limits()

    def joint_arrays(self) -> dict[str, np.ndarray]:
        """The per-joint values in ``joints`` order, by RobotConfig attribute name.

        Raises:
            ConfigError: A missing value, a list of the wrong length or an unknown joint.
        """
        joints = self.joints
        required = "a value (number, list or {default, joints})"
        for key, value in (
            ("joint_limits.torque", self.joint_limits.torque),
            ("servo_gains.kp", self.servo_gains.kp),
            ("servo_gains.kd", self.servo_gains.kd),
        ):
            if value is None:
                raise ConfigError(None, key, required)
        no_friction = JointValues(default=0.0)
        return {
            "initial_posture": self.initial_posture.array(
                joints, "initial_posture", fallback=0.0, overrides_key="initial_posture"
            ),
            "torque_limits": self.joint_limits.torque.array(joints, "joint_limits.torque"),
            "servo_kp": self.servo_gains.kp.array(joints, "servo_gains.kp"),
            "servo_kd": self.servo_gains.kd.array(joints, "servo_gains.kd"),
            "viscous_friction": (self.friction.viscous or no_friction).array(
                joints, "friction.viscous", fallback=0.0
            ),
            "coulomb_friction": (self.friction.coulomb or no_friction).array(
                joints, "friction.coulomb", fallback=0.0
            ),
        }

    def position_limits(self) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) position limit overrides in ``joints`` order; NaN where not given.

        Raises:
            ConfigError: An override of a joint that is not in ``joints``.
        """
        lower = np.full(len(self.joints), np.nan)
        upper = np.full(len(self.joints), np.nan)
        for joint, low, high in self.joint_limits.position:
            if joint not in self.joints:
                raise ConfigError(
                    None,
                    f"joint_limits.position.{joint}",
                    f"one of the config's joints {list(self.joints)}",
                )
            index = self.joints.index(joint)
            lower[index], upper[index] = low, high
        return lower, upper


__all__ = [
    "BaseSettings",
    "ContactPointSettings",
    "FrameSettings",
    "FrictionSettings",
    "JointLimitsSettings",
    "PayloadSettings",
    "RobotConfigFile",
    "ServoGainsSettings",
    "SoleSettings",
    "ToolSettings",
    "UrdfSource",
]
