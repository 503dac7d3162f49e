"""Active contacts: which soles hold the robot, where, and their wrench cones.

Contacts are activated and released through :class:`ContactSet` (walking builds on this).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from wbm_control.contact_wrench_cone import contact_wrench_cone_world
from wbm_control.exceptions import InputError
from wbm_description.exceptions import NameNotFound
from wbm_description.robot_config import SoleContact
from wbm_description.support_geometry import convex_hull_2d


@dataclass(frozen=True)
class ActiveContact:
    """A sole in contact, at a fixed placement in the world.

    Attributes:
        sole: The sole's geometry (robot config).
        placement: Where the sole frame is held, in the world (its anchor); not to be changed
            in place (what follows from it is computed once: activate the sole again instead).
    """

    sole: SoleContact

    placement: pin.SE3

    _cones: dict[tuple[float, float], np.ndarray] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def cone(self, mu: float, *, cop_margin: float = 0.0) -> np.ndarray:
        """Face matrix (16 x 6) of the contact wrench cone at the sole origin, world axes.

        Args:
            mu: Friction coefficient [-].
            cop_margin: The CoP is kept this far inside the sole's edges [m] (the rectangle is
                shrunk by it on every side).

        Returns:
            A read-only array, computed once per (mu, cop_margin) while the sole is held.
        """
        key = (float(mu), float(cop_margin))
        cone = self._cones.get(key)
        if cone is None:
            cone = self._compute_cone(mu, cop_margin)
            cone.flags.writeable = False
            self._cones[key] = cone
        return cone

    def _compute_cone(self, mu: float, cop_margin: float) -> np.ndarray:
        if not 0.0 <= cop_margin < 0.5 * min(self.sole.length, self.sole.width):
            raise InputError("cop_margin", "a margin in [0, half the sole width) [m]", cop_margin)
        return contact_wrench_cone_world(
            self.placement.rotation,
            length=self.sole.length - 2.0 * cop_margin,
            width=self.sole.width - 2.0 * cop_margin,
            center=self.sole.center,
            mu=mu,
        )

    def center_in_world(self) -> np.ndarray:
        """The rectangle centre in the world [m]."""
        return self.placement.act(np.array([self.sole.center[0], self.sole.center[1], 0.0]))

    def corners_in_world(self) -> np.ndarray:
        """(4, 3) corners of the sole rectangle in the world [m]."""
        return np.array([self.placement.act(corner) for corner in self.sole.corners()])


class ContactSet:
    """The soles currently in contact, by sole name (the robot config's ``soles`` keys).

    Args:
        soles: Every sole the robot has.
    """

    def __init__(self, soles: Iterable[SoleContact]):
        self._soles = {sole.name: sole for sole in soles}
        self._active: dict[str, ActiveContact] = {}
        self._polygon: np.ndarray | None = None  # support polygon while the set is unchanged
        self._ground_height: float | None = None

    @property
    def sole_names(self) -> list[str]:
        """Every sole the robot has."""
        return list(self._soles)

    def sole(self, name: str) -> SoleContact:
        """The geometry of a sole by name."""
        if name not in self._soles:
            raise NameNotFound("sole", name, self._soles, where="contacts")
        return self._soles[name]

    def activate(self, name: str, placement: pin.SE3) -> None:
        """Put a sole in contact at a placement in the world (replaces an existing one)."""
        if not np.all(np.isfinite(placement.homogeneous)):
            raise InputError("placement", "a finite placement", placement)
        self._active[name] = ActiveContact(self.sole(name), placement.copy())
        self._changed()

    def release(self, name: str) -> None:
        """Take a sole out of contact (no-op if it was not in contact)."""
        self.sole(name)
        if self._active.pop(name, None) is not None:
            self._changed()

    def _changed(self) -> None:
        """Forget what was computed from the held soles (polygon, ground height)."""
        self._polygon = None
        self._ground_height = None

    def active(self) -> list[ActiveContact]:
        """The contacts in activation order."""
        return list(self._active.values())

    def active_names(self) -> list[str]:
        """Names of the soles in contact."""
        return list(self._active)

    def is_active(self, name: str) -> bool:
        """Whether a sole is in contact."""
        return name in self._active

    def ground_height(self) -> float:
        """Mean height of the held soles in the world [m] (0 when none is held)."""
        if self._ground_height is None:
            self._ground_height = (
                float(np.mean([c.placement.translation[2] for c in self._active.values()]))
                if self._active
                else 0.0
            )
        return self._ground_height

    def support_polygon(self) -> np.ndarray:
        """(m, 2) convex hull of the active soles' corners, counter-clockwise (empty if none).

        Computed once while the held soles do not change (a read-only array).
        """
        if self._polygon is None:
            corners = [c for contact in self._active.values() for c in contact.corners_in_world()]
            polygon = convex_hull_2d(corners) if corners else np.zeros((0, 2))
            polygon.flags.writeable = False
            self._polygon = polygon
        return self._polygon
