"""``wbm_benchmark_bringup``: the simulation bringup's closed loop, timed, per pacing and rate.

Each row starts ``launch/sim.launch.yaml`` (robot interface, controller, state publisher) through
``wbm launch``'s runner with a pacing and a control rate (realtime 500 Hz and 1 kHz, lockstep
500 Hz and 1 kHz), with one extra subscriber on the graph: a probe node of this process that
subscribes ``joint_states`` and ``tf`` reliably, as RViz or a recorder would (``--probe``:
``script``, the default, deserializes every message into Python objects as an rclpy script's
callback gets them, which on the 2-core machine costs more CPU per lockstep cycle than the
state publisher; ``recorder`` takes them serialized, as rosbag2's recorder does; ``waitset``
takes them serialized on a thread waiting on them alone, without rclpy's executor, closest to
what a C++ recorder or RViz costs; several: each row once per kind, rows named
``<row>...-probe-<kind>``). After ``--warmup``
it measures for ``--seconds`` of wall time (60 s by default). ``--realtime-priority 0 50`` runs
each row once per value of the launch's ``realtime_priority`` (SCHED_FIFO of the robot
interface's and the controller's threads in realtime pacing, the launch's default 50; rows named
``<row>-fifo<priority>``, ``<row>-normal`` for 0), in turn. ``--lockstep-priority false loop``
runs each lockstep row once per value of the launch's ``lockstep_priority`` (false, its default:
normal scheduling in lockstep; loop: realtime_priority for the loop's hand-over and receive
threads; true: for every thread of both, the watchers below; rows named ``<row>-normal``,
``<row>-fifo<priority>-loop``, ``<row>-fifo<priority>-all``). ``--cpu-affinity any auto`` runs
each row once per value of the launch's ``loop_cpus`` (the CPU layout of the loop's nodes: split,
the robot interface on the second-to-last CPU and the controller on the last; shared, both on the
last; any, no affinity; auto, the launch's default: split where the loop has realtime_priority,
any otherwise; rows named ``<row>...-cpu-<layout>``). ``--cpu-dma-latency -1 0`` runs each row
once per value of the launch's ``cpu_dma_latency`` (the loop's CPU wake-up latency request
[us], -1: none; rows named ``<row>...-lat<value>``). ``--command-delay 0 1`` runs each lockstep
row once per value of the launch's ``command_delay`` in control periods (rows
``<row>...-delay<n>``): with 1 the simulator runs one sample ahead of the commands and steps
while the controller computes, each command acting one control period after its sample; the
cycle's stages then overlap (their means no longer add up to the cycle) and "command to next
step" is the command's arrival to the step it lets start, ``n`` samples later. The launch runs
a lockstep loop with a delay in normal scheduling whatever ``lockstep_priority`` says (both
sides at once keep both CPUs busy: in SCHED_FIFO they starved every other process), so such a
row is named ``-normal`` and measured once per delay.

How cycles are matched: a control cycle is one robot sample, published by the robot interface
with its stamp (robot time); the controller (trigger ``inputs``, or ``every_sample`` in lockstep
with a command delay) stamps its command with the stamp of the sample it answers. Both nodes
publish per-cycle CLOCK_MONOTONIC instants on ``~/cycle_timing``
(:mod:`wbm_description.ros.cycle_timing`); a sample is *answered* when a
``joint_commands`` with its stamp arrived at the robot interface during the run, and *in time*
when that was within one control period of its readings being ready. Printed per row:

- cycles (samples published) per wall second, answered share, in-time share;
- latency from the sample's readings ready in the robot interface to its command's arrival
  there: median, p99, max;
- RTF: robot seconds per wall second;
- what the extra subscriber received per wall second (joint_states, tf);
- CPU time per cycle of each node's process (user + system, from ``/proc``): the figure
  least sensitive to the machine's other load; and of the benchmark's own process (the probe,
  a Python subscriber deserializing every joint_states and tf, and the launch's output readers);
- the breakdown of a cycle (median, mean and p99): simulator step, publish (the robot
  contract's messages of one sample), inputs to controller (readings ready to the controller's
  step start: publish, transit and dispatch of joint_states, imu and ft/*), controller compute
  (estimator, tasks, solve), controller publish (command and odometry), command back
  (controller published to the command's arrival at the robot interface), command to next step
  (its arrival to the start of the next sample's step: in lockstep reading and applying it, in
  realtime the wait for the period). In lockstep the means of all but publish (which inputs to
  controller includes) add up to the cycle's wall time, so they show where it goes.

A machine reference (median of one ``pin.aba`` on iCub) is printed beside the table, so figures
from different machines can be compared. The launched nodes end with the benchmark on every exit
path (Ctrl-C, SIGTERM, an exception: :func:`~wbm_bringup.benchmarks.process_guard.
owned_processes`).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import rclpy
from rclpy.exceptions import InvalidHandle
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from tf2_msgs.msg import TFMessage

from wbm_bringup.benchmarks.process_guard import owned_processes
from wbm_bringup.launching import LaunchRunner, plan_launch
from wbm_bringup.share import launch_file
from wbm_description.process_cpu import process_cpu_seconds
from wbm_description.ros.cycle_timing import timing_rows
from wbm_description.ros.input_thread import InputThread

STARTUP_TIMEOUT = 180.0
"""Longest wait for the loop to close (nodes started, the controller stepping) [s]."""

ROWS = ("realtime-500", "realtime-1000", "lockstep-500", "lockstep-1000")
# Rows run only when asked: the rates a slower machine sustains (issue 15's soak).
MORE_ROWS = ("realtime-250", "realtime-200", "lockstep-250")
STAGES = (
    ("simulator step", "step"),
    ("publish", "publish"),
    ("inputs to controller", "inputs"),
    ("controller compute", "compute"),
    ("controller publish", "controller_publish"),
    ("command back", "back"),
    ("command to next step", "next_step"),
    ("total (readings to command)", "total"),
)


@dataclass
class ProbeRecord:
    """What the probe received (arrival instants of time.monotonic [s])."""

    joint_states: list[float] = field(default_factory=list)
    tf: list[float] = field(default_factory=list)
    robot_rows: list[list[float]] = field(default_factory=list)
    controller_rows: list[list[float]] = field(default_factory=list)
    recording: bool = False
    controller_batches: int = 0
    """Batches of controller timing rows seen, recording or not (the loop is up)."""

    def clear(self) -> None:
        """Forget what was received (the warm-up)."""
        self.joint_states.clear()
        self.tf.clear()
        self.robot_rows.clear()
        self.controller_rows.clear()


PROBES = ("script", "recorder", "waitset")
"""``--probe``: the extra subscriber's kind. script (the default, as in every earlier
measurement): deserialized into Python message objects by rclpy's SingleThreadedExecutor, as an
rclpy script's callback gets them (every joint_states, and every tf with its 30 transforms);
recorder: taken serialized by that executor, as rosbag2's recorder takes them (it never
deserializes); waitset: taken serialized on a thread waiting on those two subscriptions alone
(:class:`~wbm_description.ros.input_thread.InputThread`), as rosbag2's recorder (C++) does
without rclpy's executor's per-message Python cost: what the graph costs the loop with an
observer that is not itself a Python executor."""


def _probe(
    context: rclpy.Context, record: ProbeRecord, kind: str = "script"
) -> tuple[Node, InputThread | None]:
    """The probe node, and for ``waitset`` the thread taking its messages (not started)."""
    raw = kind != "script"
    node = rclpy.create_node("bringup_benchmark_probe", context=context)
    subscribe = node.create_subscription
    inputs = None
    if kind == "waitset":
        inputs = InputThread(node)

        def subscribe(msg_type, topic, callback, qos, raw):
            return inputs.subscribe(msg_type, topic, callback, qos, decode=bytes)

    reliable = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)

    def arrival(times: list[float]):
        return lambda _: times.append(time.monotonic()) if record.recording else None

    def rows(target: list[list[float]]):
        def on_rows(message: Float64MultiArray) -> None:
            if target is record.controller_rows:
                record.controller_batches += 1
            if record.recording:
                target.extend(timing_rows(message)[1])

        return on_rows

    subscribe(JointState, "joint_states", arrival(record.joint_states), reliable, raw=raw)
    subscribe(TFMessage, "tf", arrival(record.tf), reliable, raw=raw)
    node.create_subscription(
        Float64MultiArray, "/robot_interface/cycle_timing", rows(record.robot_rows), reliable
    )
    node.create_subscription(
        Float64MultiArray, "/controller/cycle_timing", rows(record.controller_rows), reliable
    )
    return node, inputs


LOCKSTEP_PRIORITIES = ("false", "loop", "true")
"""The launch's lockstep_priority values (sim.launch.yaml)."""


