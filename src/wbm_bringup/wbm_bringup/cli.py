"""The ``wbm`` command: what wbm knows about a robot, and the launch runner.

Usage::

    wbm info [ROBOT]        # a registered robot name (default icub) or a robot config path
    wbm robots              # the registered robots
    wbm launch FILE [name:=value ...] [--print] [--duration S] [--no-check]
                            # run a ROS 2 YAML launch file (where ros2 launch is not installed)

``wbm launch`` checks every node's parameters before it starts anything (see
:mod:`wbm_bringup.launching.preflight`): a bad launch argument is reported with its name and what
was expected, and nothing starts (exit code 2). A node that fails at start, or dies, ends the
launch (every shipped node has ``on_exit: shutdown``) with its exit status.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from wbm_description.exceptions import WbmError
from wbm_description.registry import DEFAULT_ROBOT, available_robots, load_robot
from wbm_description.whole_body_model import WholeBodyModel


def describe_robot(robot: str) -> str:
    """A human-readable summary of a robot's config and model."""
    config = load_robot(robot)
    model = WholeBodyModel.from_config(config)
    q = model.initial_configuration()
    v = np.zeros(model.nv)
    lines = [
        f"robot            {config.name}",
        f"config           {config.config_path}",
        f"URDF             {config.urdf_path}",
        f"base             {'floating' if model.floating_base else 'fixed'} ({config.base_link})",
        f"world frame at   {config.world_reference_link or 'the URDF root'}",
        f"mass             {model.total_mass:.3f} kg",
        f"DoF              {model.ndof} actuated joints (nq = {model.nq}, nv = {model.nv})",
        f"gravity          {config.gravity.tolist()} m/s^2",
        "",
    ]
    # Columns padded for the longest name (G1's joints are up to 26 characters long).
    width = max(20, *(len(name) + 2 for name in model.joint_names))
    lines.append(
        f"{'joint':<{width}}{'q0 [rad]':>10}{'lower':>9}{'upper':>9}{'tau max':>9}{'kp':>8}"
        f"{'kd':>7}"
    )
    lower, upper = model.joint_position_limits
    for i, name in enumerate(model.joint_names):
        lines.append(
            f"{name:<{width}}{model.initial_posture[i]:>10.3f}{lower[i]:>9.3f}{upper[i]:>9.3f}"
            f"{model.torque_limits[i]:>9.2f}{model.servo_kp[i]:>8.1f}{model.servo_kd[i]:>7.2f}"
        )
    com = model.com_position(q)
    lines += ["", f"initial CoM      {np.round(com, 4).tolist()} m (world)"]
    names = [s.name for s in config.soles] + [s.name for s in config.ft_sensors]
    names += [t.name for t in config.tools] + [p.name for p in config.payloads]
    label = max([11, *(len(name) for name in names)])
    for sole in config.soles:
        corners = [model.frame_placement(q, sole.frame).act(c) for c in sole.corners()]
        xy = np.round(np.array(corners)[:, :2], 3).tolist()
        lines.append(f"sole {sole.name:<{label}} frame {sole.frame}, corners (x, y) {xy}")
    for sensor in config.ft_sensors:
        position = model.frame_placement(q, sensor.frame).translation
        at = np.round(position, 4).tolist()
        lines.append(f"F/T {sensor.name:<{label + 1}} frame {sensor.frame} at {at}")
    if config.imu_frame:
        position = model.frame_placement(q, config.imu_frame).translation
        lines.append(
            f"IMU              frame {config.imu_frame} at {np.round(position, 4).tolist()}"
        )
    for tool in config.tools:
        lines.append(f"tool {tool.name:<{label}} on {tool.link}")
    for payload in config.payloads:
        lines.append(f"payload {payload.name:<{label - 3}} {payload.mass} kg on {payload.link}")
    if model.floating_base and len(config.soles) >= 1:
        feet = [sole.frame for sole in config.soles]
        reference = {frame: model.frame_placement(q, frame) for frame in feet}
        # Torques that hold the posture with the feet on the ground, checked by the
        # contact-constrained forward dynamics.
        tau, _ = model.static_contact_torques(q, feet)
        result = model.contact_forward_dynamics(
            q, v, tau, feet, reference_placements=reference, kp=100.0, kd=20.0
        )
        total = sum(w[2] for w in result.contact_wrenches.values())
        lines.append(
            f"standing still   vertical contact forces {total:.2f} N "
            f"(m g = {model.total_mass * 9.81:.2f} N), max |acceleration| "
            f"{np.abs(result.acceleration).max():.1e} with the static torques"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``wbm`` command."""
    parser = argparse.ArgumentParser(prog="wbm", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    info = commands.add_parser("info", help="what the model knows about a robot")
    info.add_argument("robot", nargs="?", default=DEFAULT_ROBOT, help="name or config path")
    commands.add_parser("robots", help="list the registered robots")
    launch = commands.add_parser("launch", help="run a ROS 2 YAML launch file")
    launch.add_argument("file", help="the .launch.yaml file")
    launch.add_argument("arguments", nargs="*", help="launch arguments as name:=value")
    launch.add_argument("--print", action="store_true", help="print the processes, start none")
    launch.add_argument("--duration", type=float, help="stop the launch after this many seconds")
    launch.add_argument(
        "--no-check",
        action="store_true",
        help="start without the pre-flight checks of the nodes' parameters (the nodes still "
        "check them at start)",
    )
    args, extra = parser.parse_known_args(argv)
    if extra and args.command == "launch" and all(":=" in item for item in extra):
        args.arguments += extra  # name:=value given after an option
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        if args.command == "info":
            print(describe_robot(args.robot))
        elif args.command == "robots":
            print("\n".join(available_robots()))
        elif args.command == "launch":
            return launch_main(args)
    except WbmError as error:
        print(f"wbm: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # Ctrl-C before the processes started (e.g. during the pre-flight checks): a normal stop.
        print("wbm: interrupted before the launch started", file=sys.stderr)
        return 0
    return 0


def launch_main(args: argparse.Namespace) -> int:
    """``wbm launch``: plan the launch file, check it, then run it (or print the plan)."""
    from wbm_bringup.launching import check_plan, plan_launch, run_launch

    overrides = {}
    for item in args.arguments:
        name, separator, value = item.partition(":=")
        if not separator or not name:
            print(f"wbm launch: error: argument {item!r} is not name:=value", file=sys.stderr)
            return 2
        overrides[name] = value
    plan = plan_launch(args.file, overrides)
    checks = [] if args.no_check else check_plan(plan)
    if args.print:
        for name, value in plan.arguments.items():
            print(f"arg {name} = {value!r}  # {plan.descriptions.get(name, '')}")
        for process in plan.processes:
            required = " (required)" if process.required else ""
            print(f"process {process.label}{required}: {' '.join(process.command)}")
        for check in checks:
            how = (
                check.checked_by or "ROS's own parameters only; the node checks the rest at start"
            )
            print(f"checked {check.label}: {how}")
        return 0
    return run_launch(plan.processes, duration=args.duration)


def model_info_main() -> int:
    """Entry point of ``wbm_model_info [ROBOT]``."""
    return main(["info", *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
