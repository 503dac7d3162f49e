"""``wbm_benchmark_simulator``: how fast the simulator core and node run.

Real-time factors of the core and of the node, per contact model and integrator, for iCub
standing at a 1 ms step, and the cost of one step beside one bare Pinocchio forward-dynamics call
(the floor).

Node: the robot-interface node runs as a separate process with ``pacing:=as_fast_as_possible``
and ``hold_posture_at_start:=true`` (the servos hold the posture, the config's gains; the whole
state is published at 500 Hz of simulated time, no controller attached); its real-time factor is
the simulated time advanced on ``/clock`` per wall second, over a window after start-up.

Usage: ``wbm_benchmark_simulator [--runs N] [--duration S] [--node-window S] [--no-node]``.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time

import rclpy
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock

from wbm_description.ros.messages import seconds_from_time
from wbm_dynamics.benchmark import (
    CONTACT_MODELS,
    INTEGRATORS,
    Timing,
    core_real_time_factor,
    forward_dynamics_cost,
    standing_model,
)

GOAL = 20.0  # the issue's goal: compliant + semi-implicit Euler at least 20x real time (core)


def node_real_time_factor(contact_model: str, integrator: str, window: float, env) -> float:
    """One run of the node as a process; simulated seconds per wall second on /clock."""
    command = [
        sys.executable,
        "-m",
        "wbm_dynamics.ros.robot_interface_node",
        "--ros-args",
        "-p",
        "pacing:=as_fast_as_possible",
        "-p",
        f"simulator.contact_model:={contact_model}",
        "-p",
        f"simulator.integrator:={integrator}",
        "-p",
        "command_timeout:=0.0",
        "-p",
        "hold_posture_at_start:=true",
    ]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    node = Node("wbm_benchmark_clock")
    samples: list[tuple[float, float]] = []
    qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
    node.create_subscription(
        Clock,
        "/clock",
        lambda m: samples.append((time.monotonic(), seconds_from_time(m.clock))),
        qos,
    )
    try:
        deadline = time.monotonic() + 60.0
        while not samples and time.monotonic() < deadline and process.poll() is None:
            rclpy.spin_once(node, timeout_sec=0.1)
        if not samples:
            error = process.stderr.read().decode() if process.poll() is not None else ""
            raise RuntimeError(f"the node published no clock: {error}")
        start = time.monotonic() + 1.0  # skip start-up
        while time.monotonic() < start + window:
            rclpy.spin_once(node, timeout_sec=0.05)
        inside = [(wall, sim) for wall, sim in samples if wall >= start]
        (wall0, sim0), (wall1, sim1) = inside[0], inside[-1]
        return (sim1 - sim0) / (wall1 - wall0)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10.0)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        node.destroy_node()


def _format(timing: Timing, scale: float = 1.0, digits: int = 1) -> str:
    return (
        f"{timing.median * scale:8.{digits}f}  "
        f"[{timing.low * scale:.{digits}f}, {timing.high * scale:.{digits}f}]"
    )


def main(argv: list[str] | None = None) -> int:
    """Print the benchmark table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per measurement (median)")
    parser.add_argument("--duration", type=float, default=1.0, help="simulated s per core run")
    parser.add_argument("--node-window", type=float, default=3.0, help="wall s per node run")
    parser.add_argument("--node-runs", type=int, default=3, help="node runs per configuration")
    parser.add_argument("--no-node", action="store_true", help="core only")
    options = parser.parse_args(argv)

    model = standing_model()
    floor = forward_dynamics_cost(model, runs=options.runs)
    print("iCub standing, dt = 1 ms; median [min, max] over runs")
    print(
        f"floor: one bare pin.aba call = {floor.median * 1e6:.1f} us "
        f"[{floor.low * 1e6:.1f}, {floor.high * 1e6:.1f}]"
    )
    print()
    header = (
        f"{'contact':10s} {'integrator':20s} {'core RTF':>24s} {'step [us]':>10s} {'step/ABA':>9s}"
    )
    if not options.no_node:
        header += f" {'node RTF':>24s}"
    print(header)
    env = dict(os.environ)
    env.setdefault("ROS_DOMAIN_ID", str(random.randint(120, 200)))
    env.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    os.environ.update({k: env[k] for k in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE")})
    if not options.no_node:
        rclpy.init()
    try:
        for contact in CONTACT_MODELS:
            for integrator in INTEGRATORS:
                core = core_real_time_factor(
                    model, contact, integrator, duration=options.duration, runs=options.runs
                )
                step = 1e-3 / core.median
                row = (
                    f"{contact:10s} {integrator:20s} {_format(core)} {step * 1e6:10.1f} "
                    f"{step / floor.median:9.1f}"
                )
                if not options.no_node:
                    factors = [
                        node_real_time_factor(contact, integrator, options.node_window, env)
                        for _ in range(options.node_runs)
                    ]
                    row += f" {_format(Timing.of(factors), digits=2)}"
                print(row, flush=True)
    finally:
        if not options.no_node:
            rclpy.try_shutdown()
    print()
    compliant = core_real_time_factor(
        model, "compliant", "semi_implicit_euler", duration=options.duration, runs=options.runs
    )
    verdict = "met" if compliant.median >= GOAL else "NOT met"
    print(
        f"goal: compliant + semi-implicit Euler >= {GOAL:g}x real time in the core: "
        f"{compliant.median:.1f}x ({verdict})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
