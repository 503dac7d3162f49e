"""The soak run's bookkeeping, without ROS: memory samples, the schedule, and the verdict.

``wbm_benchmark_soak`` (:mod:`wbm_bringup.ros.benchmark_soak`) runs the realtime simulation
bringup for ``--minutes`` with a hand target moving on a circle and a push every ``--push-every``
seconds of simulated time, and samples every minute (wall time) the resident memory of each node
and how many cycles were answered. This module holds what does not need ROS:

- :func:`resident_memory`: a process's resident set size, from ``/proc/<pid>/status``;
- :class:`LaunchLog`: the launch's output to a file, its last lines and the divergences seen;
- :class:`SoakSchedule`: the hand target at a simulated time (a circle around the hand's
  initial position) and the pushes (time, force), alternating front, left, back, right;
- :class:`SoakMinute` and :func:`summarize`: one row per minute and the verdict (memory flat
  within ``memory_tolerance``, no fall, no safe hold outside the windows after pushes).
"""

from __future__ import annotations

import math
import re
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

PUSH_DIRECTIONS = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (-1.0, 0.0, 0.0), (0.0, -1.0, 0.0))
"""Push directions in turn (world axes): front, left, back, right."""


class LaunchLog:
    """Where the launch's output goes: a file, the last lines, and the divergences seen.

    Args:
        path: The log file (written line by line); None: kept in memory only.
        keep: How many of the last lines to keep.

    Attributes:
        divergences: Lines saying the simulation stopped until a reset (the robot interface's
            "call the reset service").
    """

    DIVERGED = "call the reset service"

    def __init__(self, path: Path | None = None, keep: int = 200):
        self._file = open(path, "w") if path is not None else None  # noqa: SIM115
        self.lines: deque[str] = deque(maxlen=keep)
        self.divergences = 0
        self._partial = ""

    def write(self, text: str) -> int:
        """Take output (a stream's ``write``)."""
        if self._file is not None:
            self._file.write(text)
        self._partial += text
        *complete, self._partial = self._partial.split("\n")
        for line in complete:
            self.lines.append(line)
            if self.DIVERGED in line:
                self.divergences += 1
        return len(text)

    def flush(self) -> None:
        """Flush the file."""
        if self._file is not None:
            self._file.flush()

    def tail(self, count: int = 40) -> str:
        """The last ``count`` lines."""
        return "\n".join(list(self.lines)[-count:])

    def close(self) -> None:
        """Close the file."""
        if self._file is not None:
            self._file.close()


def resident_memory(pid: int) -> int | None:
    """Resident set size of a process [bytes] (``VmRSS``), None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    for line in text.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024  # reported in kB
    return None


_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


class ReasonCounts:
    """Non-OK diagnostics counted by reason.

    Safe holds apart from the rest, outside and inside the windows after pushes. Numbers in a
    message (a duration, an age) are replaced by ``#`` so that one reason is one row.
    """

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, bool, bool]] = Counter()

    @staticmethod
    def kind(message: str) -> str:
        """The message with its numbers replaced by ``#``."""
        return _NUMBER.sub("#", message)

    def add(self, message: str, *, safe: bool, outside: bool) -> None:
        """Count one diagnostic (``safe``: a safe hold; ``outside``: outside push windows)."""
        self.counts[(self.kind(message), safe, outside)] += 1

    def lines(self) -> list[str]:
        """One line per reason, most frequent first: counts outside / inside, what, reason."""
        totals: dict[tuple[str, bool], list[int]] = {}
        for (kind, safe, outside), count in self.counts.items():
            totals.setdefault((kind, safe), [0, 0])[0 if outside else 1] += count
        rows = sorted(totals.items(), key=lambda item: -sum(item[1]))
        return [
            f"{out:>7} / {inside:<7} {'safe hold' if safe else 'other':<9} {kind}"
            for (kind, safe), (out, inside) in rows
        ]


@dataclass(frozen=True)
class SoakSchedule:
    """What the soak run sends, as functions of simulated time.

    Attributes:
        hand_center: The hand's initial position [m] (world); the target circles around it.
        hand_radius: Radius of the circle [m] (in the world's y-z plane).
        hand_period: One turn of the circle [s of simulated time].
        push_every: Time between pushes [s of simulated time]; the first comes after one period.
        push_force: Magnitude of each push [N] (acting for the robot interface's push_duration).
        settle: Time after a push during which a safe hold is allowed [s of simulated time].
    """

    hand_center: np.ndarray
    hand_radius: float = 0.05
    hand_period: float = 8.0
    push_every: float = 10.0
    push_force: float = 30.0
    settle: float = 2.0

    def hand_target(self, t: float) -> np.ndarray:
        """The hand target at simulated time ``t`` [s]: a point of the circle [m]."""
        phase = 2.0 * math.pi * t / self.hand_period
        offset = self.hand_radius * np.array([0.0, math.sin(phase), 1.0 - math.cos(phase)])
        return np.asarray(self.hand_center, dtype=float) + offset

    def push_due(self, t: float, last_push: float | None) -> bool:
        """Whether a push is due at simulated time ``t`` [s].

        Args:
            t: Simulated time [s].
            last_push: Time of the last push since robot time last (re)started [s]; None: none
                yet (the first push comes one period after time 0).
        """
        return t - (0.0 if last_push is None else last_push) >= self.push_every

    def push(self, index: int) -> np.ndarray:
        """The force of push ``index`` [N] (world axes, directions in turn)."""
        return self.push_force * np.array(PUSH_DIRECTIONS[index % len(PUSH_DIRECTIONS)])

    def after_push(self, t: float, push_times: Sequence[float]) -> bool:
        """Whether ``t`` lies within ``settle`` after one of the pushes (simulated times)."""
        return any(0.0 <= t - p <= self.settle for p in push_times)