CPU_LAYOUTS = ("auto", "split", "shared", "any")
"""``--cpu-affinity``: the values of the launch's ``loop_cpus`` (the CPU layout of the loop's
nodes; auto, its default: split where the loop has realtime_priority, any otherwise)."""


def row_name(row: str, priority: int, lockstep: str | None, delay: int = 0) -> str:
    """A row's name: ``<row>-normal`` or ``<row>-fifo<priority>``.

    A lockstep row is ``-normal`` without ``lockstep_priority`` (None: sim.launch.yaml's
    default, false) or with a command delay (``delay`` control periods: sim.launch.yaml runs
    that loop in normal scheduling), and ``-fifo<priority>-loop`` or ``-fifo<priority>-all``
    with loop or true.
    """
    lockstep_row = row.startswith("lockstep")
    if not priority or (lockstep_row and (lockstep in (None, "false") or delay)):
        return f"{row}-normal"
    suffix = {"loop": "-loop", "true": "-all"}.get(lockstep or "", "") if lockstep_row else ""
    return f"{row}-fifo{priority}{suffix}"


def measure(
    launch: Path,
    pacing: str,
    rate: float,
    *,
    warmup: float,
    seconds: float,
    log: Path | None = None,
    realtime_priority: int = 50,
    lockstep_priority: str | None = None,
    cpu_layout: str | None = None,
    cpu_dma_latency: int | None = None,
    probe: str = "script",
    command_delay: int = 0,
) -> dict[str, float]:
    """Run the bringup with ``pacing`` at ``rate`` [Hz] and measure it (module docstring).

    ``log``: a file the nodes' output is appended to (default: discarded).
    ``realtime_priority``: the launch argument (SCHED_FIFO of the loop's nodes; 0: none).
    ``lockstep_priority``: the launch argument (None: the launch's default).
    ``cpu_layout``: the launch's ``loop_cpus`` (None: its default, auto).
    ``cpu_dma_latency``: the launch's ``cpu_dma_latency`` (None: its default, 0).
    ``probe``: the extra subscriber's kind (:data:`PROBES`).
    ``command_delay``: the launch's ``command_delay`` in control periods (lockstep: the robot
    runs that many samples ahead of the commands; 0: the launch's default, none).
    """
    arguments = {
        "pacing": pacing,
        "control_rate": f"{rate:g}",
        "publish_rate": f"{rate:g}",
        "realtime_priority": str(realtime_priority),
    }
    if lockstep_priority is not None:
        arguments["lockstep_priority"] = lockstep_priority
    if cpu_layout is not None:
        arguments["loop_cpus"] = cpu_layout
    if cpu_dma_latency is not None:
        arguments["cpu_dma_latency"] = str(cpu_dma_latency)
    if command_delay:
        arguments["command_delay"] = repr(command_delay / rate)
    plan = plan_launch(launch, arguments)
    output = io.StringIO()
    runner = LaunchRunner(plan.processes, stream=output)
    context = rclpy.Context()
    rclpy.init(context=context)
    record = ProbeRecord()
    node, probe_inputs = _probe(context, record, probe)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)

    def spin() -> None:
        # InvalidHandle: the executor shut down (below) while it was between two callbacks.
        with contextlib.suppress(ExternalShutdownException, InvalidHandle):
            executor.spin()

    spinner = threading.Thread(target=spin, daemon=True)
    if probe_inputs is not None:
        probe_inputs.start()
    print(f"{pacing} {rate:g} Hz: warm-up {warmup:g} s, then {seconds:g} s", file=sys.stderr)
    with owned_processes(runner):
        try:
            runner.start()
            spinner.start()
            deadline = time.monotonic() + STARTUP_TIMEOUT
            while record.controller_batches == 0:  # the loop closed: the controller steps
                ended = any(c.poll() is not None for c in runner.children)
                if time.monotonic() > deadline or ended:
                    raise RuntimeError(f"{pacing} {rate:g} Hz: the loop did not start")
                time.sleep(0.2)
            time.sleep(warmup)
            labels = [spec.label for spec in plan.processes]
            cpu_before = [process_cpu_seconds(child.pid) for child in runner.children]
            own_before = process_cpu_seconds(os.getpid())
            record.clear()
            record.recording = True
            start = time.monotonic()
            time.sleep(seconds)
            record.recording = False
            wall = time.monotonic() - start
            cpu_used = {
                label: process_cpu_seconds(child.pid) - before
                for label, child, before in zip(labels, runner.children, cpu_before, strict=True)
            }
            # This process: the probe (the extra subscriber) and the launch's output readers.
            cpu_used["benchmark (probe)"] = process_cpu_seconds(os.getpid()) - own_before
            time.sleep(0.5)  # the last batches of timing rows
        finally:
            if probe_inputs is not None:
                probe_inputs.stop()
            executor.shutdown(timeout_sec=5.0)
            spinner.join(timeout=5.0)
            node.destroy_node()
            rclpy.try_shutdown(context=context)
            runner.request_stop()
            runner.wait()
            if log is not None:
                with log.open("a") as file:
                    file.write(f"===== {pacing} {rate:g} Hz\n{output.getvalue()}")
    return summarize(
        record, rate, wall, cpu_used, lead=command_delay if pacing == "lockstep" else 0
    )


