"""``wbm_demo``: run the simulation bringup headless with the demo scenario, then report.

iCub stands, moves its left hand (seed 004), takes a push and recovers. Every topic is recorded
to ``<output>/recording`` (rosbag2, MCAP); the report is printed and plots are written to
``<output>/*.png``. Then the walking part (:mod:`wbm_bringup.demo.walking`, in-process; skip it
with ``--no-walking``, or run only it with ``--walking-only``): walk, turn, take a push, stop, with
its plot from above (``walking_top.png``). With ``--viewer`` the bringup keeps running with the
browser viewer after the scenario (Ctrl-C to stop).
"""

from __future__ import annotations

import argparse
import shutil
import signal
import sys
import time
from pathlib import Path

from wbm_bringup.demo.report import (
    aligned,
    analyze,
    read_clock_span,
    read_recording,
    run_timing,
    write_plots,
)
from wbm_bringup.demo.scenario import DemoScenario
from wbm_bringup.launching import LaunchPlan, LaunchRunner, check_plan, plan_launch
from wbm_bringup.share import launch_file
from wbm_bringup.viewer.foxglove_layout import copy_layout_beside
from wbm_description.exceptions import WbmError
from wbm_description.registry import load_robot
from wbm_description.whole_body_model import WholeBodyModel


def _plan(args: argparse.Namespace, bag: Path, scenario: DemoScenario) -> LaunchPlan:
    """The demo's launch, its nodes' parameters checked before anything starts.

    As ``wbm launch`` does: a refused value names the launch argument.
    """
    plan = plan_launch(
        args.launch_file,
        {
            "controller_mode": args.controller_mode,
            "contact_model": args.contact_model,
            "pacing": args.pacing,
            "record": str(bag),
            "viewer": "true" if args.viewer else "false",
            "end_time": str(scenario.end_time),
            "command_delay": repr(args.command_delay),
        },
    )
    check_plan(plan)
    return plan


def build_parser() -> argparse.ArgumentParser:
    """``wbm_demo``'s command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--launch-file",
        type=Path,
        default=None,
        help="the demo launch file (default: demo.launch.yaml of the installed wbm_bringup)",
    )
    parser.add_argument("--output", type=Path, default=Path("wbm_demo_output"))
    parser.add_argument("--controller-mode", default="torque", choices=["torque", "ik"])
    parser.add_argument("--contact-model", default="compliant", choices=["compliant", "rigid"])
    parser.add_argument("--pacing", default="lockstep", choices=["lockstep", "realtime"])
    parser.add_argument(
        "--command-delay",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="the robot interface's command_delay (lockstep: whole control periods, e.g. 0.002 "
        "at 500 Hz: the simulator one sample ahead of the controller); default 0",
    )
    parser.add_argument("--viewer", action="store_true", help="keep running with the viewer")
    parser.add_argument("--timeout", type=float, default=600.0, help="wall-clock limit [s]")
    parser.add_argument("--no-walking", action="store_true", help="skip the walking part")
    parser.add_argument("--walking-only", action="store_true", help="only the walking part")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``wbm_demo``."""
    args = build_parser().parse_args(argv)
    if args.walking_only:
        return _walking_part(args)
    if args.launch_file is None:
        args.launch_file = launch_file("demo.launch.yaml")

    scenario = DemoScenario()
    output = args.output.resolve()
    bag = output / "recording"
    if bag.exists():
        shutil.rmtree(bag)
    output.mkdir(parents=True, exist_ok=True)
    try:
        plan = _plan(args, bag, scenario)
    except WbmError as error:
        print(f"wbm_demo: error: {error}", file=sys.stderr)
        return 2
    print(
        f"[wbm demo] {len(plan.processes)} processes: "
        + ", ".join(process.label for process in plan.processes),
        flush=True,
    )
    print(
        f"[wbm demo] scenario: stand, move {scenario.hand_task} at t = {scenario.hand_start} s, "
        f"push at t = {scenario.push_time} s, end at t = {scenario.end_time} s (simulated time)",
        flush=True,
    )
    runner = LaunchRunner(plan.processes, stream=sys.stdout)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, runner.request_stop)
    if args.viewer:
        print("[wbm demo] the viewer prints its URL below; Ctrl-C ends the demo", flush=True)
    start = time.monotonic()
    launched_ns = time.time_ns()  # the clock of the middleware's receive times
    runner.start()
    code = runner.wait(timeout=None if args.viewer else args.timeout)
    wall_time = time.monotonic() - start
    ended_ns = time.time_ns()
    if code != 0:
        print(f"[wbm demo] the launch ended with code {code}", file=sys.stderr)
    if not (bag / "metadata.yaml").is_file():
        print(f"[wbm demo] error: no recording in {bag}", file=sys.stderr)
        return 1
    print("[wbm demo] computing the report from the recording ...", flush=True)
    model = WholeBodyModel.from_config(load_robot("icub"))
    try:
        recording = read_recording(bag, model)
    except ValueError as error:  # e.g. a launch that failed before the robot published
        print(f"[wbm demo] error: no report: {error}", file=sys.stderr)
        return 1
    simulated = float(recording.time[-1] - recording.time[0])
    recording, scenario = aligned(recording, scenario)  # from the scenario's start on
    try:
        timing = run_timing(read_clock_span(bag), launched_ns, ended_ns)
    except ValueError as error:
        print(f"[wbm demo] no pace: {error}", file=sys.stderr)
        timing = None
    report = analyze(
        recording, model, scenario, wall_time=wall_time, simulated=simulated, timing=timing
    )
    plots = write_plots(report, model, scenario, output)
    print(report.text(scenario))
    layout = copy_layout_beside(bag)
    print(f"recording          {bag} (rosbag2 with MCAP storage: Foxglove, ros2 bag)")
    print(f"Foxglove layout    {layout} (open the recording, then import this layout)")
    for path in plots:
        print(f"plot               {path}")
    if not report.stayed_up:
        return 3
    return 0 if args.no_walking else _walking_part(args)


def _walking_part(args: argparse.Namespace) -> int:
    """The walking part (in-process), its report and plot; 0 unless the robot fell."""
    from wbm_bringup.demo.walking import run_walking_demo, write_walking_plot
    from wbm_bringup.share import config_directory

    print("[wbm demo] walking part (in-process): walk, turn, take a push, stop ...", flush=True)
    model = WholeBodyModel.from_config(load_robot("icub"))
    config = config_directory("icub") / "controller.yaml"
    result = run_walking_demo(model, config, mode=args.controller_mode)
    print(result.text())
    print(f"plot               {write_walking_plot(result, args.output.resolve())}")
    return 3 if result.rig.metrics.fallen else 0


if __name__ == "__main__":
    sys.exit(main())
