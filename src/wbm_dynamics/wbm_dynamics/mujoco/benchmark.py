"""Benchmark: iCub standing on MuJoCo and on our simulator (each contact model), real-time factors.

Every engine runs the same scenario (:mod:`wbm_dynamics.mujoco.scenarios`: iCub holding its
initial posture on both soles) for the same simulated time at the same 1 ms step, stepping one
control period at a time with a fresh :class:`~wbm_description.robot_io.RobotReadings` per period
(what the robot-interface node does), and the table reports the wall time, the real-time factor
(simulated time / wall time) and its ratio to MuJoCo's. Engine construction is not timed.

Run: ``python -m wbm_dynamics.mujoco.benchmark --seconds 5``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from wbm_description.registry import load_robot
from wbm_description.whole_body_model import WholeBodyModel
from wbm_dynamics.engine import Engine
from wbm_dynamics.mujoco.engine import MujocoEngine
from wbm_dynamics.mujoco.scenarios import standing_command, standing_servo_gains
from wbm_dynamics.mujoco.settings import MujocoSettings
from wbm_dynamics.settings import CONTACT_MODELS, SimulatorSettings
from wbm_dynamics.simulator import Simulator


@dataclass(frozen=True)
class BenchmarkResult:
    """One engine's run.

    Attributes:
        engine: Engine label.
        simulated_time: Simulated time [s].
        wall_time: Wall-clock time of the stepping loop [s].
        com_drift: Distance of the CoM from its initial position at the end [m] (did it
            stand?).
    """

    engine: str
    simulated_time: float
    wall_time: float
    com_drift: float

    @property
    def real_time_factor(self) -> float:
        """Simulated time / wall time."""
        return self.simulated_time / self.wall_time


def run_standing(
    label: str,
    factory: Callable[[], Engine],
    model: WholeBodyModel,
    *,
    seconds: float,
    control_period: float,
) -> BenchmarkResult:
    """Run one engine standing for ``seconds`` of simulated time.

    Args:
        label: Name shown in the table.
        factory: Builds the engine (MujocoEngine or Simulator), not timed; the run uses the
            engine protocol only.
        model: The whole-body model (for the command and the CoM).
        seconds: Simulated time [s].
        control_period: Simulated time between readings [s], a multiple of the engine step.
    """
    engine = factory()
    engine.set_command(standing_command(model))
    steps_per_period = max(1, int(round(control_period / engine.dt)))
    periods = int(round(seconds / (steps_per_period * engine.dt)))
    com0 = model.com_position(engine.ground_truth().q)
    start = time.perf_counter()
    for _ in range(periods):
        engine.step(steps_per_period)
        engine.readings()
    wall = time.perf_counter() - start
    drift = float(np.linalg.norm(model.com_position(engine.ground_truth().q) - com0))
    return BenchmarkResult(label, periods * steps_per_period * engine.dt, wall, drift)


def format_table(results: Sequence[BenchmarkResult]) -> str:
    """The results as a text table, with each real-time factor's ratio to the first row's."""
    reference = results[0].real_time_factor
    lines = [
        f"{'engine':<24}{'sim time [s]':>13}{'wall [s]':>10}{'RTF':>9}"
        f"{'RTF / ' + results[0].engine:>16}{'CoM drift [mm]':>16}"
    ]
    for result in results:
        lines.append(
            f"{result.engine:<24}{result.simulated_time:>13.2f}{result.wall_time:>10.3f}"
            f"{result.real_time_factor:>9.2f}{result.real_time_factor / reference:>16.3f}"
            f"{1e3 * result.com_drift:>16.2f}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: parse arguments, run every engine, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="simulated time [s]")
    parser.add_argument(
        "--control-period",
        type=float,
        default=0.002,
        help="simulated time between sensor readings [s] (a multiple of the 1 ms step)",
    )
    parser.add_argument("--robot", default="icub", help="robot name or config file with soles")
    args = parser.parse_args(argv)
    if not args.seconds > 0.0:
        parser.error("--seconds must be > 0")
    if not args.control_period > 0.0:
        parser.error("--control-period must be > 0")
    model = WholeBodyModel.from_config(load_robot(args.robot))
    kp, kd = standing_servo_gains(model)
    engines: list[tuple[str, Callable[[], Engine]]] = [
        ("mujoco", lambda: MujocoEngine(model, MujocoSettings(), servo_kp=kp, servo_kd=kd))
    ]
    for contact_model in CONTACT_MODELS:
        settings = SimulatorSettings(contact_model=contact_model)
        engines.append(
            (
                f"wbm simulator {contact_model}",
                lambda s=settings: Simulator(model, s, servo_kp=kp, servo_kd=kd),
            )
        )
    results = [
        run_standing(
            label, factory, model, seconds=args.seconds, control_period=args.control_period
        )
        for label, factory in engines
    ]
    print(
        f"{model.config.name} standing, {args.seconds:g} s simulated, 1 ms step, readings every "
        f"{args.control_period * 1e3:g} ms"
    )
    print(format_table(results))


if __name__ == "__main__":
    main()
