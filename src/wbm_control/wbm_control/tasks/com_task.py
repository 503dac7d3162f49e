"""The centre-of-mass task and its balance feedback.

The CoM reference is a quintic trajectory towards the latest target. Horizontally the CoM
follows the DCM feedback of the linear inverted pendulum (:class:`~wbm_control.balance.
DcmStabilizer`), which picks the ZMP inside the support polygon and gives the CoM acceleration
it implies; vertically a PD tracks the reference. Frames: world, z up; positions [m].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from wbm_control.balance import (
    DcmStabilizer,
    _inward_half_planes,
    lip_natural_frequency,
    static_equilibrium_margin,
)
from wbm_control.contacts import ContactSet
from wbm_control.controller_settings import ComSettings
from wbm_control.exceptions import TargetRejected
from wbm_control.feasible_targets import Clamped, clamp_com_target, com_motion_duration
from wbm_control.jit import balance_kernels
from wbm_control.robot_kinematics import RobotKinematics
from wbm_control.small_linalg import norm
from wbm_control.tasks.frame_task import NOT_STARTED
from wbm_control.trajectories import QuinticPointTrajectory
from wbm_control.whole_body_qp import AccelerationTask

_ACCELERATION_XY, _ZMP, _DCM = (
    balance_kernels.ACCELERATION_XY,
    balance_kernels.ZMP,
    balance_kernels.DCM,
)
_COM_DESIRED, _STATIC_MARGIN = balance_kernels.COM_DESIRED, balance_kernels.STATIC_MARGIN
_ZMP_INSIDE, _COM_ERROR = balance_kernels.ZMP_INSIDE, balance_kernels.COM_ERROR
#: The half-planes of no support polygon (fewer than 3 corners).
_NO_HALF_PLANES = (np.zeros((0, 2)), np.zeros(0))


@dataclass(frozen=True)
class Balance:
    """The balance feedback of one step.

    Attributes:
        com: CoM position [m].
        com_velocity: CoM velocity [m/s].
        reference: CoM reference position [m], velocity [m/s] and acceleration [m/s^2].
        acceleration_xy: Horizontal CoM acceleration the DCM feedback asks for [m/s^2].
        zmp: Commanded ZMP (x, y, ground height) [m].
        dcm: DCM c + cd / omega [m].
        static_margin: Distance of the CoM's ground projection inside the support polygon
            [m], None without a polygon (fewer than 3 corners).
    """

    com: np.ndarray
    com_velocity: np.ndarray
    reference: tuple[np.ndarray, np.ndarray, np.ndarray]
    acceleration_xy: np.ndarray
    zmp: np.ndarray
    dcm: np.ndarray
    static_margin: float | None

    def __init__(
        self,
        com: np.ndarray,
        com_velocity: np.ndarray,
        reference: tuple[np.ndarray, np.ndarray, np.ndarray],
        acceleration_xy: np.ndarray,
        zmp: np.ndarray,
        dcm: np.ndarray,
        static_margin: float | None,
    ):
        # The fields set straight into the instance (frozen dataclasses set each one through
        # object.__setattr__: twice the time, for an object built every step).
        fields = self.__dict__
        fields["com"], fields["com_velocity"], fields["reference"] = com, com_velocity, reference
        fields["acceleration_xy"], fields["zmp"], fields["dcm"] = acceleration_xy, zmp, dcm
        fields["static_margin"] = static_margin

    @property
    def error(self) -> float:
        """Distance of the CoM to its reference [m] (the balance kernel's, when it built this)."""
        error = self.__dict__.get("_error")
        return norm(self.reference[0] - self.com) if error is None else error


class ComTask:
    """CoM task: reference, target clamping, DCM feedback and its QP task.

    Args:
        settings: Weights and gains (``com:`` section).
        gravity: Gravity vector (3,) [m/s^2].
    """

    name = "com"

    def __init__(self, settings: ComSettings, gravity: np.ndarray):
        self.settings = settings
        self.gravity = np.asarray(gravity, dtype=float)
        self.stabilizer = DcmStabilizer(gain=settings.dcm_gain, zmp_margin=settings.zmp_margin)
        self._trajectory: QuinticPointTrajectory | None = None
        self._end_sample: tuple[QuinticPointTrajectory, tuple] | None = None
        self._home: np.ndarray | None = None
        self.last_clamp = Clamped(None)
        self._tracked: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        #: (balance, kinematics, desired acceleration (3,)) of the last :meth:`balance`.
        self._desired: tuple[Balance, RobotKinematics, np.ndarray] | None = None
        balance_kernels.warm_up()

    # ------------------------------------------------------------------ reference

    def start(self, com: np.ndarray, goal: np.ndarray, t: float, duration: float) -> None:
        """Move the reference from the CoM at start to ``goal`` [m] in ``duration`` [s]."""
        self._home = com.copy()
        self._trajectory = QuinticPointTrajectory(com, goal, t, duration)
        self._tracked = None

    def reset(self) -> None:
        """Forget the reference (until the next :meth:`start`)."""
        self._trajectory = None
        self._home = None
        self._tracked = None

    def set_target(
        self,
        position: np.ndarray,
        t: float,
        duration: float,
        support_polygon: np.ndarray,
        ground: float = 0.0,
    ) -> np.ndarray:
        """Move the reference from where it is at t to ``position`` [m] in ``duration`` [s].

        The target is brought over the support polygon shrunk by ``target_margin`` and into
        the band [-target_height_down, +target_height_up] around the initial CoM height
        (:func:`~wbm_control.feasible_targets.clamp_com_target`); the motion lasts at least
        what keeps the ZMP it asks inside the polygon
        (:func:`~wbm_control.feasible_targets.com_motion_duration`, with ``ground`` [m] the
        height of the held soles). What moved or slowed it: :attr:`last_clamp`.

        Returns:
            The accepted (possibly clamped) target.

        Raises:
            TargetRejected: Not 3 finite coordinates, or before :meth:`start`.
        """
        target = np.array(position, dtype=float)
        if target.shape != (3,) or not np.all(np.isfinite(target)):
            raise TargetRejected(self.name, f"expected 3 finite coordinates, got {target!r}")
        if self._trajectory is None:
            raise TargetRejected(self.name, NOT_STARTED)
        s = self.settings
        self.last_clamp = clamp_com_target(
            target,
            support_polygon,
            margin=s.target_margin,
            home_height=self._home[2],
            height_up=s.target_height_up,
            height_down=s.target_height_down,
        )
        target = self.last_clamp.value
        start, _, _ = self.reference(t)
        omega = lip_natural_frequency(max(self._home[2] - ground, 0.05), -self.gravity[2])
        requested = max(duration, 1e-3)
        duration = com_motion_duration(
            float(np.linalg.norm(target[:2] - start[:2])),
            requested,
            omega=omega,
            zmp_allowance=s.target_margin - s.zmp_margin,
        )
        if duration > requested:
            self.last_clamp = Clamped(
                target,
                (*self.last_clamp.reasons, f"motion slowed to {duration:.2f} s (ZMP in the feet)"),
            )
        self._trajectory = QuinticPointTrajectory(start, target, t, duration)
        self._tracked = None
        return target

    def track(self, position: np.ndarray, velocity: np.ndarray, acceleration: np.ndarray) -> None:
        """A per-tick reference source (walking's pattern generator).

        Position [m], velocity [m/s] and acceleration [m/s^2] are the reference until the next
        :meth:`track`, :meth:`hold` or :meth:`set_target`; the DCM feedback acts around them.
        """
        self._tracked = (
            np.asarray(position, dtype=float),
            np.asarray(velocity, dtype=float),
            np.asarray(acceleration, dtype=float),
        )

    def hold(self, position: np.ndarray, t: float) -> None:
        """Make ``position`` [m] the reference from t on (the end of a tracked motion)."""
        position = np.asarray(position, dtype=float)
        self._trajectory = QuinticPointTrajectory(position, position, t, 1e-3)
        self._tracked = None

    def reference(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Reference position [m], velocity [m/s] and acceleration [m/s^2] at t.

        A per-tick source (walking) overrides the trajectory while it tracks. Once the trajectory
        has ended its sample no longer depends on t: it is computed once (read-only arrays).
        """
        if self._tracked is not None:
            return self._tracked
        trajectory = self._trajectory
        if (t - trajectory.start_time) / trajectory.duration < 1.0:
            return trajectory.sample(t)
        if self._end_sample is None or self._end_sample[0] is not trajectory:
            sample = trajectory.sample(t)
            for array in sample:
                array.flags.writeable = False
            self._end_sample = (trajectory, sample)
        return self._end_sample[1]

    # ------------------------------------------------------------------ feedback

    def balance(self, kinematics: RobotKinematics, t: float, contacts: ContactSet) -> Balance:
        """The DCM feedback at this step; the ZMP is kept in the held soles' support polygon.

        One kernel (:func:`~wbm_control.jit.balance_kernels.balance_feedback`) computes the
        feedback (the ZMP projected when outside), the DCM, the static margin and this task's
        desired acceleration (kept for :meth:`compute_acceleration_task` at the same
        kinematics); :meth:`balance_reference` is the same in numpy.

        Raises:
            InputError: The CoM height or gravity gives no LIP frequency.
        """
        com, com_velocity = kinematics.com, kinematics.com_velocity
        reference = self.reference(t)
        ground = contacts.ground_height()
        polygon = contacts.support_polygon()
        normals, offsets = (
            _inward_half_planes(polygon, 0.0) if len(polygon) >= 3 else _NO_HALF_PLANES
        )
        stabilizer, settings = self.stabilizer, self.settings
        out = np.empty(balance_kernels.OUTPUT_SIZE)
        omega = balance_kernels.balance_feedback(
            com,
            com_velocity,
            reference[0],
            reference[1],
            reference[2],
            ground,
            self.gravity,
            stabilizer.gain,
            polygon,
            normals,
            offsets,
            stabilizer.zmp_margin,
            settings.kp,
            settings.kd,
            out,
        )
        if omega != omega:  # NaN: no LIP frequency (raises its InputError)
            lip_natural_frequency(max(com[2] - ground, 0.05), -self.gravity[2])
        static_margin = float(out[_STATIC_MARGIN]) if len(polygon) >= 3 else None
        balance = Balance(
            com=com,
            com_velocity=com_velocity,
            reference=reference,
            acceleration_xy=out[_ACCELERATION_XY],
            zmp=out[_ZMP],
            dcm=out[_DCM],
            static_margin=static_margin,
        )
        balance.__dict__["_error"] = float(out[_COM_ERROR])
        self._desired = (balance, kinematics, out[_COM_DESIRED])
        return balance

    def balance_reference(
        self, kinematics: RobotKinematics, t: float, contacts: ContactSet
    ) -> Balance:
        """:meth:`balance` in numpy and Python floats, as it was before its kernel.

        The reference of the kernel's numbers (``tests/control/test_jit_tasks.py``).
        """
        com, com_velocity = kinematics.com, kinematics.com_velocity
        c_ref, cd_ref, cdd_ref = self.reference(t)
        ground = contacts.ground_height()
        omega = lip_natural_frequency(max(com[2] - ground, 0.05), -self.gravity[2])
        polygon = contacts.support_polygon()
        acceleration_xy, zmp = self.stabilizer.com_acceleration(
            com,
            com_velocity,
            c_ref,
            cd_ref,
            cdd_ref,
            omega,
            polygon if len(polygon) >= 3 else None,
        )
        return Balance(
            com=com,
            com_velocity=com_velocity,
            reference=(c_ref, cd_ref, cdd_ref),
            acceleration_xy=acceleration_xy,
            zmp=np.array([zmp[0], zmp[1], ground]),
            dcm=com + com_velocity / omega,
            static_margin=(static_equilibrium_margin(com, polygon) if len(polygon) >= 3 else None),
        )

    def compute_jacobian(self, kinematics: RobotKinematics) -> np.ndarray:
        """The CoM Jacobian (3 x nv)."""
        return kinematics.com_jacobian

    def compute_acceleration_task(
        self, kinematics: RobotKinematics, balance: Balance
    ) -> AccelerationTask:
        """Torque mode: horizontally the DCM feedback's acceleration, vertically a PD.

        The desired acceleration of :meth:`balance`'s kernel when ``balance`` is the last one
        it gave at these ``kinematics``, else :meth:`desired_acceleration_reference`.
        """
        return AccelerationTask(
            self.name,
            self.compute_jacobian(kinematics),
            kinematics.com_drift,
            self.desired_acceleration(kinematics, balance),
            self.settings.weight,
        )

    def desired_acceleration(self, kinematics: RobotKinematics, balance: Balance) -> np.ndarray:
        """The CoM task's desired acceleration (3,) [m/s^2] (:meth:`compute_acceleration_task`).

        :meth:`balance`'s kernel's when ``balance`` is the last one it gave at these
        ``kinematics`` (a view of its output), else :meth:`desired_acceleration_reference`.
        """
        cached = self._desired
        if cached is not None and cached[0] is balance and cached[1] is kinematics:
            return cached[2]
        return self.desired_acceleration_reference(kinematics, balance)

    def desired_acceleration_reference(
        self, kinematics: RobotKinematics, balance: Balance
    ) -> np.ndarray:
        """The CoM task's desired acceleration (3,) [m/s^2] in numpy (the kernel's reference)."""
        s = self.settings
        com, com_velocity = kinematics.com, kinematics.com_velocity
        c_ref, cd_ref, cdd_ref = balance.reference
        desired = np.empty(3)
        desired[:2] = balance.acceleration_xy
        desired[2] = cdd_ref[2] + s.kp * (c_ref[2] - com[2]) + s.kd * (cd_ref[2] - com_velocity[2])
        return desired
