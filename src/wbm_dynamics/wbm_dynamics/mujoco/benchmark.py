"""Benchmark: iCub standing on MuJoCo and on our simulator (each contact model), real-time factors.

Every engine runs the same scenario (:mod:`wbm_dynamics.mujoco.scenarios`: iCub holding its
initial posture on both soles) for the same simulated time at the same 1 ms step, stepping one
control period at a time with a fresh :class:`~wbm_description.robot_io.RobotReadings` per period
(what the robot-interface node does), and the table reports the wall time, the real-time factor
(simulated time / wall time) and its ratio to MuJoCo's. Engine construction is not timed.

The engines run side by side ``--repeats`` times (every engine once per repeat, in turn), so
that the ratio to MuJoCo of each repeat compares runs taken under the same machine load; each
row gives the median and the spread (min-max) over the repeats, of the wall-clock real-time
factor, of its ratio to MuJoCo's, and of the CPU-time real-time factor (``time.process_time``,
less sensitive to other processes). A machine reference is printed above the table: the median
cost of one bare ``pin.aba`` on the same model, so that figures can be compared across machines.

Run: ``python -m wbm_dynamics.mujoco.benchmark --seconds 5 --repeats 5``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

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
        cpu_time: CPU time of this process during the stepping loop [s] (nan: not measured).
    """

    engine: str
    simulated_time: float
    wall_time: float
    com_drift: float
    cpu_time: float = float("nan")

    @property
    def real_time_factor(self) -> float:
        """Simulated time / wall time."""
        return self.simulated_time / self.wall_time

    @property
    def cpu_real_time_factor(self) -> float:
        """Simulated time / CPU time."""
        return self.simulated_time / self.cpu_time


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
    start, cpu_start = time.perf_counter(), time.process_time()
    for _ in range(periods):
        engine.step(steps_per_period)
        engine.readings()
    wall = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    drift = float(np.linalg.norm(model.com_position(engine.ground_truth().q) - com0))
    engine.close()
    return BenchmarkResult(label, periods * steps_per_period * engine.dt, wall, drift, cpu)


def forward_dynamics_cost(model: WholeBodyModel, *, calls: int = 2000, runs: int = 5) -> float:
    """Median cost of one bare ``pin.aba`` at the initial configuration [s] (machine reference)."""
    data = model.model.createData()
    q = model.initial_configuration()
    v = np.zeros(model.nv)
    costs = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(calls):
            pin.aba(model.model, data, q, v, v)
        costs.append((time.perf_counter() - start) / calls)
    return statistics.median(costs)


def _spread(values: Sequence[float], digits: int) -> str:
    """``median [min-max]`` of some values."""
    return (
        f"{statistics.median(values):.{digits}f} "
        f"[{min(values):.{digits}f}-{max(values):.{digits}f}]"
    )


def format_repeats(repeats: Sequence[Sequence[BenchmarkResult]]) -> str:
    """Median and spread over repeats of the side-by-side runs (first engine: the reference).

    Args:
        repeats: Per repeat, the results of every engine in the same order.
    """
    lines = [
        f"{'engine':<24}{'RTF median [min-max]':>24}{'RTF / ' + repeats[0][0].engine:>26}"
        f"{'CPU RTF':>24}{'CoM drift [mm]':>16}"
    ]
    for column in range(len(repeats[0])):
        runs = [repeat[column] for repeat in repeats]
        factors = [run.real_time_factor for run in runs]
        ratios = [
            repeat[column].real_time_factor / repeat[0].real_time_factor for repeat in repeats
        ]
        cpu = [run.cpu_real_time_factor for run in runs]
        drift = max(run.com_drift for run in runs)
        lines.append(
            f"{runs[0].engine:<24}{_spread(factors, 2):>24}{_spread(ratios, 3):>26}"
            f"{_spread(cpu, 2):>24}{1e3 * drift:>16.2f}"
        )
    return "\n".join(lines)


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
    parser.add_argument("--repeats", type=int, default=5, help="side-by-side runs of every engine")
    args = parser.parse_args(argv)
    if not args.seconds > 0.0:
        parser.error("--seconds must be > 0")
    if not args.control_period > 0.0:
        parser.error("--control-period must be > 0")
    if args.repeats < 1:
        parser.error("--repeats must be >= 1")
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
    repeats = [
        [
            run_standing(
                label, factory, model, seconds=args.seconds, control_period=args.control_period
            )
            for label, factory in engines
        ]
        for _ in range(args.repeats)
    ]
    print(
        f"{model.config.name} standing, {args.seconds:g} s simulated, 1 ms step, readings every "
        f"{args.control_period * 1e3:g} ms, {args.repeats} side-by-side repeats"
    )
    print(
        f"machine reference: one pin.aba on {model.config.name} "
        f"{1e6 * forward_dynamics_cost(model):.1f} us (median)"
    )
    print(format_repeats(repeats))


if __name__ == "__main__":
    main()
