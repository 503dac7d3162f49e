"""The engine protocol: what can be stepped (our simulator, MuJoCo), declared once.

An engine simulates one robot of a :class:`~wbm_description.whole_body_model.WholeBodyModel` at
a fixed time step: it holds a joint command (zero-order hold), applies pushes, advances whole
steps, and reports what the robot's sensors read (noise-free, :class:`~wbm_description.robot_io.
RobotReadings`) and the ground truth (:class:`GroundTruth`). :class:`Engine` is the abstract base
both :class:`~wbm_dynamics.simulator.Simulator` and :class:`~wbm_dynamics.mujoco.engine.
MujocoEngine` derive from; it also holds what they share to the letter: time and step count,
the divergence state, the checks of a reset state, of a step count and of a push, and the
bookkeeping of the pushes in progress.

Everything that takes an engine (the robot-interface node's :class:`~wbm_dynamics.backends.
engine_backend.EngineBackend`, the in-process closed loop of wbm_bringup, the benchmarks) uses
this protocol only.

Conventions (:mod:`wbm_description.conventions`): q and v in Pinocchio's layout (base position in
the world [m], base quaternion (x, y, z, w), then joint positions [rad]; base twist in the base
frame, then joint velocities [rad/s]); joint arrays in model order; a push is a wrench (force [N],
torque [N m]) at a frame origin, world axes.
"""

from __future__ import annotations

import abc
import math
import numbers
from dataclasses import dataclass

import numpy as np

from wbm_description.exceptions import InputError
from wbm_description.robot_io import JointCommand, RobotReadings
from wbm_description.state import check_vector
from wbm_description.whole_body_model import WholeBodyModel
from wbm_dynamics.exceptions import SimulationDiverged


@dataclass(frozen=True)
class GroundTruth:
    """The true state of the simulation (for tests, plots and visualization only).

    Attributes:
        time: Simulated time [s].
        q: Configuration, Pinocchio layout, (nq,).
        v: Generalized velocity, Pinocchio layout (base twist in the base frame), (nv,).
        contact_forces: Per contact (a contact point of our simulator, a sole of MuJoCo), the
            mean force of the environment on the robot during the last step, world axes [N],
            (3,) (zero when not touching).
        contact_positions: Per contact, where it acts [m], world frame (NaN when unknown).
        joint_torques: Actuator torques applied during the last step [N m], (ndof,).
        contact_solver_converged: Whether the last contact solve met its tolerance.
    """

    time: float
    q: np.ndarray
    v: np.ndarray
    contact_forces: dict[str, np.ndarray]
    contact_positions: dict[str, np.ndarray]
    joint_torques: np.ndarray
    contact_solver_converged: bool = True

    @property
    def total_contact_force(self) -> np.ndarray:
        """Sum of the contact forces [N], world axes, (3,)."""
        total = np.zeros(3)
        for force in self.contact_forces.values():
            total += force
        return total


@dataclass
class Push:
    """A wrench held on the robot until a step count (an engine adds where it acts).

    Attributes:
        wrench: (force [N], torque [N m]) at the pushed frame's origin, world axes, (6,).
        end_step: The push acts during the steps before this step count.
    """

    wrench: np.ndarray
    end_step: int


