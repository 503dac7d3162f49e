"""The robot-interface node: hosts a robot backend and speaks the robot contract on ROS 2.

Run: ``wbm_robot_interface --ros-args --params-file config/icub/robot_interface.yaml``.

Topics (names relative, so a namespace applies; the clock is global):

- publishes ``/clock`` (rosgraph_msgs/Clock, robot time), ``joint_states``
  (sensor_msgs/JointState, model joint order), ``imu`` (sensor_msgs/Imu, frame_id the IMU frame),
  ``ft/<sensor>`` (geometry_msgs/WrenchStamped, frame_id the sensor frame, child-on-parent
  convention of :mod:`wbm_description.robot_io`), ``ground_truth/odom`` (nav_msgs/Odometry,
  base pose in ``world_frame``, twist in the base frame; transient local: a late subscriber
  that asks for it gets the last :data:`GROUND_TRUTH_HISTORY` seconds); every stamp is robot
  time;
- subscribes ``joint_commands`` (sensor_msgs/JointState: by name, any subset of joints, an empty
  array meaning "not commanded"; see :class:`~wbm_dynamics.held_command.HeldCommand`) and
  ``apply_wrench`` (geometry_msgs/WrenchStamped: frame_id names the link, the wrench acts at its
  origin in world axes for ``push_duration``);
- services ``reset``, ``pause``, ``resume`` (std_srvs/Trigger).

Parameters: the node-level settings (:class:`~wbm_dynamics.interface_settings.
RobotInterfaceSettings`) and the section named after the backend, read with the backend's own
settings class (or its ``backend_config`` file). When to advance and publish (realtime, as fast
as possible, lockstep, pause, divergence, the command watchdog) is the pacing loop's
(:class:`~wbm_dynamics.pacing.PacingLoop`); this node converts messages and calls it.

``joint_commands`` is taken on the node's input thread
(:class:`~wbm_description.ros.input_thread.InputThread`: a wait set of its own, not the
executor's of every entity); the robot contract's publishers have no QoS event handlers (they
woke the executor at every publication).

Bad messages (unknown joint, length mismatch, NaN or inf, unknown link) are logged (throttled)
and dropped; the last valid command stays. A ``joint_commands`` stamp is the robot time of the
sample the command answers (0: unstamped); a command older than the held one, or already
``command_timeout`` old, is dropped with a throttled log (:meth:`~wbm_dynamics.pacing.
PacingLoop.command`), and the watchdog counts from the stamp. A ``joint_commands`` message
with an effort beyond a joint's torque limit (the robot config's ``joint_limits.torque``) is
rejected the same way, as a whole: the servo law ``tau = effort + kp (position - q) + kd
(velocity - dq)`` clips the torque to the limit, so such a message would otherwise spend a
control period at full torque.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from rclpy._rclpy_pybind11 import RCLError
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState
from std_srvs.srv import Trigger

from wbm_description.exceptions import ConfigError, WbmError
from wbm_description.registry import load_robot
from wbm_description.ros.cycle_timing import CycleTiming
from wbm_description.ros.input_thread import InputThread, quiet_publisher_events
from wbm_description.ros.messages import wrench_from_message
from wbm_description.ros.node_runtime import (
    ROS_PARAMETERS,
    WbmNode,
    declare_settings,
    run_node,
)
from wbm_description.settings import Settings, nest
from wbm_description.whole_body_model import WholeBodyModel
from wbm_dynamics.backends import RobotBackend, available_backends, create_backend, load_backend
from wbm_dynamics.exceptions import BackendError
from wbm_dynamics.interface_settings import RobotInterfaceSettings
from wbm_dynamics.noise import SensorNoise
from wbm_dynamics.pacing import PacingLoop, RobotOutputs, lockstep_lead
from wbm_dynamics.ros.robot_messages import CommandReader, RobotMessages

TIMING_COLUMNS = ("stamp_ns", "kind", "t0", "t1", "t2")
"""``~/cycle_timing`` rows: kind 0, a publication (t0 step started, t1 readings ready, t2 all
published; t0 = 0 without a step); kind 1, a command (stamp its header's, t0 arrival, t1 applied:
in lockstep after the step and publication it triggers). Instants of time.monotonic [s]."""

NODE_NAME = "robot_interface"

GROUND_TRUTH_HISTORY = 1.0
"""Seconds of ``ground_truth/odom`` samples kept for late joiners (transient local) [s of robot
time at the publication rate]: a probe or recorder whose subscription matched less than that
after the start still hears t = 0."""


def command_qos(pacing: str) -> QoSProfile:
    """The QoS of the ``joint_commands`` subscription for a pacing.

    Lockstep: reliable (a lost command would stall the loop until the controller's watchdog).
    Otherwise best effort, as a robot's bus reads commands: a lost command is a missed cycle,
    which the watchdog already covers, and a best-effort reader matches any publisher without the
    reliable protocol's per-sample bookkeeping on the controller's side (its publication woke
    FastDDS's event thread every cycle): in the controller-alone lockstep loop (`wbm_benchmark_
    bringup --controller-loop`, the driver's reader best effort instead of reliable, 2 x 3
    repeats) the controller's CPU per cycle went 3.55 / 3.50 -> 3.35 / 3.35 ms and the
    latency p99 10.6 / 10.3 -> 5.6 / 5.5 ms.
    """
    reliability = (
        ReliabilityPolicy.RELIABLE if pacing == "lockstep" else ReliabilityPolicy.BEST_EFFORT
    )
    return QoSProfile(depth=10, reliability=reliability)


class RobotInterfaceNode(WbmNode):
    """Hosts a robot backend and publishes the robot contract.

    Raises:
        ConfigError: A parameter is missing its right type or range (named in the message).
        BackendError: The backend cannot be loaded or built (a robot that does not answer).
        WbmError: The robot config or model cannot be loaded.
    """

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        source = f"parameters of node '{self.get_fully_qualified_name()}'"
        settings = declare_settings(self, RobotInterfaceSettings, exclude=available_backends())
        self.settings = settings
        model = WholeBodyModel.from_config(load_robot(settings.robot))
        self.backend = self._create_backend(model, source)
        description = self.backend.description
        self.description = description
        self._joint_index = {name: i for i, name in enumerate(description.joint_names)}
        limits = dict(zip(model.joint_names, model.torque_limits, strict=True))
        self._torque_limits = np.array([limits[name] for name in description.joint_names])
        self._read_command = CommandReader(self._joint_index, self._torque_limits)
        noise = settings.noise
        self._messages = RobotMessages(
            list(description.joint_names),
            imu_frame=description.imu_frame,
            ft_frames=dict(description.ft_sensor_frames),
            base_frame=description.base_frame,
            world_frame=settings.world_frame,
            imu_variances=(
                noise.imu_orientation**2,
                noise.imu_angular_velocity**2,
                noise.imu_linear_acceleration**2,
            ),
        )
        self.timing = CycleTiming(self, TIMING_COLUMNS)

        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)

        def publisher(message_type: type, topic: str):
            # Without QoS event handlers: they would wake the executor at every publication.
            return self.create_publisher(
                message_type, topic, reliable, event_callbacks=quiet_publisher_events()
            )

        self._clock_publisher = publisher(Clock, "/clock")
        self._joint_publisher = publisher(JointState, "joint_states")
        self._imu_publisher = publisher(Imu, "imu") if description.imu_frame else None
        self._ft_publishers = {
            name: publisher(WrenchStamped, f"ft/{name}") for name in description.ft_sensor_frames
        }
        # The ground truth keeps its last GROUND_TRUTH_HISTORY seconds for late joiners (a
        # probe or recorder whose subscription matched after the simulation started).
        history = QoSProfile(
            depth=max(1, math.ceil(GROUND_TRUTH_HISTORY * settings.publish_rate)),
            reliability=ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.TRANSIENT_LOCAL,
        )
        self._odom_publisher = (
            self.create_publisher(
                Odometry,
                "ground_truth/odom",
                history,
                event_callbacks=quiet_publisher_events(),
            )
            if description.base_frame
            else None
        )
        try:
            self.loop = PacingLoop(
                self.backend, settings, publish=self._publish, log=self._log, source=source
            )
        except WbmError:
            self.backend.close()
            raise
        # Commands are taken on the input thread (a wait set of their own); the pacing loop is
        # thread-safe (its realtime thread and the executor's services call it already).
        self.input_thread = InputThread(self)
        self.input_thread.subscribe(
            JointState, "joint_commands", self._on_command, command_qos(settings.pacing)
        )
        self.create_subscription(WrenchStamped, "apply_wrench", self._on_wrench, reliable)
        self.create_service(Trigger, "reset", self._on_reset)
        self.create_service(Trigger, "pause", self._on_pause)
        self.create_service(Trigger, "resume", self._on_resume)
        self.get_logger().info(
            f"{settings.robot} on the {settings.backend} backend: period "
            f"{description.period * 1e3:g} ms, pacing {settings.pacing}"
        )

    def _create_backend(self, model: WholeBodyModel, source: str) -> RobotBackend:
        """The backend with its settings: its parameter section, or its backend_config file."""
        name = self.settings.backend
        backend_class = load_backend(name)
        section = None
        if not self.settings.backend_config:
            section = _declare_section(self, backend_class.settings_class, name)
        elif self.get_parameters_by_prefix(name):
            raise ConfigError(
                source, name, f"no {name} section when backend_config names a file", "a section"
            )
        noise = self.settings.noise
        return create_backend(
            name,
            model,
            section,
            config_file=self.settings.backend_config or None,
            noise=SensorNoise(noise, self.settings.seed) if noise.enabled else None,
        )

    # ------------------------------------------------------------------ life cycle

    def start(self) -> None:
        """Start the pacing loop and the input thread, then the CPU affinity, latency, priority.

        The priority goes to every thread of the process, those two included
        (``realtime_threads`` ``"all"``), or to those two and the middleware's receive threads
        (``"loop"``), in realtime and lockstep pacing: in lockstep the loop's hand-overs,
        simulator to controller and back, then happen at once instead of after the scheduler's
        wake-up latency (in ``"all"`` scope the watchers keep their share in SCHED_FIFO below
        the loop's, the launch files' ``watcher_priority``).
        """
        self.loop.start()
        self.input_thread.start()
        settings = self.settings
        self.apply_cpu_affinity(settings.cpu_affinity)
        self.request_cpu_latency(settings.cpu_dma_latency)
        priority = settings.realtime_priority
        # Loops that would keep the CPUs from every other process in SCHED_FIFO: one that never
        # waits, and a lockstep loop with a command delay, whose two sides run at once (it
        # starved every other process on the 2-core machine; the launch files' rule too).
        # Realtime and strict lockstep loops wait for their period or for the command.
        busy = None
        if settings.pacing == "as_fast_as_possible":
            busy = "in as_fast_as_possible pacing (the loop never waits)"
        elif settings.pacing == "lockstep" and settings.command_delay > 0.0:
            busy = (
                "in lockstep with a command_delay (the simulator and the controller run at "
                "once and would keep the CPUs from every other process)"
            )
        if priority and busy is not None:
            self.get_logger().info(
                f"realtime_priority {priority} not applied {busy}: normal scheduling"
            )
            return
        loop = [self.input_thread.native_id, self.loop.native_id]
        self.apply_realtime_priority(
            priority, settings.realtime_threads, [tid for tid in loop if tid is not None]
        )

    def stop(self) -> None:
        """Stop the input thread and the pacing loop, and release the backend."""
        self.release_cpu_latency()
        self.input_thread.stop()
        self.loop.stop()
        self.backend.close()

    def _log(self, level: str, text: str) -> None:
        # One call per severity: rclpy's logger refuses another severity from the same line.
        logger = self.get_logger()
        if level == "error":
            logger.error(text)
        elif level == "warning":
            logger.warning(text)
        else:
            logger.info(text)

    # ------------------------------------------------------------------ outputs

    def _publish(self, outputs: RobotOutputs) -> None:
        try:
            self._publish_outputs(outputs)
        except RCLError:
            if self.context.ok():
                raise
            self.loop.request_stop()  # shutting down: the context is gone

    def _publish_outputs(self, outputs: RobotOutputs) -> None:
        messages = self._messages
        messages.fill(outputs.time, outputs.readings, outputs.base)
        self._clock_publisher.publish(messages.clock)
        self._joint_publisher.publish(messages.joint_state)
        if self._imu_publisher is not None and outputs.readings.imu is not None:
            self._imu_publisher.publish(messages.imu)
        for name, publisher in self._ft_publishers.items():
            publisher.publish(messages.wrenches[name])
        if self._odom_publisher is not None and outputs.base is not None:
            self._odom_publisher.publish(messages.odometry)
        self.timing.add(
            round(outputs.time * 1e9),
            0.0,
            outputs.step_started,
            outputs.step_ended,
            time.monotonic(),
        )

    # ------------------------------------------------------------------ inputs

    def _on_command(self, message: JointState) -> None:
        arrived = time.monotonic()
        try:
            update = self._read_command(message)
        except WbmError as error:
            self.throttled.warning(
                f"joint_commands:{error}",
                f"joint_commands rejected, keeping the last valid command: {error}",
            )
            update = None
        stamp = message.header.stamp
        answers = stamp.sec + 1e-9 * stamp.nanosec
        dropped = self.loop.command(update, answers or None)
        if dropped is not None:
            self.throttled.warning(
                f"joint_commands:{dropped}",
                f"joint_commands dropped ({dropped}): it answers the sample of t = "
                f"{answers:.3f} s, robot time is {self.loop.backend.time:.3f} s "
                f"(command_timeout {self.settings.command_timeout:g} s)",
            )
        self.timing.add(
            stamp.sec * 1_000_000_000 + stamp.nanosec, 1.0, arrived, time.monotonic(), 0.0
        )

    def _on_wrench(self, message: WrenchStamped) -> None:
        try:
            self.loop.push(message.header.frame_id, wrench_from_message(message.wrench))
        except WbmError as error:
            self.throttled.warning(f"apply_wrench:{error}", f"apply_wrench rejected: {error}")

    def _on_reset(self, request: Trigger.Request, response: Trigger.Response):
        try:
            self.loop.reset()
        except WbmError as error:
            response.success = False
            response.message = str(error)
            return response
        response.success = True
        response.message = "reset to the initial state, time 0"
        return response

    def _on_pause(self, request: Trigger.Request, response: Trigger.Response):
        response.success = True
        response.message = f"paused at t = {self.loop.pause():.3f} s"
        return response

    def _on_resume(self, request: Trigger.Request, response: Trigger.Response):
        response.success = True
        response.message = f"running from t = {self.loop.resume():.3f} s"
        return response


def _declare_section(node: WbmNode, cls: type[Settings], name: str) -> Settings:
    """The settings of the parameter section ``name`` (errors name the key with the section)."""
    try:
        return declare_settings(node, cls, prefix=f"{name}.")
    except ConfigError as error:
        if error.key == name or error.key.startswith(f"{name}."):
            raise
        key = f"{name}.{error.key}" if error.key else name
        raise ConfigError(error.path, key, error.expected, error.got) from None


def check_parameters(parameters: Mapping[str, Any]) -> None:
    """The checks this node makes of its parameters at start, without starting it.

    ``wbm launch`` calls it for its pre-flight checks: the node-level settings, the robot config,
    the backend (known and loadable) and its settings: the section named after it, or the file
    ``backend_config`` names, read with the backend's ``settings_class``.

    Raises:
        ConfigError: A value the node would refuse; the key is the parameter's name (an error in
            the robot config or backend config file keeps that file's path and key).
    """
    values = nest({name: v for name, v in parameters.items() if name not in ROS_PARAMETERS})
    backends = available_backends()
    settings = RobotInterfaceSettings.from_mapping(
        {key: value for key, value in values.items() if key not in backends}
    )
    load_robot(settings.robot)
    if settings.pacing == "lockstep":
        lockstep_lead(settings, 1.0 / settings.control_rate)
    try:
        backend_class = load_backend(settings.backend)
    except BackendError as error:
        expected = f"a robot backend ({error})"
        raise ConfigError(None, "backend", expected, settings.backend) from None
    section = values.get(settings.backend)
    if settings.backend_config:
        if section:
            raise ConfigError(
                None, settings.backend, "no section when backend_config names a file", "a section"
            )
        backend_class.settings_class.from_yaml(settings.backend_config)
        return
    try:
        backend_class.settings_class.from_mapping(section or {})
    except ConfigError as error:
        key = f"{settings.backend}.{error.key}" if error.key else settings.backend
        raise ConfigError(None, key, error.expected, error.got) from None


def main(args: list[str] | None = None) -> int:
    """Console entry point ``wbm_robot_interface``."""
    return run_node(RobotInterfaceNode, "wbm_robot_interface", args)


if __name__ == "__main__":
    sys.exit(main())
