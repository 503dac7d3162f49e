"""Settings of the MuJoCo engine: time step, integrator and MuJoCo's own soft contact model.

MuJoCo's contacts are soft constraints (MuJoCo documentation, "Computation" and "Modeling /
Solver parameters"): each contact is a constraint whose reference acceleration is a
spring-damper, a_ref = -b v - k r, with the penetration r, set by ``solref = (timeconst,
dampratio)`` (k = 1 / (d_max^2 timeconst^2 dampratio^2), b = 2 / (d_max timeconst)), and whose
"softness" is the impedance d(r) in (0, 1) set by ``solimp = (d0, d_width, width, midpoint,
power)``, rising from d0 at r = 0 to d_width at r = width. A resting contact settles where
a_ref balances the part (1 - d) / d of the unconstrained acceleration it cancels, so with the
defaults below a foot carrying its share of the weight sinks by about
(1 - 0.95) / 0.95 * 9.81 / k ~ 0.2 mm (k ~ 2770 1/s^2).

Defaults, and why:

- ``solref = (0.02, 1.0)``: MuJoCo's default, critically damped with a 20 ms time constant,
  ten times the 2 ms floor MuJoCo recommends at a 1 ms step (timeconst >= 2 * timestep).
- ``solimp = (0.9, 0.95, 0.001, 0.5, 2.0)``: MuJoCo's default impedance.
- ``friction = 0.8``: Coulomb coefficient between sole and ground, the same as our simulator's
  default ``ground_friction`` so that both engines see the same ground.
- ``cone = "elliptic"``: the exact Coulomb cone, as our simulator's rigid model (MuJoCo's
  default pyramid approximates it by 4 edges).
- ``integrator = "implicitfast"``: joint damping (viscous friction) and the servos' velocity
  gain are integrated implicitly, which keeps iCub's light wrists stable at a 1 ms step (our
  simulator treats the same damping terms implicitly for the same reason).
- ``timestep = 1 ms``: our simulator's default.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from wbm_description.exceptions import ConfigError

INTEGRATORS = ("implicitfast", "implicit", "euler", "rk4")
CONES = ("elliptic", "pyramidal")


@dataclass(frozen=True)
class MujocoSettings:
    """Everything the MuJoCo engine needs besides the robot.

    Attributes:
        timestep: Integration step [s].
        integrator: MuJoCo integrator: "implicitfast", "implicit", "euler" or "rk4".
        solref: Contact (timeconst [s], dampratio [-]), see the module docstring.
        solimp: Contact impedance (d0, d_width, width [m], midpoint, power).
        friction: Sliding friction coefficient between the soles and the ground [-].
        cone: Friction cone, "elliptic" or "pyramidal".
        sole_thickness: Height of the sole collision boxes [m]; their bottom face is the sole
            rectangle of the robot config, the box extends into the foot.
        solver_iterations: Iteration limit of MuJoCo's constraint solver per step.
    """

    timestep: float = 1.0e-3
    integrator: str = "implicitfast"
    solref: tuple[float, float] = (0.02, 1.0)
    solimp: tuple[float, float, float, float, float] = (0.9, 0.95, 0.001, 0.5, 2.0)
    friction: float = 0.8
    cone: str = "elliptic"
    sole_thickness: float = 0.01
    solver_iterations: int = 100

    def __post_init__(self) -> None:
        def fail(key: str, expected: str, got: object) -> ConfigError:
            return ConfigError(None, f"mujoco.{key}", expected, got)

        def positive(value: object, key: str) -> None:
            if not (
                isinstance(value, int | float)
                and not isinstance(value, bool)
                and math.isfinite(value)
                and value > 0.0
            ):
                raise fail(key, "a finite number > 0", value)

        positive(self.timestep, "timestep")
        if self.timestep > 0.05:
            raise fail("timestep", "a time step <= 0.05 s", self.timestep)
        if self.integrator not in INTEGRATORS:
            raise fail("integrator", f"one of {list(INTEGRATORS)}", self.integrator)
        if self.cone not in CONES:
            raise fail("cone", f"one of {list(CONES)}", self.cone)
        if len(self.solref) != 2:
            raise fail("solref", "(timeconst [s], dampratio)", self.solref)
        for i, value in enumerate(self.solref):
            positive(value, f"solref[{i}]")
        if len(self.solimp) != 5:
            raise fail("solimp", "(d0, d_width, width, midpoint, power)", self.solimp)
        d0, d_width, width, midpoint, power = self.solimp
        if not (0.0 < d0 < 1.0 and 0.0 < d_width < 1.0):
            raise fail("solimp", "d0 and d_width in (0, 1)", self.solimp)
        positive(width, "solimp[2]")
        if not 0.0 < midpoint < 1.0:
            raise fail("solimp[3]", "a midpoint in (0, 1)", midpoint)
        if not (isinstance(power, int | float) and power >= 1.0):
            raise fail("solimp[4]", "a power >= 1", power)
        if not (isinstance(self.friction, int | float) and math.isfinite(self.friction)):
            raise fail("friction", "a finite number >= 0", self.friction)
        if self.friction < 0.0:
            raise fail("friction", "a finite number >= 0", self.friction)
        positive(self.sole_thickness, "sole_thickness")
        if (
            isinstance(self.solver_iterations, bool)
            or not isinstance(self.solver_iterations, int)
            or self.solver_iterations < 1
        ):
            raise fail("solver_iterations", "an integer >= 1", self.solver_iterations)
