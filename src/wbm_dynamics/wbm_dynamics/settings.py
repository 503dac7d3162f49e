"""Simulator settings: a frozen, validated description of one simulation of our simulator.

:class:`SimulatorSettings` holds every knob of the simulation core (time step, integrator, contact
model and its constants, environment boxes, divergence limits); it is the ``simulator:`` section
of the robot-interface node's parameters file (``config/<robot>/robot_interface.yaml``). Build it
in code, or with the one settings reader of wbm (:class:`~wbm_description.settings.Settings`):
``SimulatorSettings.from_mapping(values, source=...)`` or ``SimulatorSettings.from_yaml(path)``,
which check every key and raise a :class:`~wbm_description.exceptions.ConfigError` naming the
file and the dotted key on a bad value. Sensor noise is not a simulator setting: it is a wrapper
around any engine's readings (:mod:`wbm_dynamics.noise`), set on the node.

Environment boxes are named sections: ``boxes: {step: {center: [...], size: [...]}}`` in YAML,
or, in a ROS parameters file (which cannot hold a list of mappings),
``boxes: {names: [step], step: {center: [...], size: [...]}}``. A tangential contact constant of
0 means "the same as the normal one" (ROS parameters cannot be null).

Units: SI (m, s, kg, N, rad). Every default is documented on its field.
"""

from __future__ import annotations

from dataclasses import dataclass

from wbm_description.exceptions import ConfigError
from wbm_description.settings import Settings, setting

INTEGRATORS = ("semi_implicit_euler", "rk4")
CONTACT_MODELS = ("compliant", "rigid")
RIGID_SOLVERS = ("admm", "pgs")


@dataclass(frozen=True)
class CompliantContactSettings(Settings):
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
        tangential_stiffness: K_t [N/m^1.5]; None (0 in a ROS parameters file): the same as
            ``stiffness`` (spatial_v2).
        tangential_damping: D_t [N s/m^1.5]; None (0 in a ROS parameters file): the same as
            ``damping`` (spatial_v2).
    """

    stiffness: float = setting(5.0e6, gt=0.0, unit="N/m^1.5", doc="normal stiffness K")
    damping: float = setting(3.0e3, gt=0.0, unit="N s/m^1.5", doc="normal damping D")
    tangential_stiffness: float | None = setting(
        None, gt=0.0, null=0.0, unit="N/m^1.5", doc="stick spring K_t; 0: same as stiffness"
    )
    tangential_damping: float | None = setting(
        None, gt=0.0, null=0.0, unit="N s/m^1.5", doc="stick damper D_t; 0: same as damping"
    )

    @property
    def tangential_stiffness_value(self) -> float:
        """K_t actually used [N/m^1.5]."""
        return self.stiffness if self.tangential_stiffness is None else self.tangential_stiffness

    @property
    def tangential_damping_value(self) -> float:
        """D_t actually used [N s/m^1.5]."""
        return self.damping if self.tangential_damping is None else self.tangential_damping


@dataclass(frozen=True)
class RigidContactSettings(Settings):
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

    solver: str = setting("admm", choices=RIGID_SOLVERS, doc="constraint solver")
    max_iterations: int = setting(200, ge=1, doc="solver iterations per step")
    tolerance: float = setting(
        1.0e-8, gt=0.0, doc="absolute feasibility/complementarity tolerance"
    )
    activation_distance: float = setting(
        2.0e-3, ge=0.0, unit="m", doc="points closer to a surface enter the problem"
    )
    penetration_correction: float = setting(
        0.2, ge=0.0, le=1.0, doc="fraction of a penetration removed per step"
    )


@dataclass(frozen=True)
class Box(Settings):
    """A static box of the environment (the WBM-Library's volume bodies).

    Attributes:
        name: Box name (used to name its contacts); the name of its section.
        center: Centre in the world [m] (required).
        size: Extents along the box's x, y, z axes [m], all > 0 (required).
        rpy: Orientation (roll, pitch, yaw) of the box in the world [rad].
        friction: Coulomb friction coefficient of its surface.
    """

    name: str = setting("", doc="box name")
    center: tuple[float, float, float] | None = setting(
        None, length=3, unit="m", doc="centre in the world"
    )
    size: tuple[float, float, float] | None = setting(
        None, length=3, gt=0.0, unit="m", doc="extents along the box's x, y, z"
    )
    rpy: tuple[float, float, float] = setting(
        (0.0, 0.0, 0.0), length=3, unit="rad", doc="orientation (roll, pitch, yaw) in the world"
    )
    friction: float = setting(0.8, ge=0.0, doc="Coulomb friction coefficient of its surface")

    def check(self) -> None:
        """Centre and size are required."""
        if self.center is None:
            raise ConfigError(None, "center", "the box centre: 3 finite coordinates [m]")
        if self.size is None:
            raise ConfigError(None, "size", "the box extents: 3 numbers > 0 [m]")


@dataclass(frozen=True)
class SimulatorSettings(Settings):
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
        boxes: Static boxes of the environment besides the ground, by name.
        max_speed: Divergence guard: a generalized velocity entry above this [m/s or rad/s]
            stops the simulation.
        max_distance: Divergence guard: the base farther than this from the world origin [m]
            stops the simulation.
    """

    dt: float = setting(1.0e-3, gt=0.0, le=0.05, unit="s", doc="time step")
    integrator: str = setting(
        "semi_implicit_euler", choices=INTEGRATORS, doc="semi_implicit_euler or rk4"
    )
    contact_model: str = setting("compliant", choices=CONTACT_MODELS, doc="compliant or rigid")
    ground_friction: float = setting(
        0.8, ge=0.0, doc="Coulomb friction coefficient of the ground plane z = 0"
    )
    compliant: CompliantContactSettings = setting(default_factory=CompliantContactSettings)
    rigid: RigidContactSettings = setting(default_factory=RigidContactSettings)
    boxes: dict[str, Box] = setting(default_factory=dict, doc="static boxes, by name")
    max_speed: float = setting(
        1.0e3, gt=0.0, unit="m/s, rad/s", doc="divergence guard on any velocity entry"
    )
    max_distance: float = setting(
        1.0e4, gt=0.0, unit="m", doc="divergence guard on the base's distance from the origin"
    )

    def check(self) -> None:
        """Boxes: a mapping from name to a Box of that name."""
        if not isinstance(self.boxes, dict):
            raise ConfigError(None, "boxes", "a mapping from box name to Box", self.boxes)
        for name, box in self.boxes.items():
            if not isinstance(box, Box):
                raise ConfigError(None, f"boxes.{name}", "a Box", type(box).__name__)
            if box.name != name:
                raise ConfigError(None, f"boxes.{name}.name", f"'{name}'", box.name)


__all__ = [
    "CONTACT_MODELS",
    "INTEGRATORS",
    "RIGID_SOLVERS",
    "Box",
    "CompliantContactSettings",
    "RigidContactSettings",
    "SimulatorSettings",
]
