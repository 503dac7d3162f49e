"""Walking state machine: standing, double support, single support, stopping.

Driven by the clock *and* the measured contacts (:class:`~wbm_control.walking.contact_state.
ContactState`)::

    STANDING --footsteps--> DOUBLE_SUPPORT --end, stance foot loaded--> SINGLE_SUPPORT(stance)
    SINGLE_SUPPORT --touch-down--> DOUBLE_SUPPORT (more steps) or STOPPING (none)
    STOPPING --end--> STANDING

- Lift-off: at the end of a double support the swing foot is released only if the other foot is
  loaded (normal force >= ``support_force``, or its contact flag); otherwise the double support
  is extended until it is. Nothing is ever released while the other foot is not loaded.
- Touch-down: the swing foot lands when its normal force reaches ``touchdown_force`` (or its
  flag is set) once ``min_touchdown_phase`` of the swing has passed: an early contact ends the
  swing early, at the foot's current reference pose. A late one extends the swing, the foot going
  on down (``late_touchdown_depth``), for at most ``max_touchdown_delay``; then the contact is
  declared by timeout. Without a measurement for a foot, the clock decides.

Each switch emits commands for the controller's contact set: :class:`ReleaseContact` at lift-off,
:class:`ActivateContact` (with where the sole is) at touch-down. :meth:`WalkingStateMachine.
schedule` lays the current and coming phases out for the pattern generator, with the current
phase's expected end (extended while waiting), and :meth:`~WalkingStateMachine.swing_sample`
gives the swing foot's reference.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from wbm_control.walking.contact_schedule import ContactSchedule, build_schedule, stance_zmp
from wbm_control.walking.contact_state import ContactState
from wbm_control.walking.exceptions import FootstepPlanRejected
from wbm_control.walking.feet import Feet
from wbm_control.walking.footsteps import Footstep, Side, other_side
from wbm_control.walking.settings import WalkingSettings
from wbm_control.walking.swing_foot import SwingFootSample, SwingFootTrajectory
from wbm_control.walking.swing_retiming import RetimedSwing
from wbm_description.exceptions import InputError


class WalkingState(enum.Enum):
    """The state machine's states."""

    STANDING = "standing"
    DOUBLE_SUPPORT = "double_support"
    SINGLE_SUPPORT = "single_support"
    STOPPING = "stopping"


@dataclass(frozen=True)
class ActivateContact:
    """Put a sole in contact (the controller adds it to its contact set).

    Attributes:
        sole: Sole name in the robot config.
        side: ``"left"`` or ``"right"``.
        placement: Where the sole frame is held, in the world.
        time: When the contact was made [s].
        reason: ``"clock"`` (no measurement), ``"touchdown"`` (measured at or after the planned
            time), ``"early_touchdown"`` or ``"timeout"`` (a late contact never measured).
    """

    sole: str
    side: Side
    placement: pin.SE3
    time: float
    reason: str


@dataclass(frozen=True)
class ReleaseContact:
    """Take a sole out of contact (lift-off).

    Attributes:
        sole: Sole name in the robot config.
        side: ``"left"`` or ``"right"``.
        time: When [s].
    """

    sole: str
    side: Side
    time: float


ContactCommand = ActivateContact | ReleaseContact


