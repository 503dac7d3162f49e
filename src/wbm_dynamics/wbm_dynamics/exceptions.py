"""Exceptions of wbm_dynamics, in wbm's exception tree."""

from __future__ import annotations

from wbm_description.exceptions import WbmError


class SimulationDiverged(WbmError, RuntimeError):
    """The simulated state became non-finite or exploded; the simulator stopped stepping.

    Attributes:
        time: Simulated time of the last good state [s].
        reason: What was detected.
    """

    def __init__(self, time: float, reason: str):
        self.time = time
        self.reason = reason
        super().__init__(
            f"simulation diverged after t = {time:.6f} s: {reason}; call reset() to continue"
        )


class BackendError(WbmError, RuntimeError):
    """A robot backend cannot do what was asked (e.g. reset a real robot)."""
