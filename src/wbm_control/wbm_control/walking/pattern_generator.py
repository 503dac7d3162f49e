"""CoM/DCM walking pattern generator: a linear MPC of the LIP with the ZMP in the support polygon.

In the spirit of Wieber (2006) and seed 002's ``LinearPredictiveControl`` (single shooting over a
preview window, constraints as inequalities), written on proxsuite. The decision variables are
the ZMP (x, y) at N knots t_1 < ... < t_N after the current time t_0; the ZMP is linear between
knots and the CoM follows the LIP exactly (:mod:`~wbm_control.walking.lip`), so the predicted CoM
is linear in the ZMP knots and there is no discretisation error.

Knots are laid on the contact schedule: every phase boundary is a knot, and each phase is cut into
equal segments no longer than ``mpc_time_step``. Each knot is constrained into the support polygon
of the phases on both sides of it, shrunk by ``zmp_margin`` (a single support's stance rectangle at
a boundary with a double support); a segment lies in one phase, and its ZMP, a convex combination
of two points of that phase's polygon, stays in it *at every time*, not only at the knots. The
first knot z_0 is the ZMP at t_0 (the previous plan's, projected into the current polygon), so the
ZMP is continuous across re-plans.

The cost, per axis (x and y share the Hessian)::

    sum_k w_z (z_k - r_k)^2 + w_r (z_k - z_{k-1})^2 / tau_k + w_T (exp(-omega T) (xi_N - z_N))^2

with r the schedule's ZMP reference (sole centres; in single support moved inwards by
``zmp_inward_offset``, :func:`~wbm_control.walking.contact_schedule.stance_zmp`), tau_k the
segment durations, T the horizon and xi_N = c_N + c'_N / omega the DCM at the end of the
horizon: the last term asks the plan to end in a state from which the CoM can come to rest
over the last ZMP (a viability condition).
The DCM error grows as exp(omega t), so exp(-omega T) (xi_N - z_N) is that error brought back to
the present: a ZMP-sized quantity, which keeps the QP well conditioned.

:meth:`LinearMpcPatternGenerator.build` returns the QP (inspectable, checked against another
solver in the tests), :meth:`~LinearMpcPatternGenerator.replan` solves it and returns a
:class:`ComPlan` that samples CoM, ZMP and DCM at any time in closed form.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from wbm_control.balance import project_into_polygon
from wbm_control.qp import INFINITY, DenseQP, DenseQPSolver
from wbm_control.walking.contact_schedule import ContactSchedule, SupportPhase
from wbm_control.walking.feet import Feet
from wbm_control.walking.footsteps import Footstep
from wbm_control.walking.lip import dcm_coefficients, sample_segment
from wbm_control.walking.settings import WalkingSettings
from wbm_description.exceptions import InputError

ROWS_PER_KNOT = 8
"""Inequality rows reserved per knot: the hull of two rectangles has at most 8 edges."""

_MIN_SEGMENT = 1e-6
"""Knots closer than this to the current time are skipped [s]."""


@dataclass(frozen=True)
class PatternSample:
    """The walking pattern at one time (world frame, z up; the ground is z = 0).

    Attributes:
        time: Time [s].
        com: CoM position [m] (z at the LIP height).
        com_velocity: CoM velocity [m/s].
        com_acceleration: CoM acceleration [m/s^2], omega^2 (c - z) horizontally.
        zmp: ZMP on the ground [m].
        dcm: Divergent component of motion c + c' / omega [m] (z at the LIP height).
        phase: The support phase at that time.
    """

    time: float
    com: np.ndarray
    com_velocity: np.ndarray
    com_acceleration: np.ndarray
    zmp: np.ndarray
    dcm: np.ndarray
    phase: SupportPhase


@dataclass(frozen=True, eq=False)
class ComPlan:
    """A solved plan: ZMP knots and the LIP states at the knots.

    Attributes:
        omega: LIP natural frequency [1/s].
        com_height: LIP height [m].
        times: (N + 1,) knot times [s], the first one when the plan was made.
        zmp: (N + 1, 2) ZMP at the knots [m].
        com: (N + 1, 2) CoM at the knots [m].
        com_velocity: (N + 1, 2) CoM velocity at the knots [m/s].
        schedule: The contact schedule it was planned on.
    """

    omega: float
    com_height: float
    times: np.ndarray
    zmp: np.ndarray
    com: np.ndarray
    com_velocity: np.ndarray
    schedule: ContactSchedule

    def sample(self, t: float) -> PatternSample:
        """CoM, ZMP and DCM at time t, exact for the LIP (the last ZMP is held past the end)."""
        t = max(t, float(self.times[0]))
        k = int(np.searchsorted(self.times, t, side="right")) - 1
        if k >= len(self.times) - 1:
            k = len(self.times) - 1
            duration, end = 1.0, self.zmp[k]
        else:
            duration, end = float(self.times[k + 1] - self.times[k]), self.zmp[k + 1]
        c, cd, cdd, z = sample_segment(
            self.omega,
            self.com[k],
            self.com_velocity[k],
            self.zmp[k],
            end,
            duration,
            t - float(self.times[k]),
        )
        h = self.com_height
        return PatternSample(
            time=t,
            com=np.array([c[0], c[1], h]),
            com_velocity=np.array([cd[0], cd[1], 0.0]),
            com_acceleration=np.array([cdd[0], cdd[1], 0.0]),
            zmp=np.array([z[0], z[1], 0.0]),
            dcm=np.array([c[0] + cd[0] / self.omega, c[1] + cd[1] / self.omega, h]),
            phase=self.schedule.phase_at(t),
        )


@dataclass(frozen=True, eq=False)
class KnotLayout:
    """Where the knots of a plan are and what constrains them.

    Attributes:
        times: (N + 1,) knot times [s], times[0] the current time.
        phases: (N,) the phase of each segment (t_{k-1}, t_k).
        constraining: (N,) the phase whose support polygon constrains each of knots 1..N (the
            smaller of the two phases on either side of the knot).
        references: (N, 2) the ZMP reference at knots 1..N [m].
    """

    times: np.ndarray
    phases: tuple[SupportPhase, ...]
    constraining: tuple[SupportPhase, ...]
    references: np.ndarray


class LinearMpcPatternGenerator:
    """Linear MPC of the LIP on a contact schedule (see the module docstring).

    The matrices are allocated once (N knots, 2N variables, 8N inequalities); each re-plan
    fills them and warm-starts proxsuite from the previous solution.

    Args:
        settings: Walking settings with the CoM height filled in.
        feet: Sole geometry.
    """

    def __init__(self, settings: WalkingSettings, feet: Feet):
        if settings.zmp_margin >= feet.max_margin():
            raise InputError(
                "settings.zmp_margin",
                f"a margin < {feet.max_margin()} m (half a sole)",
                settings.zmp_margin,
            )
        inner = min(feet.left.width, feet.right.width) / 2.0 - settings.zmp_margin
        if settings.zmp_inward_offset > inner + 1e-12:
            raise InputError(
                "settings.zmp_inward_offset",
                f"an offset <= {inner:.4g} m (half a sole's width - zmp_margin: the reference "
                "inside the ZMP's area)",
                settings.zmp_inward_offset,
            )
        self.settings = settings
        self.feet = feet
        self.omega = settings.omega
        self.com_height = settings.require_com_height()
        n = math.ceil(settings.mpc_horizon / settings.mpc_time_step - 1e-9)
        self.n_knots = n
        self._qp = DenseQP(
            H=np.zeros((2 * n, 2 * n)),
            g=np.zeros(2 * n),
            A=np.zeros((0, 2 * n)),
            b=np.zeros(0),
            C=np.zeros((ROWS_PER_KNOT * n, 2 * n)),
            l=np.full(ROWS_PER_KNOT * n, -INFINITY),
            u=np.full(ROWS_PER_KNOT * n, INFINITY),
        )
        self._diagonal = np.diag_indices(n)
        self._lower = (np.arange(1, n), np.arange(n - 1))
        self._upper = (np.arange(n - 1), np.arange(1, n))
        self._solver = DenseQPSolver(
            eps_abs=1e-9, max_iterations=2000, name="walking_mpc", polish=True
        )
        self._polygons: dict[tuple, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._coefficients: tuple[np.ndarray, ...] = ()
        self._constraining: tuple[tuple[Footstep, ...], ...] = ()
        self._initial: tuple[np.ndarray, np.ndarray, np.ndarray] = ()
        self.plan: ComPlan | None = None

    # ------------------------------------------------------------------ geometry

    def polygon(self, phase: SupportPhase) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(CCW hull shrunk by the margin, rows n, offsets b with n . z <= b) of a phase."""
        key = phase.support
        if key not in self._polygons:
            if len(self._polygons) > 64:
                self._polygons.clear()
            hull = self.feet.support_polygon(phase.support, self.settings.zmp_margin)
            edges = np.roll(hull, -1, axis=0) - hull
            inward = np.stack([-edges[:, 1], edges[:, 0]], axis=1)
            inward /= np.linalg.norm(inward, axis=1, keepdims=True)
            self._polygons[key] = (hull, -inward, -np.einsum("ij,ij->i", inward, hull))
        return self._polygons[key]

    def layout(self, t: float, schedule: ContactSchedule) -> KnotLayout:
        """Knot times, segment phases, knot polygons and ZMP references after time t."""
        dt, n = self.settings.mpc_time_step, self.n_knots
        times, phases = [t], []
        index = schedule.phase_index(t)
        while len(times) <= n:
            phase = schedule.phases[index]
            start, end = phase.start, phase.end
            if math.isfinite(end):
                count = max(math.ceil((end - start) / dt - 1e-9), 1)
                step = (end - start) / count
            else:
                count, step = math.inf, dt
            j = max(math.floor((t - start) / step), 0) + 1  # the first knot after t
            while len(times) <= n and j <= count:
                knot = end if j == count else start + step * j
                if knot > t + _MIN_SEGMENT:
                    times.append(knot)
                    phases.append(phase)
                j += 1
            index = min(index + 1, len(schedule.phases) - 1)
        constraining, references = [], np.empty((self.n_knots, 2))
        for k in range(self.n_knots):
            phase = phases[k]
            after = phases[k + 1] if k + 1 < self.n_knots else schedule.phase_at(times[k + 1])
            constraining.append(after if len(after.support) < len(phase.support) else phase)
            references[k] = phase.zmp_reference(times[k + 1])
        return KnotLayout(np.array(times), tuple(phases), tuple(constraining), references)

    def current_zmp(self, t: float, com: np.ndarray, schedule: ContactSchedule) -> np.ndarray:
        """z_0: the last plan's ZMP at t (or the CoM's projection), inside the current polygon."""
        guess = self.plan.sample(t).zmp[:2] if self.plan is not None else np.asarray(com)[:2]
        hull, rows, offsets = self.polygon(schedule.phase_at(t))
        if np.all(rows @ guess <= offsets):
            return np.array(guess, dtype=float)
        return project_into_polygon(np.asarray(guess, dtype=float), hull)[:2]

    # ------------------------------------------------------------------ QP

    def build(
        self,
        t: float,
        com: np.ndarray,
        com_velocity: np.ndarray,
        schedule: ContactSchedule,
        zmp: np.ndarray | None = None,
    ) -> tuple[DenseQP, KnotLayout]:
        """Fill the QP of a re-plan from the CoM state at time t.

        Args:
            t: Current time [s].
            com: CoM position (x, y, ...) [m].
            com_velocity: CoM velocity (x, y, ...) [m/s].
            schedule: The contact schedule.
            zmp: ZMP at t (default: :meth:`current_zmp`); it is kept.

        Returns:
            (the QP over U = (z^x_1..z^x_N, z^y_1..z^y_N) [m], the knot layout).
        """
        com = np.asarray(com, dtype=float)[:2]
        com_velocity = np.asarray(com_velocity, dtype=float)[:2]
        if not (np.all(np.isfinite(com)) and np.all(np.isfinite(com_velocity))):
            raise InputError("com, com_velocity", "finite CoM position and velocity", com)
        z0 = self.current_zmp(t, com, schedule) if zmp is None else np.asarray(zmp, float)[:2]
        layout = self.layout(t, schedule)
        n, s, omega = self.n_knots, self.settings, self.omega
        durations = np.diff(layout.times)
        self._coefficients = dcm_coefficients(omega, durations)
        _, a, b, _, _, _ = self._coefficients
        # exp(-omega T) (xi_N - z_N) = xi_0 + sum_j exp(-omega T_j) (a_j z_{j-1} + b_j z_j)
        #                              - exp(-omega T) z_N, with T_j = t_j - t_0.
        discount = np.exp(-omega * (layout.times[1:] - t))
        terminal = np.zeros(n + 1)  # over z_0..z_N
        terminal[:-1] += discount * a
        terminal[1:] += discount * b
        terminal[-1] -= discount[-1]
        terminal_var = terminal[1:]
        rate_weights = s.zmp_rate_weight / np.maximum(durations, 0.01)
        # 2 (w_z I + D^T diag(w_r) D + w_T q q^T), D the first difference (tridiagonal part).
        axis = np.multiply(2.0 * s.terminal_dcm_weight * terminal_var[:, None], terminal_var)
        diagonal = 2.0 * (s.zmp_weight + rate_weights)
        diagonal[:-1] += 2.0 * rate_weights[1:]
        axis[self._diagonal] += diagonal
        axis[self._lower] -= 2.0 * rate_weights[1:]
        axis[self._upper] -= 2.0 * rate_weights[1:]
        H, g = self._qp.H, self._qp.g
        H[:n, :n] = axis
        H[n:, n:] = axis
        dcm = com + com_velocity / omega
        for i in range(2):
            gi = g[i * n : (i + 1) * n]
            gi[:] = -2.0 * s.zmp_weight * layout.references[:, i]
            gi[0] -= 2.0 * rate_weights[0] * z0[i]
            gi += 2.0 * s.terminal_dcm_weight * (dcm[i] + terminal[0] * z0[i]) * terminal_var
        constraining = tuple(phase.support for phase in layout.constraining)
        if constraining != self._constraining:  # the rows change only when a knot passes
            C, upper = self._qp.C, self._qp.u
            C.fill(0.0)
            upper.fill(INFINITY)
            for k, phase in enumerate(layout.constraining):
                _, rows, offsets = self.polygon(phase)
                start, count = ROWS_PER_KNOT * k, len(offsets)
                C[start : start + count, k] = rows[:, 0]
                C[start : start + count, n + k] = rows[:, 1]
                upper[start : start + count] = offsets
            self._constraining = constraining
        self._initial = (com, com_velocity, z0)
        return self._qp, layout

    def replan(
        self,
        t: float,
        com: np.ndarray,
        com_velocity: np.ndarray,
        schedule: ContactSchedule,
        zmp: np.ndarray | None = None,
    ) -> ComPlan:
        """Plan from the CoM state at time t (see :meth:`build`); the plan is kept in ``plan``.

        Raises:
            NoSolutionFound: proxsuite failed (the ZMP constraints alone are always feasible).
        """
        problem, layout = self.build(t, com, com_velocity, schedule, zmp)
        solution = self._solver.solve(problem)
        n, omega = self.n_knots, self.omega
        com0, com_velocity0, z0 = self._initial
        zmp_knots = np.empty((n + 1, 2))
        zmp_knots[0] = z0
        zmp_knots[1:, 0], zmp_knots[1:, 1] = solution[:n], solution[n:]
        _, a, b, _, a2, b2 = self._coefficients
        # xi_k = G_k (xi_0 + sum_{j<=k} (a_j z_{j-1} + b_j z_j) / G_j), G_k = exp(omega T_k);
        # zeta likewise with exp(-omega T_k).
        elapsed = (layout.times[1:] - layout.times[0])[:, None]
        grow, decay = np.exp(omega * elapsed), np.exp(-omega * elapsed)
        xi = np.empty((n + 1, 2))
        zeta = np.empty((n + 1, 2))
        xi[0] = com0 + com_velocity0 / omega
        zeta[0] = com0 - com_velocity0 / omega
        previous, current = zmp_knots[:-1], zmp_knots[1:]
        xi[1:] = grow * (
            xi[0] + np.cumsum((a[:, None] * previous + b[:, None] * current) / grow, 0)
        )
        zeta[1:] = decay * (
            zeta[0] + np.cumsum((a2[:, None] * previous + b2[:, None] * current) / decay, 0)
        )
        self.plan = ComPlan(
            omega=self.omega,
            com_height=self.com_height,
            times=layout.times,
            zmp=zmp_knots,
            com=0.5 * (xi + zeta),
            com_velocity=0.5 * omega * (xi - zeta),
            schedule=schedule,
        )
        return self.plan
