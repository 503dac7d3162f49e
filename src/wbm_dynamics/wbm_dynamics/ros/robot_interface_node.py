"""The robot-interface node: hosts a robot backend and speaks the robot contract on ROS 2.

Run: ``wbm_robot_interface --ros-args --params-file config/icub/simulator.yaml``.

Topics (names relative, so a namespace applies; the clock is global):

- publishes ``/clock`` (rosgraph_msgs/Clock, simulated time), ``joint_states``
  (sensor_msgs/JointState, model joint order), ``imu`` (sensor_msgs/Imu, frame_id the IMU frame),
  ``ft/<sensor>`` (geometry_msgs/WrenchStamped, frame_id the sensor frame, child-on-parent
  convention of :mod:`wbm_description.robot_io`), ``ground_truth/odom`` (nav_msgs/Odometry,
  base pose in ``world_frame``, twist in the base frame); every stamp is simulated time;
- subscribes ``joint_commands`` (sensor_msgs/JointState: by name, any subset of joints, an empty
  array meaning "not commanded"; see :class:`~wbm_dynamics.ros.robot_messages.CommandAccumulator`)
  and ``apply_wrench`` (geometry_msgs/WrenchStamped: frame_id names the link, the wrench acts at
  its origin in world axes for ``push_duration``);
- services ``reset``, ``pause``, ``resume`` (std_srvs/Trigger).

Pacing: ``realtime`` (a simulation thread steps and publishes every ``1/publish_rate`` of
simulated time, sleeping to follow the wall clock times ``real_time_factor``),
``as_fast_as_possible`` (the same without sleeping) and ``lockstep``: each ``joint_commands``
message received (valid or not) advances the simulation by ``control_period`` and publishes the
new state once, so a closed loop that answers each state with one command is deterministic.
Until the first command the initial state is republished every 0.5 s of wall time (same stamp):
a lockstep controller should answer each stamp once.

Bad messages (unknown joint, length mismatch, NaN or inf, unknown link) are logged (throttled)
and dropped; the last valid command stays. The watchdog (``command_timeout``) puts the joints in
damping mode when commands stop, and clears the held command; the next command resumes.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

import numpy as np
import rclpy
from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import ParameterDescriptor
from rclpy._rclpy_pybind11 import RCLError
from rclpy.clock import Clock as RosClock
from rclpy.clock import ClockType
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState
from std_srvs.srv import Trigger

from wbm_description.exceptions import ConfigError, WbmError
from wbm_description.registry import load_robot
from wbm_description.ros.messages import (
    joint_state_message,
    odometry_message,
    wrench_from_message,
)
from wbm_description.whole_body_model import WholeBodyModel
from wbm_dynamics.backends import RobotBackend, create_backend
from wbm_dynamics.exceptions import BackendError, SimulationDiverged
from wbm_dynamics.interface_settings import RobotInterfaceSettings
from wbm_dynamics.ros.robot_messages import (
    CommandAccumulator,
    clock_message,
    imu_message,
    wrench_stamped_message,
)
from wbm_dynamics.settings import (
    CompliantContactSettings,
    NoiseSettings,
    RigidContactSettings,
    SimulatorSettings,
)
from wbm_dynamics.watchdog import CommandWatchdog, damping_command

NODE_NAME = "robot_interface"
LOG_PERIOD = 2.0  # at most one report per kind of bad input per period [s]
BOOTSTRAP_PERIOD = 0.5  # lockstep: republish the initial state until a first command [s]

_NODE_PARAMETERS = {
    "robot": "registered robot name or robot config file",
    "backend": "robot backend: simulator, mujoco, or a registered driver",
    "backend_config": "settings file of a hardware driver backend; empty: none",
    "pacing": "realtime, as_fast_as_possible or lockstep",
    "real_time_factor": "realtime pacing: simulated seconds per wall second",
    "control_period": "lockstep: simulated time per command [s]",
    "publish_rate": "state publication rate in simulated time [Hz]",
    "command_timeout": "watchdog timeout [s of simulated time]; 0 disables it",
    "push_duration": "duration of an apply_wrench push [s]",
    "world_frame": "frame of ground_truth/odom",
    "hold_posture_at_start": "servos hold the initial posture until a controller commands",
}


def _parameter_defaults() -> dict[str, Any]:
    """Every declared parameter (dotted name) with its default, from the settings classes."""
    node = RobotInterfaceSettings()
    defaults: dict[str, Any] = {name: getattr(node, name) for name in _NODE_PARAMETERS}
    simulator = SimulatorSettings()
    for name in ("dt", "integrator", "contact_model", "ground_friction", "seed"):
        defaults[f"simulator.{name}"] = getattr(simulator, name)
    defaults["simulator.max_speed"] = simulator.max_speed
    defaults["simulator.max_distance"] = simulator.max_distance
    for section, cls in (
        ("compliant", CompliantContactSettings),
        ("rigid", RigidContactSettings),
        ("noise", NoiseSettings),
    ):
        instance = cls()
        for name in instance.__dataclass_fields__:
            value = getattr(instance, name)
            defaults[f"simulator.{section}.{name}"] = 0.0 if value is None else value
    return defaults


def _nest(flat: dict[str, Any]) -> dict[str, Any]:
    """{"a.b": 1} -> {"a": {"b": 1}}."""
    nested: dict[str, Any] = {}
    for name, value in flat.items():
        keys = name.split(".")
        table = nested
        for key in keys[:-1]:
            table = table.setdefault(key, {})
        table[keys[-1]] = value
    return nested


class RobotInterfaceNode(Node):
    """Hosts a robot backend (the simulator) and publishes the robot contract.

    Raises:
        ConfigError: A parameter is missing its right type or range (named in the message).
        WbmError: The robot config or model cannot be loaded.
    """

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        self.settings = RobotInterfaceSettings.from_parameters(
            self._read_parameters(),
            source=f"parameters of node '{self.get_fully_qualified_name()}'",
        )
        settings = self.settings
        model = WholeBodyModel.from_config(load_robot(settings.robot))
        self.backend: RobotBackend = create_backend(
            settings.backend, model, settings.simulator, config_file=settings.backend_config
        )
        if not self.backend.steppable and (
            settings.pacing == "lockstep" or settings.real_time_factor != 1.0
        ):
            raise ConfigError(
                f"parameters of node '{self.get_fully_qualified_name()}'",
                "pacing",
                f"realtime with real_time_factor 1 for the real-time backend {settings.backend!r}",
                f"{settings.pacing}, real_time_factor {settings.real_time_factor:g}",
            )
        self.description = self.backend.description
        self._dt = self.description.period
        self._lock = threading.Lock()
        self._commands = CommandAccumulator(self.description.joint_names)
        self._watchdog = CommandWatchdog(settings.command_timeout)
        self._paused = False
        self._diverged = False
        self._resync = True
        self._running = False
        self._thread: threading.Thread | None = None
        self._commands_received = 0
        self._last_warnings: dict[str, float] = {}
        noise = settings.simulator.noise

        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self._clock_publisher = self.create_publisher(Clock, "/clock", reliable)
        self._joint_publisher = self.create_publisher(JointState, "joint_states", reliable)
        self._imu_publisher = (
            self.create_publisher(Imu, "imu", reliable) if self.description.imu_frame else None
        )
        self._imu_variances = (
            noise.imu_orientation**2,
            noise.imu_angular_velocity**2,
            noise.imu_linear_acceleration**2,
        )
        self._ft_publishers = {
            name: self.create_publisher(WrenchStamped, f"ft/{name}", reliable)
            for name in self.description.ft_sensor_frames
        }
        self._odom_publisher = (
            self.create_publisher(Odometry, "ground_truth/odom", reliable)
            if self.description.base_frame
            else None
        )
        self.create_subscription(JointState, "joint_commands", self._on_command, reliable)
        self.create_subscription(WrenchStamped, "apply_wrench", self._on_wrench, reliable)
        self.create_service(Trigger, "reset", self._on_reset)
        self.create_service(Trigger, "pause", self._on_pause)
        self.create_service(Trigger, "resume", self._on_resume)
        if settings.pacing == "lockstep":
            # Wall time even under use_sim_time: simulated time stands still until a command.
            steady = RosClock(clock_type=ClockType.STEADY_TIME)
            self.create_timer(BOOTSTRAP_PERIOD, self._bootstrap, clock=steady)
        self.get_logger().info(
            f"{settings.robot} on the {settings.backend} backend: "
            f"{settings.simulator.contact_model} contacts, {settings.simulator.integrator}, "
            f"dt {self._dt * 1e3:g} ms, pacing {settings.pacing}"
        )

    # ------------------------------------------------------------------ parameters

    def _read_parameters(self) -> dict[str, Any]:
        flat = {}
        for name, default in _parameter_defaults().items():
            description = _NODE_PARAMETERS.get(name, f"see SimulatorSettings: {name}")
            descriptor = ParameterDescriptor(
                description=description, read_only=True, dynamic_typing=True
            )
            flat[name] = self.declare_parameter(name, default, descriptor).value
        descriptor = ParameterDescriptor(
            description="environment boxes, each described by simulator.boxes.<name>.*",
            read_only=True,
        )
        names = self.declare_parameter(
            "simulator.box_names", Parameter.Type.STRING_ARRAY, descriptor
        ).value
        if names:
            flat["simulator.box_names"] = list(names)
            for box in names:
                for field, default in (
                    ("center", Parameter.Type.DOUBLE_ARRAY),
                    ("size", Parameter.Type.DOUBLE_ARRAY),
                    ("rpy", [0.0, 0.0, 0.0]),
                    ("friction", 0.8),
                ):
                    name = f"simulator.boxes.{box}.{field}"
                    typed = isinstance(default, Parameter.Type)
                    descriptor = ParameterDescriptor(read_only=True, dynamic_typing=not typed)
                    value = self.declare_parameter(name, default, descriptor).value
                    if value is not None:
                        flat[name] = value if isinstance(value, float | int) else list(value)
        return _nest(flat)

    # ------------------------------------------------------------------ running

    def _initial_command(self) -> None:
        """At start and reset: hold the initial posture if asked (lock held by the caller)."""
        if self.settings.hold_posture_at_start and hasattr(self.backend, "posture_command"):
            self.backend.write(self.backend.posture_command())

    def start(self) -> None:
        """Publish the initial state and, unless in lockstep, start the simulation thread."""
        with self._lock:
            self._initial_command()
        self._publish(self._outputs())
        if self.settings.pacing != "lockstep" and self._thread is None:
            self._running = True
            self._thread = threading.Thread(target=self._run, name="simulation", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop the simulation thread."""
        self._running = False
        if self._thread is not None:
            self._thread.join(timeout=5.0)
            self._thread = None
        close = getattr(self.backend, "close", None)
        if close is not None:
            close()

    def _run(self) -> None:
        settings = self.settings
        chunk = settings.publish_steps * self._dt
        # A real robot paces itself: only a simulation is slowed down to the wall clock.
        realtime = settings.pacing == "realtime" and self.backend.steppable
        anchor_wall = anchor_sim = 0.0
        while self._running and rclpy.ok():
            if self._resync:
                anchor_wall, anchor_sim = time.monotonic(), self.backend.time
                self._resync = False
            if self._paused or self._diverged:
                time.sleep(0.01)
                self._resync = True
                continue
            with self._lock:
                if self._watchdog.check(self.backend.time):
                    self._enter_damping_mode()
                if not self._advance(chunk):
                    continue
                outputs = self._outputs()
            self._publish(outputs)
            if realtime:
                target = anchor_wall + (outputs[0] - anchor_sim) / settings.real_time_factor
                delay = target - time.monotonic()
                if delay > 0.0:
                    time.sleep(delay)
                elif delay < -0.25:
                    self.get_logger().warning(
                        "cannot keep up with real_time_factor "
                        f"{settings.real_time_factor:g}: running slower",
                        throttle_duration_sec=10.0,
                    )
                    self._resync = True

    def _advance(self, duration: float) -> bool:
        """Advance the backend (lock held); False when it diverged."""
        try:
            self.backend.advance(duration)
        except SimulationDiverged as error:
            self._diverged = True
            self.get_logger().error(f"{error}; call the reset service")
            return False
        except BackendError as error:
            self._diverged = True
            self.get_logger().error(f"robot backend failed: {error}")
            return False
        return True

    def _enter_damping_mode(self) -> None:
        self._commands.clear()
        self.backend.write(damping_command(len(self.description.joint_names)))
        self.get_logger().warning(
            f"no joint_commands for {self.settings.command_timeout:g} s: "
            "joints in damping mode until commands resume"
        )

    # ------------------------------------------------------------------ outputs

    def _outputs(self):
        """(time, readings, base state) of the backend, lock held by the caller if needed."""
        return self.backend.time, self.backend.read(), self.backend.base_state()

    def _publish(self, outputs) -> None:
        try:
            self._publish_outputs(outputs)
        except RCLError:
            if rclpy.ok():
                raise
            self._running = False  # shutting down: the context is gone

    def _publish_outputs(self, outputs) -> None:
        stamp, readings, base = outputs
        description = self.description
        self._clock_publisher.publish(clock_message(stamp))
        self._joint_publisher.publish(
            joint_state_message(
                description.joint_names,
                readings.joint_positions,
                readings.joint_velocities,
                readings.joint_efforts,
                stamp_seconds=stamp,
            )
        )
        if self._imu_publisher is not None and readings.imu is not None:
            orientation, gyro, accelerometer = self._imu_variances
            self._imu_publisher.publish(
                imu_message(
                    readings.imu,
                    frame=description.imu_frame,
                    stamp_seconds=stamp,
                    orientation_variance=orientation,
                    angular_velocity_variance=gyro,
                    linear_acceleration_variance=accelerometer,
                )
            )
        for name, publisher in self._ft_publishers.items():
            publisher.publish(
                wrench_stamped_message(
                    readings.wrenches[name],
                    frame=description.ft_sensor_frames[name],
                    stamp_seconds=stamp,
                )
            )
        if self._odom_publisher is not None and base is not None:
            self._odom_publisher.publish(
                odometry_message(
                    base.configuration,
                    base.velocity,
                    world_frame=self.settings.world_frame,
                    base_frame=description.base_frame,
                    stamp_seconds=stamp,
                )
            )

    # ------------------------------------------------------------------ inputs

    def _warn_throttled(self, kind: str, message: str) -> None:
        """Log a bad input at most once per LOG_PERIOD per distinct problem (wall time)."""
        now = time.monotonic()
        if now - self._last_warnings.get(kind, -np.inf) >= LOG_PERIOD:
            self._last_warnings[kind] = now
            self.get_logger().warning(message)

    def _on_command(self, message: JointState) -> None:
        lockstep = self.settings.pacing == "lockstep"
        outputs = None
        with self._lock:
            self._commands_received += 1
            try:
                command = self._commands.merge(message)
            except WbmError as error:
                self._warn_throttled(
                    f"joint_commands:{error}",
                    f"joint_commands rejected, keeping the last valid command: {error}",
                )
            else:
                self.backend.write(command)
                if self._watchdog.command_received(self.backend.time):
                    self.get_logger().info("joint_commands resumed")
            if lockstep and not (self._paused or self._diverged):
                if self._advance(self.settings.control_steps * self._dt):
                    outputs = self._outputs()
        if outputs is not None:
            self._publish(outputs)

    def _on_wrench(self, message: WrenchStamped) -> None:
        try:
            wrench = wrench_from_message(message.wrench)
            with self._lock:
                self.backend.apply_wrench(
                    message.header.frame_id, wrench, self.settings.push_duration
                )
        except WbmError as error:
            self._warn_throttled(f"apply_wrench:{error}", f"apply_wrench rejected: {error}")

    def _on_reset(self, request: Trigger.Request, response: Trigger.Response):
        with self._lock:
            try:
                self.backend.reset()
            except WbmError as error:
                response.success = False
                response.message = str(error)
                return response
            self._commands.clear()
            self._watchdog.reset()
            self._initial_command()
            self._diverged = False
            self._resync = True
            self._commands_received = 0
            outputs = self._outputs()
        self._publish(outputs)
        response.success = True
        response.message = "reset to the initial state, time 0"
        return response

    def _on_pause(self, request: Trigger.Request, response: Trigger.Response):
        self._paused = True
        response.success = True
        response.message = f"paused at t = {self.backend.time:.3f} s"
        return response

    def _on_resume(self, request: Trigger.Request, response: Trigger.Response):
        self._paused = False
        self._resync = True
        response.success = True
        response.message = f"running from t = {self.backend.time:.3f} s"
        return response

    def _bootstrap(self) -> None:
        """Lockstep: republish the current state until a first command arrives."""
        if self._commands_received == 0:
            with self._lock:
                outputs = self._outputs()
            self._publish(outputs)


def main(args: list[str] | None = None) -> int:
    """Console entry point ``wbm_robot_interface``."""
    rclpy.init(args=args)
    try:
        try:
            node = RobotInterfaceNode()
        except WbmError as error:
            rclpy.logging.get_logger(NODE_NAME).fatal(str(error))
            return 1
        # Not rclpy.experimental.EventsExecutor: with rclpy 9.1 (Kilted wheels) it never answers
        # service requests (a minimal Trigger server times out; SingleThreadedExecutor answers in
        # ~1 ms), and this node serves reset/pause/resume.
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        node.start()
        try:
            executor.spin()
        except (KeyboardInterrupt, ExternalShutdownException):
            pass
        finally:
            node.stop()
            executor.shutdown()
            node.destroy_node()
        return 0
    finally:
        rclpy.try_shutdown()


if __name__ == "__main__":
    sys.exit(main())
