"""The controller node: robot topics in, joint_commands out (wiring around the cores).

Run: ``wbm_controller --ros-args --params-file config/icub/controller.yaml``

Subscribes ``joint_states`` (sensor_msgs/JointState), ``imu`` (sensor_msgs/Imu), ``ft/<sensor>``
(geometry_msgs/WrenchStamped, one per F/T sensor of the robot config), ``targets/com``
(geometry_msgs/PointStamped) and ``targets/<task>`` (geometry_msgs/PoseStamped, one per frame
task); ``ground_truth/odom`` only when ``use_ground_truth`` is true.
Publishes ``joint_commands`` (sensor_msgs/JointState), ``odom`` (nav_msgs/Odometry, the
estimated base state) and ``diagnostics`` (diagnostic_msgs/DiagnosticArray, ~20 Hz).

The cores: :class:`~wbm_control.controller.WholeBodyController` (the control step),
:class:`~wbm_control.controller_inputs.ControllerInputs` (the latest inputs, staleness, the
``inputs`` trigger, the wall-clock watchdog) and :class:`~wbm_control.safe_hold.SafeHold` (what
the log says about the safe hold). Trigger ``timer``: a step every 1/control_rate (sim time
under use_sim_time); ``inputs``: one step per robot sample, once joint_states, imu and every F/T
sensor of the same stamp have arrived (a lockstep simulator advances only when answered).

Safety: inputs older than ``stale_timeout``, joint_states silent for 0.5 s of wall time (the
robot side gone under sim time), or a failed step switch to the safe command (hold the joints
with damping) with a log; control resumes by itself when inputs come back. Malformed messages
(unknown joint, length mismatch, NaN/inf, wrong frame) are dropped with a throttled log;
targets are rejected (NaN, unknown frame) or clamped (out of reach) with a log.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PointStamped, PoseStamped, WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.clock import Clock, ClockType
from rclpy.exceptions import InvalidTopicNameException
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.validate_topic_name import validate_topic_name
from sensor_msgs.msg import Imu, JointState

from wbm_control.controller import WholeBodyController
from wbm_control.controller_inputs import ControllerInputs, stale_reason, wrench_input
from wbm_control.controller_settings import ControllerSettings
from wbm_control.exceptions import TargetRejected
from wbm_control.ros.messages import (
    CommandMessage,
    JointStateReader,
    diagnostics_message,
    imu_from_message,
    point_from_message,
    pose_from_message,
    stamp_nanoseconds,
)
from wbm_control.safe_hold import LogLine, SafeHold
from wbm_description.exceptions import ConfigError, NameNotFound, WbmError
from wbm_description.registry import load_robot
from wbm_description.robot_io import JointCommand
from wbm_description.ros.cycle_timing import CycleTiming
from wbm_description.ros.messages import base_from_odometry, odometry_message, wrench_from_message
from wbm_description.ros.node_runtime import (
    ROS_PARAMETERS,
    WbmNode,
    declare_settings,
    run_node,
)
from wbm_description.settings import nest
from wbm_description.whole_body_model import WholeBodyModel

DIAGNOSTICS_RATE = 20.0  # [Hz], about
WATCHDOG_PERIOD = 0.1  # [s] of wall time
WATCHDOG_KIND = "no joint_states (wall clock)"  # the watchdog's reasons, for the log
TIMING_COLUMNS = ("stamp_ns", "joint_states_arrived", "step_started", "step_ended", "published")
"""``~/cycle_timing`` rows, one per control step: the sample's stamp (trigger ``inputs``; the
command's stamp otherwise) [ns], then instants of time.monotonic [s]: the sample's joint_states
arrived, its last input arrived and the step started, the command was computed, the command and
odometry were published."""


class ControllerNode(WbmNode):
    """ROS 2 node hosting a :class:`WholeBodyController` (see the module docstring)."""

    def __init__(self, **kwargs):
        super().__init__("wbm_controller", **kwargs)
        self.settings = declare_settings(self, ControllerSettings)
        robot = load_robot(self.settings.robot)
        self.model = WholeBodyModel.from_config(robot)
        self.controller = WholeBodyController(self.model, self.settings)
        self.sensor_frames = {s.name: s.frame for s in robot.ft_sensors}
        self.inputs = ControllerInputs(
            self.model.ndof,
            list(self.sensor_frames),
            stale_timeout=self.settings.stale_timeout,
            trigger=self.settings.trigger,
        )
        self.safe_hold = SafeHold()
        self.base_frame = robot.base_link
        self._steps = 0
        self._joint_states = JointStateReader(self.model.joint_indices, self.model.ndof)
        self._command = CommandMessage(self.model.joint_names)
        self._joint_states_arrived = 0.0
        self.timing = CycleTiming(self, TIMING_COLUMNS)
        self._diagnostics_every = max(1, round(self.settings.control_rate / DIAGNOSTICS_RATE))

        sensor_qos = QoSProfile(depth=5, reliability=ReliabilityPolicy.BEST_EFFORT)
        reliable = QoSProfile(depth=10)
        self.create_subscription(JointState, "joint_states", self._on_joint_states, sensor_qos)
        self.create_subscription(Imu, "imu", self._on_imu, sensor_qos)
        for sensor in self.sensor_frames:
            self.create_subscription(
                WrenchStamped,
                wrench_input(sensor),
                lambda message, name=sensor: self._on_wrench(name, message),
                sensor_qos,
            )
        self.create_subscription(PointStamped, "targets/com", self._on_com_target, reliable)
        for task in self.controller.frame_tasks:
            self.create_subscription(
                PoseStamped,
                f"targets/{task}",
                lambda message, name=task: self._on_frame_target(name, message),
                reliable,
            )
        if self.settings.use_ground_truth:
            self.create_subscription(
                Odometry, "ground_truth/odom", self._on_ground_truth, sensor_qos
            )
        self.command_publisher = self.create_publisher(JointState, "joint_commands", reliable)
        self.odom_publisher = self.create_publisher(Odometry, "odom", reliable)
        self.diagnostics_publisher = self.create_publisher(
            DiagnosticArray, "diagnostics", reliable
        )
        if self.settings.trigger == "timer":
            self.create_timer(self.settings.control_period, self._on_control_timer)
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.create_timer(WATCHDOG_PERIOD, self._on_watchdog, clock=steady)
        self.get_logger().info(
            f"wbm_controller: robot {robot.name}, mode {self.settings.mode}, "
            f"{self.settings.control_rate:g} Hz, tasks {sorted(self.controller.frame_tasks)}"
        )

    # ------------------------------------------------------------------ robot inputs

    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _on_joint_states(self, message: JointState) -> None:
        arrived = time.monotonic()
        try:
            positions, velocities, efforts = self._joint_states.read(message)
        except WbmError as error:
            self.throttled.warning("joint_states", f"dropped joint_states: {error}")
            return
        self._joint_states_arrived = arrived
        stamp = stamp_nanoseconds(message.header.stamp)
        due = self.inputs.set_joint_states(
            positions, velocities, efforts, time=self._now(), stamp=stamp, wall_time=arrived
        )
        if due:
            self._control_step(stamp)

    def _on_imu(self, message: Imu) -> None:
        try:
            reading = imu_from_message(message)
        except WbmError as error:
            self.throttled.warning("imu", f"dropped imu: {error}")
            return
        stamp = stamp_nanoseconds(message.header.stamp)
        if self.inputs.set_imu(reading, time=self._now(), stamp=stamp):
            self._control_step(stamp)

    def _on_wrench(self, sensor: str, message: WrenchStamped) -> None:
        topic, frame = wrench_input(sensor), self.sensor_frames[sensor]
        if message.header.frame_id and message.header.frame_id != frame:
            self.throttled.warning(
                topic,
                f"dropped {topic}: frame_id '{message.header.frame_id}', expected '{frame}'",
            )
            return
        try:
            wrench = wrench_from_message(message.wrench)
        except WbmError as error:
            self.throttled.warning(topic, f"dropped {topic}: {error}")
            return
        stamp = stamp_nanoseconds(message.header.stamp)
        if self.inputs.set_wrench(sensor, wrench, time=self._now(), stamp=stamp):
            self._control_step(stamp)

    def _on_ground_truth(self, message: Odometry) -> None:
        try:
            base_q, base_v = base_from_odometry(message)
        except WbmError as error:
            self.throttled.warning("ground_truth", f"dropped ground_truth/odom: {error}")
            return
        self.inputs.set_ground_truth_base(base_q, base_v)

    # ------------------------------------------------------------------ targets

    def _target_frame_ok(self, task: str, frame_id: str) -> bool:
        if frame_id in ("", self.settings.world_frame):
            return True
        self.get_logger().warning(
            f"target for '{task}' rejected: unknown frame '{frame_id}' "
            f"(targets are in '{self.settings.world_frame}')"
        )
        return False

    def _on_com_target(self, message: PointStamped) -> None:
        if not self._target_frame_ok("com", message.header.frame_id):
            return
        try:
            point = point_from_message(message)
            accepted = self.controller.set_com_target(point)
        except (WbmError, TargetRejected) as error:
            self.get_logger().warning(f"target for 'com' rejected: {error}")
            return
        if not np.allclose(accepted, point, atol=1e-9):
            self.get_logger().warning(
                f"target for 'com' clamped from {np.round(point, 4)} to {np.round(accepted, 4)} "
                "(over the support polygon, within 0.1 m of the initial height)"
            )

    def _on_frame_target(self, task: str, message: PoseStamped) -> None:
        if not self._target_frame_ok(task, message.header.frame_id):
            return
        try:
            pose = pose_from_message(message)
            accepted = self.controller.set_frame_target(task, pose)
        except (WbmError, TargetRejected) as error:
            self.get_logger().warning(f"target for '{task}' rejected: {error}")
            return
        if not np.allclose(accepted.translation, pose.translation, atol=1e-9):
            reach = self.controller.frame_tasks[task].settings.max_reach
            self.get_logger().warning(
                f"target for '{task}' clamped to {np.round(accepted.translation, 4)} "
                f"(max_reach {reach} m)"
            )

    # ------------------------------------------------------------------ the loop

    def _log(self, line: LogLine | None) -> None:
        # One call site per severity: rclpy refuses two severities from the same line.
        if line is None:
            return
        if line.level == "error":
            self.get_logger().error(line.text)
        else:
            self.get_logger().info(line.text)

    def _hold(self, reason: str, now: float, *, kind: str | None = None) -> None:
        """Publish the safe hold command for ``reason``."""
        command = self.controller.hold_command(reason, self.inputs.joint_positions)
        self._log(self.safe_hold.enter(self.controller.status.reason, kind=kind))
        self._publish_command(command, now)

    def _on_watchdog(self) -> None:
        """Hold and report when joint_states stopped arriving (wall clock), e.g. no simulator."""
        reason = self.inputs.watchdog(time.monotonic())
        if reason is None:
            return
        now = self._now()
        self._hold(reason, now, kind=WATCHDOG_KIND)
        self.diagnostics_publisher.publish(diagnostics_message(self.controller.status, now))

    def _on_control_timer(self) -> None:
        # No argument: an executor passes TimerInfo to a timer callback that takes one.
        self._control_step()

    def _control_step(self, sample_stamp: int | None = None) -> None:
        """One control step: command, odometry, diagnostics.

        The command is stamped with the sample it answers (trigger ``inputs``), else with the
        node's time.
        """
        started = time.monotonic()
        now = self._now()
        stale = self.inputs.stale(now)
        if stale:
            if self.inputs.has_joint_states or self.controller.started:
                self._hold(stale_reason(stale), now)
            else:
                self.throttled.warning("waiting", f"waiting for inputs: {', '.join(stale)}")
            self._publish_diagnostics(now)
            return
        stamp_ns = sample_stamp if sample_stamp is not None else round(now * 1e9)
        try:
            command = self.controller.step(
                self.inputs.readings(now), ground_truth=self.inputs.ground_truth
            )
        except (WbmError, ArithmeticError, ValueError, np.linalg.LinAlgError) as error:
            # Inputs the core refuses or numerics that break on them: hold, never crash.
            command = self.controller.hold_command(
                f"step failed: {error}", self.inputs.joint_positions
            )
        computed = time.monotonic()
        status = self.controller.status
        self._log(self.safe_hold.after_step(status.safe, status.reason))
        self.command_publisher.publish(self._command.fill(command, stamp_ns))
        if status.estimate is not None:
            q, v = status.estimate.q, status.estimate.v
            self.odom_publisher.publish(
                odometry_message(
                    q[:7],
                    v[:6],
                    world_frame=self.settings.world_frame,
                    base_frame=self.base_frame,
                    stamp_seconds=stamp_ns * 1e-9,
                )
            )
        self.timing.add(stamp_ns, self._joint_states_arrived, started, computed, time.monotonic())
        self._publish_diagnostics(now)

    def _publish_command(self, command: JointCommand, now: float) -> None:
        self.command_publisher.publish(self._command.fill(command, round(now * 1e9)))

    def _publish_diagnostics(self, now: float) -> None:
        self._steps += 1
        if self._steps % self._diagnostics_every == 0:
            self.diagnostics_publisher.publish(diagnostics_message(self.controller.status, now))


def check_parameters(parameters: Mapping[str, Any]) -> None:
    """The checks this node makes of its parameters at start, without starting it.

    ``wbm launch`` calls it for its pre-flight checks: the settings (ranges, choices, sections),
    the robot config, the soles of ``initial_contacts``, the frames of the frame tasks and their
    topics.

    Raises:
        ConfigError: A value the node would refuse; the key is the parameter's name.
        WbmError: The robot's URDF cannot be read into a model.
    """
    values = {name: value for name, value in parameters.items() if name not in ROS_PARAMETERS}
    settings = ControllerSettings.from_mapping(nest(values))
    model = WholeBodyModel.from_config(load_robot(settings.robot))
    soles = [sole.name for sole in model.config.soles]
    for i, name in enumerate(settings.initial_contacts):
        if name not in soles:
            raise ConfigError(None, f"initial_contacts[{i}]", f"a sole of the robot {soles}", name)
    for task, task_settings in settings.frame_tasks.items():
        try:
            model.frame_id(task_settings.frame)
        except NameNotFound as error:
            key = f"frame_tasks.{task}.frame"
            raise ConfigError(
                None, key, f"a frame of the robot ({error})", task_settings.frame
            ) from None
        try:
            validate_topic_name(f"targets/{task}")
        except InvalidTopicNameException:
            raise ConfigError(
                None, f"frame_tasks.{task}", "a task name that makes a valid topic", task
            ) from None


def main(args: list[str] | None = None) -> int:
    """Entry point of ``wbm_controller`` (exit code 2 when it cannot start)."""
    return run_node(ControllerNode, "wbm_controller", args)


if __name__ == "__main__":
    raise SystemExit(main())
