"""Converters between MuJoCo's state layout and wbm's (Pinocchio's), at the MuJoCo edge.

wbm (:mod:`wbm_description.conventions`), floating base:
    q = (p_base_in_world, quat_base_to_world (x, y, z, w), joints in model order),
    v = (v_base_in_base, omega_base_in_base, joint velocities in model order).
MuJoCo free joint (MuJoCo documentation, "Floating objects"):
    qpos = (p_base_in_world, quat_base_to_world (w, x, y, z), ...),
    qvel = (v_base_in_world, omega_base_in_base, ...),
i.e. the linear velocity of the base origin in world axes and the angular velocity in the base
(body) frame. The joints of the two models have the same names but not necessarily the same
order: :class:`StateMap` holds, for each joint in model order, its address in qpos and qvel.

For a fixed base there is no base part and only the joint order differs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from wbm_description.conventions import (
    quaternion_wxyz_to_xyzw,
    quaternion_xyzw_to_wxyz,
    rotation_from_quaternion_xyzw,
)
from wbm_description.state import check_vector


@dataclass(frozen=True)
class StateMap:
    """Where each of wbm's joints sits in MuJoCo's qpos and qvel.

    Attributes:
        floating_base: Whether both models have a free-flying base (MuJoCo's free joint at
            qpos[0:7], qvel[0:6]).
        qpos_index: Per joint in model order, its qpos address, (ndof,) int.
        dof_index: Per joint in model order, its qvel address, (ndof,) int.
    """

    floating_base: bool
    qpos_index: np.ndarray
    dof_index: np.ndarray

    @property
    def ndof(self) -> int:
        """Number of joints."""
        return len(self.qpos_index)

    @property
    def nq(self) -> int:
        """Size of q and of qpos."""
        return self.ndof + (7 if self.floating_base else 0)

    @property
    def nv(self) -> int:
        """Size of v and of qvel."""
        return self.ndof + (6 if self.floating_base else 0)

    def qpos_from_q(self, q: object) -> np.ndarray:
        """MuJoCo qpos of a wbm configuration q (quaternion reordered, joints permuted)."""
        q = check_vector(q, "q", self.nq)
        qpos = np.empty(self.nq)
        if self.floating_base:
            qpos[0:3] = q[0:3]
            qpos[3:7] = quaternion_xyzw_to_wxyz(q[3:7])
            qpos[self.qpos_index] = q[7:]
        else:
            qpos[self.qpos_index] = q
        return qpos

    def q_from_qpos(self, qpos: object) -> np.ndarray:
        """Wbm configuration q of a MuJoCo qpos (inverse of :meth:`qpos_from_q`)."""
        qpos = check_vector(qpos, "qpos", self.nq)
        if not self.floating_base:
            return qpos[self.qpos_index].copy()
        return np.concatenate(
            [qpos[0:3], quaternion_wxyz_to_xyzw(qpos[3:7]), qpos[self.qpos_index]]
        )

    def qvel_from_v(self, q: object, v: object) -> np.ndarray:
        """MuJoCo qvel of a wbm velocity v at configuration q.

        The base linear velocity turns from base axes to world axes (R_base_to_world v_b);
        the angular velocity stays in base axes.
        """
        q = check_vector(q, "q", self.nq)
        v = check_vector(v, "v", self.nv)
        qvel = np.empty(self.nv)
        if self.floating_base:
            rotation = rotation_from_quaternion_xyzw(q[3:7])
            qvel[0:3] = rotation @ v[0:3]
            qvel[3:6] = v[3:6]
            qvel[self.dof_index] = v[6:]
        else:
            qvel[self.dof_index] = v
        return qvel

    def v_from_qvel(self, qpos: object, qvel: object) -> np.ndarray:
        """Wbm velocity v of a MuJoCo qvel at configuration qpos (inverse of qvel_from_v)."""
        qpos = check_vector(qpos, "qpos", self.nq)
        qvel = check_vector(qvel, "qvel", self.nv)
        if not self.floating_base:
            return qvel[self.dof_index].copy()
        rotation = rotation_from_quaternion_xyzw(quaternion_wxyz_to_xyzw(qpos[3:7]))
        return np.concatenate([rotation.T @ qvel[0:3], qvel[3:6], qvel[self.dof_index]])

    def velocity_map(self, q: object) -> np.ndarray:
        """Matrix T with qvel = T v at configuration q, nv x nv (MuJoCo rows, wbm columns).

        Generalized forces map with its transpose: tau_wbm = T^T tau_mujoco (same power).
        """
        q = check_vector(q, "q", self.nq)
        T = np.zeros((self.nv, self.nv))
        base = 6 if self.floating_base else 0
        if self.floating_base:
            T[0:3, 0:3] = rotation_from_quaternion_xyzw(q[3:7])
            T[3:6, 3:6] = np.eye(3)
        T[self.dof_index, base + np.arange(self.ndof)] = 1.0
        return T

    def velocity_map_rate_times_v(self, q: object, v: object) -> np.ndarray:
        """dT/dt v, the part of d(qvel)/dt not due to dv/dt: (R (omega_b x v_b), 0), (nv,).

        So d(qvel)/dt = T dv/dt + dT/dt v, the base origin's classical acceleration in world axes.
        """
        q = check_vector(q, "q", self.nq)
        v = check_vector(v, "v", self.nv)
        rate = np.zeros(self.nv)
        if self.floating_base:
            rotation = rotation_from_quaternion_xyzw(q[3:7])
            rate[0:3] = rotation @ np.cross(v[3:6], v[0:3])
        return rate
