"""The ZMP from the whole-body dynamics, for robots without foot F/T sensors (no rclpy).

Newton-Euler for the whole robot, with the contacts as the only external wrench besides gravity:
the linear momentum p = m c' and the angular momentum about the world origin
L_O = k_G + c x p (k_G: the centroidal angular momentum, Pinocchio's ``hg`` about the CoM,
world axes) change as

    dp/dt   = f_c + m g
    dL_O/dt = tau_c,O + c x m g

so the total contact wrench about the world origin is f_c = dp/dt - m g,
tau_c,O = dL_O/dt - c x m g, and the ZMP (= centre of pressure on flat ground) is the point of
the ground plane about which its horizontal moment vanishes
(:func:`~wbm_description.support_geometry.center_of_pressure`).
The momentum rate is the finite difference of the momentum of successive estimates (p and L_O are
about fixed points, so differencing them is exact up to the sampling), low-pass filtered: the
estimated velocities carry the estimator's noise, which differentiation amplifies. A base
estimator filters its base velocity, and that filter's lag would pass on to the ZMP: given the
frames held still (the soles in contact), the base linear velocity is re-solved from them
unfiltered (J_frame,lin v = 0, least squares), so the momentum follows from the joint velocities
and the gyro alone. Standing still the rate is zero and the ZMP is the CoM's ground projection
(the static closed form).

With the step's :class:`~wbm_control.robot_kinematics.RobotKinematics` (the controller computes
it once per step, before this estimate), the soles' Jacobians and the centroidal momentum at the
estimate are read from it, the base velocity is re-solved by the 3 x 3 normal equations of the
same least squares, and the momentum follows exactly: changing the base linear velocity by dv
(base axes) translates the whole robot by R dv, which adds m R dv to the linear momentum and
nothing to the angular momentum about the CoM. No kinematics pass of its own; without the
kinematics the estimator runs its own pass (the reference the shared path is tested against).
When the base estimator has solved the same least squares already (its soles held still are the
still frames: :attr:`~wbm_control.base_estimator.BaseEstimate.still_base_velocity`, the same
normal equations written at the base origin, R^T R = I), its solution is taken instead of
solving them again (``still_base_velocity``).

The per-sample arithmetic (the momentum from the shared kinematics, its filtered rate, the
contact wrench and the ZMP) is one compiled call (:mod:`wbm_control.jit.zmp_kernels`; its
Python float reference is kept in tests/control/test_jit_estimator_zmp.py).

Frames: world (z up), metres, seconds, newtons.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from wbm_control.exceptions import InputError
from wbm_control.jit import zmp_kernels
from wbm_control.robot_kinematics import RobotKinematics
from wbm_control.small_linalg import cross3, solve_3x3
from wbm_description.whole_body_model import WholeBodyModel

_LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


@dataclass(frozen=True)
class ZmpEstimate:
    """One estimate.

    Attributes:
        zmp: (x, y, ground_height) [m] in the world, or None when the contacts do not push
            (total normal force below the threshold: the robot is falling or jumping).
        contact_wrench: Total contact wrench (force [N], torque about the world origin [N m]),
            world axes, (6,).
        com: Centre of mass [m], (3,).
    """

    zmp: np.ndarray | None
    contact_wrench: np.ndarray
    com: np.ndarray

    def __init__(self, zmp: np.ndarray | None, contact_wrench: np.ndarray, com: np.ndarray):
        # The fields set straight into the instance (a frozen dataclass sets each one through
        # object.__setattr__: twice the time, for an object built every step).
        fields = self.__dict__
        fields["zmp"], fields["contact_wrench"], fields["com"] = zmp, contact_wrench, com


class ZmpEstimator:
    """The ZMP from the momentum rate of successive states (see the module docstring).

    Args:
        model: The whole-body model (floating base).
        cutoff: Cut-off frequency [Hz] of the first-order low-pass filter on the momentum rate;
            None: unfiltered.
        min_normal_force: Below this total normal force [N] the ZMP is undefined (None).
    """

    def __init__(
        self,
        model: WholeBodyModel,
        *,
        cutoff: float | None = 10.0,
        min_normal_force: float = 5.0,
    ):
        if cutoff is not None and not cutoff > 0.0:
            raise InputError("cutoff", "a positive frequency [Hz] or None", cutoff)
        self.model = model
        self.pin_model = model.model
        self.data = model.model.createData()
        self.cutoff = cutoff
        self.min_normal_force = float(min_normal_force)
        self.mass = float(model.total_mass)
        self.gravity = np.asarray(model.model.gravity.linear, dtype=float).copy()
        self._weight = self.mass * self.gravity  # m g [N]
        # The kernels' state (jit.zmp_kernels): the last momentum, its time, the filtered rate.
        self._state = np.zeros(zmp_kernels.STATE_SIZE)
        self.reset()

    def reset(self) -> None:
        """Forget the previous state (the next update assumes a zero momentum rate)."""
        self._state[:] = 0.0

    @property
    def _momentum(self) -> np.ndarray | None:
        """The last momentum (p, L_O) (6,), world axes, None before the first update (a copy)."""
        return self._state[2:8].copy() if self._state[0] else None

    @property
    def _rate(self) -> np.ndarray:
        """The filtered momentum rate (6,) [N, N m], world axes (a copy)."""
        return self._state[8:14].copy()

    def momentum_about_origin(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The momentum about the world origin and the CoM.

        Returns:
            ((p [kg m/s], L_O [kg m^2/s]) (6,), world axes; the CoM [m] (3,)).
        """
        hg = pin.computeCentroidalMomentum(self.pin_model, self.data, q, v)
        com = self.data.com[0].copy()
        p = np.array(hg.linear)
        angular = np.array(hg.angular) + np.cross(com, p)
        return np.concatenate([p, angular]), com

    def contact_wrench(self, com: np.ndarray, momentum_rate: np.ndarray) -> np.ndarray:
        """Total contact wrench about the world origin from the momentum rate (6,) (see above)."""
        weight = self.mass * self.gravity
        wrench = np.empty(6)
        np.subtract(momentum_rate[:3], weight, out=wrench[:3])
        np.subtract(momentum_rate[3:], cross3(com, weight), out=wrench[3:])
        return wrench

    def base_velocity_holding(
        self, q: np.ndarray, v: np.ndarray, frames: Sequence[str]
    ) -> np.ndarray:
        """The velocity with its base linear part re-solved so that ``frames`` do not move."""
        v = np.array(v, dtype=float)
        pin.computeJointJacobians(self.pin_model, self.data, q)
        pin.updateFramePlacements(self.pin_model, self.data)
        rows, rhs = [], []
        for frame in frames:
            jacobian = pin.getFrameJacobian(
                self.pin_model, self.data, self.model.frame_id(frame), _LWA
            )[:3]
            rows.append(jacobian[:, :3])
            rhs.append(-(jacobian[:, 3:] @ v[3:]))
        v[:3] = np.linalg.lstsq(np.vstack(rows), np.concatenate(rhs), rcond=None)[0]
        return v

    def shared_momentum(
        self, kinematics: RobotKinematics, v: np.ndarray, still_frames: Sequence[str]
    ) -> tuple[np.ndarray, np.ndarray]:
        """The momentum and CoM of :meth:`momentum_about_origin`, from the step's kinematics.

        As after :meth:`base_velocity_holding`; ``kinematics`` is at (q, v) and the still
        frames are among its frames. The base linear velocity solves the same least squares as
        :meth:`base_velocity_holding`, by its 3 x 3 normal equations (the rows of each frame's
        base block are a rotation: full rank); the momentum is h_G(v) + (m R dv, 0).
        """
        v = np.asarray(v, dtype=float)
        hg = kinematics.centroidal_momentum.copy()
        if still_frames:
            # The frames' linear rows stacked (3k x nv): the normal equations in one product
            # each (the same sums as frame by frame, in another order).
            rows = np.concatenate(
                [kinematics.jacobians[self.model.frame_id(frame)][:3] for frame in still_frames]
            )
            base = rows[:, :3]
            normal_rhs = base.T @ (rows[:, 3:] @ v[3:])
            change = solve_3x3(base.T @ base, -normal_rhs) - v[:3]
            hg[:3] += self.mass * (kinematics.base_rotation @ change)
        com = kinematics.com
        hg[3:] += cross3(com, hg[:3])
        return hg, com

    def momentum_with_base_velocity(
        self, kinematics: RobotKinematics, v: np.ndarray, still_base_velocity: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`shared_momentum` with the base linear velocity already solved (3,) [m/s].

        On floats: h_G's linear part plus m R (v_still - v_base), then its angular part plus
        c x p (the products written out: a few dozen flops, not a dozen numpy calls).
        """
        h0, h1, h2, k0, k1, k2 = kinematics.centroidal_momentum.tolist()
        (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = kinematics.base_rotation.tolist()
        s0, s1, s2 = still_base_velocity.tolist()
        v0, v1, v2 = v[:3].tolist()
        d0, d1, d2 = s0 - v0, s1 - v1, s2 - v2
        m = self.mass
        p0 = h0 + m * (r00 * d0 + r01 * d1 + r02 * d2)
        p1 = h1 + m * (r10 * d0 + r11 * d1 + r12 * d2)
        p2 = h2 + m * (r20 * d0 + r21 * d1 + r22 * d2)
        com = kinematics.com
        c0, c1, c2 = com.tolist()
        momentum = [p0, p1, p2, k0 + (c1 * p2 - c2 * p1), k1 + (c2 * p0 - c0 * p2)]
        momentum.append(k2 + (c0 * p1 - c1 * p0))
        return np.array(momentum), com

    def update(
        self,
        q: np.ndarray,
        v: np.ndarray,
        time: float,
        *,
        ground_height: float = 0.0,
        still_frames: Sequence[str] = (),
        kinematics: RobotKinematics | None = None,
        still_base_velocity: np.ndarray | None = None,
    ) -> ZmpEstimate:
        """The estimate at one state.

        Args:
            q: Configuration (nq,), Pinocchio layout.
            v: Velocity (nv,), Pinocchio layout (base twist in base axes).
            time: Time of the state [s].
            ground_height: Height of the ground plane [m].
            still_frames: Frames held still (the soles in contact); when given, the base linear
                velocity is re-solved from them (see the module docstring).
            kinematics: The step's kinematics at (q, v): read instead of a pass of its own (see
                the module docstring); None: its own pass.
            still_base_velocity: With ``kinematics`` and ``still_frames``: the base linear
                velocity (3,) [m/s], base axes, that holds the still frames still, if the caller
                has solved for it (the base estimator's, see the module docstring).
        """
        wrench, zmp = np.empty(6), np.empty(3)
        cutoff = 0.0 if self.cutoff is None else float(self.cutoff)
        if kinematics is not None and still_frames and still_base_velocity is not None:
            # The momentum, its rate, the wrench and the ZMP in one kernel.
            com = kinematics.com
            defined = zmp_kernels.zmp_with_base_velocity(
                kinematics.centroidal_momentum,
                kinematics.base_rotation,
                np.asarray(still_base_velocity, dtype=float),
                np.asarray(v, dtype=float),
                com,
                self.mass,
                self._weight,
                self._state,
                float(time),
                cutoff,
                float(ground_height),
                self.min_normal_force,
                wrench,
                zmp,
            )
            return ZmpEstimate(zmp if defined else None, wrench, com)
        if kinematics is not None:
            momentum, com = self.shared_momentum(kinematics, v, still_frames)
        else:
            q = np.asarray(q, dtype=float)
            v = np.asarray(v, dtype=float)
            if still_frames:
                v = self.base_velocity_holding(q, v, still_frames)
            momentum, com = self.momentum_about_origin(q, v)
        defined = zmp_kernels.zmp_from_momentum(
            momentum,
            com,
            self._weight,
            self._state,
            float(time),
            cutoff,
            float(ground_height),
            self.min_normal_force,
            wrench,
            zmp,
        )
        return ZmpEstimate(zmp if defined else None, wrench, com)
