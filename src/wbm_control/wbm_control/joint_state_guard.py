"""Screening of the controller's ``joint_states``: one publisher, time going on, no jumps.

The controller steps on the joint states it receives; a sample that does not come from the
robot must not reach it. :class:`JointStateGuard` screens each sample before the controller
inputs take it:

- **a second publisher**: the first publisher heard (its DDS publisher GID, from the message
  info) owns the topic; samples of any other publisher are rejected, unless the owner has been
  silent for ``handover_timeout`` of wall time (a robot side restarted): then the new one takes
  over, and the controller starts again from its state;
- **time going back**: a sample of the owner stamped before the previous one is rejected,
  unless its stamp is within ``restart_window`` of 0: the robot's time restarted (a simulator's
  ``reset``), and the controller must start again from the measured state
  (:attr:`Screening.restart`);
- **a jump**: a joint that moved farther than its speed limit allows in the time between the
  stamps (plus ``position_margin`` for noise) is rejected; the next samples are compared with
  the last accepted one, so a robot really that far away is accepted once the time elapsed makes
  the motion possible, and after ``max_rejected_jumps`` rejections in a row at the latest.

Stamps are integer nanoseconds; wall times are seconds of a monotonic clock.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from wbm_description.exceptions import InputError

RESTART_WINDOW = 0.5
"""A stamp going back to within this of 0 is a restart of the robot's time [s]."""

HANDOVER_TIMEOUT = 0.5
"""Wall-clock silence of the owner after which another publisher may take over [s]."""

POSITION_MARGIN = 0.05
"""Joint position change allowed beyond the speed limits (noise, stamp jitter) [rad]."""

DEFAULT_MAX_SPEED = 10.0
"""Joint speed limit where the model has none [rad/s]."""

MAX_REJECTED_JUMPS = 50
"""After this many jumps rejected in a row, the owner's sample is accepted again."""


@dataclass(frozen=True)
class Screening:
    """The verdict on one joint state sample.

    Attributes:
        accepted: Whether the controller may use the sample.
        restart: The robot's time restarted, or a new publisher took over: the controller
            starts again from this sample (only with ``accepted``).
        reason: Why it was rejected, or what happened (restart, handover); "" otherwise.
        kind: A short name of the reason for logs and counters: "second publisher",
            "time going back", "jump", "restart", "handover", or "".
    """

    accepted: bool
    restart: bool = False
    reason: str = ""
    kind: str = ""


ACCEPTED = Screening(True)


