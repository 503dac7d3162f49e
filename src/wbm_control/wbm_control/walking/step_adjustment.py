"""DCM-based step adjustment: where to put the swing foot when the DCM is off its plan.

On the linear inverted pendulum the DCM xi = c + cd / omega diverges from the ZMP z as
dxi/dt = omega (xi - z). While the ZMP follows its plan, a DCM error e = xi - xi_ref at time t
grows to e exp(omega T) at the touch-down T seconds later (the stabilizer can only slow this down
by moving the ZMP inside the stance foot). Moving the touch-down footstep by that grown error
keeps the DCM at the same place relative to the new support as planned: the rest of the plan
stands, shifted (Englsberger et al. 2015; Khadiv et al. 2016, step adjustment). The shift is
scaled by a gain, ignored below a dead band, and the step is clamped into the step limits
relative to the stance foot (:class:`~wbm_control.walking.step_limits.StepLimits`: length,
width, yaw, no crossing), so an adjusted step is always reachable.

Frames: the world (z up); footsteps are sole-frame poses on the ground.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from wbm_control.walking.feet import Feet
from wbm_control.walking.footsteps import Footstep
from wbm_control.walking.step_limits import StepLimits
from wbm_description.exceptions import InputError


@dataclass(frozen=True)
class StepAdjustment:
    """The touch-down footstep moved by the grown DCM error (see the module docstring).

    Attributes:
        limits: Step limits relative to the stance foot.
        feet: Sole geometry (the no-overlap test of the limits).
        omega: LIP natural frequency sqrt(g / h) [1/s].
        gain: Fraction of the grown DCM error the step is moved by [-] (1: the LIP's exact
            compensation).
        dead_band: DCM shifts smaller than this leave the step where it was planned [m].
    """

    limits: StepLimits
    feet: Feet
    omega: float
    gain: float = 1.0
    dead_band: float = 0.005

    def __post_init__(self) -> None:
        if not (math.isfinite(self.omega) and self.omega > 0.0):
            raise InputError("omega", "a natural frequency > 0 [1/s]", self.omega)
        if not (math.isfinite(self.gain) and self.gain >= 0.0):
            raise InputError("gain", "a gain >= 0 [-]", self.gain)

    def shift(self, dcm_error: np.ndarray, time_to_touchdown: float) -> np.ndarray:
        """The wanted horizontal shift (2,) [m]: gain e exp(omega T) (zero within the dead band).

        Args:
            dcm_error: Measured minus planned DCM (x, y, ...) [m].
            time_to_touchdown: Time left until the planned touch-down [s] (negative: 0).
        """
        error = np.asarray(dcm_error, dtype=float)[:2]
        if not np.all(np.isfinite(error)) or not math.isfinite(time_to_touchdown):
            raise InputError("dcm_error, time_to_touchdown", "finite values", error)
        shift = self.gain * math.exp(self.omega * max(time_to_touchdown, 0.0)) * error
        return shift if float(np.linalg.norm(shift)) >= self.dead_band else np.zeros(2)

    def adjust(
        self,
        planned: Footstep,
        stance: Footstep,
        dcm_error: np.ndarray,
        time_to_touchdown: float,
    ) -> Footstep:
        """The planned touch-down footstep moved by :meth:`shift`, within the step limits.

        Args:
            planned: The footstep planned at lift-off (the swing foot's side).
            stance: The stance foot.
            dcm_error: Measured minus planned DCM [m].
            time_to_touchdown: Time left until the planned touch-down [s].

        Returns:
            The adjusted footstep (the planned one, clamped, when the shift is zero).
        """
        dx, dy = self.shift(dcm_error, time_to_touchdown)
        wanted = Footstep(planned.side, planned.x + dx, planned.y + dy, planned.yaw)
        if self.limits.violation(wanted, stance, self.feet) is None:
            return wanted
        return self.limits.clamp(wanted, stance, self.feet)
