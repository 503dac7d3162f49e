"""The contact schedule: which feet support the robot when, and the ZMP reference along it.

A :class:`ContactSchedule` is a sequence of contiguous :class:`SupportPhase` s ending with an
infinite standing phase. Each phase has its supporting footsteps (one in single support, two in
double support), and a ZMP reference that is linear in time inside the phase: the stance sole's
centre in single support (moved ``zmp_inward_offset`` towards the swing foot's side:
:func:`stance_zmp`), a ramp from one such point to the next in double support, the middle of the
feet when standing. The pattern generator keeps the ZMP inside the phase's support
polygon and pulls it towards that reference.

:func:`build_schedule` lays the phases out from the current phase and the footsteps still to be
walked, with the nominal durations of the settings.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from wbm_control.walking.feet import Feet
from wbm_control.walking.footsteps import Footstep, Side, other_side, side_sign
from wbm_control.walking.settings import WalkingSettings
from wbm_description.exceptions import InputError

PhaseKind = Literal["standing", "double_support", "single_support"]


@dataclass(frozen=True, eq=False)
class SupportPhase:
    """A time interval with a fixed set of feet on the ground.

    Attributes:
        kind: ``"standing"`` (infinite), ``"double_support"`` or ``"single_support"``.
        start: Start time [s].
        end: End time [s] (``math.inf`` for standing).
        support: The footsteps on the ground (two, or the stance foot in single support).
        zmp_start: ZMP reference (x, y) at the start [m].
        zmp_end: ZMP reference at the end [m] (held when the phase is infinite).
        swing: Target of the swing foot in single support, else None.
    """

    kind: PhaseKind
    start: float
    end: float
    support: tuple[Footstep, ...]
    zmp_start: np.ndarray
    zmp_end: np.ndarray
    swing: Footstep | None = None

    @property
    def stance_side(self) -> Side | None:
        """The stance foot's side in single support, else None."""
        return self.support[0].side if self.kind == "single_support" else None

    def zmp_reference(self, t: float) -> np.ndarray:
        """The linear ZMP reference (x, y) at time t (clamped to the phase) [m]."""
        if not math.isfinite(self.end) or self.end <= self.start:
            return self.zmp_end.copy()
        s = min(max((t - self.start) / (self.end - self.start), 0.0), 1.0)
        return (1.0 - s) * self.zmp_start + s * self.zmp_end


@dataclass(frozen=True, eq=False)
class ContactSchedule:
    """Contiguous support phases, the last one standing (infinite).

    Attributes:
        phases: The phases in time order.
    """

    phases: tuple[SupportPhase, ...]

    def phase_index(self, t: float) -> int:
        """Index of the phase holding time t (the first phase before it starts)."""
        for index, phase in enumerate(self.phases):
            if t < phase.end:
                return index
        return len(self.phases) - 1

    def phase_at(self, t: float) -> SupportPhase:
        """The phase holding time t."""
        return self.phases[self.phase_index(t)]

    def footsteps(self) -> list[Footstep]:
        """The swing targets in order (the footsteps still to be walked)."""
        return [phase.swing for phase in self.phases if phase.swing is not None]


def stance_zmp(settings: WalkingSettings, feet: Feet, stance: Footstep) -> np.ndarray:
    """The single-support ZMP reference (x, y) on a stance sole, world frame [m].

    The sole rectangle's centre moved ``settings.zmp_inward_offset`` along the sole's y axis
    towards the other foot's side (-y for a left stance sole, +y for a right one).
    """
    offset = -side_sign(stance.side) * settings.zmp_inward_offset
    return feet.center(stance) + offset * np.array([-math.sin(stance.yaw), math.cos(stance.yaw)])


def build_schedule(
    settings: WalkingSettings,
    feet: Feet,
    *,
    kind: PhaseKind,
    start: float,
    end: float,
    left: Footstep,
    right: Footstep,
    steps: Sequence[Footstep],
    stance: Footstep | None = None,
    swing: Footstep | None = None,
    zmp_from: np.ndarray | None = None,
) -> ContactSchedule:
    """Lay out the phases from the current one and the footsteps still to be walked.

    Args:
        settings: Durations of the future phases.
        feet: Sole geometry (ZMP references at the sole centres).
        kind: The current phase's kind.
        start: When the current phase started [s].
        end: When it is expected to end [s] (ignored for standing).
        left: Where the left foot is (its lift-off pose if it is swinging).
        right: Where the right foot is.
        steps: Footsteps after the current phase's swing, alternating.
        stance: The stance foot in single support.
        swing: The swing foot's target in single support.
        zmp_from: ZMP reference at the start of a current double support (default: the middle
            of the feet).

    Returns:
        The schedule: current phase, then for each step a single support and a double support,
        a final double support and standing.
    """
    where: dict[Side, Footstep] = {"left": left, "right": right}

    def middle() -> np.ndarray:
        return 0.5 * (feet.center(where["left"]) + feet.center(where["right"]))

    def both() -> tuple[Footstep, Footstep]:
        return where["left"], where["right"]

    phases: list[SupportPhase] = []
    queue = list(steps)
    if kind == "standing":
        phases.append(SupportPhase("standing", start, math.inf, both(), middle(), middle()))
        return ContactSchedule(tuple(phases))
    if kind == "single_support":
        if stance is None or swing is None:
            raise InputError("stance, swing", "the stance and swing footsteps of a single support")
        centre = stance_zmp(settings, feet, stance)
        phases.append(SupportPhase("single_support", start, end, (stance,), centre, centre, swing))
        where[swing.side] = swing
        last_stance: np.ndarray = centre
        time = end
        double_duration = settings.double_support_duration
    else:
        last_stance = middle() if zmp_from is None else np.asarray(zmp_from, dtype=float)
        time = start
        double_duration = end - start
    for step in queue:
        stance_foot = where[other_side(step.side)]
        centre = stance_zmp(settings, feet, stance_foot)
        phases.append(
            SupportPhase(
                "double_support", time, time + double_duration, both(), last_stance, centre
            )
        )
        time += double_duration
        double_duration = settings.double_support_duration
        phases.append(
            SupportPhase(
                "single_support",
                time,
                time + settings.single_support_duration,
                (stance_foot,),
                centre,
                centre,
                step,
            )
        )
        time += settings.single_support_duration
        where[step.side] = step
        last_stance = centre
    if kind != "single_support" and not queue:
        final_end = end  # a current double support with nothing after it: it is the final one
    else:
        final_end = time + settings.final_double_support_duration
    phases.append(SupportPhase("double_support", time, final_end, both(), last_stance, middle()))
    phases.append(SupportPhase("standing", final_end, math.inf, both(), middle(), middle()))
    return ContactSchedule(tuple(phases))
