"""Run the controller in closed loop with an in-process robot backend (tests, benchmarks).

The backend is anything with the simulator's small interface (``readings()``,
``set_command(command)``, ``step(n)``, ``time``): wbm_control never imports a simulator, the
caller injects one. The controller only sees :class:`RobotReadings`, as over the robot topics.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from wbm_control.controller import WholeBodyController
from wbm_description.robot_io import JointCommand, RobotReadings


class RobotBackend(Protocol):
    """What the closed loop needs from a robot (the simulator core has it)."""

    @property
    def time(self) -> float:
        """Robot time [s]."""

    def readings(self) -> RobotReadings:
        """Current sensor readings."""

    def set_command(self, command: JointCommand) -> None:
        """Hold a joint command until the next."""

    def step(self, n: int = 1) -> None:
        """Advance n robot time steps."""


@dataclass
class ClosedLoopLog:
    """What a run recorded at each control step (robot time [s] and a user record)."""

    times: list[float] = field(default_factory=list)
    records: list[object] = field(default_factory=list)
    safe_steps: int = 0


def run_closed_loop(
    controller: WholeBodyController,
    robot: RobotBackend,
    duration: float,
    *,
    robot_steps_per_control: int,
    record: Callable[[float], object] | None = None,
    events: dict[float, Callable[[], None]] | None = None,
    stop: Callable[[], bool] | None = None,
) -> ClosedLoopLog:
    """Step controller and robot for ``duration`` seconds of robot time.

    Args:
        controller: The controller (its readings come from ``robot.readings()`` only).
        robot: The robot backend.
        duration: Robot time to run [s] (from its current time).
        robot_steps_per_control: Robot steps per control period (control period / robot dt).
        record: Called after each control step with the robot time; its result is logged.
        events: Robot time [s] -> action, run once at the first control step at or after it.
        stop: Ends the run early when it returns True (e.g. a fall).
    """
    log = ClosedLoopLog()
    pending = sorted((events or {}).items())
    end = robot.time + duration
    while robot.time < end - 1e-9:
        while pending and pending[0][0] <= robot.time + 1e-9:
            pending.pop(0)[1]()
        command = controller.step(robot.readings())
        log.safe_steps += int(controller.status.safe)
        robot.set_command(command)
        robot.step(robot_steps_per_control)
        log.times.append(robot.time)
        if record is not None:
            log.records.append(record(robot.time))
        if stop is not None and stop():
            break
    return log
