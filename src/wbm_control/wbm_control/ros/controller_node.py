"""The controller node: robot topics in, joint_commands out (wiring around the cores).

Run: ``wbm_controller --ros-args --params-file config/icub/controller.yaml``

Subscribes ``joint_states`` (sensor_msgs/JointState), ``imu`` (sensor_msgs/Imu), ``ft/<sensor>``
(geometry_msgs/WrenchStamped, one per F/T sensor of the robot config), ``targets/com``
(geometry_msgs/PointStamped) and ``targets/<task>`` (geometry_msgs/PoseStamped, one per frame
task); ``ground_truth/odom`` only when ``use_ground_truth`` is true.
Publishes ``joint_commands`` (sensor_msgs/JointState), ``odom`` (nav_msgs/Odometry, the
estimated base state, while it has a subscriber) and ``diagnostics``
(diagnostic_msgs/DiagnosticArray, ~20 Hz).

Walking (:mod:`wbm_control.walking_behaviour`, settings in the ``walking:`` section): subscribes
``cmd_vel`` (geometry_msgs/Twist: linear.x forward, linear.y leftward [m/s], angular.z yaw rate
[rad/s]; clamped to the walking limits with a throttled log; zero stops the robot in double
support with the feet side by side), ``footstep_plan`` (nav_msgs/Path of sole poses in the world
frame: x, y and yaw of each sole frame; each pose's header.frame_id names its foot, ``left``/
``right`` or the sole frame, or every one is empty and the sides alternate starting with the foot
the robot swings next, the left one from standing; the plan is checked whole: feet alternate,
reachable from the stance foot, no crossing) and ``goal_pose`` (geometry_msgs/PoseStamped in the
world frame: where the mid-feet walking frame should end, x, y, yaw); a bad command (NaN/inf, a
plan on the wrong foot, out of reach or crossing, a goal in another frame) is rejected with a
warning and changes nothing. Publishes ``walking/markers`` (visualization_msgs/MarkerArray, ~5 Hz:
remaining footsteps as sole-sized cubes, planned CoM/ZMP/DCM as line strips) and the walking state
in ``diagnostics`` (``walking/phase``, ``walking/next_footstep``, ``walking/command``, ...).

The cores: :class:`~wbm_control.controller.WholeBodyController` (the control step),
:class:`~wbm_control.controller_inputs.ControllerInputs` (the latest inputs, staleness, the
``inputs`` trigger, the wall-clock watchdog) and :class:`~wbm_control.safe_hold.SafeHold` (what
the log says about the safe hold). Trigger ``timer``: a step every 1/control_rate (sim time
under use_sim_time); ``inputs``: one step per robot sample, once joint_states, imu and every F/T
sensor of the same stamp have arrived; ``every_sample``: the same for every sample, in order,
none skipped or superseded (a lockstep simulator advances only when answered, and with a
``command_delay`` it runs samples ahead of the commands, so a sample's last message can come
after the next sample's first: the input thread hands them over in the order of their stamps,
:class:`~wbm_description.ros.input_thread.InputThread`'s ``ordered``).

Threads: the robot inputs (joint_states, imu, ft/*, ground_truth/odom, and /clock under
use_sim_time, taken first) are taken and handled on the node's input thread
(:class:`~wbm_description.ros.input_thread.InputThread`), which waits on them alone and hands over
only the newest queued sample of each topic and publisher (every sample with trigger
``every_sample``): when the controller falls behind
(realtime pacing on a loaded machine) it answers the robot's newest state, as a ros2_control loop
reads its hardware, instead of taking, decoding and skipping the superseded samples one by one
(``wbm_benchmark_bringup --rows realtime-500 --seconds 15``, every sample and the newest
alternated, 3 runs each, machine load 5.5-7 from other work: the readings' publication to the
controller's step 10.1 / 8.8 / 7.7 -> 4.5 / 2.6 / 2.6 ms median, readings to command 24.3 / 23.5 /
18.6 -> 15.2 / 13.8 / 13.3 ms median, 68 / 57 / 73 -> 55 / 53 / 50 ms p99; the share of samples
answered stayed within the noise, 16-25 %). The executor's wake-up costs about 0.5-1 ms of CPU per
message with every entity of the node, and the trigger ``inputs`` steps once the last of a sample's
messages arrived. The robot inputs' callbacks take the values they use read straight from the
serialized messages (:func:`wbm_description.ros.cdr.values_decoder`: stamp, frame_id, values; no
message objects), with the same checks. Targets, walking commands and timers stay on the
executor, in the input thread's ``core_group``: they hold its lock while they run, so no two
callbacks touch the core at once. A subscription or timer added to this node that touches the
core must be created with ``callback_group=core``
(``tests/control/test_controller_threads.py`` checks it).

Start: the node commands nothing until its first control step, which starts from the measured
state (the robot side holds the initial posture until then, ``hold_posture_at_start``), so the
first command takes over from the robot side's hold without a limp interval.

Joint states are screened first (:class:`~wbm_control.joint_state_guard.JointStateGuard`):
samples from a second publisher (the publisher GID of the message info), stamped before the
previous one, or with a joint moving faster than its speed limit allows are ignored (the last
command stays; a throttled log and a ``wbm_controller/joint_states`` diagnostics status say
why). A stamp going back to 0 is the robot's time restarting (a simulator's ``reset``): the
controller core is reset (estimator, contacts, references) and starts again from the measured
state, while the robot side holds its initial posture.

Safety: inputs older than ``stale_timeout`` at two control ticks in a row (one stale tick is
skipped: after the process was starved the tick can come before the queued inputs are taken,
``ControllerInputs.stale_at_tick``), joint_states silent for 0.5 s of wall time (the
robot side gone under sim time), or a failed step switch to the safe command (hold the posture
with the contact-consistent static torques, the controller's ``hold_command``) with a log;
control resumes by itself when inputs come back. Malformed messages
(unknown joint, length mismatch, NaN/inf, wrong frame) are dropped with a throttled log;
targets are rejected (NaN, unknown frame) or clamped (out of reach) with a log.
"""