class Engine(abc.ABC):
    """A robot simulation that can be stepped.

    Subclasses set :attr:`robot` and :attr:`dt`, and call :meth:`_restart` from :meth:`reset`,
    :meth:`_steps_to_take` at the start of :meth:`step`, :meth:`_count_steps` after stepping,
    :meth:`_push_end` in :meth:`apply_wrench` (keeping the push in ``self._pushes``) and
    :meth:`_diverge` when the state goes bad.

    Attributes:
        robot: The whole-body model of the simulated robot.
        dt: The time step [s].
    """

    robot: WholeBodyModel
    dt: float
    _steps: int = 0
    _diverged: str | None = None
    _pushes: list[Push]

    # ------------------------------------------------------------------ state

    @property
    def time(self) -> float:
        """Simulated time since the last reset [s]."""
        return self._steps * self.dt

    @property
    def steps(self) -> int:
        """Number of steps taken since the last reset."""
        return self._steps

    @property
    def ndof(self) -> int:
        """Number of actuated joints."""
        return self.robot.ndof

    @property
    @abc.abstractmethod
    def q(self) -> np.ndarray:
        """Current configuration (a copy), Pinocchio layout, (nq,)."""

    @property
    @abc.abstractmethod
    def v(self) -> np.ndarray:
        """Current generalized velocity (a copy), Pinocchio layout, (nv,)."""

    @property
    def diverged(self) -> str | None:
        """Why the simulation stopped (it raised :class:`SimulationDiverged`), or None."""
        return self._diverged

    @abc.abstractmethod
    def reset(self, q: object = None, v: object = None) -> None:
        """Restart at time 0 from (q, v), clearing the command, the pushes and the contacts.

        Args:
            q: Configuration; default the model's initial configuration (for a robot with soles,
                the soles flat on z = 0).
            v: Generalized velocity; default zero.

        Raises:
            InputError: q or v of the wrong size, non-finite, or a non-unit base quaternion.
        """

    # ------------------------------------------------------------------ inputs

    @abc.abstractmethod
    def set_command(self, command: JointCommand) -> None:
        """Hold a joint command (zero-order hold until the next); NaN or None: not commanded.

        Raises:
            InputError: Arrays of the wrong length or holding inf.
        """

    @abc.abstractmethod
    def apply_wrench(self, frame: str, wrench: object, duration: float) -> None:
        """Push: a wrench on a frame of the robot for ``duration`` seconds from now.

        Args:
            frame: Frame (link) name.
            wrench: (force [N], torque [N m]) at the frame origin, world axes, (6,).
            duration: How long it acts [s] (rounded up to whole steps), > 0.

        Raises:
            NameNotFound: Unknown frame.
            InputError: Non-finite wrench or non-positive duration.
        """

    # ------------------------------------------------------------------ stepping

    @abc.abstractmethod
    def step(self, n: int = 1) -> None:
        """Advance n steps of :attr:`dt`.

        Raises:
            InputError: n is not an integer >= 0.
            SimulationDiverged: The state became non-finite or exploded (the last good state is
                kept; further steps raise again until :meth:`reset`).
        """

    # ------------------------------------------------------------------ outputs

    @abc.abstractmethod
    def readings(self) -> RobotReadings:
        """What the robot's sensors report now, noise-free.

        Sensor noise is a wrapper around the readings: :class:`~wbm_dynamics.noise.SensorNoise`.
        """

    @abc.abstractmethod
    def ground_truth(self) -> GroundTruth:
        """The true state and the contact forces of the last step."""

    def close(self) -> None:  # noqa: B027  (a default, not an abstract method)
        """Release what the engine holds (default: nothing to release)."""

    # ------------------------------------------------------------------ for subclasses

    def _restart(self, q: object, v: object) -> tuple[np.ndarray, np.ndarray]:
        """Checked copies of a reset state, and time, divergence and pushes cleared.

        Returns:
            (q, v): q with a unit base quaternion; defaults as in :meth:`reset`.

        Raises:
            InputError: See :meth:`reset`.
        """
        robot = self.robot
        q0 = robot.initial_configuration() if q is None else q
        q0 = robot.check_configuration(q0).copy()
        v0 = np.zeros(robot.nv) if v is None else robot.check_velocity(v).copy()
        if robot.floating_base:
            q0[3:7] /= np.linalg.norm(q0[3:7])
        self._steps = 0
        self._diverged = None
        self._pushes: list[Push] = []
        return q0, v0

    def _steps_to_take(self, n: object) -> int:
        """The checked step count of :meth:`step`.

        Raises:
            InputError: n is not an integer >= 0.
            SimulationDiverged: n > 0 after a divergence.
        """
        if type(n) is not int and (  # a plain int skips the (slower) ABC check
            isinstance(n, bool) or not isinstance(n, numbers.Integral)
        ):
            raise InputError("n", "a number of steps >= 0", n)
        if n < 0:
            raise InputError("n", "a number of steps >= 0", n)
        if n > 0 and self._diverged is not None:
            raise SimulationDiverged(self.time, self._diverged)
        return int(n)

    def _diverge(self, reason: str) -> SimulationDiverged:
        """Stop the simulation (until reset) for ``reason``; returns the error to raise."""
        self._diverged = reason
        return SimulationDiverged(self.time, reason)

    def _push_end(self, wrench: object, duration: float) -> tuple[np.ndarray, int]:
        """The checked wrench of a push from now, and the step count at which it ends.

        Raises:
            InputError: Non-finite wrench or non-positive duration.
        """
        wrench = check_vector(wrench, "wrench", 6).copy()
        if not (isinstance(duration, int | float) and math.isfinite(duration) and duration > 0):
            raise InputError("duration", "a finite duration > 0 [s]", duration)
        return wrench, self._steps + max(1, math.ceil(duration / self.dt - 1e-9))

    def _count_steps(self, n: int = 1) -> None:
        """``n`` more steps taken: pushes that ended are dropped."""
        self._steps += n
        if self._pushes:
            self._pushes = [push for push in self._pushes if push.end_step > self._steps]


def servo_gains(
    model: WholeBodyModel, servo_kp: object = None, servo_kd: object = None
) -> tuple[np.ndarray, np.ndarray]:
    """An engine's servo gains: the model's, or checked overrides (model order).

    Returns:
        (kp [N m/rad], kd [N m s/rad]), (ndof,) each.

    Raises:
        InputError: An override of the wrong length.
    """
    kp = model.servo_kp if servo_kp is None else model.check_joint_vector(servo_kp, "servo_kp")
    kd = model.servo_kd if servo_kd is None else model.check_joint_vector(servo_kd, "servo_kd")
    return kp, kd


__all__ = ["Engine", "GroundTruth", "Push", "servo_gains"]
