"""``wbm_benchmark_soak``: the realtime simulation bringup for a long time, sampled every minute.

Starts ``launch/sim.launch.yaml`` (realtime pacing by default) through ``wbm launch``'s runner
and, from a probe node, for ``--minutes`` of wall time:

- moves the left hand target on a circle around its initial position (``targets/left_hand``,
  a new target every ``--target-every`` s of simulated time);
- pushes the chest every ``--push-every`` s of simulated time (``apply_wrench``, directions in
  turn: front, left, back, right; ``--push-force`` N for the robot interface's push_duration);
- every minute of wall time, samples the resident memory of each node process, the
  ``joint_states`` and ``joint_commands`` received in the minute (cycles answered), the lowest
  true base height, and the safe-hold diagnostics (the controller's ``safe`` value true) seen
  outside the ``--settle`` s after pushes; the other non-OK diagnostics (a QP fallback level:
  the robot is controlled, not held) are counted apart, and every non-OK message is counted by
  reason (:class:`~wbm_bringup.benchmarks.soak.ReasonCounts`) and printed at the end;
- when the robot falls (base ``--fall-drop`` below its height at t = 0) or the simulation
  diverges (the robot interface says so), counts the fall and calls
  the simulator's ``reset`` (the controller starts again by itself), so that the rest of the run
  still measures a standing robot.

It prints one row per minute, then the verdict (:func:`~wbm_bringup.benchmarks.soak.summarize`):
memory flat within 5 %, no fall, no safe hold outside pushes; exit code 1 when it fails. A
machine reference (one ``pin.aba`` on the robot) is printed beside the rows.

Run: ``wbm_benchmark_soak --minutes 30`` (``--minutes 2`` for a quick look).
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
import pinocchio as pin
import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import PoseStamped, WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

from wbm_bringup.benchmarks.process_guard import owned_processes
from wbm_bringup.benchmarks.soak import (
    LaunchLog,
    ReasonCounts,
    SoakMinute,
    SoakSchedule,
    resident_memory,
    summarize,
)
from wbm_bringup.launching import LaunchRunner, plan_launch
from wbm_bringup.share import config_directory, launch_file
from wbm_control.controller_settings import ControllerSettings
from wbm_description.registry import load_robot
from wbm_description.ros.messages import time_from_seconds
from wbm_description.rotation_quaternion import quaternion_of_rotation
from wbm_description.whole_body_model import WholeBodyModel

HAND_TASK = "left_hand"
RESET_WAIT = 10.0  # [s of wall time] samples older than a reset are ignored at most this long
PUSH_FRAME = "chest"


def _seconds(stamp) -> float:
    return stamp.sec + 1e-9 * stamp.nanosec


def aba_reference(model: WholeBodyModel, repeats: int = 2000) -> float:
    """Median time of one ``pin.aba`` on the model at its initial configuration [s]."""
    q = model.initial_configuration()
    v = np.zeros(model.nv)
    tau = np.zeros(model.nv)
    data = model.model.createData()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        pin.aba(model.model, data, q, v, tau)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


class SoakProbe:
    """The probe node: counts, heights, diagnostics; sends the hand target and the pushes."""

    def __init__(
        self,
        schedule: SoakSchedule,
        orientation: pin.SE3,
        *,
        target_every: float,
        fall_drop: float,
        log: LaunchLog,
    ):
        self.schedule = schedule
        self.log = log
        self._divergences = 0
        self.fall_drop = fall_drop
        self.orientation = orientation.rotation.copy()
        self.target_every = target_every
        self.context = rclpy.Context()
        rclpy.init(args=[], context=self.context)  # not the benchmark's own arguments
        self.node = rclpy.create_node("soak_probe", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.sim_time = 0.0
        self.states = self.commands = 0
        self.lowest = math.inf
        self.height: float | None = None
        self.safe_outside = 0
        self.fallback_outside = 0  # non-OK diagnostics that are not safe holds (QP fallback)
        self.reasons = ReasonCounts()
        self.push_times: list[float] = []  # since robot time last (re)started
        self.pushes = 0
        self.pushes_in_minute = 0
        self.first_height: float | None = None
        self.falls = self.falls_in_minute = 0
        self._reset_future = None
        # After a fall: the stamp of the last odometry sample before the reset, until the odometry
        # stamps go back (the reset); None otherwise.
        self._fall_stamp: float | None = None
        self._last_odom_stamp = -math.inf
        self._reset_wall = 0.0
        self._next_target = 0.0
        best_effort = QoSProfile(depth=100, reliability=ReliabilityPolicy.BEST_EFFORT)
        reliable = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
        node = self.node
        node.create_subscription(Clock, "/clock", self._on_clock, reliable)
        node.create_subscription(JointState, "joint_states", self._on_state, best_effort)
        node.create_subscription(JointState, "joint_commands", self._on_command, reliable)
        node.create_subscription(Odometry, "ground_truth/odom", self._on_odom, reliable)
        node.create_subscription(DiagnosticArray, "diagnostics", self._on_diagnostics, reliable)
        self.target_publisher = node.create_publisher(
            PoseStamped, f"targets/{HAND_TASK}", reliable
        )
        self.push_publisher = node.create_publisher(WrenchStamped, "apply_wrench", reliable)
        self.reset_client = node.create_client(Trigger, "reset")

    def _on_clock(self, message: Clock) -> None:
        t = _seconds(message.clock)
        if t < self.sim_time - 0.5:  # robot time restarted (reset)
            self.push_times.clear()
            self._next_target = 0.0
        self.sim_time = t

    def _on_state(self, _: JointState) -> None:
        self.states += 1

    def _on_command(self, _: JointState) -> None:
        self.commands += 1

    def _on_odom(self, message: Odometry) -> None:
        stamp = _seconds(message.header.stamp)
        went_back = stamp < self._last_odom_stamp
        self._last_odom_stamp = stamp
        if self._fall_stamp is not None:
            # The odometry of one publisher arrives in order: the samples still queued when the
            # fall was seen come first, then the stamps go back (the reset). A fixed threshold
            # (the clock's time at the fall) let queued pre-reset samples of a fallen robot
            # through, which counted the same fall again and reset again.
            if not went_back:
                return  # a sample from before the reset
            self._fall_stamp = None
        self.height = message.pose.pose.position.z
        self.lowest = min(self.lowest, self.height)
        if self.first_height is None:
            self.first_height = self.height

    def _on_diagnostics(self, message: DiagnosticArray) -> None:
        for status in message.status:
            if status.level == DiagnosticStatus.OK:
                continue
            t = _seconds(message.header.stamp)
            outside = not self.schedule.after_push(t, self.push_times)
            safe = any(v.key == "safe" and v.value == "true" for v in status.values)
            self.reasons.add(status.message, safe=safe, outside=outside)
            if not outside:
                continue
            if safe:
                self.safe_outside += 1
                self.node.get_logger().warning(
                    f"safe hold at t = {t:.2f} s outside pushes: {status.message}"
                )
            else:
                self.fallback_outside += 1

    def act(self) -> None:
        """Send the hand target and the push when due (simulated time); reset after a fall."""
        t = self.sim_time
        if self._reset_future is not None:
            if not self._reset_future.done():
                return
            answer = self._reset_future.result()
            self._reset_future = None
            self._reset_wall = time.monotonic()
            if answer is None or not answer.success:
                self._fall_stamp = None  # not reset: measure on from where it is
        if self._fall_stamp is not None and time.monotonic() - self._reset_wall > RESET_WAIT:
            self._fall_stamp = None  # the restarted time never showed: take the samples again
        diverged = self.log.divergences > self._divergences
        self._divergences = self.log.divergences
        if diverged or (
            self._fall_stamp is None
            and self.height is not None
            and self.first_height is not None
            and self.height < self.first_height - self.fall_drop
        ):
            self.falls += 1
            self.falls_in_minute += 1
            what = "simulation diverged" if diverged else "fall"
            self.node.get_logger().warning(f"{what} ({self.falls}) at t = {t:.2f} s: reset")
            self._reset_future = self.reset_client.call_async(Trigger.Request())
            self._fall_stamp = self._last_odom_stamp
            self.height = None
            return
        if t >= self._next_target:
            self._next_target = t + self.target_every
            target = self.schedule.hand_target(t + self.target_every)
            message = PoseStamped()
            message.header.frame_id = "world"
            message.header.stamp = time_from_seconds(t)
            p = message.pose.position
            p.x, p.y, p.z = (float(x) for x in target)
            x, y, z, w = quaternion_of_rotation(self.orientation).coeffs()
            o = message.pose.orientation
            o.x, o.y, o.z, o.w = float(x), float(y), float(z), float(w)
            self.target_publisher.publish(message)
        if self.schedule.push_due(t, self.push_times[-1] if self.push_times else None):
            force = self.schedule.push(self.pushes)
            message = WrenchStamped()
            message.header.frame_id = PUSH_FRAME
            message.header.stamp = time_from_seconds(t)
            f = message.wrench.force
            f.x, f.y, f.z = (float(x) for x in force)
            self.push_publisher.publish(message)
            self.push_times.append(t)
            self.pushes += 1
            self.pushes_in_minute += 1

    def spin_for(self, seconds: float) -> None:
        """Spin and act for ``seconds`` of wall time."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.01)
            self.act()

    def take_minute(self, minute: int, pids: dict[str, int]) -> SoakMinute:
        """The sample of the minute that ends now (counters restart)."""
        row = SoakMinute(
            minute=minute,
            sim_time=self.sim_time,
            memory={label: resident_memory(pid) for label, pid in pids.items()},
            states=self.states,
            commands=self.commands,
            lowest_base=self.lowest,
            safe_hold_outside_pushes=self.safe_outside,
            fallback_outside_pushes=self.fallback_outside,
            pushes=self.pushes_in_minute,
            falls=self.falls_in_minute,
        )
        self.states = self.commands = self.safe_outside = self.pushes_in_minute = 0
        self.fallback_outside = 0
        self.falls_in_minute = 0
        self.lowest = math.inf if self.height is None else self.height
        return row

    def close(self) -> None:
        """Destroy the node and its context."""
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