def summarize(
    record: ProbeRecord,
    rate: float,
    wall: float,
    cpu_used: dict[str, float] | None = None,
    lead: int = 0,
) -> dict[str, float]:
    """The row's figures from the probe's record (module docstring).

    ``cpu_used``: CPU time each node's process used during the measurement [s], by node name;
    reported per cycle (``cpu_<node>`` [s], the figure least sensitive to other load).
    ``lead``: samples a lockstep robot runs ahead of the commands (``command_delay`` in control
    periods): the command of sample k lets the step to sample k + lead + 1 start.
    """
    robot = np.array(record.robot_rows).reshape(-1, 5)
    samples = robot[(robot[:, 1] == 0.0) & (robot[:, 2] > 0.0)]  # publications after a step
    commands = robot[robot[:, 1] == 1.0]
    if len(samples) < 2:
        raise RuntimeError(f"{rate:g} Hz: the loop did not run during the measurement")
    controller = np.array(record.controller_rows).reshape(-1, 5)
    command_arrival = {int(s): t for s, t in zip(commands[:, 0], commands[:, 2], strict=True)}
    steps = {int(row[0]): row for row in controller}
    stamps = samples[:, 0].astype(np.int64)
    ready = samples[:, 3]
    arrived = np.array([command_arrival.get(int(s), np.nan) for s in stamps])
    answered = np.isfinite(arrived)
    total = arrived - ready
    in_time = answered & (total <= 1.0 / rate)
    stages: dict[str, list[float]] = {key: [] for _, key in STAGES}
    for sample, stamp, back_at in zip(samples, stamps, arrived, strict=True):
        stages["step"].append(sample[3] - sample[2])
        stages["publish"].append(sample[4] - sample[3])
        row = steps.get(int(stamp))
        if row is None:
            continue
        stages["inputs"].append(row[2] - sample[3])
        stages["compute"].append(row[3] - row[2])
        stages["controller_publish"].append(row[4] - row[3])
        if np.isfinite(back_at):
            stages["back"].append(back_at - row[4])
            stages["total"].append(back_at - sample[3])
    # The command's arrival to the step it lets start (lockstep: reading and applying it; in
    # realtime the wait for the next period).
    after = samples[1 + lead :, 2] - arrived[: len(arrived) - 1 - lead]
    stages["next_step"] = after[np.isfinite(after)].tolist()
    simulated = (stamps[-1] - stamps[0]) * 1e-9
    result = {
        "cycles_wall": len(samples) / wall,
        "answered": float(np.mean(answered)),
        "in_time": float(np.mean(in_time)),
        "rtf": simulated / (ready[-1] - ready[0]),
        "probe_joint_states": len(record.joint_states) / wall,
        "probe_tf": len(record.tf) / wall,
    }
    for label, used in (cpu_used or {}).items():
        result[f"cpu_{label}"] = used / len(samples)
    latency = total[answered]
    for name, q in (("median", 50), ("p99", 99), ("max", 100)):
        result[f"latency_{name}"] = float(np.percentile(latency, q)) if len(latency) else np.nan
    for _, key in STAGES:
        values = np.array(stages[key])
        result[f"{key}_median"] = float(np.median(values)) if len(values) else np.nan
        result[f"{key}_mean"] = float(np.mean(values)) if len(values) else np.nan
        result[f"{key}_p99"] = float(np.percentile(values, 99)) if len(values) else np.nan
    return result


