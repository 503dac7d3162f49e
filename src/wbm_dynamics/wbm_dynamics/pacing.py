"""The pacing loop of the robot-interface node, without ROS: when the robot advances and publishes.

:class:`PacingLoop` owns everything the node decides between a backend and its topics:

- ``realtime``: a thread advances the backend by one publication period (``publish_rate``, in
  robot time) at a time and publishes, sleeping so that robot time follows the wall clock times
  ``real_time_factor``; when it falls more than :data:`BEHIND_TOLERANCE` behind, it warns (at
  most every :data:`BEHIND_LOG_PERIOD`) and restarts its schedule instead of catching up. A
  backend that is not steppable (a real robot) paces itself: no sleeps are added;
- ``as_fast_as_possible``: the same without sleeping;
- ``lockstep``: each command received (valid or not) advances the backend by one control period
  (``1 / control_rate``) and publishes once, so a closed loop that answers each state with one
  command is deterministic. Until the first command, the state is republished every
  :data:`BOOTSTRAP_PERIOD` of wall time (same stamp), so a controller that starts late sees it;
- pause and resume: time stands still while paused;
- divergence: a :class:`~wbm_dynamics.exceptions.SimulationDiverged` (or a failing backend) stops
  the robot until :meth:`PacingLoop.reset`;
- the command watchdog (:class:`~wbm_dynamics.watchdog.CommandWatchdog`): when commands stop for
  ``command_timeout`` of robot time, the held command is cleared and the joints go to
  ``command_timeout_action``: the posture hold of the start (default: a held torque command,
  kept on a moving robot, would topple it, and damping alone lets it fall), reached from the
  command it replaces (and the joints' positions) over ``command_timeout_return``
  (:class:`~wbm_dynamics.watchdog.PostureReturn`, its references rewritten every publication
  period), or the damping mode; the next command resumes;
- late commands: a command names the robot time of the sample it answers (its stamp). The
  watchdog counts from that stamp, not from the arrival, so a controller that answers ever older
  samples trips it; a command older than the one held (out of order) or already
  ``command_timeout`` old on arrival is dropped (:meth:`PacingLoop.command` says why), and so is
  one stamped after the robot time (computed before a reset and still in transit: taking it as
  answering the new time 0 applied a fallen robot's torques to the reset one). A stamp
  of 0 means unstamped: the command counts as answering the current time;
- ``hold_posture_at_start``: at start and after a reset, the backend holds
  :meth:`~wbm_dynamics.backends.backend.RobotBackend.hold_posture_command` until a command comes;
- ``command_delay`` (a simulated bus or actuation latency): a command answering the sample of
  robot time ``s`` is held back until the first step that starts at or after ``s +
  command_delay`` (0: written at once, acting on the next step). In lockstep the delay is a whole
  number ``n`` of control periods and the robot runs ``n`` samples ahead of the commands: the
  first command that advances after the start or a reset (not one received while paused)
  advances ``n + 1`` control periods (publishing each) instead of one, and every later command
  one. So the sample a command answers was published ``n`` samples before the one its arrival
  lets the robot step to: the simulator steps while the controller computes (the two sides of
  the loop run at once, not in turns), and the loop stays deterministic, each command acting on
  exactly the step ``command_delay`` after its sample, as with a robot whose bus delivers a
  command one or more cycles after the reading it answers. A controller in such a loop answers
  every sample in order (its trigger ``every_sample``).

Calls into the backend are serialized by one lock (the thread, and the node's callbacks through
:meth:`PacingLoop.command`, :meth:`PacingLoop.push`, :meth:`PacingLoop.reset`); publishing happens
outside it. The wall clock is injected (:class:`WallClock`), so tests run the loop one iteration
at a time (:meth:`PacingLoop.run_once`) on a clock of their own.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from wbm_description.exceptions import ConfigError
from wbm_description.robot_io import RobotReadings
from wbm_dynamics.backends.backend import BaseState, RobotBackend
from wbm_dynamics.exceptions import BackendError, SimulationDiverged
from wbm_dynamics.held_command import CommandUpdate, HeldCommand
from wbm_dynamics.interface_settings import RobotInterfaceSettings
from wbm_dynamics.watchdog import CommandWatchdog, PostureReturn, damping_command

LATE = "late"
"""Why :meth:`PacingLoop.command` dropped a command: its sample is ``command_timeout`` old."""

OUT_OF_ORDER = "out of order"
"""Why :meth:`PacingLoop.command` dropped a command: it answers an older sample than the held."""

FROM_THE_FUTURE = "from the future"
"""Why :meth:`PacingLoop.command` dropped a command: it answers a sample later than the robot
time, one the robot has not published: in practice one computed before a ``reset`` (robot time
went back to 0) and still in transit."""

FUTURE_TOLERANCE = 1e-6
"""A stamp at most this far after the robot time is taken as the robot time (rounding) [s]."""

BOOTSTRAP_PERIOD = 0.1
"""Lockstep: the state is republished this often until a first command [s of wall time]."""

POLL_PERIOD = 0.01
"""How often a paused or stopped loop looks again [s of wall time]."""

LOCKSTEP_POLL_PERIOD = 0.05
"""Lockstep: how often the loop's thread looks whether the bootstrap publication is due [s]."""

