"""``wbm_benchmark_launches``: launch the default simulation bringup N times; does it stand?

Each launch starts ``launch/sim.launch.yaml`` with its defaults (realtime pacing) through
``wbm launch``'s runner, on our simulator or on MuJoCo (``--robot-side``, ``both`` alternates),
while ``--load`` processes spin a core each (``while True: pass``), records the true base
height (``ground_truth/odom``) for ``--sim-seconds`` of simulated time, and stops it with
SIGINT. A launch stands when the base height stays within ``--tolerance`` (1 cm) of its value
at t = 0 (the initial posture on the ground, :func:`initial_height`), from the first pose heard
(at most :data:`FIRST_POSE_LIMIT` after t = 0) on. It prints one row per launch (largest deviation,
final deviation, wall time to start and to finish, exit code) and the count that stood; exit
code 1 unless all did.

Run: ``wbm_benchmark_launches --launches 20 --load 1`` (``--arg name:=value`` passes a launch
argument to every launch).
"""

from __future__ import annotations

import argparse
import io
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import rclpy
from nav_msgs.msg import Odometry
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock

from wbm_bringup.benchmarks.process_guard import owned_processes
from wbm_bringup.launching import LaunchRunner, plan_launch
from wbm_bringup.share import launch_file
from wbm_description.registry import load_robot
from wbm_description.whole_body_model import WholeBodyModel
from wbm_dynamics.backends import create_backend

TRACEBACK = re.compile(r"Traceback \(most recent call last\)|Exception in '")

FIRST_POSE_LIMIT = 1.0
"""Latest accepted stamp of the first pose the probe hears [s of sim time]. Under CPU load the
probe's subscription may match the robot interface's publisher after it started (first poses at
0.44-1.1 s were seen at machine load 20-30), so the reference is not the first pose heard but
the initial state itself (:func:`initial_height`); a launch whose first pose comes later than
this is INCOMPLETE. The probe subscribes transient local: the robot interface keeps the last
second of ground truth for it, so a late match still hears t = 0."""


def initial_height(robot_side: str, robot: str = "icub") -> float:
    """The base height of the robot side's initial state (t = 0) [m], built in this process.

    The same backend the node builds, with its default settings (the config files document the
    defaults): the initial posture on the ground. Checked equal to the t = 0 pose of launches on
    both sides (0.5906506 m for iCub).
    """
    model = WholeBodyModel.from_config(load_robot(robot))
    with create_backend(robot_side, model, None) as backend:
        return float(backend.base_state().configuration[2])


