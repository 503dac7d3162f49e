"""The controller node: robot topics in, joint_commands out (a thin layer over the core).

Run: ``wbm_controller --ros-args --params-file config/icub/controller.yaml``

Subscribes ``joint_states`` (sensor_msgs/JointState), ``imu`` (sensor_msgs/Imu), ``ft/<sensor>``
(geometry_msgs/WrenchStamped, one per F/T sensor of the robot config), ``targets/com``
(geometry_msgs/PointStamped) and ``targets/<task>`` (geometry_msgs/PoseStamped, one per frame
task of the config); ``ground_truth/odom`` only when ``use_ground_truth`` is true.
Publishes ``joint_commands`` (sensor_msgs/JointState), ``odom`` (nav_msgs/Odometry, the
estimated base state) and ``diagnostics`` (diagnostic_msgs/DiagnosticArray, ~20 Hz).

Safety: inputs older than ``stale_timeout``, or a failed QP, switch to the safe command (hold
the joints with damping) with a log; control resumes by itself when inputs come back.
Malformed messages (unknown joint, length mismatch, NaN/inf, wrong frame) are dropped with a
throttled log; targets are rejected (NaN, unknown frame) or clamped (out of reach) with a log.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PointStamped, PoseStamped, WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.clock import Clock, ClockType
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Imu, JointState

from wbm_control.controller import WholeBodyController
from wbm_control.controller_settings import ControllerSettings
from wbm_control.exceptions import TargetRejected
from wbm_control.ros.messages import (
    command_message,
    diagnostics_message,
    imu_from_message,
    point_from_message,
    pose_from_message,
)
from wbm_description.exceptions import WbmError
from wbm_description.registry import load_robot
from wbm_description.robot_io import RobotReadings
from wbm_description.ros.messages import (
    base_from_odometry,
    joint_arrays_from_message,
    odometry_message,
    wrench_from_message,
)
from wbm_description.whole_body_model import WholeBodyModel

_LOG_PERIOD = 2.0  # throttle of repeated warnings [s]
_WALL_STALE = 0.5  # no joint_states for this long in wall time: the robot side is gone [s]
_ROS_PARAMETERS = {"use_sim_time", "start_type_description_service"}  # rclpy's own


def nested_parameters(flat: Mapping[str, Any]) -> dict[str, Any]:
    """{"a.b": 1} -> {"a": {"b": 1}} (ROS parameter names to the config's nested dict)."""
    nested: dict[str, Any] = {}
    for name, value in flat.items():
        node = nested
        *parents, leaf = name.split(".")
        for parent in parents:
            node = node.setdefault(parent, {})
        node[leaf] = list(value) if isinstance(value, list | tuple) else value
    return nested


class ControllerNode(Node):
    """ROS 2 node hosting a :class:`WholeBodyController`."""

    def __init__(self, **kwargs):
        super().__init__(
            "wbm_controller",
            allow_undeclared_parameters=True,
            automatically_declare_parameters_from_overrides=True,
            **kwargs,
        )
        flat = {
            name: parameter.value
            for name, parameter in self.get_parameters_by_prefix("").items()
            if parameter.value is not None
            and name not in _ROS_PARAMETERS
            and not name.startswith("qos_overrides.")
        }
        self.config = ControllerSettings.from_mapping(nested_parameters(flat))
        robot = load_robot(self.config.robot)
        self.model = WholeBodyModel.from_config(robot)
        self.controller = WholeBodyController(self.model, self.config)
        self.joint_index = self.model.joint_indices
        self.base_frame = robot.base_link
        self._sensor_frames = {s.name: s.frame for s in robot.ft_sensors}
        self._required_inputs = ("joint_states", "imu", *(f"ft/{s}" for s in self._sensor_frames))

        self._joint_positions: np.ndarray | None = None
        self._joint_velocities: np.ndarray | None = None
        self._joint_efforts = np.zeros(self.model.ndof)
        self._imu = None
        self._wrenches: dict[str, np.ndarray] = {}
        self._received: dict[str, float] = {}
        self._ground_truth: tuple[np.ndarray, np.ndarray] | None = None
        self._safe_reason = ""
        self._last_log: dict[str, float] = {}
        self._steps = 0
        self._diagnostics_every = max(1, round(self.config.control_rate / 20.0))

        sensor_qos = QoSProfile(depth=5, reliability=ReliabilityPolicy.BEST_EFFORT)
        reliable = QoSProfile(depth=10)
        self.create_subscription(JointState, "joint_states", self._on_joint_states, sensor_qos)
        self.create_subscription(Imu, "imu", self._on_imu, sensor_qos)
        for sensor in self._sensor_frames:
            self.create_subscription(
                WrenchStamped,
                f"ft/{sensor}",
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
        if self.config.use_ground_truth:
            self.create_subscription(
                Odometry, "ground_truth/odom", self._on_ground_truth, sensor_qos
            )
        self.command_publisher = self.create_publisher(JointState, "joint_commands", reliable)
        self.odom_publisher = self.create_publisher(Odometry, "odom", reliable)
        self.diagnostics_publisher = self.create_publisher(
            DiagnosticArray, "diagnostics", reliable
        )
        # trigger "timer": a control step every control period (of sim time under use_sim_time);
        # "inputs": one step per robot sample, once joint_states, imu and every F/T sensor of the
        # same stamp have arrived (a lockstep simulator advances only when answered).
        self._stamps: dict[str, int] = {}
        self._answered_stamp: int | None = None
        self.timer = (
            self.create_timer(self.config.control_period, self._on_timer)
            if self.config.trigger == "timer"
            else None
        )
        # Under use_sim_time the loop stops with /clock when the robot side dies: a wall-clock
        # watchdog then switches to the safe command and says why.
        self._last_input_wall: float | None = None
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.create_timer(0.1, self._wall_watchdog, clock=steady)
        self.get_logger().info(
            f"wbm_controller: robot {robot.name}, mode {self.config.mode}, "
            f"{self.config.control_rate:g} Hz, tasks {sorted(self.controller.frame_tasks)}"
        )

    # ------------------------------------------------------------------ inputs

    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _warn(self, key: str, text: str, *, error: bool = False) -> None:
        """A log line at most every _LOG_PERIOD seconds (wall time) per key."""
        now = time.monotonic()
        if now - self._last_log.get(key, -np.inf) >= _LOG_PERIOD:
            self._last_log[key] = now
            (self.get_logger().error if error else self.get_logger().warning)(text)

    def _on_joint_states(self, message: JointState) -> None:
        try:
            arrays = joint_arrays_from_message(message, self.joint_index, require_all=True)
            if arrays.position is None or arrays.velocity is None:
                raise WbmError("joint_states: position and velocity are required")
        except WbmError as error:
            self._warn("joint_states", f"dropped joint_states: {error}")
            return
        positions = np.empty(self.model.ndof)
        velocities = np.empty(self.model.ndof)
        positions[arrays.indices] = arrays.position
        velocities[arrays.indices] = arrays.velocity
        if arrays.effort is not None:
            self._joint_efforts[arrays.indices] = arrays.effort
        self._joint_positions, self._joint_velocities = positions, velocities
        self._received["joint_states"] = self._now()
        self._last_input_wall = time.monotonic()
        self._input_arrived("joint_states", message.header.stamp)

    def _on_imu(self, message: Imu) -> None:
        try:
            self._imu = imu_from_message(message)
        except WbmError as error:
            self._warn("imu", f"dropped imu: {error}")
            return
        self._received["imu"] = self._now()
        self._input_arrived("imu", message.header.stamp)

    def _on_wrench(self, sensor: str, message: WrenchStamped) -> None:
        frame = self._sensor_frames[sensor]
        if message.header.frame_id and message.header.frame_id != frame:
            self._warn(
                f"ft/{sensor}",
                f"dropped ft/{sensor}: frame_id '{message.header.frame_id}', expected '{frame}'",
            )
            return
        try:
            self._wrenches[sensor] = wrench_from_message(message.wrench)
        except WbmError as error:
            self._warn(f"ft/{sensor}", f"dropped ft/{sensor}: {error}")
            return
        self._received[f"ft/{sensor}"] = self._now()
        self._input_arrived(f"ft/{sensor}", message.header.stamp)

    def _on_ground_truth(self, message: Odometry) -> None:
        try:
            base_q, base_v = base_from_odometry(message)
        except WbmError as error:
            self._warn("ground_truth", f"dropped ground_truth/odom: {error}")
            return
        if self._joint_positions is not None:
            q = np.concatenate([base_q, self._joint_positions])
            v = np.concatenate([base_v, self._joint_velocities])
            self._ground_truth = (q, v)

    def _target_frame_ok(self, task: str, frame_id: str) -> bool:
        if frame_id in ("", self.config.world_frame):
            return True
        self.get_logger().warning(
            f"target for '{task}' rejected: unknown frame '{frame_id}' "
            f"(targets are in '{self.config.world_frame}')"
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
            self.get_logger().warning(
                f"target for '{task}' clamped to {np.round(accepted.translation, 4)} "
                f"(max_reach {self.controller.frame_tasks[task].settings.max_reach} m)"
            )

    # ------------------------------------------------------------------ the loop

    def _wall_watchdog(self) -> None:
        """Hold and report when joint_states stopped arriving (wall clock), e.g. no simulator."""
        if self._last_input_wall is None:
            return
        silence = time.monotonic() - self._last_input_wall
        if silence < max(_WALL_STALE, self.config.stale_timeout):
            return
        reason = f"stale inputs: no joint_states for {silence:.1f} s (wall clock)"
        command = self.controller.hold_command(reason, self._joint_positions)
        if not self._safe_reason.startswith("stale inputs: no joint_states"):
            self.get_logger().error(f"safe mode (holding the joints with damping): {reason}")
        self._safe_reason = reason
        now = self._now()
        self.command_publisher.publish(command_message(self.model.joint_names, command, now))
        self.diagnostics_publisher.publish(diagnostics_message(self.controller.status, now))

    def _input_arrived(self, name: str, stamp) -> None:
        """Trigger "inputs": step once every input of a new stamp has arrived."""
        if self.timer is not None:
            return
        nanoseconds = stamp.sec * 1_000_000_000 + stamp.nanosec
        self._stamps[name] = nanoseconds
        if nanoseconds == self._answered_stamp:
            return
        if all(self._stamps.get(key) == nanoseconds for key in self._required_inputs):
            self._answered_stamp = nanoseconds
            self._on_timer()

    def _stale_inputs(self, now: float) -> list[str]:
        timeout = self.config.stale_timeout
        return [
            name
            for name in self._required_inputs
            if now - self._received.get(name, -np.inf) > timeout
        ]

    def _enter_safe(self, reason: str) -> None:
        if self._safe_reason != reason:
            self.get_logger().error(f"safe mode (holding the joints with damping): {reason}")
        self._safe_reason = reason

    def _on_timer(self) -> None:
        now = self._now()
        stale = self._stale_inputs(now)
        if stale:
            if self._joint_positions is not None or self.controller.started:
                command = self.controller.hold_command(
                    f"stale inputs: {', '.join(stale)}", self._joint_positions
                )
                self._enter_safe(self.controller.status.reason)
                self.command_publisher.publish(
                    command_message(self.model.joint_names, command, now)
                )
            else:
                self._warn("waiting", f"waiting for inputs: {', '.join(stale)}")
            self._publish_diagnostics(now)
            return
        readings = RobotReadings(
            time=now,
            joint_positions=self._joint_positions,
            joint_velocities=self._joint_velocities,
            joint_efforts=self._joint_efforts.copy(),
            imu=self._imu,
            wrenches=dict(self._wrenches),
        )
        try:
            command = self.controller.step(readings, ground_truth=self._ground_truth)
        except (WbmError, ArithmeticError, ValueError, np.linalg.LinAlgError) as error:
            # Inputs the core refuses or numerics that break on them: hold, never crash.
            command = self.controller.hold_command(f"step failed: {error}", self._joint_positions)
        status = self.controller.status
        if status.safe:
            self._enter_safe(status.reason)
        elif self._safe_reason:
            self.get_logger().info(f"normal control resumed (was: {self._safe_reason})")
            self._safe_reason = ""
        self.command_publisher.publish(command_message(self.model.joint_names, command, now))
        if status.estimate is not None:
            q, v = status.estimate.q, status.estimate.v
            self.odom_publisher.publish(
                odometry_message(
                    q[:7],
                    v[:6],
                    world_frame=self.config.world_frame,
                    base_frame=self.base_frame,
                    stamp_seconds=now,
                )
            )
        self._publish_diagnostics(now)

    def _publish_diagnostics(self, now: float) -> None:
        self._steps += 1
        if self._steps % self._diagnostics_every == 0:
            self.diagnostics_publisher.publish(diagnostics_message(self.controller.status, now))


def main(args: list[str] | None = None) -> None:
    """Entry point of ``wbm_controller``."""
    from rclpy.experimental import EventsExecutor

    try:
        with rclpy.init(args=args):
            try:
                node = ControllerNode()
            except WbmError as error:  # a bad parameter: say which and stop (exit code 1)
                rclpy.logging.get_logger("wbm_controller").fatal(f"bad configuration: {error}")
                raise SystemExit(1) from error
            executor = EventsExecutor()
            executor.add_node(node)
            # spin_once in a loop: EventsExecutor.spin() does not return on SIGINT/SIGTERM.
            while rclpy.ok():
                executor.spin_once(timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass


if __name__ == "__main__":
    main()
