"""The controller node alone in a lockstep loop: CPU time and latency per cycle, per thread.

``wbm_benchmark_bringup --controller-loop`` starts ``wbm_controller`` (iCub, torque mode,
trigger ``inputs``, use_sim_time) as its own process and plays the robot side from this
process: per cycle it publishes one sample (``/clock``, ``joint_states``, ``imu``, ``ft/*``,
reliable as the robot interface does) and waits for the ``joint_commands`` with its stamp. The
sample is our simulator's iCub after 0.5 s holding its posture, the same every cycle with a new
stamp, so the controller's work is the same in every cycle. No simulator step, no other node:
what is measured is the controller's transport and step. Printed: the controller process's CPU
time per cycle (user + system, from ``/proc``) and per thread (the main thread, where the
executor spins; the other Python threads, where the input thread takes the inputs and steps;
the DDS threads), the latency from the first publish to the command's arrival
(median, p99), and the driver's own CPU per cycle.

Each repeat runs the loop twice: with the controller, and with the null controller
(:mod:`wbm_bringup.ros.null_controller`: the same messages taken and answered, nothing
computed): the second row is the floor of the topics, middleware and processes, the difference
the controller's own work. Beside them the simulator's step of one control period on this
sample (our simulator, iCub, in this process) and the lockstep ceiling they give: a control
period over (that step + the null controller's latency), the real-time factor lockstep could
reach with a controller that took no time.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import rclpy
from geometry_msgs.msg import WrenchStamped
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState

from wbm_bringup.share import config_directory
from wbm_description.registry import load_robot
from wbm_description.whole_body_model import WholeBodyModel
from wbm_dynamics.backends.plugins import create_backend
from wbm_dynamics.ros.robot_messages import RobotMessages

PERIOD = 0.002  # [s] of robot time per cycle (500 Hz)
START_TIMEOUT = 180.0  # [s] of wall time for the controller to answer a first sample


def thread_cpu_seconds(pid: int) -> dict[str, float]:
    """CPU time (user + system) of each thread of a process so far [s], by 'name:tid'."""
    ticks = os.sysconf("SC_CLK_TCK")
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            text = (task / "stat").read_text()
        except OSError:
            continue  # the thread ended
        name = text[text.index("(") + 1 : text.rindex(")")]
        fields = text.rsplit(")", 1)[1].split()
        out[f"{name}:{task.name}"] = (int(fields[11]) + int(fields[12])) / ticks
    return out


def controller_loop(
    cycles: int = 1000, warmup: int = 200, *, null: bool = False
) -> dict[str, float]:
    """Run the loop (module docstring); the figures [s] by name.

    ``null``: the null controller instead of ``wbm_controller``; the figures then include the
    simulator's step of one control period ("simulator_step", median of ``cycles`` steps).
    """
    model = WholeBodyModel.from_config(load_robot("icub"))
    backend = create_backend("simulator", model, None)
    backend.write(backend.hold_posture_command())
    backend.advance(0.5)
    readings = backend.read()
    description = backend.description
    messages = RobotMessages(
        list(description.joint_names),
        imu_frame=description.imu_frame,
        ft_frames=dict(description.ft_sensor_frames),
        base_frame=description.base_frame,
        world_frame="world",
    )
    simulator_step = np.nan
    if null:
        command = backend.hold_posture_command()
        steps = np.empty(cycles)
        for i in range(cycles):
            start = time.perf_counter()
            backend.write(command)
            backend.advance(PERIOD)
            backend.read()
            steps[i] = time.perf_counter() - start
        simulator_step = float(np.median(steps))
    backend.close()
    config = config_directory("icub") / "controller.yaml"
    if null:
        command_line = [sys.executable, "-m", "wbm_bringup.ros.null_controller"]
        command_line += ["--ft", *description.ft_sensor_frames]
    else:
        command_line = ["wbm_controller", "--ros-args", "--params-file", str(config)]
        command_line += ["-p", "trigger:=inputs", "-p", "use_sim_time:=true"]
        command_line += ["-r", "__node:=controller", "--log-level", "warn"]
    child = subprocess.Popen(command_line, stdin=subprocess.DEVNULL)
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("controller_loop_driver", context=context)
    reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
    # The serialized messages of a sample (RobotMessages), read after each fill.
    publishers = [
        (node.create_publisher(Clock, "/clock", reliable), lambda: messages.clock),
        (
            node.create_publisher(JointState, "joint_states", reliable),
            lambda: messages.joint_state,
        ),
        (node.create_publisher(Imu, "imu", reliable), lambda: messages.imu),
    ]
    for name in description.ft_sensor_frames:
        publishers.append(
            (
                node.create_publisher(WrenchStamped, f"ft/{name}", reliable),
                lambda name=name: messages.wrenches[name],
            )
        )
    answered: dict[int, float] = {}
    arrived = threading.Event()

    def on_command(message: JointState) -> None:
        stamp = message.header.stamp
        answered[stamp.sec * 1_000_000_000 + stamp.nanosec] = time.perf_counter()
        arrived.set()

    node.create_subscription(JointState, "joint_commands", on_command, reliable)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)

    def spin() -> None:
        try:
            executor.spin()
        except ExternalShutdownException:
            pass

    spinner = threading.Thread(target=spin, daemon=True)
    spinner.start()
    robot_time = [1.0]

    def cycle(timeout: float = 2.0) -> float:
        robot_time[0] += PERIOD
        messages.fill(robot_time[0], readings, None)
        arrived.clear()
        start = time.perf_counter()
        for publisher, message in publishers:
            publisher.publish(message())
        stamp = round(robot_time[0] * 1e9)
        while stamp not in answered and time.perf_counter() < start + timeout:
            arrived.wait(0.05)
            arrived.clear()
        return answered.get(stamp, np.nan) - start

    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not np.isfinite(cycle(0.5)):
            if time.monotonic() > deadline or child.poll() is not None:
                raise RuntimeError("the controller did not answer")
        for _ in range(warmup):
            cycle()
        threads_before = thread_cpu_seconds(child.pid)
        driver_before = time.process_time()
        latencies = np.array([cycle() for _ in range(cycles)])
        driver = (time.process_time() - driver_before) / cycles
        threads_after = thread_cpu_seconds(child.pid)
    finally:
        child.send_signal(2)
        try:
            child.wait(10.0)
        except subprocess.TimeoutExpired:
            child.kill()
        executor.shutdown(timeout_sec=2.0)
        spinner.join(2.0)
        node.destroy_node()
        rclpy.try_shutdown(context=context)
    per_thread = {
        name: (used - threads_before.get(name, 0.0)) / cycles
        for name, used in threads_after.items()
    }
    main = sum(v for k, v in per_thread.items() if k.endswith(f":{child.pid}"))
    dds = sum(v for k, v in per_thread.items() if k.startswith("dds"))
    total = sum(per_thread.values())
    ok = np.isfinite(latencies)
    result = {
        "answered": float(ok.mean()),
        "cpu": total,
        "cpu_main_thread": main,
        "cpu_other_threads": max(total - main - dds, 0.0),
        "cpu_dds_threads": dds,
        "latency_median": float(np.median(latencies[ok])),
        "latency_p99": float(np.percentile(latencies[ok], 99)),
        "driver_cpu": driver,
        "simulator_step": simulator_step,
    }
    return result


def print_controller_loop(repeats: int = 3, cycles: int = 1000) -> None:
    """Figures of :func:`controller_loop` per repeat and their medians.

    Each repeat runs the controller, then the null controller; then the simulator's step and
    the lockstep ceiling.
    """
    keys = (
        ("answered", "answered %", 100.0),
        ("cpu", "CPU/cycle", 1e3),
        ("cpu_main_thread", "main thread", 1e3),
        ("cpu_other_threads", "other threads", 1e3),
        ("cpu_dds_threads", "DDS threads", 1e3),
        ("latency_median", "lat median", 1e3),
        ("latency_p99", "lat p99", 1e3),
        ("driver_cpu", "driver CPU", 1e3),
    )
    print(
        f"controller alone in lockstep, iCub torque mode, {cycles} cycles per repeat [ms]; "
        "null: the same messages, nothing computed"
    )
    print(f"{'repeat':<14}" + "".join(f"{label:>14}" for _, label, _ in keys))
    rows: dict[str, list[dict[str, float]]] = {"controller": [], "null": []}
    for repeat in range(repeats):
        for name in rows:
            row = controller_loop(cycles, null=name == "null")
            rows[name].append(row)
            label = f"{repeat + 1} {name}"
            print(f"{label:<14}" + "".join(f"{row[k] * s:>14.3f}" for k, _, s in keys))
    for name, runs in rows.items():
        print(
            f"{'median ' + name:<14}"
            + "".join(f"{np.median([r[k] for r in runs]) * s:>14.3f}" for k, _, s in keys)
        )
    step = float(np.median([r["simulator_step"] for r in rows["null"]]))
    floor = float(np.median([r["latency_median"] for r in rows["null"]]))
    print(
        f"simulator step of one control period ({PERIOD * 1e3:.0f} ms, iCub standing, this "
        f"process): median {step * 1e3:.3f} ms; lockstep ceiling with a controller taking no "
        f"time: {PERIOD * 1e3:.3f} / ({step * 1e3:.3f} + {floor * 1e3:.3f}) ms = "
        f"{PERIOD / (step + floor):.2f}x real time"
    )
