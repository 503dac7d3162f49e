"""Simulator settings: a frozen, validated description of one simulation.

:class:`SimulatorSettings` holds every knob of the simulation core (time step, integrator, contact
model and its constants, environment, sensor noise, divergence limits). Build it in code, or from a
mapping with :meth:`SimulatorSettings.from_dict`, which checks every key and raises a
:class:`~wbm_description.exceptions.ConfigError` naming the file and the key on a bad value.

Units: SI (m, s, kg, N, rad). Every default is documented on its field.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from wbm_description.exceptions import ConfigError

INTEGRATORS = ("semi_implicit_euler", "rk4")
CONTACT_MODELS = ("compliant", "rigid")
RIGID_SOLVERS = ("admm", "pgs")


@dataclass(frozen=True)
class CompliantContactSettings:
    """Constants of the compliant (penalty) contact model, the same for every contact point.

    The normal force at a point that penetrates a surface by depth d > 0 is spatial_v2's
    ``gcontact`` law f_n = max(0, sqrt(d) (K d + D dd/dt)) (a Hunt-Crossley-like spring-damper
    whose normal force never pulls), so that n points carrying a weight m g rest at
    d = (m g / (n K))^(2/3). Tangentially, a spring-damper to a stick anchor,
    f_t = -sqrt(d) (K_t u + D_t du/dt) with u the displacement from the anchor, limited to
    mu f_n (seed 004 eq. 8.2): above it the point slides and its anchor is dragged along.

    Attributes:
        stiffness: K [N/m^1.5]. The default puts iCub's 28 kg on its 8 sole corners 0.36 mm
            deep. Of the values tried (1e6 to 3e7), it is about the stiffest with which iCub
            dropped 20 cm on its servos stays stable at 1 ms with semi-implicit Euler (7e6 is
            not), and it lets the config's 100 N m/rad servos hold iCub up (3e6 does not).
        damping: D [N s/m^1.5]. The contact damping is explicit: it must stay light on iCub's
            light feet at 1 ms (1e4 with K = 1e7 injects energy at impacts).
        tangential_stiffness: K_t [N/m^1.5]; None: same as ``stiffness`` (spatial_v2).
        tangential_damping: D_t [N s/m^1.5]; None: same as ``damping`` (spatial_v2).
    """

    stiffness: float = 5.0e6
    damping: float = 3.0e3
    tangential_stiffness: float | None = None
    tangential_damping: float | None = None

    @property
    def tangential_stiffness_value(self) -> float:
        """K_t actually used [N/m^1.5]."""
        return self.stiffness if self.tangential_stiffness is None else self.tangential_stiffness

    @property
    def tangential_damping_value(self) -> float:
        """D_t actually used [N s/m^1.5]."""
        return self.damping if self.tangential_damping is None else self.tangential_damping


@dataclass(frozen=True)
class RigidContactSettings:
    """Constants of the rigid (time-stepping, Coulomb cone) contact model.

    Attributes:
        solver: "admm" (Pinocchio's ADMMConstraintSolver, the default: accurate on the
            redundant contacts of two flat feet) or "pgs" (PGSConstraintSolver).
        max_iterations: Iteration limit of the solver per step.
        tolerance: Absolute feasibility and complementarity tolerance of the solver.
        activation_distance: Points closer to a surface than this [m] enter the contact
            problem (they may touch during the step without penetrating).
        penetration_correction: Fraction of a penetration removed per step (Baumgarte-like
            position correction at the velocity level), in [0, 1].
    """

    solver: str = "admm"
    max_iterations: int = 200
    tolerance: float = 1.0e-8
    activation_distance: float = 2.0e-3
    penetration_correction: float = 0.2


@dataclass(frozen=True)
class Box:
    """A static box of the environment (the WBM-Library's volume bodies).

    Attributes:
        name: Box name (used to name its contacts).
        center: Centre in the world [m].
        size: Extents along the box's x, y, z axes [m], all > 0.
        rpy: Orientation (roll, pitch, yaw) of the box in the world [rad].
        friction: Coulomb friction coefficient of its surface.
    """

    name: str
    center: tuple[float, float, float]
    size: tuple[float, float, float]
    rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)
    friction: float = 0.8


@dataclass(frozen=True)
class NoiseSettings:
    """Standard deviations of the zero-mean Gaussian noise added to each sensor (0: off).

    Attributes:
        joint_position: Encoder position noise [rad].
        joint_velocity: Encoder velocity noise [rad/s].
        joint_effort: Joint torque noise [N m].
        imu_orientation: Small-angle orientation noise of the IMU [rad].
        imu_angular_velocity: Gyroscope noise [rad/s].
        imu_linear_acceleration: Accelerometer noise [m/s^2].
        ft_force: F/T force noise per axis [N].
        ft_torque: F/T torque noise per axis [N m].
    """

    joint_position: float = 0.0
    joint_velocity: float = 0.0
    joint_effort: float = 0.0
    imu_orientation: float = 0.0
    imu_angular_velocity: float = 0.0
    imu_linear_acceleration: float = 0.0
    ft_force: float = 0.0
    ft_torque: float = 0.0

    @property
    def enabled(self) -> bool:
        """Whether any noise is on."""
        return any(getattr(self, f.name) > 0.0 for f in dataclasses.fields(self))


@dataclass(frozen=True)
class SimulatorSettings:
    """Everything the simulation core needs besides the robot model.

    Attributes:
        dt: Time step [s] (default 1 ms, seed 004's rate).
        integrator: "semi_implicit_euler" (symplectic: v first, then q with the new v) or "rk4"
            (classical 4th-order Runge-Kutta on the configuration manifold; with the rigid
            contact model, steps with an active contact use the first-order time-stepping
            scheme whatever the integrator).
        contact_model: "compliant" (penalty spring-dampers) or "rigid" (Coulomb cones solved by
            Pinocchio's constraint solvers).
        ground_friction: Coulomb friction coefficient of the ground plane z = 0.
        compliant: Constants of the compliant model.
        rigid: Constants of the rigid model.
        boxes: Static boxes of the environment, besides the ground.
        noise: Sensor noise (off by default).
        seed: Seed of the noise generator (runs with the same seed are identical).
        max_speed: Divergence guard: a generalized velocity entry above this [m/s or rad/s]
            stops the simulation.
        max_distance: Divergence guard: the base farther than this from the world origin [m]
            stops the simulation.
    """

    dt: float = 1.0e-3
    integrator: str = "semi_implicit_euler"
    contact_model: str = "compliant"
    ground_friction: float = 0.8
    compliant: CompliantContactSettings = field(default_factory=CompliantContactSettings)
    rigid: RigidContactSettings = field(default_factory=RigidContactSettings)
    boxes: tuple[Box, ...] = ()
    noise: NoiseSettings = field(default_factory=NoiseSettings)
    seed: int = 0
    max_speed: float = 1.0e3
    max_distance: float = 1.0e4

    def __post_init__(self) -> None:
        _validate(self, source=None)

    def replace(self, **changes: Any) -> SimulatorSettings:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_dict(
        cls, values: Mapping[str, Any], *, source: str | None = None
    ) -> SimulatorSettings:
        """Settings from a nested mapping (a parsed YAML file, or ROS parameters).

        Keys are the field names; ``compliant``, ``rigid`` and ``noise`` are mappings of their
        own fields, ``boxes`` a list of mappings with the fields of :class:`Box` (or a mapping
        from box name to such a mapping). Missing keys keep their defaults.

        Args:
            values: The mapping.
            source: The file (or other origin) the mapping came from, for error messages.

        Raises:
            ConfigError: Unknown key, wrong type, or a value out of range; it names the key.
        """
        reader = _Reader(source)
        values = reader.mapping(values, "")
        known = {f.name for f in dataclasses.fields(cls)}
        reader.only(values, known, "")
        kwargs: dict[str, Any] = {}
        for name in ("dt", "ground_friction", "max_speed", "max_distance"):
            if name in values:
                kwargs[name] = reader.number(values[name], name)
        for name in ("integrator", "contact_model"):
            if name in values:
                kwargs[name] = reader.string(values[name], name)
        if "seed" in values:
            kwargs["seed"] = reader.integer(values["seed"], "seed")
        if "compliant" in values:
            kwargs["compliant"] = reader.section(
                CompliantContactSettings, values["compliant"], "compliant"
            )
        if "rigid" in values:
            kwargs["rigid"] = reader.section(RigidContactSettings, values["rigid"], "rigid")
        if "noise" in values:
            kwargs["noise"] = reader.section(NoiseSettings, values["noise"], "noise")
        if "boxes" in values:
            kwargs["boxes"] = reader.boxes(values["boxes"], "boxes")
        settings = object.__new__(cls)
        defaults = cls()
        for f in dataclasses.fields(cls):
            object.__setattr__(settings, f.name, kwargs.get(f.name, getattr(defaults, f.name)))
        _validate(settings, source=source)
        return settings


class _Reader:
    """Typed access to a mapping, raising ConfigError with the source and the key."""

    def __init__(self, source: str | None):
        self.source = source

    def fail(self, key: str, expected: str, got: object = None) -> ConfigError:
        return ConfigError(self.source, key, expected, got)

    def mapping(self, value: Any, key: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(key, "a mapping", type(value).__name__)
        return value

    def only(self, values: Mapping[str, Any], known: set[str], key: str) -> None:
        unknown = sorted(set(values) - known)
        if unknown:
            where = f"{key}.{unknown[0]}" if key else unknown[0]
            raise self.fail(where, f"one of the known keys {sorted(known)}")

    def number(self, value: Any, key: str) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(key, "a number", value)
        return float(value)

    def integer(self, value: Any, key: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, "an integer", value)
        return int(value)

    def string(self, value: Any, key: str) -> str:
        if not isinstance(value, str) or not value:
            raise self.fail(key, "a non-empty string", value)
        return value

    def vector(self, value: Any, key: str, length: int) -> tuple[float, ...]:
        if not isinstance(value, Sequence) or isinstance(value, str) or len(value) != length:
            raise self.fail(key, f"a list of {length} numbers", value)
        return tuple(self.number(item, f"{key}[{i}]") for i, item in enumerate(value))

    def section(self, cls: type, value: Any, key: str) -> Any:
        table = self.mapping(value, key)
        fields = {f.name: f for f in dataclasses.fields(cls)}
        self.only(table, set(fields), key)
        kwargs: dict[str, Any] = {}
        for name, item in table.items():
            default = getattr(cls(), name)
            if item is None and default is None:
                kwargs[name] = None
            elif isinstance(default, str):
                kwargs[name] = self.string(item, f"{key}.{name}")
            elif isinstance(default, int) and not isinstance(default, bool):
                kwargs[name] = self.integer(item, f"{key}.{name}")
            else:
                kwargs[name] = self.number(item, f"{key}.{name}")
        return cls(**kwargs)

    def boxes(self, value: Any, key: str) -> tuple[Box, ...]:
        if isinstance(value, Mapping):
            items = [
                {"name": name} | dict(self.mapping(v, f"{key}.{name}"))
                for name, v in value.items()
            ]
            keys = [f"{key}.{name}" for name in value]
        elif isinstance(value, Sequence) and not isinstance(value, str):
            items = [dict(self.mapping(v, f"{key}[{i}]")) for i, v in enumerate(value)]
            keys = [f"{key}[{i}]" for i in range(len(items))]
        else:
            raise self.fail(key, "a list of boxes or a mapping from box name to box", value)
        boxes = []
        for item, where in zip(items, keys, strict=True):
            self.only(item, {f.name for f in dataclasses.fields(Box)}, where)
            boxes.append(
                Box(
                    name=self.string(item.get("name"), f"{where}.name"),
                    center=self.vector(item.get("center"), f"{where}.center", 3),
                    size=self.vector(item.get("size"), f"{where}.size", 3),
                    rpy=self.vector(item.get("rpy", [0.0, 0.0, 0.0]), f"{where}.rpy", 3),
                    friction=self.number(item.get("friction", Box.friction), f"{where}.friction"),
                )
            )
        return tuple(boxes)


def _validate(settings: SimulatorSettings, *, source: str | None) -> None:
    """Range checks of every field; ConfigError naming the key on the first bad one."""

    def fail(key: str, expected: str, got: object) -> ConfigError:
        return ConfigError(source, key, expected, got)

    def positive(value: float, key: str) -> None:
        if not (isinstance(value, int | float) and math.isfinite(value) and value > 0.0):
            raise fail(key, "a finite number > 0", value)

    def nonneg(value: float, key: str) -> None:
        if not (isinstance(value, int | float) and math.isfinite(value) and value >= 0.0):
            raise fail(key, "a finite number >= 0", value)

    positive(settings.dt, "dt")
    if settings.dt > 0.05:
        raise fail("dt", "a time step <= 0.05 s", settings.dt)
    if settings.integrator not in INTEGRATORS:
        raise fail("integrator", f"one of {list(INTEGRATORS)}", settings.integrator)
    if settings.contact_model not in CONTACT_MODELS:
        raise fail("contact_model", f"one of {list(CONTACT_MODELS)}", settings.contact_model)
    nonneg(settings.ground_friction, "ground_friction")
    compliant = settings.compliant
    if not isinstance(compliant, CompliantContactSettings):
        raise fail("compliant", "CompliantContactSettings", type(compliant).__name__)
    positive(compliant.stiffness, "compliant.stiffness")
    positive(compliant.damping, "compliant.damping")
    if compliant.tangential_stiffness is not None:
        positive(compliant.tangential_stiffness, "compliant.tangential_stiffness")
    if compliant.tangential_damping is not None:
        positive(compliant.tangential_damping, "compliant.tangential_damping")
    rigid = settings.rigid
    if not isinstance(rigid, RigidContactSettings):
        raise fail("rigid", "RigidContactSettings", type(rigid).__name__)
    if rigid.solver not in RIGID_SOLVERS:
        raise fail("rigid.solver", f"one of {list(RIGID_SOLVERS)}", rigid.solver)
    if not (isinstance(rigid.max_iterations, int) and rigid.max_iterations >= 1):
        raise fail("rigid.max_iterations", "an integer >= 1", rigid.max_iterations)
    positive(rigid.tolerance, "rigid.tolerance")
    nonneg(rigid.activation_distance, "rigid.activation_distance")
    nonneg(rigid.penetration_correction, "rigid.penetration_correction")
    if rigid.penetration_correction > 1.0:
        raise fail(
            "rigid.penetration_correction", "a fraction in [0, 1]", rigid.penetration_correction
        )
    names = set()
    for i, box in enumerate(settings.boxes):
        key = f"boxes[{i}]"
        if not isinstance(box, Box):
            raise fail(key, "a Box", type(box).__name__)
        if box.name in names:
            raise fail(f"{key}.name", "a box name not already used", box.name)
        names.add(box.name)
        if len(box.size) != 3 or min(box.size) <= 0.0:
            raise fail(f"{key}.size", "3 extents > 0 [m]", list(box.size))
        if len(box.center) != 3 or not all(math.isfinite(c) for c in box.center):
            raise fail(f"{key}.center", "3 finite coordinates [m]", list(box.center))
        if len(box.rpy) != 3 or not all(math.isfinite(c) for c in box.rpy):
            raise fail(f"{key}.rpy", "3 finite angles [rad]", list(box.rpy))
        nonneg(box.friction, f"{key}.friction")
    noise = settings.noise
    if not isinstance(noise, NoiseSettings):
        raise fail("noise", "NoiseSettings", type(noise).__name__)
    for f in dataclasses.fields(NoiseSettings):
        nonneg(getattr(noise, f.name), f"noise.{f.name}")
    if isinstance(settings.seed, bool) or not isinstance(settings.seed, int) or settings.seed < 0:
        raise fail("seed", "an integer >= 0", settings.seed)
    positive(settings.max_speed, "max_speed")
    positive(settings.max_distance, "max_distance")
