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

    Clearing is lazy: the joints cleared are only marked stale, a stale joint given a new wrench
    is overwritten (no zeroing first), and the stale joints left are zeroed when ``forces`` is
    read (a step's contacts act on the same joints from one step to the next).

    Args:
        njoints: The model's number of joints (``model.njoints``, the universe included).
    """

    def __init__(self, njoints: int):
        self._forces = pin.StdVec_Force()
        for _ in range(njoints):
            self._forces.append(pin.Force.Zero())
        # Views on the entries' memory (valid while ``forces`` lives and is not resized).
        self._views = [self._forces[joint].vector for joint in range(njoints)]
        self._dirty: set[int] = set()  # joints holding a wrench of the current round
        self._stale: set[int] = set()  # joints holding a wrench of a cleared round

    @property
    def forces(self) -> pin.StdVec_Force:
        """The ``pin.StdVec_Force`` to hand to Pinocchio (joint frames)."""
        if self._stale:
            views = self._views
            for joint in self._stale:
                views[joint][:] = 0.0
            self._stale.clear()
        return self._forces

    def clear(self) -> None:
        """Set every joint's force to zero."""
        self._stale |= self._dirty
        self._dirty.clear()

    def add(self, joint: int, wrench: np.ndarray) -> None:
        """Add a wrench (force [N], torque [N m]; joint frame, about its origin) on a joint."""
        if joint in self._dirty:
            self._views[joint] += wrench
        else:
            self._views[joint][:] = wrench
            self._dirty.add(joint)
            self._stale.discard(joint)

    def wrench(self, joint: int) -> np.ndarray:
        """The total wrench on a joint (a copy), (6,)."""
        if joint in self._stale:
            return np.zeros(6)
        return self._views[joint].copy()