def machine_reference() -> float:
    """Median of one ``pin.aba`` on iCub at a random state [s] (a per-machine yardstick)."""
    import pinocchio as pin

    from wbm_description.registry import load_robot
    from wbm_description.whole_body_model import WholeBodyModel

    model = WholeBodyModel.from_config(load_robot("icub")).model
    data = model.createData()
    rng = np.random.default_rng(0)
    q = pin.randomConfiguration(
        model, -np.ones(model.nq) * 0.5 + pin.neutral(model), np.ones(model.nq) * 0.5
    )
    q = pin.normalize(model, q)
    v, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
    times = []
    for _ in range(2000):
        t0 = time.perf_counter()
        pin.aba(model, data, q, v, tau)
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def transport_costs(repeats: int = 7, calls: int = 300) -> list[tuple[str, float, float]]:
    """CPU time per call of the loop's message work on iCub, old converters beside new fillers.

    Returns (label, median [s], spread max - min [s]) per row, measured in this process. The
    rows: the robot contract's messages of one sample (clock, joint_states, imu, two ft,
    ground truth odometry) built and serialized (converters, then rclpy's serialization, as a
    publication of messages) or written serialized (``RobotMessages``); the take of each
    received message, rclpy's deserialization into a message beside the
    :mod:`~wbm_description.ros.cdr` view; the controller's joint_states parse, its command
    message, and the state publisher's TF of one joint_states (kinematics and message), which
    ``publish_frequency`` now pays at 50 Hz instead of at every sample.
    """
    from functools import partial

    from geometry_msgs.msg import WrenchStamped
    from nav_msgs.msg import Odometry
    from rclpy.serialization import deserialize_message as deserialize
    from rclpy.serialization import serialize_message
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import Imu

    from wbm_control.ros.messages import (
        CommandMessage,
        JointStateReader,
        command_message,
        joint_state_from_message,
    )
    from wbm_description.registry import load_robot
    from wbm_description.robot_io import ImuReading, JointCommand, RobotReadings
    from wbm_description.ros import cdr
    from wbm_description.ros.cdr_writer import TfMessageWriter
    from wbm_description.ros.messages import joint_state_message, odometry_message
    from wbm_description.tf_tree import TfTree
    from wbm_description.whole_body_model import WholeBodyModel
    from wbm_dynamics.backends.backend import BaseState
    from wbm_dynamics.ros.robot_messages import (
        RobotMessages,
        clock_message,
        imu_message,
        wrench_stamped_message,
    )

    model = WholeBodyModel.from_config(load_robot("icub"))
    names, n = list(model.joint_names), model.ndof
    rng = np.random.default_rng(0)
    quaternion = rng.normal(size=4)
    quaternion /= np.linalg.norm(quaternion)
    imu = ImuReading(quaternion, rng.normal(size=3), rng.normal(size=3))
    wrenches = {"left_foot": rng.normal(size=6), "right_foot": rng.normal(size=6)}
    readings = RobotReadings(
        1.0, rng.normal(size=n), rng.normal(size=n), rng.normal(size=n), imu, wrenches
    )
    base = BaseState(np.r_[rng.normal(size=3), quaternion], rng.normal(size=6))

    def converters() -> None:  # and rclpy's serialization, as Publisher.publish of a message
        serialize_message(clock_message(1.0))
        serialize_message(
            joint_state_message(
                names,
                readings.joint_positions,
                readings.joint_velocities,
                readings.joint_efforts,
                stamp_seconds=1.0,
            )
        )
        serialize_message(imu_message(imu, frame="imu", stamp_seconds=1.0))
        for name, wrench in wrenches.items():
            serialize_message(wrench_stamped_message(wrench, frame=name, stamp_seconds=1.0))
        serialize_message(
            odometry_message(
                base.configuration,
                base.velocity,
                world_frame="world",
                base_frame="root",
                stamp_seconds=1.0,
            )
        )

    messages = RobotMessages(
        names,
        imu_frame="imu",
        ft_frames={k: k for k in wrenches},
        base_frame="root",
        world_frame="world",
    )
    state = joint_state_message(
        names, readings.joint_positions, readings.joint_velocities, readings.joint_efforts
    )
    reader = JointStateReader(model.joint_indices, n)
    command = JointCommand(position=None, velocity=None, effort=rng.normal(size=n))
    filler = CommandMessage(names)
    tree = TfTree(model, world_frame="world", frame_prefix="")
    q = model.neutral_configuration()
    tf = TfMessageWriter([(t.parent, t.child) for t in tree.moving_transforms(q)])

    def tf_of_one_sample() -> None:  # as the state publisher: kinematics, then serialized
        translations, rotations = tree.moving_transform_arrays(q)
        tf.write(1_000_000_000, translations, rotations)

    messages.fill(1.0, readings, base)
    serialized = {
        "joint_states": (messages.joint_state, JointState),
        "imu": (messages.imu, Imu),
        "ft": (messages.wrenches["left_foot"], WrenchStamped),
        "odometry": (messages.odometry, Odometry),
        "clock": (messages.clock, Clock),
    }
    takes = []
    for topic, (data, msg_type) in serialized.items():
        view = cdr.decoder(msg_type)
        takes.append(
            (f"{topic} take: rclpy deserialization", partial(deserialize, data, msg_type))
        )
        takes.append((f"{topic} take: cdr view", partial(view, data)))
    cases = (
        ("robot messages of a sample: converters, serialized", converters),
        (
            "robot messages of a sample: RobotMessages.fill",
            lambda: messages.fill(1.0, readings, base),
        ),
        *takes,
        (
            "joint_states parse: joint_state_from_message",
            lambda: joint_state_from_message(state, model.joint_indices, n),
        ),
        ("joint_states parse: JointStateReader.read", lambda: reader.read(state)),
        (
            "command: command_message, serialized",
            lambda: serialize_message(command_message(names, command, 1.0)),
        ),
        ("command: CommandMessage.fill", lambda: filler.fill(command, 1_000_000_000)),
        ("state publisher TF of one joint_states", tf_of_one_sample),
    )
    rows = []
    for label, call in cases:
        runs = []
        for _ in range(repeats):
            start = time.process_time()
            for _ in range(calls):
                call()
            runs.append((time.process_time() - start) / calls)
        rows.append((label, float(np.median(runs)), max(runs) - min(runs)))
    return rows


