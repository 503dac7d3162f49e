"""The WBM-Library state vector chi (seed 000, ``init_stvChi``) as a typed value.

chi = [x_b, qt_b, q_j, dx_b, omega_b, dq_j], length 2 * ndof + 13:

- x_b: base position in the world [m];
- qt_b: base orientation quaternion, scalar first (w, x, y, z), base to world;
- q_j: joint positions [rad];
- dx_b: base linear velocity, time derivative of x_b, world axes [m/s] (mixed);
- omega_b: base angular velocity, world axes [rad/s] (mixed);
- dq_j: joint velocities [rad/s].

Conversion to Pinocchio's (q, v) lives on the model
(:meth:`wbm_description.whole_body_model.WholeBodyModel.state_to_pinocchio`), which knows the
joint order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from wbm_description.exceptions import InputError


def check_vector(value: object, name: str, size: int) -> np.ndarray:
    """Return ``value`` as a finite float vector of length ``size`` or raise InputError."""
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        expected = f"a numeric vector of length {size}"
        raise InputError(name, expected, type(value).__name__) from None
    if array.shape != (size,):
        raise InputError(name, f"a vector of length {size}", f"shape {array.shape}")
    if not np.isfinite(array).all():
        bad = np.flatnonzero(~np.isfinite(array)).tolist()
        raise InputError(name, "finite values (no NaN or inf)", f"non-finite entries at {bad}")
    return array


@dataclass(frozen=True)
class WbmState:
    """The seed's state: base pose, joint positions and mixed velocities.

    Attributes:
        base_position: x_b, base origin in the world [m], (3,).
        base_orientation_wxyz: qt_b, unit quaternion base to world, scalar first, (4,).
        joint_positions: q_j [rad], (ndof,).
        base_linear_velocity: dx_b, world axes [m/s], (3,).
        base_angular_velocity: omega_b, world axes [rad/s], (3,).
        joint_velocities: dq_j [rad/s], (ndof,).
    """

    base_position: np.ndarray
    base_orientation_wxyz: np.ndarray
    joint_positions: np.ndarray
    base_linear_velocity: np.ndarray
    base_angular_velocity: np.ndarray
    joint_velocities: np.ndarray

    def __post_init__(self) -> None:
        ndof = np.asarray(self.joint_positions).shape[0] if np.ndim(self.joint_positions) else -1
        checked = {
            "base_position": check_vector(self.base_position, "base_position", 3),
            "base_orientation_wxyz": check_vector(
                self.base_orientation_wxyz, "base_orientation_wxyz", 4
            ),
            "joint_positions": check_vector(self.joint_positions, "joint_positions", max(ndof, 0)),
            "base_linear_velocity": check_vector(
                self.base_linear_velocity, "base_linear_velocity", 3
            ),
            "base_angular_velocity": check_vector(
                self.base_angular_velocity, "base_angular_velocity", 3
            ),
            "joint_velocities": check_vector(
                self.joint_velocities, "joint_velocities", max(ndof, 0)
            ),
        }
        norm = np.linalg.norm(checked["base_orientation_wxyz"])
        if abs(norm - 1.0) > 1e-6:
            raise InputError("base_orientation_wxyz", "a unit quaternion", f"norm {norm:.6g}")
        for name, value in checked.items():
            value.setflags(write=False)
            object.__setattr__(self, name, value)

    @property
    def ndof(self) -> int:
        """Number of joints."""
        return self.joint_positions.shape[0]

    def to_vector(self) -> np.ndarray:
        """Chi as one vector of length 2 * ndof + 13."""
        return np.concatenate(
            [
                self.base_position,
                self.base_orientation_wxyz,
                self.joint_positions,
                self.base_linear_velocity,
                self.base_angular_velocity,
                self.joint_velocities,
            ]
        )

    @classmethod
    def from_vector(cls, chi: np.ndarray, ndof: int) -> WbmState:
        """Split a chi vector of length 2 * ndof + 13."""
        chi = check_vector(chi, "chi", 2 * ndof + 13)
        n = ndof
        return cls(
            base_position=chi[0:3],
            base_orientation_wxyz=chi[3:7],
            joint_positions=chi[7 : 7 + n],
            base_linear_velocity=chi[7 + n : 10 + n],
            base_angular_velocity=chi[10 + n : 13 + n],
            joint_velocities=chi[13 + n : 13 + 2 * n],
        )
