"""Robot config files: what wbm needs to know about a robot beyond its URDF.

A robot config is a YAML file owned by the project (see ``robots/icub.yaml`` for a documented
example). :func:`load_robot_config` reads and type-checks it into a frozen :class:`RobotConfig`;
names are checked against the URDF when the whole-body model is built
(:func:`wbm_description.whole_body_model.WholeBodyModel.from_config`). Every error is a
:class:`~wbm_description.exceptions.ConfigError` naming the file, the key and what was expected.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from wbm_description.conventions import GRAVITY
from wbm_description.exceptions import ConfigError
from wbm_description.package_paths import find_package_share


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


class _Reader:
    """Typed access to a parsed YAML mapping that reports errors with file and key."""

    def __init__(self, path: Path):
        self.path = path

    def fail(self, key: str, expected: str, got: object = None) -> ConfigError:
        return ConfigError(self.path, key, expected, got)

    def mapping(self, value: Any, key: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(key, "a mapping", type(value).__name__)
        return value

    def string(self, value: Any, key: str) -> str:
        if not isinstance(value, str) or not value:
            raise self.fail(key, "a non-empty string", value)
        return value

    def number(
        self, value: Any, key: str, *, positive: bool = False, nonneg: bool = False
    ) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(key, "a number", value)
        number = float(value)
        if not math.isfinite(number):
            raise self.fail(key, "a finite number", value)
        if positive and number <= 0.0:
            raise self.fail(key, "a number > 0", value)
        if nonneg and number < 0.0:
            raise self.fail(key, "a number >= 0", value)
        return number

    def vector(self, value: Any, key: str, length: int) -> tuple[float, ...]:
        if not isinstance(value, Sequence) or isinstance(value, str) or len(value) != length:
            raise self.fail(key, f"a list of {length} numbers", value)
        return tuple(self.number(item, f"{key}[{i}]") for i, item in enumerate(value))

    def per_joint(
        self,
        value: Any,
        key: str,
        joints: Sequence[str],
        *,
        default: float | None,
        positive: bool = False,
        nonneg: bool = False,
    ) -> np.ndarray:
        """A per-joint array from a number, a list in joint order, or {default, joints: {...}}."""
        n = len(joints)
        if value is None:
            if default is None:
                raise self.fail(key, "a value (number, list or {default, joints})")
            return np.full(n, default)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return np.full(n, self.number(value, key, positive=positive, nonneg=nonneg))
        if isinstance(value, Sequence) and not isinstance(value, str):
            if len(value) != n:
                raise self.fail(
                    key, f"a list of {n} numbers (one per joint)", f"{len(value)} items"
                )
            return np.array(
                [
                    self.number(v, f"{key}[{i}]", positive=positive, nonneg=nonneg)
                    for i, v in enumerate(value)
                ]
            )
        table = self.mapping(value, key)
        unknown = set(table) - {"default", "joints"}
        if unknown:
            raise self.fail(key, "only the keys 'default' and 'joints'", sorted(unknown))
        base = table.get("default", default)
        if base is None:
            raise self.fail(f"{key}.default", "a number")
        array = np.full(n, self.number(base, f"{key}.default", positive=positive, nonneg=nonneg))
        overrides = self.mapping(table.get("joints", {}) or {}, f"{key}.joints")
        for joint, item in overrides.items():
            if joint not in joints:
                raise self.fail(
                    f"{key}.joints.{joint}", f"one of the config's joints {list(joints)}"
                )
            array[list(joints).index(joint)] = self.number(
                item, f"{key}.joints.{joint}", positive=positive, nonneg=nonneg
            )
        return array


_TOP_LEVEL_KEYS = {
    "name",
    "urdf",
    "base",
    "world_reference_link",
    "gravity",
    "joints",
    "initial_posture",
    "joint_limits",
    "servo_gains",
    "friction",
    "soles",
    "contact_points",
    "ft_sensors",
    "imu",
    "payloads",
    "tools",
}


def resolve_urdf_path(reader: _Reader, spec: Any) -> Path:
    """Resolve the ``urdf`` key: a path (relative to the config file) or {package, path}."""
    if isinstance(spec, str):
        path = Path(spec)
        if not path.is_absolute():
            path = reader.path.parent / path
    else:
        table = reader.mapping(spec, "urdf")
        package = reader.string(table.get("package"), "urdf.package")
        relative = reader.string(table.get("path"), "urdf.path")
        share = find_package_share(package)
        if share is None:
            raise reader.fail(
                "urdf.package", "an installed package with a share directory", package
            )
        path = share / relative
    if not path.is_file():
        raise reader.fail("urdf", "an existing URDF file", str(path))
    return path.resolve()


def load_robot_config(path: str | Path) -> RobotConfig:
    """Read and type-check a robot config file.

    Args:
        path: The YAML file.

    Returns:
        The config. Names (joints, links, frames) are checked against the URDF later, when the
        whole-body model is built from it.

    Raises:
        ConfigError: The file is missing, unreadable, not YAML, or a key is missing or wrong.
    """
    config_path = Path(path)
    reader = _Reader(config_path)
    try:
        text = config_path.read_text()
    except OSError as error:
        raise ConfigError(config_path, "", "a readable robot config file", str(error)) from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ConfigError(config_path, "", "valid YAML", str(error).replace("\n", " ")) from None
    raw = reader.mapping(raw, "")
    unknown = set(raw) - _TOP_LEVEL_KEYS
    if unknown:
        raise reader.fail(sorted(unknown)[0], f"one of the known keys {sorted(_TOP_LEVEL_KEYS)}")

    name = reader.string(raw.get("name"), "name")
    urdf_path = resolve_urdf_path(reader, raw.get("urdf"))

    base = reader.mapping(raw.get("base"), "base")
    base_type = base.get("type")
    if base_type not in ("floating", "fixed"):
        raise reader.fail("base.type", "'floating' or 'fixed'", base_type)
    base_link = reader.string(base.get("link"), "base.link")
    world_reference_link = raw.get("world_reference_link")
    if world_reference_link is not None:
        world_reference_link = reader.string(world_reference_link, "world_reference_link")
    gravity = np.array(reader.vector(raw.get("gravity", list(GRAVITY)), "gravity", 3))

    joints_raw = raw.get("joints")
    if not isinstance(joints_raw, Sequence) or isinstance(joints_raw, str) or not joints_raw:
        raise reader.fail("joints", "a non-empty list of joint names", joints_raw)
    joints = tuple(reader.string(j, f"joints[{i}]") for i, j in enumerate(joints_raw))
    if len(set(joints)) != len(joints):
        duplicates = sorted({j for j in joints if joints.count(j) > 1})
        raise reader.fail("joints", "each joint named once", duplicates)

    posture = np.zeros(len(joints))
    posture_raw = reader.mapping(raw.get("initial_posture", {}) or {}, "initial_posture")
    for joint, value in posture_raw.items():
        if joint not in joints:
            raise reader.fail(
                f"initial_posture.{joint}", f"one of the config's joints {list(joints)}"
            )
        posture[joints.index(joint)] = reader.number(value, f"initial_posture.{joint}")

    limits = reader.mapping(raw.get("joint_limits", {}) or {}, "joint_limits")
    torque_limits = reader.per_joint(
        limits.get("torque"), "joint_limits.torque", joints, default=None, positive=True
    )
    lower = np.full(len(joints), np.nan)
    upper = np.full(len(joints), np.nan)
    position_raw = reader.mapping(limits.get("position", {}) or {}, "joint_limits.position")
    for joint, pair in position_raw.items():
        key = f"joint_limits.position.{joint}"
        if joint not in joints:
            raise reader.fail(key, f"one of the config's joints {list(joints)}")
        low, high = reader.vector(pair, key, 2)
        if low > high:
            raise reader.fail(key, "[lower, upper] with lower <= upper", list(pair))
        lower[joints.index(joint)], upper[joints.index(joint)] = low, high

    gains = reader.mapping(raw.get("servo_gains"), "servo_gains")
    servo_kp = reader.per_joint(
        gains.get("kp"), "servo_gains.kp", joints, default=None, nonneg=True
    )
    servo_kd = reader.per_joint(
        gains.get("kd"), "servo_gains.kd", joints, default=None, nonneg=True
    )

    friction = reader.mapping(raw.get("friction", {}) or {}, "friction")
    viscous = reader.per_joint(
        friction.get("viscous"), "friction.viscous", joints, default=0.0, nonneg=True
    )
    coulomb = reader.per_joint(
        friction.get("coulomb"), "friction.coulomb", joints, default=0.0, nonneg=True
    )

    soles = []
    for sole_name, item in reader.mapping(raw.get("soles", {}) or {}, "soles").items():
        key = f"soles.{sole_name}"
        table = reader.mapping(item, key)
        length, width = reader.vector(table.get("size"), f"{key}.size", 2)
        if length <= 0 or width <= 0:
            raise reader.fail(f"{key}.size", "[length, width] both > 0 [m]", list(table["size"]))
        soles.append(
            SoleContact(
                name=sole_name,
                frame=reader.string(table.get("frame"), f"{key}.frame"),
                length=length,
                width=width,
                center=reader.vector(table.get("center", [0.0, 0.0]), f"{key}.center", 2),
            )
        )

    points = []
    for point_name, item in reader.mapping(
        raw.get("contact_points", {}) or {}, "contact_points"
    ).items():
        key = f"contact_points.{point_name}"
        table = reader.mapping(item, key)
        points.append(
            ContactPoint(
                name=point_name,
                frame=reader.string(table.get("frame"), f"{key}.frame"),
                position=reader.vector(table.get("position", [0, 0, 0]), f"{key}.position", 3),
            )
        )

    sensors = []
    for sensor_name, item in reader.mapping(raw.get("ft_sensors", {}) or {}, "ft_sensors").items():
        table = reader.mapping(item, f"ft_sensors.{sensor_name}")
        frame = reader.string(table.get("frame"), f"ft_sensors.{sensor_name}.frame")
        sensors.append(ForceTorqueSensor(name=sensor_name, frame=frame))

    imu_frame = None
    if raw.get("imu") is not None:
        imu = reader.mapping(raw["imu"], "imu")
        imu_frame = reader.string(imu.get("frame"), "imu.frame")

    payloads = []
    for i, item in enumerate(raw.get("payloads", []) or []):
        key = f"payloads[{i}]"
        table = reader.mapping(item, key)
        inertia_raw = table.get("inertia")
        ixx, iyy, izz, ixy, ixz, iyz = reader.vector(inertia_raw, f"{key}.inertia", 6)
        inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        if np.linalg.eigvalsh(inertia).min() <= 0.0:
            raise reader.fail(
                f"{key}.inertia",
                "[ixx, iyy, izz, ixy, ixz, iyz] of a positive definite inertia [kg m^2]",
                list(inertia_raw),
            )
        payloads.append(
            Payload(
                name=reader.string(table.get("name", f"payload_{i}"), f"{key}.name"),
                link=reader.string(table.get("link"), f"{key}.link"),
                mass=reader.number(table.get("mass"), f"{key}.mass", positive=True),
                com=reader.vector(table.get("com", [0, 0, 0]), f"{key}.com", 3),
                inertia=tuple(tuple(row) for row in inertia.tolist()),
            )
        )

    tools = []
    for i, item in enumerate(raw.get("tools", []) or []):
        key = f"tools[{i}]"
        table = reader.mapping(item, key)
        tools.append(
            Tool(
                name=reader.string(table.get("name"), f"{key}.name"),
                link=reader.string(table.get("link"), f"{key}.link"),
                position=reader.vector(table.get("position", [0, 0, 0]), f"{key}.position", 3),
                rpy=reader.vector(table.get("rpy", [0, 0, 0]), f"{key}.rpy", 3),
            )
        )

    return RobotConfig(
        name=name,
        config_path=config_path.resolve(),
        urdf_path=urdf_path,
        floating_base=base_type == "floating",
        base_link=base_link,
        world_reference_link=world_reference_link,
        gravity=gravity,
        joints=joints,
        initial_posture=posture,
        torque_limits=torque_limits,
        position_limits=(lower, upper),
        servo_kp=servo_kp,
        servo_kd=servo_kd,
        viscous_friction=viscous,
        coulomb_friction=coulomb,
        soles=tuple(soles),
        contact_points=tuple(points),
        ft_sensors=tuple(sensors),
        imu_frame=imu_frame,
        payloads=tuple(payloads),
        tools=tuple(tools),
        raw=raw,
    )
