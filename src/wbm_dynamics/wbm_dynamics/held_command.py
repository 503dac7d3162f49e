"""The joint command the robot holds, merged from commands for any subset of its joints.

``joint_commands`` messages name some joints (by name, converted to model indices at the ROS
edge) and give any of position, velocity and effort for them. :class:`HeldCommand` merges each
update into one command for every joint: the joints an update names take its values, a field the
update leaves out (None: the message's array was empty) becomes "not commanded" (NaN) for those
joints, and the joints it does not name keep what they had.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from wbm_description.robot_io import JointCommand


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


__all__ = ["CommandUpdate", "HeldCommand"]
