"""What the robot measures about its feet' contacts: F/T normal forces or an estimator's flags.

The walking state machine detects touch-down and checks that a stance foot carries load from this,
not only from the clock. A foot's reading may hold a normal force (from its F/T sensor, the
ground's push on the sole along the world vertical), a contact flag (from an estimator), both, or
nothing; with nothing the state machine follows the clock for that foot.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from wbm_control.walking.footsteps import Side
from wbm_description.exceptions import InputError


@dataclass(frozen=True)
class FootContactReading:
    """One foot's contact measurement.

    Attributes:
        normal_force: Ground reaction force along the world vertical [N], or None if unknown.
        in_contact: An estimator's contact flag, or None if unknown; it wins over the force.
    """

    normal_force: float | None = None
    in_contact: bool | None = None

    def __post_init__(self) -> None:
        if self.normal_force is not None and not math.isfinite(self.normal_force):
            raise InputError("normal_force", "a finite force [N] or None", self.normal_force)

    def above(self, threshold: float) -> bool | None:
        """Whether the foot is in contact with at least ``threshold`` [N] (None: unknown)."""
        if self.in_contact is not None:
            return bool(self.in_contact)
        if self.normal_force is not None:
            return bool(self.normal_force >= threshold)
        return None


@dataclass(frozen=True)
class ContactState:
    """Both feet's contact measurements.

    Attributes:
        left: The left foot's reading.
        right: The right foot's reading.
    """

    left: FootContactReading = field(default_factory=FootContactReading)
    right: FootContactReading = field(default_factory=FootContactReading)

    @classmethod
    def from_forces(cls, left: float, right: float) -> ContactState:
        """From the two feet's vertical ground reaction forces [N]."""
        return cls(FootContactReading(normal_force=left), FootContactReading(normal_force=right))

    @classmethod
    def from_flags(cls, left: bool, right: bool) -> ContactState:
        """From an estimator's contact flags."""
        return cls(FootContactReading(in_contact=left), FootContactReading(in_contact=right))

    def reading(self, side: Side) -> FootContactReading:
        """The reading of a side."""
        return self.left if side == "left" else self.right
