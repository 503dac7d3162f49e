"""``wbm_benchmark_loop_latency``: does the robot take a push when the loop is slow and jittery?

The realtime bringup on a loaded 2-core machine answers a sample every 14 ms or so, 15 ms after
it, with a long tail, and the robot falls seconds after pushes it takes in lockstep. This
benchmark replays such a loop in one process, deterministically, with the robot side's own
held-command law (:class:`~wbm_dynamics.pacing.PacingLoop`: the last command held, commands
``command_timeout`` late or out of order dropped, the posture hold of the start after
``command_timeout`` without a fresh command) around our simulator, and the controller core the
controller node hosts:

- the robot side publishes its readings every ``1 / publish_rate`` of robot time (as fast as
  possible: no wall clock);
- the controller answers the newest sample every ``period`` of robot time; its command reaches
  the robot side ``delay`` plus an exponential jitter of mean ``jitter`` after the sample
  (:class:`LoopLatency`; seeded), taken at the start of the robot side's next publication
  period (2 ms at 500 Hz);
- a push on the chest (``--force`` N for the robot side's ``push_duration``) at 2 s.

It prints, per loop and push direction: stood or fell (the base ``FALL_DROP`` below its start),
the lowest base height, watchdog trips and commands dropped. The first row is the ideal loop
(every sample answered at once), the reference. No ROS: the topics' latency is the model's.

Run: ``wbm_benchmark_loop_latency`` (``--loops 2:0:0 14:12:0 14:12:10``, in ms).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, fields, replace
from pathlib import Path

import numpy as np

from wbm_bringup.share import config_directory
from wbm_control.controller import WholeBodyController
from wbm_control.controller_settings import ControllerSettings
from wbm_description.registry import load_robot
from wbm_description.robot_io import JointCommand
from wbm_description.settings import read_yaml_section
from wbm_description.whole_body_model import WholeBodyModel
from wbm_dynamics.backends.simulator_backend import SimulatorBackend
from wbm_dynamics.held_command import CommandUpdate
from wbm_dynamics.interface_settings import RobotInterfaceSettings
from wbm_dynamics.pacing import PacingLoop, RobotOutputs
from wbm_dynamics.settings import SimulatorSettings

FALL_DROP = 0.15
"""A fall: the true base this far below its height at the start [m]."""

PUSH_FRAME = "chest"


@dataclass(frozen=True)
class LoopLatency:
    """How the controller's answers reach the robot side (robot time).

    Attributes:
        period: Time between two answers [s]; each answers the newest sample published.
        delay: Fixed time from a sample to the arrival of its answer [s].
        jitter: Mean of an exponential extra delay per answer [s]; 0 for none.
        seed: Seed of the jitter's generator.
    """

    period: float
    delay: float = 0.0
    jitter: float = 0.0
    seed: int = 0

    @classmethod
    def parse(cls, text: str, seed: int = 0) -> LoopLatency:
        """From ``period:delay:jitter`` in milliseconds, e.g. ``14:12:10``."""
        parts = text.split(":")
        if len(parts) != 3:
            raise ValueError(f"loop {text!r}: expected period:delay:jitter [ms]")
        try:
            period, delay, jitter = (float(part) * 1e-3 for part in parts)
        except ValueError:
            raise ValueError(f"loop {text!r}: expected numbers period:delay:jitter [ms]") from None
        if not (period > 0.0 and delay >= 0.0 and jitter >= 0.0):
            raise ValueError(f"loop {text!r}: expected period > 0, delay >= 0, jitter >= 0")
        return cls(period, delay, jitter, seed)


@dataclass
class LoopRun:
    """What a run measured.

    Attributes:
        fell_at: Robot time of the fall [s], or None.
        lowest: Lowest true base height below its start [m].
        answers: Commands the controller sent.
        dropped: Commands the robot side dropped, by reason.
        trips: Watchdog trips (back to the posture hold of the start).
    """

    fell_at: float | None
    lowest: float
    answers: int
    dropped: dict[str, int]
    trips: int


def _update(command: JointCommand, ndof: int) -> CommandUpdate:
    """The command as the robot interface takes a joint_commands message naming every joint."""
    return CommandUpdate(np.arange(ndof), command.position, command.velocity, command.effort)


def run_loop(
    model: WholeBodyModel,
    controller_settings: ControllerSettings,
    interface_settings: RobotInterfaceSettings,
    latency: LoopLatency,
    *,
    duration: float,
    push: np.ndarray | None = None,
    push_time: float = 2.0,
    simulator_settings: SimulatorSettings | None = None,
) -> LoopRun:
    """Run the emulated loop (module docstring) for ``duration`` of robot time.

    Args:
        model: The robot.
        controller_settings: The controller's settings (its mode, rates, tasks).
        interface_settings: The robot side's (command_timeout, its action, publish_rate,
            push_duration); its pacing is replaced by ``as_fast_as_possible``.
        latency: The loop's timing.
        duration: Robot time to run [s].
        push: Force on the chest [N], world axes, (3,), or None.
        push_time: When the push starts [s].
        simulator_settings: The simulator's settings (default: its defaults).
    """
    settings = replace(interface_settings, pacing="as_fast_as_possible")
    backend = SimulatorBackend(model, simulator_settings or SimulatorSettings())
    published: list[RobotOutputs] = []
    loop = PacingLoop(backend, settings, publish=published.append, log=lambda level, text: None)
    controller = WholeBodyController(model, controller_settings)
    rng = np.random.default_rng(latency.seed)
    loop.start(thread=False)
    start_height = backend.base_state().configuration[2]
    lowest = start_height
    in_transit: list[tuple[float, float, CommandUpdate]] = []  # (arrival, answers, update)
    dropped: dict[str, int] = {}
    next_answer = 0.0
    answers = 0
    pushed = push is None
    while backend.time < duration - 1e-9:
        now = backend.time
        if not pushed and now >= push_time - 1e-9:
            loop.push(PUSH_FRAME, np.concatenate([push, np.zeros(3)]))
            pushed = True
        arrived = [item for item in in_transit if item[0] <= now + 1e-9]
        in_transit = [item for item in in_transit if item[0] > now + 1e-9]
        for _, stamp, update in sorted(arrived, key=lambda item: item[0]):
            reason = loop.command(update, stamp)
            if reason is not None:
                dropped[reason] = dropped.get(reason, 0) + 1
        if published and now >= next_answer - 1e-9:
            sample = published[-1]
            command = controller.step(sample.readings)
            extra = rng.exponential(latency.jitter) if latency.jitter > 0.0 else 0.0
            in_transit.append(
                (sample.time + latency.delay + extra, sample.time, _update(command, model.ndof))
            )
            answers += 1
            next_answer = now + latency.period
        del published[:-1]  # the newest sample is the one answered
        loop.run_once()
        height = backend.base_state().configuration[2]
        lowest = min(lowest, height)
        if height < start_height - FALL_DROP:
            return LoopRun(backend.time, start_height - lowest, answers, dropped, loop.trips)
    return LoopRun(None, start_height - lowest, answers, dropped, loop.trips)


def robot_side_settings(
    path: Path, contact_model: str
) -> tuple[RobotInterfaceSettings, SimulatorSettings]:
    """The robot interface's node-level settings and its ``simulator:`` section, from its file."""
    values = read_yaml_section(path)
    names = {field.name for field in fields(RobotInterfaceSettings)}
    node = {key: value for key, value in values.items() if key in names}
    simulator = SimulatorSettings.from_mapping(values.get("simulator") or {}, source=path)
    return (
        RobotInterfaceSettings.from_mapping(node, source=path),
        replace(simulator, contact_model=contact_model),
    )


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``wbm_benchmark_loop_latency``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--loops",
        nargs="+",
        default=["2:0:0", "14:0:0", "14:12:0", "14:12:10", "5:3:3"],
        help="period:delay:jitter in ms; the first is the reference",
    )
    parser.add_argument("--seeds", type=int, default=2, help="jitter seeds per loop")
    parser.add_argument("--force", type=float, default=30.0, help="push force [N]")
    parser.add_argument("--seconds", type=float, default=6.0, help="robot time per run [s]")
    parser.add_argument("--mode", default="torque", choices=["torque", "ik"])
    parser.add_argument("--contact-model", default="compliant", choices=["compliant", "rigid"])
    args = parser.parse_args(argv)
    try:
        loops = [LoopLatency.parse(text) for text in args.loops]
    except ValueError as error:
        parser.error(str(error))
    directory = config_directory("icub")
    controller_settings = replace(
        ControllerSettings.from_yaml(directory / "controller.yaml"), mode=args.mode
    )
    interface_settings, simulator_settings = robot_side_settings(
        directory / "robot_interface.yaml", args.contact_model
    )
    model = WholeBodyModel.from_config(load_robot(controller_settings.robot))
    impulse = args.force * interface_settings.push_duration
    print(
        f"iCub, {args.mode} mode, {args.contact_model} contact, a {args.force:g} N push on the "
        f"chest for {interface_settings.push_duration:g} s ({impulse:g} N s) at 2 s; robot side: "
        f"command_timeout {interface_settings.command_timeout:g} s "
        f"({interface_settings.command_timeout_action}), publish_rate "
        f"{interface_settings.publish_rate:g} Hz; controller "
        f"{controller_settings.control_rate:g} Hz"
    )
    print(
        "| loop: period / delay / jitter [ms] | push | seed | result | lowest [mm] | answers "
        "| trips | dropped |"
    )
    print("|---|---|---|---|---|---|---|---|")
    directions = {"front": (1.0, 0.0, 0.0), "left": (0.0, 1.0, 0.0), "back": (-1.0, 0.0, 0.0)}
    failures = 0
    for latency in loops:
        seeds = range(args.seeds) if latency.jitter > 0.0 else range(1)
        for name, direction in directions.items():
            for seed in seeds:
                run = run_loop(
                    model,
                    controller_settings,
                    interface_settings,
                    replace(latency, seed=seed),
                    duration=args.seconds,
                    push=args.force * np.array(direction),
                    simulator_settings=simulator_settings,
                )
                failures += run.fell_at is not None
                result = "stood" if run.fell_at is None else f"fell at {run.fell_at:.2f} s"
                drops = ", ".join(f"{k} {v}" for k, v in sorted(run.dropped.items())) or "0"
                print(
                    f"| {1e3 * latency.period:g} / {1e3 * latency.delay:g} / "
                    f"{1e3 * latency.jitter:g} | {name} | {seed} | {result} | "
                    f"{1e3 * run.lowest:.1f} | {run.answers} | {run.trips} | {drops} |",
                    flush=True,
                )
    print(f"falls: {failures}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