class WalkingStateMachine:
    """Phases of walking, switched by the clock and the measured contacts.

    Args:
        settings: Walking settings (durations, touch-down thresholds).
        feet: Sole geometry and names.
        left: Where the left foot stands.
        right: Where the right foot stands.
        time: Start time [s].
    """

    def __init__(
        self,
        settings: WalkingSettings,
        feet: Feet,
        *,
        left: Footstep,
        right: Footstep,
        time: float = 0.0,
    ):
        self.settings = settings
        self.feet = feet
        self._feet: dict[Side, Footstep] = {"left": left, "right": right}
        self.state = WalkingState.STANDING
        self.phase_start = time
        self.phase_end = math.inf
        self._queue: list[Footstep] = []
        self._next_side: Side | None = None
        self._stance: Side | None = None
        self._swing: SwingFootTrajectory | None = None
        self._swing_target: Footstep | None = None
        self._zmp_from = self._middle()
        self._version = 0
        self._schedule_cache: tuple[tuple, ContactSchedule] | None = None
        self.landed: list[Footstep] = []
        """Every footstep landed so far, in order (where it actually landed)."""

    # ------------------------------------------------------------------ queries

    @property
    def stance_side(self) -> Side | None:
        """The stance foot in single support, else None."""
        return self._stance if self.state == WalkingState.SINGLE_SUPPORT else None

    @property
    def swing_side(self) -> Side | None:
        """The swinging foot in single support, else None."""
        return other_side(self._stance) if self.stance_side is not None else None

    @property
    def next_swing_side(self) -> Side | None:
        """The foot that must step next, or None when either may (standing, stopping)."""
        if self.state == WalkingState.SINGLE_SUPPORT:
            return self._stance
        if self.state == WalkingState.DOUBLE_SUPPORT:
            return self._next_side
        return None

    @property
    def footsteps(self) -> tuple[Footstep, ...]:
        """The footsteps still to be walked after the current swing."""
        return tuple(self._queue)

    @property
    def swing_target(self) -> Footstep | None:
        """Where the swing foot is going, in single support."""
        return self._swing_target if self.state == WalkingState.SINGLE_SUPPORT else None

    def retarget_swing(self, step: Footstep) -> None:
        """Move the touch-down of the swing in progress (step adjustment).

        The swing keeps its lift-off pose, start and duration; only its end changes, so the
        reference moves by s(t) times the change (small changes per tick keep it smooth). The
        schedule changes with it (the pattern generator re-plans on the new support).

        Raises:
            InputError: Not in single support, or a step of the stance side.
        """
        if self.state != WalkingState.SINGLE_SUPPORT or step.side != self.swing_side:
            raise InputError("step", f"a {self.swing_side} step during a swing", step)
        swing = self._swing
        self._swing = SwingFootTrajectory(
            start=swing.start,
            end=step.placement(swing.end.translation[2]),
            start_time=swing.start_time,
            duration=swing.duration,
            height=swing.height,
            late_depth=swing.late_depth,
            late_duration=swing.late_duration,
            horizontal_fraction=swing.horizontal_fraction,
        )
        self._swing_target = step
        self._version += 1

    def retime_swing(self, step: Footstep, end_time: float, t: float) -> None:
        """Move the touch-down of the swing in progress in place AND time (step timing).

        The reference continues from its state at t (pose, velocity, acceleration) to the new
        footstep, landing at rest at ``end_time`` (:class:`~wbm_control.walking.swing_retiming.
        RetimedSwing`); the single support's planned end becomes ``end_time`` (touch-down is
        still measured: the F/T, the clock only as the fallback). The schedule changes with it.

        Raises:
            InputError: Not in single support, a step of the stance side, or an end not after t.
        """
        if self.state != WalkingState.SINGLE_SUPPORT or step.side != self.swing_side:
            raise InputError("step", f"a {self.swing_side} step during a swing", step)
        if not (math.isfinite(end_time) and end_time > t):
            raise InputError("end_time", f"a time after {t} [s]", end_time)
        swing = self._swing
        end = step.placement(swing.end.translation[2])
        self._swing = RetimedSwing.from_sample(swing, swing.sample(t), t, end, end_time)
        self._swing_target = step
        self.phase_end = end_time
        self._version += 1

    def shorten_double_support(self, end_time: float) -> None:
        """End the current double support (between steps) no later than ``end_time`` [s]."""
        if self.state == WalkingState.DOUBLE_SUPPORT and end_time < self.phase_end:
            self.phase_end = max(end_time, self.phase_start)
            self._version += 1

    def foot(self, side: Side) -> Footstep:
        """Where a foot is on the ground (a swinging foot: its lift-off footstep)."""
        return self._feet[side]

    def committed_foot(self, side: Side) -> Footstep:
        """Where a foot is or will land: the swing target for the swinging foot."""
        if self.state == WalkingState.SINGLE_SUPPORT and side == self.swing_side:
            return self._swing_target
        return self._feet[side]

    def support(self) -> dict[Side, Footstep]:
        """The feet on the ground now, by side."""
        if self.state == WalkingState.SINGLE_SUPPORT:
            return {self._stance: self._feet[self._stance]}
        return dict(self._feet)

    def swing_sample(self, t: float) -> tuple[Side, SwingFootSample] | None:
        """(side, reference) of the swinging foot at time t, or None in double support."""
        if self.state != WalkingState.SINGLE_SUPPORT:
            return None
        return self.swing_side, self._swing.sample(t)

    def expected_end(self, t: float) -> float:
        """When the current phase is expected to end, seen at time t [s].

        The planned end, or later while waiting: a late touch-down is expected by the end of the
        allowed delay, a lift-off waiting for load one control period from now.
        """
        s = self.settings
        if self.state == WalkingState.SINGLE_SUPPORT and t >= self.phase_end:
            latest = self.phase_end + s.max_touchdown_delay
            return latest if t < latest - s.time_step else t + s.time_step
        if self.state == WalkingState.DOUBLE_SUPPORT and t >= self.phase_end:
            return t + s.time_step
        return self.phase_end

    def schedule(self, t: float) -> ContactSchedule:
        """The current and coming support phases, for the pattern generator."""
        end = self.expected_end(t)
        key = (self._version, end)
        if self._schedule_cache is not None and self._schedule_cache[0] == key:
            return self._schedule_cache[1]
        common = {
            "start": self.phase_start,
            "end": end,
            "left": self._feet["left"],
            "right": self._feet["right"],
        }
        if self.state == WalkingState.STANDING:
            schedule = build_schedule(
                self.settings, self.feet, kind="standing", steps=(), **common
            )
        elif self.state == WalkingState.SINGLE_SUPPORT:
            schedule = build_schedule(
                self.settings,
                self.feet,
                kind="single_support",
                steps=self._queue,
                stance=self._feet[self._stance],
                swing=self._swing_target,
                **common,
            )
        else:
            steps = self._queue if self.state == WalkingState.DOUBLE_SUPPORT else ()
            schedule = build_schedule(
                self.settings,
                self.feet,
                kind="double_support",
                steps=steps,
                zmp_from=self._zmp_from,
                **common,
            )
        self._schedule_cache = (key, schedule)
        return schedule

    # ------------------------------------------------------------------ commands

    def set_footsteps(self, steps: Sequence[Footstep], t: float) -> None:
        """Replace the footsteps after the current swing (the swing itself is committed).

        From standing (or stopping) a non-empty list starts walking with a double support that
        shifts the CoM over the first stance foot; an empty list in double support stops.

        Args:
            steps: Alternating footsteps (checked by the planner; only the first foot is
                checked here).
            t: Current time [s].

        Raises:
            FootstepPlanRejected: The first step is not on the foot that must step next.
        """
        steps = list(steps)
        expected = self.next_swing_side
        if steps and expected is not None and steps[0].side != expected:
            raise FootstepPlanRejected(0, f"first step on the wrong foot: expected {expected}")
        self._queue = steps
        self._version += 1
        if self.state in (WalkingState.STANDING, WalkingState.STOPPING) and steps:
            self._zmp_from = (
                self._middle()
                if self.state == WalkingState.STANDING
                else (self.schedule(t).phase_at(t).zmp_reference(t))
            )
            self._enter(
                WalkingState.DOUBLE_SUPPORT, t, self.settings.initial_double_support_duration
            )
            self._next_side = steps[0].side
        elif self.state == WalkingState.DOUBLE_SUPPORT and not steps:
            self._zmp_from = self.schedule(t).phase_at(t).zmp_reference(t)
            self._enter(WalkingState.STOPPING, t, self.settings.final_double_support_duration)

    # ------------------------------------------------------------------ update

    def update(self, t: float, contact: ContactState | None = None) -> list[ContactCommand]:
        """Advance to time t; return the contact commands of the switches that happened.

        Args:
            t: Current time [s] (non-decreasing between calls).
            contact: The feet's measured contacts, or None to follow the clock.
        """
        contact = ContactState() if contact is None else contact
        commands: list[ContactCommand] = []
        for _ in range(4):  # a few switches may happen in one (long) update
            command = self._step(t, contact)
            if command is None:
                break
            if isinstance(command, ContactCommand):
                commands.append(command)
        return commands

    def _step(self, t: float, contact: ContactState) -> ContactCommand | bool | None:
        """One possible switch; the command it emits, True for a silent switch, or None."""
        s = self.settings
        if self.state == WalkingState.STOPPING and t >= self.phase_end:
            self._enter(WalkingState.STANDING, self.phase_end, math.inf)
            return True
        if self.state == WalkingState.DOUBLE_SUPPORT and t >= self.phase_end:
            if not self._queue:
                self._enter(WalkingState.STOPPING, t, s.final_double_support_duration)
                return True
            step = self._queue[0]
            stance = other_side(step.side)
            if contact.reading(stance).above(s.support_force) is False:
                return None  # the stance foot does not carry the robot yet: wait
            self._queue.pop(0)
            start = self._switch_time(t)
            self._stance = stance
            self._swing_target = step
            self._swing = SwingFootTrajectory(
                start=self._feet[step.side].placement(),
                end=step.placement(),
                start_time=start,
                duration=s.single_support_duration,
                height=s.swing_height,
                late_depth=s.late_touchdown_depth,
                late_duration=s.max_touchdown_delay,
                horizontal_fraction=s.swing_horizontal_fraction,
            )
            self._enter(WalkingState.SINGLE_SUPPORT, start, s.single_support_duration)
            return ReleaseContact(self.feet.sole(step.side).name, step.side, start)
        if self.state == WalkingState.SINGLE_SUPPORT:
            return self._touchdown(t, contact)
        return None

    def _touchdown(self, t: float, contact: ContactState) -> ActivateContact | None:
        s = self.settings
        side = self.swing_side
        touched = contact.reading(side).above(s.touchdown_force)
        elapsed = t - self.phase_start
        duration = self.phase_end - self.phase_start  # planned, or re-timed
        if touched is True and elapsed >= s.min_touchdown_phase * duration:
            if t < self.phase_end:
                time, reason = t, "early_touchdown"
            else:
                time, reason = self._switch_time(t), "touchdown"
        elif touched is None and t >= self.phase_end:
            time, reason = self.phase_end, "clock"
        elif touched is False and t >= self.phase_end + s.max_touchdown_delay:
            time, reason = t, "timeout"
        else:
            return None
        placement = self._swing.sample(time).pose
        landed = Footstep.from_placement(side, placement)
        self._feet[side] = landed
        self.landed.append(landed)
        self._zmp_from = stance_zmp(self.settings, self.feet, self._feet[self._stance])
        self._next_side = other_side(side)
        if self._queue:
            self._enter(WalkingState.DOUBLE_SUPPORT, time, s.double_support_duration)
        else:
            self._enter(WalkingState.STOPPING, time, s.final_double_support_duration)
        self._swing, self._swing_target = None, None
        return ActivateContact(self.feet.sole(side).name, side, placement, time, reason)

    # ------------------------------------------------------------------ helpers

    def _enter(self, state: WalkingState, start: float, duration: float) -> None:
        self.state = state
        self.phase_start = start
        self.phase_end = start + duration
        self._version += 1

    def _switch_time(self, t: float) -> float:
        """The planned end if this is the first tick past it, else now (a delayed switch)."""
        return self.phase_end if t - self.phase_end <= self.settings.time_step + 1e-9 else t

    def _middle(self) -> np.ndarray:
        return 0.5 * (self.feet.center(self._feet["left"]) + self.feet.center(self._feet["right"]))
