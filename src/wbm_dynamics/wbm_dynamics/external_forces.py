"""Pinocchio's per-joint external forces, written in place (this runs at every step).

``pin.aba`` and ``pin.rnea`` take the external forces as a ``pin.StdVec_Force`` (one spatial force
per joint, in the joint frame). Building ``pin.Force`` objects and assigning them costs a few
microseconds each; :class:`ExternalForces` keeps one numpy view on each entry (the vector's
memory is never reallocated: it is allocated once, njoints long) and adds wrenches into the
views, tracking which joints are non-zero so that clearing touches only those.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin


class ExternalForces:
    """Per-joint external forces of one Pinocchio model, all zero at the start.

    Args:
        njoints: The model's number of joints (``model.njoints``, the universe included).

    Attributes:
        forces: The ``pin.StdVec_Force`` to hand to Pinocchio (joint frames).
    """

    def __init__(self, njoints: int):
        self.forces = pin.StdVec_Force()
        for _ in range(njoints):
            self.forces.append(pin.Force.Zero())
        # Views on the entries' memory (valid while ``forces`` lives and is not resized).
        self._views = [self.forces[joint].vector for joint in range(njoints)]
        self._dirty: set[int] = set()

    def clear(self) -> None:
        """Set every joint's force to zero."""
        views = self._views
        for joint in self._dirty:
            views[joint][:] = 0.0
        self._dirty.clear()

    def add(self, joint: int, wrench: np.ndarray) -> None:
        """Add a wrench (force [N], torque [N m]; joint frame, about its origin) on a joint."""
        if joint in self._dirty:
            self._views[joint] += wrench
        else:
            self._views[joint][:] = wrench
            self._dirty.add(joint)

    def wrench(self, joint: int) -> np.ndarray:
        """The total wrench on a joint (a copy), (6,)."""
        return self._views[joint].copy()
