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

from dataclasses import dataclass

from wbm_description.exceptions import ConfigError
from wbm_description.settings import Settings, setting

INTEGRATORS = ("implicitfast", "implicit", "euler", "rk4")
CONES = ("elliptic", "pyramidal")


@dataclass(frozen=True)
class MujocoSettings(Settings):
    """Everything the MuJoCo engine needs besides the robot (the ``mujoco:`` section).

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

    timestep: float = setting(1.0e-3, gt=0.0, le=0.05, unit="s", doc="integration step")
    integrator: str = setting("implicitfast", choices=INTEGRATORS, doc="MuJoCo integrator")
    solref: tuple[float, float] = setting(
        (0.02, 1.0), length=2, gt=0.0, doc="contact (timeconst [s], dampratio [-])"
    )
    solimp: tuple[float, float, float, float, float] = setting(
        (0.9, 0.95, 0.001, 0.5, 2.0),
        length=5,
        doc="contact impedance (d0, d_width, width [m], midpoint, power)",
    )
    friction: float = setting(0.8, ge=0.0, doc="sliding friction between soles and ground")
    cone: str = setting("elliptic", choices=CONES, doc="friction cone")
    sole_thickness: float = setting(
        0.01, gt=0.0, unit="m", doc="height of the sole collision boxes"
    )
    solver_iterations: int = setting(100, ge=1, doc="constraint solver iterations per step")

    def check(self) -> None:
        """The impedance's ranges (see the module docstring)."""
        d0, d_width, width, midpoint, power = self.solimp
        if not (0.0 < d0 < 1.0 and 0.0 < d_width < 1.0):
            raise ConfigError(None, "solimp", "d0 and d_width in (0, 1)", list(self.solimp))
        if not width > 0.0:
            raise ConfigError(None, "solimp[2]", "a width > 0 [m]", width)
        if not 0.0 < midpoint < 1.0:
            raise ConfigError(None, "solimp[3]", "a midpoint in (0, 1)", midpoint)
        if not power >= 1.0:
            raise ConfigError(None, "solimp[4]", "a power >= 1", power)


__all__ = ["CONES", "INTEGRATORS", "MujocoSettings"]