def print_table(rows: list[tuple[str, dict[str, float]]]) -> None:
    """The figures of every row, then the breakdown of a cycle."""
    header = (
        f"{'row':<21}{'cycles/wall s':>14}{'answered %':>12}{'in time %':>11}"
        f"{'lat med [ms]':>14}{'p99 [ms]':>10}{'max [ms]':>10}{'RTF':>7}"
        f"{'probe js/s':>12}{'probe tf/s':>12}"
    )
    print(header)
    print("-" * len(header))
    for name, r in rows:
        print(
            f"{name:<21}{r['cycles_wall']:>14.1f}{100 * r['answered']:>12.2f}"
            f"{100 * r['in_time']:>11.2f}{1e3 * r['latency_median']:>14.2f}"
            f"{1e3 * r['latency_p99']:>10.2f}{1e3 * r['latency_max']:>10.2f}{r['rtf']:>7.2f}"
            f"{r['probe_joint_states']:>12.1f}{r['probe_tf']:>12.1f}"
        )
    print()
    print("breakdown of a cycle, median / mean / p99 [ms]")
    header = f"{'stage':<30}" + "".join(f"{name:>29}" for name, _ in rows)
    print(header)
    print("-" * len(header))
    for label, key in STAGES:
        cells = "".join(
            f"{1e3 * r[f'{key}_median']:>12.3f} /{1e3 * r[f'{key}_mean']:>7.3f} /"
            f"{1e3 * r[f'{key}_p99']:>7.3f}"
            for _, r in rows
        )
        print(f"{label:<30}{cells}")
    nodes = sorted({key[4:] for _, r in rows for key in r if key.startswith("cpu_")})
    if nodes:
        print()
        print("CPU time per cycle [ms] (user + system of each node's process)")
        for node in nodes:
            cells = "".join(f"{1e3 * r.get(f'cpu_{node}', np.nan):>29.3f}" for _, r in rows)
            print(f"{node:<30}{cells}")


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``wbm_benchmark_bringup``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--launch-file",
        type=Path,
        default=None,
        help="the simulation launch file (default: sim.launch.yaml of the installed wbm_bringup)",
    )
    parser.add_argument("--seconds", type=float, default=60.0, help="measured wall time [s]")
    parser.add_argument("--warmup", type=float, default=5.0, help="wall time before it [s]")
    parser.add_argument(
        "--rows",
        nargs="+",
        choices=ROWS + MORE_ROWS,
        default=list(ROWS),
        help=f"which pacing-rate rows to run (default: {' '.join(ROWS)})",
    )
    parser.add_argument(
        "--realtime-priority",
        type=int,
        nargs="+",
        default=[50],
        help="the launch's realtime_priority (SCHED_FIFO of the loop's nodes, 0: none; the "
        "launch's default 50); several: each row once per value, in turn (e.g. 0 50)",
    )
    parser.add_argument(
        "--lockstep-priority",
        nargs="+",
        choices=LOCKSTEP_PRIORITIES,
        default=None,
        help="the launch's lockstep_priority for the lockstep rows (false: normal scheduling, "
        "the launch's default; loop: the loop's hand-over and receive threads in SCHED_FIFO; "
        "true: every thread of both loop nodes); several: each lockstep row once per value",
    )
    parser.add_argument(
        "--cpu-affinity",
        nargs="+",
        choices=CPU_LAYOUTS,
        default=None,
        help="the launch's loop_cpus, the CPU layout of the loop's nodes (split: the robot "
        "interface on the second-to-last CPU, the controller on the last; shared: both on the "
        "last; any: no affinity; auto, the launch's default: split where the loop has "
        "realtime_priority, any otherwise); several: each row once per value, in turn "
        "(e.g. any auto)",
    )
    parser.add_argument(
        "--cpu-dma-latency",
        type=int,
        nargs="+",
        default=None,
        help="the launch's cpu_dma_latency (the loop's CPU wake-up latency request [us], the "
        "launch's default 0; -1: none); several: each row once per value, in turn (e.g. -1 0)",
    )
    parser.add_argument(
        "--probe",
        nargs="+",
        choices=PROBES,
        default=None,
        help="the extra subscriber to joint_states and tf: script (the default), deserialized "
        "into Python messages as an rclpy script gets them; recorder, taking them serialized "
        "as rosbag2 records them; waitset, taking them serialized on a wait-set thread of "
        "their own (no rclpy executor); several: each row once per kind, in turn (rows "
        "-probe-<kind>)",
    )
    parser.add_argument(
        "--command-delay",
        type=int,
        nargs="+",
        default=None,
        help="the launch's command_delay for the lockstep rows, in control periods (0: none, "
        "the launch's default; 1: the simulator one sample ahead of the commands, stepping "
        "while the controller computes); several: each lockstep row once per value "
        "(rows -delay<n>)",
    )
    parser.add_argument(
        "--log", type=Path, default=None, help="append the nodes' output to this file"
    )
    parser.add_argument(
        "--transport-costs",
        action="store_true",
        help="only print the CPU time of the loop's message work, old converters beside the "
        "in-place fillers (no launch)",
    )
    parser.add_argument(
        "--executor-costs",
        action="store_true",
        help="only print the cost of taking one sample's messages in a controller-sized node, "
        "rclpy's executor beside the input thread (no launch)",
    )
    parser.add_argument(
        "--reader-costs",
        action="store_true",
        help="only print what a reader process (best effort, reliable; 0, 1 or 3) costs the "
        "publishing thread per publish of a joint_states (no launch)",
    )
    parser.add_argument(
        "--controller-loop",
        action="store_true",
        help="only run the controller node alone in a lockstep loop played from this process: "
        "its CPU time per cycle, per thread, and the latency (no simulator, no other node)",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="repeats of --executor-costs, --reader-costs, --controller-loop",
    )
    args = parser.parse_args(argv)
    if args.controller_loop:
        from wbm_bringup.ros.benchmark_controller_loop import print_controller_loop

        print_controller_loop(args.repeats)
        print(
            f"machine reference: one pin.aba on iCub {1e6 * machine_reference():.1f} us (median)"
        )
        return 0
    if args.executor_costs:
        from wbm_bringup.ros.benchmark_transport import print_executor_costs

        print_executor_costs(args.repeats)
        print(
            f"machine reference: one pin.aba on iCub {1e6 * machine_reference():.1f} us (median)"
        )
        return 0
    if args.reader_costs:
        from wbm_bringup.ros.benchmark_readers import print_reader_costs

        print_reader_costs(args.repeats)
        print(
            f"machine reference: one pin.aba on iCub {1e6 * machine_reference():.1f} us (median)"
        )
        return 0
    if args.transport_costs:
        for label, median, spread in transport_costs():
            print(f"{label:<50}{1e6 * median:>9.1f} us CPU (spread {1e6 * spread:.1f})")
        print(
            f"machine reference: one pin.aba on iCub {1e6 * machine_reference():.1f} us (median)"
        )
        return 0
    if args.launch_file is None:
        args.launch_file = launch_file("sim.launch.yaml")
    for priority in args.realtime_priority:
        if not 0 <= priority <= 99:
            parser.error(f"--realtime-priority: expected 0..99, got {priority}")
    for delay in args.command_delay or []:
        if delay < 0:
            parser.error(f"--command-delay: expected control periods >= 0, got {delay}")
    for latency in args.cpu_dma_latency or []:
        if latency < -1:
            parser.error(f"--cpu-dma-latency: expected an integer >= -1, got {latency}")
    rows = []
    measured: set[str] = set()
    for row in args.rows:
        pacing, rate = row.split("-")
        variants = [None]
        if pacing == "lockstep" and args.lockstep_priority:
            variants = args.lockstep_priority
        layouts = args.cpu_affinity or [None]
        latencies = args.cpu_dma_latency or [None]
        probes = args.probe or [None]
        delays = (args.command_delay or [None]) if pacing == "lockstep" else [None]
        for priority, lockstep, layout, latency, probe, delay in itertools.product(
            args.realtime_priority, variants, layouts, latencies, probes, delays
        ):
            name = row_name(row, priority, lockstep, delay or 0)
            if layout is not None:
                name += f"-cpu-{layout}"
            if latency is not None:
                name += f"-lat{latency}"
            if probe is not None and len(probes) > 1:
                name += f"-probe-{probe}"
            if delay is not None:
                name += f"-delay{delay}"
            if name in measured:
                continue  # the launch runs it as a row already measured (normal scheduling)
            measured.add(name)
            rows.append(
                (
                    name,
                    measure(
                        args.launch_file,
                        pacing,
                        float(rate),
                        warmup=args.warmup,
                        seconds=args.seconds,
                        log=args.log,
                        realtime_priority=priority,
                        lockstep_priority=lockstep,
                        cpu_layout=layout,
                        cpu_dma_latency=latency,
                        probe=probe or "script",
                        command_delay=delay or 0,
                    ),
                )
            )
    print_table(rows)
    print()
    print(
        f"machine reference: one pin.aba on iCub {1e6 * machine_reference():.1f} us (median); "
        "probe: an extra reliable subscriber to joint_states and tf (recorder, waitset: taken "
        "serialized, as rosbag2 records; script: deserialized into Python messages)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