@dataclass
class SoakMinute:
    """One sample of the soak run (every minute of wall time).

    Attributes:
        minute: Wall minutes since the measurement started.
        sim_time: Simulated time at the sample [s].
        memory: Node label to its resident memory [bytes] (None: the process is gone).
        states: joint_states received in the minute.
        commands: joint_commands received in the minute (cycles answered).
        lowest_base: Lowest true base height in the minute [m].
        safe_hold_outside_pushes: Safe-hold diagnostics seen outside the windows after pushes.
        pushes: Pushes sent in the minute.
        falls: Falls in the minute (each followed by the simulator's ``reset``).
        fallback_outside_pushes: Other non-OK diagnostics (the QP fallback controlling) outside
            the windows after pushes.
    """

    minute: int
    sim_time: float
    memory: dict[str, int | None]
    states: int
    commands: int
    lowest_base: float
    safe_hold_outside_pushes: int
    pushes: int
    falls: int = 0
    fallback_outside_pushes: int = 0


@dataclass
class SoakVerdict:
    """The soak run's verdict.

    Attributes:
        memory_change: Node label to the relative change of its resident memory from the first
            sample to the last, and its largest excursion from the first (both fractions).
        fell: Whether the robot fell (a fall counted by the run, or the base more than
            ``fall_drop`` below its initial height).
        falls: Falls counted by the run (each followed by a reset).
        lowest_base: Lowest base height over the run [m].
        safe_holds_outside_pushes: Safe-hold diagnostics outside the windows after pushes.
        answered: Commands per joint_states over the run (cycles answered).
        passed: Memory flat within the tolerance, no fall, no safe hold outside pushes.
        problems: What failed, in words.
    """

    memory_change: dict[str, tuple[float, float]]
    fell: bool
    falls: int
    lowest_base: float
    safe_holds_outside_pushes: int
    answered: float
    passed: bool
    problems: list[str] = field(default_factory=list)


def summarize(
    minutes: Sequence[SoakMinute],
    *,
    initial_height: float,
    memory_tolerance: float = 0.05,
    fall_drop: float = 0.1,
) -> SoakVerdict:
    """The verdict of a soak run from its samples.

    Memory is compared with the first sample (taken one minute in, after the start-up
    allocations); "flat" means no sample more than ``memory_tolerance`` above or below it.

    Args:
        minutes: The samples, in order (at least one).
        initial_height: The base height at the start of the measurement [m].
        memory_tolerance: Largest accepted relative memory excursion [-].
        fall_drop: A base this far below ``initial_height`` has fallen [m].
    """
    if not minutes:
        raise ValueError("no soak samples")
    problems: list[str] = []
    change: dict[str, tuple[float, float]] = {}
    for label in minutes[0].memory:
        values = [m.memory.get(label) for m in minutes]
        if any(v is None for v in values):
            problems.append(f"{label} exited during the run")
            continue
        first = float(values[0])
        relative = [v / first - 1.0 for v in values]
        excursion = max(relative, key=abs)
        change[label] = (relative[-1], excursion)
        if abs(excursion) > memory_tolerance:
            problems.append(
                f"{label}: resident memory moved {100 * excursion:+.1f} % "
                f"(tolerance {100 * memory_tolerance:g} %)"
            )
    lowest = min(m.lowest_base for m in minutes)
    falls = sum(m.falls for m in minutes)
    fell = falls > 0 or lowest < initial_height - fall_drop
    if fell:
        problems.append(
            f"fell {falls} time(s): base down to {lowest:.3f} m from {initial_height:.3f} m"
        )
    holds = sum(m.safe_hold_outside_pushes for m in minutes)
    if holds:
        problems.append(f"{holds} safe-hold diagnostics outside the windows after pushes")
    states = sum(m.states for m in minutes)
    answered = sum(m.commands for m in minutes) / states if states else 0.0
    return SoakVerdict(change, fell, falls, lowest, holds, answered, not problems, problems)


__all__ = [
    "PUSH_DIRECTIONS",
    "LaunchLog",
    "ReasonCounts",
    "SoakMinute",
    "SoakSchedule",
    "SoakVerdict",
    "resident_memory",
    "summarize",
]
