"""DCM/ZMP stabilizer for walking: feedback of the DCM error onto the planned ZMP.

On the linear inverted pendulum the DCM xi = c + c' / omega obeys xi' = omega (xi - z). With the
planned pair (xi_ref, z_ref) satisfying the same equation, the commanded ZMP

    z = z_ref + k (xi - xi_ref)                           (Englsberger et al. 2015, Morisawa)

makes the DCM error e = xi - xi_ref obey e' = omega (e - k e) = -(k - 1) omega e: it decays as
exp(-(k - 1) omega t) for k > 1. The ZMP is then clamped into the current support polygon (the
LIP cannot push outside it); while clamped the decay is slower, or the error grows. The CoM
acceleration of the LIP under that ZMP is c'' = omega^2 (c - z).

This differs from :class:`wbm_control.balance.DcmStabilizer` (a standing balance law written
around the DCM's reference rate) in taking the pattern generator's planned ZMP as feed-forward.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from wbm_control.balance import project_into_polygon
from wbm_description.exceptions import InputError


@dataclass(frozen=True)
class StabilizerOutput:
    """What the stabilizer commands.

    Attributes:
        zmp: Commanded ZMP (x, y, 0) [m], inside the support polygon.
        com_acceleration: LIP CoM acceleration (x, y, 0) under that ZMP [m/s^2].
        dcm: Measured DCM (x, y) [m].
        dcm_error: Measured minus planned DCM (x, y) [m].
        clamped: Whether the ZMP had to be moved into the polygon.
    """

    zmp: np.ndarray
    com_acceleration: np.ndarray
    dcm: np.ndarray
    dcm_error: np.ndarray
    clamped: bool


class DcmZmpStabilizer:
    """z = z_ref + k (xi - xi_ref), clamped into the support polygon.

    Args:
        gain: k [-], > 1.
        omega: LIP natural frequency sqrt(g / h) [1/s].
        margin: The ZMP is kept this far inside the given polygon [m].
    """

    def __init__(self, *, gain: float, omega: float, margin: float = 0.0):
        if not gain > 1.0:
            raise InputError("gain", "a DCM gain k > 1 [-]", gain)
        if not omega > 0.0:
            raise InputError("omega", "a natural frequency > 0 [1/s]", omega)
        if not margin >= 0.0:
            raise InputError("margin", "a margin >= 0 [m]", margin)
        self.gain = float(gain)
        self.omega = float(omega)
        self.margin = float(margin)

    def update(
        self,
        *,
        zmp_ref: np.ndarray,
        dcm_ref: np.ndarray,
        com: np.ndarray,
        com_velocity: np.ndarray,
        support_polygon: np.ndarray | None = None,
    ) -> StabilizerOutput:
        """The commanded ZMP and CoM acceleration for the measured CoM state.

        Args:
            zmp_ref: Planned ZMP (x, y, ...) [m].
            dcm_ref: Planned DCM (x, y, ...) [m].
            com: Measured CoM (x, y, ...) [m].
            com_velocity: Measured CoM velocity (x, y, ...) [m/s].
            support_polygon: (m, 2) CCW convex polygon the ZMP must stay in, or None.
        """
        values = [np.asarray(v, dtype=float)[:2] for v in (zmp_ref, dcm_ref, com, com_velocity)]
        if not all(np.all(np.isfinite(v)) for v in values):
            raise InputError("zmp_ref, dcm_ref, com, com_velocity", "finite values", values)
        z_ref, xi_ref, c, cd = values
        xi = c + cd / self.omega
        error = xi - xi_ref
        zmp = z_ref + self.gain * error
        clamped = False
        if support_polygon is not None and len(support_polygon) >= 3:
            hull = np.asarray(support_polygon, dtype=float)
            edges = np.concatenate([hull[1:], hull[:1]]) - hull
            cross = edges[:, 0] * (zmp[1] - hull[:, 1]) - edges[:, 1] * (zmp[0] - hull[:, 0])
            if np.any(cross < self.margin * np.hypot(edges[:, 0], edges[:, 1])):
                zmp = project_into_polygon(zmp, hull, self.margin)
                clamped = True
        acceleration = self.omega**2 * (c - zmp)
        return StabilizerOutput(
            zmp=np.array([zmp[0], zmp[1], 0.0]),
            com_acceleration=np.array([acceleration[0], acceleration[1], 0.0]),
            dcm=xi,
            dcm_error=error,
            clamped=clamped,
        )