def _row(row: SoakMinute, labels: list[str]) -> str:
    memory = "".join(f"{(row.memory[label] or 0) / 2**20:>22.1f}" for label in labels)
    return (
        f"{row.minute:>6}{row.sim_time:>9.1f}{memory}{row.states:>9}{row.commands:>10}"
        f"{row.lowest_base:>9.3f}{row.pushes:>7}{row.safe_hold_outside_pushes:>6}"
        f"{row.fallback_outside_pushes:>10}{row.falls:>6}"
    )


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``wbm_benchmark_soak``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=int, default=30, help="measured wall minutes")
    parser.add_argument("--warmup", type=float, default=60.0, help="wall time before it [s]")
    parser.add_argument("--pacing", default="realtime", help="the launch's pacing argument")
    parser.add_argument("--robot-side", default="simulator", help="simulator or mujoco")
    parser.add_argument("--push-every", type=float, default=10.0, help="[s of sim time]")
    parser.add_argument("--push-force", type=float, default=30.0, help="[N] for push_duration")
    parser.add_argument("--settle", type=float, default=2.0, help="safe hold allowed [s]")
    parser.add_argument("--target-every", type=float, default=0.5, help="[s of sim time]")
    parser.add_argument("--fall-drop", type=float, default=0.15, help="a fall: base down [m]")
    parser.add_argument("--log", type=Path, default=None, help="file for the launch's output")
    parser.add_argument("--launch-file", type=Path, default=None)
    parser.add_argument(
        "--arg",
        action="append",
        default=[],
        metavar="NAME:=VALUE",
        help="another launch argument (repeatable), e.g. config_directory:=/tmp/icub",
    )
    args = parser.parse_args(argv)
    if args.minutes < 1:
        parser.error("--minutes: at least 1")
    launch_arguments = {"pacing": args.pacing, "robot_side": args.robot_side}
    for item in args.arg:
        name, separator, value = item.partition(":=")
        if not separator or not name:
            parser.error(f"--arg {item!r}: expected NAME:=VALUE")
        launch_arguments[name] = value
    launch = args.launch_file or launch_file("sim.launch.yaml")
    settings = ControllerSettings.from_yaml(config_directory("icub") / "controller.yaml")
    model = WholeBodyModel.from_config(load_robot(settings.robot))
    hand = model.frame_placement(
        model.initial_configuration(), settings.frame_tasks[HAND_TASK].frame
    )
    schedule = SoakSchedule(
        hand.translation.copy(),
        push_every=args.push_every,
        push_force=args.push_force,
        settle=args.settle,
    )
    print(f"machine reference: pin.aba on {model.config.name} {aba_reference(model) * 1e6:.1f} us")
    plan = plan_launch(launch, launch_arguments)
    log = LaunchLog(args.log)
    runner = LaunchRunner(plan.processes, stream=log)
    probe = SoakProbe(
        schedule, hand, target_every=args.target_every, fall_drop=args.fall_drop, log=log
    )
    rows: list[SoakMinute] = []
    labels: list[str] = []
    initial_height = math.nan
    started = time.monotonic()
    guard = owned_processes(runner)
    guard.__enter__()
    try:
        runner.start()
        pids = {
            spec.label: child.pid
            for spec, child in zip(runner.specs, runner.children, strict=True)
        }
        labels = list(pids)
        probe.spin_for(args.warmup)
        if probe.first_height is None:
            raise RuntimeError("no ground_truth/odom after the warm-up:\n" + log.tail())
        initial_height = probe.first_height
        probe.take_minute(0, pids)  # counters start now
        header = (
            f"{'minute':>6}{'sim [s]':>9}"
            + "".join(f"{label + ' [MB]':>22}" for label in labels)
            + f"{'states':>9}{'commands':>10}{'base [m]':>9}{'pushes':>7}{'holds':>6}"
            + f"{'fallbacks':>10}{'falls':>6}"
        )
        print(header, flush=True)
        print("-" * len(header), flush=True)
        for minute in range(1, args.minutes + 1):
            probe.spin_for(60.0)
            row = probe.take_minute(minute, pids)
            rows.append(row)
            print(_row(row, labels), flush=True)
            if any(v is None for v in row.memory.values()):
                break
    finally:
        probe.close()
        runner.request_stop()
        runner.wait()
        guard.__exit__(None, None, None)
    wall = time.monotonic() - started
    verdict = summarize(rows, initial_height=initial_height)
    print(f"wall time {wall / 60:.1f} min, pushes {probe.pushes}, falls {verdict.falls}")
    for label, (last, excursion) in verdict.memory_change.items():
        print(
            f"{label}: resident memory {100 * last:+.2f} % first to last sample, "
            f"largest excursion {100 * excursion:+.2f} %"
        )
    print(
        f"base height {initial_height:.3f} m at start, lowest {verdict.lowest_base:.3f} m; "
        f"commands per joint_states {verdict.answered:.3f}; safe holds outside pushes "
        f"{verdict.safe_holds_outside_pushes}"
    )
    print(
        f"QP fallback diagnostics outside pushes (not safe holds) "
        f"{sum(row.fallback_outside_pushes for row in rows)}"
    )
    print("non-OK diagnostics by reason (count outside / inside the windows after pushes):")
    for line in probe.reasons.lines():
        print("  " + line)
    print("PASS" if verdict.passed else "FAIL: " + "; ".join(verdict.problems))
    if not verdict.passed:
        print("launch output (last lines):\n" + log.tail())
    log.close()
    return 0 if verdict.passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