class JointStateGuard:
    """Screens joint state samples (see the module docstring).

    Args:
        max_speed: Joint speed limits [rad/s], (ndof,); a limit that is not finite and
            positive is replaced by :data:`DEFAULT_MAX_SPEED`.
        joint_names: Joint names in the same order (for the reasons).
        position_margin: Position change allowed beyond the speed limits [rad].
        restart_window: See :data:`RESTART_WINDOW` [s].
        handover_timeout: See :data:`HANDOVER_TIMEOUT` [s of wall time].

    Attributes:
        rejected: Number of rejected samples per kind since construction.
    """

    def __init__(
        self,
        max_speed: np.ndarray,
        joint_names: tuple[str, ...] | list[str],
        *,
        position_margin: float = POSITION_MARGIN,
        restart_window: float = RESTART_WINDOW,
        handover_timeout: float = HANDOVER_TIMEOUT,
    ):
        speed = np.asarray(max_speed, dtype=float)
        if speed.shape != (len(joint_names),):
            raise InputError("max_speed", f"({len(joint_names)},) joint speed limits", speed.shape)
        self.max_speed = np.where(np.isfinite(speed) & (speed > 0.0), speed, DEFAULT_MAX_SPEED)
        self.joint_names = tuple(joint_names)
        self.position_margin = float(position_margin)
        self.restart_window_ns = round(restart_window * 1e9)
        self.handover_timeout = float(handover_timeout)
        self.rejected: dict[str, int] = {}
        self.owner: bytes | None = None
        self._owner_wall: float | None = None
        self._stamp: int | None = None
        self._positions: np.ndarray | None = None
        self._jumps_in_a_row = 0
        self._allowed: tuple[float, np.ndarray] | None = None  # (elapsed, its allowed motion)

    def restart(self) -> None:
        """Forget the last sample (the owner stays): the next one is accepted as it is."""
        self._stamp = None
        self._positions = None
        self._jumps_in_a_row = 0

    def screen(
        self,
        positions: np.ndarray,
        *,
        stamp: int,
        wall_time: float,
        publisher: bytes | None = None,
    ) -> Screening:
        """The verdict on a sample; an accepted one becomes the reference of the next.

        Args:
            positions: Joint positions (ndof,) [rad].
            stamp: The message's stamp [ns].
            wall_time: Arrival time on a monotonic wall clock [s].
            publisher: The publisher's GID; None when unknown (no publisher check).
        """
        positions = np.asarray(positions, dtype=float)
        restart = False
        reason = kind = ""
        if publisher is not None and publisher != self.owner:
            silent = (
                self._owner_wall is None or wall_time - self._owner_wall >= self.handover_timeout
            )
            if self.owner is not None and not silent:
                return self._reject(
                    "second publisher",
                    f"joint_states from a second publisher ({_gid(publisher)}) while "
                    f"{_gid(self.owner)} publishes: ignored",
                )
            if self.owner is not None:
                restart, kind = True, "handover"
                reason = (
                    f"joint_states publisher changed to {_gid(publisher)} after "
                    f"{wall_time - self._owner_wall:.1f} s of silence: starting again"
                )
                self.restart()
            self.owner = publisher
        if self._stamp is not None and stamp < self._stamp:
            if stamp > self.restart_window_ns:
                return self._reject(
                    "time going back",
                    f"joint_states stamp {stamp * 1e-9:.3f} s before the previous "
                    f"{self._stamp * 1e-9:.3f} s: ignored",
                )
            restart, kind = True, "restart"
            reason = (
                f"robot time restarted ({self._stamp * 1e-9:.3f} s -> {stamp * 1e-9:.3f} s): "
                "controller reset, starting again from the measured state"
            )
            self.restart()
        if self._positions is not None and self._stamp is not None:
            elapsed = max(0.0, (stamp - self._stamp) * 1e-9)
            cached = self._allowed
            if cached is not None and cached[0] == elapsed:
                allowed = cached[1]  # the robot's period again: the same bounds
            else:
                allowed = self.max_speed * elapsed + self.position_margin
                self._allowed = (elapsed, allowed)
            moved = np.abs(positions - self._positions)
            over = moved > allowed
            if over.any() and self._jumps_in_a_row < MAX_REJECTED_JUMPS:
                self._jumps_in_a_row += 1
                j = int(np.argmax(moved - allowed))
                return self._reject(
                    "jump",
                    f"joint_states jump: {self.joint_names[j]} moved {moved[j]:.3f} rad in "
                    f"{elapsed * 1e3:.1f} ms (at most {allowed[j]:.3f} rad; "
                    f"{int(over.sum())} joint(s) too fast): ignored",
                )
        self._jumps_in_a_row = 0
        self._stamp = stamp
        self._positions = positions.copy()
        if publisher is not None:
            self._owner_wall = wall_time
        return Screening(True, restart, reason, kind) if restart else ACCEPTED

    def _reject(self, kind: str, reason: str) -> Screening:
        self.rejected[kind] = self.rejected.get(kind, 0) + 1
        return Screening(False, False, reason, kind)


def _gid(gid: bytes) -> str:
    """A short printable form of a publisher GID."""
    return bytes(gid).hex()[:16] or "?"


__all__ = [
    "ACCEPTED",
    "DEFAULT_MAX_SPEED",
    "HANDOVER_TIMEOUT",
    "MAX_REJECTED_JUMPS",
    "POSITION_MARGIN",
    "RESTART_WINDOW",
    "JointStateGuard",
    "Screening",
]