from __future__ import annotations

import time
from functools import partial
from operator import itemgetter
from typing import Any

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import PointStamped, PoseStamped, Twist, WrenchStamped
from nav_msgs.msg import Odometry, Path
from rclpy.clock import Clock, ClockType
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.subscription import MessageInfo
from sensor_msgs.msg import Imu, JointState
from visualization_msgs.msg import MarkerArray

from wbm_control.controller import WholeBodyController
from wbm_control.controller_inputs import ControllerInputs, stale_reason, wrench_input
from wbm_control.controller_settings import ControllerSettings
from wbm_control.exceptions import TargetRejected
from wbm_control.jit.warm_up import warm_up_all
from wbm_control.joint_state_guard import JointStateGuard, Screening
from wbm_control.ros.controller_checks import check_parameters
from wbm_control.ros.messages import (
    CommandMessage,
    JointStateReader,
    diagnostics_array,
    diagnostics_message,
    imu_from_values,
    point_from_message,
    pose_from_message,
    stamp_nanoseconds,
)
from wbm_control.ros.walking_messages import (
    footsteps_from_path,
    goal_from_pose,
    velocity_from_twist,
    walking_markers,
    walking_values,
)
from wbm_control.safe_hold import LogLine, SafeHold
from wbm_control.walking import WalkingError
from wbm_control.walking_behaviour import WalkingBehaviour
from wbm_description.exceptions import WbmError
from wbm_description.registry import load_robot
from wbm_description.robot_io import JointCommand
from wbm_description.ros.cdr import values_decoder
from wbm_description.ros.cycle_timing import CycleTiming
from wbm_description.ros.input_thread import InputThread, quiet_publisher_events
from wbm_description.ros.messages import (
    OdometryMessage,
    base_from_odometry,
    wrench_from_values,
)
from wbm_description.ros.node_runtime import (
    WbmNode,
    declare_settings,
    run_node,
)
from wbm_description.whole_body_model import WholeBodyModel

