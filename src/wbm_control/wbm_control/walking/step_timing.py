"""Capture stepping with step timing: where AND when the swing foot lands (Khadiv et al. 2016).

On the linear inverted pendulum with the ZMP held at z (the stance sole's centre) the DCM
xi = c + cd / omega evolves as xi(t + T) = z + (xi(t) - z) tau with tau = exp(omega T). At the
touch-down T seconds from now, the new footstep (sole centre u_c = u + k, u the sole frame
origin and k its constant offset to the centre) and the DCM offset b = xi(t + T) - u_c satisfy

    u + k + b = z + (xi - z) tau                                      (linear in u, b, tau)

Each control tick of a swing, :meth:`StepTiming.solve` picks (u, tau, b) minimising

    w_u |u - u_nom|^2 + w_tau (tau - tau_nom)^2 + w_b |b - b_nom|^2

subject to that equality, the step limits of :class:`~wbm_control.walking.step_limits.StepLimits`
(length, width, no crossing: a box in the stance sole's frame) and tau in
[exp(omega T_min), exp(omega T_max)] (the remaining swing time bounds). b is eliminated with the
equality, which leaves a strictly convex QP in (u_x, u_y, tau) in the stance frame with box
bounds only; it is solved exactly by enumerating the 27 faces of the box (each face: a 1-3
variable linear solve), the cheapest feasible stationary point being the global minimum.

The nominal values come from the walking plan: u_nom the footstep planned at lift-off, tau_nom
from the planned touch-down time, b_nom = z + (xi_ref - z) tau_nom - u_nom - k with xi_ref the
plan's DCM now (so that on the plan, xi = xi_ref, the nominal step and time are the solution).
With tau held at tau_nom and w_b >> w_u this is the DCM step adjustment u = u_nom + (xi -
xi_ref) tau_nom (:mod:`~wbm_control.walking.step_adjustment`); when the step limits bind, the
rest of the DCM error goes into the timing: a DCM moving out beyond the stance foot shortens the
swing (the DCM has less time to diverge), a DCM lagging behind lengthens it.

Frames: the world (z up, horizontal components only); footsteps are sole-frame poses.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from wbm_control.walking.feet import Feet
from wbm_control.walking.footsteps import Footstep, side_sign
from wbm_control.walking.step_limits import StepLimits
from wbm_description.exceptions import InputError


def schedule_dcm(schedule, time: float, omega: float) -> np.ndarray:
    """The DCM (x, y) [m] at ``time`` of the LIP whose ZMP follows a schedule's references.

    Backward from the final standing phase (the DCM at rest over its ZMP), through each phase
    whose ZMP goes linearly from z_0 to z_1 over T: with r = (z_1 - z_0) / (omega T) the DCM is
    xi(t) = z(t) + r + (xi(T) - z_1 - r) exp(-omega (T - t)) (the unique bounded solution of
    xi' = omega (xi - z); Englsberger et al. 2015 for constant ZMPs).

    Args:
        schedule: A :class:`~wbm_control.walking.contact_schedule.ContactSchedule`.
        time: When [s].
        omega: LIP natural frequency [1/s].
    """
    phases = schedule.phases
    xi = np.asarray(phases[-1].zmp_end, dtype=float)[:2].copy()
    for phase in reversed(phases):
        if not math.isfinite(phase.end):
            xi = np.asarray(phase.zmp_end, dtype=float)[:2].copy()
            if time >= phase.start:
                break
            continue
        span = phase.end - phase.start
        z0 = np.asarray(phase.zmp_start, dtype=float)[:2]
        z1 = np.asarray(phase.zmp_end, dtype=float)[:2]
        r = (z1 - z0) / (omega * span) if span > 0.0 else np.zeros(2)
        at = max(time, phase.start)
        if span > 0.0:
            z_at = z0 + (z1 - z0) * (at - phase.start) / span
        else:
            z_at = z1
        xi = z_at + r + (xi - z1 - r) * math.exp(-omega * (phase.end - at))
        if time >= phase.start:
            break
    return xi


@dataclass(frozen=True)
class StepTimingSolution:
    """Where and when the swing foot lands.

    Attributes:
        step: The touch-down footstep (sole frame pose; the nominal yaw).
        remaining: Time from now to the touch-down T [s].
        tau: exp(omega T) [-].
        dcm_offset: b (2,): the DCM at touch-down minus the step's sole centre [m].
        cost: The QP's cost at the solution.
    """

    step: Footstep
    remaining: float
    tau: float
    dcm_offset: np.ndarray
    cost: float


def _rotation(yaw: float) -> np.ndarray:
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s], [s, c]])


def box_qp(
    hessian: np.ndarray, target: np.ndarray, lower: np.ndarray, upper: np.ndarray
) -> np.ndarray:
    """Minimise x' H x - 2 r' x over lower <= x <= upper, H positive definite, n <= 3 variables.

    Exact: every face of the box (each variable free, at its lower or at its upper bound) has
    one stationary point; the global minimum is the cheapest one that is feasible.
    """
    n = len(target)
    best, best_cost = None, math.inf
    for face in itertools.product((0, 1, 2), repeat=n):  # 0 free, 1 lower, 2 upper
        x = np.where(np.array(face) == 1, lower, upper).astype(float)
        free = [i for i in range(n) if face[i] == 0]
        fixed = [i for i in range(n) if face[i] != 0]
        if free:
            rhs = target[free] - hessian[np.ix_(free, fixed)] @ x[fixed]
            x[free] = np.linalg.solve(hessian[np.ix_(free, free)], rhs)
            if np.any(x < lower - 1e-12) or np.any(x > upper + 1e-12):
                continue
        cost = float(x @ hessian @ x - 2.0 * target @ x)
        if cost < best_cost:
            best, best_cost = x, cost
    return best


@dataclass(frozen=True)
class StepTiming:
    """The touch-down footstep and time from the measured DCM (see the module docstring).

    Attributes:
        limits: Step limits relative to the stance foot.
        feet: Sole geometry (sole centres; the overlap test of the limits).
        omega: LIP natural frequency sqrt(g / h) [1/s].
        step_weight: w_u [1/m^2].
        timing_weight: w_tau [-].
        offset_weight: w_b [1/m^2].
    """

    limits: StepLimits
    feet: Feet
    omega: float
    step_weight: float = 1.0
    timing_weight: float = 0.1
    offset_weight: float = 100.0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.omega) and self.omega > 0.0):
            raise InputError("omega", "a natural frequency > 0 [1/s]", self.omega)
        for name in ("step_weight", "timing_weight"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise InputError(name, "a weight > 0", value)
        if not (math.isfinite(self.offset_weight) and self.offset_weight >= 0.0):
            raise InputError("offset_weight", "a weight >= 0", self.offset_weight)

    def nominal_offset(
        self, nominal: Footstep, zmp: np.ndarray, dcm_reference: np.ndarray, remaining: float
    ) -> np.ndarray:
        """b_nom = z + (xi_ref - z) exp(omega T_nom) - (u_nom + k): the plan's offset [m] (2,).

        Args:
            nominal: The footstep planned at lift-off.
            zmp: z, the stance sole's centre (x, y) [m].
            dcm_reference: xi_ref, the plan's DCM now (x, y) [m].
            remaining: T_nom, time to the planned touch-down [s].
        """
        z = np.asarray(zmp, dtype=float)[:2]
        xi = np.asarray(dcm_reference, dtype=float)[:2]
        tau = math.exp(self.omega * max(remaining, 0.0))
        return z + (xi - z) * tau - self.feet.center(nominal)[:2]

    def solve(
        self,
        *,
        nominal: Footstep,
        stance: Footstep,
        dcm: np.ndarray,
        zmp: np.ndarray,
        nominal_offset: np.ndarray,
        nominal_remaining: float,
        min_remaining: float,
        max_remaining: float,
    ) -> StepTimingSolution:
        """The step and time minimising the cost (see the module docstring).

        Args:
            nominal: u_nom, the footstep planned at lift-off (the swing foot's side).
            stance: The stance foot.
            dcm: xi, the measured DCM (x, y) [m].
            zmp: z, the ZMP held during the rest of the swing (x, y) [m].
            nominal_offset: b_nom (x, y) [m] (see :meth:`nominal_offset`).
            nominal_remaining: T_nom, time to the planned touch-down [s].
            min_remaining: T_min, the earliest touch-down from now [s] (> 0).
            max_remaining: T_max, the latest (>= T_min) [s].

        Raises:
            InputError: Non-finite values, or timing bounds not 0 < T_min <= T_max.
        """
        xi = np.asarray(dcm, dtype=float)[:2]
        z = np.asarray(zmp, dtype=float)[:2]
        b_nom = np.asarray(nominal_offset, dtype=float)[:2]
        values = np.concatenate([xi, z, b_nom, [nominal_remaining, min_remaining, max_remaining]])
        if not np.all(np.isfinite(values)):
            raise InputError("dcm, zmp, nominal_offset, timing", "finite values", values)
        if not 0.0 < min_remaining <= max_remaining:
            raise InputError(
                "min_remaining, max_remaining",
                "0 < T_min <= T_max [s]",
                (min_remaining, max_remaining),
            )
        rotation = _rotation(stance.yaw)
        origin = np.array([stance.x, stance.y])
        offset = self.feet.center(nominal)[:2] - np.array([nominal.x, nominal.y])  # k
        # In the stance frame: p = R^T (u - S); u + k + b = z + (xi - z) tau.
        p_nom = rotation.T @ (np.array([nominal.x, nominal.y]) - origin)
        g = rotation.T @ (z - origin - offset - b_nom)
        d = rotation.T @ (xi - z)
        tau_nom = math.exp(self.omega * max(nominal_remaining, 0.0))
        w_u, w_t, w_b = self.step_weight, self.timing_weight, self.offset_weight
        hessian = np.zeros((3, 3))
        hessian[:2, :2] = (w_u + w_b) * np.eye(2)
        hessian[:2, 2] = hessian[2, :2] = -w_b * d
        hessian[2, 2] = w_b * float(d @ d) + w_t
        target = np.concatenate([w_u * p_nom + w_b * g, [-w_b * float(d @ g) + w_t * tau_nom]])
        sign = side_sign(nominal.side)
        lim = self.limits
        lateral = sorted((sign * lim.min_spacing, sign * lim.max_spacing))
        lower = np.array(
            [-lim.max_length_backward, lateral[0], math.exp(self.omega * min_remaining)]
        )
        upper = np.array([lim.max_length, lateral[1], math.exp(self.omega * max_remaining)])
        x = box_qp(hessian, target, lower, upper)
        p, tau = x[:2], float(x[2])
        u = origin + rotation @ p
        step = Footstep(nominal.side, float(u[0]), float(u[1]), nominal.yaw)
        if self.limits.violation(step, stance, self.feet) is not None:  # a yawed overlap
            step = self.limits.clamp(step, stance, self.feet)
            u = np.array([step.x, step.y])
        b = z + (xi - z) * tau - u - offset
        cost = (
            w_u * float(np.sum((u - np.array([nominal.x, nominal.y])) ** 2))
            + w_t * (tau - tau_nom) ** 2
            + w_b * float(np.sum((b - b_nom) ** 2))
        )
        return StepTimingSolution(step, math.log(tau) / self.omega, tau, b, cost)
