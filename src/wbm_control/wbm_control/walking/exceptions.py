"""Errors of the walking cores, part of wbm's tree (:mod:`wbm_control.exceptions`).

Bad walking input (a footstep plan, a goal) is rejected whole with a typed error that says which
step or value was wrong and why; the walking state is left unchanged.
"""

from __future__ import annotations

from wbm_control.exceptions import ControlError

__all__ = ["FootstepPlanRejected", "GoalRejected", "WalkingError"]


class WalkingError(ControlError):
    """Base class of the walking cores' errors."""


class FootstepPlanRejected(WalkingError, ValueError):
    """A footstep plan that cannot be walked.

    Attributes:
        index: Index of the first offending step in the plan (0 = first step).
        reason: Why it was rejected (wrong foot, out of reach, crossing feet, not finite...).
    """

    def __init__(self, index: int, reason: str):
        self.index = index
        self.reason = reason
        super().__init__(f"footstep plan rejected at step {index}: {reason}")


class GoalRejected(WalkingError, ValueError):
    """A walking goal that cannot be planned to.

    Attributes:
        goal: The goal (x [m], y [m], yaw [rad]) in the world.
        reason: Why it was rejected.
    """

    def __init__(self, goal: tuple[float, float, float], reason: str):
        self.goal = goal
        self.reason = reason
        super().__init__(f"goal {goal} rejected: {reason}")