def one_launch(
    launch: Path,
    robot_side: str,
    *,
    sim_seconds: float,
    timeout: float,
    arguments: dict[str, str] | None = None,
) -> dict[str, float | int | bool]:
    """One launch, measured (see the module docstring)."""
    reference = initial_height(robot_side)
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("launches_benchmark_probe", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    poses: list[tuple[float, float]] = []
    clock = [0.0]
    qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)

    def on_odom(message: Odometry) -> None:
        stamp = message.header.stamp
        poses.append((stamp.sec + 1e-9 * stamp.nanosec, message.pose.pose.position.z))

    def on_clock(message: Clock) -> None:
        clock[0] = message.clock.sec + 1e-9 * message.clock.nanosec

    # Transient local: the robot interface keeps the last second of ground truth for a probe
    # whose subscription matched late (under load), so t = 0 is heard all the same.
    history = QoSProfile(
        depth=2000,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL,
    )
    node.create_subscription(Odometry, "ground_truth/odom", on_odom, history)
    node.create_subscription(Clock, "/clock", on_clock, qos)
    plan = plan_launch(launch, {**(arguments or {}), "robot_side": robot_side})
    log = io.StringIO()
    runner = LaunchRunner(plan.processes, stream=log)
    start = time.monotonic()
    first_pose = None
    guard = owned_processes(runner)
    guard.__enter__()
    try:
        runner.start()
        deadline = start + timeout
        while clock[0] < sim_seconds and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.02)
            if first_pose is None and poses:
                first_pose = time.monotonic() - start
            if any(child.poll() is not None for child in runner.children):
                break
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=context)
        runner.request_stop()
        code = runner.wait()
        guard.__exit__(None, None, None)
    wall = time.monotonic() - start
    samples = np.array([z for t, z in poses if t <= sim_seconds])
    complete = clock[0] >= sim_seconds and len(samples) > 10 and poses[0][0] < FIRST_POSE_LIMIT
    deviation = np.abs(samples - reference) if len(samples) else np.array([np.inf])
    return {
        "complete": complete,
        "max_deviation": float(deviation.max()),
        "final_deviation": float(deviation[-1]),
        "first_pose": first_pose if first_pose is not None else float("nan"),
        "wall": wall,
        "code": code,
        "traceback": bool(TRACEBACK.search(log.getvalue())),
        "first_stamp": poses[0][0] if poses else float("nan"),
        "sim_reached": clock[0],
    }


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``wbm_benchmark_launches``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, default=20)
    parser.add_argument("--robot-side", default="both", help="simulator, mujoco or both")
    parser.add_argument("--load", type=int, default=1, help="CPU-spinning processes beside")
    parser.add_argument("--sim-seconds", type=float, default=4.0, help="[s of sim time]")
    parser.add_argument("--tolerance", type=float, default=0.01, help="[m]")
    parser.add_argument("--timeout", type=float, default=180.0, help="per launch [s of wall]")
    parser.add_argument("--launch-file", type=Path, default=None)
    parser.add_argument(
        "--arg",
        action="append",
        default=[],
        metavar="NAME:=VALUE",
        help="a launch argument for every launch (repeatable), e.g. config_directory:=DIR",
    )
    args = parser.parse_args(argv)
    arguments = {}
    for item in args.arg:
        name, separator, value = item.partition(":=")
        if not separator or not name:
            parser.error(f"--arg {item!r}: expected NAME:=VALUE")
        arguments[name] = value
    launch = args.launch_file or launch_file("sim.launch.yaml")
    sides = ["simulator", "mujoco"] if args.robot_side == "both" else [args.robot_side]
    loads = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.load)
    ]
    header = (
        f"{'launch':>6}  {'robot side':<10}{'max dev [mm]':>13}{'final [mm]':>11}"
        f"{'1st pose [s]':>13}{'wall [s]':>9}{'exit':>5}  result"
    )
    print(f"{args.load} CPU load process(es) beside; {args.sim_seconds:g} s of sim time each")
    print(header)
    print("-" * len(header), flush=True)
    stood = 0
    with owned_processes(extra=loads):
        for k in range(args.launches):
            side = sides[k % len(sides)]
            row = one_launch(
                launch,
                side,
                sim_seconds=args.sim_seconds,
                timeout=args.timeout,
                arguments=arguments,
            )
            ok = (
                row["complete"]
                and row["max_deviation"] < args.tolerance
                and row["code"] == 0
                and not row["traceback"]
            )
            stood += ok
            result = "stood" if ok else ("INCOMPLETE" if not row["complete"] else "FAILED")
            if not row["complete"]:  # why: the probe missed t = 0, or time stopped short
                result += (
                    f" (first pose at t = {row['first_stamp']:.3f} s, sim time reached "
                    f"{row['sim_reached']:.2f} s)"
                )
            if row["traceback"]:
                result += " (traceback)"
            print(
                f"{k + 1:>6}  {side:<10}{1e3 * row['max_deviation']:>13.2f}"
                f"{1e3 * row['final_deviation']:>11.2f}{row['first_pose']:>13.1f}"
                f"{row['wall']:>9.1f}{row['code']:>5}  {result}",
                flush=True,
            )
    print(f"{stood} of {args.launches} launches stood within {args.tolerance * 1e3:g} mm")
    return 0 if stood == args.launches else 1


if __name__ == "__main__":
    raise SystemExit(main())
