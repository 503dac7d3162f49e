"""Joint actuation: the simulated joint servos, torque saturation, joint friction and stops.

Servo law per joint (seed 004 Fig. 8.5, a PD with feed-forward torque):

    tau = effort + kp (q_ref - q) + kd (dq_ref - dq),   saturated at +- the torque limit,

where each term is present only when commanded (NaN or None in a :class:`JointCommand` means "not
commanded"): a joint given a position reference but no velocity reference tracks dq_ref = 0 (the
damping term stays, as in a servo drive); a joint given only an effort is torque controlled; a
joint given nothing gets no actuator torque at all. Commands are held (zero-order hold) until the
next one.

Joint friction (seed 000's frictionForces) acts on every joint: tau_f = -(k_v dq + k_c sign(dq)).

Damping terms (the servo's kd where active, the viscous friction) are returned separately so that
the semi-implicit Euler integrator can treat them implicitly (backward Euler on the damping: it
adds dt * d to the mass matrix diagonal), which keeps light links stable at a 1 ms step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from wbm_description.exceptions import InputError
from wbm_description.robot_io import JointCommand


@dataclass(slots=True)  # not frozen: built at every step, and frozen init costs more
class ActuatorTorques:
    """Joint torques of one evaluation of the actuators (model joint order).

    Attributes:
        actuator: Servo torques after saturation, damping evaluated at the current dq [N m].
        friction: Joint friction torques, viscous part at the current dq [N m].
        damping: Per joint, the coefficient d [N m s/rad] of the terms -d dq contained in
            actuator + friction that may be integrated implicitly (0 where saturated).
        servo_damping: The part of ``damping`` that belongs to the servo (the rest is viscous
            friction) [N m s/rad].
    """

    actuator: np.ndarray
    friction: np.ndarray
    damping: np.ndarray
    servo_damping: np.ndarray


class JointServos:
    """The servos of every actuated joint, holding the last command.

    Args:
        kp: Servo stiffness per joint [N m/rad], (ndof,).
        kd: Servo damping per joint [N m s/rad], (ndof,).
        torque_limits: Saturation per joint [N m], (ndof,), > 0.
        viscous_friction: Viscous coefficients [N m s/rad], (ndof,).
        coulomb_friction: Coulomb friction torques [N m], (ndof,).
    """

    def __init__(
        self,
        kp: np.ndarray,
        kd: np.ndarray,
        torque_limits: np.ndarray,
        viscous_friction: np.ndarray,
        coulomb_friction: np.ndarray,
    ):
        self.ndof = len(kp)
        self.kp = np.asarray(kp, dtype=float)
        self.kd = np.asarray(kd, dtype=float)
        self.torque_limits = np.asarray(torque_limits, dtype=float)
        self.viscous_friction = np.asarray(viscous_friction, dtype=float)
        self.coulomb_friction = np.asarray(coulomb_friction, dtype=float)
        self._has_coulomb = bool(np.any(self.coulomb_friction != 0.0))
        self._lower_limits = -self.torque_limits
        self._negative_viscous = -self.viscous_friction
        self.clear()

    def clear(self) -> None:
        """Forget the command: no joint is commanded."""
        self.position = np.full(self.ndof, np.nan)
        self.velocity = np.full(self.ndof, np.nan)
        self.effort = np.full(self.ndof, np.nan)
        self._update_masks()

    def set_command(self, command: JointCommand) -> None:
        """Hold a new command (replaces the previous one entirely).

        Raises:
            InputError: An array of the wrong length, or holding inf.
        """
        arrays = {}
        for name in ("position", "velocity", "effort"):
            value = getattr(command, name)
            if value is None:
                arrays[name] = np.full(self.ndof, np.nan)
                continue
            try:
                array = np.array(value, dtype=float).reshape(-1)
            except (TypeError, ValueError):
                raise InputError(
                    f"command.{name}", f"{self.ndof} numbers", type(value).__name__
                ) from None
            if array.shape != (self.ndof,):
                raise InputError(
                    f"command.{name}", f"{self.ndof} values (one per joint)", array.shape
                )
            if np.isinf(array).any():
                raise InputError(f"command.{name}", "finite values or NaN (not commanded)")
            arrays[name] = array
        self.position = arrays["position"]
        self.velocity = arrays["velocity"]
        self.effort = arrays["effort"]
        self._update_masks()

    def command(self) -> JointCommand:
        """The command being held (NaN: not commanded)."""
        return JointCommand(self.position.copy(), self.velocity.copy(), self.effort.copy())

    def _update_masks(self) -> None:
        self._has_position = ~np.isnan(self.position)
        self._has_velocity = ~np.isnan(self.velocity)
        self._damped = self._has_position | self._has_velocity
        self._position_ref = np.where(self._has_position, self.position, 0.0)
        self._velocity_ref = np.where(self._has_velocity, self.velocity, 0.0)
        self._effort = np.where(np.isnan(self.effort), 0.0, self.effort)
        self._servo_kp = np.where(self._has_position, self.kp, 0.0)
        self._servo_kd = np.where(self._damped, self.kd, 0.0)
        self._damping = self._servo_kd + self.viscous_friction

    @property
    def commanded(self) -> np.ndarray:
        """Which joints receive any command, (ndof,) bool."""
        return self._damped | ~np.isnan(self.effort)

    def torques(self, q: np.ndarray, dq: np.ndarray) -> ActuatorTorques:
        """Actuator and friction torques at joint positions q [rad] and velocities dq [rad/s]."""
        # effort + kp (q_ref - q) + kd (dq_ref - dq), in that order, in place (fewer calls).
        servo = self._position_ref - q
        servo *= self._servo_kp
        servo += self._effort
        damping = self._velocity_ref - dq
        damping *= self._servo_kd
        servo += damping
        actuator = np.minimum(np.maximum(servo, self._lower_limits), self.torque_limits)
        friction = self._negative_viscous * dq  # -(k_v dq)
        if self._has_coulomb:
            friction -= self.coulomb_friction * np.sign(dq)
        if (actuator != servo).any():  # saturated servos no longer damp
            servo_damping = np.where(actuator != servo, 0.0, self._servo_kd)
            return ActuatorTorques(
                actuator, friction, servo_damping + self.viscous_friction, servo_damping
            )
        return ActuatorTorques(actuator, friction, self._damping, self._servo_kd)
