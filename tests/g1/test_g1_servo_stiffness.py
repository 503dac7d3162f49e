"""The config's servo gains hold G1's standing posture: a strict minimum of its potential energy.

With both soles held (6D each), the servo-held robot has the potential energy

    V(q) = m g z_com(q) + sum_j [kp_j / 2 (q_j - q0_j)^2 - tau_j (q_j - q0_j)],

tau the static feed-forward torques (``static_contact_torques``). The initial configuration q0 is
an equilibrium (the gradient of V along the feet-held configurations vanishes) and a stable one
iff the Hessian H of V there is positive definite. Both are taken by central finite differences
in coordinates xi of the feet-held manifold (q = q0 moved along N xi, N a basis of the null space
of the feet Jacobian, then brought back onto the constraints by Newton's method): no dynamics,
no simulator. The generalized eigenvalues mu of (H, H_servo), H_servo the Hessian of the servo
springs alone, say which fraction of the servo stiffness gravity leaves to each mode: mu > 0 is
stable, mu near 0 marginal (the posture creeps away), mu < 0 falls.

Finite differences: h = 1e-4 in xi (rad, m): truncation O(h^2) times the fourth derivatives of V
and round-off eps V / h^2, both ~1e-6 on entries of order 10 to 1000 N m/rad: far below the
margins tested.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import scipy.linalg
from g1_helpers import FEET

from wbm_description import WholeBodyModel

H = 1e-4


class FeetHeldPotential:
    """V on the configurations that keep both soles where they are at q0."""

    def __init__(self, model: WholeBodyModel, kp: np.ndarray):
        self.model = model
        self.kp = kp
        self.q0 = model.initial_configuration()
        self.tau, _ = model.static_contact_torques(self.q0, list(FEET))
        self.reference = {frame: model.frame_placement(self.q0, frame) for frame in FEET}
        self.ids = [model.frame_id(frame) for frame in FEET]
        self.data = model.model.createData()
        self.basis = scipy.linalg.null_space(self._jacobian(self.q0))  # nv x 23

    def _jacobian(self, q: np.ndarray) -> np.ndarray:
        model, data = self.model.model, self.data
        rows = [pin.computeFrameJacobian(model, data, q, i, pin.LOCAL) for i in self.ids]
        return np.vstack(rows)

    def _errors(self, q: np.ndarray) -> np.ndarray:
        pin.framesForwardKinematics(self.model.model, self.data, q)
        return np.concatenate(
            [
                pin.log6(self.reference[frame].actInv(self.data.oMf[i])).vector
                for frame, i in zip(FEET, self.ids, strict=True)
            ]
        )

    def configuration(self, xi: np.ndarray) -> np.ndarray:
        """The feet-held configuration of manifold coordinates xi (Newton on the feet errors)."""
        q = pin.integrate(self.model.model, self.q0, self.basis @ xi)
        for _ in range(20):
            error = self._errors(q)
            if np.abs(error).max() < 1e-14:
                return q
            q = pin.integrate(self.model.model, q, -np.linalg.pinv(self._jacobian(q)) @ error)
        raise AssertionError("the feet constraints did not converge")

    def parts(self, xi: np.ndarray) -> tuple[float, float]:
        """(gravity potential [J], servo springs' potential [J]) at xi."""
        q = self.configuration(xi)
        dq = self.model.joint_positions(q) - self.model.joint_positions(self.q0)
        return self.model.potential_energy(q), 0.5 * dq @ (self.kp * dq) - self.tau @ dq

    def derivatives(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Gradient of V, Hessian of V and Hessian of the servo part at xi = 0."""
        n = self.basis.shape[1]
        step = np.eye(n) * H
        values = {}

        def value(key: tuple[int, ...], xi: np.ndarray) -> np.ndarray:
            if key not in values:
                values[key] = np.array(self.parts(xi))
            return values[key]

        gradient = np.array(
            [(value((i, 1), step[i]) - value((i, -1), -step[i])).sum() / (2 * H) for i in range(n)]
        )
        hessian = np.zeros((n, n, 2))
        for i in range(n):
            for j in range(i, n):
                pp = value((i, 1, j, 1), step[i] + step[j])
                pm = value((i, 1, j, -1), step[i] - step[j])
                mp = value((i, -1, j, 1), -step[i] + step[j])
                mm = value((i, -1, j, -1), -step[i] - step[j])
                hessian[i, j] = hessian[j, i] = (pp - pm - mp + mm) / (4 * H * H)
        return gradient, hessian.sum(axis=2), hessian[:, :, 1]


def stiffness_fractions(model: WholeBodyModel, kp: np.ndarray) -> np.ndarray:
    """Generalized eigenvalues mu of (H, H_servo), ascending."""
    _, total, servo = FeetHeldPotential(model, kp).derivatives()
    return scipy.linalg.eigh(total, servo, eigvals_only=True)


def test_initial_posture_is_an_equilibrium_of_the_servo_held_robot(g1: WholeBodyModel):
    potential = FeetHeldPotential(g1, g1.servo_kp)
    assert potential.basis.shape == (35, 23)  # 35 - 2 x 6 feet constraints
    gradient, _, servo = potential.derivatives()
    # The static torques balance gravity: a zero gradient, up to the finite differences'
    # O(h^2) (~1e-6 N m on generalized forces of ~10 N m; measured 1e-7).
    assert np.abs(gradient).max() < 1e-5
    # The servo springs alone are positive definite (their smallest: the 40 N m/rad arms).
    assert np.linalg.eigvalsh(servo).min() > 0.0


def test_config_gains_make_the_posture_a_strict_minimum(g1: WholeBodyModel):
    mu = stiffness_fractions(g1, g1.servo_kp)
    # Gravity leaves at least 30 % of the servo stiffness on every mode (measured 43 % on the
    # softest, the whole body swaying over the ankles): the servos alone hold the posture,
    # which tests/g1/test_g1_standing.py confirms on our simulator and MuJoCo.
    assert mu.min() > 0.3, mu[:3]


def test_unitree_policy_gains_alone_do_not_hold_the_posture(g1: WholeBodyModel):
    """unitree_rl_lab's leg gains (hip 100, knee 150, ankle 40) are for a balancing policy."""
    kp = g1.servo_kp.copy()
    for i, name in enumerate(g1.joint_names):
        if "_hip_" in name:
            kp[i] = 100.0
        elif "_knee_" in name:
            kp[i] = 150.0
        elif "_ankle_" in name:
            kp[i] = 40.0
    mu = stiffness_fractions(g1, kp)
    # Gravity's pull over the ankles (~m g h = 210 N m/rad) beats 2 x 40 N m/rad: a negative
    # mode (measured mu = -1.9), the robot falls without a controller.
    assert mu.min() < 0.0
