"""The controller node's inputs: the latest robot sample, its age, and when to step (no rclpy).

The node converts each robot message (``joint_states``, ``imu``, ``ft/<sensor>``) and hands it
to :class:`ControllerInputs`, which keeps the latest value of each and answers the node's
questions:

- staleness: which required inputs are older than ``stale_timeout`` in the node's clock (sim
  time under ``use_sim_time``), and the safe-hold reason that names them; a control tick holds
  only when inputs were stale at the tick before too (:meth:`ControllerInputs.stale_at_tick`):
  the node takes ``/clock`` before the other inputs of the same moment, and a tick can run in
  between. After the controller process was starved (a loaded machine) while the robot went on,
  the clock jumps and the tick saw the inputs still waiting in their queues as stale (the soak
  run's holds outside pushes named ``ft/...`` and ``imu``, never ``joint_states``, which is
  taken right after the clock); one tick later they have been taken;
- trigger ``"inputs"`` (and ``"every_sample"``): a step is due once every required input of a
  new stamp has arrived;
  exactly once per stamp, never for a partial or a repeated one. A complete sample that a newer
  one already superseded (its stamp more than ``max_sample_age`` behind the node's clock, which
  follows the robot's newest ``/clock``) is skipped: when the controller falls behind (a loaded
  machine, realtime pacing), queued samples would otherwise be answered one after the other,
  each command computed for a state tens of milliseconds old, and held torques that late topple
  the robot (iCub on our simulator: answering every sample 20 ms late moves the base 11 mm, 28 ms
  late every 7th sample drops it). It then answers the newest sample. Never skipped: in lockstep
  (the clock waits for the command), when the last answer is ``stale_timeout / 2`` old (the
  controller keeps commanding whatever the load), and when the clock and the stamps are not on
  one time base (more than :data:`COMPARABLE_AGE` apart). Trigger ``"every_sample"`` never
  skips: every complete sample is answered, in order (a lockstep simulator with a
  ``command_delay`` publishes samples ahead of the commands and advances one control period per
  command: a skipped sample would cost it the command its next step waits for);
- the wall-clock watchdog: under sim time the control loop stops with ``/clock`` when the robot
  side dies, so silence of ``joint_states`` in wall time (a monotonic clock) is watched too;
- a restart of the robot's time (:meth:`ControllerInputs.restart`, when the joint state guard,
  :class:`~wbm_control.joint_state_guard.JointStateGuard`, sees the stamps go back to 0);
- the readings of a control step (:class:`~wbm_description.robot_io.RobotReadings`) and, in
  tests, the ground-truth state.

Times are in seconds; stamps are integer nanoseconds (the messages' header stamps).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from wbm_control.controller_settings import TRIGGERS
from wbm_description.exceptions import InputError
from wbm_description.robot_io import ImuReading, RobotReadings

JOINT_STATES = "joint_states"
IMU = "imu"

#: Shortest wall-clock silence of joint_states that means the robot side is gone [s].
WALL_TIMEOUT = 0.5

#: A sample more than this behind the node's clock is not compared with it: the clock is not the
#: robot's (e.g. wall time with simulated stamps) [s].
COMPARABLE_AGE = 1.0


def wrench_input(sensor: str) -> str:
    """The input (topic) name of an F/T sensor: ``ft/<sensor>``."""
    return f"ft/{sensor}"


def stale_reason(names: Sequence[str]) -> str:
    """The safe-hold reason for stale inputs, naming them."""
    return f"stale inputs: {', '.join(names)}"


class ControllerInputs:
    """The latest robot inputs of the controller node (see the module docstring).

    Args:
        ndof: Number of actuated joints.
        sensors: F/T sensor names (robot config): each is a required input ``ft/<name>``.
        stale_timeout: An input older than this is stale [s] (node clock).
        trigger: ``"timer"`` (the node steps on its timer; :meth:`set_joint_states` and the
            others never ask for a step), ``"inputs"`` (one step per complete stamp) or
            ``"every_sample"`` (the same, never skipping a sample).
        wall_timeout: The watchdog trips after ``max(wall_timeout, stale_timeout)`` [s] of
            wall time without joint_states.
        max_sample_age: Trigger ``"inputs"``: a complete sample whose stamp is more than this
            behind the node's clock is skipped (module docstring) [s]; None never skips.

    Attributes:
        required: The required inputs: ``joint_states``, ``imu``, ``ft/<sensor>``...
        joint_positions: Latest joint positions (ndof,) [rad], None before the first.
        joint_velocities: Latest joint velocities (ndof,) [rad/s], None before the first.
        joint_efforts: Latest joint efforts (ndof,) [N m] (zeros until one is received).
        imu: Latest IMU reading, None before the first.
        wrenches: Sensor name to its latest wrench (6,) [N, N m] in the sensor frame.
        ground_truth: (q, v) from the latest ground-truth base state and joint state, or None.
        skipped: Complete samples skipped because a newer one superseded them.
        deferred: Control ticks skipped because inputs were stale at that tick only
            (:meth:`stale_at_tick`).
    """

    def __init__(
        self,
        ndof: int,
        sensors: Sequence[str],
        *,
        stale_timeout: float,
        trigger: str = "timer",
        wall_timeout: float = WALL_TIMEOUT,
        max_sample_age: float | None = None,
    ):
        if trigger not in TRIGGERS:
            raise InputError("trigger", f"one of {list(TRIGGERS)}", trigger)
        if not stale_timeout > 0.0:
            raise InputError("stale_timeout", "a positive duration [s]", stale_timeout)
        self.ndof = ndof
        self.required = (JOINT_STATES, IMU, *(wrench_input(s) for s in sensors))
        self.stale_timeout = float(stale_timeout)
        self.trigger = trigger
        self.watchdog_timeout = max(float(wall_timeout), self.stale_timeout)
        if max_sample_age is not None and not max_sample_age > 0.0:
            raise InputError("max_sample_age", "a positive duration [s] or None", max_sample_age)
        self.max_sample_age = max_sample_age if trigger == "inputs" else None
        self.skipped = 0
        self._last_answer: float | None = None
        self.joint_positions: np.ndarray | None = None
        self.joint_velocities: np.ndarray | None = None
        self.joint_efforts = np.zeros(ndof)
        self.imu: ImuReading | None = None
        self.wrenches: dict[str, np.ndarray] = {}
        self.ground_truth: tuple[np.ndarray, np.ndarray] | None = None
        self._received: dict[str, float] = {}
        self._stamps: dict[str, int] = {}
        self._answered_stamp: int | None = None
        self._last_joint_states_wall: float | None = None
        self._stale_tick = False
        self.deferred = 0

    # ------------------------------------------------------------------ inputs

    def set_joint_states(
        self,
        positions: np.ndarray,
        velocities: np.ndarray,
        efforts: np.ndarray | None,
        *,
        time: float,
        stamp: int,
        wall_time: float,
    ) -> bool:
        """A joint state, every joint in model order (efforts None: keep the last ones).

        Args:
            positions: (ndof,) [rad].
            velocities: (ndof,) [rad/s].
            efforts: (ndof,) [N m] or None.
            time: Arrival time in the node's clock [s].
            stamp: The message's stamp [ns].
            wall_time: Arrival time on a monotonic wall clock [s] (for the watchdog).

        Returns:
            Whether a control step is due now (trigger "inputs").
        """
        self.joint_positions = np.asarray(positions, dtype=float)
        self.joint_velocities = np.asarray(velocities, dtype=float)
        if efforts is not None:
            self.joint_efforts = np.asarray(efforts, dtype=float).copy()
        self._last_joint_states_wall = wall_time
        return self._arrived(JOINT_STATES, time, stamp)

    def set_imu(self, reading: ImuReading, *, time: float, stamp: int) -> bool:
        """An IMU reading; returns whether a control step is due now."""
        self.imu = reading
        return self._arrived(IMU, time, stamp)

    def set_wrench(self, sensor: str, wrench: np.ndarray, *, time: float, stamp: int) -> bool:
        """An F/T reading (6,) [N, N m], sensor frame; returns whether a step is due now."""
        self.wrenches[sensor] = np.asarray(wrench, dtype=float)
        return self._arrived(wrench_input(sensor), time, stamp)

    def set_ground_truth_base(self, base_q: np.ndarray, base_v: np.ndarray) -> None:
        """The true base pose (7,) and twist (6,) (tests): with the latest joints, the state."""
        if self.joint_positions is None:
            return
        self.ground_truth = (
            np.concatenate([base_q, self.joint_positions]),
            np.concatenate([base_v, self.joint_velocities]),
        )

    def restart(self) -> None:
        """The robot's time restarted: forget the stamps (the latest values stay until replaced).

        With trigger ``"inputs"`` the next complete stamp is due, whatever stamps came before.
        """
        self._stamps.clear()
        self._answered_stamp = None
        self._last_answer = None
        self.ground_truth = None

    def _arrived(self, name: str, time: float, stamp: int) -> bool:
        """Note an input; with a sample trigger, whether its stamp completes a new sample."""
        self._received[name] = time
        if self.trigger == "timer":
            return False
        stamps = self._stamps
        stamps[name] = stamp
        if stamp == self._answered_stamp:
            return False
        get = stamps.get
        for key in self.required:  # every required input of this stamp arrived?
            if get(key) != stamp:
                return False
        self._answered_stamp = stamp
        if self._superseded(time, stamp):
            self.skipped += 1
            return False
        self._last_answer = time
        return True

    def _superseded(self, time: float, stamp: int) -> bool:
        """Whether a complete sample is too far behind the clock to answer (module docstring)."""
        if self.max_sample_age is None or self._last_answer is None:
            return False
        age = time - 1e-9 * stamp
        if not self.max_sample_age < age <= COMPARABLE_AGE:
            return False
        return time - self._last_answer < 0.5 * self.stale_timeout

    # ------------------------------------------------------------------ questions

    @property
    def has_joint_states(self) -> bool:
        """Whether a joint state was received."""
        return self.joint_positions is not None

    def stale(self, now: float) -> list[str]:
        """The required inputs older than ``stale_timeout`` (or never received) at ``now``."""
        return [
            name
            for name in self.required
            if now - self._received.get(name, -np.inf) > self.stale_timeout
        ]

    def stale_at_tick(self, now: float) -> tuple[list[str], bool]:
        """The stale inputs at a control tick, and whether to hold for them.

        Hold only when inputs were stale at the previous tick too (module docstring): a first
        stale tick is skipped (no step, no hold: the robot keeps the last command for one
        control period, well within its command timeout) and counted in :attr:`deferred`. An
        input that stopped coming is held for one tick later than ``stale_timeout``.

        Returns:
            (the stale inputs, whether they are stale at two ticks in a row).
        """
        stale = self.stale(now)
        confirmed = bool(stale) and self._stale_tick
        if stale and not confirmed:
            self.deferred += 1
        self._stale_tick = bool(stale)
        return stale, confirmed

    def stale_reason(self, now: float) -> str | None:
        """The safe-hold reason naming the stale inputs, or None when every input is fresh."""
        stale = self.stale(now)
        return stale_reason(stale) if stale else None

    def wall_silence(self, wall_now: float) -> float | None:
        """Wall time since the last joint state [s], None before the first."""
        if self._last_joint_states_wall is None:
            return None
        return wall_now - self._last_joint_states_wall

    def watchdog(self, wall_now: float) -> str | None:
        """The safe-hold reason when joint_states stopped arriving (wall clock), else None."""
        silence = self.wall_silence(wall_now)
        if silence is None or silence < self.watchdog_timeout:
            return None
        return f"stale inputs: no {JOINT_STATES} for {silence:.1f} s (wall clock)"

    def readings(self, now: float) -> RobotReadings:
        """The readings of a control step at ``now`` (call when nothing is stale).

        Raises:
            InputError: An input was never received.
        """
        if self.joint_positions is None or self.imu is None:
            raise InputError("inputs", "joint_states and imu received before a step")
        return RobotReadings(
            time=now,
            joint_positions=self.joint_positions,
            joint_velocities=self.joint_velocities,
            joint_efforts=self.joint_efforts.copy(),
            imu=self.imu,
            wrenches=dict(self.wrenches),
        )
