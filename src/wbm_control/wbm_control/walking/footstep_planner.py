"""Footstep planning: from a velocity command, to a goal pose, and checking explicit plans.

Steps are placed around a *walking frame* W on the ground, half-way between the feet when they
stand side by side: a foot of side s stands at W (+) (0, s d / 2, 0), with d the nominal foot
spacing and s = +1 (left) or -1 (right). Seen from a stance foot, W = stance (+) (0, -s d / 2, 0).
Each step moves W by a planar displacement and puts the swing foot beside the moved frame; the
step is then clamped to the reach of the stance foot (:class:`StepLimits`), so every planned step
obeys the limits by construction.

- Velocity command (vx, vy, wz) in the walking frame: a step of duration T (single plus double
  support) moves W along the arc of the twist (vx, vy', wz) for T, where the lateral velocity is
  carried only by the steps of the foot on the side of the motion (vy' = 2 vy for them, 0 for the
  other foot's closing steps), so the feet never need to come closer than nominal. Forward and
  yaw motion advance on every step (the feet alternate toe-out and toe-in when turning).
- Zero command: closing steps bring the feet side by side (usually one).
- Goal pose: far from the goal (more than ``omnidirectional_distance``) the frame turns towards
  the goal and walks to it, turning and walking in the same steps once it faces the goal within
  a step's yaw; near the goal it steps in every direction and turns to the final yaw; the plan
  ends with the feet side by side at the goal.
- An explicit plan is checked step by step: finite values, alternating feet starting with the
  free foot, each step reachable from the previous one and not crossing it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from wbm_control.walking.exceptions import FootstepPlanRejected, GoalRejected
from wbm_control.walking.feet import Feet
from wbm_control.walking.footsteps import (
    Footstep,
    Side,
    integrate_twist,
    other_side,
    side_sign,
    wrap_angle,
)
from wbm_control.walking.settings import WalkingSettings
from wbm_control.walking.step_limits import StepLimits
from wbm_description.exceptions import InputError

_ZERO = 1e-9
"""Commands below this are zero [m/s, rad/s]."""

_NOT_WORTH_A_STEP = (1e-4, 1e-3)
"""A foot this close to its target (position [m], yaw [rad]) does not step there."""


def _already_there(
    step: Footstep, foot: Footstep, tolerance: tuple[float, float] = _NOT_WORTH_A_STEP
) -> bool:
    distance, angle = step.distance_to(foot)
    return distance <= tolerance[0] and angle <= tolerance[1]


def _clip(value: float, low: float, high: float) -> float:
    return min(max(value, low), high)


class FootstepPlanner:
    """Plans footsteps that obey the step limits.

    Args:
        settings: Walking settings with the nominal foot spacing filled in.
        feet: Sole geometry (for the crossing test).
    """

    def __init__(self, settings: WalkingSettings, feet: Feet):
        self.settings = settings
        self.feet = feet
        self.spacing = settings.require_foot_spacing()
        self.limits = StepLimits.from_settings(settings)

    # ------------------------------------------------------------------ walking frame

    def walking_frame(self, stance: Footstep) -> Footstep:
        """The walking frame seen from a stance foot (its side is the stance's)."""
        return stance.compose(0.0, -side_sign(stance.side) * 0.5 * self.spacing, 0.0)

    def foot_beside(self, frame: Footstep, side: Side) -> Footstep:
        """Where a foot stands in a walking frame, side by side."""
        return frame.compose(0.0, side_sign(side) * 0.5 * self.spacing, 0.0, side=side)

    def _step(self, stance: Footstep, dx: float, dy: float, dyaw: float) -> Footstep:
        """Move the walking frame of a stance foot, put the other foot beside it, clamp."""
        frame = self.walking_frame(stance).compose(dx, dy, dyaw)
        wanted = self.foot_beside(frame, other_side(stance.side))
        return self.limits.clamp(wanted, stance, self.feet)

    # ------------------------------------------------------------------ velocity

    def clamp_command(
        self, vx: float, vy: float, wz: float
    ) -> tuple[tuple[float, float, float], bool]:
        """A velocity command clamped to the configured limits.

        Args:
            vx: Forward velocity in the walking frame [m/s].
            vy: Leftward velocity [m/s].
            wz: Yaw rate [rad/s].

        Returns:
            ((vx, vy, wz) within the limits, whether anything was clamped).

        Raises:
            InputError: A value is NaN or infinite.
        """
        for name, value in (("vx", vx), ("vy", vy), ("wz", wz)):
            if isinstance(value, bool) or not math.isfinite(float(value)):
                raise InputError(name, "a finite velocity", value)
        s = self.settings
        clamped = (
            _clip(float(vx), -s.max_backward_velocity, s.max_forward_velocity),
            _clip(float(vy), -s.max_lateral_velocity, s.max_lateral_velocity),
            _clip(float(wz), -s.max_yaw_rate, s.max_yaw_rate),
        )
        return clamped, clamped != (float(vx), float(vy), float(wz))

    @staticmethod
    def lead_side(lateral: float, yaw: float) -> Side:
        """The foot to step with first: on the side of the lateral motion, else of the turn.

        Defaults to the left foot when neither matters.
        """
        if abs(lateral) > _ZERO:
            return "left" if lateral > 0.0 else "right"
        if abs(yaw) > _ZERO:
            return "left" if yaw > 0.0 else "right"
        return "left"

    def goal_lead_side(self, lateral: float, yaw: float) -> Side:
        """The foot to step with first towards a nearby goal: that of the larger motion.

        The lateral displacement and the turn are compared in steps (``max_step_width``,
        ``max_step_yaw``): a turn in place with the goal a few millimetres to one side (the
        estimate's drift, a goal pose clicked by hand) leads with the foot on the side of the
        turn (toe-out first), not with the one on the side of the millimetres.

        Args:
            lateral: Leftward displacement of the goal in the walking frame [m].
            yaw: Yaw of the goal relative to the walking frame [rad].
        """
        s = self.settings
        if abs(lateral) / s.max_step_width < abs(yaw) / s.max_step_yaw:
            return self.lead_side(0.0, yaw)
        return self.lead_side(lateral, yaw)

    def plan_from_velocity(
        self,
        command: Sequence[float],
        *,
        stance: Footstep,
        swing_foot: Footstep,
        n_steps: int | None = None,
    ) -> list[Footstep]:
        """The next steps for a velocity command (clamped to the limits first).

        Args:
            command: (vx [m/s], vy [m/s], wz [rad/s]) in the walking frame.
            stance: The foot on the ground during the first planned step.
            swing_foot: Where the first swing foot (the other side) is now.
            n_steps: How many steps (default: ``settings.preview_steps``).

        Returns:
            The steps, alternating feet, starting with the foot opposite ``stance``. A zero
            command gives the closing steps that bring the feet side by side (none if they are).
        """
        (vx, vy, wz), _ = self.clamp_command(*command)
        if max(abs(vx), abs(vy), abs(wz)) <= _ZERO:
            return self.closing_steps(stance=stance, swing_foot=swing_foot)
        count = self.settings.preview_steps if n_steps is None else n_steps
        duration = self.settings.step_duration
        steps: list[Footstep] = []
        current = stance
        for _ in range(count):
            swing = other_side(current.side)
            lateral = 2.0 * vy if vy * side_sign(swing) > 0.0 else 0.0
            step = self._step(current, *integrate_twist(vx, lateral, wz, duration))
            steps.append(step)
            current = step
        return steps

    def closing_steps(self, *, stance: Footstep, swing_foot: Footstep) -> list[Footstep]:
        """Steps that bring the feet side by side (usually one; none if they already are).

        Feet within ``side_by_side_tolerance`` and ``side_by_side_yaw_tolerance`` of side by
        side are: a foot that landed a few millimetres off its closing step (an early
        touch-down, the swing's tracking error) is not stepped again for it (each extra step
        is a single support more at the end of a walk, and lands no better).

        Args:
            stance: The foot that stays first.
            swing_foot: The other foot, where it is now.
        """
        steps: list[Footstep] = []
        current, other = stance, swing_foot
        tolerance = (
            max(self.settings.side_by_side_tolerance, _NOT_WORTH_A_STEP[0]),
            max(self.settings.side_by_side_yaw_tolerance, _NOT_WORTH_A_STEP[1]),
        )
        for _ in range(4):
            target = self._step(current, 0.0, 0.0, 0.0)
            if _already_there(target, other, tolerance):
                break
            steps.append(target)
            current, other = target, current
        return steps

    # ------------------------------------------------------------------ explicit plans

    def validate_plan(
        self,
        steps: Sequence[Footstep],
        *,
        left: Footstep,
        right: Footstep,
        next_swing_side: Side | None = None,
    ) -> None:
        """Check an explicit plan against the limits, from the current feet.

        Args:
            steps: The plan (may be empty: stop).
            left: Where the left foot is (or will land, if it is swinging).
            right: Where the right foot is (or will land).
            next_swing_side: The foot that must step first (the stance foot of a single
                support, the committed foot of a double support), or None when standing.

        Raises:
            FootstepPlanRejected: With the index of the first bad step and the reason.
        """
        previous: Footstep | None = None
        for index, step in enumerate(steps):
            if not isinstance(step, Footstep):
                raise FootstepPlanRejected(index, f"not a Footstep: {step!r}")
            if not step.is_finite():
                raise FootstepPlanRejected(index, f"not finite: {step}")
            if previous is None:
                if next_swing_side is not None and step.side != next_swing_side:
                    raise FootstepPlanRejected(
                        index, f"first step on the wrong foot: expected {next_swing_side}"
                    )
                stance = right if step.side == "left" else left
            else:
                stance = previous
                if step.side == previous.side:
                    raise FootstepPlanRejected(index, "two steps of the same foot in a row")
            reason = self.limits.violation(step, stance, self.feet)
            if reason is not None:
                raise FootstepPlanRejected(index, f"out of reach: {reason}")
            previous = step

    # ------------------------------------------------------------------ goal

    def plan_to_goal(
        self,
        goal: Sequence[float],
        *,
        left: Footstep,
        right: Footstep,
        next_swing_side: Side | None = None,
        omnidirectional_distance: float = 0.5,
        max_steps: int = 500,
    ) -> list[Footstep]:
        """Steps that end with the feet side by side at a goal pose of the walking frame.

        Args:
            goal: (x [m], y [m], yaw [rad]) of the walking frame in the world.
            left: Where the left foot is (or will land).
            right: Where the right foot is (or will land).
            next_swing_side: The foot that must step first, or None to choose it (towards the
                goal far from it; near it, the larger of the lateral motion and the turn,
                :meth:`goal_lead_side`).
            omnidirectional_distance: Closer than this to the goal [m], step in any direction
                instead of turning towards the goal first.
            max_steps: Give up after this many steps.

        Raises:
            GoalRejected: The goal is not finite, or not reached within ``max_steps``.
        """
        gx, gy, gyaw = (float(value) for value in goal)
        goal_tuple = (gx, gy, gyaw)
        if not all(math.isfinite(value) for value in goal_tuple):
            raise GoalRejected(goal_tuple, "not finite")
        target = Footstep("left", gx, gy, wrap_angle(gyaw))
        if next_swing_side is None:
            mid = Footstep(
                "left",
                0.5 * (left.x + right.x),
                0.5 * (left.y + right.y),
                left.yaw + 0.5 * wrap_angle(right.yaw - left.yaw),
            )
            rx, ry, ryaw = target.relative_to(mid)
            if math.hypot(rx, ry) > omnidirectional_distance:
                next_swing_side = self.lead_side(0.0, math.atan2(ry, rx))
            else:
                next_swing_side = self.goal_lead_side(ry, ryaw)
        current = right if next_swing_side == "left" else left
        other = left if next_swing_side == "left" else right
        steps: list[Footstep] = []
        for _ in range(max_steps):
            step = self._step(
                current,
                *self._goal_displacement(current, target, omni_at=omnidirectional_distance),
            )
            if _already_there(step, other):
                return steps
            steps.append(step)
            current, other = step, current
        raise GoalRejected(goal_tuple, f"not reached within {max_steps} steps")

    def _goal_displacement(
        self, stance: Footstep, goal: Footstep, *, omni_at: float
    ) -> tuple[float, float, float]:
        """Displacement of the walking frame for the next step towards the goal."""
        s = self.settings
        frame = self.walking_frame(stance)
        gx, gy, gyaw = goal.relative_to(frame)
        distance = math.hypot(gx, gy)
        swing = other_side(stance.side)
        if distance > omni_at:
            heading = math.atan2(gy, gx)
            dyaw = _clip(heading, -s.max_step_yaw, s.max_step_yaw)
            dx = (
                min(distance - 0.5 * omni_at, s.max_step_length)
                if abs(heading) <= s.max_step_yaw
                else 0.0
            )
            return dx, 0.0, dyaw
        dx = _clip(gx, -s.max_step_length_backward, s.max_step_length)
        dy = _clip(gy, -s.max_step_width, s.max_step_width) if gy * side_sign(swing) > 0.0 else 0.0
        dyaw = _clip(gyaw, -s.max_step_yaw, s.max_step_yaw)
        return dx, dy, dyaw
