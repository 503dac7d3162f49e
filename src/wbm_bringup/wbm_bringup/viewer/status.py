"""What the status panel shows: the controller's state from diagnostics, the real-time factor.

:func:`controller_status` reads the key/values the controller publishes on ``diagnostics``
(``wbm_control.ros.messages.diagnostics_message``: ``mode``, ``safe``, ``task_error/<task>``,
``com``, ``zmp_measured``, ...; the status message is the safe-hold reason when ``safe`` is
true) and :func:`controller_entry` picks the controller's entry among a DiagnosticArray's.
:class:`RealTimeFactor` estimates the real-time factor from the simulated clock against wall
time over a sliding window. :func:`status_text` and :func:`service_text` are the panel's lines.
No ROS here: the node passes plain values.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class ControllerStatusView:
    """The controller's state as the page shows it.

    Attributes:
        mode: Control mode ("torque", "ik", ...), "" when unknown.
        safe_hold: Whether the controller holds the robot safe.
        reason: Why it holds (the diagnostics message), or "".
        task_errors: Tracking error per task [m or rad, as the controller reports them].
        com: Centre of mass in the world [m], or None.
        zmp: Measured ZMP in the world [m], or None.
    """

    mode: str = ""
    safe_hold: bool = False
    reason: str = ""
    task_errors: dict[str, float] = field(default_factory=dict)
    com: np.ndarray | None = None
    zmp: np.ndarray | None = None


def _vector(text: str | None) -> np.ndarray | None:
    if not text:
        return None
    try:
        values = np.array([float(x) for x in text.split()])
    except ValueError:
        return None
    return values if np.all(np.isfinite(values)) else None


def controller_status(values: Mapping[str, str], message: str) -> ControllerStatusView:
    """The status of one diagnostics entry (its key/values and message); unknown keys ignored."""
    errors = {}
    for key, text in values.items():
        if key.startswith("task_error/"):
            try:
                value = float(text)
            except ValueError:
                continue
            if math.isfinite(value):
                errors[key.split("/", 1)[1]] = value
    safe = values.get("safe", "false").strip().lower() == "true"
    return ControllerStatusView(
        mode=values.get("mode", ""),
        safe_hold=safe,
        reason=message if safe else "",
        task_errors=errors,
        com=_vector(values.get("com")),
        zmp=_vector(values.get("zmp_measured")),
    )


def controller_entry(
    entries: Iterable[tuple[Mapping[str, str], str]],
) -> ControllerStatusView | None:
    """The controller's status among diagnostics entries, or None when none is the controller's.

    Args:
        entries: (key/values, message) of each status of a DiagnosticArray; the controller's is
            the first with a ``mode`` key.
    """
    for values, message in entries:
        if "mode" in values:
            return controller_status(values, message)
    return None


def status_text(
    status: ControllerStatusView | None,
    real_time_factor: float | None,
    sim_time: float | None,
    robot_state: str,
) -> str:
    """The status panel's markdown.

    Lines: the robot state, the controller mode, safe hold and its reason, the real-time factor
    and the simulated time [s].
    """
    lines = [f"robot state: {robot_state}"]
    if status is None:
        lines.append("controller: no `diagnostics` yet")
    else:
        lines.append(f"controller mode: **{status.mode or '?'}**")
        if status.safe_hold:
            lines.append(f"safe hold: **yes**, {status.reason}")
        else:
            lines.append("safe hold: no")
    rtf = "n/a" if real_time_factor is None else f"{real_time_factor:.2f}"
    lines.append(f"real-time factor: {rtf}")
    if sim_time is not None:
        lines.append(f"sim time: {sim_time:.2f} s")
    return "  \n".join(lines)


def service_text(name: str, success: bool | None, message: str) -> str:
    """The line shown after a service call.

    Args:
        name: The service ("reset", "pause", "resume").
        success: The response's success flag; None when the call did not get a response.
        message: The response's message, or why there was none.
    """
    if success is None:
        return f"`{name}`: {message}"
    return f"`{name}` {'done' if success else 'refused'}: {message}"


class RealTimeFactor:
    """Simulated time over wall time, over the last ``window`` seconds of wall time.

    Args:
        window: Wall-time span of the estimate [s].
    """

    def __init__(self, window: float = 2.0):
        self.window = float(window)
        self._samples: collections.deque[tuple[float, float]] = collections.deque()

    def add(self, sim_time: float, wall_time: float) -> None:
        """Record a clock sample: simulated time [s] received at wall time [s]."""
        if self._samples and sim_time < self._samples[-1][0]:
            self._samples.clear()  # the simulation was reset: start over
        self._samples.append((sim_time, wall_time))
        while len(self._samples) > 2 and wall_time - self._samples[1][1] >= self.window:
            self._samples.popleft()

    def value(self, wall_time: float | None = None) -> float | None:
        """The estimate, or None with fewer than two samples or no wall time elapsed.

        Args:
            wall_time: Now [s]; when the clock stopped longer than the window ago (paused),
                the factor is 0.
        """
        if len(self._samples) < 2:
            return None
        (s0, w0), (s1, w1) = self._samples[0], self._samples[-1]
        if wall_time is not None and wall_time - w1 > self.window:
            return 0.0
        if w1 - w0 <= 0.0:
            return None
        return (s1 - s0) / (w1 - w0)
