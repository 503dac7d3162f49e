"""Exceptions of wbm_control, part of wbm's tree (:mod:`wbm_description.exceptions`)."""

from __future__ import annotations

from wbm_description.exceptions import InputError, WbmError

__all__ = ["ControlError", "InputError", "NoSolutionFound", "TargetRejected"]


class ControlError(WbmError):
    """Base class of the controller's errors."""


class NoSolutionFound(ControlError, ArithmeticError):
    """A QP of the controller (IK or whole-body) has no solution or its solver failed.

    Attributes:
        problem: Name of the problem (``"ik"``, ``"whole_body_qp"``, ``"wrench_distribution"``).
        status: The solver's status, as text.
    """

    def __init__(self, problem: str, status: str):
        self.problem = problem
        self.status = status
        super().__init__(f"{problem}: no solution found (solver status: {status})")


class TargetRejected(ControlError, ValueError):
    """A task target that cannot be accepted (NaN, unknown frame or task, out of reach).

    Attributes:
        task: The task the target was for.
        reason: Why it was rejected.
    """

    def __init__(self, task: str, reason: str):
        self.task = task
        self.reason = reason
        super().__init__(f"target for task '{task}' rejected: {reason}")
