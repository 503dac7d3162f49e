"""Bookkeeping of the controller's safe hold: why it holds, and what to log (no rclpy).

The node holds the posture (the controller's hold command, with static torques) when its inputs
are stale, when the robot side went silent (wall-clock watchdog), or when a step fails; it
resumes by itself when a normal step succeeds. :class:`SafeHold` decides what the log says: one
error line the first time each reason (or kind of reason) appears in an episode of holding, and
one info line when normal control resumes. A reason that repeats or alternates with another
(stale inputs seen by the control timer and by the watchdog) is therefore logged once per
episode, not at every tick.
"""

from __future__ import annotations

from dataclasses import dataclass

ENTER = "safe mode (holding the posture with static torques): "
RESUME = "normal control resumed (was: {reason})"


@dataclass(frozen=True)
class LogLine:
    """A line for the node's log.

    Attributes:
        level: ``"error"`` (entering the safe hold) or ``"info"`` (resuming).
        text: The line.
    """

    level: str
    text: str


class SafeHold:
    """Whether and why the controller holds, and the log lines of its transitions.

    Attributes:
        reason: Why the controller holds ("" while it controls).
    """

    def __init__(self) -> None:
        self.reason = ""
        self._logged: set[str] = set()

    @property
    def active(self) -> bool:
        """Whether the controller holds."""
        return bool(self.reason)

    def enter(self, reason: str, *, kind: str | None = None) -> LogLine | None:
        """Hold (or keep holding) for ``reason``.

        Args:
            reason: Why, as shown in diagnostics and the log.
            kind: What identifies the reason for logging when its text changes at every tick
                (e.g. a duration in it); default: the reason itself.

        Returns:
            The error line to log if this kind of reason is new in this episode, else None.
        """
        kind = reason if kind is None else kind
        self.reason = reason
        if kind in self._logged:
            return None
        self._logged.add(kind)
        return LogLine("error", ENTER + reason)

    def leave(self) -> LogLine | None:
        """Normal control again; the info line to log if the controller was holding."""
        if not self.reason:
            return None
        line = LogLine("info", RESUME.format(reason=self.reason))
        self.reason = ""
        self._logged.clear()
        return line

    def after_step(self, safe: bool, reason: str) -> LogLine | None:
        """Follow a control step's outcome (the controller status' ``safe`` and ``reason``)."""
        return self.enter(reason) if safe else self.leave()
