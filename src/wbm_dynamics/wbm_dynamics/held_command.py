"""The joint command the robot holds, merged from commands for any subset of its joints.

``joint_commands`` messages name some joints (by name, converted to model indices at the ROS
edge) and give any of position, velocity and effort for them. :class:`HeldCommand` merges each
update into one command for every joint: the joints an update names take its values, a field the
update leaves out (None: the message's array was empty) becomes "not commanded" (NaN) for those
joints, and the joints it does not name keep what they had.

Servo law and effort limits: each joint's torque is ``tau = effort + kp (position - q) +
kd (velocity - dq)`` (each term where commanded), clipped to the joint's torque limit. A
feed-forward ``effort`` beyond the torque limit is not a command a controller means (a
controller keeps its torques within the limits): :func:`check_effort_limits` refuses the whole
update, naming the joint, so the robot keeps the last valid command instead of spending a
control period at full torque.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from wbm_description.exceptions import InputError
from wbm_description.robot_io import JointCommand

EFFORT_LIMIT_TOLERANCE = 1e-6
"""Relative slack on the torque limits (a controller clipping to them in float64) [-]."""


@dataclass(frozen=True)
class CommandUpdate:
    """A command for some joints (already checked: finite values, one per named joint).

    Attributes:
        indices: Model indices of the joints it names, (n,).
        position: Position references [rad], (n,), or None: not commanded.
        velocity: Velocity references [rad/s], (n,), or None.
        effort: Feed-forward torques [N m], (n,), or None.
    """

    indices: np.ndarray
    position: np.ndarray | None = None
    velocity: np.ndarray | None = None
    effort: np.ndarray | None = None


class HeldCommand:
    """The command for every joint, merged from updates (see the module docstring).

    Args:
        ndof: Number of joints.
    """

    def __init__(self, ndof: int):
        self.ndof = ndof
        self.clear()

    def clear(self) -> None:
        """No joint commanded."""
        self.position = np.full(self.ndof, np.nan)
        self.velocity = np.full(self.ndof, np.nan)
        self.effort = np.full(self.ndof, np.nan)

    def merge(self, update: CommandUpdate) -> JointCommand:
        """Merge an update; returns the resulting held command."""
        for field in ("position", "velocity", "effort"):
            values = getattr(update, field)
            getattr(self, field)[update.indices] = np.nan if values is None else values
        return self.command()

    def command(self) -> JointCommand:
        """The held command (NaN: not commanded), as copies."""
        return JointCommand(self.position.copy(), self.velocity.copy(), self.effort.copy())


def check_effort_limits(
    update: CommandUpdate, torque_limits: np.ndarray, joint_names: tuple[str, ...] | list[str]
) -> None:
    """Refuse an update whose feed-forward effort exceeds a joint's torque limit.

    Args:
        update: The update (model indices).
        torque_limits: Torque limit per joint [N m], (ndof,), model order; a limit that is not
            finite and positive means unlimited.
        joint_names: Joint names in model order (for the message).

    Raises:
        InputError: The first joint whose |effort| exceeds its limit (by more than
            :data:`EFFORT_LIMIT_TOLERANCE`), with the value and the limit.
    """
    if update.effort is None:
        return
    limits = np.asarray(torque_limits, dtype=float)[update.indices]
    limited = np.isfinite(limits) & (limits > 0.0)
    over = limited & (np.abs(update.effort) > limits * (1.0 + EFFORT_LIMIT_TOLERANCE))
    if not over.any():
        return
    k = int(np.flatnonzero(over)[0])
    joint = joint_names[int(update.indices[k])]
    raise InputError(
        f"effort[{joint}]",
        f"|effort| <= the torque limit {limits[k]:g} N m "
        f"({int(over.sum())} joint(s) over their limits)",
        f"{update.effort[k]:g}",
    )


__all__ = ["EFFORT_LIMIT_TOLERANCE", "CommandUpdate", "HeldCommand", "check_effort_limits"]