BEHIND_TOLERANCE = 0.25
"""Realtime: how far behind schedule the loop may fall before it restarts it [s of wall time]."""

BEHIND_LOG_PERIOD = 10.0
"""At most one "cannot keep up" and one watchdog warning per this period [s of wall time]."""


class WallClock(Protocol):
    """Where the loop reads and spends wall time."""

    def now(self) -> float:
        """Monotonic wall time [s]."""

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` [s] of wall time."""


class MonotonicClock:
    """The real wall clock: :func:`time.monotonic` and :func:`time.sleep`."""

    def now(self) -> float:
        """Monotonic wall time [s]."""
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` [s]."""
        time.sleep(seconds)


@dataclass(frozen=True)
class RobotOutputs:
    """One publication: everything the node publishes, at one robot time.

    Attributes:
        time: Robot time [s] (simulated time, or a real robot's device time); every stamp.
        readings: The backend's readings (:meth:`RobotBackend.read`).
        base: The true base state (ground truth odometry), or None.
        step_started: When the backend started advancing to ``time`` [s of
            :func:`time.monotonic`]; 0 for a publication without a step (start, reset, bootstrap).
        step_ended: When its readings were ready [s of :func:`time.monotonic`].
    """

    time: float
    readings: RobotReadings
    base: BaseState | None
    step_started: float = 0.0
    step_ended: float = 0.0


Publish = Callable[[RobotOutputs], None]
Log = Callable[[str, str], None]
"""``log(level, text)`` with level "info", "warning" or "error"."""


def lockstep_lead(
    settings: RobotInterfaceSettings, control_period: float, source: str | Path | None = None
) -> int:
    """Samples a lockstep robot runs ahead of the commands: ``command_delay`` in control periods.

    Args:
        settings: The node's settings (``command_delay``, ``command_timeout``).
        control_period: Robot time one command advances [s].
        source: Where the settings came from, for errors.

    Raises:
        ConfigError: A command delay that is not a whole number of control periods, or not less
            than a ``command_timeout`` that is on (each command arrives ``command_delay`` after
            its sample: the watchdog would drop every one as late).
    """
    delay = settings.command_delay
    if delay <= 0.0:
        return 0
    lead = round(delay / control_period)
    if lead < 1 or abs(lead * control_period - delay) > 1e-9:
        raise ConfigError(
            source,
            "command_delay",
            f"in lockstep a whole number of control periods ({control_period:g} s at "
            f"control_rate {settings.control_rate:g} Hz)",
            f"{delay:g}",
        )
    timeout = settings.command_timeout
    if timeout > 0.0 and delay >= timeout:
        raise ConfigError(
            source,
            "command_delay",
            f"in lockstep less than command_timeout ({timeout:g} s), or command_timeout 0",
            f"{delay:g}",
        )
    return lead


def _steps(rate: float, period: float) -> int:
    """Backend periods per cycle of ``rate`` [Hz] (at least 1)."""
    return max(1, round(1.0 / (rate * period)))


class PacingLoop:
    """Advances a backend and publishes its outputs, as the settings' pacing says.

    Args:
        backend: The robot backend.
        settings: The node's settings (pacing, rates, watchdog, push duration, posture hold).
        publish: Called with each publication (outside the lock; from the loop's thread or from
            the caller of :meth:`command` and :meth:`reset`).
        log: ``log(level, text)``.
        clock: The wall clock; default :class:`MonotonicClock`.
        source: Where the settings came from, for errors.

    Raises:
        ConfigError: Lockstep, a real-time factor other than 1 or a command delay with a
            backend that is not steppable (a real robot); in lockstep, a command delay that is
            not a whole number of control periods.
    """

    def __init__(
        self,
        backend: RobotBackend,
        settings: RobotInterfaceSettings,
        *,
        publish: Publish,
        log: Log,
        clock: WallClock | None = None,
        source: str | Path | None = None,
    ):
        if not backend.steppable and (
            settings.pacing == "lockstep" or settings.real_time_factor != 1.0
        ):
            raise ConfigError(
                source,
                "pacing",
                f"realtime with real_time_factor 1 for the real-time backend {settings.backend!r}",
                f"{settings.pacing}, real_time_factor {settings.real_time_factor:g}",
            )
        if not backend.steppable and settings.command_delay > 0.0:
            raise ConfigError(
                source,
                "command_delay",
                f"0 for the real-time backend {settings.backend!r} (a real robot's commands "
                "take the time its bus takes)",
                f"{settings.command_delay:g}",
            )
        self.backend = backend
        self.settings = settings
        self.clock: WallClock = clock if clock is not None else MonotonicClock()
        self._publish = publish
        self._log = log
        self.period = backend.description.period
        self.publish_steps = _steps(settings.publish_rate, self.period)
        """Backend periods advanced per publication (realtime, as fast as possible)."""
        self.control_steps = _steps(settings.control_rate, self.period)
        """Backend periods advanced per command (lockstep)."""
        self.lockstep = settings.pacing == "lockstep"
        self.command_delay = settings.command_delay
        self.lead = (
            lockstep_lead(settings, self.control_steps * self.period, source)
            if self.lockstep
            else 0
        )
        """Lockstep: samples the robot runs ahead of the commands (``command_delay`` in control
        periods)."""
        self._delayed: deque[tuple[float, CommandUpdate]] = deque()
        """Commands held back by ``command_delay``: (robot time they act from [s], update)."""
        self._ahead = False
        """Lockstep: whether the robot went ``lead`` samples ahead since the start or reset."""
        # A real robot paces itself: only a simulation is slowed down to the wall clock.
        self.follows_wall_clock = settings.pacing == "realtime" and backend.steppable
        self._ndof = len(backend.description.joint_names)
        self._lock = threading.Lock()
        self._held = HeldCommand(self._ndof)
        self._watchdog = CommandWatchdog(settings.command_timeout)
        # The trip's posture hold, computed once here (model work), not in the loop at a trip.
        self._posture_return = (
            PostureReturn(backend.hold_posture_command(), settings.command_timeout_return)
            if settings.command_timeout_action == "hold_posture"
            else None
        )
        self.paused = False
        self.diverged = False
        self.commands_received = 0
        """Commands received (valid or not) since start or the last reset."""
        self._held_stamp = -math.inf
        self._trips = 0
        """Watchdog trips since start or the last reset."""
        self._trip_logged = False
        """Whether the current trip was logged (then its end is logged too)."""
        self._trip_mode = ""
        self._last_trip_log = -math.inf
        self._resync = True
        self._anchor_wall = self._anchor_time = 0.0
        self._next_bootstrap = math.inf
        self._last_behind_warning = -math.inf
        self._running = False
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ life cycle

    def start(self, *, thread: bool = True) -> None:
        """Hold the initial command, publish the initial state, and start the loop's thread.

        Args:
            thread: Start the thread that calls :meth:`run_once` until :meth:`stop` (tests
                call :meth:`run_once` themselves).
        """
        with self._lock:
            self._initial_command()
            outputs = self._outputs()
        self._next_bootstrap = self.clock.now() + BOOTSTRAP_PERIOD
        self._publish(outputs)
        if thread and self._thread is None:
            self._running = True
            self._thread = threading.Thread(target=self._run, name="pacing", daemon=True)
            self._thread.start()

    @property
    def native_id(self) -> int | None:
        """The loop thread's id in the kernel (None when no thread runs)."""
        return None if self._thread is None else self._thread.native_id

    def stop(self) -> None:
        """Stop the loop's thread (and wait for it)."""
        self._running = False
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5.0)
        self._thread = None

    def request_stop(self) -> None:
        """Ask the loop's thread to end, without waiting (e.g. from a publish callback)."""
        self._running = False

    def _run(self) -> None:
        while self._running:
            self.run_once()

    def run_once(self) -> None:
        """One iteration of the loop: a publication period, a pause poll or a bootstrap wait."""
        if self.lockstep:
            self._bootstrap()
            return
        clock = self.clock
        if self._resync:
            self._anchor_wall, self._anchor_time = clock.now(), self.backend.time
            self._resync = False
        if self.paused or self.diverged:
            clock.sleep(POLL_PERIOD)
            self._resync = True
            return
        with self._lock:
            if self._watchdog.check(self.backend.time):
                self._command_timed_out()
            elif self._watchdog.tripped:
                if not self._trip_logged:
                    self._log_trip()  # a trip whose log the throttle held back, still lasting
                self._return_towards_posture()
            self._apply_due()
            started = time.monotonic()
            if not self._advance(self.publish_steps * self.period):
                return
            outputs = self._outputs(started)
        self._publish(outputs)
        if self.follows_wall_clock:
            target = (
                self._anchor_wall
                + (outputs.time - self._anchor_time) / self.settings.real_time_factor
            )
            now = clock.now()
            delay = target - now
            if delay > 0.0:
                clock.sleep(delay)
            elif delay < -BEHIND_TOLERANCE:
                if now - self._last_behind_warning >= BEHIND_LOG_PERIOD:
                    self._last_behind_warning = now
                    self._log(
                        "warning",
                        f"cannot keep up with real_time_factor "
                        f"{self.settings.real_time_factor:g}: running slower",
                    )
                self._resync = True

    def _bootstrap(self) -> None:
        """Lockstep: republish the current state until a first command arrives."""
        now = self.clock.now()
        if self.commands_received == 0 and now >= self._next_bootstrap:
            self._next_bootstrap = now + BOOTSTRAP_PERIOD
            with self._lock:
                outputs = self._outputs()
            self._publish(outputs)
        self.clock.sleep(LOCKSTEP_POLL_PERIOD)

    # ------------------------------------------------------------------ inputs

    def command(self, update: CommandUpdate | None, stamp: float | None = None) -> str | None:
        """A joint command arrived: hold it merged (None: an invalid one, still counted).

        In lockstep, every command, valid or not, advances one control period and publishes (the
        first that advances after the start or a reset ``1 + lead`` of them: ``command_delay``).

        Args:
            update: The command, or None for an invalid one.
            stamp: Robot time of the sample it answers [s]; None (or 0): unstamped, the
                current robot time.

        Returns:
            None when held (or None given), else why it was dropped: :data:`LATE` (its stamp is
            more than ``command_timeout`` before the robot time), :data:`OUT_OF_ORDER` or
            :data:`FROM_THE_FUTURE` (its stamp is after the robot time: sent before a reset).
        """
        outputs: list[RobotOutputs] = []
        dropped = None
        with self._lock:
            self.commands_received += 1
            if update is not None:
                now = self.backend.time
                answers = now if not stamp else min(float(stamp), now)
                timeout = self.settings.command_timeout
                if stamp and float(stamp) > now + FUTURE_TOLERANCE:
                    dropped = FROM_THE_FUTURE
                elif answers < self._held_stamp:
                    dropped = OUT_OF_ORDER
                elif timeout > 0.0 and now - answers > timeout:
                    dropped = LATE
                else:
                    self._held_stamp = answers
                    if self.command_delay > 0.0:
                        self._delayed.append((answers + self.command_delay, update))
                    else:
                        self.backend.write(self._held.merge(update))
                    if self._watchdog.command_received(answers) and self._trip_logged:
                        self._trip_logged = False
                        self._log("info", "joint_commands resumed")
            if self.lockstep and not (self.paused or self.diverged):
                # The first command that advances after the start or a reset: the robot goes
                # ``lead`` samples ahead first (module docstring).
                steps = 1 if self._ahead else 1 + self.lead
                self._ahead = True
                for _ in range(steps):
                    self._apply_due()
                    started = time.monotonic()
                    if not self._advance(self.control_steps * self.period):
                        break
                    outputs.append(self._outputs(started))
        for sample in outputs:
            self._publish(sample)
        return dropped

    @property
    def trips(self) -> int:
        """Watchdog trips since start or the last reset."""
        return self._trips

    def push(self, frame: str, wrench: np.ndarray) -> None:
        """Push ``frame`` for the settings' ``push_duration``.

        Args:
            frame: The link (frame) pushed.
            wrench: (force [N], torque [N m]) at the frame origin, world axes, (6,).

        Raises:
            WbmError: An unknown frame, a bad wrench, or a backend that cannot push.
        """
        with self._lock:
            self.backend.apply_wrench(frame, wrench, self.settings.push_duration)

    def reset(self) -> None:
        """Back to the backend's initial state, and publish it.

        Commands, watchdog and divergence are cleared and the initial command held again.

        Raises:
            WbmError: The backend cannot be reset (a real robot).
        """
        with self._lock:
            self.backend.reset()
            self._held.clear()
            self._delayed.clear()
            self._ahead = False
            self._held_stamp = -math.inf
            self._trips = 0
            self._watchdog.reset()
            if self._posture_return is not None:
                self._posture_return.reset()
            self._initial_command()
            self.diverged = False
            self._resync = True
            self.commands_received = 0
            outputs = self._outputs()
        self._next_bootstrap = self.clock.now() + BOOTSTRAP_PERIOD
        self._publish(outputs)

    def pause(self) -> float:
        """Stop robot time (realtime, as fast as possible; lockstep ignores commands meanwhile).

        Returns:
            The robot time it stopped at [s].
        """
        self.paused = True
        return self.backend.time

    def resume(self) -> float:
        """Let robot time go on (from where it stopped, without catching up).

        Returns:
            The robot time it goes on from [s].
        """
        self.paused = False
        self._resync = True
        return self.backend.time

    # ------------------------------------------------------------------ internals (lock held)

    def _initial_command(self) -> None:
        if self.settings.hold_posture_at_start:
            self.backend.write(self.backend.hold_posture_command())

    def _apply_due(self) -> None:
        """Write the delayed commands whose time has come (``command_delay``), oldest first."""
        delayed = self._delayed
        now = self.backend.time + FUTURE_TOLERANCE
        while delayed and delayed[0][0] <= now:
            self.backend.write(self._held.merge(delayed.popleft()[1]))

    def _command_timed_out(self) -> None:
        self._apply_due()  # what the robot holds at the trip (commands still on their way: not)
        self._delayed.clear()
        last = self._held.command()
        self._held.clear()
        if self._posture_return is not None:
            positions = self.backend.read().joint_positions
            self.backend.write(self._posture_return.trip(self.backend.time, positions, last))
            mode = "holding the initial posture"
        else:
            self.backend.write(damping_command(self._ndof))
            mode = "joints in damping mode"
        self._trips += 1
        self._trip_mode = mode
        self._trip_logged = False
        self._log_trip()

    def _return_towards_posture(self) -> None:
        """While tripped into the posture hold: its references at the current robot time."""
        posture = self._posture_return
        if posture is not None and posture.returning(self.backend.time):
            self.backend.write(posture.command(self.backend.time))

    def _log_trip(self) -> None:
        """Log the watchdog's trip, at most every :data:`BEHIND_LOG_PERIOD` of wall time.

        A trip the throttle holds back is logged once the period is over if it still lasts (the
        controller is gone, not just late): a lasting posture hold is always said.
        """
        now = self.clock.now()
        if now - self._last_trip_log < BEHIND_LOG_PERIOD:
            return
        self._trip_logged = True
        self._last_trip_log = now
        self._log(
            "warning",
            f"no joint_commands for {self.settings.command_timeout:g} s: "
            f"{self._trip_mode} until commands resume ({self._trips} time(s) since start or "
            f"reset; logged at most every {BEHIND_LOG_PERIOD:g} s)",
        )

    def _advance(self, duration: float) -> bool:
        """Advance the backend; False when it diverged or failed (then stopped until reset)."""
        try:
            self.backend.advance(duration)
        except SimulationDiverged as error:
            self.diverged = True
            self._log("error", f"{error}; call the reset service")
            return False
        except BackendError as error:
            self.diverged = True
            self._log("error", f"robot backend failed: {error}")
            return False
        return True

    def _outputs(self, step_started: float = 0.0) -> RobotOutputs:
        backend = self.backend
        readings, base = backend.read(), backend.base_state()
        # The stamp is the sample's own time: a hardware driver's receiving thread can take a
        # newer sample between read() and a separate backend.time.
        return RobotOutputs(readings.time, readings, base, step_started, time.monotonic())


__all__ = [
    "BOOTSTRAP_PERIOD",
    "FROM_THE_FUTURE",
    "LATE",
    "OUT_OF_ORDER",
    "MonotonicClock",
    "PacingLoop",
    "RobotOutputs",
    "WallClock",
    "lockstep_lead",
]
