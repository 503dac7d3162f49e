"""``wbm_benchmark_bringup``: the full simulation bringup, timed from outside, per pacing.

For each pacing (lockstep and realtime) it starts ``launch/sim.launch.yaml`` through
``wbm launch``'s runner, lets it warm up, then for ``--seconds`` of wall time a probe node
records when each ``joint_states`` and ``joint_commands`` message arrives. It prints:

- the control rate achieved: commands per second of simulated time and of wall time;
- the closed-loop latency: from the arrival of a ``joint_states`` message to the arrival of the
  first command after it (both seen by the probe, so DDS delivery is included), median and 99th
  percentile;
- the real-time factor: simulated seconds per wall second.
"""

from __future__ import annotations

import argparse
import io
import time
from pathlib import Path

import numpy as np
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState

from wbm_bringup.launching import LaunchRunner, plan_launch
from wbm_bringup.share import launch_file


def measure(launch_file: Path, pacing: str, *, warmup: float, seconds: float) -> dict[str, float]:
    """Run the bringup with ``pacing`` and measure it (see the module docstring)."""
    plan = plan_launch(launch_file, {"pacing": pacing})
    runner = LaunchRunner(plan.processes, stream=io.StringIO())
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("bringup_benchmark_probe", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    states: list[float] = []
    commands: list[float] = []
    clock: list[tuple[float, float]] = []
    qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.BEST_EFFORT)
    reliable = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
    node.create_subscription(
        JointState, "joint_states", lambda _: states.append(time.monotonic()), qos
    )
    node.create_subscription(
        JointState, "joint_commands", lambda _: commands.append(time.monotonic()), reliable
    )
    node.create_subscription(
        Clock,
        "/clock",
        lambda m: clock.append((time.monotonic(), m.clock.sec + 1e-9 * m.clock.nanosec)),
        reliable,
    )
    try:
        runner.start()
        end_warmup = time.monotonic() + warmup
        while time.monotonic() < end_warmup:
            executor.spin_once(timeout_sec=0.01)
        states.clear()
        commands.clear()
        clock.clear()
        start = time.monotonic()
        while time.monotonic() < start + seconds:
            executor.spin_once(timeout_sec=0.01)
        wall = time.monotonic() - start
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=context)
        runner.request_stop()
        runner.wait()
    if len(clock) < 2 or len(commands) < 2 or len(states) < 2:
        raise RuntimeError(f"pacing {pacing}: the loop did not run during the measurement")
    simulated = clock[-1][1] - clock[0][1]
    state_times = np.array(states)
    command_times = np.array(commands)
    # The first command after each state (within 0.1 s, else the state went unanswered).
    index = np.searchsorted(command_times, state_times)
    answered = index < len(command_times)
    latency = command_times[index[answered]] - state_times[answered]
    latency = latency[latency < 0.1]
    return {
        "rate_sim": len(commands) / simulated if simulated > 0 else float("nan"),
        "rate_wall": len(commands) / wall,
        "latency_median": float(np.median(latency)) if len(latency) else float("nan"),
        "latency_p99": float(np.percentile(latency, 99)) if len(latency) else float("nan"),
        "rtf": simulated / (clock[-1][0] - clock[0][0]),
    }


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``wbm_benchmark_bringup``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--launch-file",
        type=Path,
        default=None,
        help="the simulation launch file (default: sim.launch.yaml of the installed wbm_bringup)",
    )
    parser.add_argument("--seconds", type=float, default=10.0, help="measured wall time [s]")
    parser.add_argument("--warmup", type=float, default=5.0, help="wall time before it [s]")
    args = parser.parse_args(argv)
    if args.launch_file is None:
        args.launch_file = launch_file("sim.launch.yaml")
    rows = []
    for pacing in ("lockstep", "realtime"):
        rows.append(
            (pacing, measure(args.launch_file, pacing, warmup=args.warmup, seconds=args.seconds))
        )
    header = (
        f"{'pacing':<10}{'commands/sim s':>16}{'commands/wall s':>17}"
        f"{'latency median [ms]':>21}{'latency p99 [ms]':>18}{'RTF':>7}"
    )
    print(header)
    print("-" * len(header))
    for pacing, row in rows:
        print(
            f"{pacing:<10}{row['rate_sim']:>16.1f}{row['rate_wall']:>17.1f}"
            f"{1e3 * row['latency_median']:>21.2f}{1e3 * row['latency_p99']:>18.2f}"
            f"{row['rtf']:>7.2f}"
        )
    print(
        "controller at 500 Hz (one command per 2 ms of simulated time is the target); latency: "
        "joint_states arrival to the next joint_commands arrival at a probe node"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
