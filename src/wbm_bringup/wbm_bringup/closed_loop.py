"""Run the controller in closed loop with an in-process engine (tests, benchmarks).

The robot is an engine (:class:`wbm_dynamics.engine.Engine`: our simulator or MuJoCo), driven
through the engine protocol only (``readings()``, ``set_command(command)``, ``step(n)``,
``time``): wbm_control never imports an engine, the caller injects one. The controller only sees
:class:`RobotReadings`, as over the robot topics.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from wbm_control.controller import WholeBodyController
from wbm_dynamics.engine import Engine


@dataclass
class ClosedLoopLog:
    """What a run recorded at each control step (robot time [s] and a user record)."""

    times: list[float] = field(default_factory=list)
    records: list[object] = field(default_factory=list)
    safe_steps: int = 0


def run_closed_loop(
    controller: WholeBodyController,
    engine: Engine,
    duration: float,
    *,
    robot_steps_per_control: int,
    record: Callable[[float], object] | None = None,
    events: dict[float, Callable[[], None]] | None = None,
    stop: Callable[[], bool] | None = None,
) -> ClosedLoopLog:
    """Step controller and engine for ``duration`` seconds of simulated time.

    Args:
        controller: The controller (its readings come from ``engine.readings()`` only).
        engine: The simulated robot.
        duration: Simulated time to run [s] (from the engine's current time).
        robot_steps_per_control: Engine steps per control period (control period / engine dt).
        record: Called after each control step with the engine's time; its result is logged.
        events: Simulated time [s] -> action, run once at the first control step at or after it.
        stop: Ends the run early when it returns True (e.g. a fall).
    """
    log = ClosedLoopLog()
    pending = sorted((events or {}).items())
    end = engine.time + duration
    while engine.time < end - 1e-9:
        while pending and pending[0][0] <= engine.time + 1e-9:
            pending.pop(0)[1]()
        command = controller.step(engine.readings())
        log.safe_steps += int(controller.status.safe)
        engine.set_command(command)
        engine.step(robot_steps_per_control)
        log.times.append(engine.time)
        if record is not None:
            log.records.append(record(engine.time))
        if stop is not None and stop():
            break
    return log