DIAGNOSTICS_RATE = 20.0  # [Hz], about
WATCHDOG_PERIOD = 0.1  # [s] of wall time
WATCHDOG_KIND = "no joint_states (wall clock)"  # the watchdog's reasons, for the log
GUARD_REPORT_PERIOD = 1.0  # [s] of wall time between joint_states diagnostics reports
MARKERS_RATE = 5.0  # [Hz], about: walking/markers
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
        # The compiled kernels loaded (or compiled) now, not in the first control cycle.
        warm_up_all()
        self.sensor_frames = {s.name: s.frame for s in robot.ft_sensors}
        self.inputs = ControllerInputs(
            self.model.ndof,
            list(self.sensor_frames),
            stale_timeout=self.settings.stale_timeout,
            trigger=self.settings.trigger,
            max_sample_age=2.0 * self.settings.control_period,
        )
        self.safe_hold = SafeHold()
        pin_model = self.model.model
        self.joint_state_guard = JointStateGuard(
            pin_model.velocityLimit[pin_model.nv - self.model.ndof :],
            self.model.joint_names,
        )
        self._last_guard_report = -float("inf")
        self._guard_pending: str | None = None  # the reason of a rejection not yet reported
        self.base_frame = robot.base_link
        self._steps = 0
        self._joint_states = JointStateReader(self.model.joint_indices, self.model.ndof)
        self._command = CommandMessage(self.model.joint_names)
        self._odometry = OdometryMessage(
            world_frame=self.settings.world_frame, base_frame=robot.base_link
        )
        self._joint_states_arrived = 0.0
        self.timing = CycleTiming(self, TIMING_COLUMNS)
        self._diagnostics_every = max(1, round(self.settings.control_rate / DIAGNOSTICS_RATE))
        self._markers_every = max(1, round(self.settings.control_rate / MARKERS_RATE))
        self.walking = WalkingBehaviour(
            self.controller,
            self.settings.walking.replace(time_step=self.settings.control_period),
        )
        self.sole_frames = {
            side: robot.sole(name).frame
            for side, name in (
                ("left", self.walking.left_sole),
                ("right", self.walking.right_sole),
            )
        }

        # The robot inputs are taken on the input thread (a wait set of their own, not the
        # executor's of every entity); the callbacks that share the core with them hold its lock.
        every_sample = self._every_sample = self.settings.trigger == "every_sample"
        self.input_thread = InputThread(self, ordered=every_sample)
        core = self.input_thread.core_group
        # Each wake-up: the newest sample of each topic and publisher (``newest``): a controller
        # that fell behind answers the robot's newest state (module docstring); with trigger
        # every_sample every sample, handed over in the order of the samples' stamps.
        inputs = partial(
            self.input_thread.subscribe,
            newest=not every_sample,
            stamp=itemgetter(0) if every_sample else None,
        )
        sensor_qos = QoSProfile(depth=5, reliability=ReliabilityPolicy.BEST_EFFORT)
        reliable = QoSProfile(depth=10)
        # Their callbacks take the values they use, read from the serialized message (no
        # message object or view; cdr.values_decoder).
        inputs(
            JointState,
            "joint_states",
            self._on_joint_states,
            sensor_qos,
            decode=values_decoder(JointState),
        )
        inputs(Imu, "imu", self._on_imu, sensor_qos, decode=values_decoder(Imu))
        for sensor in self.sensor_frames:
            inputs(
                WrenchStamped,
                wrench_input(sensor),
                partial(self._on_wrench, sensor),
                sensor_qos,
                decode=values_decoder(WrenchStamped),
            )
        if self.settings.use_ground_truth:
            inputs(
                Odometry,
                "ground_truth/odom",
                self._on_ground_truth,
                sensor_qos,
                stamp=(lambda m: stamp_nanoseconds(m.header.stamp)) if every_sample else None,
            )
        self.input_thread.take_clock()  # /clock (use_sim_time) first, on the same thread
        self.create_subscription(
            PointStamped, "targets/com", self._on_com_target, reliable, callback_group=core
        )
        for task in self.controller.frame_tasks:
            self.create_subscription(
                PoseStamped,
                f"targets/{task}",
                lambda message, name=task: self._on_frame_target(name, message),
                reliable,
                callback_group=core,
            )
        self.create_subscription(Twist, "cmd_vel", self._on_cmd_vel, reliable, callback_group=core)
        self.create_subscription(
            Path, "footstep_plan", self._on_footstep_plan, reliable, callback_group=core
        )
        self.create_subscription(
            PoseStamped, "goal_pose", self._on_goal_pose, reliable, callback_group=core
        )
        self.markers_publisher = self.create_publisher(MarkerArray, "walking/markers", reliable)
        quiet = quiet_publisher_events()  # no executor wake-up per message published
        self.command_publisher = self.create_publisher(
            JointState, "joint_commands", reliable, event_callbacks=quiet
        )
        self.odom_publisher = self.create_publisher(
            Odometry, "odom", reliable, event_callbacks=quiet
        )
        self.diagnostics_publisher = self.create_publisher(
            DiagnosticArray, "diagnostics", reliable
        )
        if self.settings.trigger == "timer":
            self.create_timer(
                self.settings.control_period, self._on_control_timer, callback_group=core
            )
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.create_timer(WATCHDOG_PERIOD, self._on_watchdog, callback_group=core, clock=steady)
        self.get_logger().info(
            f"wbm_controller: robot {robot.name}, mode {self.settings.mode}, "
            f"{self.settings.control_rate:g} Hz, tasks {sorted(self.controller.frame_tasks)}"
        )

    # ------------------------------------------------------------------ life cycle

    def start(self) -> None:
        """Start taking the robot inputs (the input thread); then CPU affinity, latency, priority.

        ``realtime_threads`` ``"loop"``: the input thread (it takes the samples, steps and
        publishes the command) and the middleware's receive threads only.
        """
        self.input_thread.start()
        self.apply_cpu_affinity(self.settings.cpu_affinity)
        self.request_cpu_latency(self.settings.cpu_dma_latency)
        self.apply_realtime_priority(
            self.settings.realtime_priority,
            self.settings.realtime_threads,
            [self.input_thread.native_id],
        )

    def stop(self) -> None:
        """Stop the input thread; end the CPU latency request."""
        self.release_cpu_latency()
        self.input_thread.stop()

    # ------------------------------------------------------------------ robot inputs

    def _now(self) -> float:
        return self.now_nanoseconds() * 1e-9

    def _on_joint_states(self, values: tuple[Any, ...], info: MessageInfo) -> None:
        """A joint state: (stamp [ns], frame_id, names, position, velocity, effort)."""
        arrived = time.monotonic()
        stamp, _, names, position, velocity, effort = values
        try:
            positions, velocities, efforts = self._joint_states.read_values(
                names, position, velocity, effort
            )
        except WbmError as error:
            self.throttled.warning("joint_states", f"dropped joint_states: {error}")
            return
        wall_time = self._joint_states_arrived = arrived
        gid = info.get("publisher_gid") if info else None
        screening = self.joint_state_guard.screen(
            positions,
            stamp=stamp,
            wall_time=wall_time,
            publisher=bytes(gid["data"]) if gid else None,
        )
        if not screening.accepted:
            self._report_joint_states(screening, wall_time)
            return
        if screening.restart:
            self._restart(screening)
        due = self.inputs.set_joint_states(
            positions, velocities, efforts, time=self._now(), stamp=stamp, wall_time=wall_time
        )
        if due:
            self._control_step(stamp)

    def _report_joint_states(self, screening: Screening, wall_time: float) -> None:
        """Log (throttled) and report in diagnostics a rejected joint state sample.

        Reports go out at most every :data:`GUARD_REPORT_PERIOD`; a rejection within it is
        reported (with the counts then) by the first control step after the period.
        """
        self.throttled.warning(f"joint_states:{screening.kind}", screening.reason)
        self._guard_pending = screening.reason
        self._flush_guard_report(wall_time)

    def _flush_guard_report(self, wall_time: float) -> None:
        """Publish the pending joint_states report if the period since the last one is over."""
        if self._guard_pending is None:
            return
        if wall_time - self._last_guard_report < GUARD_REPORT_PERIOD:
            return
        self._last_guard_report = wall_time
        counts = {f"rejected/{k}": str(n) for k, n in self.joint_state_guard.rejected.items()}
        self.diagnostics_publisher.publish(
            diagnostics_array(
                "wbm_controller/joint_states",
                DiagnosticStatus.WARN,
                self._guard_pending,
                counts,
                self._now(),
            )
        )
        self._guard_pending = None

    def _restart(self, screening: Screening) -> None:
        """The robot's time restarted (or its publisher changed): start again from its state."""
        self.get_logger().warning(screening.reason)
        self.controller.reset()
        self.inputs.restart()
        self._log(self.safe_hold.leave())

    def _on_imu(self, values: tuple[int, str, tuple[float, ...]]) -> None:
        """An IMU reading: (stamp [ns], frame_id, the 37 floats of cdr.imu_values)."""
        stamp, _, v = values
        try:
            reading = imu_from_values(v[0:4], v[13:16], v[25:28])
        except WbmError as error:
            self.throttled.warning("imu", f"dropped imu: {error}")
            return
        if self.inputs.set_imu(reading, time=self._now(), stamp=stamp):
            self._control_step(stamp)

    def _on_wrench(self, sensor: str, values: tuple[int, str, tuple[float, ...]]) -> None:
        """An F/T reading: (stamp [ns], frame_id, force xyz and torque xyz)."""
        stamp, frame_id, v = values
        if frame_id and frame_id != self.sensor_frames[sensor]:
            topic = wrench_input(sensor)
            self.throttled.warning(
                topic,
                f"dropped {topic}: frame_id '{frame_id}', expected '{self.sensor_frames[sensor]}'",
            )
            return
        try:
            wrench = wrench_from_values(v)
        except WbmError as error:
            topic = wrench_input(sensor)
            self.throttled.warning(topic, f"dropped {topic}: {error}")
            return
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
                f"({self.controller.target_note('com')})"
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
                f"target for '{task}' clamped from {np.round(pose.translation, 4)} to "
                f"{np.round(accepted.translation, 4)} ({self.controller.target_note(task)})"
            )

    # ------------------------------------------------------------------ walking

    def _on_cmd_vel(self, message: Twist) -> None:
        try:
            command = velocity_from_twist(message)
            accepted, clamped = self.walking.set_velocity_command(*command)
        except WbmError as error:
            self.throttled.warning("cmd_vel", f"cmd_vel rejected: {error}")
            return
        if clamped:
            self.throttled.warning(
                "cmd_vel_clamped",
                f"cmd_vel clamped from {np.round(command, 4)} to {np.round(accepted, 4)} "
                "(walking limits)",
            )

    def _on_footstep_plan(self, message: Path) -> None:
        try:
            walking = self.walking.walking
            first = "left"
            if walking is not None:
                first = walking.state_machine.next_swing_side or "left"
            steps = footsteps_from_path(
                message, self.settings.world_frame, self.sole_frames, first
            )
            self.walking.set_footstep_plan(steps)
        except (WbmError, WalkingError) as error:
            self.get_logger().warning(f"footstep_plan rejected: {error}")
            return
        self.get_logger().info(f"footstep_plan accepted: {len(steps)} steps")

    def _on_goal_pose(self, message: PoseStamped) -> None:
        try:
            goal = goal_from_pose(message, self.settings.world_frame)
            steps = self.walking.set_goal(*goal)
        except (WbmError, WalkingError) as error:
            self.get_logger().warning(f"goal_pose rejected: {error}")
            return
        self.get_logger().info(
            f"goal_pose accepted: ({goal[0]:.3f}, {goal[1]:.3f}, {goal[2]:.3f}) in "
            f"{len(steps)} steps"
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
        if reason is None or not self.controller.started:
            return  # before its first step the robot side holds the posture: do not override it
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
        stale, confirmed = self.inputs.stale_at_tick(now)
        if stale:
            # Stale at this tick only: skipped, the inputs are still queued (stale_at_tick).
            if not self.controller.started:
                self.throttled.warning("waiting", f"waiting for inputs: {', '.join(stale)}")
            elif confirmed:
                self._hold(stale_reason(stale), now)
            self._publish_diagnostics(now)
            return
        stamp_ns = sample_stamp if sample_stamp is not None else round(now * 1e9)
        # every_sample (a lockstep robot running ahead): the sample's own time, not the clock's,
        # which is the sample's or a newer one's as the messages happened to come.
        at = stamp_ns * 1e-9 if self._every_sample and sample_stamp is not None else now
        try:
            command = self.controller.step(
                self.inputs.readings(at), ground_truth=self.inputs.ground_truth
            )
        except (WbmError, ArithmeticError, ValueError, np.linalg.LinAlgError) as error:
            # Inputs the core refuses or numerics that break on them: hold, never crash.
            command = self.controller.hold_command(
                f"step failed: {error}", self.inputs.joint_positions
            )
        computed = time.monotonic()
        status = self.controller.status
        self._log(self.safe_hold.after_step(status.safe, status.reason))
        if status.fallback:
            self.throttled.warning(
                "fallback", f"whole-body QP fallback '{status.fallback}': {status.fallback_reason}"
            )
        self.command_publisher.publish(self._command.fill(command, stamp_ns))
        if status.estimate is not None and self.odom_publisher.get_subscription_count():
            # Only when someone listens: a publication costs 50-100 us of CPU here even unheard.
            q, v = status.estimate.q, status.estimate.v
            self.odom_publisher.publish(self._odometry.fill(q[:7], v[:6], stamp_ns))
        self.timing.add(stamp_ns, self._joint_states_arrived, started, computed, time.monotonic())
        self._publish_diagnostics(now)

    def _publish_command(self, command: JointCommand, now: float) -> None:
        self.command_publisher.publish(self._command.fill(command, round(now * 1e9)))

    def _publish_diagnostics(self, now: float) -> None:
        self._steps += 1
        if self._guard_pending is not None:
            self._flush_guard_report(time.monotonic())
        if self._steps % self._diagnostics_every == 0:
            walking = self.walking.walking
            message = diagnostics_message(self.controller.status, now)
            message.status[0].values.extend(
                KeyValue(key=k, value=v)
                for k, v in walking_values(walking, self.walking.references).items()
            )
            self.diagnostics_publisher.publish(message)
        if self._steps % self._markers_every == 0:
            walking = self.walking.walking
            self.markers_publisher.publish(
                walking_markers(walking, self.walking.references, self.settings.world_frame, now)
            )


def main(args: list[str] | None = None) -> int:
    """Entry point of ``wbm_controller`` (exit code 2 when it cannot start)."""
    return run_node(ControllerNode, "wbm_controller", args)


__all__ = ["ControllerNode", "check_parameters", "main"]

if __name__ == "__main__":
    raise SystemExit(main())
