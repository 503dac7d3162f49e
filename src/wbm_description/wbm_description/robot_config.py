"""Robot config files: what wbm needs to know about a robot beyond its URDF.

A robot config is a YAML file owned by the project (see ``robots/icub.yaml`` for a documented
example). :func:`load_robot_config` reads it with the one settings reader, section by section
(:class:`~wbm_description.robot_config_file.RobotConfigFile`), resolves the URDF and returns the
frozen :class:`RobotConfig` the rest of wbm uses: per-joint values as arrays in ``joints`` order,
contacts, sensors, payloads and tools as small value objects. Names are checked against the URDF
when the whole-body model is built
(:func:`wbm_description.whole_body_model.WholeBodyModel.from_config`). Every error is a
:class:`~wbm_description.exceptions.ConfigError` naming the file, the key and what was expected.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from wbm_description.exceptions import ConfigError
from wbm_description.package_paths import find_package_share
from wbm_description.robot_config_file import RobotConfigFile, UrdfSource
from wbm_description.settings import read_yaml_section


@dataclass(frozen=True)
class SoleContact:
    """A rectangular sole in contact with the ground.

    Attributes:
        name: Contact name (``"left_foot"``).
        frame: URDF frame of the sole; its z axis is the sole normal, pointing out of the foot
            (up when standing).
        length: Extent along the frame's x axis [m].
        width: Extent along the frame's y axis [m].
        center: (x, y) of the rectangle's centre in the frame [m].
    """

    name: str
    frame: str
    length: float
    width: float
    center: tuple[float, float] = (0.0, 0.0)

    def corners(self) -> np.ndarray:
        """The 4 corner points in the sole frame, counter-clockwise seen from above [m], 4 x 3."""
        cx, cy = self.center
        hl, hw = self.length / 2.0, self.width / 2.0
        return np.array(
            [
                [cx + hl, cy + hw, 0.0],
                [cx - hl, cy + hw, 0.0],
                [cx - hl, cy - hw, 0.0],
                [cx + hl, cy - hw, 0.0],
            ]
        )


@dataclass(frozen=True)
class ContactPoint:
    """A single contact point on a frame (a hand, a knee), position in that frame [m]."""

    name: str
    frame: str
    position: tuple[float, float, float] = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class ForceTorqueSensor:
    """A 6-axis force/torque sensor: the named URDF frame is the sensor frame."""

    name: str
    frame: str


@dataclass(frozen=True)
class Payload:
    """A rigid payload attached to a link (seed 000, section 2.3).

    Attributes:
        name: Payload name.
        link: URDF link carrying it.
        mass: Mass [kg], > 0.
        com: Centre of mass in the link frame [m].
        inertia: 3 x 3 rotational inertia about the CoM, in link axes [kg m^2], positive definite.
    """

    name: str
    link: str
    mass: float
    com: tuple[float, float, float]
    inertia: tuple[tuple[float, float, float], ...]


@dataclass(frozen=True)
class Tool:
    """A tool frame fixed on a link (seed 000, section 2.3), placement in the link frame."""

    name: str
    link: str
    position: tuple[float, float, float]
    rpy: tuple[float, float, float]


@dataclass(frozen=True)
class RobotConfig:
    """Everything wbm needs about a robot beyond its URDF.

    Per-joint arrays follow the order of ``joints``.

    Attributes:
        name: Robot name.
        config_path: The YAML file this came from.
        urdf_path: Resolved URDF file.
        floating_base: True for a free-flying base, False for a base fixed to the world.
        base_link: URDF root link.
        world_reference_link: Link at which the world frame is placed in the initial posture
            (seed 000's fixed reference link: for iCub a sole), or None for the URDF root.
        gravity: Gravity in the world [m/s^2].
        joints: Actuated joints, in order. URDF joints not listed are locked at 0.
        initial_posture: Initial joint positions [rad].
        torque_limits: Joint torque limits [N m].
        position_limits: (lower, upper) overrides [rad]; NaN where the URDF limit applies.
        servo_kp: Joint servo stiffness [N m/rad].
        servo_kd: Joint servo damping [N m s/rad].
        viscous_friction: Viscous friction coefficients [N m s/rad].
        coulomb_friction: Coulomb friction torques [N m].
        soles: Sole contacts.
        contact_points: Extra contact points.
        ft_sensors: Force/torque sensors.
        imu_frame: URDF frame of the IMU, or None.
        payloads: Payloads.
        tools: Tool frames.
        raw: The file's mapping as read (for tools that show it).
    """

    name: str
    config_path: Path
    urdf_path: Path
    floating_base: bool
    base_link: str
    world_reference_link: str | None
    gravity: np.ndarray
    joints: tuple[str, ...]
    initial_posture: np.ndarray
    torque_limits: np.ndarray
    position_limits: tuple[np.ndarray, np.ndarray]
    servo_kp: np.ndarray
    servo_kd: np.ndarray
    viscous_friction: np.ndarray
    coulomb_friction: np.ndarray
    soles: tuple[SoleContact, ...] = ()
    contact_points: tuple[ContactPoint, ...] = ()
    ft_sensors: tuple[ForceTorqueSensor, ...] = ()
    imu_frame: str | None = None
    payloads: tuple[Payload, ...] = ()
    tools: tuple[Tool, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def ndof(self) -> int:
        """Number of actuated joints."""
        return len(self.joints)

    def sole(self, name: str) -> SoleContact:
        """The sole contact called ``name``."""
        for sole in self.soles:
            if sole.name == name:
                return sole
        raise ConfigError(self.config_path, f"soles.{name}", "a sole with that name")


def resolve_urdf_path(source: UrdfSource, config_path: Path) -> Path:
    """The URDF file of the ``urdf`` key: a path relative to the config file, or in a package.

    Raises:
        ConfigError: The package is not installed, or the file does not exist.
    """
    if source.package:
        share = find_package_share(source.package)
        if share is None:
            raise ConfigError(
                config_path,
                "urdf.package",
                "an installed package with a share directory",
                source.package,
            )
        path = share / source.path
    else:
        path = Path(source.path)
        if not path.is_absolute():
            path = config_path.parent / path
    if not path.is_file():
        raise ConfigError(config_path, "urdf", "an existing URDF file", str(path))
    return path.resolve()


def load_robot_config(path: str | Path) -> RobotConfig:
    """Read and check a robot config file (:class:`RobotConfigFile`) into a :class:`RobotConfig`.

    Args:
        path: The YAML file.

    Returns:
        The config. Names (joints, links, frames) are checked against the URDF later, when the
        whole-body model is built from it.

    Raises:
        ConfigError: The file is missing, unreadable, not YAML, or a key is missing or wrong;
            the message names the file and the dotted key.
    """
    config_path = Path(path)
    raw = read_yaml_section(config_path)
    file = RobotConfigFile.from_mapping(raw, source=config_path)
    arrays = file.joint_arrays()
    return RobotConfig(
        name=file.name,
        config_path=config_path.resolve(),
        urdf_path=resolve_urdf_path(file.urdf, config_path),
        floating_base=file.base.type == "floating",
        base_link=file.base.link,
        world_reference_link=file.world_reference_link,
        gravity=np.array(file.gravity),
        joints=file.joints,
        initial_posture=arrays["initial_posture"],
        torque_limits=arrays["torque_limits"],
        position_limits=file.position_limits(),
        servo_kp=arrays["servo_kp"],
        servo_kd=arrays["servo_kd"],
        viscous_friction=arrays["viscous_friction"],
        coulomb_friction=arrays["coulomb_friction"],
        soles=tuple(
            SoleContact(
                name=name,
                frame=sole.frame,
                length=sole.size[0],
                width=sole.size[1],
                center=sole.center,
            )
            for name, sole in file.soles.items()
        ),
        contact_points=tuple(
            ContactPoint(name=name, frame=point.frame, position=point.position)
            for name, point in file.contact_points.items()
        ),
        ft_sensors=tuple(
            ForceTorqueSensor(name=name, frame=sensor.frame)
            for name, sensor in file.ft_sensors.items()
        ),
        imu_frame=file.imu.frame if file.imu is not None else None,
        payloads=tuple(
            Payload(
                name=payload.name or f"payload_{i}",
                link=payload.link,
                mass=payload.mass,
                com=payload.com,
                inertia=tuple(tuple(row) for row in payload.inertia_matrix().tolist()),
            )
            for i, payload in enumerate(file.payloads)
        ),
        tools=tuple(
            Tool(name=tool.name, link=tool.link, position=tool.position, rpy=tool.rpy)
            for tool in file.tools
        ),
        raw=raw,
    )
